//! The device state model: VLANs, ports and LAGs, in running / saved / pending
//! copies, plus session counters. This is the JSON contract tests assert on; key
//! names are fixed (see README). It knows nothing about any vendor's syntax.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

fn is_false(b: &bool) -> bool {
    !*b
}

/// A VLAN: only the name is modelled (plus an optional description some
/// vendors put on the VLAN interface instead of a name).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Vlan {
    /// VLAN name ("" when unnamed).
    #[serde(default)]
    pub name: String,
}

/// Open vSwitch specific columns of a port (only on the `ovs_linux` platform).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OvsPort {
    /// Bridge holding the port.
    pub bridge: String,
    /// `tag` column.
    #[serde(default)]
    pub tag: Option<u16>,
    /// `trunks` column.
    #[serde(default)]
    pub trunks: Vec<u16>,
    /// `vlan_mode` column (access, trunk, native-tagged, native-untagged).
    #[serde(default)]
    pub vlan_mode: Option<String>,
    /// Port `external_ids`.
    #[serde(default)]
    pub external_ids: BTreeMap<String, String>,
    /// Interface `external_ids` (iface-id, attached-mac, ...).
    #[serde(default)]
    pub iface_external_ids: BTreeMap<String, String>,
    /// Other `column=value` settings on Port/Interface, kept verbatim.
    #[serde(default)]
    pub other: BTreeMap<String, String>,
}

/// A physical (or OVS) port.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Port {
    /// Administratively enabled.
    pub admin_up: bool,
    /// "access" | "trunk" | "hybrid" | null (not configured / routed default).
    pub mode: Option<String>,
    /// Untagged VLAN of an access port.
    pub access_vlan: Option<u16>,
    /// Untagged (native) VLAN of a trunk/hybrid port.
    pub native_vlan: Option<u16>,
    /// Tagged VLANs of a trunk/hybrid port, sorted, ranges expanded.
    pub allowed_vlans: Vec<u16>,
    /// On platforms whose trunks carry every VLAN until told otherwise (IOS-like: no
    /// `allowed vlan` line), an empty `allowed_vlans` is that default — every VLAN — unless
    /// this is true: the list was set to `none` (printed `... allowed vlan none`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub allowed_none: bool,
    /// Description / alias.
    pub description: String,
    /// MTU, when configured.
    pub mtu: Option<u32>,
    /// Name of the LAG this port is a member of.
    pub lag: Option<String>,
    /// OVS columns (ovs_linux only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ovs: Option<OvsPort>,
}

impl Port {
    /// A port as shipped: no L2 config, admin state per vendor.
    pub fn new(admin_up: bool) -> Port {
        Port {
            admin_up,
            mode: None,
            access_vlan: None,
            native_vlan: None,
            allowed_vlans: Vec::new(),
            allowed_none: false,
            description: String::new(),
            mtu: None,
            lag: None,
            ovs: None,
        }
    }
}

/// A link aggregation (port-channel, bond, Eth-Trunk, ae).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lag {
    /// Member port names (canonical), sorted.
    pub members: Vec<String>,
    /// "lacp" | "static".
    pub mode: String,
    /// Administratively enabled.
    pub admin_up: bool,
    /// L2 mode of the LAG itself: "access" | "trunk" | "hybrid" | null.
    pub mode_l2: Option<String>,
    /// Untagged VLAN of an access LAG.
    pub access_vlan: Option<u16>,
    /// Native VLAN of a trunk LAG.
    pub native_vlan: Option<u16>,
    /// Tagged VLANs of a trunk LAG.
    pub allowed_vlans: Vec<u16>,
    /// As [`Port::allowed_none`].
    #[serde(default, skip_serializing_if = "is_false")]
    pub allowed_none: bool,
    /// Description.
    #[serde(default)]
    pub description: String,
    /// MTU, when configured.
    #[serde(default)]
    pub mtu: Option<u32>,
}

impl Lag {
    /// A new, empty LAG.
    pub fn new(mode: &str) -> Lag {
        Lag {
            members: Vec::new(),
            mode: mode.to_string(),
            admin_up: true,
            mode_l2: None,
            access_vlan: None,
            native_vlan: None,
            allowed_vlans: Vec::new(),
            allowed_none: false,
            description: String::new(),
            mtu: None,
        }
    }
}

/// One configuration (running, saved or pending).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// VLANs keyed by decimal id.
    pub vlans: BTreeMap<String, Vlan>,
    /// Ports keyed by canonical name.
    pub ports: BTreeMap<String, Port>,
    /// LAGs keyed by canonical name.
    pub lags: BTreeMap<String, Lag>,
    /// Platform-specific extra data (e.g. SR Linux network-instances, OVS bridges).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// Session counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sessions {
    /// Sessions open now.
    pub active: u32,
    /// Highest `active` ever seen.
    pub max_seen: u32,
    /// Sessions ever started.
    pub total: u64,
    /// Pids of the open sessions (dead pids are pruned when the state is next locked).
    #[serde(default)]
    pub pids: Vec<u32>,
}

