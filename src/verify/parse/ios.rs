//! IOS-like running-config stanzas: `interface X` followed by indented lines, as IOS, NX-OS,
//! EOS, OS10, Sx300, PowerConnect, RGOS, SMIS and AOS-CX print them
//! (`show running-config interface X`). One parser for the family; the spellings differ
//! per vendor and are all recognised:
//!
//! - mode: `switchport mode access|trunk|general|hybrid`; AOS-CX has no mode line (a
//!   `vlan trunk ...` line makes a trunk, `vlan access N` an access port); `no switchport`
//!   is a routed port;
//! - access VLAN: `switchport access vlan N`, `vlan access N`;
//! - native VLAN: `switchport trunk native vlan N`, `switchport general pvid N`,
//!   `vlan trunk native N`;
//! - tagged VLANs: `switchport trunk allowed vlan [add|remove] LIST|all|none`,
//!   `switchport general allowed vlan add|remove LIST tagged|untagged`,
//!   `switchport hybrid allowed-vlan [add|remove] LIST`, `vlan trunk allowed LIST|all`;
//! - `shutdown` / `no shutdown`, `description TEXT`, `mtu N`, `channel-group N mode M`,
//!   `lag N`.
//!
//! Bodies are indented (IOS, NX-OS, EOS, ...), or unindented up to `exit` as Dell's N-series
//! (OS6, the PowerConnect successor) prints them.
//!
//! Lines it does not know (spanning-tree, storm control, ...) are ignored: they are not
//! part of the normalised state.

use std::collections::BTreeSet;

use super::{parse_vlans, same_port, Raw};

/// Finds the port's stanza in the output (the only one, or the one whose name matches when
/// the device printed more) and reads it.
pub(crate) fn parse(port: &str, outputs: &[String]) -> Result<Raw, String> {
    let text = outputs.join("\n");
    let stanzas = stanzas(&text);
    let body = match stanzas.as_slice() {
        [] => return Err(format!("no `interface` stanza for {port} in the output")),
        [(_, only)] => only.clone(),
        many => many
            .iter()
            .find(|(name, _)| same_port(name, port))
            .map(|(_, b)| b.clone())
            .ok_or_else(|| format!("no `interface {port}` stanza among {} shown", many.len()))?,
    };
    read(&body)
}

/// How the body of the stanza being read is laid out.
#[derive(Clone, Copy, PartialEq)]
enum Body {
    /// No stanza open.
    Closed,
    /// Just opened: the first body line decides.
    Opened,
    /// Indented lines (IOS, NX-OS, EOS, ...): the first unindented line ends it.
    Indented,
    /// Unindented lines up to `exit` (Dell N-series / OS6: `interface Te1/0/1`,
    /// `switchport access vlan 2`, `exit`).
    Flat,
}

/// `(interface name, its lines)` for every `interface` stanza.
fn stanzas(text: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut body = Body::Closed;
    for line in text.lines() {
        let trimmed = line.trim();
        let indented = line.starts_with([' ', '\t']);
        if !indented {
            if let Some(name) = trimmed.strip_prefix("interface ") {
                out.push((name.trim().to_string(), Vec::new()));
                body = Body::Opened;
                continue;
            }
            let ends = trimmed.is_empty() || matches!(trimmed, "!" | "exit" | "end");
            body = match body {
                // An unindented setting right after `interface X`: the N-series layout.
                Body::Opened | Body::Flat if !ends => Body::Flat,
                // `!`, `end`, `exit`, another top-level statement: the stanza is over.
                _ => Body::Closed,
            };
            if body == Body::Closed {
                continue;
            }
        } else if body == Body::Opened {
            body = Body::Indented;
        }
        if body != Body::Closed && !trimmed.is_empty() && trimmed != "!" {
            if let Some((_, lines)) = out.last_mut() {
                lines.push(trimmed.to_string());
            }
        }
    }
    out
}

