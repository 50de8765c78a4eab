//! The OVSDB read of the `ovs` platform (parser `ovsdb`): bridges, ports and interfaces as
//! one `ovs-vsctl --format=json` reply, and the port's VLAN columns in OVS's own terms.
//! The `ovsdb` driver plans its transactions from this; [`normalised`] gives the shape
//! every other platform's read has.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

/// The tag a port gets when it has no network left and no idle VLAN is configured. Neutron's
/// OVS agent uses the same value (`DEAD_VLAN_TAG`). Never "no tag": an OVS port with neither
/// `tag` nor `trunks` carries every VLAN on the bridge.
pub const DEAD_VLAN: u16 = 4095;

/// A port's VLAN columns (`Port` table: `tag`, `trunks`, `vlan_mode`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Vlans {
    /// Access VLAN, or the native VLAN of a `native-*` port.
    pub tag: Option<u16>,
    /// Tagged VLANs (empty means *all* on a trunk).
    pub trunks: BTreeSet<u16>,
    /// `access`, `trunk`, `native-untagged`, `native-tagged`, or unset (OVS infers it).
    pub vlan_mode: Option<String>,
}

impl Vlans {
    /// An access port in `vlan`.
    pub fn access(vlan: u16) -> Vlans {
        Vlans {
            tag: Some(vlan),
            trunks: BTreeSet::new(),
            vlan_mode: Some("access".into()),
        }
    }

    /// Whether OVS treats the port as an access port (explicitly, or a tag without a mode).
    pub fn is_access(&self) -> bool {
        match self.vlan_mode.as_deref() {
            Some("access") => true,
            None => self.tag.is_some(),
            Some(_) => false,
        }
    }

    /// The native VLAN of a `native-untagged` / `native-tagged` port.
    pub fn native(&self) -> Option<u16> {
        match self.vlan_mode.as_deref() {
            Some("native-untagged") | Some("native-tagged") => self.tag,
            _ => None,
        }
    }

    /// How a person would say it.
    pub fn describe(&self) -> String {
        let list = |s: &BTreeSet<u16>| s.iter().map(u16::to_string).collect::<Vec<_>>().join(",");
        if self.is_access() {
            return match self.tag {
                Some(DEAD_VLAN) => format!("isolated (dead VLAN {DEAD_VLAN})"),
                Some(t) => format!("access VLAN {t}"),
                None => "access, untagged".into(),
            };
        }
        match (self.native(), self.trunks.is_empty()) {
            (None, true) if self.tag.is_none() && self.vlan_mode.is_none() => {
                "flat (untagged, no VLAN configured)".into()
            }
            (None, true) => "trunk of every VLAN".into(),
            (None, false) => format!("trunk VLANs {}", list(&self.trunks)),
            (Some(n), _) => format!("trunk VLANs {} native {n}", list(&self.trunks)),
        }
    }
}

/// What OVSDB says about one port (the Port row and its same-named Interface row).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OvsdbPort {
    /// The bridge whose `ports` hold it (`None`: an orphan row).
    pub bridge: Option<String>,
    /// VLAN columns.
    #[serde(flatten)]
    pub vlans: Vlans,
    /// The Interface's `external_ids`.
    pub external_ids: BTreeMap<String, String>,
    /// The Interface's `mtu_request`.
    pub mtu_request: Option<u32>,
    /// The Interface's `error` (set by ovs-vswitchd when it cannot open the device).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The Port row's UUID (how a write addresses an existing row: exactly; a name that
    /// matches no row would make ovs-vsctl try it as a UUID prefix).
    #[serde(skip)]
    pub port_uuid: Option<String>,
    /// The same-named Interface row's UUID.
    #[serde(skip)]
    pub iface_uuid: Option<String>,
}

/// The parts of OVSDB this module reads: bridges, and ports by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Bridge names.
    pub bridges: BTreeSet<String>,
    /// Ports by name.
    pub ports: BTreeMap<String, OvsdbPort>,
}

/// The `--columns` the read asks for: every bridge, then the Port and Interface rows of
/// each port the request names (`find ... name=P`).
pub const BRIDGE_COLUMNS: &str = "name,ports";
pub const PORT_COLUMNS: &str = "_uuid,name,tag,trunks,vlan_mode,interfaces";
pub const IFACE_COLUMNS: &str = "_uuid,name,external_ids,mtu_request,error";

