//! Pluribus Netvisor ONE: `port-vlan-show ports N format switch,port,vlans,untagged-vlan
//! parsable-delim :` — one row per port, the requested fields in the requested order,
//! joined by the delimiter, no heading. `vlans` is the port's VLAN list (ranges, `none`),
//! `untagged-vlan` its untagged VLAN (`none`).
//!
//! **Unconfirmed on hardware:** no Netvisor capture was found. The command and its
//! `format … parsable-delim ":"` form are what a third-party Netvisor driver sends
//! (docs/evidence.md); the field `untagged-vlan` is named after `port-vlan-add …
//! untagged-vlan N`. Because the fields are read by the position they were asked in, a
//! row with another number of fields is refused (exit 76), never guessed at.

use super::{parse_vlans, Raw};

/// The fields the catalog's show line asks for, in its order.
const FIELDS: [&str; 4] = ["switch", "port", "vlans", "untagged-vlan"];

pub(crate) fn parse(port: &str, outputs: &[String]) -> Result<Raw, String> {
    let mut r = Raw::default();
    for f in ["admin_up", "description", "mtu", "lag"] {
        r.unread.insert(f);
    }
    let rows: Vec<Vec<&str>> = outputs
        .iter()
        .flat_map(|o| o.lines())
        .map(|l| l.trim_end_matches('\r').trim())
        .filter(|l| l.contains(':'))
        .map(|l| l.split(':').map(str::trim).collect())
        .collect();
    let Some(row) = rows.iter().find(|c| c.get(1) == Some(&port)) else {
        return Err(format!("port-vlan-show: no row for port {port}"));
    };
    if row.len() != FIELDS.len() {
        return Err(format!(
            "port-vlan-show: {} fields for port {port}, asked for {} ({})",
            row.len(),
            FIELDS.len(),
            FIELDS.join(",")
        ));
    }
    let list = |s: &str| {
        if s == "none" || s.is_empty() {
            Ok(Default::default())
        } else {
            parse_vlans(s).map_err(|e| format!("port-vlan-show: vlans {s:?}: {e}"))
        }
    };
    let mut all = list(row[2])?;
    let untagged = match row[3] {
        "none" | "" => None,
        v => Some(
            v.parse::<u16>()
                .map_err(|_| format!("port-vlan-show: untagged-vlan {v:?}"))?,
        ),
    };
    if let Some(u) = untagged {
        all.remove(&u);
    }
    match (untagged, all.is_empty()) {
        (Some(u), true) => {
            r.mode = Some("access".into());
            r.access = Some(u);
        }
        (_, false) => {
            r.mode = Some("trunk".into());
            r.native = untagged;
            r.allowed = Some(all);
        }
        (None, true) => {}
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::parse;

    #[test]
    fn rows_are_read_by_the_fields_asked_for() {
        let out = vec!["leaf1:5:10,120-121:10\nleaf1:6:none:none\n".to_string()];
        let r = parse("5", &out).unwrap();
        assert_eq!(r.mode.as_deref(), Some("trunk"));
        assert_eq!(r.native, Some(10));
        assert_eq!(r.allowed.unwrap().len(), 2);
        let r = parse("6", &out).unwrap();
        assert_eq!(r.mode, None);
        assert!(parse("7", &out).is_err());
        assert!(parse("5", &["leaf1:5:10".to_string()]).is_err());
    }
}
