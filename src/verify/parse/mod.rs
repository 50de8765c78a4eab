//! Show-output parsers, one per output *family* (named by the catalog's
//! `[platforms.X.verify] parser`), and the normalisation that applies a platform's
//! semantics to what a parser found.

mod bridge;
mod fastiron;
mod ios;
mod junos;
mod netvisor;
mod nvue;
mod onyx;
mod os9;
mod ovs_vsctl;
pub mod ovsdb;
mod sonic;
mod srl;
mod vrp;

use std::collections::{BTreeMap, BTreeSet};

use super::state::{PortState, ALL};
use crate::catalog::{Platform, VerifySpec, VERIFY_FIELDS};

/// What a parser found, before normalisation: the device's own words and settings,
/// whether or not the port's mode uses them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Raw {
    /// The mode word as the device writes it (`general`, `trunk`, ...).
    pub mode: Option<String>,
    pub access: Option<u16>,
    pub native: Option<u16>,
    /// `None`: no allowed-VLAN setting at all (the platform default applies).
    pub allowed: Option<BTreeSet<u16>>,
    pub admin_up: Option<bool>,
    pub description: Option<String>,
    pub mtu: Option<u32>,
    /// LAG as shown: a number (`channel-group 7`) or a name (`ae7`).
    pub lag: Option<String>,
    /// Fields this output did not carry.
    pub unread: BTreeSet<&'static str>,
}

/// Parses the outputs of the platform's show lines (in catalog order) for `port`. An error
/// means the output is not what the parser knows (exit 76).
pub fn parse(
    platform: &Platform,
    spec: &VerifySpec,
    port: &str,
    outputs: &[String],
) -> Result<PortState, String> {
    let raw = match spec.parser.as_str() {
        "ios" => ios::parse(port, outputs)?,
        "os9_vlan" => os9::parse(platform, port, outputs)?,
        "fastiron_vlan" => fastiron::parse(platform, port, outputs)?,
        "onyx_flat" => onyx::parse(port, outputs)?,
        "bridge_vlan" => bridge::parse(port, outputs)?,
        "netvisor_parsable" => netvisor::parse(port, outputs)?,
        "junos_set" => junos::parse(port, outputs)?,
        "vrp" => vrp::parse(port, outputs)?,
        "nvue" => nvue::parse(port, outputs)?,
        "sonic_tables" => sonic::parse(port, outputs)?,
        "srl" => srl::parse(port, outputs)?,
        "ovs_vsctl" => ovs_vsctl::parse(port, outputs)?,
        other => return Err(format!("no parser {other:?} for show output")),
    };
    Ok(normalise(raw, platform, spec))
}

/// The device's VLANs by name (`set vlans NAME vlan-id N`), from the output of the
/// platform's `verify.vlan_table` line.
pub fn vlan_table(spec: &VerifySpec, output: &str) -> Result<BTreeMap<String, u16>, String> {
    match spec.parser.as_str() {
        "junos_set" => Ok(junos::vlan_names(output)),
        other => Err(format!("parser {other:?} reads no VLAN table")),
    }
}

/// The VLAN ids the device has, from the output of the platform's `verify.vlan_table` line:
/// `set vlans NAME vlan-id N` statements (Junos), else a table whose rows start with the
/// VLAN id under a `VLAN` / `VID` / `NUM` header (IOS and NX-OS `show vlan brief`; EOS,
/// AOS-CX, OS9, OS10 and Onyx `show vlan`; VRP `display vlan`; Comware `display vlan brief`,
/// whose further member rows start with a port name), where OS9 and OS10 mark the
/// default VLAN with a leading `*`. Output without such a header is not a VLAN table.
pub fn vlan_ids(spec: &VerifySpec, output: &str) -> Result<BTreeSet<u16>, String> {
    if spec.parser == "junos_set" {
        return Ok(junos::vlan_names(output).into_values().collect());
    }
    let mut header = false;
    let mut ids = BTreeSet::new();
    for line in output.lines() {
        let mut words = line.split_whitespace().peekable();
        if words.peek() == Some(&"*") {
            words.next();
        }
        let Some(first) = words.next() else { continue };
        if ["vlan", "vid", "num"]
            .iter()
            .any(|h| first.eq_ignore_ascii_case(h))
        {
            header = true;
            continue;
        }
        if !header || !first.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Ok(id) = first.parse::<u16>() {
            if (1..=4094).contains(&id) {
                ids.insert(id);
            }
        }
    }
    if !header {
        return Err("no VLAN table in the output (no VLAN / VID / NUM header)".into());
    }
    Ok(ids)
}

