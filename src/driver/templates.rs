//! The `templates` driver (`kind = "cli"` / `"exec"`): turns a validated request into the
//! ordered lines for one platform from the catalog's templates, and with `--verify` reads
//! the ports back through the platform's show lines.
//!
//! The composition rules live here, once, for every platform: remove the idle VLAN before
//! plugging and restore it after unplugging, shut/enable unused ports when configured, trunk
//! native VLAN plus tagged list (the native VLAN is always in the allowed list), one
//! `interface` block per port however many actions it needs, networks and LAGs created
//! before ports use them and deleted after. The platform's templates only say how each
//! action is typed. Session concerns (modes, commit, save) are not here: see `session`.
//!
//! Reads are batched for the session: every checked port's show lines go in one
//! `Session::read` (with the VLAN table when the change needs it, where one read costs one
//! round trip: `Platform::batches_reads`), so that a CLI that takes typed-ahead lines reads
//! before a change in one round trip, and after it in the same batch as the way out of
//! configuration mode, and an `exec_shell` platform reads on one exec channel.

use std::collections::BTreeMap;
use std::time::Instant;

use super::{
    readback, Applied, Done, Driver, Failure, Guard, Prepared, Removal, Summary, Unsupported,
};
use crate::catalog::{Kind, Platform, Template, PORT_ACTIONS};
use crate::config::Device;
use crate::request::vlan::{Vlan, VlanSet};
use crate::request::{Aggregation, LagSpec, Op, PortChange, PortMode, Request};
use crate::session::plan::{Line, Plan};
use crate::session::{Progress, Session, SessionError, Transcript};
use crate::verify::{self, Check, PortReport, PortState};

pub mod batch;

/// Template variables for one action.
type Vars = BTreeMap<&'static str, String>;

