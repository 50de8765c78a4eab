//! SR Linux `info flat`: the port's statements
//! (`info flat from running / interface IF`) and the network-instances
//! (`info flat from running / network-instance`).
//!
//! A port's VLANs are its bridged sub-interfaces that a `mac-vrf` network-instance holds
//! (`set / network-instance mac-vrf-120 type mac-vrf` and
//! `set / network-instance mac-vrf-120 interface ethernet-1/5.120`). Only `type mac-vrf`
//! counts: a network-instance's type defaults to `default` (SR Linux YANG
//! `srl_nokia-network-instance.yang`), which `info flat` does not print, and the routed
//! sub-interfaces that `default` or an `ip-vrf` holds carry no VLAN (the learn-srlinux
//! captures in `tests/fixtures/real/nokia_srl/`). A sub-interface with
//! `vlan encap single-tagged vlan-id N` carries N tagged; one with `vlan encap untagged`
//! (or no encapsulation) carries the network-instance's VLAN untagged — the number at the
//! end of its name, as Mercury names them. Tagged VLANs make a trunk (the untagged one its
//! native VLAN), an untagged one alone an access port. Also `admin-state`, `description`,
//! `mtu`, `ethernet aggregate-id lagN`.

use std::collections::{BTreeMap, BTreeSet};

use super::{words, Raw};

#[derive(Default)]
struct Sub {
    tagged: Option<u16>,
}

fn trailing_number(name: &str) -> Option<u16> {
    let digits: String = name
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    digits.parse().ok().filter(|v| (1..=4094).contains(v))
}

pub(crate) fn parse(port: &str, outputs: &[String]) -> Result<Raw, String> {
    let mut r = Raw::default();
    let mut subs: BTreeMap<String, Sub> = BTreeMap::new();
    // sub-interface index -> network-instance name
    let mut held_by: BTreeMap<String, String> = BTreeMap::new();
    let mut mac_vrfs: BTreeSet<String> = BTreeSet::new();
    for line in outputs.iter().flat_map(|o| o.lines()) {
        let w = words(line);
        let w: Vec<&str> = w.iter().map(String::as_str).collect();
        match w.as_slice() {
            ["set", "/", "interface", p, rest @ ..] if *p == port => match rest {
                ["admin-state", s] => r.admin_up = Some(*s == "enable"),
                ["description", d @ ..] => r.description = Some(d.join(" ")),
                ["mtu", m] => r.mtu = m.parse().ok(),
                ["ethernet", "aggregate-id", lag] => r.lag = Some((*lag).to_string()),
                ["subinterface", s, "vlan", "encap", "single-tagged", "vlan-id", v] => {
                    let id = v.parse().map_err(|_| format!("{line:?}: vlan-id {v:?}"))?;
                    subs.entry((*s).to_string()).or_default().tagged = Some(id);
                }
                ["subinterface", s, ..] => {
                    subs.entry((*s).to_string()).or_default();
                }
                _ => {}
            },
            // `mac-vrf`, or the identity with its module prefix.
            ["set", "/", "network-instance", ni, "type", t]
                if t.rsplit(':').next() == Some("mac-vrf") =>
            {
                mac_vrfs.insert((*ni).to_string());
            }
            ["set", "/", "network-instance", ni, "interface", sub] => {
                if let Some(idx) = sub.strip_prefix(port).and_then(|x| x.strip_prefix('.')) {
                    held_by.insert(idx.to_string(), (*ni).to_string());
                }
            }
            _ => {}
        }
    }
    let mut untagged: Option<u16> = None;
    let mut tagged: BTreeSet<u16> = BTreeSet::new();
    for (idx, sub) in &subs {
        // A sub-interface no mac-vrf holds bridges nothing: it is in none, or routed in
        // `default` or an `ip-vrf`.
        let Some(ni) = held_by.get(idx).filter(|ni| mac_vrfs.contains(*ni)) else {
            continue;
        };
        match sub.tagged {
            Some(v) => {
                tagged.insert(v);
            }
            None => {
                untagged = Some(trailing_number(ni).ok_or_else(|| {
                    format!("network-instance {ni:?} holds {port}.{idx} untagged but its name ends in no VLAN number")
                })?)
            }
        }
    }
    if !tagged.is_empty() {
        r.mode = Some("trunk".into());
        r.native = untagged;
        r.allowed = Some(tagged);
    } else if let Some(u) = untagged {
        r.mode = Some("access".into());
        r.access = Some(u);
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real SR Linux 23.10 `info flat` output (quoted description).
    #[test]
    fn trunk_from_subinterfaces() {
        let iface = "set / interface ethernet-1/5 description \"node 7\"\nset / interface ethernet-1/5 admin-state disable\nset / interface ethernet-1/5 vlan-tagging true\nset / interface ethernet-1/5 subinterface 110 type bridged\nset / interface ethernet-1/5 subinterface 110 vlan encap untagged\nset / interface ethernet-1/5 subinterface 120 type bridged\nset / interface ethernet-1/5 subinterface 120 vlan encap single-tagged vlan-id 120\nset / interface ethernet-1/5 subinterface 130 type bridged\nset / interface ethernet-1/5 subinterface 130 vlan encap single-tagged vlan-id 130\n";
        let nis = "set / network-instance mac-vrf-110 type mac-vrf\nset / network-instance mac-vrf-110 interface ethernet-1/5.110\nset / network-instance mac-vrf-120 type mac-vrf\nset / network-instance mac-vrf-120 interface ethernet-1/5.120\nset / network-instance mac-vrf-120 interface ethernet-1/50.120\n";
        let r = parse("ethernet-1/5", &[iface.to_string(), nis.to_string()]).unwrap();
        assert_eq!(r.mode.as_deref(), Some("trunk"));
        assert_eq!(r.native, Some(110));
        // 130 is in no network-instance: it forwards nothing.
        assert_eq!(r.allowed, Some([120].into_iter().collect()));
        assert_eq!(
            (r.admin_up, r.description.as_deref()),
            (Some(false), Some("node 7"))
        );
    }

    /// A network-instance named like a mac-vrf but without `type mac-vrf` is of type
    /// `default` (YANG default): it bridges nothing, whatever its name.
    #[test]
    fn an_instance_without_type_mac_vrf_holds_no_vlan() {
        let iface = "set / interface ethernet-1/5 subinterface 130 type bridged\n";
        let nis = "set / network-instance mac-vrf-130 interface ethernet-1/5.130\n";
        let r = parse("ethernet-1/5", &[iface.to_string(), nis.to_string()]).unwrap();
        assert_eq!((r.mode, r.access), (None, None));
        // The identity written with its module prefix is the same type.
        let nis = "set / network-instance mac-vrf-130 type srl_nokia-network-instance:mac-vrf\nset / network-instance mac-vrf-130 interface ethernet-1/5.130\n";
        let r = parse("ethernet-1/5", &[iface.to_string(), nis.to_string()]).unwrap();
        assert_eq!((r.mode.as_deref(), r.access), (Some("access"), Some(130)));
    }
}