/// Applies the platform's semantics to what the parser found: mode words, defaults, which
/// settings the mode uses.
pub(crate) fn normalise(raw: Raw, platform: &Platform, spec: &VerifySpec) -> PortState {
    // A port with VLAN settings but no mode line is in the platform's default mode (which
    // NX-OS, EOS and OS10 do not print); one with nothing configured stays unconfigured.
    let configured = raw.access.is_some() || raw.native.is_some() || raw.allowed.is_some();
    let mode = raw
        .mode
        .or_else(|| spec.mode_default.clone().filter(|_| configured))
        .map(|m| spec.modes.get(&m).cloned().unwrap_or(m));
    let mut s = PortState {
        admin_up: raw.admin_up.or(Some(spec.admin_default_up)),
        description: raw.description.or(Some(String::new())),
        mtu: raw.mtu,
        lag: raw.lag.map(|l| lag_name(platform, &l)),
        ..PortState::default()
    };
    match mode.as_deref() {
        Some("trunk") | Some("hybrid") => {
            s.native_vlan = raw.native.or(if platform.native_is_access {
                raw.access
            } else {
                None
            });
            s.allowed_vlans = raw.allowed.unwrap_or_else(|| {
                if spec.trunk_default_all {
                    ALL.collect()
                } else {
                    BTreeSet::new()
                }
            });
        }
        Some("access") => s.access_vlan = raw.access,
        _ => {
            s.access_vlan = raw.access;
            s.native_vlan = raw.native;
            s.allowed_vlans = raw.allowed.unwrap_or_default();
        }
    }
    let mut mode = mode;
    if mode.as_deref() == Some("trunk")
        && s.allowed_vlans.is_empty()
        && s.native_vlan.is_some()
        && platform.access_is_trunk()
    {
        // Where the device's access ports are made in the trunk mode (PowerConnect
        // `plug_mode = general`), a port with only its untagged VLAN is an access port.
        mode = Some("access".into());
        s.access_vlan = s.native_vlan.take();
    }
    s.mode = mode;
    s.unread = raw.unread;
    for f in &spec.unread {
        if let Some(name) = VERIFY_FIELDS.iter().find(|x| **x == f.as_str()) {
            s.unread.insert(name);
        }
    }
    for f in s.unread.clone() {
        match f {
            "admin_up" => s.admin_up = None,
            "description" => s.description = None,
            "mtu" => s.mtu = None,
            "lag" => s.lag = None,
            _ => {}
        }
    }
    s
}

/// The platform's name for a LAG given as a number or a name (`7`, `ae7`, `PortChannel0007`
/// → `ae7` on Junos): the number the platform's `lag_pattern` finds, rendered with its
/// `lag_interface`, so a device's spelling and a request's compare equal.
pub fn lag_name(platform: &Platform, shown: &str) -> String {
    let id = if shown.bytes().all(|b| b.is_ascii_digit()) {
        Some(shown.to_string())
    } else {
        platform
            .lag_pattern
            .as_ref()
            .and_then(|p| p.captures(shown))
            .and_then(|c| c.get(1))
            .map(|m| m.as_str().to_string())
    };
    let Some(id) = id.map(|i| {
        let t = i.trim_start_matches('0');
        if t.is_empty() {
            "0".to_string()
        } else {
            t.to_string()
        }
    }) else {
        return shown.to_string();
    };
    platform
        .lag_interface
        .as_ref()
        .and_then(|t| t.render(&|v| (v == "lag_id").then(|| id.clone())).ok())
        .unwrap_or(id)
}

