//! The `ovs` platform: Open vSwitch on a SmartNIC / DPU, driven with `ovs-vsctl`.
//!
//! The catalog's escape hatch for what one-template-per-line cannot say. Every change a
//! request makes is **one** `ovs-vsctl` invocation whose commands are joined with `--`, so
//! OVSDB commits all of it or none of it. Before changing anything the current state is read
//! (one `--format=json` invocation), so that the transaction can be computed from it (adding
//! a VLAN to a trunk keeps its native VLAN), refused with a reason (port on another bridge,
//! bridge missing, port not plugged), or skipped when the port is already as requested
//! (`changed: false`). The catalog (`[platforms.ovs]` in `plugins.toml`) still decides which
//! operations the platform supports; this module decides how they are written.
//!
//! The model (Smart NIC networking spec): the host's port A is represented on the card by
//! port B, which `plug_port` adds to the integration bridge (`br-int` unless the device or
//! request names another) with `external_ids` `iface-id`, `iface-status`, `attached-mac`,
//! `node-uuid`; the card's physical port C is not Mercury's business.
//!
//! The same code runs on the card itself (`transport = "local"`, argv executed directly),
//! over an SSH exec channel, or through a `command` transport. `ovs_vsctl` (an argv prefix,
//! e.g. `["sudo", "ovs-vsctl"]`) and `ovs_db` (the `--db=` target) let a non-root account
//! manage OVS.
//!
//! This module must not run a shell, render a value that was not validated, or send a change
//! in more than one invocation.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::catalog::Platform;
use crate::config::Device;
use crate::driver::Unsupported;
use crate::request::validate::Escaped;
use crate::request::{Op, PortChange, PortMode, Request};
use crate::session::plan::{Line, Plan};
use crate::session::{redact, CommandRecord, SessionError, Settings, Transcript};
use crate::transport::{Connection, Exec, ExecOutput, TransportError};
pub use crate::verify::parse::ovsdb::normalised;
use crate::verify::parse::ovsdb::{
    OvsdbPort, Snapshot, Vlans, BRIDGE_COLUMNS, DEAD_VLAN, IFACE_COLUMNS, PORT_COLUMNS,
};

/// The catalog platform this module drives.
pub const PLATFORM: &str = "ovs";
/// The bridge used when neither the request nor the device names one.
pub const DEFAULT_BRIDGE: &str = "br-int";
/// The `external_ids` keys `plug_port` owns on the representor's Interface row.
pub const IFACE_IDS: [&str; 4] = ["iface-id", "iface-status", "attached-mac", "node-uuid"];
/// Shown with `--dry-run`: the real transaction depends on state a dry run does not read.
pub const DRY_RUN_NOTE: &str = "ovs: a dry run does not read OVSDB; the transaction shown assumes a port that needs the change. A real run reads the port first and sends less (or nothing) when it is already as requested";

/// Whether `platform` is driven by this module rather than by catalog templates.
pub fn handles(platform: &Platform) -> bool {
    platform.name == PLATFORM
}

