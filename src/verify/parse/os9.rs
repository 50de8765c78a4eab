//! Dell OS9 (FTOS): membership lives in the VLANs, not in the port, so it is read from
//! `show vlan` — one row per VLAN (`*` marks the default VLAN), then a `Q` code and the
//! VLAN's ports as an abbreviated type and a list (`U Te 0/40-41,44`), further rows of
//! the same VLAN leaving the `NUM` cell empty — and the port's own settings
//! (`shutdown`, `description`, `mtu`) from its `show running-config interface` stanza,
//! read by the IOS-family parser (`interface TenGigabitEthernet 0/5`).
//!
//! Untagged codes (`U`, and the dot1x/OpenFlow/internal/VLT untagged `x o i v`) give the
//! port's untagged VLAN; tagged codes (`T X O G H I V M`) its tagged VLANs. OS9 has no
//! port modes: tagged VLANs make a trunk (the untagged VLAN its native one), an untagged
//! VLAN alone an access port. Names in the table are canonicalised with the platform's
//! `[port_names]` (`Te 0/30` is `TenGigabitEthernet 0/30`).

use std::collections::BTreeSet;

use super::{ios, Raw};
use crate::catalog::Platform;

/// The port numbers of one list (`0/0-9,45-47`: `0/0` … `0/9`, `0/45` … `0/47`); a bare
/// item reuses the slot of the item before it.
fn expand(list: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut prefix = String::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (pre, last) = match item.rfind('/') {
            Some(i) => {
                prefix = item[..=i].to_string();
                (prefix.clone(), &item[i + 1..])
            }
            None => (prefix.clone(), item),
        };
        let num = |s: &str| {
            s.parse::<u32>()
                .map_err(|_| format!("show vlan: {item:?} is not a port list"))
        };
        match last.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if b < a || b - a > 4096 {
                    return Err(format!("show vlan: range {item:?}"));
                }
                out.extend((a..=b).map(|n| format!("{pre}{n}")));
            }
            None => out.push(format!("{pre}{}", num(last)?)),
        }
    }
    Ok(out)
}

/// Reads `show vlan` (membership) and, when given, the port's running-config stanza.
pub(crate) fn parse(platform: &Platform, port: &str, outputs: &[String]) -> Result<Raw, String> {
    let mut untagged: Option<u16> = None;
    let mut tagged: BTreeSet<u16> = BTreeSet::new();
    let mut table = false;
    let mut settings = None;
    for out in outputs {
        let lines: Vec<&str> = out.lines().map(|l| l.trim_end_matches('\r')).collect();
        let Some(h) = lines
            .iter()
            .position(|l| l.contains("NUM") && l.contains("Status") && l.contains("Q Ports"))
        else {
            if out.contains("interface ") {
                settings = Some(ios::parse(port, std::slice::from_ref(out))?);
            }
            continue;
        };
        table = true;
        let q_col = lines[h].find("Q Ports").unwrap_or(0);
        let mut current: Option<u16> = None;
        for l in &lines[h + 1..] {
            if l.trim().is_empty() {
                continue;
            }
            let head = l.get(..q_col.min(l.len())).unwrap_or_default();
            let mut words = head.split_whitespace();
            let first = words.next().map(|w| w.trim_start_matches('*'));
            let first = match first {
                Some("") => words.next(),
                other => other,
            };
            if let Some(id) = first {
                current = Some(
                    id.parse()
                        .map_err(|_| format!("show vlan: VLAN id {id:?} in {l:?}"))?,
                );
            }
            let Some(vlan) = current else {
                return Err(format!("show vlan: a port row before any VLAN: {l:?}"));
            };
            let q = l.get(q_col..).unwrap_or_default().trim();
            if q.is_empty() {
                continue;
            }
            let mut w = q.split_whitespace();
            let (Some(code), Some(kind), Some(list)) = (w.next(), w.next(), w.next()) else {
                return Err(format!("show vlan: {q:?} is not `Q TYPE PORTS`"));
            };
            let untag = match code {
                "U" | "x" | "o" | "i" | "v" => true,
                "T" | "X" | "O" | "G" | "H" | "I" | "V" | "M" => false,
                other => return Err(format!("show vlan: unknown membership code {other:?}")),
            };
            for n in expand(list)? {
                let shown = format!("{kind} {n}");
                let same = platform
                    .canonical_port(&shown)
                    .map(|c| c == port)
                    .unwrap_or(false);
                if !same {
                    continue;
                }
                if untag {
                    untagged = Some(vlan);
                } else {
                    tagged.insert(vlan);
                }
            }
        }
    }
    if !table {
        return Err("no `show vlan` table (NUM / Status / Q Ports) in the output".into());
    }
    let mut r = settings.unwrap_or_else(|| {
        let mut r = Raw::default();
        r.unread
            .extend(["admin_up", "description", "mtu", "lag"].iter().copied());
        r
    });
    // Only the VLAN table says what the port carries.
    r.mode = None;
    r.access = None;
    r.native = None;
    r.allowed = None;
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
    use super::expand;

    #[test]
    fn lists_expand_with_the_slot_carried_over() {
        assert_eq!(expand("0/40-41,44").unwrap(), ["0/40", "0/41", "0/44"]);
        assert_eq!(expand("0/48,56,60").unwrap(), ["0/48", "0/56", "0/60"]);
        assert_eq!(expand("1/1/5-6").unwrap(), ["1/1/5", "1/1/6"]);
        assert!(expand("0/9-1").is_err());
        assert!(expand("0/x").is_err());
    }
}
