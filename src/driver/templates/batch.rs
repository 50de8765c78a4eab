//! Several prepared requests of the `templates` kind applied as one batch (request
//! coalescing: the holder's spooled requests, docs/scale.md "Batches").
//!
//! What a batch shares: one read of all its ports before the change (one visit to the read
//! mode), one read of the VLAN table, one configuration-mode visit carrying every request's
//! lines in arrival order (and the platform's commit), one read of all its ports after; the
//! save is the session's, once. What stays each request's own: its plan (made from its own
//! ports as read), policy's say on what it removes, its before/after, `changed`, its
//! outcome, and the lines of the transcript that were sent for it (its show lines, its
//! configuration lines, and the shared mode changes).
//!
//! The caller only batches requests on distinct ports (a second request on a port starts
//! the next batch, so arrival order holds where it matters), all of port operations
//! ([`batch_ports`]). Failures are attributed to the request whose line failed:
//! - a line refused on a platform that applies each line as it goes: the requests before it
//!   are applied, the one it belongs to failed (its ports put back as read, when they were
//!   read), the requests after it are sent next in a batch of their own;
//! - a refusal that left nothing in effect where the request cannot be known (a commit
//!   refused and rolled back, configuration mode refused, a show line refused): every
//!   request concerned runs on its own, as it would have alone;
//! - a failure that leaves the session unusable (timeout, lost connection): the request in
//!   flight gets it, so does every other request of the batch with what of it took effect
//!   (nothing, for those not yet sent).
//!
//! A request that needs a VLAN the device lacks runs on its own after the batch (it reads
//! and creates the VLAN itself), so that a batch never creates or deletes a VLAN another
//! request of it uses.

use std::collections::BTreeMap;
use std::time::Instant;

use super::{
    needed_vlans, removals_unread, show_lines, unparsable, unread_lines, FromRead, TemplatePlan,
};
use crate::driver::{Applied, Done, Failure, Guard, Prepared};
use crate::request::Op;
use crate::session::plan::{Line, Plan};
use crate::session::{Progress, Session, SessionError, Transcript};
use crate::verify::{self, Check, PortState};

/// One request of a batch: prepared by the driver, with policy's say on what it removes.
pub struct Part<'a> {
    /// The prepared request.
    pub prepared: &'a dyn Prepared,
    /// Its removal guard (its caller's scope).
    pub guard: Guard<'a>,
}

/// The ports a prepared request changes, when it may join a batch (a port operation of the
/// `templates` kind, not a check); `None`: it runs on its own.
pub fn batch_ports(p: &dyn Prepared) -> Option<Vec<String>> {
    let tp = p.as_templates()?;
    let port_op = matches!(
        tp.req.op,
        Op::AttachPort | Op::DetachPort | Op::UpdatePort | Op::ResetPort
    );
    (port_op && !tp.req.check && p.mutates())
        .then(|| tp.req.ports.iter().map(|c| c.port.clone()).collect())
}

