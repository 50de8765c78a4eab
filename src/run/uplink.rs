//! The DPU path (docs/ovs.md, "Two hops"): `plug_port` / `unplug_port` on a card whose
//! configuration names its `uplink` (the switch port the card is cabled to) program that
//! switch port as well as the card, in one request with one result.
//!
//! - **Plug**: the card is read first and the plug planned against it
//!   ([`Prepared::preflight`]), so that a card that will refuse (a representor plugged for
//!   another node, a port Mercury did not plug, a missing bridge) is refused before the
//!   switch is contacted; then the switch port gets the VLAN *added* to its trunk
//!   (`attach_port`, mode trunk: read first; a port that is not a trunk yet becomes one
//!   carrying exactly that VLAN), then the representor is plugged in the card session the
//!   read opened. When the card step fails, the switch port is
//!   put back to the state read before the request, in the same switch session (before it
//!   saves), and the result says what was applied and what was undone.
//! - **Unplug**: the card is read (every port Mercury plugged there, with its VLANs), the
//!   representor is unplugged, and only the VLANs no other Mercury port on the card still
//!   carries are taken off the uplink (`detach_port`, mode trunk).
//!
//! Everything that can be refused offline — both devices' policy (the caller must be allowed
//! the switch device and the VLAN there too), both drivers' preparation — is checked before
//! either device is contacted; on unplug, the switch hop's policy is checked after the card
//! read and before anything is written. Both devices' locks are taken in device-name order,
//! so two such requests (two servers behind one card) never deadlock; each device gets its
//! own audit pair (`what.hop`: `uplink` / `card`); the result's `data.hops` has one entry
//! per device. This module builds the requests and orders the hops; what each device is
//! sent is its driver's business.

use std::collections::BTreeSet;

use super::*;
use crate::config::Uplink;
use crate::driver::{Done, Plugged, Prepared};
use crate::request::vlan::Vlan;
use crate::verify::PortState;

/// What one hop did, for `data.hops` and its device's audit record.
#[derive(Debug, Default)]
struct Hop {
    /// `uplink` or `card`.
    name: &'static str,
    device: String,
    platform: String,
    op: String,
    port: String,
    vlans: Vec<u16>,
    /// Lines were (or may have been) sent.
    contacted: bool,
    changed: bool,
    msg: String,
    /// Exit kind of this hop's failure.
    failed: Option<ExitKind>,
    commands: Vec<crate::session::CommandRecord>,
    round_trips: u32,
    progress: Progress,
    data: serde_json::Value,
    warnings: Vec<String>,
    /// The compensating step, when one ran.
    restore: Option<serde_json::Value>,
    /// Why the hop sent nothing, when it did not run.
    skipped: Option<String>,
    /// Check mode: read and predicted, nothing sent.
    check: bool,
    /// After a re-plug: the VLANs taken off the uplink because no port uses them any more.
    released: Vec<u16>,
    /// Its `started` audit record is written (so a `finished` one is due).
    started: bool,
    /// How many of its first lines went out before any other hop's (the card read that
    /// precedes the switch hop of a plug), so that `commands` lists lines in the order
    /// they were sent.
    early: usize,
}

impl Hop {
    fn new(name: &'static str, device: &Device, platform: &Platform, op: Op, port: &str) -> Hop {
        Hop {
            name,
            device: device.name.clone(),
            platform: platform.name.clone(),
            op: op.name().to_string(),
            port: port.to_string(),
            ..Hop::default()
        }
    }

    fn absorb(&mut self, t: Transcript) {
        self.round_trips += t.round_trips;
        self.commands.extend(t.commands);
    }

    fn json(&self) -> serde_json::Value {
        json!({
            "hop": self.name,
            "device": self.device,
            "platform": self.platform,
            "op": self.op,
            "port": self.port,
            "vlans": self.vlans,
            "ok": self.failed.is_none(),
            "changed": self.changed,
            "msg": self.msg,
            "lines": self.commands.iter().map(|c| c.input.clone()).collect::<Vec<_>>(),
            "round_trips": self.round_trips,
            "progress": reached(&self.progress).then(|| self.progress.clone()),
            "data": self.data,
            "restore": self.restore,
            "skipped": self.skipped,
            "check": self.check,
            "released": self.released,
        })
    }

    fn what(&self, job_what: &serde_json::Value) -> serde_json::Value {
        let mut w = job_what.clone();
        w["hop"] = json!(self.name);
        w["op"] = json!(self.op);
        w["device"] = json!(self.device);
        w["platform"] = json!(self.platform);
        w["ports"] = json!([self.port]);
        w["vlans"] = json!(self.vlans);
        w
    }

    fn how(&self) -> serde_json::Value {
        let kind = self.failed.unwrap_or(ExitKind::Ok);
        json!({
            "outcome": if self.failed.is_none() { "ok" } else { "failed" },
            "rc": kind.code(),
            "error_kind": kind.name(),
            "msg": self.msg,
            "changed": self.changed && !self.check,
            "would_change": self.check.then_some(self.changed),
            "partial": (self.failed.is_some() && reached(&self.progress))
                .then(|| self.progress.clone()),
            "lines": self.commands.iter().map(|c| c.input.clone()).collect::<Vec<_>>(),
            "round_trips": self.round_trips,
            "device_contacted": self.contacted,
            "warnings": self.warnings,
            "restore": self.restore,
            "check": self.check,
        })
    }
}

/// Records a hop's failure (the first one it had).
fn failed_hop(hop: &mut Hop, e: &Error) {
    if hop.failed.is_none() {
        hop.failed = Some(e.kind());
        hop.msg = e.to_string();
    }
}

/// A hop that failed only when closing (the save): the request's failure.
fn closing_failure(hop: &Hop) -> Option<Error> {
    hop.failed
        .map(|kind| Error::Decided(kind, format!("{} {}: {}", hop.name, hop.device, hop.msg)))
}