/// The whole state file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceState {
    /// Platform name.
    pub platform: String,
    /// Hostname shown in prompts.
    pub hostname: String,
    /// Running configuration.
    pub running: Config,
    /// Startup configuration.
    pub saved: Config,
    /// Persistent uncommitted candidate (NVUE, NCLU, Junos shared candidate).
    pub pending: Option<Config>,
    /// Session counters.
    pub sessions: Sessions,
    /// Valid lines accepted but not modelled, prefixed by the mode they were typed in.
    pub unmodelled: Vec<String>,
}

impl DeviceState {
    /// The persistent candidate (`pending`), started from running when there is none.
    pub fn pending_mut(&mut self) -> &mut Config {
        self.pending.get_or_insert_with(|| self.running.clone())
    }
}

/// A mutable view over the L2 fields a port and a LAG share.
pub struct L2<'a> {
    /// admin state
    pub admin_up: &'a mut bool,
    /// mode
    pub mode: &'a mut Option<String>,
    /// access vlan
    pub access_vlan: &'a mut Option<u16>,
    /// native vlan
    pub native_vlan: &'a mut Option<u16>,
    /// allowed (tagged) vlans
    pub allowed: &'a mut Vec<u16>,
    /// the allowed list was set to `none` (see [`Port::allowed_none`])
    pub allowed_none: &'a mut bool,
    /// description
    pub description: &'a mut String,
    /// mtu
    pub mtu: &'a mut Option<u32>,
}

impl L2<'_> {
    /// Set the mode.
    pub fn set_mode(&mut self, m: Option<&str>) {
        *self.mode = m.map(str::to_string);
    }
    /// Add VLANs to the allowed list (kept sorted, unique).
    pub fn allow_add(&mut self, v: &[u16]) {
        if !v.is_empty() {
            *self.allowed_none = false;
        }
        self.allowed.extend_from_slice(v);
        self.allowed.sort_unstable();
        self.allowed.dedup();
    }
    /// Remove VLANs from the allowed list.
    pub fn allow_remove(&mut self, v: &[u16]) {
        self.allowed.retain(|x| !v.contains(x));
    }
    /// Replace the allowed list.
    pub fn allow_set(&mut self, v: &[u16]) {
        self.allowed.clear();
        *self.allowed_none = false;
        self.allow_add(v);
    }
    /// Membership as (untagged, tagged) for vendors that configure VLAN
    /// membership rather than a port mode.
    pub fn membership(&self) -> (Option<u16>, Vec<u16>) {
        let untagged = match self.mode.as_deref() {
            Some("access") => *self.access_vlan,
            _ => self.native_vlan.or(*self.access_vlan),
        };
        (untagged, self.allowed.clone())
    }
    /// Set membership from (untagged, tagged): no tagged VLANs = access port,
    /// tagged VLANs = trunk with the untagged one as native, nothing = unset.
    pub fn set_membership(&mut self, untagged: Option<u16>, tagged: Vec<u16>) {
        let mut tagged = tagged;
        tagged.sort_unstable();
        tagged.dedup();
        if tagged.is_empty() {
            *self.native_vlan = None;
            *self.access_vlan = untagged;
            self.set_mode(untagged.map(|_| "access"));
        } else {
            *self.access_vlan = None;
            *self.native_vlan = untagged;
            self.set_mode(Some("trunk"));
        }
        *self.allowed = tagged;
    }
}