/// Applies `parts` (on distinct ports, in arrival order) as one batch in the open session:
/// one [`Applied`] per part, in order, each with its own transcript, progress and outcome.
/// Fewer than two parts, parts of another kind or device, or a dry session: each runs on its
/// own ([`Prepared::apply`]).
pub fn apply_batch(parts: &[Part<'_>], session: &mut Session, deadline: Instant) -> Vec<Applied> {
    let plans: Option<Vec<&TemplatePlan<'_>>> =
        parts.iter().map(|p| p.prepared.as_templates()).collect();
    let plans = plans.filter(|v| {
        v.len() > 1
            && v.windows(2).all(|w| {
                w[0].platform.name == w[1].platform.name
                    && w[0].device.name == w[1].device.name
                    && w[0].configured.name == w[1].configured.name
            })
    });
    let Some(plans) = plans.filter(|_| !session.is_dry() && parts.iter().all(combinable)) else {
        return parts
            .iter()
            .map(|p| p.prepared.apply(session, deadline, p.guard))
            .collect();
    };
    let mut works: Vec<Work<'_>> = plans
        .into_iter()
        .zip(parts)
        .map(|(tp, part)| Work {
            tp,
            part,
            transcript: Transcript::default(),
            progress: Progress::default(),
            result: None,
            checks: tp.checks.clone().unwrap_or_default(),
            before: None,
            plan: Plan::default(),
            alone: false,
            sent: false,
        })
        .collect();
    run(&mut works, session, deadline);
    works
        .into_iter()
        .map(|w| Applied {
            transcript: w.transcript,
            progress: w.progress,
            result: w.result.unwrap_or_else(|| {
                Err(Failure::Session(SessionError::Transport(
                    crate::transport::TransportError::Lost(
                        "the batch ended before this request was applied".into(),
                    ),
                )))
            }),
        })
        .collect()
}

fn combinable(p: &Part<'_>) -> bool {
    batch_ports(p.prepared).is_some()
}

/// One request's state in the batch.
struct Work<'a> {
    tp: &'a TemplatePlan<'a>,
    part: &'a Part<'a>,
    transcript: Transcript,
    progress: Progress,
    /// Settled: how it ended.
    result: Option<Result<Done, Failure>>,
    /// What is expected of its ports (refined from what was read); empty: not verified.
    checks: Vec<Check>,
    /// Its ports as read before the change.
    before: Option<Vec<PortState>>,
    /// Its lines, planned from what was read.
    plan: Plan,
    /// To run on its own after the batch.
    alone: bool,
    /// Its lines were all accepted in the combined visit.
    sent: bool,
}

impl Work<'_> {
    fn open(&self) -> bool {
        self.result.is_none() && !self.alone
    }

    fn verified(&self) -> bool {
        self.tp.checks.is_some()
    }
}

fn run(works: &mut [Work<'_>], session: &mut Session, deadline: Instant) {
    let all: Vec<usize> = (0..works.len()).collect();
    // 1. Every verified request's ports, read in one visit.
    let verified: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&i| works[i].verified())
        .collect();
    if !verified.is_empty() {
        match read_all(works, &verified, session, deadline) {
            Ok(states) => {
                for (i, s) in states {
                    match s {
                        Ok(v) => works[i].before = Some(v),
                        Err(e) => works[i].result = Some(Err(e.into())),
                    }
                }
            }
            // A show line refused (a port the platform does not know): each on its own, so
            // that the refusal is that request's.
            Err(f) if f.usable => verified.iter().for_each(|&i| works[i].alone = true),
            Err(f) => {
                fail(works, &all, &f.error);
                return;
            }
        }
    }
    // 2. Each request planned from its own ports; policy sees what each would remove.
    for w in works.iter_mut().filter(|w| w.open()) {
        plan_one(w);
    }
    // 3. The VLANs the changes need: one read of the VLAN table.
    if !vlans_present(works, session, deadline) {
        return;
    }
    // 4. One configuration-mode visit for every request with lines, split where a line of
    // one request is refused.
    let mut queue: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&i| works[i].open() && !works[i].plan.lines.is_empty())
        .collect();
    while !queue.is_empty() {
        queue = apply_combined(works, &queue, session, deadline);
    }
    // 5. Every applied verified request's ports, read again in one visit.
    let read_again: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&i| works[i].sent && works[i].result.is_none() && works[i].verified())
        .collect();
    if !read_again.is_empty() {
        match read_all(works, &read_again, session, deadline) {
            Ok(states) => {
                for (i, s) in states {
                    match s {
                        Ok(after) => conclude(&mut works[i], after),
                        Err(e) => works[i].result = Some(Err(e.into())),
                    }
                }
            }
            Err(f) if f.usable => {
                for &i in &read_again {
                    let w = &mut works[i];
                    let read = super::read_states(
                        session,
                        &w.tp.configured,
                        &w.checks,
                        deadline,
                        &mut w.transcript,
                    );
                    match read {
                        Ok(Some(after)) => conclude(w, after),
                        Ok(None) => w.result = Some(Ok(Done::default())),
                        Err(e) => w.result = Some(Err(e.into())),
                    }
                }
            }
            Err(f) => fail(works, &read_again, &f.error),
        }
    }
    for w in works.iter_mut().filter(|w| w.sent && w.result.is_none()) {
        // Not verified: the lines were accepted.
        w.result = Some(Ok(Done {
            changed: !w.plan.lines.is_empty(),
            ..Done::default()
        }));
    }
    // 6. Those that run on their own, in arrival order.
    for w in works.iter_mut().filter(|w| w.alone && w.result.is_none()) {
        let applied = w.part.prepared.apply(session, deadline, w.part.guard);
        w.transcript.append(applied.transcript);
        w.progress.append(applied.progress);
        w.result = Some(applied.result);
    }
}