fn reached(p: &Progress) -> bool {
    p.took_effect || p.in_flight.is_some() || !p.accepted.is_empty() || p.saved == Some(false)
}

/// An open session on one hop's device.
struct Live<'s> {
    session: Session<'s>,
    deadline: Instant,
}

impl Job<'_> {
    /// Runs `plug_port` / `unplug_port` on `card` and on the switch port its `uplink` names.
    /// The card's own policy was checked by the caller.
    pub(super) fn two_hops(
        &mut self,
        req: Request,
        card: &Device,
        card_platform: &Platform,
        up: &Uplink,
    ) -> Result<(), Error> {
        let config = self.config;
        let catalog = self.catalog;
        let switch = config.devices.get(&up.device).ok_or_else(|| {
            Error::Internal(format!("devices.{}.uplink names no device", card.name))
        })?;
        let sw_platform = catalog.get(&switch.platform)?;
        if let Some(s) = &self.scope {
            if !s.allows(switch) {
                return Err(Error::Denied(policy::Denied {
                    rule: format!("callers.{}.devices", s.caller.name),
                    message: format!(
                        "the uplink of {} is a port of device {}, which caller {} may not use (list it in the caller's devices, or plug with card_only)",
                        card.name, switch.name, s.caller.name
                    ),
                }));
            }
        }
        transport::fits(switch, sw_platform.kind.channel())?;
        self.what["hop"] = json!("card");
        self.what["uplink"] = json!({"device": switch.name, "port": up.port});
        let card_prepared =
            driver::for_platform(card_platform).prepare(&req, card, card_platform)?;
        self.report.warnings.extend(card_prepared.warnings());
        match req.op {
            Op::PlugPort => self.plug_two(
                &req,
                (card, card_platform, card_prepared.as_ref()),
                (switch, sw_platform),
                up,
            ),
            _ => self.unplug_two(
                &req,
                (card, card_platform, card_prepared.as_ref()),
                (switch, sw_platform),
                up,
            ),
        }
    }

    fn plug_two(
        &mut self,
        req: &Request,
        (card, card_platform, card_prepared): (&Device, &Platform, &dyn Prepared),
        (switch, sw_platform): (&Device, &Platform),
        up: &Uplink,
    ) -> Result<(), Error> {
        let vlan = req.plug.as_ref().and_then(|p| p.vlan).ok_or_else(|| {
            Error::Request(crate::request::RequestError(format!(
                "plug_port without a vlan on {}, whose uplink is {} {}: the port would carry every VLAN of its bridge and Mercury cannot tell which VLANs the uplink must carry; give a vlan, or plug with card_only",
                card.name, switch.name, up.port
            )))
        })?;
        let sw_req = uplink_request(Op::AttachPort, switch, sw_platform, &up.port, vlan, req)?;
        policy::check(&sw_req, switch, sw_platform, self.scope.as_ref())?;
        let sw_prepared =
            driver::for_platform(sw_platform).prepare(&sw_req, switch, sw_platform)?;
        self.report.warnings.extend(sw_prepared.warnings());
        let mut sw_hop = Hop::new("uplink", switch, sw_platform, Op::AttachPort, &up.port);
        sw_hop.vlans = vec![vlan.get()];
        sw_hop.check = req.check;
        let mut card_hop = Hop::new("card", card, card_platform, req.op, &req.ports[0].port);
        card_hop.vlans = vec![vlan.get()];
        card_hop.check = req.check;
        if self.report.dry_run {
            self.dry_hop(&mut sw_hop, switch, sw_platform, sw_prepared.as_ref())?;
            self.dry_hop(&mut card_hop, card, card_platform, card_prepared)?;
            return self.conclude_dry(req, vec![sw_hop, card_hop]);
        }

        let _held = self.lock_both(card, switch, sw_platform, card_platform, req)?;
        self.hops_started(&mut [&mut card_hop])?;
        self.device_contacted = true;

        // Hop 0: the card is read first (bridge, the representor, whose it is) and the plug
        // planned against it, so that a card that will refuse is refused before the switch
        // is touched. Its session stays open for hop 2.
        let (card_secrets, card_settings) = match session_settings(card, card.save_config) {
            Ok(s) => s,
            Err(e) => {
                failed_hop(&mut card_hop, &e);
                sw_hop.skipped =
                    Some("the card could not be read: nothing sent to the switch".into());
                return self.conclude(req, vec![sw_hop, card_hop], Some(e));
            }
        };
        let mut card_live = match self.connect(
            &mut card_hop,
            card,
            card_platform,
            &card_secrets,
            &card_settings,
        ) {
            Ok(l) => l,
            Err(e) => {
                sw_hop.skipped =
                    Some("the card could not be reached: nothing sent to the switch".into());
                return self.conclude(req, vec![sw_hop, card_hop], Some(e));
            }
        };
        if !req.check {
            let scope = self.scope.clone();
            let guard =
                |r: &[Removal]| policy::check_removals(card, scope.as_ref(), "plug_port", r);
            if let Some(pre) =
                card_prepared.preflight(&mut card_live.session, card_live.deadline, &guard)
            {
                card_hop.absorb(pre.transcript);
                if let Err(e) = pre.result.map_err(Error::from) {
                    failed_hop(&mut card_hop, &e);
                    self.close(&mut card_hop, card_live);
                    sw_hop.skipped = Some(
                        "the card refused the plug when read, before the switch was touched".into(),
                    );
                    return self.conclude(req, vec![sw_hop, card_hop], Some(e));
                }
            }
        }

        card_hop.early = card_hop.commands.len();

        // Hop 1: the switch port facing the card. Its session stays open until the card
        // is done, so that a restore goes out before the save.
        let settings = self
            .hops_started(&mut [&mut sw_hop])
            .and_then(|()| session_settings(switch, switch.save_config));
        let (sw_secrets, sw_settings) = match settings {
            Ok(s) => s,
            Err(e) => {
                failed_hop(&mut sw_hop, &e);
                self.close(&mut card_hop, card_live);
                card_hop.skipped = Some("the uplink hop failed first".into());
                return self.conclude(req, vec![sw_hop, card_hop], Some(e));
            }
        };
        let mut sw = match self.connect(&mut sw_hop, switch, sw_platform, &sw_secrets, &sw_settings)
        {
            Ok(l) => l,
            Err(e) => {
                self.close(&mut card_hop, card_live);
                card_hop.skipped = Some("the uplink hop failed first".into());
                return self.conclude(req, vec![sw_hop, card_hop], Some(e));
            }
        };
        let scope = self.scope.clone();
        let sw_guard =
            |r: &[Removal]| policy::check_removals(switch, scope.as_ref(), "attach_port", r);
        let applied = sw_prepared.apply(&mut sw.session, sw.deadline, &sw_guard);
        sw_hop.absorb(applied.transcript);
        sw_hop.progress.append(applied.progress);
        let sw_done = match applied.result.map_err(Error::from).and_then(drift_fails) {
            Ok(done) => done,
            Err(e) => {
                // The card is not written; what reached the switch is in its progress.
                failed_hop(&mut sw_hop, &e);
                self.close(&mut sw_hop, sw);
                self.close(&mut card_hop, card_live);
                card_hop.skipped = Some("the uplink hop failed first".into());
                return self.conclude(req, vec![sw_hop, card_hop], Some(e));
            }
        };
        sw_hop.changed = sw_done.changed;
        sw_hop.msg = hop_msg(&sw_done, Op::AttachPort, switch);
        sw_hop.data = sw_done.data.clone();
        sw_hop.warnings.extend(sw_done.warnings.clone());

        // Hop 2: the card, in the session hop 0 opened.
        let card_result = self.card_step(&mut card_hop, &mut card_live, card, card_prepared, vlan);
        self.close(&mut card_hop, card_live);
        let card_result = match (card_result, card_hop.failed) {
            (Ok(_), Some(kind)) => Err(Error::Decided(kind, card_hop.msg.clone())),
            (r, _) => r,
        };
        let failure = match card_result {
            Ok(stale) => {
                if !stale.is_empty() && !req.check {
                    self.release_stale(&mut sw_hop, &mut sw, switch, sw_platform, &stale, req);
                }
                None
            }
            Err(e) => {
                failed_hop(&mut card_hop, &e);
                // Check mode sent nothing to the switch: nothing to restore.
                if !req.check && (sw_hop.changed || reached(&sw_hop.progress)) {
                    self.restore(
                        &mut sw_hop,
                        &mut sw,
                        switch,
                        sw_platform,
                        &sw_done,
                        vlan,
                        req,
                    );
                }
                Some(e)
            }
        };
        self.close(&mut sw_hop, sw);
        let failure = failure.or_else(|| closing_failure(&sw_hop));
        self.conclude(req, vec![sw_hop, card_hop], failure)
    }

    fn unplug_two(
        &mut self,
        req: &Request,
        (card, card_platform, card_prepared): (&Device, &Platform, &dyn Prepared),
        (switch, sw_platform): (&Device, &Platform),
        up: &Uplink,
    ) -> Result<(), Error> {
        // The switch port's own policy now; the VLANs once the card is read.
        policy::check_port(switch, sw_platform, &up.port)?;
        let port = req.ports[0].port.clone();
        let mut card_hop = Hop::new("card", card, card_platform, req.op, &port);
        let mut sw_hop = Hop::new("uplink", switch, sw_platform, Op::DetachPort, &up.port);
        card_hop.check = req.check;
        sw_hop.check = req.check;
        if self.report.dry_run {
            self.dry_hop(&mut card_hop, card, card_platform, card_prepared)?;
            sw_hop.skipped = Some(format!(
                "a dry run does not read {}: a real run takes off the uplink the VLANs the representor carries that no other port Mercury plugged on the card still uses (detach_port, mode trunk)",
                card.name
            ));
            return self.conclude_dry(req, vec![card_hop, sw_hop]);
        }

        let _held = self.lock_both(card, switch, sw_platform, card_platform, req)?;
        self.hops_started(&mut [&mut card_hop])?;
        self.device_contacted = true;
        let (card_secrets, card_settings) = match session_settings(card, card.save_config) {
            Ok(s) => s,
            Err(e) => {
                failed_hop(&mut card_hop, &e);
                sw_hop.skipped = Some("the card hop failed first".into());
                return self.conclude(req, vec![card_hop, sw_hop], Some(e));
            }
        };
        let mut live = match self.connect(
            &mut card_hop,
            card,
            card_platform,
            &card_secrets,
            &card_settings,
        ) {
            Ok(l) => l,
            Err(e) => {
                sw_hop.skipped = Some("the card hop failed first".into());
                return self.conclude(req, vec![card_hop, sw_hop], Some(e));
            }
        };
        // What every Mercury port on the card carries, before anything changes (the card's
        // lock keeps it so until we are done).
        let plugged = match card_prepared.plugged(&mut live.session, live.deadline) {
            Some((t, r)) => {
                card_hop.absorb(t);
                r.map_err(Error::from)
            }
            None => Err(Error::Internal(format!(
                "{} cannot list the ports Mercury plugged",
                card_platform.name
            ))),
        };
        let plugged = match plugged {
            Ok(p) => p,
            Err(e) => {
                failed_hop(&mut card_hop, &e);
                self.close(&mut card_hop, live);
                sw_hop.skipped = Some("the card could not be read".into());
                return self.conclude(req, vec![card_hop, sw_hop], Some(e));
            }
        };
        let (mut remove, mut why_kept) = vlans_to_remove(&plugged, &port);
        // The idle VLANs (the card's, the switch's) are never Mercury's to take off the
        // uplink: they may be its native or management VLAN.
        let idle = [card.default_vlan, switch.default_vlan];
        if remove.iter().any(|v| idle.contains(&Some(*v))) {
            remove.retain(|v| !idle.contains(&Some(*v)));
            if remove.is_empty() {
                why_kept =
                    "the representor carried only the idle VLAN, which stays on the uplink".into();
            }
        }
        card_hop.vlans = plugged
            .get(&port)
            .cloned()
            .flatten()
            .map(|v| v.into_iter().collect())
            .unwrap_or_default();
        sw_hop.vlans = remove.iter().map(|v| v.get()).collect();
        // The switch hop's requests, prepared and policy-checked before the card is written.
        let mut sw_prepared = Vec::new();
        for v in &remove {
            let r = uplink_request(Op::DetachPort, switch, sw_platform, &up.port, *v, req)?;
            let checked = policy::check(&r, switch, sw_platform, self.scope.as_ref())
                .map_err(Error::from)
                .and_then(|()| {
                    Ok(driver::for_platform(sw_platform).prepare(&r, switch, sw_platform)?)
                });
            match checked {
                Ok(p) => sw_prepared.push(p),
                Err(e) => {
                    card_hop.msg = "read only; nothing written".into();
                    self.close(&mut card_hop, live);
                    sw_hop.skipped = Some("refused before anything was written".into());
                    return self.conclude(req, vec![card_hop, sw_hop], Some(e));
                }
            }
        }
        let scope = self.scope.clone();
        let card_guard =
            |r: &[Removal]| policy::check_removals(card, scope.as_ref(), "unplug_port", r);
        let applied = card_prepared.apply(&mut live.session, live.deadline, &card_guard);
        card_hop.absorb(applied.transcript);
        card_hop.progress.append(applied.progress);
        let card_done = applied.result.map_err(Error::from).and_then(drift_fails);
        self.close(&mut card_hop, live);
        let card_done = match card_done {
            Ok(d) => d,
            Err(e) => {
                failed_hop(&mut card_hop, &e);
                sw_hop.skipped = Some("the card hop failed first".into());
                return self.conclude(req, vec![card_hop, sw_hop], Some(e));
            }
        };
        card_hop.changed = card_done.changed;
        card_hop.msg = hop_msg(&card_done, req.op, card);
        card_hop.data = card_done.data.clone();
        card_hop.warnings.extend(card_done.warnings);
        if card_hop.failed.is_some() {
            sw_hop.skipped = Some("the card session did not close cleanly".into());
            let e = Error::Decided(
                card_hop.failed.unwrap_or(ExitKind::Internal),
                card_hop.msg.clone(),
            );
            return self.conclude(req, vec![card_hop, sw_hop], Some(e));
        }
        if sw_prepared.is_empty() {
            sw_hop.skipped = Some(why_kept);
            return self.conclude(req, vec![card_hop, sw_hop], None);
        }

        // Hop 2: the uplink.
        let settings = self
            .hops_started(&mut [&mut sw_hop])
            .and_then(|()| session_settings(switch, switch.save_config));
        let (sw_secrets, sw_settings) = match settings {
            Ok(s) => s,
            Err(e) => {
                failed_hop(&mut sw_hop, &e);
                return self.conclude(req, vec![card_hop, sw_hop], Some(e));
            }
        };
        let mut sw = match self.connect(&mut sw_hop, switch, sw_platform, &sw_secrets, &sw_settings)
        {
            Ok(l) => l,
            Err(e) => return self.conclude(req, vec![card_hop, sw_hop], Some(e)),
        };
        let sw_guard =
            |r: &[Removal]| policy::check_removals(switch, scope.as_ref(), "detach_port", r);
        let mut failure = None;
        let mut msgs = Vec::new();
        for p in &sw_prepared {
            let applied = p.apply(&mut sw.session, sw.deadline, &sw_guard);
            sw_hop.absorb(applied.transcript);
            sw_hop.progress.append(applied.progress);
            match applied.result.map_err(Error::from).and_then(drift_fails) {
                Ok(done) => {
                    sw_hop.changed |= done.changed;
                    msgs.push(hop_msg(&done, Op::DetachPort, switch));
                    sw_hop.warnings.extend(done.warnings);
                    sw_hop.data = done.data;
                }
                Err(e) => {
                    failed_hop(&mut sw_hop, &e);
                    failure = Some(e);
                    break;
                }
            }
        }
        if failure.is_none() {
            sw_hop.msg = msgs.join("; ");
        }
        self.close(&mut sw_hop, sw);
        let failure = failure.or_else(|| closing_failure(&sw_hop));
        self.conclude(req, vec![card_hop, sw_hop], failure)
    }

    /// The card step of a plug, in the card's open session (closed by the caller).
    fn card_step(
        &mut self,
        hop: &mut Hop,
        live: &mut Live,
        card: &Device,
        prepared: &dyn Prepared,
        vlan: Vlan,
    ) -> Result<Vec<Vlan>, Error> {
        let scope = self.scope.clone();
        let guard = |r: &[Removal]| policy::check_removals(card, scope.as_ref(), "plug_port", r);
        let applied = prepared.apply(&mut live.session, live.deadline, &guard);
        hop.absorb(applied.transcript);
        hop.progress.append(applied.progress);
        let done = applied.result.map_err(Error::from).and_then(drift_fails);
        if let Err(e) = &done {
            failed_hop(hop, e);
        }
        // A representor Mercury had plugged with other VLANs (a re-plug, e.g. provisioning
        // → tenant): those no port on the card carries any more can leave the uplink.
        let mut stale = Vec::new();
        if let Ok(d) = &done {
            let old = replugged_from(&d.data, &hop.port, vlan);
            if !old.is_empty() {
                match prepared.plugged(&mut live.session, live.deadline) {
                    Some((t, Ok(plugged))) => {
                        hop.absorb(t);
                        stale = unused(&plugged, &old);
                        stale.retain(|v| Some(*v) != card.default_vlan);
                    }
                    Some((t, Err(e))) => {
                        hop.absorb(t);
                        hop.warnings.push(format!(
                            "VLAN(s) {old:?} the representor carried before may stay on the uplink: the card could not be read after the plug: {e}"
                        ));
                    }
                    None => {}
                }
            }
        }
        let done = done?;
        hop.changed = done.changed;
        hop.msg = hop_msg(&done, Op::PlugPort, card);
        hop.data = done.data;
        hop.warnings.extend(done.warnings);
        match hop.failed {
            Some(kind) => Err(Error::Decided(kind, hop.msg.clone())),
            None => Ok(stale),
        }
    }

    /// After a re-plug: takes off the uplink the VLANs the representor carried before and
    /// no port Mercury plugged on the card carries now. Housekeeping: a refusal or a failure
    /// is a warning (the plug itself is done), and `data.hops[0].released` says what came
    /// off.
    #[allow(clippy::too_many_arguments)]
    fn release_stale(
        &mut self,
        hop: &mut Hop,
        live: &mut Live,
        switch: &Device,
        platform: &Platform,
        stale: &[Vlan],
        req: &Request,
    ) {
        let scope = self.scope.clone();
        let guard =
            |r: &[Removal]| policy::check_removals(switch, scope.as_ref(), "detach_port", r);
        let mut released = Vec::new();
        for v in stale.iter().filter(|v| Some(**v) != switch.default_vlan) {
            let prepared = uplink_request(Op::DetachPort, switch, platform, &hop.port, *v, req)
                .and_then(|r| {
                    policy::check(&r, switch, platform, self.scope.as_ref())?;
                    Ok(driver::for_platform(platform).prepare(&r, switch, platform)?)
                });
            let prepared = match prepared {
                Ok(p) => p,
                Err(e) => {
                    hop.warnings.push(format!(
                        "VLAN {v} (the representor's before the re-plug) stays on the uplink {} {}: {e}",
                        switch.name, hop.port
                    ));
                    continue;
                }
            };
            let applied = prepared.apply(&mut live.session, live.deadline, &guard);
            hop.absorb(applied.transcript);
            hop.progress.append(applied.progress);
            match applied.result.map_err(Error::from).and_then(drift_fails) {
                Ok(done) => {
                    hop.changed |= done.changed;
                    released.push(v.get());
                }
                Err(e) => hop.warnings.push(format!(
                    "VLAN {v} (the representor's before the re-plug) may stay on the uplink {} {}: {e}",
                    switch.name, hop.port
                )),
            }
        }
        if !released.is_empty() {
            hop.msg = format!(
                "{}; VLAN(s) {released:?} no port on the card uses any more taken off",
                hop.msg
            );
        }
        hop.released = released;
    }

    /// Puts the switch port back to the state read before the plug: the VLAN taken off a
    /// port that was a trunk already, or the access VLAN it had (a port that was made a
    /// trunk for the card). Sent in the same session, before it saves.
    #[allow(clippy::too_many_arguments)]
    fn restore(
        &mut self,
        hop: &mut Hop,
        live: &mut Live,
        switch: &Device,
        platform: &Platform,
        done: &Done,
        vlan: Vlan,
        req: &Request,
    ) {
        let before = done.read.first().and_then(|r| r.before.clone());
        let undo = match &before {
            Some(b) if b.mode.as_deref() == Some("trunk") => {
                uplink_request(Op::DetachPort, switch, platform, &hop.port, vlan, req)
            }
            Some(b) => match b.access_vlan.and_then(|v| Vlan::new(v.into()).ok()) {
                Some(access) => restore_access(switch, &hop.port, access, req),
                None => simple_request(Op::ResetPort, switch, &hop.port, req),
            },
            // Not read: take off what was added.
            None => uplink_request(Op::DetachPort, switch, platform, &hop.port, vlan, req),
        };
        let scope = self.scope.clone();
        let guard = |r: &[Removal]| policy::check_removals(switch, scope.as_ref(), "restore", r);
        let first = hop.commands.len();
        let outcome: Result<Done, Error> = undo.and_then(|u| {
            let prepared = driver::for_platform(platform).prepare(&u, switch, platform)?;
            let applied = prepared.apply(&mut live.session, live.deadline, &guard);
            hop.absorb(applied.transcript);
            hop.progress.append(applied.progress);
            Ok(applied.result?)
        });
        let lines: Vec<String> = hop.commands[first..]
            .iter()
            .map(|c| c.input.clone())
            .collect();
        let after = outcome
            .as_ref()
            .ok()
            .and_then(|d| d.read.first().and_then(|r| r.after.clone()));
        let as_before = match (&before, &after) {
            (Some(b), Some(a)) => Some(same_l2(b, a)),
            _ => None,
        };
        hop.restore = Some(json!({
            "ok": outcome.is_ok() && as_before != Some(false),
            "lines": lines,
            "read_back_as_before": as_before,
            "before": before,
            "after": after,
            "error": outcome.as_ref().err().map(|e| e.to_string()),
        }));
    }

    /// Opens a session on a hop's device; a failure to connect or log in is the hop's.
    fn connect<'s>(
        &mut self,
        hop: &mut Hop,
        device: &Device,
        platform: &'s Platform,
        secrets: &Secrets,
        settings: &'s Settings,
    ) -> Result<Live<'s>, Error> {
        hop.contacted = true;
        let conn =
            match transport::open(device, secrets, platform.kind.channel(), settings.deadline) {
                Ok(c) => c,
                Err(e) => {
                    let e = Error::from(e);
                    hop.failed = Some(e.kind());
                    hop.msg = e.to_string();
                    return Err(e);
                }
            };
        self.report.warnings.extend(conn.warnings());
        let (session, opened) = Session::open(conn, platform, settings);
        hop.absorb(opened.transcript);
        if let Err(e) = opened.result {
            let e = Error::from(e);
            hop.failed = Some(e.kind());
            hop.msg = e.to_string();
            let finished = session.finish();
            hop.absorb(finished.transcript);
            return Err(e);
        }
        Ok(Live {
            session,
            deadline: settings.deadline,
        })
    }

    /// Closes a hop's session (saving when lines were applied); a failure here is the hop's.
    fn close(&mut self, hop: &mut Hop, live: Live) {
        let finished = live.session.finish();
        hop.absorb(finished.transcript);
        hop.progress.append(finished.progress);
        if let Err(e) = finished.result {
            let kind = crate::report::error::session_kind(&e);
            if hop.failed.is_none() {
                hop.failed = Some(kind);
                hop.msg = format!("{}; closing the session: {e}", hop.msg);
            }
        }
    }

    /// `--dry-run` of one hop: the same driver code in a session that records what it would
    /// send.
    fn dry_hop(
        &mut self,
        hop: &mut Hop,
        device: &Device,
        platform: &Platform,
        prepared: &dyn Prepared,
    ) -> Result<(), Error> {
        let settings = super::dry_settings(device, prepared);
        let (mut session, opened) = Session::dry(platform, &settings);
        hop.absorb(opened.transcript);
        let applied = prepared.apply(&mut session, settings.deadline, &|_| Ok(()));
        hop.absorb(applied.transcript);
        hop.absorb(session.finish().transcript);
        let done = applied.result?;
        hop.warnings.extend(done.warnings);
        hop.msg = format!("would send {} lines to {}", hop.commands.len(), device.name);
        Ok(())
    }

    /// Both devices' locks, taken in device-name order (the global order every two-hop
    /// request uses, so two of them never wait for each other in a cycle). Never coalesced:
    /// a request over two devices does not ride another's session.
    fn lock_both(
        &mut self,
        card: &Device,
        switch: &Device,
        sw_platform: &Platform,
        card_platform: &Platform,
        req: &Request,
    ) -> Result<Vec<lock::Held>, Error> {
        let holder = Holder::now(&self.report.request_id, req.op.name());
        let mut order = [(card, card_platform), (switch, sw_platform)];
        order.sort_by(|a, b| a.0.name.cmp(&b.0.name));
        let mut held = Vec::new();
        for (device, platform) in order {
            let locks = Locks {
                settings: &self.config.lock,
                dir: &self.config.lock_dir,
                device: &device.name,
                slots: device.max_sessions,
                holder: &holder,
                platform,
            };
            let deadline = Instant::now() + device.lock_timeout;
            let local = locks.acquire(deadline)?;
            held.push(locks.complete(local, deadline)?);
        }
        Ok(held)
    }

    /// The `started` audit records of hops about to touch their devices.
    fn hops_started(&mut self, hops: &mut [&mut Hop]) -> Result<(), Error> {
        let (id, who, why) = (
            self.report.request_id.clone(),
            self.who.clone(),
            self.why.clone(),
        );
        let whats: Vec<serde_json::Value> = hops.iter().map(|h| h.what(&self.what)).collect();
        for (what, hop) in whats.iter().zip(hops.iter_mut()) {
            let log = self.open_audit()?;
            log.write(&audit::record("started", &id, &who, what, &why, None))?;
            hop.started = true;
            self.started_written = true;
            self.hops_audited = true;
        }
        Ok(())
    }

    /// The `finished` records of the hops that started, and the one result.
    fn conclude(
        &mut self,
        req: &Request,
        hops: Vec<Hop>,
        failure: Option<Error>,
    ) -> Result<(), Error> {
        let (id, who, why) = (
            self.report.request_id.clone(),
            self.who.clone(),
            self.why.clone(),
        );
        for h in hops.iter().filter(|h| h.contacted || h.started) {
            let what = h.what(&self.what);
            let written = self.open_audit().and_then(|log| {
                Ok(log.write(&audit::record(
                    "finished",
                    &id,
                    &who,
                    &what,
                    &why,
                    Some(h.how()),
                ))?)
            });
            if let Err(e) = written {
                self.report
                    .warnings
                    .push(format!("audit record of {} not written: {e}", h.device));
            }
        }
        let mut progress = Progress::default();
        for h in &hops {
            let early = h.early.min(h.commands.len());
            self.report
                .commands
                .extend(h.commands[..early].iter().cloned());
        }
        for h in &hops {
            let early = h.early.min(h.commands.len());
            self.report
                .commands
                .extend(h.commands[early..].iter().cloned());
            self.report.round_trips += h.round_trips;
            self.report.warnings.extend(h.warnings.iter().cloned());
            self.report.changed |= h.changed || h.progress.took_effect;
        }
        let uplink = hops.iter().find(|h| h.name == "uplink");
        let card = hops.iter().find(|h| h.name == "card");
        let restored_ok = uplink
            .and_then(|u| u.restore.as_ref())
            .map(|r| r["ok"] == json!(true));
        for h in &hops {
            // A restored uplink is as it was: what stays in effect is only what failed to
            // be undone, and the card's own progress.
            if h.name == "uplink" && restored_ok == Some(true) {
                continue;
            }
            if reached(&h.progress) {
                progress.append(h.progress.clone());
            }
        }
        if let Some(c) = card {
            if let Some(ports) = c.data.get("ports") {
                self.report.data = json!({"ports": ports});
            }
        }
        if !self.report.data.is_object() {
            self.report.data = json!({});
        }
        self.report.data["hops"] = json!(hops.iter().map(Hop::json).collect::<Vec<_>>());
        let describe = |h: &Hop| -> String {
            if let Some(s) = &h.skipped {
                format!("{} {} {}: not changed ({s})", h.name, h.device, h.port)
            } else if h.msg.is_empty() {
                format!("{} {} {}: not reached", h.name, h.device, h.port)
            } else {
                format!("{} {} {}: {}", h.name, h.device, h.port, h.msg)
            }
        };
        if req.check {
            let would = self.report.changed;
            self.how_extra.insert("check".into(), json!(true));
            self.how_extra.insert("would_change".into(), json!(would));
        }
        let Some(err) = failure else {
            self.report.msg = format!(
                "{}{} on {} {} in two hops: {}",
                if req.check { "check: " } else { "" },
                req.op.name(),
                card.map(|c| c.device.as_str()).unwrap_or_default(),
                if req.check {
                    "predicted (nothing sent)"
                } else {
                    "applied"
                },
                hops.iter().map(describe).collect::<Vec<_>>().join("; ")
            );
            return Ok(());
        };
        let kind = err.kind();
        let mut msg = format!("{} failed: {err}", req.op.name());
        if let Some(u) = uplink {
            match (&u.restore, req.op) {
                (Some(r), _) if r["ok"] == json!(true) => msg.push_str(&format!(
                    "; the uplink {} {} was restored to the state read before the request (VLAN {} added, then taken off again{})",
                    u.device,
                    u.port,
                    u.vlans.first().copied().unwrap_or_default(),
                    if r["read_back_as_before"] == json!(true) { "; read back as before" } else { "" }
                )),
                (Some(r), _) => msg.push_str(&format!(
                    "; RESTORING the uplink {} {} FAILED ({}): it may still carry VLAN {}; read it back (verify-port) and detach it",
                    u.device,
                    u.port,
                    r["error"].as_str().unwrap_or("read back differs from the state before"),
                    u.vlans.first().copied().unwrap_or_default()
                )),
                (None, Op::UnplugPort) if card.is_some_and(|c| c.changed) => msg.push_str(&format!(
                    "; the representor was unplugged from {}, but the uplink {} {} still carries VLAN(s) {:?}: take them off with detach-port --device {} --port {} --mode trunk when the switch answers",
                    card.map(|c| c.device.as_str()).unwrap_or_default(),
                    u.device,
                    u.port,
                    u.vlans,
                    u.device,
                    u.port
                )),
                _ => {}
            }
        }
        if let Some(c) = card.filter(|c| c.skipped.is_some() && req.op == Op::PlugPort) {
            msg.push_str(&format!(
                "; the card {} was not changed (read only)",
                c.device
            ));
        }
        if let Some(u) = uplink.filter(|u| u.skipped.is_some() && req.op == Op::PlugPort) {
            msg.push_str(&format!(
                "; nothing was sent to the switch {} (the uplink {} is as it was)",
                u.device, u.port
            ));
        }
        self.report.note_progress(progress);
        Err(Error::Decided(kind, msg))
    }

    /// The result of a dry run over both hops.
    fn conclude_dry(&mut self, req: &Request, hops: Vec<Hop>) -> Result<(), Error> {
        for h in &hops {
            self.report.commands.extend(h.commands.iter().cloned());
            self.report.warnings.extend(h.warnings.iter().cloned());
        }
        self.report.data = json!({"hops": hops.iter().map(Hop::json).collect::<Vec<_>>()});
        self.report.msg = format!(
            "dry run: {} would send {} lines in two hops: {}",
            req.op.name(),
            self.report.commands.len(),
            hops.iter()
                .map(|h| match &h.skipped {
                    Some(s) => format!("{} {} {}: {s}", h.name, h.device, h.port),
                    None => format!("{} {} {}: {}", h.name, h.device, h.port, h.msg),
                })
                .collect::<Vec<_>>()
                .join("; ")
        );
        Ok(())
    }
}