impl Snapshot {
    /// Parses the output of the read invocation: one `--format=json` table per command,
    /// the Bridge table first, then Port and Interface rows (told apart by their columns).
    pub fn parse(stdout: &str) -> Result<Snapshot, String> {
        let docs: Vec<Value> = serde_json::Deserializer::from_str(stdout)
            .into_iter::<Value>()
            .collect::<Result<_, _>>()
            .map_err(|e| format!("not ovs-vsctl JSON: {e}"))?;
        let Some((bridges, rest)) = docs.split_first() else {
            return Err("no JSON table in the reply".into());
        };
        let (mut port_rows, mut iface_rows) = (Vec::new(), Vec::new());
        for doc in rest {
            let r = rows(doc)?;
            let is_port = doc["headings"]
                .as_array()
                .is_some_and(|h| h.iter().any(|c| c == "vlan_mode"));
            if is_port {
                port_rows.extend(r);
            } else {
                iface_rows.extend(r);
            }
        }
        let mut snap = Snapshot::default();
        let mut bridge_of: BTreeMap<String, String> = BTreeMap::new();
        for row in rows(bridges)? {
            let name = string(&row, "name")?;
            for p in atoms(field(&row, "ports")?) {
                if let Some(u) = uuid(p) {
                    bridge_of.insert(u.to_string(), name.clone());
                }
            }
            snap.bridges.insert(name);
        }
        let mut iface_by_uuid: BTreeMap<String, BTreeMap<&str, &Value>> = BTreeMap::new();
        for row in iface_rows {
            let u = field(&row, "_uuid").ok().and_then(uuid).map(str::to_string);
            if let Some(u) = u {
                iface_by_uuid.insert(u, row);
            }
        }
        for row in port_rows {
            let name = string(&row, "name")?;
            let port_uuid = field(&row, "_uuid").ok().and_then(uuid).unwrap_or_default();
            let tag = atoms(field(&row, "tag")?)
                .first()
                .and_then(|v| v.as_u64())
                .and_then(|t| u16::try_from(t).ok());
            let trunks = atoms(field(&row, "trunks")?)
                .iter()
                .filter_map(|v| v.as_u64().and_then(|t| u16::try_from(t).ok()))
                .collect();
            let vlan_mode = atoms(field(&row, "vlan_mode")?)
                .first()
                .and_then(|v| v.as_str())
                .map(str::to_string);
            let mut state = OvsdbPort {
                port_uuid: (!port_uuid.is_empty()).then(|| port_uuid.to_string()),
                bridge: bridge_of.get(port_uuid).cloned(),
                vlans: Vlans {
                    tag,
                    trunks,
                    vlan_mode,
                },
                ..OvsdbPort::default()
            };
            // The representor's Interface row carries the same name as its Port row.
            let iface = atoms(field(&row, "interfaces")?)
                .iter()
                .filter_map(|v| uuid(v))
                .filter_map(|u| iface_by_uuid.get(u))
                .find(|i| string(i, "name").ok().as_deref() == Some(name.as_str()));
            if let Some(i) = iface {
                state.iface_uuid = field(i, "_uuid").ok().and_then(uuid).map(str::to_string);
                state.external_ids = map(field(i, "external_ids")?);
                state.mtu_request = atoms(field(i, "mtu_request")?)
                    .first()
                    .and_then(|v| v.as_u64())
                    .and_then(|m| u32::try_from(m).ok());
                state.error = atoms(field(i, "error")?)
                    .first()
                    .and_then(|v| v.as_str())
                    .filter(|s| !s.is_empty())
                    .map(str::to_string);
            }
            snap.ports.insert(name, state);
        }
        Ok(snap)
    }
}

type Row<'a> = BTreeMap<&'a str, &'a Value>;

/// A `--format=json` table as rows keyed by heading.
fn rows(doc: &Value) -> Result<Vec<Row<'_>>, String> {
    let headings: Vec<&str> = doc["headings"]
        .as_array()
        .ok_or("table without headings")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let data = doc["data"].as_array().ok_or("table without data")?;
    data.iter()
        .map(|r| {
            let cells = r.as_array().ok_or("row is not an array")?;
            Ok(headings.iter().copied().zip(cells.iter()).collect())
        })
        .collect()
}

fn field<'a>(row: &Row<'a>, name: &str) -> Result<&'a Value, String> {
    row.get(name)
        .copied()
        .ok_or_else(|| format!("column {name} missing"))
}

fn string(row: &Row<'_>, name: &str) -> Result<String, String> {
    field(row, name)?
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("column {name} is not a string"))
}

/// OVSDB's JSON for a set: `["set", [a, b]]`, or the bare atom when it has exactly one
/// element (an optional column holding a value).
fn atoms(v: &Value) -> Vec<&Value> {
    match v.as_array() {
        Some(a) if a.first().and_then(Value::as_str) == Some("set") => a
            .get(1)
            .and_then(Value::as_array)
            .map(|x| x.iter().collect())
            .unwrap_or_default(),
        _ => vec![v],
    }
}

fn uuid(v: &Value) -> Option<&str> {
    match v.as_array()?.as_slice() {
        [kind, id] if kind.as_str() == Some("uuid") => id.as_str(),
        _ => None,
    }
}

fn map(v: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Some([kind, pairs]) = v.as_array().map(Vec::as_slice) {
        if kind.as_str() == Some("map") {
            for p in pairs.as_array().into_iter().flatten() {
                if let Some([k, v]) = p.as_array().map(Vec::as_slice) {
                    if let (Some(k), Some(v)) = (k.as_str(), v.as_str()) {
                        out.insert(k.to_string(), v.to_string());
                    }
                }
            }
        }
    }
    out
}

/// An OVSDB port in the normalised shape of `verify` (admin state, description and LAG are
/// not OVS port properties: unread). An absent port has no mode.
pub fn normalised(state: Option<&OvsdbPort>) -> crate::verify::PortState {
    let mut out = crate::verify::PortState {
        unread: ["admin_up", "description", "lag"].into_iter().collect(),
        ..crate::verify::PortState::default()
    };
    let Some(s) = state else { return out };
    let v = &s.vlans;
    out.mtu = s.mtu_request;
    if v.is_access() {
        out.mode = Some("access".into());
        out.access_vlan = v.tag;
    } else if v.tag.is_some() || !v.trunks.is_empty() || v.vlan_mode.is_some() {
        out.mode = Some("trunk".into());
        out.native_vlan = v.native();
        out.allowed_vlans = if v.trunks.is_empty() {
            (1..=4094).collect()
        } else {
            v.trunks.clone()
        };
    }
    out
}
