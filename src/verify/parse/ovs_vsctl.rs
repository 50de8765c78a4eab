//! Open vSwitch as a switch (`ovs_linux`): `ovs-vsctl list Port IF`, `ovs-vsctl list
//! Interface IF` (`column : value` lines) and `ip -o link show IF` (the admin state: `UP`
//! among the flags).
//!
//! The Port's `tag`, `trunks` and `vlan_mode` are read as OVS reads them (`ovs::Vlans`):
//! an access port's tag is its VLAN; `native-untagged` / `native-tagged` ports carry their
//! tag untagged / as native; an empty `trunks` on a trunk means every VLAN. The
//! Interface's `mtu_request` is the MTU. An empty `ip` output leaves the admin state
//! unread.

use std::collections::BTreeMap;

use super::ovsdb::Vlans;
use super::Raw;

fn columns(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().trim_matches('"').to_string()))
        .collect()
}

fn optional(v: Option<&String>) -> Option<&str> {
    v.map(String::as_str)
        .filter(|s| *s != "[]" && !s.is_empty())
}

pub(crate) fn parse(port: &str, outputs: &[String]) -> Result<Raw, String> {
    let p = columns(outputs.first().map(String::as_str).unwrap_or_default());
    if p.get("name").map(String::as_str) != Some(port) {
        return Err(format!("no Port record named {port} in the output"));
    }
    let number = |s: &str| -> Result<u16, String> {
        s.parse().map_err(|_| format!("{s:?} is not a VLAN id"))
    };
    let vlans = Vlans {
        tag: optional(p.get("tag")).map(number).transpose()?,
        trunks: optional(p.get("trunks"))
            .map(|t| {
                t.trim_matches(['[', ']'])
                    .split(',')
                    .map(str::trim)
                    .filter(|x| !x.is_empty())
                    .map(number)
                    .collect::<Result<_, _>>()
            })
            .transpose()?
            .unwrap_or_default(),
        vlan_mode: optional(p.get("vlan_mode")).map(str::to_string),
    };
    let mut r = Raw::default();
    if vlans.is_access() {
        r.mode = Some("access".into());
        r.access = vlans.tag;
    } else if vlans.tag.is_some() || !vlans.trunks.is_empty() || vlans.vlan_mode.is_some() {
        r.mode = Some("trunk".into());
        r.native = vlans.native();
        r.allowed = (!vlans.trunks.is_empty()).then(|| vlans.trunks.clone());
    } else {
        // No tag, no trunks, no vlan_mode: OVS forwards the port as a trunk of every VLAN
        // ("if it [trunks] is empty, then the port trunks all VLANs", vswitch.xml) — never
        // an idle port.
        r.mode = Some("trunk".into());
        r.allowed = Some(crate::verify::state::ALL.collect());
    }
    let i = columns(outputs.get(1).map(String::as_str).unwrap_or_default());
    r.mtu = optional(i.get("mtu_request")).and_then(|m| m.parse().ok());
    let ip = outputs.get(2).map(String::as_str).unwrap_or_default();
    match ip
        .split_once('<')
        .and_then(|(_, rest)| rest.split_once('>'))
    {
        Some((flags, _)) => r.admin_up = Some(flags.split(',').any(|f| f == "UP")),
        None => {
            r.unread.insert("admin_up");
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_untagged_trunk() {
        let port = "_uuid               : 5c3e...\nname                : eth5\ntag                 : 110\ntrunks              : [110, 120, 130]\nvlan_mode           : native-untagged\n";
        let iface = "name                : eth5\nmtu_request         : 9000\n";
        let ip = "7: eth5: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9000 qdisc mq master ovs-system state UP\n";
        let r = parse("eth5", &[port.into(), iface.into(), ip.into()]).unwrap();
        assert_eq!(r.mode.as_deref(), Some("trunk"));
        assert_eq!(r.native, Some(110));
        assert_eq!(r.allowed, Some([110, 120, 130].into_iter().collect()));
        assert_eq!((r.mtu, r.admin_up), (Some(9000), Some(true)));
        let r = parse(
            "eth5",
            &[
                "name : eth5\ntag : 120\ntrunks : []\nvlan_mode : []\n".into(),
                String::new(),
                String::new(),
            ],
        )
        .unwrap();
        assert_eq!((r.mode.as_deref(), r.access), (Some("access"), Some(120)));
        assert!(r.unread.contains("admin_up"));
    }

    /// A port with nothing set is not idle: OVS trunks every VLAN on it.
    #[test]
    fn a_bare_port_is_a_trunk_of_every_vlan() {
        let bare = "name : eth6\ntag : []\ntrunks : []\nvlan_mode : []\n";
        let r = parse("eth6", &[bare.into(), String::new(), String::new()]).unwrap();
        assert_eq!(r.mode.as_deref(), Some("trunk"));
        assert_eq!(r.allowed.map(|a| a.len()), Some(4094));
    }
}
