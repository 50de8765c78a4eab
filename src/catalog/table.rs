//! The supported-platforms table (Markdown), generated from the catalog so the documentation
//! cannot drift (`mercury check --catalog --table`; `docs/platforms.md` embeds it).

use std::collections::BTreeMap;

use super::*;

/// The supported-platforms table's columns: a heading and the actions it needs.
const TABLE_COLUMNS: &[(&str, &[&str])] = &[
    ("access", &["access_set", "access_remove"]),
    (
        "trunk + native",
        &["trunk_mode", "native_set", "allowed_set"],
    ),
    ("tagged add/remove", &["allowed_add", "allowed_remove"]),
    (
        "hybrid",
        &["hybrid_mode", "hybrid_native_set", "hybrid_allowed_set"],
    ),
    ("reset", &["port_reset"]),
    ("networks", &["network_add", "network_delete"]),
    ("enable/disable", &["enable", "disable"]),
    (
        "description set/clear",
        &["description", "description_clear"],
    ),
    ("MTU", &["mtu"]),
    (
        "LAG",
        &[
            "lag_create",
            "lag_delete",
            "lag_member_add",
            "lag_member_remove",
        ],
    ),
    ("OVS plug", &["plug", "unplug"]),
    // Not an action: whether ports can be read back (`--verify`, `verify_port`).
    ("verify", &[]),
    // Not an action: whether the VLAN table is read, so that a VLAN a port needs is created
    // on demand (`manage_vlans`) or the request refused.
    ("VLAN exists check", &[]),
];

impl Catalog {
    /// The supported-platforms table (Markdown): operations × platforms, then each
    /// platform's declared limits. Generated from the catalog so the documentation cannot
    /// drift (`mercury check --catalog --table`; `docs/platforms.md` embeds it and a test
    /// keeps it current).
    pub fn table(&self) -> Result<String, CatalogError> {
        let platforms = self.platforms()?;
        let mut out = String::from("| platform | NGS name (alias) | kind |");
        for (name, _) in TABLE_COLUMNS {
            out.push_str(&format!(" {name} |"));
        }
        out.push_str("\n|---|---|---|");
        out.push_str(&"---|".repeat(TABLE_COLUMNS.len()));
        out.push('\n');
        for p in &platforms {
            let kind = match p.kind {
                Kind::Cli => "cli",
                Kind::Exec => "exec",
                Kind::Ovsdb => "ovsdb",
            };
            out.push_str(&format!("| `{}` | `netmiko_{}` | {kind} |", p.name, p.name));
            for (heading, actions) in TABLE_COLUMNS {
                if *heading == "verify" {
                    out.push_str(match p.verify {
                        Verify::Show(_) => " yes |",
                        Verify::Unsupported(_) | Verify::Undeclared => " no |",
                    });
                    continue;
                }
                if *heading == "VLAN exists check" {
                    out.push_str(match &p.verify {
                        Verify::Show(s) if s.vlan_table.is_some() => " yes |",
                        _ => " no |",
                    });
                    continue;
                }
                let n = actions.iter().filter(|a| p.supports(a)).count();
                let by_vlan = *heading == "reset"
                    && p.supports("native_remove")
                    && p.supports("allowed_remove");
                out.push_str(if n == actions.len() {
                    " yes |"
                } else if n == 0 && by_vlan {
                    " named VLANs |"
                } else if n > 0 {
                    " partial |"
                } else {
                    " no |"
                });
            }
            out.push('\n');
        }
        out.push_str("\nLimits and notes, from the catalog:\n\n");
        for p in &platforms {
            let mut notes: Vec<String> = Vec::new();
            let names: Vec<String> = p
                .aliases
                .iter()
                .filter(|a| !a.starts_with("netmiko_"))
                .map(|a| format!("`{a}`"))
                .collect();
            if !names.is_empty() {
                notes.push(format!("also named {}", names.join(", ")));
            }
            notes.extend(p.notes.iter().cloned());
            if !p.commit.is_empty() {
                notes.push(format!(
                    "changes are applied with `{}` on every request, saved or not",
                    p.commit.join("; ")
                ));
            }
            if p.allowed_set_adds {
                notes.push(
                    "a declared tagged list is added to the port's tagged VLANs (no replace form)"
                        .into(),
                );
            }
            if !p.native_in_allowed {
                notes.push("the native VLAN is untagged only, never also tagged".into());
            }
            if p.native_is_access {
                notes.push("access and native VLAN are one setting: adding a tagged VLAN leaves it as it is".into());
            }
            let mut reasons: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
            for (action, why) in &p.unsupported {
                if matches!(action.as_str(), "plug" | "unplug") {
                    continue;
                }
                reasons
                    .entry(why.as_str())
                    .or_default()
                    .push(action.as_str());
            }
            for (why, actions) in reasons {
                notes.push(format!("{}: {why}", actions.join(", ")));
            }
            match &p.verify {
                Verify::Unsupported(why) => notes.push(format!("verify: {why}")),
                Verify::Show(s) if !s.unread.is_empty() => notes.push(format!(
                    "verify does not read {}",
                    s.unread.iter().cloned().collect::<Vec<_>>().join(", ")
                )),
                Verify::Show(_) | Verify::Undeclared => {}
            }
            if !notes.is_empty() {
                out.push_str(&format!("- `{}`: {}.\n", p.name, notes.join("; ")));
            }
        }
        Ok(out)
    }
}