fn vlan(word: Option<&str>, line: &str) -> Result<u16, String> {
    let set = parse_vlans(word.unwrap_or_default()).map_err(|e| format!("{line:?}: {e}"))?;
    match (set.len(), set.first()) {
        (1, Some(v)) => Ok(*v),
        _ => Err(format!("{line:?}: expected one VLAN")),
    }
}

fn read(lines: &[String]) -> Result<Raw, String> {
    let mut r = Raw::default();
    // AOS-CX and similar: no mode line; remembered to infer the mode at the end.
    let (mut explicit_mode, mut trunk_seen, mut access_seen) = (false, false, false);
    let mut untagged: BTreeSet<u16> = BTreeSet::new();
    for line in lines {
        let w: Vec<&str> = line.split_whitespace().collect();
        let list = |from: usize| parse_vlans(&w[from.min(w.len())..].join(" "));
        let bad = |e: String| format!("{line:?}: {e}");
        match w.as_slice() {
            ["switchport", "mode", m @ ..] if !m.is_empty() => {
                r.mode = Some(m.join(" "));
                explicit_mode = true;
            }
            ["no", "switchport"] => {
                r.mode = Some("routed".into());
                explicit_mode = true;
            }
            ["switchport", "access", "vlan", v] | ["vlan", "access", v] => {
                r.access = Some(vlan(Some(v), line)?);
                access_seen = true;
            }
            ["switchport", "trunk", "native", "vlan", v]
            | ["switchport", "general", "pvid", v]
            | ["vlan", "trunk", "native", v] => {
                r.native = Some(vlan(Some(v), line)?);
                trunk_seen = true;
            }
            ["switchport", "trunk", "allowed", "vlan", rest @ ..]
            | ["switchport", "hybrid", "allowed-vlan", rest @ ..]
            | ["vlan", "trunk", "allowed", rest @ ..] => {
                let base = w.len() - rest.len();
                let set = r.allowed.get_or_insert_with(BTreeSet::new);
                match rest {
                    ["add", ..] => set.extend(list(base + 1).map_err(bad)?),
                    ["remove", ..] => {
                        let gone = list(base + 1).map_err(bad)?;
                        set.retain(|v| !gone.contains(v));
                    }
                    ["except", ..] => {
                        let gone = list(base + 1).map_err(bad)?;
                        *set = (1..=4094).filter(|v| !gone.contains(v)).collect();
                    }
                    _ => *set = list(base).map_err(bad)?,
                }
                trunk_seen = true;
            }
            ["switchport", "general", "allowed", "vlan", op @ ("add" | "remove"), items @ ..] => {
                let (items, tagging) = match items {
                    [head @ .., t @ ("tagged" | "untagged")] => (head, *t),
                    all => (all, "untagged"),
                };
                let set = parse_vlans(&items.join(" ")).map_err(bad)?;
                let target = if tagging == "tagged" {
                    r.allowed.get_or_insert_with(BTreeSet::new)
                } else {
                    &mut untagged
                };
                if *op == "add" {
                    target.extend(set);
                } else {
                    target.retain(|v| !set.contains(v));
                }
            }
            ["shutdown"] => r.admin_up = Some(false),
            ["no", "shutdown"] => r.admin_up = Some(true),
            ["description", ..] => {
                let text = line.trim_start()["description".len()..].trim();
                r.description = Some(text.trim_matches('"').to_string());
            }
            ["mtu", m, ..] => {
                r.mtu = Some(m.parse().map_err(|_| format!("{line:?}: bad MTU"))?);
            }
            ["channel-group", n, ..] | ["lag", n] => r.lag = Some((*n).to_string()),
            _ => {}
        }
    }
    if r.native.is_none() && r.mode.as_deref() == Some("general") {
        // General mode without a pvid line: the untagged VLAN is the one listed untagged.
        r.native = untagged.iter().next().copied();
    }
    if !explicit_mode {
        r.mode = if trunk_seen {
            Some("trunk".into())
        } else if access_seen {
            Some("access".into())
        } else {
            None
        };
        // IOS without a mode line is not an access port by configuration: only AOS-CX
        // style lines (no `switchport` keyword at all) infer one.
        if lines.iter().any(|l| l.starts_with("switchport ")) {
            r.mode = None;
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Raw {
        parse("Gi1/0/5", &[text.to_string()]).unwrap()
    }

    /// Real IOS output (Catalyst 9300, 17.x), trunk with continuation lines.
    #[test]
    fn ios_trunk_with_continuation_lines() {
        let r = one("Building configuration...\n\nCurrent configuration : 312 bytes\n!\ninterface GigabitEthernet1/0/5\n description node 7 rack 4\n switchport trunk native vlan 110\n switchport trunk allowed vlan 110,120,130-135\n switchport trunk allowed vlan add 300-302\n switchport mode trunk\n mtu 9000\n channel-group 7 mode active\n spanning-tree portfast trunk\nend\n");
        assert_eq!(r.mode.as_deref(), Some("trunk"));
        assert_eq!(r.native, Some(110));
        let a = r.allowed.unwrap();
        assert!(a.contains(&135) && a.contains(&301) && !a.contains(&136));
        assert_eq!(r.description.as_deref(), Some("node 7 rack 4"));
        assert_eq!(r.mtu, Some(9000));
        assert_eq!(r.lag.as_deref(), Some("7"));
        assert_eq!(r.admin_up, None);
    }

    /// Real NX-OS output: two-space indentation, explicit `no shutdown`.
    #[test]
    fn nxos_access_port() {
        let r = parse(
            "Ethernet1/5",
            &["\n!Command: show running-config interface Ethernet1/5\n!Running configuration last done at: Mon Jan  1 00:00:00 2024\n\nversion 10.2(5) Bios:version 05.47\n\ninterface Ethernet1/5\n  switchport\n  switchport access vlan 120\n  no shutdown\n".to_string()],
        )
        .unwrap();
        assert_eq!(r.mode, None, "no mode line: NX-OS default, not inferred");
        assert_eq!(r.access, Some(120));
        assert_eq!(r.admin_up, Some(true));
    }

    /// Real PowerConnect / N-series general mode.
    #[test]
    fn powerconnect_general_mode() {
        let r = parse(
            "Gi1/0/5",
            &["interface Gi1/0/5\nswitchport mode general\nswitchport general pvid 110\nswitchport general allowed vlan add 110 untagged\nswitchport general allowed vlan add 120,130 tagged\nexit\n".replace("\nswitch", "\n switch")],
        )
        .unwrap();
        assert_eq!(r.mode.as_deref(), Some("general"));
        assert_eq!(r.native, Some(110));
        assert_eq!(r.allowed, Some([120, 130].into_iter().collect()));
    }

    /// Real AOS-CX: four-space indentation, no mode line.
    #[test]
    fn aoscx_infers_the_mode() {
        let r = parse(
            "1/1/5",
            &["interface 1/1/5\n    no shutdown\n    description node 7\n    no routing\n    vlan trunk native 110\n    vlan trunk allowed 110,120,130\n    lag 7\n".to_string()],
        )
        .unwrap();
        assert_eq!(r.mode.as_deref(), Some("trunk"));
        assert_eq!(r.native, Some(110));
        assert_eq!(r.lag.as_deref(), Some("7"));
        let a = parse(
            "1/1/6",
            &["interface 1/1/6\n    vlan access 120\n".to_string()],
        )
        .unwrap();
        assert_eq!(a.mode.as_deref(), Some("access"));
    }

    #[test]
    fn the_right_stanza_of_a_full_configuration() {
        let text = "interface Ethernet50\n switchport access vlan 9\n!\ninterface Ethernet5\n switchport access vlan 120\n switchport mode access\n shutdown\n!\nend\n";
        let r = parse("Ethernet5", &[text.to_string()]).unwrap();
        assert_eq!(r.access, Some(120));
        assert_eq!(r.admin_up, Some(false));
        assert!(parse("Ethernet7", &[text.to_string()]).is_err());
        assert!(parse("Ethernet5", &["% Invalid input".to_string()]).is_err());
    }
}