enum Block {
    /// Actions outside any port context.
    Global(&'static str, Vars),
    /// Actions of one port (or, with LAG variables, of a LAG interface).
    Port {
        port: String,
        lag: Option<Vars>,
        actions: Vec<(&'static str, Vars)>,
    },
}

impl Block {
    fn port(port: String, actions: Vec<(&'static str, Vars)>) -> Block {
        Block::Port {
            port,
            lag: None,
            actions,
        }
    }
}

/// What the driver knows of a port before changing it.
#[derive(Debug, Clone, Copy)]
pub enum Before<'s> {
    /// Read from the device just now.
    Read(&'s PortState),
    /// A dry run: planned for a port that needs the change (an idle access port).
    Assumed,
    /// Not read (the device's `verify` is off, or the platform has no reader).
    Unread,
}

/// Builds the plan for a mutating request, for ports as a dry run assumes them.
pub fn plan(req: &Request, device: &Device, platform: &Platform) -> Result<Plan, Unsupported> {
    plan_for(req, device, platform, &|_| Before::Assumed)
}

/// Builds the plan for a mutating request from what is known of each port: with the
/// ports read, a detach takes the VLAN off wherever the port carries it, a port becoming a
/// trunk carries exactly the VLAN attached (not the platform's default of all), and a reset
/// on a platform that removes VLANs one by one removes those the port carries.
pub fn plan_for<'s>(
    req: &Request,
    device: &Device,
    platform: &Platform,
    before: &dyn Fn(&str) -> Before<'s>,
) -> Result<Plan, Unsupported> {
    let mut first: Vec<Block> = Vec::new();
    let mut ports: Vec<Block> = Vec::new();
    let mut last: Vec<Block> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    match req.op {
        Op::AttachPort | Op::DetachPort | Op::UpdatePort | Op::ResetPort => {
            let mut restored = std::collections::BTreeSet::new();
            for c in &req.ports {
                let actions =
                    port_actions(req.op, c, device, platform, &mut warnings, before(&c.port))?;
                let idle = c.default_vlan.or(device.default_vlan);
                for (action, vars) in &actions {
                    if *action == "access_set"
                        && idle.is_some_and(|i| vars["vlan"] == i.to_string())
                    {
                        restored.extend(idle);
                    }
                }
                ports.push(Block::port(c.port.clone(), actions));
            }
            // `ensure_idle_vlan`: the idle VLAN a port goes back to is created first where
            // missing (and left unrenamed where present).
            if platform.option_on("ensure_idle_vlan") {
                for vlan in restored {
                    first.push(Block::Global(
                        "network_ensure",
                        Vars::from([("vlan", vlan.to_string())]),
                    ));
                }
            }
        }
        Op::AddNetwork | Op::DeleteNetwork => {
            let n = req
                .network
                .as_ref()
                .ok_or_else(|| Unsupported("no network".into()))?;
            let vars = Vars::from([("vlan", n.vlan.to_string()), ("vlan_name", n.name.clone())]);
            let action = if req.op == Op::AddNetwork {
                "network_add"
            } else {
                "network_delete"
            };
            first.push(Block::Global(action, vars));
        }
        Op::UpdateLag | Op::DeleteLag => {
            let lag = req
                .lag
                .as_ref()
                .ok_or_else(|| Unsupported("no lag".into()))?;
            let first_action = if req.op == Op::UpdateLag {
                "lag_create"
            } else {
                "lag_delete"
            };
            platform.template(first_action).map_err(Unsupported)?;
            let (iface, id) = lag_interface(platform, lag)?;
            let mode_kw = lacp_keyword(platform, lag.aggregation);
            let base = Vars::from([("lag", iface.clone()), ("lag_id", id.clone())]);
            let with_mode = |mut v: Vars| {
                v.insert("lacp_mode", mode_kw.clone());
                v
            };
            if req.op == Op::UpdateLag {
                let mut create = with_mode(base.clone());
                create.insert("members", lag.members.join(","));
                first.push(Block::Global("lag_create", create));
                for m in &lag.members {
                    let mut v = with_mode(base.clone());
                    v.insert("port", m.clone());
                    ports.push(Block::port(m.clone(), vec![("lag_member_add", v)]));
                }
                if let Some(l2) = &lag.l2 {
                    let mut c = l2.clone();
                    c.port = iface.clone();
                    ports.push(Block::Port {
                        port: iface.clone(),
                        lag: Some(base.clone()),
                        actions: port_actions(
                            Op::UpdatePort,
                            &c,
                            device,
                            platform,
                            &mut warnings,
                            Before::Assumed,
                        )?,
                    });
                }
            } else {
                for m in &lag.members {
                    let mut v = base.clone();
                    v.insert("port", m.clone());
                    let mut actions = vec![("lag_member_remove", v)];
                    if platform.lag_delete_resets_members {
                        // The ex-member keeps the LAG's VLANs (IOS): back to idle.
                        let c = PortChange {
                            port: m.clone(),
                            ..PortChange::default()
                        };
                        actions.extend(port_actions(
                            Op::ResetPort,
                            &c,
                            device,
                            platform,
                            &mut warnings,
                            before(m),
                        )?);
                    }
                    ports.push(Block::port(m.clone(), actions));
                }
                last.push(Block::Global("lag_delete", base));
            }
        }
        Op::PlugPort | Op::UnplugPort => {
            let (c, p) = req
                .plugged()
                .ok_or_else(|| Unsupported("no port to plug".into()))?;
            let bridge = p.bridge.clone().unwrap_or_else(|| device.default_bridge());
            let mut v = Vars::from([("port", c.port.clone()), ("bridge", bridge)]);
            if req.op == Op::PlugPort {
                v.insert("vif_id", p.vif_id.clone().unwrap_or_default());
                v.insert("mac", p.mac.clone().unwrap_or_default());
                v.insert("node_uuid", req.meta.node_uuid.clone().unwrap_or_default());
                v.insert("vlan", p.vlan.map(|x| x.to_string()).unwrap_or_default());
            }
            let action = if req.op == Op::PlugPort {
                "plug"
            } else {
                "unplug"
            };
            first.push(Block::Global(action, v));
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

    let mut out = Plan {
        warnings,
        ..Plan::default()
    };
    for block in first.iter().chain(&ports).chain(&last) {
        render_block(platform, block, &mut out)?;
    }
    if out.lines.is_empty() {
        // Supported, but nothing to type (OVS has no VLAN objects): say so rather than
        // report a change that did not happen.
        out.warnings.push(format!(
            "{} needs no configuration lines on {}",
            req.op.name(),
            platform.name
        ));
    }
    Ok(out)
}

/// The actions one port needs for `op`, in order (the composition rules).
fn port_actions(
    op: Op,
    c: &PortChange,
    device: &Device,
    platform: &Platform,
    warnings: &mut Vec<String>,
    before: Before<'_>,
) -> Result<Vec<(&'static str, Vars)>, Unsupported> {
    let port = c.port.clone();
    let read = match before {
        Before::Read(s) => Some(s),
        Before::Assumed | Before::Unread => None,
    };
    let v = |vlan: Vlan| Vars::from([("port", port.clone()), ("vlan", vlan.to_string())]);
    let p = || Vars::from([("port", port.clone())]);
    let idle = c.default_vlan.or(device.default_vlan);
    let shut = device.shut_unused_ports;
    let mut a: Vec<(&'static str, Vars)> = Vec::new();
    // A port read as a LAG member leaves the LAG before it is declared on its own or reset:
    // its L2 settings would otherwise fight the LAG interface's (and a port back at idle is
    // in no LAG).
    if let Some(lag) = read
        .and_then(|s| s.lag.as_deref())
        .filter(|_| matches!(op, Op::UpdatePort | Op::ResetPort))
    {
        let spec = LagSpec {
            name: lag.to_string(),
            members: Vec::new(),
            aggregation: Aggregation::Lacp,
            l2: None,
        };
        let (iface, id) = lag_interface(platform, &spec)?;
        a.push((
            "lag_member_remove",
            Vars::from([("port", port.clone()), ("lag", iface), ("lag_id", id)]),
        ));
    }
    // A port that may be routed (NX-OS, OS9, AOS-CX) is made a switch port before any VLAN
    // is put on it.
    if matches!(op, Op::AttachPort | Op::UpdatePort) && platform.supports("port_l2") {
        a.push(("port_l2", p()));
    }
    match op {
        Op::AttachPort => {
            let vlan = c
                .vlan
                .ok_or_else(|| Unsupported("attach_port needs a vlan".into()))?;
            let trunk = c.mode == Some(PortMode::Trunk);
            let is_trunk = read.is_some_and(|s| s.mode.as_deref() == Some("trunk"));
            // The untagged VLAN the port leaves: the one read, else the idle VLAN.
            let current = match read {
                Some(s) if !is_trunk => s.access_vlan.and_then(|x| Vlan::new(x.into()).ok()),
                Some(_) => None,
                None => idle,
            };
            if !(trunk && is_trunk) {
                match current.filter(|i| *i != vlan) {
                    Some(old) if trunk && platform.native_is_access => warnings.push(format!(
                        "on {} the untagged VLAN {old} is the port's access VLAN, which a trunk uses as its native VLAN: it was left in place; declare the trunk with update_port to set or clear it",
                        platform.name
                    )),
                    Some(old) => a.push(("access_remove", v(old))),
                    None => {}
                }
            }
            if trunk && is_trunk {
                a.push(("allowed_add", v(vlan)));
            } else if trunk {
                // A port becoming a trunk: where a trunk carries every VLAN unless told
                // otherwise (IOS, NX-OS, EOS, ...), adding one VLAN would leave all of them
                // open. Set the list to exactly this VLAN.
                a.push(("trunk_mode", p()));
                if trunk_default_all(platform) {
                    if matches!(before, Before::Unread) {
                        return Err(Unsupported(format!(
                            "attach_port mode trunk on {} needs the port read first: a port that becomes a trunk there carries every VLAN unless its list is set, and adding to an existing trunk must keep its VLANs; turn verify on for the device, or declare the whole trunk with update_port",
                            platform.name
                        )));
                    }
                    let only: VlanSet = [vlan].into_iter().collect();
                    a.push(("allowed_set", vlans_vars(&port, &only)));
                } else {
                    a.push(("allowed_add", v(vlan)));
                }
            } else {
                a.push(("access_set", v(vlan)));
            }
            if shut {
                a.push(("enable", p()));
            }
        }
        Op::DetachPort => {
            let vlan = c
                .vlan
                .ok_or_else(|| Unsupported("detach_port needs a vlan".into()))?;
            let id = vlan.get();
            // Read: take the VLAN off where the port carries it (nothing when it does not).
            // Not read: the request says (mode trunk: tagged; else the access VLAN).
            let (mut untagged, mut tagged, mut native) = match read {
                Some(s) => (
                    s.access_vlan == Some(id) && s.mode.as_deref() != Some("trunk"),
                    s.allowed_vlans.contains(&id) && s.mode.as_deref() != Some("access"),
                    s.native_vlan == Some(id),
                ),
                None => {
                    let t = c.mode == Some(PortMode::Trunk);
                    (!t, t, false)
                }
            };
            // `detach_all` (Pluribus `unplug = all`): a port that carries the VLAN, however,
            // leaves every VLAN and goes back to idle.
            let wholesale = platform.supports("detach_all") && (untagged || tagged || native);
            if wholesale {
                (untagged, tagged, native) = (true, false, false);
            }
            if tagged {
                a.push(("allowed_remove", v(vlan)));
            }
            if native && !untagged {
                a.push(("native_remove", v(vlan)));
            }
            if untagged {
                if idle.is_none() {
                    // Before anything is removed: a platform that would leave the port
                    // carrying every VLAN is refused, with the reason.
                    park_check(platform, "detach_port")?;
                }
                a.push((
                    if wholesale {
                        "detach_all"
                    } else {
                        "access_remove"
                    },
                    v(vlan),
                ));
                match idle {
                    Some(idle) if idle != vlan => a.push(("access_set", v(idle))),
                    Some(_) => {}
                    None if platform.supports("park") => a.push(("park", p())),
                    None => {}
                }
                if shut {
                    a.push(("disable", p()));
                }
            }
        }
        Op::UpdatePort => {
            match c.mode {
                Some(PortMode::Access) => {
                    let native = c
                        .native_vlan
                        .ok_or_else(|| Unsupported("access needs native_vlan".into()))?;
                    match read.filter(|s| matches!(s.mode.as_deref(), Some("trunk" | "hybrid"))) {
                        // A trunk (read) becoming an access port: its tagged and native VLANs
                        // go first. The mode word alone does not clear them everywhere (VRP
                        // refuses to change the link type of a port that carries them;
                        // AOS-CX, SONiC and SR Linux keep them).
                        Some(s) => clear_tagged(&mut a, s, &port, platform)?,
                        None => {
                            if let Some(idle) = idle.filter(|i| *i != native) {
                                a.push(("access_remove", v(idle)));
                            }
                        }
                    }
                    a.push(("access_set", v(native)));
                }
                Some(PortMode::Trunk) => {
                    if let Some(idle) = idle {
                        a.push(("access_remove", v(idle)));
                    }
                    a.push(("trunk_mode", p()));
                    let mut allowed = c.allowed_vlans.clone().unwrap_or_default();
                    if let Some(native) = c.native_vlan {
                        a.push(("native_set", v(native)));
                        // Untagged frames are dropped on most platforms unless the native
                        // VLAN is also allowed on the trunk; where a VLAN is either
                        // untagged or tagged on a port, it must not be tagged as well.
                        if platform.native_in_allowed {
                            allowed.insert(native);
                        } else {
                            allowed = allowed.iter().filter(|x| *x != native).collect();
                        }
                    }
                    if !allowed.is_empty() || platform.native_in_allowed {
                        a.push(("allowed_set", vlans_vars(&port, &allowed)));
                    }
                }
                Some(PortMode::Hybrid) => {
                    // VRP-style hybrid ports: an untagged PVID plus tagged VLANs, without
                    // trunk semantics. Optional: platforms without it refuse with 65.
                    platform.template("hybrid_mode").map_err(Unsupported)?;
                    if let Some(idle) = idle {
                        a.push(("access_remove", v(idle)));
                    }
                    a.push(("hybrid_mode", p()));
                    let mut tagged = c.allowed_vlans.clone().unwrap_or_default();
                    if let Some(native) = c.native_vlan {
                        a.push(("hybrid_native_set", v(native)));
                        tagged = tagged.iter().filter(|x| *x != native).collect();
                    }
                    if !tagged.is_empty() {
                        a.push(("hybrid_allowed_set", vlans_vars(&port, &tagged)));
                    }
                }
                None => return Err(Unsupported("update_port needs a mode".into())),
            }
            if let Some(d) = &c.description {
                a.push((
                    "description",
                    Vars::from([("port", port.clone()), ("description", d.clone())]),
                ));
            }
            if let Some(m) = c.mtu {
                a.push((
                    "mtu",
                    Vars::from([("port", port.clone()), ("mtu", m.to_string())]),
                ));
            }
            if shut {
                a.push(("enable", p()));
            }
        }
        Op::ResetPort => {
            if platform.supports("port_reset") || !platform.unsupported.contains_key("port_reset") {
                a.push(("port_reset", p()));
            } else {
                // Platforms that configure membership per VLAN cannot clear a port
                // wholesale: remove the VLANs the port carries (read), or those the request
                // names.
                let mut tagged = c.allowed_vlans.clone().unwrap_or_default();
                let mut native_vlan = c.native_vlan;
                if let Some(s) = read {
                    for x in &s.allowed_vlans {
                        if let Ok(x) = Vlan::new((*x).into()) {
                            tagged.insert(x);
                        }
                    }
                    native_vlan = native_vlan.or_else(|| {
                        s.native_vlan
                            .filter(|n| Some(*n) != idle.map(Vlan::get))
                            .and_then(|n| Vlan::new(n.into()).ok())
                    });
                }
                // Not read, nothing named: nothing to go by. Assumed (a dry run, or the
                // plan made before the read): the read decides; an idle port has none.
                if tagged.is_empty() && native_vlan.is_none() && matches!(before, Before::Unread) {
                    return Err(Unsupported(format!(
                        "reset_port on {} needs native_vlan and/or allowed_vlans: {}",
                        platform.name,
                        platform
                            .unsupported
                            .get("port_reset")
                            .map_or("", String::as_str)
                    )));
                }
                for vlan in tagged.iter() {
                    a.push(("allowed_remove", v(vlan)));
                }
                if let Some(native) = native_vlan {
                    a.push(("native_remove", v(native)));
                }
            }
            match idle {
                Some(idle) => a.push(("access_set", v(idle))),
                None => {
                    park_check(platform, "reset_port")?;
                    if platform.supports("park") {
                        a.push(("park", p()));
                    }
                }
            }
            // The description update_port set ("Ironic Port <uuid>") goes too: a port back at
            // idle carries no tenant's label. Read first, only a port that has one is
            // touched.
            let described = match read {
                Some(s) => s.description.as_deref() != Some(""),
                None => true,
            };
            if described {
                if platform.supports("description_clear") {
                    a.push(("description_clear", p()));
                } else if read.is_some_and(|s| s.description.is_some()) {
                    warnings.push(format!(
                        "reset_port left the description of {port} in place: {}",
                        platform
                            .template("description_clear")
                            .err()
                            .unwrap_or_default()
                    ));
                }
            }
            if shut {
                a.push(("disable", p()));
            }
        }
        _ => {}
    }
    Ok(a)
}

/// A port left with no VLAN where the platform would then forward every VLAN (an OVS port
/// without tag or trunks, a Cumulus bridge port without access or VLAN list): parked by the
/// platform's `park` template, or — where it has none and declares `park` unsupported —
/// refused until the device has an idle VLAN.
fn park_check(platform: &Platform, op: &str) -> Result<(), Unsupported> {
    match platform.unsupported.get("park") {
        Some(why) if !platform.supports("park") => Err(Unsupported(format!(
            "{op} without an idle VLAN is refused on {}: {why}; configure default_vlan",
            platform.name
        ))),
        _ => Ok(()),
    }
}

/// Takes a trunk's (or hybrid port's) VLANs off `port`, as read: the platform's wholesale
/// reset where it has one, else each tagged VLAN and the native VLAN.
fn clear_tagged(
    a: &mut Vec<(&'static str, Vars)>,
    s: &PortState,
    port: &str,
    platform: &Platform,
) -> Result<(), Unsupported> {
    let v = |vlan: u16| Vars::from([("port", port.to_string()), ("vlan", vlan.to_string())]);
    if platform.supports("port_reset") {
        a.push(("port_reset", Vars::from([("port", port.to_string())])));
        return Ok(());
    }
    if s.allowed_vlans.len() >= crate::verify::state::ALL.count() {
        return Err(Unsupported(format!(
            "{port} carries every VLAN, and {} removes tagged VLANs one by one: reset the port first",
            platform.name
        )));
    }
    for x in &s.allowed_vlans {
        a.push(("allowed_remove", v(*x)));
    }
    if let Some(n) = s.native_vlan.filter(|n| !s.allowed_vlans.contains(n)) {
        a.push(("native_remove", v(n)));
    }
    Ok(())
}

/// Whether a trunk on this platform carries every VLAN until its list is set (IOS-like
/// CLIs); the reader's catalog setting says it.
fn trunk_default_all(platform: &Platform) -> bool {
    match &platform.verify {
        crate::catalog::Verify::Show(s) => s.trunk_default_all,
        _ => false,
    }
}

fn vlans_vars(port: &str, set: &VlanSet) -> Vars {
    // The rendered list is filled in per platform by render_block; keep the set as text.
    Vars::from([("port", port.to_string()), ("vlans", set.to_string())])
}

fn lacp_keyword(platform: &Platform, a: Aggregation) -> String {
    let key = match a {
        Aggregation::Lacp => "lacp",
        Aggregation::Static => "static",
    };
    platform
        .lag_modes
        .get(key)
        .cloned()
        .unwrap_or_else(|| key.to_string())
}

/// The platform's LAG interface name and number for a LAG given as a number or a name.
fn lag_interface(platform: &Platform, lag: &LagSpec) -> Result<(String, String), Unsupported> {
    let (Some(tpl), Some(pattern)) = (&platform.lag_interface, &platform.lag_pattern) else {
        return Err(Unsupported(format!(
            "LAGs are not supported on {}",
            platform.name
        )));
    };
    let id = if lag.name.bytes().all(|b| b.is_ascii_digit()) {
        lag.name.trim_start_matches('0').to_string()
    } else {
        pattern
            .captures(&lag.name)
            .and_then(|c| c.get(1))
            .map(|m| m.as_str().to_string())
            .ok_or_else(|| {
                Unsupported(format!(
                    "LAG {:?} is neither a number nor a {} LAG interface name",
                    lag.name, platform.name
                ))
            })?
    };
    if id.is_empty() || id.len() > 4 {
        return Err(Unsupported(format!(
            "LAG number {:?} is out of range",
            lag.name
        )));
    }
    let iface = tpl
        .render(&|v| (v == "lag_id").then(|| id.clone()))
        .map_err(|v| Unsupported(format!("lag_interface uses unknown variable {{{v}}}")))?;
    Ok((iface, id))
}

fn render_block(platform: &Platform, block: &Block, out: &mut Plan) -> Result<(), Unsupported> {
    match block {
        Block::Global(action, vars) => render_action(platform, action, vars, out),
        Block::Port { port, lag, actions } => {
            // One block per port however many actions it needs (NGS typed `interface X`
            // again for every action). Actions that enter their own context (VLAN-centric
            // CLIs) are rendered in order around it; the port's block sits where its first
            // port-context action is.
            let mut own = Plan::default();
            let mut inner = Plan::default();
            let mut at: Option<usize> = None;
            let noun = platform
                .nouns
                .get(if lag.is_some() { "lag" } else { "port" });
            for (action, vars) in actions {
                debug_assert!(PORT_ACTIONS.contains(action));
                let mut vars = vars.clone();
                if let Some(n) = noun {
                    vars.insert("noun", n.clone());
                }
                if platform.own_context.contains(*action) {
                    render_action(platform, action, &vars, &mut own)?;
                } else {
                    let before = inner.lines.len();
                    render_action(platform, action, &vars, &mut inner)?;
                    if inner.lines.len() > before {
                        at.get_or_insert(own.lines.len());
                    }
                }
            }
            let mut block = Plan::default();
            let pv = Vars::from([("port", port.clone())]);
            if !inner.lines.is_empty() && platform.supports("port_enter") {
                match lag {
                    Some(lv) if platform.supports("lag_enter") => {
                        let mut v = lv.clone();
                        v.insert("port", port.clone());
                        render_action(platform, "lag_enter", &v, &mut block)?;
                    }
                    _ => render_action(platform, "port_enter", &pv, &mut block)?,
                }
                let opener = block.lines.len().checked_sub(1);
                let body = inner.lines.len();
                block.lines.append(&mut inner.lines);
                if platform.supports("port_exit") {
                    render_action(platform, "port_exit", &pv, &mut block)?;
                }
                // A block with a closing line: the session knows where it starts and ends
                // (a `type_ahead` CLI sends its body in one write once the sub-mode is
                // confirmed) without reading the platform's syntax.
                let closing = block.lines.len() - body - opener.map_or(0, |o| o + 1);
                if let (Some(o), true) = (opener, closing > 0) {
                    block.lines[o].opens = body + closing;
                }
            } else {
                block.lines.append(&mut inner.lines);
            }
            let at = at.unwrap_or(own.lines.len());
            let tail = own.lines.split_off(at);
            out.lines.extend(own.lines);
            out.lines.extend(block.lines);
            out.lines.extend(tail);
            for w in own.warnings.into_iter().chain(inner.warnings) {
                if !out.warnings.contains(&w) {
                    out.warnings.push(w);
                }
            }
            Ok(())
        }
    }
}

fn render_action(
    platform: &Platform,
    action: &str,
    vars: &Vars,
    out: &mut Plan,
) -> Result<(), Unsupported> {
    let templates = platform.template(action).map_err(Unsupported)?;
    if action == "allowed_set" && platform.allowed_set_adds {
        let w = format!(
            "on {} allowed_vlans adds to the VLANs already tagged on the port (the platform has no replace form); reset_port removes others",
            platform.name
        );
        if !out.warnings.contains(&w) {
            out.warnings.push(w);
        }
    }
    let per_vlan =
        !vars.contains_key("vlan") && templates.iter().any(|t| t.vars().any(|v| v == "vlan"));
    match vars.get("vlans").filter(|_| per_vlan) {
        // Membership configured one VLAN at a time: the whole template per VLAN.
        Some(list) => {
            let set = VlanSet::parse(list)
                .map_err(|e| Unsupported(format!("VLAN list {list:?}: {e}")))?;
            for vlan in set.iter() {
                let mut v = vars.clone();
                v.insert("vlan", vlan.to_string());
                for t in templates {
                    out.lines.push(render_line(platform, t, &v)?);
                }
            }
        }
        None => {
            for t in templates {
                out.lines.push(render_line(platform, t, vars)?);
            }
        }
    }
    Ok(())
}

fn lookup<'a>(platform: &'a Platform, vars: &'a Vars) -> impl Fn(&str) -> Option<String> + 'a {
    move |name: &str| {
        if let (Some(port), "port_type" | "port_number") = (vars.get("port"), name) {
            let (kind, number) = platform.split_port(port);
            return Some(if name == "port_type" { kind } else { number });
        }
        let Some(value) = vars.get(name) else {
            // A platform option's value (`{vxlan_interface}`).
            return platform.option_values.get(name).cloned();
        };
        if name == "vlans" {
            // Re-render the VLAN list in the platform's style.
            let set = VlanSet::parse(value).ok()?;
            let style = &platform.vlan_list;
            return Some(set.render(&style.separator, style.range.as_deref()));
        }
        Some(value.clone())
    }
}

fn render_line(platform: &Platform, t: &Template, vars: &Vars) -> Result<Line, Unsupported> {
    let look = lookup(platform, vars);
    let unknown = |v: String| {
        Unsupported(format!(
            "template needs {{{v}}}, which this request does not provide"
        ))
    };
    let text = t.render(&look).map_err(unknown)?;
    match platform.kind {
        // An empty optional value (a LAG mode keyword) leaves no trailing blank.
        Kind::Cli => Ok(Line::cli(text.trim_end())),
        Kind::Exec | Kind::Ovsdb => {
            // Tokenise the template, not the rendered text: a value with a space stays one
            // argument, and no value can add an argument or reach a shell unquoted.
            let tokens = t.source_tokens();
            let argv: Vec<String> = tokens
                .iter()
                .map(|tok| tok.render(&look).map_err(unknown))
                .collect::<Result<_, _>>()?;
            refuse_options(platform, &tokens, &argv)?;
            Ok(Line::exec(
                argv.into_iter().filter(|a| !a.is_empty()).collect(),
            ))
        }
    }
}

/// A value from a request that would start an argument with `-` would be read by the
/// platform's tool as an option (`nv set interface swp5 description --help` prints help and
/// exits 0, and the change "succeeds"): refused, unless it comes after the tool's
/// end-of-options word (`end_of_options`, written into the template).
fn refuse_options(
    platform: &Platform,
    tokens: &[Template],
    argv: &[String],
) -> Result<(), Unsupported> {
    let mut ended = false;
    for (tok, arg) in tokens.iter().zip(argv) {
        let from_request = tok.vars().any(|v| {
            !crate::catalog::CATALOG_VARS.contains(&v) && !platform.options.contains_key(v)
        });
        if !from_request {
            ended |= platform.end_of_options.as_deref() == Some(arg.as_str());
            continue;
        }
        if arg.starts_with('-') && !ended {
            return Err(Unsupported(format!(
                "value {} would be read as an option by {}'s command line; values starting with '-' are not accepted there",
                crate::request::validate::Escaped(arg),
                platform.name
            )));
        }
    }
    Ok(())
}

/// The platform's show lines for reading `port` back (`[platforms.X.verify] show`), rendered
/// like templates: validated values only, one argument per template word on exec platforms.
pub fn show_lines(
    platform: &Platform,
    spec: &crate::catalog::VerifySpec,
    port: &str,
) -> Result<Vec<Line>, Unsupported> {
    let vars = Vars::from([("port", port.to_string())]);
    spec.show
        .iter()
        .map(|t| render_line(platform, t, &vars))
        .collect()
}

/// The `templates` driver kind (`kind = "cli"` / `"exec"`).
pub struct Templates;

impl Driver for Templates {
    fn prepare<'p>(
        &self,
        req: &Request,
        device: &'p Device,
        platform: &'p Platform,
    ) -> Result<Box<dyn Prepared + 'p>, Unsupported> {
        // Reading back is refused up front where the platform cannot (never "verified"
        // silently), as is a port whose show lines cannot be rendered.
        // The device's options choose among the platform's templates (and so what a port
        // reads back as: an access port made in general mode is a general-mode port).
        let configured = platform
            .with_options(&device.options)
            .map_err(Unsupported)?;
        let checks = if req.verify || req.op == Op::VerifyPort {
            let spec = platform.verify.spec(&platform.name).map_err(Unsupported)?;
            let checks = verify::checks(req, device, &configured)?;
            for c in &checks {
                show_lines(platform, spec, &c.port)?;
            }
            Some(checks)
        } else {
            None
        };
        let plan = match req.op {
            Op::VerifyPort => Plan::default(),
            // Not read: planned as written, and refused where that is unsafe.
            _ if checks.is_none() => plan_for(req, device, &configured, &|_| Before::Unread)?,
            _ => plan(req, device, &configured)?,
        };
        Ok(Box::new(TemplatePlan {
            platform,
            configured,
            device,
            req: req.clone(),
            plan,
            checks,
        }))
    }
}

/// A request rendered into lines, with the ports to read back when verifying (several of
/// them can be applied as one: [`batch`]).
pub struct TemplatePlan<'p> {
    platform: &'p Platform,
    /// The platform with the device's options applied: what plans are made with.
    configured: Platform,
    device: &'p Device,
    req: Request,
    /// The plan for ports as a dry run assumes them (or, not read, as written).
    plan: Plan,
    /// Read before and after (`verify`), or only read (`verify_port`): the ports and what
    /// is expected of them.
    checks: Option<Vec<Check>>,
}

impl Prepared for TemplatePlan<'_> {
    fn warnings(&self) -> Vec<String> {
        self.plan.warnings.clone()
    }

    fn mutates(&self) -> bool {
        self.req.op != Op::VerifyPort && !self.req.check
    }

    fn as_templates(&self) -> Option<&TemplatePlan<'_>> {
        Some(self)
    }

    fn apply(&self, session: &mut Session, deadline: Instant, guard: Guard) -> Applied {
        let mut transcript = Transcript::default();
        let mut progress = Progress::default();
        let keyed = matches!(self.req.op, Op::AddNetwork | Op::DeleteNetwork)
            && self.platform.vlans_by_name();
        let result = match &self.checks {
            None if keyed => self.keyed_network(session, deadline, &mut transcript, &mut progress),
            None => self.unread_apply(session, deadline, guard, &mut transcript, &mut progress),
            Some(checks) if self.req.op == Op::VerifyPort => {
                read_states(session, &self.configured, checks, deadline, &mut transcript)
                    .map(|states| match states {
                        Some(s) => readback::verify_port(&self.device.name, checks, s),
                        None => Done::default(),
                    })
                    .map_err(Failure::from)
            }
            Some(checks) => self.verified_apply(
                session,
                checks,
                deadline,
                guard,
                &mut transcript,
                &mut progress,
            ),
        };
        Applied {
            transcript,
            result,
            progress,
        }
    }
}

impl TemplatePlan<'_> {
    /// A VLAN created or deleted on a platform that keys VLANs by name (Junos): the VLAN
    /// table is read first and the id the request names is what selects the VLAN — a
    /// delete removes the entry whose id it is, whatever its name; a create never reuses a
    /// name that belongs to another id (it would renumber that VLAN) and does nothing when
    /// the id exists already.
    fn keyed_network(
        &self,
        session: &mut Session,
        deadline: Instant,
        transcript: &mut Transcript,
        progress: &mut Progress,
    ) -> Result<Done, Failure> {
        let spec = self
            .platform
            .verify
            .spec(&self.platform.name)
            .map_err(Unsupported)?;
        let (Some(show), Some(network)) = (&spec.vlan_table, &self.req.network) else {
            return Err(Unsupported(format!(
                "{} keys VLANs by name but declares no verify.vlan_table to read them",
                self.platform.name
            ))
            .into());
        };
        let text = self.read_vlan_table(session, spec, show, deadline, transcript)?;
        let device = &self.device.name;
        let mut plan = self.plan.clone();
        if let Some(text) = text {
            let table = verify::parse::vlan_table(spec, &text).map_err(|message| {
                SessionError::Unparsable {
                    line: show.clone(),
                    message,
                }
            })?;
            let id = network.vlan.get();
            let names: Vec<&String> = table
                .iter()
                .filter(|(_, v)| **v == id)
                .map(|(n, _)| n)
                .collect();
            match self.req.op {
                Op::DeleteNetwork => {
                    if names.is_empty() {
                        return Ok(Done {
                            summary: Summary::Said(format!(
                                "delete_network on {device}: VLAN {id} is not configured; nothing to delete"
                            )),
                            ..Done::default()
                        });
                    }
                    let mut lines = Vec::new();
                    for name in names {
                        let mut req = self.req.clone();
                        if let Some(n) = req.network.as_mut() {
                            n.name = name.clone();
                        }
                        lines.extend(
                            plan_for(&req, self.device, &self.configured, &|_| Before::Unread)?
                                .lines,
                        );
                    }
                    plan.lines = lines;
                }
                _ => {
                    if let Some(other) = table.get(&network.name).filter(|v| **v != id) {
                        return Err(Unsupported(format!(
                            "VLAN name {} belongs to VLAN {other} on {device}: creating VLAN {id} under it would renumber that VLAN; choose another name",
                            crate::request::validate::Escaped(&network.name)
                        ))
                        .into());
                    }
                    if let Some(name) = names.first() {
                        return Ok(Done {
                            summary: Summary::Said(format!(
                                "add_network on {device}: VLAN {id} exists already (as {name}); nothing sent"
                            )),
                            ..Done::default()
                        });
                    }
                }
            }
        }
        let applied = session.apply(&plan, deadline);
        transcript.append(applied.transcript);
        progress.append(applied.progress);
        applied.result?;
        Ok(Done {
            changed: !plan.lines.is_empty() && !session.is_dry(),
            ..Done::default()
        })
    }

