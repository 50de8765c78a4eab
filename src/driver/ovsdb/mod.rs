//! The `ovsdb` driver (`kind = "ovsdb"`, the `ovs` platform): Open vSwitch on a SmartNIC /
//! DPU, driven with `ovs-vsctl`.
//!
//! The driver kind for what one-template-per-line cannot say. Every change a
//! request makes is **one** `ovs-vsctl` invocation whose commands are joined with `--`, so
//! OVSDB commits all of it or none of it. Before changing anything the current state is read
//! (one `--format=json` invocation), so that the transaction can be computed from it (adding
//! a VLAN to a trunk keeps its native VLAN), refused with a reason (port on another bridge,
//! bridge missing, port not plugged), or skipped when the port is already as requested
//! (`changed: false`). The catalog (`actions` of `[platforms.ovs]` in `plugins.toml`) still
//! decides which operations the platform supports; this module decides how they are written.
//! Both invocations run in the session's exec runner (so they are recorded, coalesced and
//! dry-run like every other platform's lines); only their judging is ovs-vsctl's own.
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
mod plan;

use plan::{argv, vlan_change, Intent, PortPlan, Refusal, Target};
#[cfg(test)]
use plan::{next_vlans, vlan_commands, VlanChange};

use crate::driver::{self, Applied, Done, Driver, Failure, Guard, Removal, Summary};
use crate::request::{Op, PortChange, Request};
use crate::session::plan::Line;
use crate::session::{Progress, Session, SessionError, Transcript};
use crate::transport::{ExecOutput, TransportError};
pub use crate::verify::parse::ovsdb::normalised;
use crate::verify::parse::ovsdb::{
    OvsdbPort, Snapshot, BRIDGE_COLUMNS, DEAD_VLAN, IFACE_COLUMNS, PORT_COLUMNS,
};
use crate::verify::Check;

/// Said of a write whose exit status was 0 but whose output the catalog calls a failure.
const COMMITTED: &str = "the transaction is committed in OVSDB";
/// The `external_ids` keys `plug_port` owns on the representor's Interface row.
pub const IFACE_IDS: [&str; 5] = [
    "iface-id",
    "iface-status",
    "attached-mac",
    "node-uuid",
    PLUGGED_BY,
];
/// The `external_ids` key (value `mercury`) that marks a port Mercury plugged: only such
/// ports are changed or unplugged, never patch ports, uplinks or ports another agent
/// manages.
pub const PLUGGED_BY: &str = "plugged-by";
/// Shown with `--dry-run`: the real transaction depends on state a dry run does not read.
pub const DRY_RUN_NOTE: &str = "ovs: a dry run does not read OVSDB; the transaction shown assumes a port that needs the change. A real run reads the port first and sends less (or nothing) when it is already as requested";

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
    failures: Vec<crate::catalog::Pattern>,
    /// Read OVSDB again after the transaction (`--verify`).
    verify: bool,
    /// `verify_port`: the ports to read and what the request expects of them.
    checks: Vec<Check>,
    /// Check mode: read and plan, send nothing.
    check: bool,
}

