//! Planning against OVSDB: what each port's request means for its VLAN columns and
//! `external_ids`, given what was read (or, in a dry run, a port that needs the change), as
//! the `ovs-vsctl` commands that make it so, or a refusal with a reason.

use std::collections::{BTreeMap, BTreeSet};

use crate::catalog::{Platform, Unsupported};
use crate::request::{Op, PortChange, PortMode};
use crate::verify::parse::ovsdb::{OvsdbPort, Snapshot, Vlans};

/// A VLAN change on an existing port, as a function of its current VLAN columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum VlanChange {
    /// Access port in this VLAN.
    Access(u16),
    /// Add a tagged VLAN (the native VLAN, if any, stays).
    AddTrunk(u16),
    /// Take this VLAN off the port wherever it is (access, tagged, native).
    Remove(u16),
    /// The whole trunk: native (untagged) and tagged VLANs.
    Trunk {
        native: Option<u16>,
        allowed: BTreeSet<u16>,
    },
    /// Back to the idle state.
    Reset,
}

/// What the request wants for one port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Intent {
    Plug {
        vlan: Option<u16>,
        /// `external_ids` key → value, `None` to remove the key.
        ids: BTreeMap<&'static str, Option<String>>,
    },
    /// Takes the representor off its bridge; with a node, only a representor plugged for
    /// that node (or for none).
    Unplug { node: Option<String> },
    Vlans {
        change: VlanChange,
        mtu: Option<u32>,
    },
}

#[derive(Debug, Clone)]
pub(super) struct Target {
    pub(super) port: String,
    pub(super) bridge: String,
    /// The idle VLAN (or [`DEAD_VLAN`](crate::verify::parse::ovsdb::DEAD_VLAN)) a port falls back to.
    pub(super) idle: u16,
    pub(super) intent: Intent,
}

pub(super) fn vlan_change(
    op: Op,
    c: &PortChange,
    platform: &Platform,
) -> Result<VlanChange, Unsupported> {
    let vlan = |what: &str| {
        c.vlan
            .map(|v| v.get())
            .ok_or_else(|| Unsupported(format!("{what} needs a vlan")))
    };
    Ok(match op {
        Op::AttachPort if c.mode == Some(PortMode::Trunk) => {
            platform.require("trunk_mode")?;
            platform.require("allowed_add")?;
            VlanChange::AddTrunk(vlan("attach_port")?)
        }
        Op::AttachPort => {
            platform.require("access_set")?;
            VlanChange::Access(vlan("attach_port")?)
        }
        Op::DetachPort => {
            platform.require("access_remove")?;
            platform.require("allowed_remove")?;
            VlanChange::Remove(vlan("detach_port")?)
        }
        Op::UpdatePort => match c.mode {
            Some(PortMode::Access) => {
                platform.require("access_set")?;
                VlanChange::Access(
                    c.native_vlan
                        .map(|v| v.get())
                        .ok_or_else(|| Unsupported("access needs native_vlan".into()))?,
                )
            }
            Some(PortMode::Trunk) => {
                platform.require("trunk_mode")?;
                platform.require("allowed_set")?;
                if c.native_vlan.is_some() {
                    platform.require("native_set")?;
                }
                let allowed: BTreeSet<u16> = c
                    .allowed_vlans
                    .iter()
                    .flat_map(|s| s.iter())
                    .map(|v| v.get())
                    .collect();
                let native = c.native_vlan.map(|v| v.get());
                if allowed.is_empty() && native.is_none() {
                    // An empty trunks column means every VLAN: never write one by accident.
                    return Err(Unsupported(
                        "update_port mode trunk needs native_vlan and/or allowed_vlans".into(),
                    ));
                }
                VlanChange::Trunk { native, allowed }
            }
            Some(PortMode::Hybrid) => {
                return Err(Unsupported("hybrid ports are not supported on ovs".into()))
            }
            None => return Err(Unsupported("update_port needs a mode".into())),
        },
        Op::ResetPort => {
            platform.require("port_reset")?;
            VlanChange::Reset
        }
        _ => return Err(Unsupported(format!("{} is not a port change", op.name()))),
    })
}

