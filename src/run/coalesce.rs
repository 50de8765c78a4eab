//! The lock path of a request: this host's lock slots (and etcd's), and request
//! coalescing — spooling a planned request for the holder, or serving spooled requests in
//! our own session: every request waiting is claimed at once and cut, in arrival order,
//! into batches of port operations on distinct ports that the driver applies as one
//! (`driver::apply_batch`). See `spool` for the on-disk protocol and docs/scale.md.

use super::*;

/// The lock slots of one device, for one request.
pub(super) struct Locks<'l> {
    pub(super) settings: &'l crate::config::LockSettings,
    pub(super) dir: &'l Path,
    pub(super) device: &'l str,
    pub(super) slots: u32,
    pub(super) holder: &'l Holder,
    /// The device's platform (the coalescing key).
    pub(super) platform: &'l Platform,
}

impl Locks<'_> {
    /// Waits for a slot, telling a person on stderr who holds the device once the wait
    /// passes a second (see [`WaitNotice`]).
    pub(super) fn acquire(&self, deadline: Instant) -> Result<DeviceLock, Error> {
        let mut notice = WaitNotice::new(self.dir, self.device, self.slots);
        let lock = lock::acquire_watched(
            self.dir,
            self.device,
            self.slots,
            deadline.saturating_duration_since(Instant::now()),
            self.holder,
            &mut |waited| notice.tick(waited),
        );
        notice.done();
        Ok(lock?)
    }

    pub(super) fn try_acquire(&self) -> Result<Option<DeviceLock>, Error> {
        Ok(lock::try_acquire(
            self.dir,
            self.device,
            self.slots,
            self.holder,
        )?)
    }

    /// Threads blocked in `flock` on each slot, each sending the slot it takes as
    /// [`Wake::Lock`] (see [`lock::wait_for_slots`]). A slot free already comes at once.
    pub(super) fn wait_for_slots(
        &self,
        tx: &std::sync::mpsc::Sender<Wake<DeviceLock, Error>>,
    ) -> Result<(), Error> {
        Ok(lock::wait_for_slots(
            self.dir,
            self.device,
            self.slots,
            self.holder,
            tx,
            |r| Wake::Lock(r.map_err(Error::from)),
        )?)
    }

    pub(super) fn complete(
        &self,
        local: DeviceLock,
        deadline: Instant,
    ) -> Result<lock::Held, Error> {
        Ok(lock::complete(
            self.settings,
            local,
            self.device,
            self.slots,
            self.holder,
            deadline,
        )?)
    }

    pub(super) fn timeout(&self, waited: Duration) -> LockError {
        LockError::Timeout {
            device: self.device.to_string(),
            waited,
            holders: lock::describe_holders(self.dir, self.device, self.slots),
        }
    }
}

/// Progress on stderr while a request waits for a device lock: once the wait passes a
/// second, one line naming the holders (pid, request id, operation, since); when stderr is
/// a terminal, a counter after it updated every second. Nothing when the lock comes at
/// once, and never anything on stdout (the result's).
pub(super) struct WaitNotice<'a> {
    dir: &'a Path,
    device: &'a str,
    slots: u32,
    shown: Option<u64>,
    terminal: bool,
}

impl<'a> WaitNotice<'a> {
    pub(super) fn new(dir: &'a Path, device: &'a str, slots: u32) -> WaitNotice<'a> {
        use std::io::IsTerminal;
        WaitNotice {
            dir,
            device,
            slots,
            shown: None,
            terminal: std::io::stderr().is_terminal(),
        }
    }

    pub(super) fn tick(&mut self, waited: Duration) {
        use std::io::Write;
        if waited < Duration::from_secs(1) {
            return;
        }
        let secs = waited.as_secs();
        let mut err = std::io::stderr().lock();
        match self.shown {
            None => {
                let _ = writeln!(
                    err,
                    "mercury: waiting for the lock of {}: held by {}",
                    self.device,
                    lock::describe_holders(self.dir, self.device, self.slots)
                );
                if self.terminal {
                    let _ = write!(err, "\rmercury: waited {secs} s");
                }
            }
            Some(last) if self.terminal && last != secs => {
                let _ = write!(err, "\rmercury: waited {secs} s");
            }
            Some(_) => {}
        }
        let _ = err.flush();
        self.shown = Some(secs);
    }

    pub(super) fn done(&mut self) {
        if self.terminal && self.shown.is_some() {
            eprintln!();
        }
    }
}