/// Plans one request from its ports as read (or, not verified, as prepared), settling it
/// when nothing needs sending or policy refuses what it would remove.
fn plan_one(w: &mut Work<'_>) {
    let tp = w.tp;
    let Some(before) = w.before.clone() else {
        if let Err(d) = (w.part.guard)(&removals_unread(&tp.req)) {
            w.result = Some(Err(d.into()));
            return;
        }
        w.plan = tp.plan.clone();
        if w.plan.lines.is_empty() {
            w.result = Some(Ok(Done::default()));
        }
        return;
    };
    match tp.plan_from_read(&w.checks, &before) {
        Err(u) => w.result = Some(Err(u.into())),
        Ok(FromRead::Holds(done)) => w.result = Some(Ok(done)),
        Ok(FromRead::Change {
            plan,
            checks,
            removals,
        }) => match (w.part.guard)(&removals) {
            Err(d) => w.result = Some(Err(d.into())),
            Ok(()) => {
                w.checks = checks;
                w.plan = plan;
            }
        },
    }
}

/// Reads the VLAN table once for every request whose change needs VLANs (platforms that
/// declare `verify.vlan_table`); a request needing one the device lacks runs on its own.
/// `false`: the session failed and every request is settled.
fn vlans_present(works: &mut [Work<'_>], session: &mut Session, deadline: Instant) -> bool {
    let needing: Vec<usize> = (0..works.len())
        .filter(|&i| {
            let w = &works[i];
            w.open()
                && w.before.is_some()
                && !w.plan.lines.is_empty()
                && !needed_vlans(&w.tp.req, w.tp.device).is_empty()
        })
        .collect();
    let Some(&first) = needing.first() else {
        return true;
    };
    let platform = &works[first].tp.configured;
    let (Ok(spec), Some(line)) = (
        platform.verify.spec(&platform.name),
        works[first].tp.vlan_table_line(),
    ) else {
        return true;
    };
    let (segment, outputs) = session.read(&[line], spec.mode.as_deref(), deadline);
    share(works, segment.transcript, &[], &needing);
    let have = match segment.result {
        Ok(()) => verify::parse::vlan_ids(spec, &outputs.join("\n")),
        Err(_) if session.healthy() => Err(String::new()),
        Err(e) => {
            let all: Vec<usize> = (0..works.len()).collect();
            fail(works, &all, &e);
            return false;
        }
    };
    for i in needing {
        let w = &mut works[i];
        let missing = match &have {
            Ok(have) => needed_vlans(&w.tp.req, w.tp.device)
                .iter()
                .any(|v| !have.contains(&v.get())),
            // Refused or not understood: the request reads it again on its own and says.
            Err(_) => true,
        };
        w.alone |= missing;
    }
    true
}

/// One configuration-mode visit with the lines of `queue` in order. Returns the requests
/// still to send (those after a refused line, when the session is still usable).
fn apply_combined(
    works: &mut [Work<'_>],
    queue: &[usize],
    session: &mut Session,
    deadline: Instant,
) -> Vec<usize> {
    let mut combined = Plan::default();
    let mut owners: Vec<usize> = Vec::new();
    for &i in queue {
        for l in &works[i].plan.lines {
            combined.lines.push(l.clone());
            owners.push(i);
        }
    }
    let owned: Vec<(usize, String)> = owners
        .iter()
        .zip(&combined.lines)
        .map(|(i, l)| (*i, l.text.clone()))
        .collect();
    let segment = session.apply(&combined, deadline);
    share(works, segment.transcript, &owned, queue);
    let commit = &works[queue[0]].tp.platform.commit;
    let p = segment.progress;
    // Each accepted line by its place in the combined plan: a request's own lines, and the
    // commit (after every request's lines) for all. On a `type_ahead` CLI lines after a
    // refused one in its interface block are accepted too; they are the refused request's.
    let own_accepted = |i: usize| -> Vec<String> {
        p.accepted_at
            .iter()
            .zip(&p.accepted)
            .filter(|(at, _)| owners.get(**at).is_none_or(|o| *o == i))
            .map(|(_, a)| a.clone())
            .collect()
    };
    let e = match segment.result {
        Ok(()) => {
            for &i in queue {
                let w = &mut works[i];
                w.progress.append(Progress {
                    accepted: own_accepted(i),
                    took_effect: true,
                    ..Progress::default()
                });
                w.sent = true;
            }
            return Vec::new();
        }
        Err(e) => e,
    };
    let failed_at = p.failed_at.filter(|n| {
        (p.rejected.is_some() || p.in_flight.is_some()) && *n < owners.len() && commit.is_empty()
    });
    let Some(n) = failed_at else {
        // Refused where no request can be named (configuration mode, the commit) or on a
        // platform whose commit is all or nothing.
        if !p.took_effect && session.healthy() {
            // Nothing of it is in effect: each runs on its own and meets its own outcome.
            queue.iter().for_each(|&i| works[i].alone = true);
        } else {
            for &i in queue {
                let w = &mut works[i];
                w.progress.append(Progress {
                    accepted: own_accepted(i),
                    rejected: p.rejected.clone(),
                    in_flight: p.in_flight.clone(),
                    unconfirmed: p.unconfirmed.clone(),
                    took_effect: p.took_effect,
                    ..Progress::default()
                });
                w.result = Some(Err(e.clone().into()));
            }
        }
        return Vec::new();
    };
    let culprit = owners[n];
    let mut rest = Vec::new();
    for &i in queue {
        let start = owners.iter().position(|o| *o == i).unwrap_or(n);
        if i == culprit {
            let w = &mut works[i];
            let accepted = own_accepted(i);
            let took_effect =
                !accepted.is_empty() || p.in_flight.is_some() || !p.unconfirmed.is_empty();
            w.progress.append(Progress {
                accepted,
                rejected: p.rejected.clone(),
                in_flight: p.in_flight.clone(),
                unconfirmed: p.unconfirmed.clone(),
                took_effect,
                ..Progress::default()
            });
            // Refused part-way on a platform that applies each line as it goes: its ports
            // back as they were read, as when it runs alone.
            if let (Some(before), true) = (w.before.clone(), took_effect && session.healthy()) {
                let restored =
                    w.tp.restore(session, &w.checks, &before, deadline, &mut w.transcript);
                w.progress.unrestorable = unread_lines(w.tp.platform, &w.progress.accepted);
                w.progress.restored = Some(restored && w.progress.unrestorable.is_empty());
            }
            w.result = Some(Err(e.clone().into()));
        } else if start < n {
            let w = &mut works[i];
            w.progress.append(Progress {
                accepted: own_accepted(i),
                took_effect: true,
                ..Progress::default()
            });
            w.sent = true;
        } else if session.healthy() {
            rest.push(i);
        } else {
            // Never sent: the session failed before its lines.
            works[i].result = Some(Err(e.clone().into()));
        }
    }
    rest
}

/// Each request's ports read back: its before/after and verdict.
fn conclude(w: &mut Work<'_>, after: Vec<PortState>) {
    let Some(before) = w.before.clone() else {
        w.result = Some(Ok(Done::default()));
        return;
    };
    let done = w.tp.verified(&w.checks, before, after, &w.plan);
    w.result = Some(Ok(done));
}

/// A combined read that failed: with whose line, and whether the session is still usable.
struct ReadFailed {
    usable: bool,
    error: SessionError,
}

/// The parse of one request's ports (or why they could not be read), by request.
type States = BTreeMap<usize, Result<Vec<PortState>, SessionError>>;

/// Reads the ports of the requests `who` in one visit to the read mode: every show line of
/// every port, then each port's parse.
fn read_all(
    works: &mut [Work<'_>],
    who: &[usize],
    session: &mut Session,
    deadline: Instant,
) -> Result<States, ReadFailed> {
    let platform = &works[who[0]].tp.configured;
    let spec = platform
        .verify
        .spec(&platform.name)
        .map_err(|message| ReadFailed {
            usable: true,
            error: SessionError::Unparsable {
                line: String::new(),
                message,
            },
        })?;
    let mut lines: Vec<Line> = Vec::new();
    let mut owned: Vec<(usize, String)> = Vec::new();
    // (request, check, first output, number of lines)
    let mut spans: Vec<(usize, usize, usize, usize)> = Vec::new();
    for &i in who {
        for (k, c) in works[i].checks.iter().enumerate() {
            let ls = show_lines(platform, spec, &c.port).map_err(|e| ReadFailed {
                usable: true,
                error: SessionError::Unparsable {
                    line: c.port.clone(),
                    message: e.0,
                },
            })?;
            spans.push((i, k, lines.len(), ls.len()));
            owned.extend(ls.iter().map(|l| (i, l.text.clone())));
            lines.extend(ls);
        }
    }
    let (segment, outputs) = session.read(&lines, spec.mode.as_deref(), deadline);
    share(works, segment.transcript, &owned, who);
    if let Err(error) = segment.result {
        return Err(ReadFailed {
            usable: matches!(error, SessionError::Rejected { .. }) && session.healthy(),
            error,
        });
    }
    let mut states: States = who.iter().map(|&i| (i, Ok(Vec::new()))).collect();
    for (i, k, start, len) in spans {
        let c = &works[i].checks[k];
        let Some(out) = outputs.get(start..start + len) else {
            continue;
        };
        let parsed = match verify::parse(platform, spec, &c.port, out) {
            Ok(s) => Ok(s),
            Err(_) if c.may_be_absent => Ok(PortState::absent()),
            Err(message) => Err(unparsable(&lines[start..start + len], message)),
        };
        if let Some(slot) = states.get_mut(&i) {
            match (slot.as_mut(), parsed) {
                (Ok(v), Ok(s)) => v.push(s),
                (Ok(_), Err(e)) => *slot = Err(e),
                (Err(_), _) => {}
            }
        }
    }
    Ok(states)
}

/// Settles every unsettled request of `which` with the session's failure (what of each took
/// effect stays in its progress).
fn fail(works: &mut [Work<'_>], which: &[usize], e: &SessionError) {
    for &i in which {
        let w = &mut works[i];
        if w.result.is_none() {
            w.result = Some(Err(e.clone().into()));
        }
    }
}

/// Hands out a shared segment's commands: each of `owned` (in order) to its request, every
/// other line (mode changes, the commit, a shared show line) to each of `sharing`.
fn share(
    works: &mut [Work<'_>],
    transcript: Transcript,
    owned: &[(usize, String)],
    sharing: &[usize],
) {
    let mut next = 0;
    for cmd in transcript.commands {
        match owned.get(next) {
            Some((i, text)) if *text == cmd.input => {
                let t = &mut works[*i].transcript;
                t.commands.push(cmd);
                t.round_trips += 1;
                next += 1;
            }
            _ => {
                for &i in sharing {
                    let t = &mut works[i].transcript;
                    t.commands.push(cmd.clone());
                    t.round_trips += 1;
                }
            }
        }
    }
}