/// A request for the switch hop: `op` (attach or detach, mode trunk) of `vlan` on the
/// uplink port, with the card request's reason and ids (for the switch's audit record),
/// read before write as the switch device and the request say.
fn uplink_request(
    op: Op,
    switch: &Device,
    platform: &Platform,
    port: &str,
    vlan: Vlan,
    card_req: &Request,
) -> Result<Request, Error> {
    let raw = RawRequest {
        op: Some(op.name().to_string()),
        device: Some(switch.name.clone()),
        port: Some(port.to_string()),
        vlan: Some(vlan),
        mode: Some("trunk".into()),
        verify: card_req.verify_asked,
        check: card_req.check.then_some(true),
        ..meta_raw(card_req)
    };
    let mut r = Request::from_raw(raw)?;
    r.meta.vif_id = card_req.meta.vif_id.clone();
    r.verify = settled_verify(&r, switch, platform);
    Ok(r)
}

/// The restore of a port that was an access port: its access VLAN again.
fn restore_access(
    switch: &Device,
    port: &str,
    access: Vlan,
    card_req: &Request,
) -> Result<Request, Error> {
    let raw = RawRequest {
        op: Some(Op::UpdatePort.name().to_string()),
        device: Some(switch.name.clone()),
        port: Some(port.to_string()),
        mode: Some("access".into()),
        native_vlan: Some(access),
        verify: Some(true),
        ..meta_raw(card_req)
    };
    Ok(Request::from_raw(raw)?)
}

