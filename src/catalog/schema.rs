//! The catalog file as written (`Raw*`, `deny_unknown_fields`), and its compilation into
//! [`Platform`]s: patterns compiled, defaults filled in, the `[verify]` table checked.

use std::collections::{BTreeMap, BTreeSet};

use regex::Regex;
use serde::Deserialize;

use super::prompt::Prompt;
use super::template::Template;
use super::*;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCatalog {
    #[serde(default)]
    pub(super) platforms: BTreeMap<String, RawPlatform>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPlatform {
    description: String,
    #[serde(default)]
    pub(super) aliases: Vec<String>,
    kind: Kind,
    network_types: Vec<String>,
    port_pattern: String,
    lag_interface: Option<String>,
    lag_pattern: Option<String>,
    #[serde(default)]
    lag_modes: BTreeMap<String, String>,
    echo: Option<bool>,
    #[serde(default)]
    modes: Vec<RawMode>,
    login_mode: Option<String>,
    config_mode: Option<String>,
    save_mode: Option<String>,
    secret_prompt: Option<String>,
    #[serde(default)]
    responses: Vec<RawResponse>,
    #[serde(default)]
    failures: Vec<String>,
    #[serde(default)]
    temporary_failures: Vec<String>,
    #[serde(default)]
    on_open: Vec<String>,
    #[serde(default)]
    commit: Vec<String>,
    #[serde(default)]
    abort: Vec<String>,
    commit_leaves_to: Option<String>,
    #[serde(default)]
    save: Vec<String>,
    #[serde(default)]
    close: Vec<String>,
    #[serde(default)]
    vlan_list: VlanListStyle,
    #[serde(default)]
    templates: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    actions: BTreeSet<String>,
    #[serde(default)]
    unsupported: BTreeMap<String, String>,
    #[serde(default)]
    samples: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    own_context: BTreeSet<String>,
    native_in_allowed: Option<bool>,
    #[serde(default)]
    allowed_set_adds: bool,
    #[serde(default)]
    native_is_access: bool,
    #[serde(default)]
    idempotent: Vec<String>,
    #[serde(default)]
    nouns: BTreeMap<String, String>,
    #[serde(default)]
    notes: Vec<String>,
    verify: Option<RawVerify>,
    check: Option<RawCheck>,
}

/// `[platforms.X.check]`: how `mercury check --connect` reads whether a VLAN exists.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCheck {
    /// The line that lists the device's VLANs (read-only).
    vlans: String,
    /// A regex, with `{vlan}` for the id, that matches a line of that listing when the VLAN
    /// exists.
    vlan_present: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVerify {
    #[serde(default)]
    show: Vec<String>,
    parser: Option<String>,
    mode: Option<String>,
    admin_default: Option<String>,
    trunk_default: Option<String>,
    #[serde(default)]
    modes: BTreeMap<String, String>,
    mode_default: Option<String>,
    #[serde(default)]
    unread: BTreeSet<String>,
    vlan_table: Option<String>,
    unsupported: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMode {
    name: String,
    prompt: String,
    parent: Option<String>,
    #[serde(default)]
    enter: Vec<String>,
    #[serde(default)]
    exit: Vec<String>,
    #[serde(default)]
    secret: bool,
    #[serde(default)]
    config: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawResponse {
    prompt: String,
    #[serde(default)]
    answer: String,
    #[serde(default = "yes")]
    newline: bool,
}

fn yes() -> bool {
    true
}

pub(super) fn compile(name: &str, r: &RawPlatform) -> Result<Platform, String> {
    let regex = |what: &str, s: &str| Regex::new(s).map_err(|e| format!("{what} {s:?}: {e}"));
    let mut modes = Vec::new();
    for m in &r.modes {
        modes.push(Mode {
            prompt: Prompt::compile(&m.prompt)?,
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
    Ok(Platform {
        name: name.to_string(),
        description: r.description.clone(),
        aliases: r.aliases.clone(),
        kind: r.kind,
        network_types: r.network_types.clone(),
        port_pattern: regex("port_pattern", &format!("^(?:{})$", r.port_pattern))?,
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
        modes,
        login_mode,
        config_mode,
        save_mode,
        secret_prompt: r
            .secret_prompt
            .as_deref()
            .map(Prompt::compile)
            .transpose()?,
        responses: r
            .responses
            .iter()
            .map(|x| {
                Ok(Response {
                    prompt: Prompt::compile(&x.prompt)?,
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
            .map(|s| regex("idempotent", s))
            .collect::<Result<_, _>>()?,
        nouns: r.nouns.clone(),
        notes: r.notes.clone(),
        verify: compile_verify(r.verify.as_ref())?,
        vlan_check: match &r.check {
            None => None,
            Some(c) => {
                if !c.vlan_present.contains("{vlan}") {
                    return Err("check.vlan_present: needs {vlan}".into());
                }
                regex::Regex::new(&c.vlan_present.replace("{vlan}", "4094"))
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
