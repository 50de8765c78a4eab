//! VRP / Comware `display current-configuration interface IF`: the `interface IF` block up
//! to the next `#`.
//!
//! - mode: `port link-type access|trunk|hybrid`;
//! - access VLAN: `port default vlan N` (VRP), `port access vlan N` (Comware);
//! - trunk: `port trunk pvid vlan N`, `port trunk allow-pass vlan LIST` (VRP) /
//!   `port trunk permit vlan LIST` (Comware), `undo port trunk allow-pass vlan LIST`; lists
//!   are space separated with `A to B` ranges, and long ones continue on further lines;
//! - hybrid: `port hybrid pvid vlan N`, `port hybrid tagged vlan LIST`,
//!   `port hybrid untagged vlan LIST`;
//! - `shutdown` / `undo shutdown`, `description`, `jumboframe enable N` / `mtu N`,
//!   `eth-trunk N` / `port link-aggregation group N`.

use std::collections::BTreeSet;

use super::{parse_vlans, same_port, Raw};

pub(crate) fn parse(port: &str, outputs: &[String]) -> Result<Raw, String> {
    let text = outputs.join("\n");
    let mut body: Option<Vec<&str>> = None;
    let mut found = false;
    for line in text.lines() {
        let t = line.trim();
        if let Some(name) = t
            .strip_prefix("interface ")
            .filter(|_| !line.starts_with(' '))
        {
            if found {
                break;
            }
            if same_port(name.trim(), port) {
                found = true;
                body = Some(Vec::new());
            }
            continue;
        }
        if found {
            if t == "#" || t == "return" {
                break;
            }
            if let Some(b) = body.as_mut() {
                b.push(t);
            }
        }
    }
    let body = body.ok_or_else(|| format!("no `interface {port}` block in the output"))?;
    let mut r = Raw::default();
    let mut untagged: BTreeSet<u16> = BTreeSet::new();
    for line in body {
        let w: Vec<&str> = line.split_whitespace().collect();
        let bad = |e: String| format!("{line:?}: {e}");
        let one = |v: &str| -> Result<u16, String> {
            v.parse()
                .map_err(|_| format!("{line:?}: {v:?} is not a VLAN id"))
        };
        match w.as_slice() {
            ["port", "link-type", m] => r.mode = Some((*m).to_string()),
            ["port", "default" | "access", "vlan", v] => r.access = Some(one(v)?),
            ["port", "trunk" | "hybrid", "pvid", "vlan", v] => r.native = Some(one(v)?),
            ["port", "trunk", "allow-pass" | "permit", "vlan", list @ ..]
            | ["port", "hybrid", "tagged", "vlan", list @ ..] => r
                .allowed
                .get_or_insert_with(BTreeSet::new)
                .extend(parse_vlans(&list.join(" ")).map_err(bad)?),
            ["undo", "port", "trunk", "allow-pass" | "permit", "vlan", list @ ..] => {
                let gone = parse_vlans(&list.join(" ")).map_err(bad)?;
                r.allowed
                    .get_or_insert_with(BTreeSet::new)
                    .retain(|v| !gone.contains(v));
            }
            ["port", "hybrid", "untagged", "vlan", list @ ..] => {
                untagged.extend(parse_vlans(&list.join(" ")).map_err(bad)?)
            }
            ["shutdown"] => r.admin_up = Some(false),
            ["undo", "shutdown"] => r.admin_up = Some(true),
            ["description", ..] => {
                r.description = Some(line["description".len()..].trim().to_string())
            }
            ["jumboframe", "enable", m, ..] | ["mtu", m] => {
                r.mtu = Some(m.parse().map_err(|_| format!("{line:?}: bad MTU"))?)
            }
            ["eth-trunk", n] | ["port", "link-aggregation", "group", n] => {
                r.lag = Some((*n).to_string())
            }
            _ => {}
        }
    }
    if r.mode.as_deref() == Some("hybrid") && r.native.is_none() {
        r.native = untagged.iter().next().copied();
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real VRP 5 (S5720, V200R011) output, a trunk list continued on a second line.
    #[test]
    fn vrp_trunk() {
        let text = "#\ninterface GigabitEthernet0/0/5\n description node 7\n port link-type trunk\n port trunk pvid vlan 110\n undo port trunk allow-pass vlan 1\n port trunk allow-pass vlan 110 120 130 to 132\n port trunk allow-pass vlan 200\n jumboframe enable 9000\n eth-trunk 7\n#\nreturn\n";
        let r = parse("GigabitEthernet0/0/5", &[text.to_string()]).unwrap();
        assert_eq!(r.mode.as_deref(), Some("trunk"));
        assert_eq!(r.native, Some(110));
        assert_eq!(
            r.allowed,
            Some([110, 120, 130, 131, 132, 200].into_iter().collect())
        );
        assert_eq!((r.mtu, r.lag.as_deref()), (Some(9000), Some("7")));
    }

    /// Real Comware 7 and VRP hybrid ports.
    #[test]
    fn comware_access_and_vrp_hybrid() {
        let c = "interface GigabitEthernet1/0/5\n port access vlan 120\n shutdown\n#\n";
        let r = parse("GigabitEthernet1/0/5", &[c.to_string()]).unwrap();
        assert_eq!((r.access, r.admin_up), (Some(120), Some(false)));
        let h = "interface GE1/0/5\n port link-type hybrid\n port hybrid pvid vlan 110\n port hybrid tagged vlan 120 130\n port hybrid untagged vlan 110\n#\n";
        let r = parse("GE1/0/5", &[h.to_string()]).unwrap();
        assert_eq!(r.mode.as_deref(), Some("hybrid"));
        assert_eq!(r.native, Some(110));
        assert_eq!(r.allowed, Some([120, 130].into_iter().collect()));
    }
}