    /// Not read first: what the change may remove is unknown (a detach names its VLAN).
    fn unread_apply(
        &self,
        session: &mut Session,
        deadline: Instant,
        guard: Guard,
        transcript: &mut Transcript,
        progress: &mut Progress,
    ) -> Result<Done, Failure> {
        guard(&removals_unread(&self.req))?;
        let applied = session.apply(&self.plan, deadline);
        transcript.append(applied.transcript);
        progress.append(applied.progress);
        applied.result?;
        Ok(Done {
            changed: !self.plan.lines.is_empty(),
            ..Done::default()
        })
    }

    /// Read before write: read the ports, send nothing when they already are as
    /// requested, else plan from what was read, let policy see what it would remove, apply
    /// it and read the ports again. A dry session reads nothing: the plan is the one for
    /// ports that need the change.
    fn verified_apply(
        &self,
        session: &mut Session,
        checks: &[Check],
        deadline: Instant,
        guard: Guard,
        transcript: &mut Transcript,
        progress: &mut Progress,
    ) -> Result<Done, Failure> {
        // Where one read's lines cost one round trip together (typed ahead, or one joined
        // exec script), the VLAN table the change may need goes with the ports' read: a
        // before-read is one round trip.
        let table_line = self.vlan_table_line().filter(|_| {
            self.platform.batches_reads() && !needed_vlans(&self.req, self.device).is_empty()
        });
        let (before, table) = read_ports(
            session,
            &self.configured,
            checks,
            table_line.as_ref(),
            deadline,
            transcript,
        )?;
        let name = self.req.op.name();
        let device = &self.device.name;
        let (plan, checks) = match &before {
            // A dry run reads nothing: the plan is the one for ports that need the change.
            None => (self.plan.clone(), checks.to_vec()),
            Some(before) => match self.plan_from_read(checks, before)? {
                FromRead::Holds(done) => return Ok(done),
                FromRead::Change {
                    plan,
                    checks,
                    removals,
                } => {
                    guard(&removals)?;
                    (plan, checks)
                }
            },
        };
        // The VLANs the ports need exist, or are created first (manage_vlans), or the change
        // is refused; a dry run lists the VLAN-table read a live run sends, and check mode
        // refuses what a live run would.
        // Sent with the before-read (nothing comes back in a dry run): not sent again.
        let table = table_line.is_some().then_some(table);
        let (plan, created) =
            self.create_missing_vlans(session, plan, table, deadline, transcript)?;
        if let (Some(before), true) = (&before, self.req.check) {
            return Ok(predicted(name, device, &checks, before, &plan));
        }
        let applied = session.apply(&plan, deadline);
        transcript.append(applied.transcript);
        let took_effect = applied.progress.took_effect;
        progress.append(applied.progress);
        if let Err(e) = applied.result {
            // Refused part-way on a platform that applies each line as it goes: put the
            // ports back as they were read, and say whether that worked.
            if let (Some(before), true) = (&before, took_effect && session.healthy()) {
                let restored = self.restore(session, &checks, before, deadline, transcript)
                    && self.delete_created(session, &created, deadline, transcript);
                progress.unrestorable = unread_lines(self.platform, &progress.accepted);
                progress.restored = Some(restored && progress.unrestorable.is_empty());
            }
            return Err(e.into());
        }
        let after = read_states(session, &self.configured, &checks, deadline, transcript)?;
        let (Some(before), Some(after)) = (before, after) else {
            // A dry run reads nothing: there is nothing to compare.
            return Ok(Done::default());
        };
        Ok(self.verified(&checks, before, after, &plan))
    }
}

