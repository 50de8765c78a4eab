//! Policy: may this request touch this device, these ports, these VLANs?
//!
//! Fail-closed: a device without `allowed_vlans` allows no VLAN, an empty allow-list allows
//! nothing, a deny rule beats an allow rule, and restoring the configured idle VLAN is always
//! allowed. A denial names the rule that denied it (exit 77). This module decides only; it
//! never parses configuration or touches a device.

use std::collections::BTreeSet;

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
    /// Whether this caller may use `device` at all: it is in `[callers.NAME] devices` and,
    /// when the key has an `--allow-device` list, in that list (by name or alias).
    pub fn allows(&self, device: &Device) -> bool {
        let name = &device.name;
        self.caller.devices.iter().any(|d| d == name)
            && self
                .allow_devices
                .as_ref()
                .is_none_or(|list| list.iter().any(|d| d == name || device.aliases.contains(d)))
    }

    /// The one answer for a device reference outside the scope, whether or not such a device
    /// exists: it names the reference as the caller wrote it, so a caller learns nothing about
    /// devices that are not its own (not their names, platforms, or that they exist).
    pub fn not_yours(&self, reference: &str) -> Denied {
        deny(
            format!("callers.{}.devices", self.caller.name),
            format!(
                "caller {} may not use device {}",
                self.caller.name,
                Escaped(reference)
            ),
        )
    }
}