/// Policy's say on what one claimed request removes (its caller's scope).
type BoxedGuard<'g> = Box<dyn Fn(&[Removal]) -> Result<(), policy::Denied> + 'g>;

/// A claimed request prepared by this process's driver, with its caller's scope.
struct Ready<'d, 'c> {
    prepared: Box<dyn driver::Prepared + 'd>,
    scope: Option<Scope<'c>>,
    op: Op,
}

/// What the holder did with one claimed request.
pub(super) struct Served {
    /// The lines sent for it.
    transcript: Transcript,
    /// Its own outcome (the shared save comes after).
    result: Result<driver::Done, Error>,
    /// How far its change got.
    progress: Progress,
}

impl<'a> Job<'a> {
    /// The lock is busy: spool the request for the holder and wait for its answer, or for
    /// the lock. `Some(lock)`: run it ourselves; `None`: done, the report is filled.
    pub(super) fn wait_in_spool(
        &mut self,
        spool: &Spool,
        raw: &RawRequest,
        req: &Request,
        device: &Device,
        locks: &Locks,
        lock_deadline: Instant,
    ) -> Result<Option<DeviceLock>, Error> {
        // A holder may touch the device for us as soon as the request is spooled.
        self.audit_started()?;
        let compat = compat(self.config, device, locks.platform);
        let mut entry = Entry::new(&self.report.request_id, req.op.name(), &compat, raw);
        if let Some(s) = &self.scope {
            entry.caller = Some(s.caller.name.clone());
            entry.allow_devices = s.allow_devices.clone();
        }
        let ticket = match spool.submit(&entry) {
            Ok(t) => t,
            Err(e) => {
                self.report
                    .warnings
                    .push(format!("request not coalesced: {e}"));
                return Ok(Some(locks.acquire(lock_deadline)?));
            }
        };
        // A holder stops claiming at the end of its own request deadline and gives each
        // claimed request at most request_timeout, so an answer is due within two of them.
        let cap = device.request_timeout * 2 + Duration::from_secs(30);
        let mut notice = WaitNotice::new(locks.dir, locks.device, locks.slots);
        let started = Instant::now();
        let waited = spool::wait(
            &ticket,
            lock_deadline,
            cap,
            |tx| locks.wait_for_slots(tx),
            || notice.tick(started.elapsed()),
        );
        notice.done();
        let answer = match waited {
            Ok(Waited::Lock(lock)) => return Ok(Some(lock)),
            Ok(Waited::TimedOut) => return Err(locks.timeout(device.lock_timeout).into()),
            Ok(Waited::Answered(a)) => a,
            Err(e) => {
                if matches!(e, Error::Spool(SpoolError::Abandoned(_))) {
                    self.device_contacted = true;
                }
                return Err(e);
            }
        };
        self.device_contacted = true;
        self.report.commands = answer.commands.clone();
        self.report.round_trips = answer.round_trips;
        self.report.changed = answer.changed;
        self.report.msg = answer.msg.clone();
        self.report.partial = answer.partial.clone();
        self.report.diff = answer.diff.clone();
        let mut data = match &answer.data {
            serde_json::Value::Object(m) => m.clone(),
            _ => serde_json::Map::new(),
        };
        data.insert(
            "coalesced".into(),
            json!({
                "role": "waiter",
                "holder_pid": answer.holder.pid,
                "holder_request_id": answer.holder.request_id,
            }),
        );
        self.report.data = serde_json::Value::Object(data);
        self.how_extra
            .insert("coalesced_by".into(), json!(answer.holder.request_id));
        match answer.rc {
            0 => Ok(None),
            rc => Err(SpoolError::Relayed {
                rc,
                message: answer.msg.clone(),
            }
            .into()),
        }
    }