/// Splits a line into words, keeping `"double quoted"` text as one word (quotes removed).
pub(crate) fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    for ch in line.chars() {
        match ch {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

/// Parses a VLAN list written with `seps` between items and `-` (or ` to `, as separate
/// words) for ranges; `all` is every VLAN.
pub(crate) fn parse_vlans(text: &str) -> Result<BTreeSet<u16>, String> {
    let mut out = BTreeSet::new();
    let items: Vec<&str> = text.split([',', ' ']).filter(|s| !s.is_empty()).collect();
    let mut i = 0;
    let num = |s: &str| -> Result<u16, String> {
        s.parse::<u16>()
            .ok()
            .filter(|v| ALL.contains(v))
            .ok_or_else(|| format!("{s:?} is not a VLAN id"))
    };
    while i < items.len() {
        let item = items[i];
        if item.eq_ignore_ascii_case("all") {
            out.extend(ALL);
        } else if item.eq_ignore_ascii_case("none") {
        } else if items.get(i + 1) == Some(&"to") {
            let (lo, hi) = (
                num(item)?,
                num(items.get(i + 2).copied().unwrap_or_default())?,
            );
            out.extend(lo..=hi);
            i += 2;
        } else if let Some((lo, hi)) = item.split_once('-') {
            out.extend(num(lo)?..=num(hi)?);
        } else {
            out.insert(num(item)?);
        }
        i += 1;
    }
    Ok(out)
}

/// Whether the interface name `shown` is the port `asked` (case, spaces and abbreviated
/// type names aside: `GigabitEthernet1/0/5` is `Gi1/0/5`, `ethernet 1/1/5` is
/// `ethernet1/1/5`).
pub(crate) fn same_port(shown: &str, asked: &str) -> bool {
    let norm = |s: &str| s.replace(' ', "").to_ascii_lowercase();
    let (a, b) = (norm(shown), norm(asked));
    if a == b {
        return true;
    }
    let split = |s: &str| -> (String, String) {
        let at = s.find(|c: char| c.is_ascii_digit()).unwrap_or(s.len());
        (s[..at].to_string(), s[at..].to_string())
    };
    let ((ta, na), (tb, nb)) = (split(&a), split(&b));
    !ta.is_empty() && !tb.is_empty() && na == nb && (ta.starts_with(&tb) || tb.starts_with(&ta))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::vlan_list;

    #[test]
    fn vlan_lists_round_trip() {
        let s = parse_vlans("10,20-22 30 to 32 all").unwrap();
        assert_eq!(s.len(), 4094);
        let s = parse_vlans("10,20-22 30 to 32").unwrap();
        assert_eq!(vlan_list(&s), "10,20-22,30-32");
        assert!(parse_vlans("5000").is_err());
        assert!(parse_vlans("none").unwrap().is_empty());
    }

    #[test]
    fn port_names_match_across_abbreviations() {
        assert!(same_port("GigabitEthernet1/0/5", "Gi1/0/5"));
        assert!(same_port("ethernet 1/1/5", "ethernet1/1/5"));
        assert!(!same_port("GigabitEthernet1/0/50", "Gi1/0/5"));
        assert!(!same_port("TenGigabitEthernet1/0/5", "Gi1/0/5"));
    }

    #[test]
    fn words_keep_quoted_text() {
        assert_eq!(
            words(r#"set interfaces ge-0/0/5 description "node 7""#),
            vec!["set", "interfaces", "ge-0/0/5", "description", "node 7"]
        );
    }

    fn read(platform: &str, port: &str, text: &str) -> PortState {
        let cat = crate::catalog::Catalog::builtin().unwrap();
        let p = cat.get(platform).unwrap();
        let spec = p.verify.spec(platform).unwrap();
        parse(p, spec, port, &[text.to_string()]).unwrap()
    }

    /// PowerConnect with `plug_mode = general` makes its access ports in general mode: one
    /// with only its untagged PVID reads as an access port, one with tagged VLANs as a
    /// trunk; without the option a general-mode port is a trunk.
    #[test]
    fn general_mode_access_ports_where_access_is_made_in_general_mode() {
        let cat = crate::catalog::Catalog::builtin().unwrap();
        let plain = cat.get("dell_powerconnect").unwrap();
        let opts = BTreeMap::from([("plug_mode".to_string(), "general".to_string())]);
        let general = plain.with_options(&opts).unwrap();
        let spec = plain.verify.spec("dell_powerconnect").unwrap();
        let pvid_only = "interface Gi1/0/5\n switchport mode general\n switchport general pvid 120\n switchport general allowed vlan add 120 untagged\n".to_string();
        let s = parse(&general, spec, "Gi1/0/5", std::slice::from_ref(&pvid_only)).unwrap();
        assert_eq!(
            (s.mode.as_deref(), s.access_vlan, s.native_vlan),
            (Some("access"), Some(120), None)
        );
        let s = parse(plain, spec, "Gi1/0/5", &[pvid_only]).unwrap();
        assert_eq!(
            (s.mode.as_deref(), s.native_vlan),
            (Some("trunk"), Some(120))
        );
        let tagged = "interface Gi1/0/5\n switchport mode general\n switchport general pvid 110\n switchport general allowed vlan add 120 tagged\n".to_string();
        let s = parse(&general, spec, "Gi1/0/5", &[tagged]).unwrap();
        assert_eq!(
            (s.mode.as_deref(), s.native_vlan),
            (Some("trunk"), Some(110))
        );
    }

    /// NX-OS and EOS do not print the default `switchport mode access`; OS10's access VLAN
    /// on a trunk is its native VLAN; an IOS trunk without an allowed line carries all.
    #[test]
    fn platform_semantics_from_the_catalog() {
        let s = read(
            "cisco_nxos",
            "Ethernet1/5",
            "interface Ethernet1/5\n  switchport access vlan 120\n  no shutdown\n",
        );
        assert_eq!(
            (s.mode.as_deref(), s.access_vlan),
            (Some("access"), Some(120))
        );
        let s = read("cisco_nxos", "Ethernet1/5", "interface Ethernet1/5\n");
        assert_eq!(s.mode, None, "nothing configured: no mode");
        let s = read(
            "dell_os10",
            "ethernet1/1/5",
            "interface ethernet1/1/5\n switchport mode trunk\n switchport access vlan 110\n switchport trunk allowed vlan 120\n",
        );
        assert_eq!((s.native_vlan, s.access_vlan), (Some(110), None));
        let s = read(
            "cisco_ios",
            "Gi1/0/5",
            "interface GigabitEthernet1/0/5\n switchport access vlan 99\n switchport mode trunk\n",
        );
        assert_eq!(s.allowed_vlans.len(), 4094);
        assert_eq!(s.access_vlan, None, "inactive on a trunk");
        let s = read(
            "dell_powerconnect",
            "Gi1/0/5",
            "interface Gi1/0/5\n switchport mode general\n switchport general pvid 110\n switchport general allowed vlan add 120 tagged\n",
        );
        assert_eq!(s.mode.as_deref(), Some("trunk"));
        let s = read(
            "aruba_aoscx",
            "1/1/5",
            "interface 1/1/5\n    vlan access 120\n",
        );
        assert_eq!(s.admin_up, Some(false), "AOS-CX ports ship disabled");
        let s = read(
            "juniper",
            "ge-0/0/5",
            "set interfaces ge-0/0/5 ether-options 802.3ad ae7\n",
        );
        assert_eq!(s.lag.as_deref(), Some("ae7"));
        let s = read(
            "huawei",
            "GigabitEthernet0/0/5",
            "interface GigabitEthernet0/0/5\n eth-trunk 7\n#\n",
        );
        assert_eq!(s.lag.as_deref(), Some("Eth-Trunk7"));
    }

    /// Defaults the device does not print: a Comware port's link type (access, HPE's
    /// pyhpecw7 `Switchport.get_default`) and a Junos port's interface mode (access, the
    /// ELS factory default) are absent from their configuration output; a VLAN setting
    /// without them is an access port in that VLAN.
    #[test]
    fn access_is_the_unprinted_default_on_comware_and_junos() {
        let s = read(
            "hpe_comware",
            "GigabitEthernet1/0/5",
            "interface GigabitEthernet1/0/5\n port access vlan 10\n#\n",
        );
        assert_eq!(
            (s.mode.as_deref(), s.access_vlan),
            (Some("access"), Some(10))
        );
        let s = read(
            "juniper",
            "ge-0/0/5",
            "set interfaces ge-0/0/5 unit 0 family ethernet-switching vlan members 110\n",
        );
        assert_eq!(
            (s.mode.as_deref(), s.access_vlan),
            (Some("access"), Some(110))
        );
        assert!(s.allowed_vlans.is_empty());
        // A trunk's mode is printed, and stays a trunk.
        let s = read(
            "juniper",
            "ge-0/0/5",
            "set interfaces ge-0/0/5 unit 0 family ethernet-switching interface-mode trunk\nset interfaces ge-0/0/5 unit 0 family ethernet-switching vlan members 110\n",
        );
        assert_eq!(s.mode.as_deref(), Some("trunk"));
        assert_eq!(s.allowed_vlans, [110].into_iter().collect());
    }
}
