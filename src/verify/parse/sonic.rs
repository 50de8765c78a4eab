//! SONiC's click `show` tables: `show vlan brief` (membership: each port's row says
//! `tagged` or `untagged`; a VLAN's further rows leave its id cell empty),
//! `show interfaces status IF` (`MTU`, `Vlan` — a LAG member shows its PortChannel there —
//! and `Admin` columns, found by their headings) and `show interfaces description IF`
//! (the text from the `Description` heading's column on).
//!
//! Membership becomes a mode as SONiC has none: tagged VLANs make a trunk (its untagged
//! VLAN the native one), an untagged VLAN alone an access port. A table that is empty or
//! has no row for the port leaves its fields unread.

use std::collections::BTreeSet;

use super::Raw;

fn cells(line: &str) -> Vec<String> {
    line.trim()
        .trim_matches('|')
        .split('|')
        .map(|c| c.trim().to_string())
        .collect()
}

/// The byte ranges of the dash groups of a table's rule line; the last one reaches the end
/// of any row (a description may be longer than its column was when the rule was drawn).
fn extents(dashes: &str) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in dashes.char_indices() {
        match (c == '-', start) {
            (true, None) => start = Some(i),
            (false, Some(a)) => {
                out.push((a, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(a) = start {
        out.push((a, dashes.len()));
    }
    // Right-aligned cells may start left of their rule (a wide first column): each column
    // begins where the previous one ended.
    let mut prev = 0;
    for e in out.iter_mut() {
        e.0 = prev;
        prev = e.1;
    }
    if let Some(last) = out.last_mut() {
        last.1 = usize::MAX;
    }
    out
}

pub(crate) fn parse(port: &str, outputs: &[String]) -> Result<Raw, String> {
    let mut r = Raw::default();
    let mut untagged: Option<u16> = None;
    let mut tagged: BTreeSet<u16> = BTreeSet::new();
    let (mut vlan_table, mut status_row, mut description) = (false, false, false);
    for out in outputs {
        let lines: Vec<&str> = out.lines().collect();
        // show vlan brief
        if let Some(h) = lines
            .iter()
            .position(|l| l.contains("VLAN ID") && l.contains('|'))
        {
            vlan_table = true;
            let head = cells(lines[h]);
            let col = |name: &str| head.iter().position(|c| c == name);
            let (Some(id_col), Some(port_col), Some(tag_col)) =
                (col("VLAN ID"), col("Ports"), col("Port Tagging"))
            else {
                return Err("show vlan brief: no VLAN ID / Ports / Port Tagging columns".into());
            };
            let mut current: Option<u16> = None;
            for l in &lines[h + 1..] {
                if !l.trim_start().starts_with('|') {
                    continue;
                }
                let c = cells(l);
                if let Some(id) = c.get(id_col).filter(|s| !s.is_empty()) {
                    current = Some(
                        id.parse()
                            .map_err(|_| format!("show vlan brief: VLAN id {id:?}"))?,
                    );
                }
                if c.get(port_col).map(String::as_str) != Some(port) {
                    continue;
                }
                let Some(vlan) = current else { continue };
                match c.get(tag_col).map(String::as_str) {
                    Some("untagged") => untagged = Some(vlan),
                    Some("tagged") => {
                        tagged.insert(vlan);
                    }
                    other => return Err(format!("show vlan brief: tagging {other:?} of {port}")),
                }
            }
            continue;
        }
        // show interfaces status / description: columns under a line of dashes
        if let Some(h) = lines
            .iter()
            .position(|l| l.split_whitespace().next() == Some("Interface"))
        {
            let Some(dashes) = lines.get(h + 1).filter(|l| l.trim_start().starts_with('-')) else {
                continue;
            };
            let extents = extents(dashes);
            let slice = |line: &str| -> Vec<String> {
                extents
                    .iter()
                    .map(|&(a, b)| {
                        line.get(a..b.min(line.len()))
                            .unwrap_or_default()
                            .trim()
                            .to_string()
                    })
                    .collect()
            };
            let head = slice(lines[h]);
            let col = |name: &str| head.iter().position(|c| c == name);
            // A row of one-word cells is split on blanks (a value wider than its column
            // shifts the others); otherwise cells are cut at the rule's columns.
            let cut = |l: &str| -> Vec<String> {
                let w: Vec<&str> = l.split_whitespace().collect();
                if w.len() == head.len() {
                    w.into_iter().map(str::to_string).collect()
                } else {
                    slice(l)
                }
            };
            let Some(row) = lines[h + 2..]
                .iter()
                .map(|l| cut(l))
                .find(|c| c.first().map(String::as_str) == Some(port))
            else {
                continue;
            };
            if let Some(d) = col("Description") {
                description = true;
                r.description = row.get(d).cloned();
                continue;
            }
            status_row = true;
            let get = |name: &str| col(name).and_then(|i| row.get(i)).map(String::as_str);
            r.admin_up = get("Admin").map(|a| a == "up");
            r.mtu = get("MTU").and_then(|m| m.parse().ok());
            r.lag = get("Vlan")
                .filter(|v| v.starts_with("PortChannel"))
                .map(str::to_string);
        }
    }
    if !vlan_table {
        return Err("no `show vlan brief` table in the output".into());
    }
    if !tagged.is_empty() {
        r.mode = Some("trunk".into());
        r.native = untagged;
        r.allowed = Some(tagged);
    } else if let Some(u) = untagged {
        r.mode = Some("access".into());
        r.access = Some(u);
    }
    if !status_row {
        r.unread.extend(["admin_up", "mtu", "lag"]);
    }
    if !description {
        r.unread.insert("description");
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real SONiC 202311 tables.
    #[test]
    fn membership_status_and_description() {
        let vlans = "+-----------+-----------------+-------------+----------------+-------------+-----------------------+\n|   VLAN ID | IP Address      | Ports       | Port Tagging   | Proxy ARP   | DHCP Helper Address   |\n+===========+=================+=============+================+=============+=======================+\n|       110 |                 | Ethernet20  | untagged       | disabled    |                       |\n|           |                 | Ethernet24  | untagged       |             |                       |\n+-----------+-----------------+-------------+----------------+-------------+-----------------------+\n|       120 |                 | Ethernet20  | tagged         | disabled    |                       |\n+-----------+-----------------+-------------+----------------+-------------+-----------------------+\n";
        let status = "  Interface            Lanes    Speed    MTU    FEC    Alias             Vlan    Oper    Admin             Type    Asym PFC\n-----------  ---------------  -------  -----  -----  -------  ---------------  ------  -------  ---------------  ----------\n Ethernet20      77,78,79,80     100G   9000     rs    Eth21  PortChannel0007      up       up  QSFP28 or later         N/A\n";
        let desc = "  Interface    Oper    Admin    Alias    Description\n-----------  ------  -------  -------  -------------\n Ethernet20      up       up    Eth21  node 7 rack 4 longer than its rule\n";
        let r = parse(
            "Ethernet20",
            &[vlans.to_string(), status.to_string(), desc.to_string()],
        )
        .unwrap();
        assert_eq!(r.mode.as_deref(), Some("trunk"));
        assert_eq!(
            (r.native, r.allowed),
            (Some(110), Some([120].into_iter().collect()))
        );
        assert_eq!((r.admin_up, r.mtu), (Some(true), Some(9000)));
        assert_eq!(r.lag.as_deref(), Some("PortChannel0007"));
        assert_eq!(
            r.description.as_deref(),
            Some("node 7 rack 4 longer than its rule")
        );
        let r = parse("Ethernet24", &[vlans.to_string(), String::new()]).unwrap();
        assert_eq!((r.mode.as_deref(), r.access), (Some("access"), Some(110)));
        assert!(r.unread.contains("description") && r.unread.contains("admin_up"));
    }
}