/// `--timeout` for ovs-vsctl: a second under the per-command deadline, so ovs-vsctl gives up
/// (and says why) before Mercury kills it.
fn vsctl_timeout(command_timeout: Duration) -> u64 {
    command_timeout.as_secs_f64().ceil().max(2.0) as u64 - 1
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
    let device_bridge = device.default_bridge();
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
        verify: false,
        checks: Vec::new(),
        check: false,
    };
    if device.shut_unused_ports {
        out.warnings.push(format!(
            "devices.{}.shut_unused_ports has no effect on ovs: ovs-vsctl cannot set a port's administrative state; unused ports get the idle VLAN instead",
            device.name
        ));
    }
    // Port names were checked against the platform's port pattern (a network device name
    // of at most 15 bytes) when the request was resolved.
    let idle_of = |c: &PortChange| {
        c.default_vlan
            .or(device.default_vlan)
            .map(|v| v.get())
            .unwrap_or(DEAD_VLAN)
    };
    match req.op {
        Op::PlugPort | Op::UnplugPort => {
            let (c, p) = req
                .plugged()
                .ok_or_else(|| Unsupported("no port to plug".into()))?;
            let bridge = p.bridge.clone().unwrap_or_else(|| device_bridge.clone());
            crate::request::validate::simple_name("bridge", &bridge, 15)
                .map_err(|e| Unsupported(e.0))?;
            let port = c.port.clone();
            if port == bridge {
                return Err(Unsupported(format!(
                    "port {port} is the bridge's own internal port"
                )));
            }
            // The node a plug is marked for, and the node an unplug must find the port
            // marked for (a representor another node holds is refused).
            let node = req
                .meta
                .node_uuid
                .as_deref()
                .map(|u| crate::request::validate::uuid("node_uuid", u))
                .transpose()
                .map_err(|e| Unsupported(e.0))?;
            let intent = if req.op == Op::PlugPort {
                platform.require("plug")?;
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
                Intent::Plug {
                    vlan: p.vlan.map(|v| v.get()),
                    ids: BTreeMap::from([
                        ("iface-id", Some(vif)),
                        ("iface-status", Some("active".to_string())),
                        ("attached-mac", mac),
                        ("node-uuid", node),
                        (PLUGGED_BY, Some("mercury".to_string())),
                    ]),
                }
            } else {
                platform.require("unplug")?;
                Intent::Unplug { node }
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
                let port = c.port.clone();
                if port == device_bridge {
                    return Err(Unsupported(format!(
                        "port {port} is the bridge's own internal port"
                    )));
                }
                let change = vlan_change(req.op, c, platform)?;
                if c.description.is_some() {
                    platform.require("description")?;
                }
                if c.mtu.is_some() {
                    platform.require("mtu")?;
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
            platform.require(if req.op == Op::AddNetwork {
                "network_add"
            } else {
                "network_delete"
            })?;
            out.nothing = Some(format!(
                "{}: nothing to do on {}: an OVS bridge carries any VLAN a port is tagged with, so VLANs are not created or deleted",
                req.op.name(),
                device.name
            ));
        }
        Op::UpdateLag | Op::DeleteLag => {
            platform.require(if req.op == Op::UpdateLag {
                "lag_create"
            } else {
                "lag_delete"
            })?;
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

/// The `ovsdb` driver kind.
pub struct Ovsdb;

impl Driver for Ovsdb {
    fn prepare<'p>(
        &self,
        req: &Request,
        device: &'p Device,
        platform: &'p Platform,
    ) -> Result<Box<dyn driver::Prepared + 'p>, Unsupported> {
        let mut p = if req.op == Op::VerifyPort {
            let mut p = prepare_read(req, device, platform)?;
            p.checks = crate::verify::checks(req, device, platform)?;
            p
        } else {
            prepare(req, device, platform)?
        };
        p.verify = req.verify;
        p.check = req.check;
        Ok(Box::new(p))
    }
}

impl driver::Prepared for Prepared {
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    fn mutates(&self) -> bool {
        self.op != Op::VerifyPort && !self.check
    }

    fn plugged(&self, session: &mut Session, deadline: Instant) -> Option<driver::PluggedRead> {
        let mut transcript = Transcript::default();
        let line = self.card_line();
        let read = self
            .read(session, &line, deadline, &mut transcript)
            .map_err(Failure::from)
            .map(|snap| snap.map(|s| plugged_by_mercury(&s)).unwrap_or_default());
        Some((transcript, read))
    }

    fn preflight(&self, session: &mut Session, deadline: Instant, guard: Guard) -> Option<Applied> {
        // Check mode of the same request: one read, every port planned (and refused) as the
        // real run will be, nothing written.
        let mut checked = self.clone();
        checked.check = true;
        checked.verify = false;
        Some(checked.apply(session, deadline, guard))
    }

    fn apply(&self, session: &mut Session, deadline: Instant, guard: Guard) -> Applied {
        let mut transcript = Transcript::default();
        let mut progress = Progress::default();
        let result = self.run_in(session, deadline, guard, &mut transcript, &mut progress);
        Applied {
            transcript,
            result,
            progress,
        }
    }
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

    /// The whole card in one read: every bridge, Port and Interface row (a card holds tens
    /// of ports, not thousands).
    fn card_line(&self) -> Line {
        let mut a = self.base.clone();
        a.push("--format=json".into());
        for (columns, table) in [
            (BRIDGE_COLUMNS, "Bridge"),
            (PORT_COLUMNS, "Port"),
            (IFACE_COLUMNS, "Interface"),
        ] {
            a.extend(argv(&[
                "--",
                &format!("--columns={columns}"),
                "list",
                table,
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

    /// Reads OVSDB, plans every port against it, and runs the one transaction if anything
    /// needs changing; with `verify`, reads OVSDB again and compares each port with the
    /// state the transaction was computed to produce. A dry session answers no read: the
    /// ports are planned as if they needed the change.
    fn run_in(
        &self,
        session: &mut Session,
        deadline: Instant,
        guard: Guard,
        transcript: &mut Transcript,
        progress: &mut Progress,
    ) -> Result<Done, Failure> {
        let dry = session.is_dry();
        let mut warnings = Vec::new();
        if dry && self.nothing.is_none() {
            warnings.push(DRY_RUN_NOTE.to_string());
        }
        if let Some(msg) = &self.nothing {
            return Ok(Done {
                summary: Summary::Said(msg.clone()),
                ..Done::default()
            });
        }
        let read = self.read_line();
        let snap = self.read(session, &read, deadline, transcript)?;
        if self.op == Op::VerifyPort {
            let Some(snap) = snap else {
                return Ok(Done::default());
            };
            let states = self
                .checks
                .iter()
                .map(|c| normalised(snap.ports.get(&c.port)))
                .collect();
            return Ok(driver::readback::verify_port(
                &self.device,
                &self.checks,
                states,
            ));
        }
        let mut plans: Vec<PortPlan> = Vec::new();
        for t in &self.targets {
            let plan = t
                .plan(snap.as_ref())
                .map_err(|Refusal(why)| SessionError::Rejected {
                    line: format!("{} {}", self.op.name(), t.port),
                    indicator: why,
                })?;
            plans.push(plan);
        }
        let changed = plans.iter().any(PortPlan::changed);
        if snap.is_some() {
            // What each port carries now and would not afterwards (unplugging takes off
            // all it carries).
            let removals: Vec<Removal> = plans
                .iter()
                .filter(|p| p.changed())
                .map(|p| Removal {
                    port: p.port.clone(),
                    vlans: Some(
                        carried(p.before.as_ref())
                            .difference(&carried(p.after.as_ref()))
                            .copied()
                            .collect(),
                    ),
                })
                .collect();
            guard(&removals)?;
        }
        if self.check {
            let lines: Vec<String> = self
                .write_line(&plans)
                .map(|l| l.text)
                .into_iter()
                .collect();
            return Ok(Done {
                changed,
                summary: Summary::Said(format!(
                    "check: {} would {} on {}; nothing sent",
                    self.op.name(),
                    if changed {
                        "change OVSDB"
                    } else {
                        "change nothing"
                    },
                    self.device
                )),
                data: json!({
                    "check": true,
                    "would_send": lines,
                    "ports": plans.iter().map(|p| json!({
                        "port": p.port, "bridge": p.bridge, "changed": p.changed(),
                        "before": p.before, "after": p.after,
                    })).collect::<Vec<_>>(),
                }),
                diff: Some(Value::Array(
                    plans
                        .iter()
                        .map(|p| {
                            json!({
                                "before_header": format!("{} (before)", p.port),
                                "after_header": format!("{} (after)", p.port),
                                "before": p.before,
                                "after": p.after,
                            })
                        })
                        .collect(),
                )),
                warnings,
                read: Vec::new(),
                drift: None,
            });
        }
        let mut drift = None;
        if let Some(write) = self.write_line(&plans) {
            // One transaction: committed whole or not at all, unless ovs-vsctl gave up
            // waiting (--timeout) or the connection failed under it.
            let out = match self.run(session, &write, true, deadline, transcript) {
                Ok(out) => out,
                Err(e) => {
                    let unknown = !matches!(e, SessionError::Rejected { .. })
                        || e.to_string().contains(COMMITTED);
                    if unknown {
                        progress.in_flight = Some(write.text.clone());
                        progress.took_effect = true;
                    } else {
                        progress.rejected = Some(write.text.clone());
                    }
                    return Err(e.into());
                }
            };
            progress.accepted.push(write.text.clone());
            progress.took_effect = true;
            session.mark_applied();
            warnings.extend(stderr_warnings(&out.stderr));
            if self.verify {
                if let Some(again) = self.read(session, &read, deadline, transcript)? {
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
                        drift = Some(format!(
                            "verify: the change was committed but OVSDB does not show it: {}",
                            wrong.join("; ")
                        ));
                    }
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
        let ports: Vec<Value> = plans
            .iter()
            .map(|p| {
                json!({
                    "port": p.port,
                    "bridge": p.bridge,
                    "changed": p.changed(),
                    "absent": p.before.is_none() && p.after.is_none(),
                    "before": p.before,
                    "after": p.after,
                })
            })
            .collect();
        let mut data = json!({ "ports": ports });
        let mut diff = None;
        if self.verify && !dry {
            diff = Some(Value::Array(
                plans
                    .iter()
                    .map(|p| {
                        json!({
                            "before_header": format!("{} (before)", p.port),
                            "after_header": format!("{} (after)", p.port),
                            "before": p.before,
                            "after": p.after,
                        })
                    })
                    .collect(),
            ));
            data["verified"] = json!(drift.is_none());
            data["skipped"] = json!(!changed);
        }
        Ok(Done {
            changed: changed && !dry,
            summary: Summary::Said(msg),
            data: if dry { Value::Null } else { data },
            diff,
            warnings,
            drift,
            read: Vec::new(),
        })
    }

    /// The read invocation's snapshot (`None` in a dry session, which answers nothing).
    fn read(
        &self,
        session: &mut Session,
        read: &Line,
        deadline: Instant,
        transcript: &mut Transcript,
    ) -> Result<Option<Snapshot>, SessionError> {
        let out = self.run(session, read, false, deadline, transcript)?;
        if session.is_dry() {
            return Ok(None);
        }
        Snapshot::parse(&out.stdout)
            .map(Some)
            .map_err(|message| SessionError::Unparsable {
                line: read.text.clone(),
                message,
            })
    }

    /// Runs one invocation in the session's exec runner and judges exit status and stderr
    /// the way ovs-vsctl means them.
    fn run(
        &self,
        session: &mut Session,
        line: &Line,
        write: bool,
        deadline: Instant,
        transcript: &mut Transcript,
    ) -> Result<ExecOutput, SessionError> {
        let ran = session.exec(line, deadline);
        let shown = ran
            .transcript
            .commands
            .last()
            .map(|c| c.output.clone())
            .unwrap_or_default();
        transcript.append(ran.transcript);
        let out = ran.result?;
        judge(&out, &line.text, &shown, write, self.timeout)?;
        if let Some(l) = out
            .stderr
            .lines()
            .find(|l| self.failures.iter().any(|r| r.is_match(l)))
        {
            return Err(SessionError::Rejected {
                line: line.text.clone(),
                indicator: if write {
                    format!("{} (catalog failure indicator; {COMMITTED})", l.trim())
                } else {
                    l.trim().to_string()
                },
            });
        }
        Ok(out)
    }
}

/// The ports of a card snapshot that carry Mercury's mark ([`PLUGGED_BY`]), with the VLANs
/// each carries (`None`: every VLAN of its bridge — no tag and no trunks list).
pub fn plugged_by_mercury(snap: &Snapshot) -> driver::Plugged {
    snap.ports
        .iter()
        .filter(|(_, p)| {
            p.bridge.is_some()
                && p.external_ids.get(PLUGGED_BY).map(String::as_str) == Some("mercury")
        })
        .map(|(name, p)| {
            let vlans = carried(Some(p));
            // A trunk with no list carries every VLAN, and so does a port with no VLAN columns.
            let every =
                p.vlans.trunks.is_empty() && (!p.vlans.is_access() || p.vlans.tag.is_none());
            (name.clone(), (!every).then_some(vlans))
        })
        .collect()
}

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
fn judge(
    out: &ExecOutput,
    line: &str,
    shown: &str,
    write: bool,
    timeout: u64,
) -> Result<(), SessionError> {
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
    Err(crate::session::judge_status(out, line, shown))
}

/// The VLANs an OVS port carries: its tag and tagged list. A port with neither (flat)
/// carries every VLAN of the bridge, none in particular.
fn carried(p: Option<&OvsdbPort>) -> BTreeSet<u16> {
    p.map(|p| {
        p.vlans
            .tag
            .into_iter()
            .chain(p.vlans.trunks.iter().copied())
            .collect()
    })
    .unwrap_or_default()
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
    use crate::verify::parse::ovsdb::Vlans;
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

    /// The lines a dry session records for `p`: what `--dry-run` shows.
    fn texts(p: &Prepared) -> Vec<String> {
        use crate::session::Settings;
        let cat = Catalog::builtin().unwrap();
        let platform = cat.get("ovs").unwrap();
        let settings = Settings {
            device: "dpu-7".into(),
            command_timeout: Duration::from_secs(30),
            deadline: Instant::now() + Duration::from_secs(30),
            enable_secret: None,
            secrets: vec![],
            save: false,
        };
        let (mut s, _) = Session::dry(platform, &settings);
        let a = driver::Prepared::apply(p, &mut s, settings.deadline, &|_| Ok(()));
        a.result.unwrap();
        a.transcript.commands.into_iter().map(|c| c.input).collect()
    }

    const PLUG: &str = r#"{"op":"plug_port","device":"dpu-7","port":"pf0vf3","vif_id":"vif-1",
        "mac":"AA:BB:CC:DD:EE:FF","node_uuid":"1be26c0b-03f2-4d2e-ae87-c02d7f33c123","vlan":120,"reason":"r"}"#;

    #[test]
    fn plug_is_one_transaction_after_one_read() {
        let p = prepared("ovs_db = \"unix:/run/openvswitch/db.sock\"", PLUG).unwrap();
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
             'external_ids:plugged-by=\"mercury\"' \
             -- set Port pf0vf3 tag=120 vlan_mode=access -- clear Port pf0vf3 trunks"
        );
        // argv is what local runs; text is what a remote shell gets.
        let write = p
            .write_line(&[p.targets[0].plan(None).ok().unwrap()])
            .unwrap();
        let argv = write.argv.as_ref().unwrap();
        assert_eq!(argv.iter().filter(|a| *a == "--").count(), 4);
        assert!(argv.contains(&"external_ids:iface-id=\"vif-1\"".to_string()));
    }

    #[test]
    fn prefix_and_bridge_overrides() {
        let p = prepared(
            "ovs_vsctl = [\"sudo\", \"-n\", \"ovs-vsctl\"]\nbridge = \"br-dpu\"\ncommand_timeout = 5",
            r#"{"op":"unplug_port","device":"dpu-7","port":"pf0vf3","reason":"r"}"#,
        )
        .unwrap();
        assert_eq!(
            texts(&p)[1],
            "sudo -n ovs-vsctl --timeout=4 -- --if-exists del-port br-dpu pf0vf3"
        );
        let p = prepared(
            "bridge = \"br-dpu\"",
            r#"{"op":"unplug_port","device":"dpu-7","port":"pf0vf3","bridge":"br-x","reason":"r"}"#,
        )
        .unwrap();
        assert!(texts(&p)[1].ends_with("del-port br-x pf0vf3"), "{p:?}");
    }

    #[test]
    fn plug_without_optional_values_removes_stale_keys_and_tags() {
        let p = prepared(
            "",
            r#"{"op":"plug_port","device":"dpu-7","port":"pf0vf3","vif_id":"vif-1","reason":"r"}"#,
        )
        .unwrap();
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
{"data":[[["uuid","i1"],"pf0vf3",["map",[["iface-id","vif-1"],["iface-status","active"],["other","kept"],["plugged-by","mercury"]]],["set",[]],"could not open network device pf0vf3 (No such device)"],[["uuid","i2"],"br-int",["map",[]],["set",[]],["set",[]]],[["uuid","i3"],"p0",["map",[]],9000,["set",[]]]],"headings":["_uuid","name","external_ids","mtu_request","error"]}
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
            crate::report::error::Error::Session(judge(&o, "l", &o.stderr, write, 9).unwrap_err())
                .kind()
        };
        let warned = out(0, "ovs-vsctl: Error detected while setting up 'pf0vf3'");
        assert!(judge(&warned, "l", &warned.stderr, true, 9).is_ok());
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
