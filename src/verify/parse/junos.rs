//! Junos `display set`: `show configuration interfaces IF | display set` (the port's
//! statements) and `show configuration vlans | display set` (so `vlan members NAME` can be
//! resolved to an id).
//!
//! - mode: `unit 0 family ethernet-switching interface-mode|port-mode access|trunk`; none
//!   printed is the default, access (`mode_default`), with its one member the access VLAN;
//! - VLANs: `... vlan members N|N-M|NAME|all` (an access port's one member is its access
//!   VLAN), `native-vlan-id N`;
//! - `disable`, `description`, `mtu`, `ether-options 802.3ad aeN`.

use std::collections::{BTreeMap, BTreeSet};

use super::{parse_vlans, words, Raw};

/// VLAN names and ids from `show configuration vlans | display set`.
pub(crate) fn vlan_names(output: &str) -> BTreeMap<String, u16> {
    let mut names = BTreeMap::new();
    for line in output.lines() {
        let w = words(line);
        if let ["set", "vlans", name, "vlan-id", id] =
            w.iter().map(String::as_str).collect::<Vec<_>>().as_slice()
        {
            if let Ok(id) = id.parse() {
                names.insert((*name).to_string(), id);
            }
        }
    }
    names
}

pub(crate) fn parse(port: &str, outputs: &[String]) -> Result<Raw, String> {
    let mut names: BTreeMap<String, u16> = BTreeMap::new();
    let mut statements: Vec<Vec<String>> = Vec::new();
    for line in outputs.iter().flat_map(|o| o.lines()) {
        let w = words(line);
        match w.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
            ["set", "vlans", name, "vlan-id", id] => {
                if let Ok(id) = id.parse() {
                    names.insert((*name).to_string(), id);
                }
            }
            ["set", "interfaces", p, ..] if *p == port => statements.push(w[3..].to_vec()),
            _ => {}
        }
    }
    let mut r = Raw::default();
    let mut members: BTreeSet<u16> = BTreeSet::new();
    let mut any_member = false;
    for s in &statements {
        let s: Vec<&str> = s.iter().map(String::as_str).collect();
        match s.as_slice() {
            ["disable"] => r.admin_up = Some(false),
            ["description", d @ ..] => r.description = Some(d.join(" ")),
            ["mtu", m] => {
                r.mtu = Some(
                    m.parse()
                        .map_err(|_| format!("mtu {m:?} is not a number"))?,
                )
            }
            ["native-vlan-id", n] => {
                r.native = Some(n.parse().map_err(|_| format!("native-vlan-id {n:?}"))?)
            }
            ["ether-options" | "gigether-options", "802.3ad", lag] => {
                r.lag = Some((*lag).to_string())
            }
            ["unit", "0", "family", "ethernet-switching", "interface-mode" | "port-mode", m] => {
                r.mode = Some((*m).to_string())
            }
            ["unit", "0", "family", "ethernet-switching", "vlan", "members", m @ ..] => {
                any_member = true;
                for item in m.iter().filter(|x| !matches!(**x, "[" | "]")) {
                    match names.get(*item) {
                        Some(id) => {
                            members.insert(*id);
                        }
                        None => members.extend(parse_vlans(item).map_err(|_| {
                            format!("vlan members {item}: neither a VLAN id nor a VLAN name with a vlan-id")
                        })?),
                    }
                }
            }
            _ => {}
        }
    }
    match r.mode.as_deref() {
        Some("access") => r.access = members.iter().next().copied(),
        // No mode printed: the default, access (the catalog's `mode_default`), whose one
        // member is the access VLAN (an access port with more cannot be committed).
        None if members.len() == 1 => r.access = members.iter().next().copied(),
        _ if any_member => r.allowed = Some(members),
        _ => {}
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real Junos 21.4 output: members by name and by id, a quoted description.
    #[test]
    fn trunk_with_named_members() {
        let port = "set interfaces ge-0/0/5 description \"node 7\"\nset interfaces ge-0/0/5 native-vlan-id 110\nset interfaces ge-0/0/5 unit 0 family ethernet-switching interface-mode trunk\nset interfaces ge-0/0/5 unit 0 family ethernet-switching vlan members tenant-110\nset interfaces ge-0/0/5 unit 0 family ethernet-switching vlan members 120-121\nset interfaces ge-0/0/50 disable\n";
        let vlans = "set vlans default vlan-id 1\nset vlans tenant-110 vlan-id 110\n";
        let r = parse("ge-0/0/5", &[port.to_string(), vlans.to_string()]).unwrap();
        assert_eq!(r.mode.as_deref(), Some("trunk"));
        assert_eq!(r.native, Some(110));
        assert_eq!(r.allowed, Some([110, 120, 121].into_iter().collect()));
        assert_eq!(r.description.as_deref(), Some("node 7"));
        assert_eq!(r.admin_up, None, "ge-0/0/50's disable is another port's");
    }

    #[test]
    fn access_port_and_unknown_names() {
        let r = parse(
            "ge-0/0/5",
            &["set interfaces ge-0/0/5 disable\nset interfaces ge-0/0/5 unit 0 family ethernet-switching interface-mode access\nset interfaces ge-0/0/5 unit 0 family ethernet-switching vlan members 120\n".to_string()],
        )
        .unwrap();
        assert_eq!(
            (r.mode.as_deref(), r.access, r.admin_up),
            (Some("access"), Some(120), Some(false))
        );
        assert!(parse(
            "ge-0/0/5",
            &[
                "set interfaces ge-0/0/5 unit 0 family ethernet-switching vlan members nosuch\n"
                    .to_string()
            ]
        )
        .is_err());
    }

    /// `display set` does not print the default mode: a port with one VLAN member and no
    /// `interface-mode` is an access port in that VLAN (ELS factory default: access).
    #[test]
    fn members_without_a_mode_are_the_access_vlan() {
        let port =
            "set interfaces ge-0/0/5 unit 0 family ethernet-switching vlan members tenant-110\n";
        let vlans = "set vlans tenant-110 vlan-id 110\n";
        let r = parse("ge-0/0/5", &[port.to_string(), vlans.to_string()]).unwrap();
        assert_eq!((r.mode, r.access, r.allowed), (None, Some(110), None));
    }
}