    /// Claims spooled requests (oldest first, at most `max_batch` in all) and applies them
    /// in this session: every request waiting at the moment is claimed at once and the
    /// requests of port operations on distinct ports are applied as one batch
    /// ([`driver::apply_batch`]: one read before, one configuration-mode visit, one read
    /// after); a request on a port an earlier one of the batch changes, or of another kind,
    /// closes the batch and runs after it, so arrival order holds. Requests that arrive
    /// meanwhile are claimed in the next pass. Each request is prepared again by this
    /// process's driver and keeps its own outcome and failure isolation.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn serve(
        &mut self,
        session: &mut Session,
        spool: &Spool,
        compat: &str,
        device: &Device,
        platform: &Platform,
        own_deadline: Instant,
        held: &lock::Held,
    ) -> Vec<(Claim, Served)> {
        let mut server = spool.server(compat);
        let mut out = Vec::new();
        let max = self.config.coalesce.max_batch as usize;
        let mut stop = false;
        while !stop
            && session.healthy()
            && out.len() < max
            && Instant::now() < own_deadline
            && !held.lost()
        {
            let mut claims = Vec::new();
            while out.len() + claims.len() < max {
                match server.claim_next() {
                    Ok(Some(claim)) => claims.push(claim),
                    Ok(None) => break,
                    Err(e) => {
                        self.report
                            .warnings
                            .push(format!("coalescing stopped: {e}"));
                        stop = true;
                        break;
                    }
                }
            }
            if claims.is_empty() {
                break;
            }
            let (served, batches) = self.apply_claims(session, &claims, device, platform);
            self.batches.extend(batches);
            for (claim, served) in claims.into_iter().zip(served) {
                // A waiter's change that failed part-way and was not undone must not be
                // saved with everyone else's: the session's save is skipped.
                let p = &served.progress;
                if served.result.is_err() && p.took_effect && p.restored != Some(true) {
                    session.skip_save();
                    self.report.warnings.push(format!(
                        "not saved: coalesced request {} failed part-way and could not be undone; saving would have persisted its partial change",
                        claim.entry.request_id
                    ));
                }
                out.push((claim, served));
            }
        }
        out
    }

    /// The claimed requests of one pass, in arrival order: prepared, grouped into batches
    /// of port operations on distinct ports, applied. Also returns the request ids of each
    /// batch of more than one.
    fn apply_claims(
        &self,
        session: &mut Session,
        claims: &[Claim],
        device: &Device,
        platform: &Platform,
    ) -> (Vec<Served>, Vec<Vec<String>>) {
        let mut served: Vec<Option<Served>> = claims.iter().map(|_| None).collect();
        let mut ready = Vec::new();
        for (i, claim) in claims.iter().enumerate() {
            match self.prepare_claimed(&claim.entry, device, platform) {
                Ok(r) => ready.push((i, r)),
                Err(e) => {
                    served[i] = Some(Served {
                        transcript: Transcript::default(),
                        result: Err(e),
                        progress: Progress::default(),
                    })
                }
            }
        }
        // Split at the first request that cannot join the current batch.
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut current: Vec<usize> = Vec::new();
        let mut ports = std::collections::BTreeSet::new();
        for (k, (_, r)) in ready.iter().enumerate() {
            match driver::batch_ports(r.prepared.as_ref()) {
                Some(p) if !p.iter().any(|x| ports.contains(x)) => {
                    ports.extend(p);
                    current.push(k);
                }
                Some(p) => {
                    groups.push(std::mem::take(&mut current));
                    ports = p.into_iter().collect();
                    current.push(k);
                }
                None => {
                    if !current.is_empty() {
                        groups.push(std::mem::take(&mut current));
                    }
                    ports.clear();
                    groups.push(vec![k]);
                }
            }
        }
        if !current.is_empty() {
            groups.push(current);
        }
        let guards: Vec<BoxedGuard> = ready
            .iter()
            .map(|(_, r)| {
                Box::new(move |rm: &[Removal]| {
                    policy::check_removals(device, r.scope.as_ref(), r.op.name(), rm)
                }) as BoxedGuard
            })
            .collect();
        let mut batches = Vec::new();
        for group in groups {
            let parts: Vec<driver::Part> = group
                .iter()
                .map(|&k| driver::Part {
                    prepared: ready[k].1.prepared.as_ref(),
                    guard: guards[k].as_ref(),
                })
                .collect();
            // Each batch (or request alone) with its own deadline, as a request alone.
            let deadline = Instant::now() + device.request_timeout;
            let applied = driver::apply_batch(&parts, session, deadline);
            if group.len() > 1 {
                batches.push(
                    group
                        .iter()
                        .map(|&k| claims[ready[k].0].entry.request_id.clone())
                        .collect(),
                );
            }
            for (&k, a) in group.iter().zip(applied) {
                served[ready[k].0] = Some(Served {
                    transcript: a.transcript,
                    result: a.result.map_err(Error::from),
                    progress: a.progress,
                });
            }
        }
        let served = served
            .into_iter()
            .map(|s| {
                s.unwrap_or_else(|| Served {
                    transcript: Transcript::default(),
                    result: Err(Error::Internal("a claimed request was not applied".into())),
                    progress: Progress::default(),
                })
            })
            .collect();
        (served, batches)
    }

    /// A waiter's request, as the waiter would have run it: validated, resolved (to this
    /// device, or refused), checked against the device policy (the waiter checked its
    /// caller's scope), prepared by the platform's driver.
    fn prepare_claimed<'d>(
        &self,
        entry: &Entry,
        device: &'d Device,
        platform: &'d Platform,
    ) -> Result<Ready<'d, 'a>, Error> {
        let scope = match &entry.caller {
            None => None,
            Some(name) => Some(
                self.config
                    .callers
                    .get(name)
                    .map(|caller| Scope {
                        caller,
                        allow_devices: entry.allow_devices.clone(),
                    })
                    .ok_or_else(|| {
                        Error::Internal(format!("spooled caller {name} is not configured"))
                    })?,
            ),
        };
        let mut req = Request::from_raw(entry.request.clone())?;
        let (d, pf) = resolve::resolve(&mut req, self.config, self.catalog, scope.as_ref())?;
        if d.name != device.name {
            return Err(Error::Internal(format!(
                "spooled request {} names device {}, not {}",
                entry.request_id, d.name, device.name
            )));
        }
        policy::check(&req, device, pf, scope.as_ref())?;
        req.verify = settled_verify(&req, device, platform);
        let prepared = driver::for_platform(platform).prepare(&req, device, platform)?;
        Ok(Ready {
            prepared,
            scope,
            op: req.op,
        })
    }

    /// A waiter's result: its own lines and outcome, plus the shared save when its own
    /// part succeeded.
    pub(super) fn answer_for(
        &self,
        claim: &Claim,
        served: Served,
        finish: &Segment,
        shared: &Result<(), (ExitKind, String)>,
        device: &Device,
    ) -> Answer {
        let mut t = served.transcript;
        let mut progress = served.progress;
        let mut data = serde_json::Value::Null;
        let mut diff = None;
        let (result, changed) = match served.result {
            Err(e) => {
                // Its partial change is saved, or not, with the session.
                if progress.took_effect && progress.restored != Some(true) {
                    progress.saved = finish.progress.saved;
                }
                (Err((e.kind(), e.to_string())), progress.took_effect)
            }
            Ok(done) => {
                data = done.data.clone();
                diff = done.diff.clone();
                t.append(Transcript {
                    commands: finish.transcript.commands.clone(),
                    round_trips: finish.transcript.round_trips,
                });
                progress.append(finish.progress.clone());
                let r = match (&done.drift, shared) {
                    (Some(d), _) => Err((ExitKind::DeviceRejected, d.clone())),
                    (None, s) => s.clone(),
                };
                (r, done.changed || progress.took_effect)
            }
        };
        let (rc, msg) = match result {
            Ok(()) => (
                0,
                format!(
                    "{} applied on {} ({} lines, {} round trips; coalesced into the session of request {})",
                    claim.entry.op,
                    device.name,
                    t.commands.len(),
                    t.round_trips,
                    self.report.request_id
                ),
            ),
            Err((kind, msg)) => (kind.code(), msg),
        };
        let mut report = Report::new(String::new());
        if rc != 0 {
            report.note_progress(progress);
        }
        Answer {
            request_id: claim.entry.request_id.clone(),
            rc,
            msg,
            changed,
            partial: report.partial,
            data,
            diff,
            commands: t.commands,
            round_trips: t.round_trips,
            holder: HolderRef {
                pid: std::process::id(),
                request_id: self.report.request_id.clone(),
            },
        }
    }
}