/// A VLAN change on an existing port, as a function of its current VLAN columns.
#[derive(Debug, Clone, PartialEq, Eq)]
enum VlanChange {
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
enum Intent {
    Plug {
        vlan: Option<u16>,
        /// `external_ids` key → value, `None` to remove the key.
        ids: BTreeMap<&'static str, Option<String>>,
    },
    Unplug,
    Vlans {
        change: VlanChange,
        mtu: Option<u32>,
    },
}

#[derive(Debug, Clone)]
struct Target {
    port: String,
    bridge: String,
    /// The idle VLAN (or [`DEAD_VLAN`]) a port falls back to.
    idle: u16,
    intent: Intent,
}

/// A request checked against the catalog and turned into per-port intents, ready to be
/// planned (dry run) or applied (after reading OVSDB). Building it never contacts the device.
#[derive(Debug, Clone)]
pub struct Prepared {
    op: Op,
    device: String,
    targets: Vec<Target>,
    /// `ovs-vsctl` argv prefix with `--db` and `--timeout`.
    base: Vec<String>,
    timeout: u64,
    warnings: Vec<String>,
    /// For requests that need no device work (networks): the message.
    nothing: Option<String>,
    /// The catalog's `failures`: stderr lines of a successful run that fail the request.
    failures: Vec<regex::Regex>,
}

/// `--timeout` for ovs-vsctl: a second under the per-command deadline, so ovs-vsctl gives up
/// (and says why) before Mercury kills it.
fn vsctl_timeout(command_timeout: Duration) -> u64 {
    command_timeout.as_secs_f64().ceil().max(2.0) as u64 - 1
}

fn need(platform: &Platform, action: &str) -> Result<(), Unsupported> {
    platform.template(action).map(|_| ()).map_err(Unsupported)
}

/// Checks the request against the platform and the device and builds the per-port intents.
/// Every value that reaches `ovs-vsctl` is validated here or was validated by the request
/// layer; nothing runs before this succeeds.
pub fn prepare(
    req: &Request,
    device: &Device,
    platform: &Platform,
) -> Result<Prepared, Unsupported> {
    let command_timeout = device.command_timeout.min(device.request_timeout);
    let timeout = vsctl_timeout(command_timeout);
    let vsctl = device
        .ovs_vsctl
        .clone()
        .unwrap_or_else(|| vec!["ovs-vsctl".to_string()]);
    crate::request::validate::ovs_vsctl(&vsctl).map_err(Unsupported)?;
    let mut base = vsctl;
    if let Some(db) = &device.ovs_db {
        crate::request::validate::ovs_db(db).map_err(Unsupported)?;
        base.push(format!("--db={db}"));
    }
    base.push(format!("--timeout={timeout}"));
    let device_bridge = device
        .bridge
        .clone()
        .unwrap_or_else(|| DEFAULT_BRIDGE.to_string());
    crate::request::validate::simple_name("bridge", &device_bridge, 15)
        .map_err(|e| Unsupported(e.0))?;
    let mut out = Prepared {
        op: req.op,
        device: device.name.clone(),
        targets: Vec::new(),
        base,
        timeout,
        warnings: Vec::new(),
        nothing: None,
        failures: platform.failures.clone(),
    };
    if device.shut_unused_ports {
        out.warnings.push(format!(
            "devices.{}.shut_unused_ports has no effect on ovs: ovs-vsctl cannot set a port's administrative state; unused ports get the idle VLAN instead",
            device.name
        ));
    }
    let port_of = |c: &PortChange| -> Result<String, Unsupported> {
        crate::request::validate::port_name("port", &c.port).map_err(|e| Unsupported(e.0))?;
        if !platform.port_pattern.is_match(&c.port) {
            return Err(Unsupported(format!(
                "invalid port {} for platform ovs: expected a network device name of at most 15 characters",
                Escaped(&c.port)
            )));
        }
        Ok(c.port.clone())
    };
    let idle_of = |c: &PortChange| {
        c.default_vlan
            .or(device.default_vlan)
            .map(|v| v.get())
            .unwrap_or(DEAD_VLAN)
    };
    match req.op {
        Op::PlugPort | Op::UnplugPort => {
            let c = req
                .ports
                .first()
                .ok_or_else(|| Unsupported("no port".into()))?;
            let p = req
                .plug
                .as_ref()
                .ok_or_else(|| Unsupported("no plug".into()))?;
            let bridge = p.bridge.clone().unwrap_or_else(|| device_bridge.clone());
            crate::request::validate::simple_name("bridge", &bridge, 15)
                .map_err(|e| Unsupported(e.0))?;
            let port = port_of(c)?;
            if port == bridge {
                return Err(Unsupported(format!(
                    "port {port} is the bridge's own internal port"
                )));
            }
            let intent = if req.op == Op::PlugPort {
                need(platform, "plug")?;
                let vif = p
                    .vif_id
                    .clone()
                    .ok_or_else(|| Unsupported("plug_port needs a vif_id".into()))?;
                crate::request::validate::identifier("vif_id", &vif)
                    .map_err(|e| Unsupported(e.0))?;
                let mac = p
                    .mac
                    .as_deref()
                    .map(|m| crate::request::validate::mac("mac", m))
                    .transpose()
                    .map_err(|e| Unsupported(e.0))?;
                let node = req
                    .meta
                    .node_uuid
                    .as_deref()
                    .map(|u| crate::request::validate::uuid("node_uuid", u))
                    .transpose()
                    .map_err(|e| Unsupported(e.0))?;
                Intent::Plug {
                    vlan: p.vlan.map(|v| v.get()),
                    ids: BTreeMap::from([
                        ("iface-id", Some(vif)),
                        ("iface-status", Some("active".to_string())),
                        ("attached-mac", mac),
                        ("node-uuid", node),
                    ]),
                }
            } else {
                need(platform, "unplug")?;
                Intent::Unplug
            };
            out.targets.push(Target {
                port,
                bridge,
                idle: idle_of(c),
                intent,
            });
        }
        Op::AttachPort | Op::DetachPort | Op::UpdatePort | Op::ResetPort => {
            for c in &req.ports {
                let port = port_of(c)?;
                if port == device_bridge {
                    return Err(Unsupported(format!(
                        "port {port} is the bridge's own internal port"
                    )));
                }
                let change = vlan_change(req.op, c, platform)?;
                if c.description.is_some() {
                    need(platform, "description")?;
                }
                if c.mtu.is_some() {
                    need(platform, "mtu")?;
                }
                out.targets.push(Target {
                    port,
                    bridge: device_bridge.clone(),
                    idle: idle_of(c),
                    intent: Intent::Vlans { change, mtu: c.mtu },
                });
            }
        }
        Op::AddNetwork | Op::DeleteNetwork => {
            need(
                platform,
                if req.op == Op::AddNetwork {
                    "network_add"
                } else {
                    "network_delete"
                },
            )?;
            out.nothing = Some(format!(
                "{}: nothing to do on {}: an OVS bridge carries any VLAN a port is tagged with, so VLANs are not created or deleted",
                req.op.name(),
                device.name
            ));
        }
        Op::UpdateLag | Op::DeleteLag => {
            need(
                platform,
                if req.op == Op::UpdateLag {
                    "lag_create"
                } else {
                    "lag_delete"
                },
            )?;
            return Err(Unsupported("LAGs are not supported on ovs".into()));
        }
        Op::GetAllowedNetworkTypes
        | Op::IsLinkValid
        | Op::IsPortSupported
        | Op::GetSwitches
        | Op::VerifyPort => {
            return Err(Unsupported(format!(
                "{} does not change a device",
                req.op.name()
            )));
        }
    }
    Ok(out)
}

fn vlan_change(op: Op, c: &PortChange, platform: &Platform) -> Result<VlanChange, Unsupported> {
    let vlan = |what: &str| {
        c.vlan
            .map(|v| v.get())
            .ok_or_else(|| Unsupported(format!("{what} needs a vlan")))
    };
    Ok(match op {
        Op::AttachPort if c.mode == Some(PortMode::Trunk) => {
            need(platform, "trunk_mode")?;
            need(platform, "allowed_add")?;
            VlanChange::AddTrunk(vlan("attach_port")?)
        }
        Op::AttachPort => {
            need(platform, "access_set")?;
            VlanChange::Access(vlan("attach_port")?)
        }
        Op::DetachPort => {
            need(platform, "access_remove")?;
            need(platform, "allowed_remove")?;
            VlanChange::Remove(vlan("detach_port")?)
        }
        Op::UpdatePort => match c.mode {
            Some(PortMode::Access) => {
                need(platform, "access_set")?;
                VlanChange::Access(
                    c.native_vlan
                        .map(|v| v.get())
                        .ok_or_else(|| Unsupported("access needs native_vlan".into()))?,
                )
            }
            Some(PortMode::Trunk) => {
                need(platform, "trunk_mode")?;
                need(platform, "allowed_set")?;
                if c.native_vlan.is_some() {
                    need(platform, "native_set")?;
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
            need(platform, "port_reset")?;
            VlanChange::Reset
        }
        _ => return Err(Unsupported(format!("{} is not a port change", op.name()))),
    })
}

/// The VLAN columns after `change`, from the current ones; `None` when `change` has nothing
/// to remove (the VLAN is not on the port).
fn next_vlans(change: &VlanChange, cur: &Vlans, idle: u16) -> Option<Vlans> {
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
fn vlan_commands(port: &str, v: &Vlans) -> Vec<Vec<String>> {
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
struct PortPlan {
    port: String,
    bridge: String,
    before: Option<OvsdbPort>,
    after: Option<OvsdbPort>,
    commands: Vec<Vec<String>>,
    note: Option<String>,
}

impl PortPlan {
    fn changed(&self) -> bool {
        !self.commands.is_empty()
    }
}

/// Why a port cannot be changed, from what OVSDB says (exit 1, nothing sent).
struct Refusal(String);

impl Target {
    /// Plans this port against `snap` (a real run) or, with `None`, against the state a
    /// port needing the change would have (a dry run).
    fn plan(&self, snap: Option<&Snapshot>) -> Result<PortPlan, Refusal> {
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
            Intent::Unplug => match &before {
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
    fn assumed(&self) -> Option<OvsdbPort> {
        let plugged = |vlans: Vlans| {
            Some(OvsdbPort {
                bridge: Some(self.bridge.clone()),
                vlans,
                ..OvsdbPort::default()
            })
        };
        match &self.intent {
            Intent::Plug { .. } => None,
            Intent::Unplug => plugged(Vlans::default()),
            Intent::Vlans {
                change: VlanChange::Remove(v),
                ..
            } => plugged(Vlans::access(*v)),
            Intent::Vlans { .. } => plugged(Vlans::default()),
        }
    }
}

fn argv(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| s.to_string()).collect()
}

/// What an applied request did.
#[derive(Debug, Clone)]
pub struct Applied {
    /// OVSDB was changed.
    pub changed: bool,
    /// One sentence.
    pub msg: String,
    /// Per-port before/after, for the result's `data`.
    pub data: Value,
    /// Notes (ovs-vswitchd could not open a device, ...).
    pub warnings: Vec<String>,
    /// With `--verify`: ports whose state read back after the transaction is not the state
    /// it was computed to produce.
    pub drift: Option<String>,
}

impl Prepared {
    /// The read invocation: bridges, ports and interfaces as JSON, in one transaction.
    fn read_line(&self) -> Line {
        let mut a = self.base.clone();
        a.push("--format=json".into());
        a.extend(argv(&[
            "--",
            &format!("--columns={BRIDGE_COLUMNS}"),
            "list",
            "Bridge",
        ]));
        for t in &self.targets {
            let name = format!("name={}", t.port);
            a.extend(argv(&[
                "--",
                &format!("--columns={PORT_COLUMNS}"),
                "find",
                "Port",
                &name,
            ]));
            a.extend(argv(&[
                "--",
                &format!("--columns={IFACE_COLUMNS}"),
                "find",
                "Interface",
                &name,
            ]));
        }
        Line::exec(a)
    }

    /// The write invocation: every command of every port, joined with `--`.
    fn write_line(&self, plans: &[PortPlan]) -> Option<Line> {
        let commands: Vec<&Vec<String>> = plans.iter().flat_map(|p| &p.commands).collect();
        if commands.is_empty() {
            return None;
        }
        let mut a = self.base.clone();
        for c in commands {
            a.push("--".into());
            a.extend(c.iter().cloned());
        }
        Some(Line::exec(a))
    }

    /// The plan a dry run shows: the read, then the transaction for a port that needs it.
    pub fn dry_plan(&self) -> Plan {
        let mut plan = Plan {
            lines: Vec::new(),
            warnings: self.warnings.clone(),
        };
        if self.nothing.is_some() {
            return plan;
        }
        let plans: Vec<PortPlan> = self
            .targets
            .iter()
            .filter_map(|t| t.plan(None).ok())
            .collect();
        plan.lines.push(self.read_line());
        plan.lines.extend(self.write_line(&plans));
        plan
    }

    /// Reads OVSDB, plans every port against it, and runs the one transaction if anything
    /// needs changing. The transcript is returned in both cases.
    ///
    /// With `verify`, OVSDB is read again after the transaction and each port compared with
    /// the state the transaction was computed to produce (`Applied::drift`); `before` and
    /// `after` in the result's data are then both as read.
    pub fn apply(
        &self,
        conn: Connection,
        settings: &Settings,
        verify: bool,
    ) -> (Transcript, Result<Applied, SessionError>) {
        let mut transcript = Transcript::default();
        let result = match conn {
            Connection::Exec(mut exec) => {
                self.apply_exec(exec.as_mut(), settings, &mut transcript, verify)
            }
            Connection::Shell(_) => Err(SessionError::Transport(TransportError::Config(
                "the ovs platform runs commands; its transport must be local, ssh (exec) or command".into(),
            ))),
        };
        (transcript, result)
    }

    fn apply_exec(
        &self,
        exec: &mut dyn Exec,
        settings: &Settings,
        transcript: &mut Transcript,
        verify: bool,
    ) -> Result<Applied, SessionError> {
        // The preparation's own warnings reach the result through the plan (run.rs).
        let mut warnings = Vec::new();
        if let Some(msg) = &self.nothing {
            return Ok(Applied {
                changed: false,
                msg: msg.clone(),
                data: Value::Null,
                warnings,
                drift: None,
            });
        }
        let read = self.read_line();
        let out = self.run(exec, &read, false, settings, transcript)?;
        let snap = Snapshot::parse(&out.stdout).map_err(|message| SessionError::Unparsable {
            line: read.text.clone(),
            message,
        })?;
        let mut plans: Vec<PortPlan> = Vec::new();
        for t in &self.targets {
            let plan = t
                .plan(Some(&snap))
                .map_err(|Refusal(why)| SessionError::Rejected {
                    line: format!("{} {}", self.op.name(), t.port),
                    indicator: why,
                })?;
            plans.push(plan);
        }
        let changed = plans.iter().any(PortPlan::changed);
        let mut drift = None;
        if let Some(write) = self.write_line(&plans) {
            let out = self.run(exec, &write, true, settings, transcript)?;
            warnings.extend(stderr_warnings(&out.stderr));
            if verify {
                let out = self.run(exec, &read, false, settings, transcript)?;
                let again =
                    Snapshot::parse(&out.stdout).map_err(|message| SessionError::Unparsable {
                        line: read.text.clone(),
                        message,
                    })?;
                let mut wrong = Vec::new();
                for p in plans.iter_mut() {
                    let read_back = again.ports.get(&p.port).cloned();
                    if !same_state(read_back.as_ref(), p.after.as_ref()) {
                        wrong.push(format!(
                            "{}: expected {}, OVSDB shows {}",
                            p.port,
                            describe(p.after.as_ref()),
                            describe(read_back.as_ref())
                        ));
                    }
                    p.after = read_back;
                }
                if !wrong.is_empty() {
                    drift = Some(wrong.join("; "));
                }
            }
        }
        let summary: Vec<String> = plans
            .iter()
            .map(|p| match (&p.note, &p.after) {
                (Some(n), _) => n.clone(),
                (None, None) => format!("{} unplugged from {}", p.port, p.bridge),
                (None, Some(a)) => format!("{} on {}: {}", p.port, p.bridge, a.vlans.describe()),
            })
            .collect();
        let msg = format!(
            "{} {} on {}: {}",
            self.op.name(),
            if changed {
                "applied"
            } else {
                "changed nothing"
            },
            self.device,
            summary.join("; ")
        );
        let data = json!({
            "ports": plans.iter().map(|p| json!({
                "port": p.port,
                "bridge": p.bridge,
                "changed": p.changed(),
                "absent": p.before.is_none() && p.after.is_none(),
                "before": p.before,
                "after": p.after,
            })).collect::<Vec<_>>(),
        });
        Ok(Applied {
            changed,
            msg,
            data,
            warnings,
            drift,
        })
    }

    /// Reads the request's ports (`verify_port`): one read invocation, nothing written.
    pub fn read(
        &self,
        conn: Connection,
        settings: &Settings,
    ) -> (Transcript, Result<ReadPorts, SessionError>) {
        let mut transcript = Transcript::default();
        let result = match conn {
            Connection::Exec(mut exec) => {
                let read = self.read_line();
                self.run(exec.as_mut(), &read, false, settings, &mut transcript)
                    .and_then(|out| {
                        Snapshot::parse(&out.stdout).map_err(|message| {
                            SessionError::Unparsable {
                                line: read.text.clone(),
                                message,
                            }
                        })
                    })
                    .map(|snap| {
                        self.targets
                            .iter()
                            .map(|t| (t.port.clone(), snap.ports.get(&t.port).cloned()))
                            .collect()
                    })
            }
            Connection::Shell(_) => Err(SessionError::Transport(TransportError::Config(
                "the ovs platform runs commands; its transport must be local, ssh (exec) or command".into(),
            ))),
        };
        (transcript, result)
    }

    /// Runs one invocation, records it, and judges exit status and stderr.
    fn run(
        &self,
        exec: &mut dyn Exec,
        line: &Line,
        write: bool,
        settings: &Settings,
        transcript: &mut Transcript,
    ) -> Result<ExecOutput, SessionError> {
        let started = Instant::now();
        let deadline = (started + settings.command_timeout).min(settings.deadline);
        let argv = line.argv.clone().unwrap_or_default();
        transcript.round_trips += 1;
        log::debug!("{}: run {}", settings.device, line.text);
        let result = exec.exec(&argv, &line.text, deadline);
        if let Ok(o) = &result {
            log::debug!(
                "{}: exit status {} after {} ms",
                settings.device,
                o.status,
                started.elapsed().as_millis()
            );
        }
        let secrets = settings.enable_secret.iter().chain(&settings.secrets);
        let shown = match &result {
            Ok(o) => redact(format!("{}{}", o.stdout, o.stderr).trim_end(), secrets),
            Err(_) => String::new(),
        };
        transcript.commands.push(CommandRecord {
            input: line.text.clone(),
            output: shown,
            elapsed_ms: started.elapsed().as_millis() as u64,
        });
        let out = result.map_err(|e| match e {
            TransportError::Timeout { waited, .. } => SessionError::Timeout {
                awaited: format!("{:?} to finish", line.text),
                waited,
                tail: String::new(),
            },
            other => other.into(),
        })?;
        judge(&out, &line.text, write, self.timeout)?;
        if let Some(l) = out
            .stderr
            .lines()
            .find(|l| self.failures.iter().any(|r| r.is_match(l)))
        {
            return Err(SessionError::Rejected {
                line: line.text.clone(),
                indicator: if write {
                    format!(
                        "{} (catalog failure indicator; the transaction is committed in OVSDB)",
                        l.trim()
                    )
                } else {
                    l.trim().to_string()
                },
            });
        }
        Ok(out)
    }
}

/// Each port read, by name; `None` when OVSDB has no such port.
pub type ReadPorts = Vec<(String, Option<OvsdbPort>)>;

/// Whether a port read back is the state planned (row UUIDs and ovs-vswitchd's `error`
/// aside: neither is something the transaction sets).
fn same_state(read: Option<&OvsdbPort>, planned: Option<&OvsdbPort>) -> bool {
    match (read, planned) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            a.bridge == b.bridge
                && a.vlans == b.vlans
                && a.external_ids == b.external_ids
                && a.mtu_request == b.mtu_request
        }
        _ => false,
    }
}

fn describe(s: Option<&OvsdbPort>) -> String {
    match s {
        None => "no such port".into(),
        Some(p) => format!(
            "{} on {}{}",
            p.vlans.describe(),
            p.bridge.as_deref().unwrap_or("no bridge"),
            if p.external_ids.is_empty() {
                String::new()
            } else {
                format!(
                    ", external_ids {}",
                    p.external_ids
                        .iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(",")
                )
            }
        ),
    }
}

/// A request's ports prepared for reading only (`verify_port`).
pub fn prepare_read(
    req: &Request,
    device: &Device,
    platform: &Platform,
) -> Result<Prepared, Unsupported> {
    let mut as_reset = req.clone();
    as_reset.op = Op::ResetPort;
    let mut p = prepare(&as_reset, device, platform)?;
    p.op = Op::VerifyPort;
    Ok(p)
}

/// Last non-empty stderr line, without the program prefix.
fn last_error(stderr: &str) -> String {
    stderr
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.contains("The default log directory is"))
        .unwrap_or("")
        .trim_start_matches("ovs-vsctl: ")
        .to_string()
}

/// Judges an invocation by exit status and stderr. ovs-vsctl exits 1 on any error and
/// commits nothing; killed by its own `--timeout` (SIGALRM) a write may already be committed
/// in OVSDB while ovs-vswitchd has not confirmed it.
fn judge(out: &ExecOutput, line: &str, write: bool, timeout: u64) -> Result<(), SessionError> {
    if out.status == 0 {
        return Ok(());
    }
    let why = last_error(&out.stderr);
    let stderr = out.stderr.as_str();
    if stderr.contains("database connection failed") {
        let message = format!("{why} (check ovs_db, and that ovsdb-server is running)");
        return Err(SessionError::Transport(
            if stderr.contains("Permission denied") {
                TransportError::Denied {
                stage: "OVSDB connection".into(),
                message: format!("{why}: this account may not use the database socket; use ovs_vsctl = [\"sudo\", \"ovs-vsctl\"] or an ovs_db it may reach"),
            }
            } else {
                TransportError::Unreachable {
                    stage: "OVSDB connection".into(),
                    message,
                }
            },
        ));
    }
    if stderr.contains("Alarm clock") || stderr.contains("signal 14") {
        let awaited = if write {
            format!("ovs-vswitchd to apply the transaction (ovs-vsctl --timeout={timeout}); the change may be committed in OVSDB but not yet in the datapath: is ovs-vswitchd running?")
        } else {
            format!("OVSDB to answer (ovs-vsctl --timeout={timeout})")
        };
        return Err(SessionError::Timeout {
            awaited,
            waited: Duration::from_secs(timeout),
            tail: why,
        });
    }
    if out.status == 127 {
        return Err(SessionError::Transport(TransportError::Config(format!(
            "ovs-vsctl not found where the command ran (exit 127: {why}); set ovs_vsctl to its path"
        ))));
    }
    if out.status == 255 {
        // The ssh client's own failure (ovs-vsctl itself exits 0 or 1), through a `command`
        // transport wrapping `ssh`.
        if stderr.contains("Host key verification failed") || stderr.contains("Permission denied (")
        {
            return Err(SessionError::Transport(TransportError::Denied {
                stage: "ssh (transport command)".into(),
                message: why,
            }));
        }
        return Err(SessionError::Transport(TransportError::Unreachable {
            stage: "transport command".into(),
            message: if why.is_empty() {
                "exit status 255".into()
            } else {
                why
            },
        }));
    }
    Err(SessionError::Rejected {
        line: line.to_string(),
        indicator: if why.is_empty() {
            format!("exit status {}", out.status)
        } else {
            format!("exit status {}: {why}", out.status)
        },
    })
}

/// Notes from a successful write's stderr: ovs-vswitchd could not open a device (a
/// representor that does not exist yet: the port is in OVSDB and carries traffic once the
/// device appears).
fn stderr_warnings(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.contains("The default log directory is"))
        .map(|l| format!("ovs-vsctl: {}", l.trim_start_matches("ovs-vsctl: ")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::config::Config;
    use crate::request::RawRequest;
    use std::path::Path;

    fn device(extra: &str) -> Device {
        let text = format!(
            "[devices.dpu-7]\nplatform = \"ovs\"\ntransport = \"local\"\nallowed_vlans = [\"1-4094\"]\n{extra}"
        );
        Config::parse(Path::new("m.toml"), &text).unwrap().devices["dpu-7"].clone()
    }

    fn prepared(extra: &str, json: &str) -> Result<Prepared, Unsupported> {
        let cat = Catalog::builtin().unwrap();
        let r = Request::from_raw(RawRequest::from_json(json).unwrap()).unwrap();
        prepare(&r, &device(extra), cat.get("ovs").unwrap())
    }

    fn texts(p: &Plan) -> Vec<String> {
        p.lines.iter().map(|l| l.text.clone()).collect()
    }

    const PLUG: &str = r#"{"op":"plug_port","device":"dpu-7","port":"pf0vf3","vif_id":"vif-1",
        "mac":"AA:BB:CC:DD:EE:FF","node_uuid":"1be26c0b-03f2-4d2e-ae87-c02d7f33c123","vlan":120,"reason":"r"}"#;

    #[test]
    fn plug_is_one_transaction_after_one_read() {
        let p = prepared("ovs_db = \"unix:/run/openvswitch/db.sock\"", PLUG)
            .unwrap()
            .dry_plan();
        let t = texts(&p);
        assert_eq!(t.len(), 2, "{t:#?}");
        assert!(t[0].contains("--format=json"), "{}", t[0]);
        assert_eq!(
            t[1],
            "ovs-vsctl --db=unix:/run/openvswitch/db.sock --timeout=29 \
             -- --may-exist add-port br-int pf0vf3 \
             -- set Interface pf0vf3 'external_ids:attached-mac=\"aa:bb:cc:dd:ee:ff\"' \
             'external_ids:iface-id=\"vif-1\"' 'external_ids:iface-status=\"active\"' \
             'external_ids:node-uuid=\"1be26c0b-03f2-4d2e-ae87-c02d7f33c123\"' \
             -- set Port pf0vf3 tag=120 vlan_mode=access -- clear Port pf0vf3 trunks"
        );
        // argv is what local runs; text is what a remote shell gets.
        let argv = p.lines[1].argv.as_ref().unwrap();
        assert_eq!(argv.iter().filter(|a| *a == "--").count(), 4);
        assert!(argv.contains(&"external_ids:iface-id=\"vif-1\"".to_string()));
    }

    #[test]
    fn prefix_and_bridge_overrides() {
        let p = prepared(
            "ovs_vsctl = [\"sudo\", \"-n\", \"ovs-vsctl\"]\nbridge = \"br-dpu\"\ncommand_timeout = 5",
            r#"{"op":"unplug_port","device":"dpu-7","port":"pf0vf3","reason":"r"}"#,
        )
        .unwrap()
        .dry_plan();
        assert_eq!(
            texts(&p)[1],
            "sudo -n ovs-vsctl --timeout=4 -- --if-exists del-port br-dpu pf0vf3"
        );
        let p = prepared(
            "bridge = \"br-dpu\"",
            r#"{"op":"unplug_port","device":"dpu-7","port":"pf0vf3","bridge":"br-x","reason":"r"}"#,
        )
        .unwrap()
        .dry_plan();
        assert!(texts(&p)[1].ends_with("del-port br-x pf0vf3"), "{p:?}");
    }

    #[test]
    fn plug_without_optional_values_removes_stale_keys_and_tags() {
        let p = prepared(
            "",
            r#"{"op":"plug_port","device":"dpu-7","port":"pf0vf3","vif_id":"vif-1","reason":"r"}"#,
        )
        .unwrap()
        .dry_plan();
        let t = &texts(&p)[1];
        assert!(
            t.contains("-- remove Interface pf0vf3 external_ids attached-mac node-uuid"),
            "{t}"
        );
        assert!(
            t.ends_with("-- clear Port pf0vf3 tag trunks vlan_mode"),
            "{t}"
        );
    }

    #[test]
    fn unsupported_and_invalid_values_are_refused_before_anything_runs() {
        for (json, needle) in [
            (
                r#"{"op":"update_port","device":"dpu-7","port":"pf0vf3","mode":"access","native_vlan":5,"description":"x","reason":"r"}"#,
                "description is not supported on ovs",
            ),
            (
                r#"{"op":"update_lag","device":"dpu-7","lag":"1","members":["p0"],"reason":"r"}"#,
                "not supported",
            ),
            (
                r#"{"op":"plug_port","device":"dpu-7","port":"pf0vf3isfartoolong","vif_id":"v","reason":"r"}"#,
                "at most 15",
            ),
            (
                r#"{"op":"plug_port","device":"dpu-7","port":"br-int","vif_id":"v","reason":"r"}"#,
                "internal port",
            ),
        ] {
            let e = prepared("", json).unwrap_err();
            assert!(e.0.contains(needle), "{json}: {e}");
        }
        let bad = Config::parse(
            Path::new("m.toml"),
            "[devices.d]\nplatform = \"ovs\"\ntransport = \"local\"\novs_db = \"unix:/x y\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            bad.contains("devices.d.ovs_db") && bad.contains("invalid ovs_db"),
            "{bad}"
        );
    }

    #[test]
    fn db_targets() {
        for ok in [
            "unix:/run/openvswitch/db.sock",
            "tcp:127.0.0.1:6640",
            "ssl:[::1]:6640",
            "tcp:10.0.0.1:6641,tcp:10.0.0.2:6641",
        ] {
            assert!(crate::request::validate::ovs_db(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "/run/db.sock",
            "unix:",
            "tcp:1.2.3.4:1;reboot",
            "unix:/a b",
            "punix:/x",
        ] {
            assert!(crate::request::validate::ovs_db(bad).is_err(), "{bad}");
        }
        assert!(crate::request::validate::ovs_vsctl(&[]).is_err());
        assert!(crate::request::validate::ovs_vsctl(&["ovs-vsctl\n".into()]).is_err());
    }

    fn vl(tag: Option<u16>, trunks: &[u16], mode: Option<&str>) -> Vlans {
        Vlans {
            tag,
            trunks: trunks.iter().copied().collect(),
            vlan_mode: mode.map(str::to_string),
        }
    }

    #[test]
    fn vlan_transitions() {
        let flat = Vlans::default();
        let access10 = Vlans::access(10);
        // attach trunk: the idle access VLAN goes, the native VLAN stays.
        assert_eq!(
            next_vlans(&VlanChange::AddTrunk(120), &access10, 10),
            Some(vl(None, &[120], Some("trunk")))
        );
        let native = vl(Some(10), &[10, 100], Some("native-untagged"));
        assert_eq!(
            next_vlans(&VlanChange::AddTrunk(120), &native, 10),
            Some(vl(Some(10), &[10, 100, 120], Some("native-untagged")))
        );
        assert_eq!(
            next_vlans(&VlanChange::AddTrunk(120), &flat, 10),
            Some(vl(None, &[120], Some("trunk")))
        );
        // detach: removing the last VLAN restores the idle VLAN, never an empty trunk.
        assert_eq!(
            next_vlans(
                &VlanChange::Remove(120),
                &vl(None, &[120], Some("trunk")),
                10
            ),
            Some(Vlans::access(10))
        );
        assert_eq!(
            next_vlans(&VlanChange::Remove(120), &Vlans::access(120), DEAD_VLAN),
            Some(Vlans::access(DEAD_VLAN))
        );
        assert_eq!(
            next_vlans(&VlanChange::Remove(10), &native, 5),
            Some(vl(None, &[100], Some("trunk")))
        );
        assert_eq!(next_vlans(&VlanChange::Remove(130), &native, 5), None);
        assert_eq!(next_vlans(&VlanChange::Remove(130), &flat, 5), None);
        assert_eq!(
            next_vlans(
                &VlanChange::Trunk {
                    native: Some(10),
                    allowed: [100, 200].into()
                },
                &flat,
                5
            ),
            Some(vl(Some(10), &[10, 100, 200], Some("native-untagged")))
        );
    }

    #[test]
    fn vlan_columns_are_written_exactly() {
        assert_eq!(
            vlan_commands("p", &vl(Some(10), &[10, 20], Some("native-untagged"))),
            vec![argv(&[
                "set",
                "Port",
                "p",
                "tag=10",
                "trunks=[10,20]",
                "vlan_mode=native-untagged"
            ])]
        );
        assert_eq!(
            vlan_commands("p", &Vlans::default()),
            vec![argv(&["clear", "Port", "p", "tag", "trunks", "vlan_mode"])]
        );
    }

    const READ: &str = r#"{"data":[["br-int",["set",[["uuid","p1"],["uuid","p2"]]]],["br-ex",["uuid","p3"]]],"headings":["name","ports"]}
{"data":[[["uuid","p1"],"pf0vf3",120,["set",[]],"access",["uuid","i1"]],[["uuid","p2"],"br-int",["set",[]],["set",[]],["set",[]],["uuid","i2"]],[["uuid","p3"],"p0",["set",[]],["set",[10,20]],["set",[]],["uuid","i3"]]],"headings":["_uuid","name","tag","trunks","vlan_mode","interfaces"]}
{"data":[[["uuid","i1"],"pf0vf3",["map",[["iface-id","vif-1"],["iface-status","active"],["other","kept"]]],["set",[]],"could not open network device pf0vf3 (No such device)"],[["uuid","i2"],"br-int",["map",[]],["set",[]],["set",[]]],[["uuid","i3"],"p0",["map",[]],9000,["set",[]]]],"headings":["_uuid","name","external_ids","mtu_request","error"]}
"#;

    #[test]
    fn snapshot_parses_ovsdb_json() {
        let s = Snapshot::parse(READ).unwrap();
        assert_eq!(
            s.bridges,
            ["br-ex".to_string(), "br-int".to_string()].into()
        );
        let p = &s.ports["pf0vf3"];
        assert_eq!(p.bridge.as_deref(), Some("br-int"));
        assert_eq!(p.vlans, Vlans::access(120));
        assert_eq!(p.external_ids["iface-id"], "vif-1");
        assert!(p.error.as_deref().unwrap().contains("No such device"));
        let c = &s.ports["p0"];
        assert_eq!(
            (c.bridge.as_deref(), c.mtu_request),
            (Some("br-ex"), Some(9000))
        );
        assert_eq!(c.vlans.trunks, [10, 20].into());
        assert!(Snapshot::parse("{\"data\":[]}").is_err());
        assert!(Snapshot::parse("not json").is_err());
    }

    #[test]
    fn planning_against_state() {
        let s = Snapshot::parse(READ).unwrap();
        let prep = |json: &str| prepared("", json).unwrap();
        // Re-plug with the same values: nothing to send.
        let p = prep(
            r#"{"op":"plug_port","device":"dpu-7","port":"pf0vf3","vif_id":"vif-1","vlan":120,"reason":"r"}"#,
        );
        let plan = p.targets[0].plan(Some(&s)).ok().unwrap();
        assert!(!plan.changed(), "{:?}", plan.commands);
        // A port on another bridge is refused.
        let p =
            prep(r#"{"op":"attach_port","device":"dpu-7","port":"p0","vlan":120,"reason":"r"}"#);
        let Err(Refusal(why)) = p.targets[0].plan(Some(&s)) else {
            panic!("p0 is on br-ex")
        };
        assert!(why.contains("on bridge br-ex"), "{why}");
        // Unplug of an absent port: no commands, said so.
        let p = prep(r#"{"op":"unplug_port","device":"dpu-7","port":"pf0vf9","reason":"r"}"#);
        let plan = p.targets[0].plan(Some(&s)).ok().unwrap();
        assert!(!plan.changed() && plan.note.unwrap().contains("absent"));
        // Attach to a port that is not plugged.
        let p = prep(
            r#"{"op":"attach_port","device":"dpu-7","port":"pf0vf9","vlan":120,"reason":"r"}"#,
        );
        assert!(p.targets[0].plan(Some(&s)).is_err());
        // A missing bridge.
        let p = prep(
            r#"{"op":"plug_port","device":"dpu-7","port":"pf0vf9","bridge":"br-nope","vif_id":"v","reason":"r"}"#,
        );
        let Err(Refusal(why)) = p.targets[0].plan(Some(&s)) else {
            panic!("br-nope is missing")
        };
        assert!(why.contains("does not exist"), "{why}");
    }

    fn out(status: i32, stderr: &str) -> ExecOutput {
        ExecOutput {
            status,
            stdout: String::new(),
            stderr: stderr.into(),
        }
    }

    #[test]
    fn exit_status_and_stderr_are_judged() {
        use crate::report::exit::ExitKind;
        let kind = |o: ExecOutput, write: bool| {
            crate::report::error::Error::Session(judge(&o, "l", write, 9).unwrap_err()).kind()
        };
        assert!(judge(
            &out(0, "ovs-vsctl: Error detected while setting up 'pf0vf3'"),
            "l",
            true,
            9
        )
        .is_ok());
        assert_eq!(
            kind(out(1, "ovs-vsctl: no row \"pf0vf3\" in table Port\n"), true),
            ExitKind::DeviceRejected
        );
        assert_eq!(
            kind(out(1, "ovs-vsctl: unix:/x.sock: database connection failed (No such file or directory)\n"), false),
            ExitKind::Unreachable
        );
        assert_eq!(
            kind(
                out(
                    1,
                    "ovs-vsctl: unix:/x.sock: database connection failed (Permission denied)\n"
                ),
                false
            ),
            ExitKind::NotPermitted
        );
        assert_eq!(
            kind(out(-1, "2026-01-01T00:00:00Z|00002|fatal_signal|WARN|terminating with signal 14 (Alarm clock)\n"), true),
            ExitKind::Temporary
        );
        assert_eq!(
            kind(out(127, "sh: 1: ovs-vsctl: not found"), true),
            ExitKind::Config
        );
        assert_eq!(
            kind(
                out(
                    255,
                    "ssh: connect to host 127.0.0.1 port 1: Connection refused\n"
                ),
                false
            ),
            ExitKind::Unreachable
        );
        assert_eq!(
            kind(out(255, "Host key verification failed.\n"), false),
            ExitKind::NotPermitted
        );
        let w = stderr_warnings("ovs-vsctl: Error detected while setting up 'pf0vf3': could not open network device pf0vf3 (No such device).  See ovs-vswitchd log for details.\novs-vsctl: The default log directory is \"/var/log/openvswitch\".\n");
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("ovs-vsctl: Error detected"), "{w:?}");
    }
}