/// What the ports as read decide before anything is sent.
pub(super) enum FromRead {
    /// They already are as requested, or nothing needs sending: the verified result.
    Holds(Done),
    /// The plan from what was read, the checks refined against it, and what the plan would
    /// take off each port (for the caller's removal guard).
    Change {
        plan: Plan,
        checks: Vec<Check>,
        removals: Vec<Removal>,
    },
}

impl TemplatePlan<'_> {
    /// Plans from the ports as read (`before`, in the order of `checks`): one request
    /// alone ([`Prepared::apply`]) and each request of a batch ([`batch`]) decide the same.
    pub(super) fn plan_from_read(
        &self,
        checks: &[Check],
        before: &[PortState],
    ) -> Result<FromRead, Unsupported> {
        let by_port: BTreeMap<&str, &PortState> = checks
            .iter()
            .map(|c| c.port.as_str())
            .zip(before.iter())
            .collect();
        let before_of = |port: &str| match by_port.get(port) {
            Some(s) => Before::Read(s),
            None => Before::Assumed,
        };
        let plan = plan_for(&self.req, self.device, &self.configured, &before_of)?;
        let checks = verify::refine(checks, &self.req, self.device, &self.configured, before);
        // Nothing to compare (a LAG deleted without naming its members): nothing is known to
        // hold, the plan runs.
        let already = !checks.is_empty()
            && checks
                .iter()
                .zip(before)
                .all(|(c, s)| !c.expect.is_empty() && c.expect.check(s).holds());
        if already || plan.lines.is_empty() {
            let reports = checks
                .iter()
                .zip(before)
                .map(|(c, s)| PortReport {
                    port: c.port.clone(),
                    before: Some(s.clone()),
                    after: Some(s.clone()),
                    changed: false,
                    drift: Vec::new(),
                    unverified: Vec::new(),
                })
                .collect();
            let done = readback::verified(self.req.op.name(), &self.device.name, reports, true);
            return Ok(FromRead::Holds(done));
        }
        let removals = checks
            .iter()
            .zip(before)
            .map(|(c, s)| Removal {
                port: c.port.clone(),
                vlans: Some(
                    verify::carried(s)
                        .difference(&verify::carried(&c.expect.desired(s)))
                        .copied()
                        .collect(),
                ),
            })
            .collect();
        Ok(FromRead::Change {
            plan,
            checks,
            removals,
        })
    }

    /// The result of a change read back: each port's before, after and verdict, and the
    /// notes from planning against what was read (a VLAN created on demand, an untagged VLAN
    /// left in place) beyond those the prepared plan already gave.
    pub(super) fn verified(
        &self,
        checks: &[Check],
        before: Vec<PortState>,
        after: Vec<PortState>,
        plan: &Plan,
    ) -> Done {
        let reports = checks
            .iter()
            .zip(before)
            .zip(after)
            .map(|((c, b), a)| {
                let verdict = c.expect.check(&a);
                PortReport {
                    port: c.port.clone(),
                    changed: b != a,
                    before: Some(b),
                    after: Some(a),
                    drift: verdict.drift,
                    unverified: verdict.unverified,
                }
            })
            .collect();
        let mut done = readback::verified(self.req.op.name(), &self.device.name, reports, false);
        done.warnings.extend(
            plan.warnings
                .iter()
                .filter(|w| !self.plan.warnings.contains(w))
                .cloned(),
        );
        done
    }
}

