//! The Linux kernel's view of a VLAN-aware bridge, `bridge -c vlan show` (iproute2), which
//! Cumulus Linux answers whatever configured it (NCLU, ifupdown2): a `port vlan ids`
//! heading, then per port its name and VLANs — each VLAN or range (`-c`: `10-20`) followed
//! by its flags `PVID` and `Egress Untagged` — continued on indented lines, ports separated
//! by blank lines; the bridge device itself is listed too (`bridge 1`: its own PVID, the
//! default every port gets). The layout is read by words, so both the column layout and
//! the whitespace-collapsed one in NVIDIA's documentation parse.
//!
//! This is what the port *carries*, including VLANs it inherits from the bridge. The
//! untagged VLAN becomes the access VLAN of a port with no other VLAN, and the native VLAN
//! of a trunk — unless it is only the bridge's default PVID, which NCLU gives every trunk
//! that names no `pvid` (Mercury's trunks without a native VLAN). Administrative state,
//! alias, MTU and bond membership are not in this table (unread).

use std::collections::BTreeSet;

use super::Raw;

/// `(untagged, every VLAN)` of one port's word list (`1 PVID Egress Untagged 10 20-22`).
fn vlans_of(words: &[&str]) -> Result<(Option<u16>, BTreeSet<u16>), String> {
    let mut untagged = None;
    let mut tagged = BTreeSet::new();
    let mut last: Vec<u16> = Vec::new();
    for (i, w) in words.iter().enumerate() {
        match *w {
            "PVID" | "Egress" => continue,
            "Untagged" if words.get(i.wrapping_sub(1)) == Some(&"Egress") => {
                if let [v] = last.as_slice() {
                    untagged = Some(*v);
                }
                continue;
            }
            _ => {}
        }
        let num = |s: &str| -> Result<u16, String> {
            s.parse::<u16>()
                .ok()
                .filter(|v| (1..=4094).contains(v))
                .ok_or_else(|| format!("bridge vlan show: {w:?} is not a VLAN"))
        };
        last = match w.split_once('-') {
            Some((a, b)) => (num(a)?..=num(b)?).collect(),
            None => vec![num(w)?],
        };
        tagged.extend(last.iter().copied());
    }
    Ok((untagged, tagged))
}

pub(crate) fn parse(port: &str, outputs: &[String]) -> Result<Raw, String> {
    let mut r = Raw::default();
    for f in ["admin_up", "description", "mtu", "lag"] {
        r.unread.insert(f);
    }
    let mut table = false;
    // Every device's words, in order.
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    for out in outputs {
        for line in out.lines().map(|l| l.trim_end_matches('\r')) {
            let words: Vec<&str> = line.split_whitespace().collect();
            let Some(first) = words.first() else { continue };
            if first.starts_with("port") && line.contains("vlan") {
                table = true;
                continue;
            }
            if !table {
                continue;
            }
            let starts_row =
                !line.starts_with([' ', '\t']) && !first.starts_with(|c: char| c.is_ascii_digit());
            if starts_row {
                rows.push((
                    first.to_string(),
                    words[1..].iter().map(|w| w.to_string()).collect(),
                ));
            } else if let Some((_, w)) = rows.last_mut() {
                w.extend(words.iter().map(|w| w.to_string()));
            }
        }
    }
    if !table {
        return Err("no `bridge vlan show` table (port / vlan ids heading) in the output".into());
    }
    let words = |name: &str| -> Option<Vec<&str>> {
        rows.iter()
            .find(|(n, _)| n == name)
            .map(|(_, w)| w.iter().map(String::as_str).collect())
    };
    // The bridge's own PVID (the `bridge` row's untagged VLAN, else its first VLAN).
    let bridge_pvid = rows
        .iter()
        .find(|(n, _)| n == "bridge" || n.starts_with("br"))
        .map(|(_, w)| {
            let w: Vec<&str> = w.iter().map(String::as_str).collect();
            vlans_of(&w).map(|(u, t)| u.or_else(|| t.first().copied()))
        })
        .transpose()?
        .flatten()
        .unwrap_or(1);
    let Some(w) = words(port) else {
        // Not a bridge port: no L2 membership at all.
        return Ok(r);
    };
    let (untagged, mut all) = vlans_of(&w)?;
    match untagged {
        Some(u) if all.len() == 1 => {
            r.mode = Some("access".into());
            r.access = Some(u);
        }
        _ if all.is_empty() => {}
        _ => {
            // A trunk's VLAN list holds its native VLAN (Cumulus `bridge-vids` + `bridge-pvid`);
            // the bridge's default PVID alone is not one.
            r.mode = Some("trunk".into());
            r.native = untagged.filter(|u| *u != bridge_pvid);
            if let Some(u) = untagged.filter(|u| *u == bridge_pvid) {
                all.remove(&u);
            }
            r.allowed = Some(all);
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::vlans_of;

    #[test]
    fn flags_belong_to_the_vlan_before_them() {
        let (u, t) = vlans_of(&["1", "PVID", "Egress", "Untagged", "10", "20-22"]).unwrap();
        assert_eq!(u, Some(1));
        assert_eq!(t.into_iter().collect::<Vec<_>>(), [1, 10, 20, 21, 22]);
        assert!(vlans_of(&["x"]).is_err());
    }
}