fn simple_request(
    op: Op,
    switch: &Device,
    port: &str,
    card_req: &Request,
) -> Result<Request, Error> {
    let raw = RawRequest {
        op: Some(op.name().to_string()),
        device: Some(switch.name.clone()),
        port: Some(port.to_string()),
        verify: Some(true),
        ..meta_raw(card_req)
    };
    Ok(Request::from_raw(raw)?)
}

fn meta_raw(card_req: &Request) -> RawRequest {
    RawRequest {
        reason: card_req.meta.reason.clone(),
        request_id: card_req.meta.request_id.clone(),
        node_uuid: card_req.meta.node_uuid.clone(),
        port_uuid: card_req.meta.port_uuid.clone(),
        lifecycle: card_req.meta.lifecycle.clone(),
        ..RawRequest::default()
    }
}

/// A change the device accepted but does not show fails the hop (exit 1).
fn drift_fails(done: Done) -> Result<Done, Error> {
    match &done.drift {
        Some(d) => Err(Error::Drift(d.clone())),
        None => Ok(done),
    }
}

/// A hop's sentence, as a one-device request's message would read.
fn hop_msg(done: &Done, op: Op, device: &Device) -> String {
    match &done.summary {
        driver::Summary::Said(m) => m.clone(),
        driver::Summary::Skipped => format!(
            "{} on {}: already in the requested state (read back); nothing sent",
            op.name(),
            device.name
        ),
        _ if done.changed => format!("{} applied on {}", op.name(), device.name),
        _ => format!("{} on {}: nothing changed", op.name(), device.name),
    }
}

