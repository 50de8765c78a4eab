//! NVUE JSON: `nv show interface IF -o json`.
//!
//! - `bridge.domain.<domain>`: `access` N (an access port), `untagged` N (a trunk's native
//!   VLAN), `vlan` (an object whose keys are VLAN lists, `"all"`, or a string); a port in a
//!   bridge domain without `access` is a trunk;
//! - `link.state` (`{"up": {}}` / `"down"`), or `link.admin-status`; `link.mtu`;
//! - `description`; `parent` (the bond the port is a member of).

use std::collections::BTreeSet;

use serde_json::Value;

use super::{parse_vlans, Raw};

fn vlan(v: &Value) -> Option<u16> {
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        .and_then(|n| u16::try_from(n).ok())
}

/// The key of a one-key object (`{"up": {}}`), or the string itself.
fn word(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Object(m) => m.keys().next().cloned(),
        _ => None,
    }
}

pub(crate) fn parse(port: &str, outputs: &[String]) -> Result<Raw, String> {
    let text = outputs.first().map(String::as_str).unwrap_or_default();
    let v: Value =
        serde_json::from_str(text.trim()).map_err(|e| format!("not NVUE JSON for {port}: {e}"))?;
    if !v.is_object() {
        return Err(format!("not an NVUE interface object for {port}"));
    }
    let mut r = Raw::default();
    let domain = v["bridge"]["domain"]
        .as_object()
        .and_then(|m| m.values().next());
    if let Some(d) = domain {
        if let Some(a) = d.get("access").and_then(vlan) {
            r.mode = Some("access".into());
            r.access = Some(a);
        } else {
            r.mode = Some("trunk".into());
            r.native = d.get("untagged").and_then(vlan);
            let mut set = BTreeSet::new();
            match d.get("vlan") {
                Some(Value::Object(m)) => {
                    for k in m.keys() {
                        set.extend(parse_vlans(k).map_err(|e| format!("vlan {k:?}: {e}"))?);
                    }
                    r.allowed = Some(set);
                }
                Some(Value::String(s)) => {
                    r.allowed = Some(parse_vlans(s).map_err(|e| format!("vlan {s:?}: {e}"))?)
                }
                _ => {}
            }
        }
    }
    let link = &v["link"];
    r.admin_up = link
        .get("state")
        .and_then(word)
        .or_else(|| link.get("admin-status").and_then(word))
        .map(|s| s == "up");
    r.mtu = link
        .get("mtu")
        .and_then(Value::as_u64)
        .and_then(|m| u32::try_from(m).ok());
    r.description = v
        .get("description")
        .and_then(Value::as_str)
        .map(str::to_string);
    r.lag = v.get("parent").and_then(word);
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trunk_and_access() {
        let t = r#"{"bridge":{"domain":{"br_default":{"untagged":110,"vlan":{"110":{},"120-121":{}}}}},
                    "description":"node 7","link":{"mtu":9000,"state":{"up":{}}},"parent":{"bond7":{}},"type":"swp"}"#;
        let r = parse("swp5", &[t.to_string()]).unwrap();
        assert_eq!(r.mode.as_deref(), Some("trunk"));
        assert_eq!(r.native, Some(110));
        assert_eq!(r.allowed, Some([110, 120, 121].into_iter().collect()));
        assert_eq!((r.admin_up, r.mtu), (Some(true), Some(9000)));
        assert_eq!(r.lag.as_deref(), Some("bond7"));
        let a = r#"{"bridge":{"domain":{"br_default":{"access":120}}},"link":{"state":"down"}}"#;
        let r = parse("swp5", &[a.to_string()]).unwrap();
        assert_eq!(
            (r.mode.as_deref(), r.access, r.admin_up),
            (Some("access"), Some(120), Some(false))
        );
        assert!(parse(
            "swp5",
            &["Error: The requested item does not exist".to_string()]
        )
        .is_err());
    }
}
