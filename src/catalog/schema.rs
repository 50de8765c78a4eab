//! The compilation of a platform as written ([`super::raw`]) into a [`Platform`]:
//! patterns compiled, defaults filled in, the `[verify]` table checked.

use std::collections::BTreeMap;

use super::options::DeviceOption;
use super::ports::PortNames;
use super::prompt::Prompt;
use super::raw::{RawIdempotent, RawPlatform, RawVerify};
use super::template::Template;
use super::*;

pub(super) fn compile(name: &str, r: &RawPlatform, syntax: Syntax) -> Result<Platform, String> {
    let regex = |what: &str, s: &str| {
        super::pattern::compile(s, syntax).map_err(|e| format!("{what} {s:?}: {e}"))
    };
    let mut modes = Vec::new();
    for m in &r.modes {
        modes.push(Mode {
            prompt: Prompt::compile(&m.prompt, syntax)?,
            name: m.name.clone(),
            parent: m.parent.clone(),
            enter: m.enter.clone(),
            exit: m.exit.clone(),
            secret: m.secret,
            config: m.config,
        });
    }
    let mut templates = BTreeMap::new();
    for (action, lines) in &r.templates {
        let t: Vec<Template> = lines
            .iter()
            .map(|l| Template::parse(l))
            .collect::<Result<_, _>>()
            .map_err(|e| format!("templates.{action}: {e}"))?;
        templates.insert(action.clone(), t);
    }
    let first_mode = modes.first().map(|m| m.name.clone()).unwrap_or_default();
    let login_mode = r.login_mode.clone().unwrap_or_else(|| first_mode.clone());
    let config_mode = r.config_mode.clone().unwrap_or_else(|| login_mode.clone());
    let save_mode = r.save_mode.clone().unwrap_or_else(|| login_mode.clone());
    // The canonical names a port table produces are the platform's port names; an explicit
    // port_pattern (platforms without a table: Linux and OVS names) says the same directly.
    let port_pattern = match (&r.port_pattern, &r.port_names) {
        (Some(p), _) => p.clone(),
        (None, Some(t)) => t.canonical_pattern(),
        (None, None) => return Err("neither port_pattern nor port_names".into()),
    };
    Ok(Platform {
        name: name.to_string(),
        description: r.description.clone(),
        aliases: r.aliases.clone(),
        kind: r.kind,
        network_types: r.network_types.clone(),
        port_pattern: regex("port_pattern", &format!("^(?:{port_pattern})$"))?,
        port_names: r
            .port_names
            .as_ref()
            .map(|n| PortNames::compile(n, syntax))
            .transpose()?,
        lag_interface: r
            .lag_interface
            .as_deref()
            .map(Template::parse)
            .transpose()
            .map_err(|e| format!("lag_interface: {e}"))?,
        lag_pattern: r
            .lag_pattern
            .as_deref()
            .map(|s| regex("lag_pattern", &format!("^(?:{s})$")))
            .transpose()?,
        lag_modes: r.lag_modes.clone(),
        echo: r.echo.unwrap_or(true),
        type_ahead: r.type_ahead.unwrap_or(false),
        modes,
        login_mode,
        config_mode,
        save_mode,
        secret_prompt: r
            .secret_prompt
            .as_deref()
            .map(|p| Prompt::compile(p, syntax))
            .transpose()?,
        responses: r
            .responses
            .iter()
            .map(|x| {
                Ok(Response {
                    prompt: Prompt::compile(&x.prompt, syntax)?,
                    answer: x.answer.clone(),
                    newline: x.newline,
                })
            })
            .collect::<Result<_, String>>()?,
        failures: r
            .failures
            .iter()
            .map(|s| regex("failure", s))
            .collect::<Result<_, _>>()?,
        temporary_failures: r
            .temporary_failures
            .iter()
            .map(|s| regex("temporary_failure", s))
            .collect::<Result<_, _>>()?,
        on_open: r.on_open.clone(),
        on_open_mode: r.on_open_mode.clone(),
        commit: r.commit.clone(),
        abort: r.abort.clone(),
        commit_leaves_to: r.commit_leaves_to.clone(),
        save: r.save.clone(),
        close: r.close.clone(),
        vlan_list: r.vlan_list.clone(),
        templates,
        actions: r.actions.clone(),
        unsupported: r.unsupported.clone(),
        samples: r.samples.clone(),
        own_context: r.own_context.clone(),
        native_in_allowed: r.native_in_allowed.unwrap_or(true),
        allowed_set_adds: r.allowed_set_adds,
        native_is_access: r.native_is_access,
        idempotent: r
            .idempotent
            .iter()
            .map(|i| match i {
                RawIdempotent::Output(s) => Ok(Idempotent {
                    output: regex("idempotent", s)?,
                    line: None,
                }),
                RawIdempotent::After { output, line } => Ok(Idempotent {
                    output: regex("idempotent", output)?,
                    line: Some(regex("idempotent.line", line)?),
                }),
            })
            .collect::<Result<_, String>>()?,
        nouns: r.nouns.clone(),
        end_of_options: r.end_of_options.clone(),
        exec_shell: match r.exec_shell.as_deref() {
            None => None,
            Some("posix") => Some(ExecShell::Posix),
            Some(other) => {
                return Err(format!(
                    "exec_shell {other:?}: the only shell Mercury joins lines for is \"posix\""
                ))
            }
        },
        lag_delete_resets_members: r.lag_delete_resets_members,
        options: r
            .options
            .iter()
            .map(|(n, o)| DeviceOption::compile(n, o, syntax).map(|c| (n.clone(), c)))
            .collect::<Result<_, _>>()?,
        option_values: r
            .options
            .iter()
            .map(|(n, o)| (n.clone(), o.default.clone()))
            .collect(),
        notes: r.notes.clone(),
        verify: compile_verify(r.verify.as_ref())?,
        vlan_check: match &r.check {
            None => None,
            Some(c) => {
                if !c.vlan_present.contains("{vlan}") {
                    return Err("check.vlan_present: needs {vlan}".into());
                }
                super::pattern::compile(&c.vlan_present.replace("{vlan}", "4094"), syntax)
                    .map_err(|e| format!("check.vlan_present: {e}"))?;
                if c.vlans.trim().is_empty() || c.vlans.contains('{') {
                    return Err("check.vlans: one fixed show line".into());
                }
                Some(VlanCheck {
                    show: c.vlans.clone(),
                    present: c.vlan_present.clone(),
                })
            }
        },
    })
}

fn compile_verify(r: Option<&RawVerify>) -> Result<Verify, String> {
    let Some(r) = r else {
        return Ok(Verify::Undeclared);
    };
    if let Some(why) = &r.unsupported {
        return Ok(Verify::Unsupported(why.clone()));
    }
    let show = r
        .show
        .iter()
        .map(|l| Template::parse(l))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("verify.show: {e}"))?;
    let flag =
        |what: &str, v: &Option<String>, yes: &str, no: &str, default: bool| match v.as_deref() {
            None => Ok(default),
            Some(x) if x == yes => Ok(true),
            Some(x) if x == no => Ok(false),
            Some(x) => Err(format!(
                "verify.{what}: {x:?} is neither {yes:?} nor {no:?}"
            )),
        };
    Ok(Verify::Show(VerifySpec {
        show,
        parser: r.parser.clone().unwrap_or_default(),
        mode: r.mode.clone(),
        admin_default_up: flag("admin_default", &r.admin_default, "up", "down", true)?,
        trunk_default_all: flag("trunk_default", &r.trunk_default, "all", "none", false)?,
        modes: r.modes.clone(),
        mode_default: r.mode_default.clone(),
        unread: r.unread.clone(),
        vlan_table: r.vlan_table.clone(),
    }))
}
