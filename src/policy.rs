//! Policy: may this request touch this device, these ports, these VLANs?
//!
//! Fail-closed: a device without `allowed_vlans` allows no VLAN, an empty allow-list allows
//! nothing, a deny rule beats an allow rule, and restoring the configured idle VLAN is always
//! allowed. A denial names the rule that denied it (exit 77). This module decides only; it
//! never parses configuration or touches a device.

use crate::catalog::Platform;
use crate::config::{Caller, Device};
use crate::request::validate::Escaped;
use crate::request::vlan::{Vlan, VlanSet};
use crate::request::{Op, Request};
use crate::util::glob::glob;

/// A policy denial; exit 77.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("denied by {rule}: {message}")]
pub struct Denied {
    /// The rule, as a config key (`devices.leaf-1.allowed_vlans`).
    pub rule: String,
    /// What was refused.
    pub message: String,
}

fn deny(rule: impl Into<String>, message: impl Into<String>) -> Denied {
    Denied {
        rule: rule.into(),
        message: message.into(),
    }
}

/// What a forced-command caller may touch: its `[callers.NAME]` entry, narrowed by any
/// `--allow-device` on its authorized_keys line.
#[derive(Debug, Clone)]
pub struct Scope<'c> {
    /// The config entry.
    pub caller: &'c Caller,
    /// Extra restriction from argv (`None`: no restriction beyond the config).
    pub allow_devices: Option<Vec<String>>,
}

impl Scope<'_> {
    /// Whether this caller may use `device` at all.
    pub fn allows_device(&self, device: &Device) -> Result<(), Denied> {
        let name = &device.name;
        if !self.caller.devices.iter().any(|d| d == name) {
            return Err(deny(
                format!("callers.{}.devices", self.caller.name),
                format!("caller {} may not use device {name}", self.caller.name),
            ));
        }
        if let Some(list) = &self.allow_devices {
            if !list.iter().any(|d| d == name || device.aliases.contains(d)) {
                return Err(deny(
                    "serve-ssh --allow-device",
                    format!("device {name} is not among this key's --allow-device list"),
                ));
            }
        }
        Ok(())
    }
}

/// Checks a mutating or port-naming request against the device (and caller) policy. The
/// caller's right to the device itself is [`Scope::allows_device`], decided once when the
/// device is resolved. Port names are the platform's canonical ones (`run::resolve`).
pub fn check(
    req: &Request,
    device: &Device,
    platform: &Platform,
    scope: Option<&Scope>,
) -> Result<(), Denied> {
    for port in req.port_names() {
        check_port(device, platform, &port)?;
    }
    if let Some(lag) = &req.lag {
        check_port(device, platform, &lag.name)?;
    }
    if req.op == Op::VerifyPort {
        // A read configures no VLAN: the VLANs it expects are compared, never sent.
        return Ok(());
    }
    let mut vlans = req.vlans();
    for c in &req.ports {
        if let Some(d) = c.default_vlan {
            vlans.insert(d);
        }
    }
    if let Some(v) = req.plug.as_ref().and_then(|p| p.vlan) {
        vlans.insert(v);
    }
    for v in vlans.iter() {
        // Restoring the idle VLAN is always allowed, whoever asks.
        if Some(v) == device.default_vlan {
            continue;
        }
        check_vlan(device, v)?;
        if let Some(s) = scope {
            if let Some(allowed) = &s.caller.allowed_vlans {
                if !allowed.contains(v) {
                    return Err(deny(
                        format!("callers.{}.allowed_vlans", s.caller.name),
                        format!("VLAN {v} is not in {}", show(allowed)),
                    ));
                }
            }
        }
    }
    if matches!(req.op, Op::AddNetwork | Op::DeleteNetwork) {
        if !device.manage_vlans {
            return Err(deny(
                format!("devices.{}.manage_vlans", device.name),
                format!("Mercury may not create or delete VLANs on {}", device.name),
            ));
        }
        if let (Some(n), Some(idle)) = (&req.network, device.default_vlan) {
            if req.op == Op::DeleteNetwork && n.vlan == idle {
                return Err(deny(
                    format!("devices.{}.default_vlan", device.name),
                    format!("VLAN {idle} is the idle VLAN and cannot be deleted"),
                ));
            }
        }
    }
    Ok(())
}

/// VLAN allowed on the device: in `allowed_vlans` and not in `denied_vlans`.
pub fn check_vlan(device: &Device, vlan: Vlan) -> Result<(), Denied> {
    let key = |k: &str| format!("devices.{}.{k}", device.name);
    if device.denied_vlans.contains(vlan) {
        return Err(deny(key("denied_vlans"), format!("VLAN {vlan} is denied")));
    }
    match &device.allowed_vlans {
        None => Err(deny(
            key("allowed_vlans"),
            format!("VLAN {vlan}: no allowed_vlans are configured, so no VLAN is allowed (policy is fail-closed)"),
        )),
        Some(set) if !set.contains(vlan) => Err(deny(
            key("allowed_vlans"),
            format!("VLAN {vlan} is not in {}", show(set)),
        )),
        Some(_) => Ok(()),
    }
}

