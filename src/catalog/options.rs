//! Platform options (`[platforms.X.options.NAME]`): choices a network team makes per device
//! where both behaviours are valid on the vendor's CLI — SR Linux networks as EVPN services
//! or standalone mac-vrfs, ISL-capable Catalysts that need `switchport trunk encapsulation
//! dot1q`, Netvisor's fabric or local VLAN scope. An option has a default, the values it
//! takes (a list or a pattern), and per value the templates it replaces; its value is also
//! the template variable `{NAME}`. A device picks values with `options = { ... }` in
//! `mercury.toml`; [`Platform::with_options`] applies them before anything is rendered.

use std::collections::BTreeMap;

use super::pattern::{Pattern, Syntax};

use super::raw::RawOption;
use super::template::Template;
use super::Platform;

/// One option, compiled.
#[derive(Debug, Clone)]
pub struct DeviceOption {
    /// What it is for (shown by the lint and the docs).
    pub about: String,
    /// The value a device that says nothing gets.
    pub default: String,
    /// The values it takes, when it is a choice.
    pub values: Vec<String>,
    /// The shape of its value, when it is free (an interface name, an AS number).
    pub pattern: Option<Pattern>,
    /// Value → action → the lines that replace the platform's template for that action.
    pub templates: BTreeMap<String, BTreeMap<String, Vec<Template>>>,
}

impl DeviceOption {
    pub(super) fn compile(
        name: &str,
        r: &RawOption,
        syntax: Syntax,
    ) -> Result<DeviceOption, String> {
        let mut templates = BTreeMap::new();
        for (value, actions) in &r.templates {
            let mut out = BTreeMap::new();
            for (action, lines) in actions {
                let t = lines
                    .iter()
                    .map(|l| Template::parse(l))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| format!("options.{name}.templates.{value}.{action}: {e}"))?;
                out.insert(action.clone(), t);
            }
            templates.insert(value.clone(), out);
        }
        Ok(DeviceOption {
            about: r.about.clone(),
            default: r.default.clone(),
            values: r.values.clone(),
            pattern: r
                .pattern
                .as_deref()
                .map(|p| {
                    super::pattern::compile(&format!("^(?:{p})$"), syntax)
                        .map_err(|e| format!("options.{name}.pattern {p:?}: {e}"))
                })
                .transpose()?,
            templates,
        })
    }

    /// Whether `value` is one this option takes.
    pub fn takes(&self, value: &str) -> bool {
        if !self.values.is_empty() {
            return self.values.iter().any(|v| v == value);
        }
        self.pattern.as_ref().is_none_or(|p| p.is_match(value))
    }

    fn expected(&self) -> String {
        if !self.values.is_empty() {
            return format!("one of {}", self.values.join(", "));
        }
        match &self.pattern {
            Some(p) => format!("a value matching {}", p.as_str()),
            None => "a value".into(),
        }
    }
}

/// Options every platform takes: they change what the driver composes, not how a line is
/// typed.
pub const DRIVER_OPTIONS: &[(&str, &str)] = &[(
    "ensure_idle_vlan",
    "true: create the idle VLAN (without renaming an existing one) before a port is put back into it",
)];

impl Platform {
    /// The platform as `options` (a device's `options` table) configure it: each option's
    /// value (the device's or the default) selects its templates and is the variable
    /// `{NAME}`. An option the platform does not know, or a value it does not take, is a
    /// configuration error.
    pub fn with_options(&self, options: &BTreeMap<String, String>) -> Result<Platform, String> {
        for (k, v) in options {
            if let Some((_, _)) = DRIVER_OPTIONS.iter().find(|(n, _)| n == k) {
                if v != "true" && v != "false" {
                    return Err(format!("options.{k}: {v:?} is not true or false"));
                }
                continue;
            }
            let Some(opt) = self.options.get(k) else {
                let known: Vec<&str> = self
                    .options
                    .keys()
                    .map(String::as_str)
                    .chain(DRIVER_OPTIONS.iter().map(|(n, _)| *n))
                    .collect();
                return Err(format!(
                    "options.{k}: platform {} has no such option (known: {})",
                    self.name,
                    known.join(", ")
                ));
            };
            if !opt.takes(v) {
                return Err(format!(
                    "options.{k}: {v:?} is not {} on {}",
                    opt.expected(),
                    self.name
                ));
            }
        }
        let mut p = self.clone();
        for (name, opt) in &self.options {
            let value = options.get(name).unwrap_or(&opt.default).clone();
            if let Some(overrides) = opt.templates.get(&value) {
                for (action, lines) in overrides {
                    p.templates.insert(action.clone(), lines.clone());
                }
            }
            p.option_values.insert(name.clone(), value);
        }
        for (name, _) in DRIVER_OPTIONS {
            if let Some(v) = options.get(*name) {
                p.option_values.insert(name.to_string(), v.clone());
            }
        }
        if p.option_on("ensure_idle_vlan") && !p.templates.contains_key("network_ensure") {
            let derived = p.derived_network_ensure()?;
            p.templates.insert("network_ensure".into(), derived);
        }
        Ok(p)
    }

    /// `network_ensure` where the catalog has none: `network_add` without its naming lines,
    /// so that an existing VLAN is entered and left as it is, never renamed (NGS's `name
    /// 100` on the idle VLAN renames it). A platform whose creation line itself carries the
    /// name (Junos `set vlans NAME vlan-id N`) cannot ensure a VLAN without naming it.
    fn derived_network_ensure(&self) -> Result<Vec<Template>, String> {
        let add = self
            .templates
            .get("network_add")
            .ok_or_else(|| format!("ensure_idle_vlan: {} cannot create VLANs", self.name))?;
        if add.is_empty() {
            return Ok(Vec::new());
        }
        let kept: Vec<Template> = add
            .iter()
            .filter(|t| !t.vars().any(|v| v == "vlan_name"))
            .cloned()
            .collect();
        if !kept.iter().any(|t| t.vars().any(|v| v == "vlan")) {
            return Err(format!(
                "options.ensure_idle_vlan: {} names a VLAN in the line that creates it, so it cannot be created without (re)naming it",
                self.name
            ));
        }
        Ok(kept)
    }

    /// Whether a driver option (`ensure_idle_vlan`) is on.
    pub fn option_on(&self, name: &str) -> bool {
        self.option_values.get(name).is_some_and(|v| v == "true")
    }

    /// Lint: defaults taken, template overrides for known values and known actions.
    pub(super) fn lint_options(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (name, opt) in &self.options {
            if opt.about.trim().is_empty() {
                out.push(format!("options.{name}: say what it is for (about)"));
            }
            if !opt.takes(&opt.default) {
                out.push(format!(
                    "options.{name}: default {:?} is not {}",
                    opt.default,
                    opt.expected()
                ));
            }
            if DRIVER_OPTIONS.iter().any(|(n, _)| n == name) {
                out.push(format!(
                    "options.{name}: a driver option every platform has"
                ));
            }
            for (value, actions) in &opt.templates {
                if !opt.takes(value) {
                    out.push(format!(
                        "options.{name}.templates.{value}: not a value the option takes"
                    ));
                }
                for action in actions.keys() {
                    if !super::ACTIONS.iter().any(|(a, _)| a == action) {
                        out.push(format!(
                            "options.{name}.templates.{value}.{action}: unknown action"
                        ));
                    }
                }
            }
        }
        out
    }
}