/// The VLAN columns after `change`, from the current ones; `None` when `change` has nothing
/// to remove (the VLAN is not on the port).
pub(super) fn next_vlans(change: &VlanChange, cur: &Vlans, idle: u16) -> Option<Vlans> {
    match change {
        VlanChange::Access(v) => Some(Vlans::access(*v)),
        VlanChange::Reset => Some(Vlans::access(idle)),
        VlanChange::AddTrunk(v) => Some(match cur.native() {
            Some(n) => {
                let mut trunks = cur.trunks.clone();
                trunks.insert(*v);
                trunks.insert(n);
                Vlans {
                    tag: Some(n),
                    trunks,
                    vlan_mode: cur.vlan_mode.clone(),
                }
            }
            None => {
                // An access port (the idle VLAN, or another network) becomes a trunk: as on a
                // switch, its access VLAN goes. A flat port's empty trunks meant "all"; it
                // now means exactly the VLANs added.
                let mut trunks = if cur.is_access() {
                    BTreeSet::new()
                } else {
                    cur.trunks.clone()
                };
                trunks.insert(*v);
                Vlans {
                    tag: None,
                    trunks,
                    vlan_mode: Some("trunk".into()),
                }
            }
        }),
        VlanChange::Remove(v) => {
            if cur.is_access() {
                return (cur.tag == Some(*v)).then(|| Vlans::access(idle));
            }
            let mut next = cur.clone();
            let tagged = next.trunks.remove(v);
            let native = cur.native() == Some(*v);
            if native {
                next.tag = None;
                next.vlan_mode = Some("trunk".into());
            }
            if !tagged && !native {
                return None;
            }
            // Removing the last VLAN must not leave an empty trunks column (= every VLAN).
            if next.trunks.is_empty() && next.native().is_none() {
                return Some(Vlans::access(idle));
            }
            Some(next)
        }
        VlanChange::Trunk { native, allowed } => {
            let mut trunks = allowed.clone();
            Some(match native {
                Some(n) => {
                    // The native VLAN is also listed, so untagged and tagged frames of it
                    // are both accepted (NGS does the same).
                    trunks.insert(*n);
                    Vlans {
                        tag: Some(*n),
                        trunks,
                        vlan_mode: Some("native-untagged".into()),
                    }
                }
                None => Vlans {
                    tag: None,
                    trunks,
                    vlan_mode: Some("trunk".into()),
                },
            })
        }
    }
}

/// `set`/`clear` commands that make the Port's VLAN columns exactly `v`.
pub(super) fn vlan_commands(port: &str, v: &Vlans) -> Vec<Vec<String>> {
    let head = |verb: &str| vec![verb.to_string(), "Port".to_string(), port.to_string()];
    let (mut set, mut clear) = (head("set"), head("clear"));
    match v.tag {
        Some(t) => set.push(format!("tag={t}")),
        None => clear.push("tag".into()),
    }
    if v.trunks.is_empty() {
        clear.push("trunks".into());
    } else {
        let list: Vec<String> = v.trunks.iter().map(u16::to_string).collect();
        set.push(format!("trunks=[{}]", list.join(",")));
    }
    match &v.vlan_mode {
        Some(m) => set.push(format!("vlan_mode={m}")),
        None => clear.push("vlan_mode".into()),
    }
    [set, clear].into_iter().filter(|c| c.len() > 3).collect()
}

/// The result of planning one port against a state.
#[derive(Debug, Clone)]
pub(super) struct PortPlan {
    pub(super) port: String,
    pub(super) bridge: String,
    pub(super) before: Option<OvsdbPort>,
    pub(super) after: Option<OvsdbPort>,
    pub(super) commands: Vec<Vec<String>>,
    pub(super) note: Option<String>,
}

impl PortPlan {
    pub(super) fn changed(&self) -> bool {
        !self.commands.is_empty()
    }
}

/// Why a port cannot be changed, from what OVSDB says (exit 1, nothing sent).
pub(super) struct Refusal(pub(super) String);