/// The same layer-2 state, on the fields both reads have.
fn same_l2(a: &PortState, b: &PortState) -> bool {
    a.mode == b.mode
        && a.access_vlan == b.access_vlan
        && a.native_vlan == b.native_vlan
        && a.allowed_vlans == b.allowed_vlans
}

/// The VLANs a port Mercury had plugged carried before this plug, other than `vlan` (from
/// the card driver's `data.ports[0].before`); empty for a new port or one not Mercury's.
fn replugged_from(data: &serde_json::Value, port: &str, vlan: Vlan) -> BTreeSet<u16> {
    let Some(before) = data["ports"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["port"] == port))
        .map(|p| &p["before"])
        .filter(|b| b.is_object())
    else {
        return BTreeSet::new();
    };
    if before["external_ids"][crate::driver::ovsdb::PLUGGED_BY] != "mercury" {
        return BTreeSet::new();
    }
    let as_u16 = |v: &serde_json::Value| v.as_u64().and_then(|x| u16::try_from(x).ok());
    before["tag"]
        .as_u64()
        .and_then(|x| u16::try_from(x).ok())
        .into_iter()
        .chain(
            before["trunks"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(as_u16),
        )
        .filter(|v| *v != vlan.get() && *v != crate::verify::parse::ovsdb::DEAD_VLAN)
        .collect()
}