impl TemplatePlan<'_> {
    /// The platform's VLAN-table show line (`verify.vlan_table`), if it declares one.
    fn vlan_table_line(&self) -> Option<Line> {
        let spec = self.platform.verify.spec(&self.platform.name).ok()?;
        let show = spec.vlan_table.as_ref()?;
        Some(match self.platform.kind {
            Kind::Cli => Line::cli(show),
            Kind::Exec | Kind::Ovsdb => Line::words(show),
        })
    }

    /// Sends the platform's VLAN-table show line (`verify.vlan_table`) and returns its
    /// output; `None` in a dry run, which reads nothing.
    fn read_vlan_table(
        &self,
        session: &mut Session,
        spec: &crate::catalog::VerifySpec,
        show: &str,
        deadline: Instant,
        transcript: &mut Transcript,
    ) -> Result<Option<String>, Failure> {
        let line = self.vlan_table_line().unwrap_or_else(|| Line::cli(show));
        let (segment, outputs) = session.read(&[line], spec.mode.as_deref(), deadline);
        transcript.append(segment.transcript);
        segment.result?;
        Ok((!session.is_dry()).then(|| outputs.join("\n")))
    }

    /// VLANs the change puts on its ports that the device does not have, read from its VLAN
    /// table (platforms that declare `verify.vlan_table`): with `manage_vlans` they are
    /// created first, in the same session (named `vlan<N>`, as `add_network` names them);
    /// without it the request is refused before anything is sent (exit 77), so a port is
    /// never put in a VLAN that a strict platform refuses or a lenient one creates behind
    /// the network team's back.
    /// `read`: the table was sent with the before-read, and its output (`None` in a dry
    /// run, which reads nothing).
    fn create_missing_vlans(
        &self,
        session: &mut Session,
        mut plan: Plan,
        read: Option<Option<String>>,
        deadline: Instant,
        transcript: &mut Transcript,
    ) -> Result<(Plan, Vec<Vlan>), Failure> {
        let Ok(spec) = self.platform.verify.spec(&self.platform.name) else {
            return Ok((plan, Vec::new()));
        };
        let Some(show) = &spec.vlan_table else {
            return Ok((plan, Vec::new()));
        };
        let needed = needed_vlans(&self.req, self.device);
        if needed.is_empty() || plan.lines.is_empty() {
            return Ok((plan, Vec::new()));
        }
        let text = match read {
            Some(Some(text)) => text,
            Some(None) => return Ok((plan, Vec::new())),
            None => match self.read_vlan_table(session, spec, show, deadline, transcript)? {
                Some(text) => text,
                None => return Ok((plan, Vec::new())),
            },
        };
        let have =
            verify::parse::vlan_ids(spec, &text).map_err(|message| SessionError::Unparsable {
                line: show.clone(),
                message,
            })?;
        let missing: Vec<Vlan> = needed.iter().filter(|v| !have.contains(&v.get())).collect();
        if missing.is_empty() {
            return Ok((plan, Vec::new()));
        }
        let device = &self.device.name;
        let list = missing
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let (s, them) = if missing.len() == 1 {
            ("", "it")
        } else {
            ("s", "them")
        };
        if !self.device.manage_vlans {
            return Err(Failure::Denied(crate::policy::Denied {
                rule: format!("devices.{device}.manage_vlans"),
                message: format!(
                    "VLAN{s} {list} not configured on {device}, and Mercury may not create VLANs there: create {them} first (mercury add-network --device {device} --vlan N), or set devices.{device}.manage_vlans = true so that Mercury creates a missing VLAN before a port uses it"
                ),
            }));
        }
        let names = if self.platform.vlans_by_name() {
            verify::parse::vlan_table(spec, &text).unwrap_or_default()
        } else {
            BTreeMap::new()
        };
        let mut created = Plan::default();
        for v in &missing {
            let name = format!("vlan{v}");
            if let Some(other) = names.get(&name).filter(|id| **id != v.get()) {
                return Err(Unsupported(format!(
                    "VLAN {v} is missing on {device}, and its name {name} belongs to VLAN {other} there: creating it would renumber that VLAN; create VLAN {v} under another name first (mercury add-network --name)"
                ))
                .into());
            }
            let vars = Vars::from([("vlan", v.to_string()), ("vlan_name", name)]);
            render_block(
                self.platform,
                &Block::Global("network_add", vars),
                &mut created,
            )?;
        }
        created.lines.append(&mut plan.lines);
        plan.lines = created.lines;
        plan.warnings.push(format!(
            "VLAN{s} {list} did not exist on {device}: created (manage_vlans) before the port{} used {them}",
            if self.req.ports.len() > 1 { "s" } else { "" }
        ));
        Ok((plan, missing))
    }
}

