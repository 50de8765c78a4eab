//! NVIDIA Mellanox Onyx (MLNX-OS): `show running-config` is flat — every interface setting
//! is one line `interface ethernet 1/5 SETTING` (indented by three blanks, under `##`
//! section banners), and settings shared by neighbouring ports are written once for a
//! range (`interface ethernet 1/7-1/8 channel-group 1 mode active`). The port's lines are
//! those whose range covers it, in order:
//!
//! - `switchport mode access|trunk|hybrid`;
//! - `switchport access vlan N` (on a hybrid port: its untagged VLAN);
//! - `switchport hybrid|trunk allowed-vlan [add|remove] LIST|all|none`;
//! - `description TEXT`, `shutdown` / `no shutdown`, `mtu N [force]`,
//!   `channel-group N mode M`.
//!
//! A port-channel (`Po7`) is read from its `interface port-channel 7 ...` lines and exists
//! once its bare `interface port-channel 7` line does. Defaults Onyx does not print: an
//! access port (`mode_default`), enabled.

use std::collections::BTreeSet;

use super::super::state::ALL;
use super::{parse_vlans, Raw};

/// Whether `spec` (`1/7-1/8`, `1/32`, `1/1/2`, a port-channel's `7`) covers port number
/// `num` (`1/8`).
fn covers(spec: &str, num: &str) -> bool {
    let Some((from, to)) = spec.split_once('-') else {
        return spec == num;
    };
    let split = |s: &str| -> Option<(String, u32)> {
        let (pre, last) = s.rsplit_once('/')?;
        Some((pre.to_string(), last.parse().ok()?))
    };
    match (split(from), split(to), split(num)) {
        (Some((pa, a)), Some((pb, b)), Some((pn, n))) => pa == pb && pa == pn && a <= n && n <= b,
        _ => false,
    }
}

/// Reads the flat running-config for `port` (canonical `Eth1/5`).
pub(crate) fn parse(port: &str, outputs: &[String]) -> Result<Raw, String> {
    let (kind, num) = match (port.strip_prefix("Eth"), port.strip_prefix("Po")) {
        (Some(n), _) => ("ethernet", n),
        (_, Some(n)) => ("port-channel", n),
        _ => {
            return Err(format!(
                "{port} is not an Onyx Ethernet port or port-channel"
            ))
        }
    };
    let mut exists = kind == "ethernet";
    let mut r = Raw::default();
    let mut allowed: Option<BTreeSet<u16>> = None;
    let mut seen_config = false;
    for out in outputs {
        for line in out.lines().map(|l| l.trim()) {
            let words: Vec<&str> = line.split_whitespace().collect();
            if words.first() == Some(&"##") || line.starts_with("## ") {
                seen_config = true;
            }
            let ["interface", k, spec, setting @ ..] = words.as_slice() else {
                continue;
            };
            if !matches!(
                *k,
                "ethernet" | "port-channel" | "mlag-port-channel" | "vlan"
            ) {
                continue;
            }
            seen_config = true;
            if *k != kind || !covers(spec, num) {
                continue;
            }
            exists = true;
            let list = |w: &[&str]| -> Result<BTreeSet<u16>, String> {
                match w {
                    ["all"] => Ok(ALL.collect()),
                    ["none"] => Ok(BTreeSet::new()),
                    _ => parse_vlans(&w.join(",")).map_err(|e| format!("{line:?}: {e}")),
                }
            };
            match setting {
                ["switchport", "mode", m] => r.mode = Some((*m).to_string()),
                ["no", "switchport", "mode"] => r.mode = None,
                ["switchport", "access", "vlan", v] => {
                    r.access = Some(v.parse().map_err(|_| format!("{line:?}: VLAN {v:?}"))?);
                }
                ["no", "switchport", "access", "vlan", ..] => r.access = None,
                ["switchport", "hybrid" | "trunk", "allowed-vlan", "add", rest @ ..] => {
                    allowed
                        .get_or_insert_with(BTreeSet::new)
                        .extend(list(rest)?);
                }
                ["switchport", "hybrid" | "trunk", "allowed-vlan", "remove", rest @ ..] => {
                    let gone = list(rest)?;
                    allowed
                        .get_or_insert_with(BTreeSet::new)
                        .retain(|v| !gone.contains(v));
                }
                ["switchport", "hybrid" | "trunk", "allowed-vlan", rest @ ..] => {
                    allowed = Some(list(rest)?);
                }
                ["description", ..] => {
                    let text = line
                        .split_once(" description ")
                        .map_or("", |(_, t)| t)
                        .trim();
                    r.description = Some(text.to_string());
                }
                ["shutdown"] => r.admin_up = Some(false),
                ["no", "shutdown"] => r.admin_up = Some(true),
                ["mtu", m, ..] => r.mtu = m.parse().ok(),
                ["channel-group", n, ..] => r.lag = Some((*n).to_string()),
                _ => {}
            }
        }
    }
    if !seen_config {
        return Err("no Onyx running-config (`##` banners, `interface ethernet` lines)".into());
    }
    if !exists {
        // A port-channel is created by its bare `interface port-channel N` line.
        return Err(format!(
            "no `interface port-channel {num}` line: {port} does not exist"
        ));
    }
    r.allowed = allowed;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::covers;

    #[test]
    fn ranges_cover_their_ports_only() {
        assert!(covers("1/7-1/8", "1/8"));
        assert!(covers("1/32", "1/32"));
        assert!(!covers("1/7-1/8", "1/9"));
        assert!(!covers("1/7-1/8", "2/7"));
        assert!(!covers("1/3", "1/32"));
        assert!(covers("1/1/1-1/1/4", "1/1/2"));
    }
}