/// Of `old`, the VLANs no port in `plugged` carries (none when one carries every VLAN).
fn unused(plugged: &Plugged, old: &BTreeSet<u16>) -> Vec<Vlan> {
    let mut used = BTreeSet::new();
    for vlans in plugged.values() {
        match vlans {
            Some(v) => used.extend(v),
            None => return Vec::new(),
        }
    }
    old.difference(&used)
        .filter_map(|v| Vlan::new((*v).into()).ok())
        .collect()
}

/// Which of the VLANs `port` carries can come off the uplink: those no other port Mercury
/// plugged on the card carries. The second value says why nothing comes off, when nothing
/// does.
fn vlans_to_remove(plugged: &Plugged, port: &str) -> (Vec<Vlan>, String) {
    let Some(mine) = plugged.get(port) else {
        return (
            Vec::new(),
            format!("{port} is not a port Mercury plugged on the card, so it says nothing about the uplink's VLANs"),
        );
    };
    let Some(mine) = mine else {
        return (
            Vec::new(),
            format!("{port} carried every VLAN of its bridge (plugged without a VLAN): which the uplink still needs is unknown"),
        );
    };
    let mut others: BTreeSet<u16> = BTreeSet::new();
    for (name, vlans) in plugged.iter().filter(|(n, _)| n.as_str() != port) {
        match vlans {
            Some(v) => others.extend(v),
            None => {
                return (
                    Vec::new(),
                    format!("{name} on the card carries every VLAN of its bridge"),
                )
            }
        }
    }
    let remove: Vec<Vlan> = mine
        .difference(&others)
        .filter_map(|v| Vlan::new((*v).into()).ok())
        .collect();
    let kept: Vec<String> = mine.intersection(&others).map(u16::to_string).collect();
    let why = if kept.is_empty() {
        format!("{port} carried no VLAN")
    } else {
        format!(
            "VLAN {} is still used by another port Mercury plugged on the card",
            kept.join(", ")
        )
    };
    (remove, why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn set(v: &[u16]) -> Option<BTreeSet<u16>> {
        Some(v.iter().copied().collect())
    }

    #[test]
    fn a_vlan_another_plugged_port_carries_stays_on_the_uplink() {
        let mut p: Plugged = BTreeMap::new();
        p.insert("pf0vf1".into(), set(&[120]));
        p.insert("pf0vf2".into(), set(&[120, 130]));
        let (r, why) = vlans_to_remove(&p, "pf0vf1");
        assert!(r.is_empty());
        assert!(why.contains("120"), "{why}");
        let (r, _) = vlans_to_remove(&p, "pf0vf2");
        assert_eq!(r.iter().map(|v| v.get()).collect::<Vec<_>>(), vec![130]);
        p.insert("pf0vf3".into(), None);
        let (r, why) = vlans_to_remove(&p, "pf0vf2");
        assert!(r.is_empty() && why.contains("pf0vf3"), "{why}");
        let (r, why) = vlans_to_remove(&p, "pf0vf9");
        assert!(
            r.is_empty() && why.contains("not a port Mercury plugged"),
            "{why}"
        );
    }
}