/// The VLANs a change puts on its ports (which must exist on the device): what an attach,
/// update or LAG update names; the idle VLAN a reset or a detach restores.
fn needed_vlans(req: &Request, device: &Device) -> VlanSet {
    match req.op {
        Op::AttachPort | Op::UpdatePort | Op::UpdateLag => req.vlans(),
        Op::ResetPort | Op::DetachPort => req
            .ports
            .iter()
            .filter_map(|c| c.default_vlan.or(device.default_vlan))
            .collect(),
        _ => VlanSet::new(),
    }
}

impl TemplatePlan<'_> {
    /// Declares each port as it was read before a change that failed part-way (mode, access
    /// or native VLAN, tagged list, description, MTU), applies that, and reads the ports
    /// again: `true` when every port reads back as before. The ports are read first: when
    /// the lines that took effect changed nothing (a Netvisor `vlan-port-remove` on a port
    /// in no VLAN, before the device refused the VLAN it was to join), nothing is sent.
    fn restore(
        &self,
        session: &mut Session,
        checks: &[Check],
        before: &[PortState],
        deadline: Instant,
        transcript: &mut Transcript,
    ) -> bool {
        if let Ok(Some(now)) = read_states(session, &self.configured, checks, deadline, transcript)
        {
            if now.len() == before.len() && now.iter().zip(before).all(|(a, b)| same_l2(a, b)) {
                return true;
            }
        }
        let mut ports = Vec::new();
        let mut unconfigured = Vec::new();
        for (c, s) in checks.iter().zip(before) {
            match declared(&c.port, s) {
                Some(p) => ports.push(p),
                // No mode configured before: clear the mode (and any access VLAN) where
                // the platform can; else say the port was not restored.
                None if s.mode.is_none()
                    && s.access_vlan.is_none()
                    && s.allowed_vlans.is_empty()
                    && s.native_vlan.is_none()
                    && self.platform.supports("mode_clear") =>
                {
                    unconfigured.push(c.port.clone())
                }
                None => return false,
            }
        }
        let req = Request {
            op: Op::UpdatePort,
            ports,
            ..self.req.clone()
        };
        let Ok(mut plan) = plan_for(&req, self.device, self.platform, &|_| Before::Unread) else {
            return false;
        };
        for port in unconfigured {
            let p = || Vars::from([("port", port.clone())]);
            // What the failed change may have set on a port with no mode: a native or
            // access VLAN, then the mode itself.
            // The VLAN is the one the request put on the port (templates that name it, such
            // as `no switchport trunk native vlan {vlan}`, take exactly that one off).
            let set = self
                .req
                .ports
                .iter()
                .find(|c| c.port == port)
                .and_then(|c| c.native_vlan.or(c.vlan))
                .map_or_else(|| "1".to_string(), |v| v.get().to_string());
            let with_vlan = || {
                let mut v = p();
                v.insert("vlan", set.clone());
                v
            };
            let mut actions = vec![("access_remove", with_vlan())];
            if self.platform.supports("native_remove") {
                actions.insert(0, ("native_remove", with_vlan()));
            }
            actions.push(("mode_clear", p()));
            let block = Block::port(port.clone(), actions);
            if render_block(self.platform, &block, &mut plan).is_err() {
                return false;
            }
        }
        let applied = session.apply(&plan, deadline);
        transcript.append(applied.transcript);
        if applied.result.is_err() {
            return false;
        }
        match read_states(session, &self.configured, checks, deadline, transcript) {
            Ok(Some(again)) => again.iter().zip(before).all(|(a, b)| same_l2(a, b)),
            _ => false,
        }
    }
}

