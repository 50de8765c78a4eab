//! Brocade / Ruckus FastIron (ICX): membership lives in the VLANs. `show running-config
//! vlan` prints one stanza per VLAN — `vlan 10 [name NAME] by port`, then
//! ` tagged ethe 1/1/24 ethe 2/1/1 ` / ` untagged ethe 1/1/3 to 1/1/5 lag 11 to 12 ` (port
//! lists with `to` ranges, bare unit-less numbers on non-stacking models, `lag` items) and
//! other lines (`no spanning-tree`, `metro-ring` blocks) that are not membership. The
//! port's own settings come from its `interface ethernet X` stanza: `port-name TEXT` (the
//! description), `disable` / `enable`, `dual-mode N` (a tagged port's untagged VLAN).
//!
//! Tagged VLANs make a trunk (the `dual-mode` VLAN, or an untagged membership, its native
//! VLAN), an untagged VLAN alone an access port. A port FastIron lists nowhere is in the
//! default VLAN, which the running-config does not print: its mode stays unset.

use std::collections::BTreeSet;

use super::Raw;
use crate::catalog::Platform;

/// The ports of one membership line after its keyword (`ethe 1/1/3 to 1/1/5 ethe 7`), as
/// `ethernet N` names; `lag` items are skipped (a LAG's own membership is not a port's).
fn members(words: &[&str]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut lag = false;
    let bad = |w: &str| format!("show running-config vlan: {w:?} in a port list");
    while i < words.len() {
        let w = words[i];
        match w {
            "ethe" | "ethernet" | "eth" | "e" => {
                lag = false;
                i += 1;
                continue;
            }
            "lag" => {
                lag = true;
                i += 1;
                continue;
            }
            _ => {}
        }
        let (from, to) = if words.get(i + 1) == Some(&"to") {
            let to = words.get(i + 2).ok_or_else(|| bad(w))?;
            i += 3;
            (w, *to)
        } else {
            i += 1;
            (w, w)
        };
        if lag {
            continue;
        }
        let split = |s: &str| -> Result<(String, u32), String> {
            let (pre, last) = match s.rfind('/') {
                Some(at) => (&s[..=at], &s[at + 1..]),
                None => ("", s),
            };
            Ok((pre.to_string(), last.parse().map_err(|_| bad(s))?))
        };
        let ((pa, a), (pb, b)) = (split(from)?, split(to)?);
        if pa != pb || b < a || b - a > 4096 {
            return Err(bad(&format!("{from} to {to}")));
        }
        out.extend((a..=b).map(|n| format!("ethernet {pa}{n}")));
    }
    Ok(out)
}

/// Reads `show running-config vlan` and the port's `interface ethernet` stanza.
pub(crate) fn parse(platform: &Platform, port: &str, outputs: &[String]) -> Result<Raw, String> {
    let mut r = Raw::default();
    let mut untagged: Option<u16> = None;
    let mut tagged: BTreeSet<u16> = BTreeSet::new();
    let mut dual: Option<u16> = None;
    let (mut vlans_seen, mut stanza_seen) = (false, false);
    let same = |shown: &str| platform.canonical_port(shown).is_ok_and(|c| c == port);
    for out in outputs {
        let mut vlan: Option<u16> = None;
        let mut in_port = false;
        for line in out.lines().map(|l| l.trim_end_matches('\r')) {
            let indented = line.starts_with(' ');
            let words: Vec<&str> = line.split_whitespace().collect();
            if !indented {
                vlan = None;
                in_port = false;
                match words.as_slice() {
                    ["vlan", id, rest @ ..] if rest.last() == Some(&"port") || rest.is_empty() => {
                        vlans_seen = true;
                        vlan = Some(id.parse().map_err(|_| format!("VLAN id {id:?}"))?);
                    }
                    ["interface", kind, number] => {
                        in_port = same(&format!("{kind} {number}"));
                        stanza_seen |= in_port;
                    }
                    _ => {}
                }
                continue;
            }
            if let Some(v) = vlan {
                match words.split_first() {
                    Some((&"tagged", list)) if members(list)?.iter().any(|n| same(n)) => {
                        tagged.insert(v);
                    }
                    Some((&"untagged", list)) if members(list)?.iter().any(|n| same(n)) => {
                        untagged = Some(v);
                    }
                    _ => {}
                }
            } else if in_port {
                match words.as_slice() {
                    ["port-name", ..] => {
                        let text = line.trim_start().trim_start_matches("port-name").trim();
                        r.description = Some(text.to_string());
                    }
                    ["disable"] => r.admin_up = Some(false),
                    ["enable"] => r.admin_up = Some(true),
                    ["dual-mode", v] => {
                        dual = Some(v.parse().map_err(|_| format!("dual-mode {v:?}"))?);
                    }
                    ["dual-mode"] => dual = Some(1),
                    _ => {}
                }
            }
        }
    }
    if !vlans_seen {
        return Err("no `vlan N ... by port` stanza in the output".into());
    }
    if !stanza_seen {
        // FastIron prints nothing for a port with no settings: the defaults apply.
        r.description = Some(String::new());
    }
    r.unread.insert("mtu");
    r.unread.insert("lag");
    if let Some(d) = dual.filter(|d| tagged.contains(d)) {
        tagged.remove(&d);
        untagged = Some(d);
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
    #![allow(clippy::unwrap_used)]
    use super::members;

    #[test]
    fn port_lists_with_ranges_lags_and_bare_numbers() {
        let w: Vec<&str> = "ethe 1/1/31 ethe 1/1/9 to 1/1/11 lag 13"
            .split_whitespace()
            .collect();
        assert_eq!(
            members(&w).unwrap(),
            [
                "ethernet 1/1/31",
                "ethernet 1/1/9",
                "ethernet 1/1/10",
                "ethernet 1/1/11"
            ]
        );
        let w: Vec<&str> = "ethe 1 to 2".split_whitespace().collect();
        assert_eq!(members(&w).unwrap(), ["ethernet 1", "ethernet 2"]);
        let w: Vec<&str> = "ethe 1/1/5 to 2/1/1".split_whitespace().collect();
        assert!(members(&w).is_err());
    }
}