impl Target {
    /// Plans this port against `snap` (a real run) or, with `None`, against the state a
    /// port needing the change would have (a dry run).
    pub(super) fn plan(&self, snap: Option<&Snapshot>) -> Result<PortPlan, Refusal> {
        let (port, bridge) = (&self.port, &self.bridge);
        if let Some(s) = snap {
            if s.bridges.contains(port) {
                return Err(Refusal(format!(
                    "{port} is the internal port of bridge {port}"
                )));
            }
        }
        let before: Option<OvsdbPort> = match snap {
            Some(s) => s.ports.get(port).cloned(),
            None => self.assumed(),
        };
        if let Some(on) = before.as_ref().and_then(|b| b.bridge.as_ref()) {
            if on != bridge {
                return Err(Refusal(match self.intent {
                    Intent::Plug { .. } => format!(
                        "{port} is plugged into bridge {on}, not {bridge}: unplug it there first"
                    ),
                    _ => format!(
                        "{port} is on bridge {on}; this request manages ports on {bridge} only"
                    ),
                }));
            }
        }
        // Only ports Mercury plugged are changed or removed (a dry run assumes one).
        if let (Some(b), Some(_)) = (&before, snap) {
            if b.external_ids.get(super::PLUGGED_BY).map(String::as_str) != Some("mercury") {
                return Err(Refusal(format!(
                    "{port} was not plugged by Mercury (no external_ids:{}=mercury on its interface): patch ports, uplinks and ports another agent manages are never changed or removed",
                    super::PLUGGED_BY
                )));
            }
        }
        let mut plan = PortPlan {
            port: port.clone(),
            bridge: bridge.clone(),
            before: before.clone(),
            after: before.clone(),
            commands: Vec::new(),
            note: None,
        };
        match &self.intent {
            Intent::Plug { vlan, ids } => {
                if let Some(s) = snap {
                    if !s.bridges.contains(bridge) {
                        return Err(Refusal(format!("bridge {bridge} does not exist")));
                    }
                }
                // A representor belongs to one node: plugging it for another would take a
                // running server's network away (two Ironic nodes naming the same port_id).
                let owner = before
                    .as_ref()
                    .and_then(|b| b.external_ids.get("node-uuid"));
                if let (Some(owner), Some(Some(wanted))) = (owner, ids.get("node-uuid")) {
                    if owner != wanted {
                        return Err(Refusal(format!(
                            "{port} is plugged for node {owner}, not {wanted}: a representor belongs to one node; unplug it for {owner} first"
                        )));
                    }
                }
                let mut after = before.clone().unwrap_or_else(|| OvsdbPort {
                    bridge: Some(bridge.clone()),
                    ..OvsdbPort::default()
                });
                after.vlans = vlan.map(Vlans::access).unwrap_or_default();
                for (k, v) in ids {
                    match v {
                        Some(v) => after.external_ids.insert(k.to_string(), v.clone()),
                        None => after.external_ids.remove(*k),
                    };
                }
                if before.as_ref() != Some(&after) {
                    plan.commands
                        .push(argv(&["--may-exist", "add-port", bridge, port]));
                    let mut set = argv(&["set", "Interface", port]);
                    let mut remove = argv(&["remove", "Interface", port, "external_ids"]);
                    for (k, v) in ids {
                        match v {
                            // Quoted: ovs-vsctl then takes the value as a string, whatever
                            // it looks like (validated: no quotes or backslashes inside).
                            Some(v) => set.push(format!("external_ids:{k}=\"{v}\"")),
                            None => remove.push(k.to_string()),
                        }
                    }
                    plan.commands.push(set);
                    if remove.len() > 4 {
                        plan.commands.push(remove);
                    }
                    plan.commands.extend(vlan_commands(port, &after.vlans));
                } else {
                    plan.note = Some(format!(
                        "{port} is already plugged into {bridge} as requested"
                    ));
                }
                plan.after = Some(after);
            }
            Intent::Unplug { node } => match &before {
                Some(b)
                    if snap.is_some()
                        && node.is_some()
                        && b.external_ids.contains_key("node-uuid")
                        && b.external_ids.get("node-uuid") != node.as_ref() =>
                {
                    return Err(Refusal(format!(
                        "{port} is plugged for node {}, not {}: a representor belongs to one node; only a request for that node unplugs it",
                        b.external_ids.get("node-uuid").map(String::as_str).unwrap_or_default(),
                        node.as_deref().unwrap_or_default()
                    )));
                }
                None => {
                    plan.note = Some(format!(
                        "{port} is not plugged (absent from OVSDB): nothing to unplug"
                    ));
                }
                Some(_) => {
                    plan.commands
                        .push(argv(&["--if-exists", "del-port", bridge, port]));
                    plan.after = None;
                }
            },
            Intent::Vlans { change, mtu } => {
                let Some(before) = &before else {
                    return Err(Refusal(format!(
                        "{port} is not plugged into {bridge}: plug_port it first"
                    )));
                };
                let mut after = before.clone();
                match next_vlans(change, &before.vlans, self.idle) {
                    Some(v) => after.vlans = v,
                    None => {
                        if let VlanChange::Remove(v) = change {
                            plan.note =
                                Some(format!("VLAN {v} is not on {port}: nothing to remove"));
                        }
                    }
                }
                if let Some(m) = mtu {
                    after.mtu_request = Some(*m);
                }
                if after != *before {
                    // Existing rows are addressed by the UUIDs just read (names in a dry run).
                    let port_row = before.port_uuid.as_deref().unwrap_or(port);
                    plan.commands.extend(vlan_commands(port_row, &after.vlans));
                    if let Some(m) = mtu {
                        let iface_row = match (&before.iface_uuid, snap) {
                            (Some(u), _) => u.as_str(),
                            (None, None) => port.as_str(),
                            (None, Some(_)) => {
                                return Err(Refusal(format!(
                                    "{port} has no interface named {port}: cannot set its MTU"
                                )))
                            }
                        };
                        plan.commands.push(argv(&[
                            "set",
                            "Interface",
                            iface_row,
                            &format!("mtu_request={m}"),
                        ]));
                    }
                } else if plan.note.is_none() {
                    plan.note = Some(format!("{port} is already as requested"));
                }
                plan.after = Some(after);
            }
        }
        Ok(plan)
    }

    /// The state assumed by a dry run: a port that needs the change.
    pub(super) fn assumed(&self) -> Option<OvsdbPort> {
        let plugged = |vlans: Vlans| {
            Some(OvsdbPort {
                bridge: Some(self.bridge.clone()),
                vlans,
                ..OvsdbPort::default()
            })
        };
        match &self.intent {
            Intent::Plug { .. } => None,
            Intent::Unplug { .. } => plugged(Vlans::default()),
            Intent::Vlans {
                change: VlanChange::Remove(v),
                ..
            } => plugged(Vlans::access(*v)),
            Intent::Vlans { .. } => plugged(Vlans::default()),
        }
    }
}

pub(super) fn argv(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| s.to_string()).collect()
}
