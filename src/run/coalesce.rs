//! The lock path of a request: this host's lock slots (and etcd's), and request
//! coalescing — spooling a planned request for the holder, or serving spooled requests in
//! our own session (see `spool` for the on-disk protocol and docs/scale.md).

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

/// What the holder did with one claimed request.
pub(super) struct Served {
    /// The lines sent for it.
    transcript: Transcript,
    /// Its own outcome (the shared save comes after).
    result: Result<driver::Done, Error>,
    /// How far its change got.
    progress: Progress,
}

impl Job<'_> {
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

    /// Claims spooled requests (oldest first, at most `max_batch`) and applies each in
    /// this session, each prepared again by this process's driver, with its own deadline
    /// and failure isolation.
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
        while session.healthy() && out.len() < max && Instant::now() < own_deadline && !held.lost()
        {
            match server.claim_next() {
                Ok(Some(claim)) => {
                    let served = self.apply_claimed(session, &claim.entry, device, platform);
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
                Ok(None) => break,
                Err(e) => {
                    self.report
                        .warnings
                        .push(format!("coalescing stopped: {e}"));
                    break;
                }
            }
        }
        out
    }

    /// A waiter's request, as the waiter would have run it: validated, resolved (to this
    /// device, or refused), checked against the device policy (the waiter checked its
    /// caller's scope), prepared by the platform's driver, applied.
    fn apply_claimed(
        &self,
        session: &mut Session,
        entry: &Entry,
        device: &Device,
        platform: &Platform,
    ) -> Served {
        let scope = match &entry.caller {
            None => Ok(None),
            Some(name) => self
                .config
                .callers
                .get(name)
                .map(|caller| {
                    Some(Scope {
                        caller,
                        allow_devices: entry.allow_devices.clone(),
                    })
                })
                .ok_or_else(|| Error::Internal(format!("spooled caller {name} is not configured"))),
        };
        let prepared = (|| -> Result<_, Error> {
            let scope = scope?;
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
            let p = driver::for_platform(platform).prepare(&req, device, platform)?;
            Ok((p, scope, req.op))
        })();
        match prepared {
            Err(e) => Served {
                transcript: Transcript::default(),
                result: Err(e),
                progress: Progress::default(),
            },
            Ok((p, scope, op)) => {
                let guard =
                    |r: &[Removal]| policy::check_removals(device, scope.as_ref(), op.name(), r);
                let applied = p.apply(session, Instant::now() + device.request_timeout, &guard);
                Served {
                    transcript: applied.transcript,
                    result: applied.result.map_err(Error::from),
                    progress: applied.progress,
                }
            }
        }
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
