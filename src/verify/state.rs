//! The normalised port state: one shape for every platform's show output.

use std::collections::BTreeSet;

use serde::{Serialize, Serializer};

/// Every VLAN (a trunk that carries all of them).
pub(crate) const ALL: std::ops::RangeInclusive<u16> = 1..=4094;

/// A port's effective layer-2 state, the same shape on every platform.
///
/// *Effective*: settings a mode ignores are not part of it (an access VLAN left on a trunk
/// port, a tagged list on an access port), except where the platform uses the access VLAN
/// as a trunk's native VLAN (`native_is_access`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PortState {
    /// `access`, `trunk`, `hybrid`, another word the device uses, or `null` (no L2 mode
    /// configured).
    pub mode: Option<String>,
    /// Untagged VLAN of an access port.
    pub access_vlan: Option<u16>,
    /// Untagged VLAN of a trunk / hybrid port.
    pub native_vlan: Option<u16>,
    /// Tagged VLANs of a trunk / hybrid port, as a compact list (`110,120-125`).
    #[serde(serialize_with = "ser_vlans")]
    pub allowed_vlans: BTreeSet<u16>,
    /// Administratively enabled.
    pub admin_up: Option<bool>,
    /// Description (`""`: none).
    pub description: Option<String>,
    /// Configured MTU (`null`: the platform default).
    pub mtu: Option<u32>,
    /// The LAG interface the port is a member of.
    pub lag: Option<String>,
    /// Fields this platform's output does not carry (left out of comparisons).
    #[serde(skip_serializing_if = "BTreeSet::is_empty")]
    pub unread: BTreeSet<&'static str>,
    /// The device has no such interface (a LAG interface before `update_lag` creates it).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub absent: bool,
}

fn ser_vlans<S: Serializer>(set: &BTreeSet<u16>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&vlan_list(set))
}

/// `1,3-5,7`.
pub fn vlan_list(set: &BTreeSet<u16>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut run: Option<(u16, u16)> = None;
    for &v in set {
        run = match run {
            Some((lo, hi)) if hi + 1 == v => Some((lo, v)),
            Some((lo, hi)) => {
                parts.push(range_text(lo, hi));
                Some((v, v))
            }
            None => Some((v, v)),
        };
    }
    if let Some((lo, hi)) = run {
        parts.push(range_text(lo, hi));
    }
    parts.join(",")
}

fn range_text(lo: u16, hi: u16) -> String {
    if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}-{hi}")
    }
}

impl PortState {
    /// A port the device does not have.
    pub fn absent() -> PortState {
        PortState {
            absent: true,
            ..PortState::default()
        }
    }
}