/// Port allowed on the device: matches an `allowed_ports` glob (when configured) and no
/// `denied_ports` glob. `port` is canonical; a glob matches when it does as written or in
/// the platform's canonical spelling (`Gi1/0/4*` also covers `GigabitEthernet1/0/48`), so a
/// rule keeps its meaning whichever spelling the network team wrote it in.
pub fn check_port(device: &Device, platform: &Platform, port: &str) -> Result<(), Denied> {
    let key = |k: &str| format!("devices.{}.{k}", device.name);
    let hits = |g: &String| glob(g, port) || glob(&platform.canonical_glob(g), port);
    if let Some(g) = device.denied_ports.iter().find(|g| hits(g)) {
        return Err(deny(
            key("denied_ports"),
            format!("port {} matches {}", Escaped(port), Escaped(g)),
        ));
    }
    if let Some(allowed) = &device.allowed_ports {
        if !allowed.iter().any(hits) {
            return Err(deny(
                key("allowed_ports"),
                format!("port {} matches no allowed pattern", Escaped(port)),
            ));
        }
    }
    Ok(())
}

fn show(set: &VlanSet) -> String {
    if set.is_empty() {
        "an empty list".into()
    } else {
        format!("[{set}]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::request::RawRequest;
    use std::path::Path;

    fn device(extra: &str) -> Device {
        let text = format!(
            "[devices.leaf]\nplatform = \"cisco_ios\"\ntransport = \"local\"\ndefault_vlan = 10\nmanage_vlans = true\n{extra}"
        );
        Config::parse(Path::new("m.toml"), &text).unwrap().devices["leaf"].clone()
    }

    fn req(json: &str) -> Request {
        let mut r = Request::from_raw(RawRequest::from_json(json).unwrap()).unwrap();
        crate::run::resolve::canonicalise(&mut r, ios()).unwrap();
        r
    }

    fn ios() -> &'static Platform {
        static CATALOG: std::sync::OnceLock<crate::catalog::Catalog> = std::sync::OnceLock::new();
        CATALOG
            .get_or_init(|| crate::catalog::Catalog::builtin().unwrap())
            .get("cisco_ios")
            .unwrap()
    }

    fn check(r: &Request, d: &Device, s: Option<&Scope>) -> Result<(), Denied> {
        super::check(r, d, ios(), s)
    }

    #[test]
    fn fail_closed_without_allow_list() {
        let d = device("");
        let r =
            req(r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/1","vlan":120,"reason":"r"}"#);
        let e = check(&r, &d, None).unwrap_err();
        assert_eq!(e.rule, "devices.leaf.allowed_vlans");
    }

    #[test]
    fn deny_beats_allow_and_idle_is_always_allowed() {
        let d = device(
            "allowed_vlans = [\"100-199\"]\ndenied_vlans = [150]\ndenied_ports = [\"Gi1/0/4*\"]\n",
        );
        let ok =
            req(r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/1","vlan":120,"reason":"r"}"#);
        assert!(check(&ok, &d, None).is_ok());
        let denied =
            req(r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/1","vlan":150,"reason":"r"}"#);
        assert_eq!(
            check(&denied, &d, None).unwrap_err().rule,
            "devices.leaf.denied_vlans"
        );
        let outside =
            req(r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/1","vlan":300,"reason":"r"}"#);
        assert!(check(&outside, &d, None)
            .unwrap_err()
            .message
            .contains("not in [100-199]"));
        let port = req(
            r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/48","vlan":120,"reason":"r"}"#,
        );
        assert_eq!(
            check(&port, &d, None).unwrap_err().rule,
            "devices.leaf.denied_ports"
        );
        let idle = req(
            r#"{"op":"reset_port","device":"leaf","port":"Gi1/0/1","default_vlan":10,"reason":"r"}"#,
        );
        assert!(check(&idle, &d, None).is_ok());
    }

    #[test]
    fn port_rules_hold_in_every_spelling() {
        let d = device("allowed_vlans = [\"100-199\"]\ndenied_ports = [\"gi1/0/48\", \"TenGigabitEthernet1/1/*\"]\n");
        for port in [
            "Gi1/0/48",
            "GigabitEthernet1/0/48",
            "gigabitethernet1/0/48",
            "Te1/1/1",
        ] {
            let r = req(&format!(
                r#"{{"op":"attach_port","device":"leaf","port":"{port}","vlan":120,"reason":"r"}}"#
            ));
            assert_eq!(
                check(&r, &d, None).unwrap_err().rule,
                "devices.leaf.denied_ports",
                "{port}"
            );
        }
        let allow = device("allowed_vlans = [\"100-199\"]\nallowed_ports = [\"Gi1/0/1*\"]\n");
        let ok = req(
            r#"{"op":"attach_port","device":"leaf","port":"GigabitEthernet1/0/12","vlan":120,"reason":"r"}"#,
        );
        assert!(check(&ok, &allow, None).is_ok());
    }

    #[test]
    fn empty_allow_lists_allow_nothing() {
        let d = device("allowed_vlans = []\nallowed_ports = []\n");
        let r =
            req(r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/1","vlan":120,"reason":"r"}"#);
        assert_eq!(
            check(&r, &d, None).unwrap_err().rule,
            "devices.leaf.allowed_ports"
        );
    }

    #[test]
    fn vlan_management_needs_permission() {
        let mut d = device("allowed_vlans = [\"1-4094\"]\n");
        let r = req(r#"{"op":"delete_network","device":"leaf","vlan":10,"reason":"r"}"#);
        assert_eq!(
            check(&r, &d, None).unwrap_err().rule,
            "devices.leaf.default_vlan"
        );
        d.manage_vlans = false;
        let r = req(r#"{"op":"add_network","device":"leaf","vlan":120,"reason":"r"}"#);
        assert_eq!(
            check(&r, &d, None).unwrap_err().rule,
            "devices.leaf.manage_vlans"
        );
    }
}