impl Config {
    /// L2 view of a port or LAG by canonical name.
    pub fn l2(&mut self, name: &str) -> Option<L2<'_>> {
        if let Some(p) = self.ports.get_mut(name) {
            return Some(L2 {
                admin_up: &mut p.admin_up,
                mode: &mut p.mode,
                access_vlan: &mut p.access_vlan,
                native_vlan: &mut p.native_vlan,
                allowed: &mut p.allowed_vlans,
                allowed_none: &mut p.allowed_none,
                description: &mut p.description,
                mtu: &mut p.mtu,
            });
        }
        if let Some(l) = self.lags.get_mut(name) {
            return Some(L2 {
                admin_up: &mut l.admin_up,
                mode: &mut l.mode_l2,
                access_vlan: &mut l.access_vlan,
                native_vlan: &mut l.native_vlan,
                allowed: &mut l.allowed_vlans,
                allowed_none: &mut l.allowed_none,
                description: &mut l.description,
                mtu: &mut l.mtu,
            });
        }
        None
    }

    /// Names of every port, then every LAG.
    pub fn if_names(&self) -> Vec<String> {
        self.ports.keys().chain(self.lags.keys()).cloned().collect()
    }

    /// Names of every LAG, then every port (the order configuration listings use).
    pub fn if_names_lags_first(&self) -> Vec<String> {
        self.lags.keys().chain(self.ports.keys()).cloned().collect()
    }

    /// Mode of LAG `lag` (`lacp` / `static`), or `default` when there is no such LAG.
    pub fn lag_mode(&self, lag: &str, default: &str) -> String {
        self.lags
            .get(lag)
            .map_or(default.to_string(), |l| l.mode.clone())
    }

    /// `lacp` when LAG `lag` exists in LACP mode, else `static`.
    pub fn lag_lacp_or_static(&self, lag: &str) -> &'static str {
        match self.lags.get(lag) {
            Some(l) if l.mode == "lacp" => "lacp",
            _ => "static",
        }
    }

    /// Whether a port or LAG of that name exists.
    pub fn has_if(&self, name: &str) -> bool {
        self.ports.contains_key(name) || self.lags.contains_key(name)
    }

    /// Whether VLAN `id` exists.
    pub fn has_vlan(&self, id: u16) -> bool {
        self.vlans.contains_key(&id.to_string())
    }

    /// Create a VLAN if missing; returns true when it was created.
    pub fn add_vlan(&mut self, id: u16) -> bool {
        let key = id.to_string();
        if self.vlans.contains_key(&key) {
            return false;
        }
        self.vlans.insert(key, Vlan::default());
        true
    }

    /// Name of VLAN `id` (created if missing).
    pub fn vlan_mut(&mut self, id: u16) -> &mut Vlan {
        self.vlans.entry(id.to_string()).or_default()
    }

    /// Remove a VLAN; returns true when it existed. Port configuration that
    /// references it stays, as on most vendors (the port becomes inactive).
    pub fn del_vlan(&mut self, id: u16) -> bool {
        self.vlans.remove(&id.to_string()).is_some()
    }

    /// Sorted VLAN ids.
    pub fn vlan_ids(&self) -> Vec<u16> {
        let mut v: Vec<u16> = self.vlans.keys().filter_map(|k| k.parse().ok()).collect();
        v.sort_unstable();
        v
    }

    /// VLAN id whose name is `name`.
    pub fn vlan_by_name(&self, name: &str) -> Option<u16> {
        self.vlans
            .iter()
            .find(|(_, v)| v.name == name)
            .and_then(|(k, _)| k.parse().ok())
    }

    /// Put `port` into `lag` (creating the LAG), removing it from any other.
    pub fn join_lag(&mut self, port: &str, lag: &str, mode: &str) {
        self.leave_lag(port);
        let l = self
            .lags
            .entry(lag.to_string())
            .or_insert_with(|| Lag::new(mode));
        l.mode = mode.to_string();
        if !l.members.iter().any(|m| m == port) {
            l.members.push(port.to_string());
            l.members.sort();
        }
        if let Some(p) = self.ports.get_mut(port) {
            p.lag = Some(lag.to_string());
        }
    }

    /// Take `port` out of its LAG.
    pub fn leave_lag(&mut self, port: &str) {
        if let Some(p) = self.ports.get_mut(port) {
            p.lag = None;
        }
        for l in self.lags.values_mut() {
            l.members.retain(|m| m != port);
        }
    }

    /// A member leaving its LAG keeps the L2 settings the LAG gave it: on Cisco IOS, what
    /// is configured on a port-channel applies to every port assigned to it ("configuration
    /// changes applied to the port-channel interface apply to all the physical ports
    /// assigned to the port-channel interface", Catalyst EtherChannel guides), and nothing
    /// takes it away when the port leaves or the port-channel is deleted.
    pub fn leave_lag_keeping_l2(&mut self, port: &str) {
        let lag = self.ports.get(port).and_then(|p| p.lag.clone());
        if let Some(l) = lag.and_then(|l| self.lags.get(&l).cloned()) {
            if let Some(p) = self.ports.get_mut(port) {
                p.mode = l.mode_l2.clone();
                p.access_vlan = l.access_vlan;
                p.native_vlan = l.native_vlan;
                p.allowed_vlans = l.allowed_vlans.clone();
                p.allowed_none = l.allowed_none;
            }
        }
        self.leave_lag(port);
    }

    /// Delete a LAG, releasing its members.
    pub fn del_lag(&mut self, lag: &str) -> bool {
        let Some(l) = self.lags.remove(lag) else {
            return false;
        };
        for m in l.members {
            if let Some(p) = self.ports.get_mut(&m) {
                p.lag = None;
            }
        }
        true
    }
}