impl TemplatePlan<'_> {
    /// Undoes the VLANs this session created on demand (`manage_vlans`) before a refused
    /// change, so that a restored device is the one read: no port used them before, and the
    /// device lock kept every other Mercury request away since. `true` when there were none
    /// or all went.
    fn delete_created(
        &self,
        session: &mut Session,
        created: &[Vlan],
        deadline: Instant,
        transcript: &mut Transcript,
    ) -> bool {
        if created.is_empty() {
            return true;
        }
        let mut plan = Plan::default();
        for v in created {
            let vars = Vars::from([("vlan", v.to_string()), ("vlan_name", format!("vlan{v}"))]);
            if render_block(
                self.platform,
                &Block::Global("network_delete", vars),
                &mut plan,
            )
            .is_err()
            {
                return false;
            }
        }
        let applied = session.apply(&plan, deadline);
        transcript.append(applied.transcript);
        applied.result.is_ok()
    }
}

/// Check mode: what the request would do, from the ports read and the plan made from them;
/// nothing was sent.
fn predicted(op: &str, device: &str, checks: &[Check], before: &[PortState], plan: &Plan) -> Done {
    let reports: Vec<PortReport> = checks
        .iter()
        .zip(before)
        .map(|(c, s)| {
            let after = c.expect.desired(s);
            PortReport {
                port: c.port.clone(),
                changed: after != *s,
                before: Some(s.clone()),
                after: Some(after),
                drift: Vec::new(),
                unverified: c.expect.check(s).unverified,
            }
        })
        .collect();
    let lines: Vec<&str> = plan.lines.iter().map(|l| l.text.as_str()).collect();
    Done {
        changed: true,
        summary: Summary::Said(format!(
            "check: {op} would change {device} ({} configuration line(s)); nothing sent",
            lines.len()
        )),
        diff: Some(verify::diff(&reports)),
        warnings: readback::unverified_warning(&reports).into_iter().collect(),
        data: serde_json::json!({"check": true, "would_send": lines, "ports": reports}),
        drift: None,
        read: Vec::new(),
    }
}

/// A port's state as the `update_port` that declares it, or `None` when it has no mode to
/// declare.
fn declared(port: &str, s: &PortState) -> Option<PortChange> {
    let vlan = |v: Option<u16>| v.and_then(|x| Vlan::new(x.into()).ok());
    let mode = match s.mode.as_deref()? {
        "access" => PortMode::Access,
        "trunk" => PortMode::Trunk,
        "hybrid" => PortMode::Hybrid,
        _ => return None,
    };
    let (native_vlan, allowed_vlans) = match mode {
        PortMode::Access => (Some(vlan(s.access_vlan)?), None),
        _ => (
            vlan(s.native_vlan),
            Some(
                s.allowed_vlans
                    .iter()
                    .filter_map(|x| Vlan::new((*x).into()).ok())
                    .collect::<VlanSet>(),
            ),
        ),
    };
    Some(PortChange {
        port: port.to_string(),
        vlan: None,
        mode: Some(mode),
        native_vlan,
        allowed_vlans,
        default_vlan: None,
        description: s.description.clone().filter(|d| !d.is_empty()),
        mtu: s.mtu,
    })
}

/// Whether two reads of a port agree on its layer-2 settings.
fn same_l2(a: &PortState, b: &PortState) -> bool {
    a.mode == b.mode
        && a.access_vlan == b.access_vlan
        && a.native_vlan == b.native_vlan
        && a.allowed_vlans == b.allowed_vlans
}