/// Checks a mutating or port-naming request against the device (and caller) policy. The
/// caller's right to the device itself is [`Scope::allows`], decided once when the device
/// is resolved (a device outside the scope is not found at all). Port names are the
/// platform's canonical ones (`run::resolve`).
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
    if let Some(plug) = &req.plug {
        // OVS: only the bridges the network team lists; a port without a VLAN carries every
        // VLAN of its bridge, which only callers the device names may plug.
        let bridge = plug
            .bridge
            .clone()
            .unwrap_or_else(|| device.default_bridge());
        if !device.bridges.contains(&bridge) {
            return Err(deny(
                format!("devices.{}.bridges", device.name),
                format!(
                    "bridge {} is not one requests may use on {} ({})",
                    Escaped(&bridge),
                    device.name,
                    device.bridges.join(", ")
                ),
            ));
        }
        if req.op == Op::PlugPort && plug.vlan.is_none() {
            if let Some(s) = scope {
                if !device.flat_ports.contains(&s.caller.name) {
                    return Err(deny(
                        format!("devices.{}.flat_ports", device.name),
                        format!(
                            "a port plugged without a VLAN carries every VLAN of {bridge}: caller {} may not plug one on {} (give a vlan, or list the caller in flat_ports)",
                            s.caller.name, device.name
                        ),
                    ));
                }
            }
        }
    }
    if req.op == Op::VerifyPort {
        // A read configures no VLAN: the VLANs it expects are compared, never sent.
        return Ok(());
    }
    // VLAN 1, the switch's default VLAN, is never deleted, on any platform and whatever the
    // allow-lists say.
    if let Some(n) = req.network.as_ref().filter(|n| n.vlan.get() == 1) {
        if req.op == Op::DeleteNetwork {
            return Err(deny(
                "VLAN 1",
                format!("VLAN {} is the default VLAN and is never deleted", n.vlan),
            ));
        }
    }
    // Add rights: the VLANs the change puts on ports. What a reset or a detach names is what
    // it takes off: removal rights decide that ([`check_removals`], once the port is read),
    // so that tear-down still works after the network team narrows `allowed_vlans`.
    let mut vlans = match req.op {
        Op::ResetPort | Op::DetachPort => VlanSet::new(),
        _ => req.vlans(),
    };
    if let Some(v) = req.plug.as_ref().and_then(|p| p.vlan) {
        vlans.insert(v);
    }
    for v in vlans.iter() {
        // Restoring the idle VLAN is always allowed, whoever asks.
        if Some(v) == device.default_vlan {
            continue;
        }
        check_added(device, scope, v)?;
    }
    // The idle VLAN a request restores: the device's own is always allowed; another one (a
    // caller's idle network that does not match the device's) is a VLAN like any other, and
    // a refusal says which two idle VLANs disagree and how to pair them.
    let mut idle = VlanSet::new();
    for c in &req.ports {
        if let Some(d) = c.default_vlan {
            idle.insert(d);
        }
    }
    if let Some(d) = req
        .lag
        .as_ref()
        .and_then(|l| l.l2.as_ref())
        .and_then(|c| c.default_vlan)
    {
        idle.insert(d);
    }
    for d in idle.iter() {
        if Some(d) == device.default_vlan || vlans.contains(d) {
            continue;
        }
        if let Err(e) = check_added(device, scope, d) {
            return Err(idle_mismatch(device, scope, d, e));
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

/// A VLAN the change puts on a port: allowed on the device and, for a caller, in its own
/// `allowed_vlans`.
fn check_added(device: &Device, scope: Option<&Scope>, v: Vlan) -> Result<(), Denied> {
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
    Ok(())
}

/// The refusal of a caller's idle VLAN that is not the device's: it names both VLANs, the
/// rule that refused, and the two ways to pair them.
fn idle_mismatch(device: &Device, scope: Option<&Scope>, d: Vlan, e: Denied) -> Denied {
    let name = &device.name;
    let theirs = match device.default_vlan {
        Some(own) => format!("is not the device's idle VLAN (devices.{name}.default_vlan = {own})"),
        None => format!("is given, and devices.{name}.default_vlan is not set"),
    };
    let pair = match device.default_vlan {
        Some(own) => format!(
            "send {own} instead (Ironic: [ironic_networking] idle_network = access/native_vlan={own}) or set devices.{name}.default_vlan = {d}"
        ),
        None => format!("set devices.{name}.default_vlan = {d}"),
    };
    let caller = scope
        .map(|s| format!(" (and callers.{}.allowed_vlans)", s.caller.name))
        .unwrap_or_default();
    deny(
        e.rule,
        format!(
            "default_vlan {d}, the idle VLAN this request would restore, {theirs} and is not allowed: {}; pair the idle VLANs ({pair}), or allow VLAN {d} in devices.{name}.allowed_vlans{caller}",
            e.message
        ),
    )
}

/// What a change would take off one port: the VLANs (access, native, tagged) it carries
/// now and would not carry afterwards; `None` when the port was not read and the change may
/// take off anything it carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removal {
    /// The port (or LAG interface).
    pub port: String,
    /// The VLANs, or `None`: unknown.
    pub vlans: Option<BTreeSet<u16>>,
}

/// Removal rights: a change may take off a port only VLANs the device lets Mercury remove
/// (`remove_vlans`, by default its `allowed_vlans`, never a denied one) and, for a caller,
/// that the caller may remove (`callers.X.remove_vlans`, by default its `allowed_vlans`).
/// The idle VLAN may always be removed. When the port was not read (what it carries is
/// unknown), a caller is refused unless both it and the device may remove every VLAN;
/// local, unscoped runs (the network team's own) are not.
pub fn check_removals(
    device: &Device,
    scope: Option<&Scope>,
    op: &str,
    removals: &[Removal],
) -> Result<(), Denied> {
    let device_may = device
        .remove_vlans
        .as_ref()
        .or(device.allowed_vlans.as_ref());
    let caller_may = scope.and_then(|s| {
        s.caller
            .remove_vlans
            .as_ref()
            .or(s.caller.allowed_vlans.as_ref())
            .map(|set| (s.caller.name.as_str(), set))
    });
    let all = |set: Option<&VlanSet>| {
        set.is_some_and(|s| s.len() == (crate::request::vlan::MAX as usize))
    };
    for r in removals {
        let Some(vlans) = &r.vlans else {
            let Some(s) = scope else { continue };
            if caller_may.is_none_or(|(_, set)| all(Some(set))) && all(device_may) {
                continue;
            }
            return Err(deny(
                format!("callers.{}.remove_vlans", s.caller.name),
                format!(
                    "cannot tell what {op} would take off {}: the port is not read first on {} (devices.{}.verify is off, or its platform has no reader), and caller {} may not remove every VLAN; turn verify on, or widen the caller's remove_vlans",
                    Escaped(&r.port), device.name, device.name, s.caller.name
                ),
            ));
        };
        for &id in vlans {
            if Some(id) == device.default_vlan.map(Vlan::get) {
                continue;
            }
            let Ok(v) = Vlan::new(id.into()) else {
                continue;
            };
            let key = |k: &str| format!("devices.{}.{k}", device.name);
            if device.denied_vlans.contains(v) {
                return Err(deny(
                    key("denied_vlans"),
                    format!(
                        "{op} would take VLAN {id} off {}, which is denied",
                        Escaped(&r.port)
                    ),
                ));
            }
            if !device_may.is_some_and(|s| s.contains(v)) {
                return Err(deny(
                    key(if device.remove_vlans.is_some() {
                        "remove_vlans"
                    } else {
                        "allowed_vlans"
                    }),
                    format!(
                        "{op} would take VLAN {id} off {}, which Mercury may not remove on {}",
                        Escaped(&r.port),
                        device.name
                    ),
                ));
            }
            if let Some((name, set)) = caller_may {
                if !set.contains(v) {
                    return Err(deny(
                        format!("callers.{name}.remove_vlans"),
                        format!(
                            "{op} would take VLAN {id} off {}, which caller {name} may not remove (it may remove {})",
                            Escaped(&r.port), show(set)
                        ),
                    ));
                }
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