/// What a change may take off ports that were not read: a detach names its VLAN; attach,
/// update and reset may take off whatever the port carries.
fn removals_unread(req: &Request) -> Vec<Removal> {
    match req.op {
        Op::DetachPort => req
            .ports
            .iter()
            .map(|c| Removal {
                port: c.port.clone(),
                vlans: Some(c.vlan.iter().map(|v| v.get()).collect()),
            })
            .collect(),
        Op::AttachPort | Op::UpdatePort | Op::ResetPort => req
            .ports
            .iter()
            .map(|c| Removal {
                port: c.port.clone(),
                vlans: None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The accepted lines that come from a template whose effect the platform's reader does
/// not show (`port_l2`: AOS-CX `no routing` turns a routed port into a switchport, and a
/// read of the port tells a routed port from an access port in no VLAN only where the
/// reader models it — none does today), so that no restore may claim to have undone them.
fn unread_lines(platform: &Platform, accepted: &[String]) -> Vec<String> {
    // Lines without variables render to themselves.
    let unread: Vec<String> = platform
        .templates
        .get("port_l2")
        .into_iter()
        .flatten()
        .filter_map(|t| t.render(&|_| None).ok())
        .collect();
    accepted
        .iter()
        .filter(|l| unread.iter().any(|u| u == l.trim()))
        .cloned()
        .collect()
}

/// Reads each checked port: its show lines, then the platform's parser. `None` from a dry
/// session, which answers no read.
fn read_states(
    session: &mut Session,
    platform: &Platform,
    checks: &[Check],
    deadline: Instant,
    transcript: &mut Transcript,
) -> Result<Option<Vec<PortState>>, SessionError> {
    read_ports(session, platform, checks, None, deadline, transcript).map(|(s, _)| s)
}

/// [`read_states`], with `extra` (the VLAN-table show line) sent in the same read; its
/// output too. Every port's show lines go in ONE [`Session::read`] (one round trip on a
/// `type_ahead` platform), unless a port may be absent: its refused read is then told
/// apart by reading port by port.
fn read_ports(
    session: &mut Session,
    platform: &Platform,
    checks: &[Check],
    extra: Option<&Line>,
    deadline: Instant,
    transcript: &mut Transcript,
) -> Result<(Option<Vec<PortState>>, Option<String>), SessionError> {
    let spec =
        platform
            .verify
            .spec(&platform.name)
            .map_err(|message| SessionError::Unparsable {
                line: String::new(),
                message,
            })?;
    let per_port = checks
        .iter()
        .map(|c| {
            show_lines(platform, spec, &c.port).map_err(|e| SessionError::Unparsable {
                line: c.port.clone(),
                message: e.0,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if checks.iter().any(|c| c.may_be_absent) {
        let states = read_each(
            session, platform, spec, checks, &per_port, deadline, transcript,
        )?;
        let table = match extra {
            Some(line) => {
                let (segment, outputs) =
                    session.read(std::slice::from_ref(line), spec.mode.as_deref(), deadline);
                transcript.append(segment.transcript);
                segment.result?;
                (!session.is_dry()).then(|| outputs.join("\n"))
            }
            None => None,
        };
        return Ok((states, table));
    }
    let mut all: Vec<Line> = per_port.iter().flatten().cloned().collect();
    all.extend(extra.cloned());
    let (segment, outputs) = session.read(&all, spec.mode.as_deref(), deadline);
    transcript.append(segment.transcript);
    segment.result?;
    if session.is_dry() {
        return Ok((None, None));
    }
    let mut rest = outputs.as_slice();
    let mut states = Vec::new();
    for (c, lines) in checks.iter().zip(&per_port) {
        let (mine, after) = rest.split_at(lines.len().min(rest.len()));
        rest = after;
        match verify::parse(platform, spec, &c.port, mine) {
            Ok(s) => states.push(s),
            Err(message) => return Err(unparsable(lines, message)),
        }
    }
    let table = extra.map(|_| rest.join("\n"));
    Ok((Some(states), table))
}

/// A port's read whose output its parser does not understand: the show lines and why.
fn unparsable(lines: &[Line], message: String) -> SessionError {
    SessionError::Unparsable {
        line: lines
            .iter()
            .map(|l| l.text.as_str())
            .collect::<Vec<_>>()
            .join("; "),
        message,
    }
}

/// Reads the checked ports one by one, each with its show lines `per_port` (some may be
/// absent: a refused read is an absent port).
fn read_each(
    session: &mut Session,
    platform: &Platform,
    spec: &crate::catalog::VerifySpec,
    checks: &[Check],
    per_port: &[Vec<Line>],
    deadline: Instant,
    transcript: &mut Transcript,
) -> Result<Option<Vec<PortState>>, SessionError> {
    let mut states = Vec::new();
    for (c, lines) in checks.iter().zip(per_port) {
        let (segment, outputs) = session.read(lines, spec.mode.as_deref(), deadline);
        transcript.append(segment.transcript);
        match segment.result {
            Err(SessionError::Rejected { .. }) if c.may_be_absent => {
                states.push(PortState::absent());
                continue;
            }
            Err(e) => return Err(e),
            Ok(()) => {}
        }
        if session.is_dry() {
            continue;
        }
        match verify::parse(platform, spec, &c.port, &outputs) {
            Ok(s) => states.push(s),
            Err(_) if c.may_be_absent => states.push(PortState::absent()),
            Err(message) => return Err(unparsable(lines, message)),
        }
    }
    Ok((!session.is_dry()).then_some(states))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::config::Config;
    use crate::request::RawRequest;
    use std::path::Path;

    fn setup(platform: &str, extra: &str) -> (Device, Catalog) {
        let text = format!(
            "[devices.leaf]\nplatform = \"{platform}\"\ntransport = \"local\"\nallowed_vlans=[\"1-4094\"]\n{extra}"
        );
        let d = Config::parse(Path::new("m.toml"), &text).unwrap().devices["leaf"].clone();
        (d, Catalog::builtin().unwrap())
    }

    fn lines(platform: &str, extra: &str, json: &str) -> Vec<String> {
        let (d, c) = setup(platform, extra);
        let r = Request::from_raw(RawRequest::from_json(json).unwrap()).unwrap();
        plan(&r, &d, c.get(platform).unwrap())
            .unwrap()
            .lines
            .into_iter()
            .map(|l| l.text)
            .collect()
    }

    #[test]
    fn attach_removes_idle_vlan_first_in_one_interface_block() {
        let l = lines(
            "cisco_ios",
            "default_vlan = 10\nshut_unused_ports = true",
            r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/5","vlan":120,"reason":"r"}"#,
        );
        assert_eq!(
            l,
            vec![
                "interface Gi1/0/5",
                "no switchport access vlan",
                "switchport mode access",
                "switchport access vlan 120",
                "no shutdown",
                "exit"
            ]
        );
    }

    /// Issue 18: the `interface` line of each port's block says how many lines follow in
    /// it (body and `exit`), from the templates rendered; no other line opens a block, and
    /// a platform without a closing template (Junos `set` lines) has no blocks.
    #[test]
    fn each_port_block_is_marked_at_its_opening_line() {
        let (d, c) = setup("cisco_ios", "default_vlan = 10");
        let r = Request::from_raw(
            RawRequest::from_json(
                r#"{"op":"attach_port","device":"leaf","ports":["Gi1/0/1","Gi1/0/2"],"vlan":120,"reason":"r"}"#,
            )
            .unwrap(),
        )
        .unwrap();
        let p = plan(&r, &d, c.get("cisco_ios").unwrap()).unwrap();
        let marks: Vec<(&str, usize)> = p
            .lines
            .iter()
            .map(|l| (l.text.as_str(), l.opens))
            .filter(|(_, n)| *n > 0)
            .collect();
        assert_eq!(
            marks,
            [("interface Gi1/0/1", 4), ("interface Gi1/0/2", 4)],
            "{:#?}",
            p.lines
        );
        let at = p.lines.iter().position(|l| l.opens > 0).unwrap();
        assert_eq!(p.lines[at + 4].text, "exit");
        let (d, c) = setup("juniper", "default_vlan = 10");
        let r = Request::from_raw(
            RawRequest::from_json(
                r#"{"op":"attach_port","device":"leaf","port":"ge-0/0/5","vlan":120,"reason":"r"}"#,
            )
            .unwrap(),
        )
        .unwrap();
        let p = plan(&r, &d, c.get("juniper").unwrap()).unwrap();
        assert!(p.lines.iter().all(|l| l.opens == 0), "{:#?}", p.lines);
    }

    #[test]
    fn detach_restores_idle_vlan_and_shuts() {
        let l = lines(
            "juniper",
            "default_vlan = 10\nshut_unused_ports = true",
            r#"{"op":"detach_port","device":"leaf","port":"ge-0/0/5","vlan":120,"reason":"r"}"#,
        );
        assert_eq!(
            l[0],
            "delete interfaces ge-0/0/5 unit 0 family ethernet-switching vlan members 120"
        );
        assert!(l.iter().any(|x| x.ends_with("vlan members 10")), "{l:#?}");
        assert_eq!(
            l.last().map(String::as_str),
            Some("set interfaces ge-0/0/5 disable")
        );
    }

    #[test]
    fn trunk_gets_native_vlan_and_native_is_allowed() {
        let l = lines(
            "cisco_ios",
            "",
            r#"{"op":"update_port","device":"leaf","port":"Gi1/0/5","mode":"trunk","native_vlan":10,
                "allowed_vlans":"100,200-202","reason":"r"}"#,
        );
        assert!(
            l.contains(&"switchport trunk native vlan 10".to_string()),
            "{l:#?}"
        );
        assert!(
            l.contains(&"switchport trunk allowed vlan 10,100,200-202".to_string()),
            "{l:#?}"
        );
        let j = lines(
            "juniper",
            "",
            r#"{"op":"update_port","device":"leaf","port":"ge-0/0/5","mode":"trunk","native_vlan":10,
                "allowed_vlans":"100,200-202","reason":"r"}"#,
        );
        assert!(
            j.iter()
                .any(|x| x.ends_with("vlan members [ 10 100 200-202 ]")),
            "{j:#?}"
        );
    }

    #[test]
    fn batched_ports_each_get_one_block() {
        let l = lines(
            "cisco_ios",
            "",
            r#"{"op":"attach_port","device":"leaf","ports":["Gi1/0/1","Gi1/0/2"],"vlan":120,"reason":"r"}"#,
        );
        assert_eq!(l.iter().filter(|x| x.starts_with("interface")).count(), 2);
    }

    #[test]
    fn exec_values_stay_one_argument() {
        let (d, c) = setup("cumulus_nvue", "");
        let r = Request::from_raw(
            RawRequest::from_json(
                r#"{"op":"update_port","device":"leaf","port":"swp5","mode":"access","native_vlan":120,
                    "description":"rack 4 node 7","reason":"r"}"#,
            )
            .unwrap(),
        )
        .unwrap();
        let p = plan(&r, &d, c.get("cumulus_nvue").unwrap()).unwrap();
        let desc = p
            .lines
            .iter()
            .find(|l| l.text.contains("description"))
            .unwrap();
        assert_eq!(desc.argv.as_ref().unwrap().last().unwrap(), "rack 4 node 7");
        assert_eq!(
            desc.text,
            "nv set interface swp5 description 'rack 4 node 7'"
        );
    }

    #[test]
    fn lag_members_and_interface() {
        let l = lines(
            "cisco_ios",
            "",
            r#"{"op":"update_lag","device":"leaf","lag":"10","members":["Gi1/0/1","Gi1/0/2"],
                "aggregation_mode":"lacp","reason":"r"}"#,
        );
        // IOS creates the port-channel from the first member's channel-group.
        assert_eq!(l[0], "interface Gi1/0/1");
        let groups = l.iter().filter(|x| *x == "channel-group 10 mode active");
        assert_eq!(groups.count(), 2, "{l:#?}");
    }

    #[test]
    fn unsupported_action_is_reported() {
        let (d, c) = setup("cisco_ios", "");
        let r = Request::from_raw(
            RawRequest::from_json(
                r#"{"op":"plug_port","device":"leaf","port":"Gi1/0/1","vif_id":"v1","reason":"r"}"#,
            )
            .unwrap(),
        )
        .unwrap();
        let e = plan(&r, &d, c.get("cisco_ios").unwrap()).unwrap_err();
        assert!(e.0.contains("plug is not supported on cisco_ios"), "{e}");
    }
}
