//! `--verify` and `verify-port`: read ports back through the platform's show lines,
//! compare with the requested state, report drift, make `changed` exact (docs/verify.md).

use super::*;

/// Every show line for `checks`, in order, and the mode they are typed in.
pub(super) fn read_lines<'p>(
    platform: &'p crate::catalog::Platform,
    checks: &[Check],
) -> Result<(Vec<crate::session::plan::Line>, Option<&'p str>), Error> {
    let spec = platform
        .verify
        .spec(&platform.name)
        .map_err(driver::Unsupported)?;
    let mut out = Vec::new();
    for c in checks {
        out.extend(driver::show_lines(platform, spec, &c.port)?);
    }
    Ok((out, spec.mode.as_deref()))
}

/// What a `--verify` run found.
pub(super) struct Verified {
    /// Per port: before, after, drift.
    pub(super) reports: Vec<PortReport>,
    /// Every port already was as requested: nothing was sent.
    pub(super) skipped: bool,
    /// Ports that do not show the change.
    pub(super) drift: Option<String>,
}

/// Reads each checked port (its show lines, then the platform's parser).
pub(super) fn read_states(
    session: &mut Session,
    platform: &crate::catalog::Platform,
    spec: &crate::catalog::VerifySpec,
    checks: &[Check],
    deadline: Instant,
) -> (Transcript, Result<Vec<PortState>, session::SessionError>) {
    let mut transcript = Transcript::default();
    let mut states = Vec::new();
    for c in checks {
        let lines = match driver::show_lines(platform, spec, &c.port) {
            Ok(l) => l,
            Err(e) => {
                return (
                    transcript,
                    Err(session::SessionError::Unparsable {
                        line: c.port.clone(),
                        message: e.0,
                    }),
                )
            }
        };
        let (segment, outputs) = session.read(&lines, spec.mode.as_deref(), deadline);
        transcript.append(segment.transcript);
        match segment.result {
            Err(session::SessionError::Rejected { .. }) if c.may_be_absent => {
                states.push(PortState::absent());
                continue;
            }
            Err(e) => return (transcript, Err(e)),
            Ok(()) => {}
        }
        match verify::parse(platform, spec, &c.port, &outputs) {
            Ok(s) => states.push(s),
            Err(_) if c.may_be_absent => states.push(PortState::absent()),
            Err(message) => {
                return (
                    transcript,
                    Err(session::SessionError::Unparsable {
                        line: lines
                            .iter()
                            .map(|l| l.text.as_str())
                            .collect::<Vec<_>>()
                            .join("; "),
                        message,
                    }),
                )
            }
        }
    }
    (transcript, Ok(states))
}

/// `--verify`: read the ports, skip the plan when they already are as requested, else
/// apply it and read them again.
pub(super) fn verified_apply(
    session: &mut Session,
    platform: &crate::catalog::Platform,
    plan: &crate::session::plan::Plan,
    checks: &[Check],
    deadline: Instant,
) -> (Transcript, Result<Verified, session::SessionError>) {
    let mut transcript = Transcript::default();
    let spec = match platform.verify.spec(&platform.name) {
        Ok(s) => s,
        Err(message) => {
            return (
                transcript,
                Err(session::SessionError::Unparsable {
                    line: String::new(),
                    message,
                }),
            )
        }
    };
    let (t, before) = read_states(session, platform, spec, checks, deadline);
    transcript.append(t);
    let before = match before {
        Ok(b) => b,
        Err(e) => return (transcript, Err(e)),
    };
    let already = checks
        .iter()
        .zip(&before)
        .all(|(c, s)| !c.expect.is_empty() && c.expect.check(s).holds());
    if already {
        let reports = checks
            .iter()
            .zip(before)
            .map(|(c, s)| PortReport {
                port: c.port.clone(),
                before: Some(s.clone()),
                after: Some(s),
                changed: false,
                drift: Vec::new(),
                unverified: Vec::new(),
            })
            .collect();
        return (
            transcript,
            Ok(Verified {
                reports,
                skipped: true,
                drift: None,
            }),
        );
    }
    let applied = session.apply(plan, deadline);
    transcript.append(applied.transcript);
    if let Err(e) = applied.result {
        return (transcript, Err(e));
    }
    let (t, after) = read_states(session, platform, spec, checks, deadline);
    transcript.append(t);
    let after = match after {
        Ok(a) => a,
        Err(e) => return (transcript, Err(e)),
    };
    let mut reports = Vec::new();
    let mut drift = Vec::new();
    for ((c, b), a) in checks.iter().zip(before).zip(after) {
        let verdict = c.expect.check(&a);
        if !verdict.drift.is_empty() {
            drift.push(format!("{} shows {}", c.port, verdict.describe()));
        }
        reports.push(PortReport {
            port: c.port.clone(),
            changed: b != a,
            before: Some(b),
            after: Some(a),
            drift: verdict.drift,
            unverified: verdict.unverified,
        });
    }
    (
        transcript,
        Ok(Verified {
            reports,
            skipped: false,
            drift: (!drift.is_empty()).then(|| drift.join("; ")),
        }),
    )
}

/// Ansible's `diff` from the ovs module's per-port before/after.
pub(super) fn ovs_diff(data: &serde_json::Value) -> serde_json::Value {
    serde_json::Value::Array(
        data["ports"]
            .as_array()
            .map(|ports| {
                ports
                    .iter()
                    .map(|p| {
                        json!({
                            "before_header": format!("{} (before)", p["port"].as_str().unwrap_or_default()),
                            "after_header": format!("{} (after)", p["port"].as_str().unwrap_or_default()),
                            "before": p["before"],
                            "after": p["after"],
                        })
                    })
                    .collect()
            })
            .unwrap_or_default(),
    )
}

impl Job<'_> {
    /// Fields a platform's show output does not carry are never counted as verified: say
    /// which, per port.
    fn warn_unverified(&mut self, reports: &[PortReport]) {
        let unverified: Vec<String> = reports
            .iter()
            .filter(|p| !p.unverified.is_empty())
            .map(|p| format!("{} ({})", p.port, p.unverified.join(", ")))
            .collect();
        if !unverified.is_empty() {
            self.report.warnings.push(format!(
                "verify: not verified, the platform does not show it: {}",
                unverified.join("; ")
            ));
        }
    }

    /// The result of a `--verify` run: `changed` from the states read, per-port before /
    /// after, Ansible's `diff`; a port that does not show the change fails the request.
    pub(super) fn report_verified(
        &mut self,
        req: &Request,
        device: &Device,
        v: Verified,
    ) -> Result<(), Error> {
        self.report.changed = v.reports.iter().any(|p| p.changed);
        self.warn_unverified(&v.reports);
        let data = json!({"verified": v.drift.is_none(), "skipped": v.skipped, "ports": v.reports});
        match &mut self.report.data {
            serde_json::Value::Object(m) => {
                if let serde_json::Value::Object(d) = data {
                    m.extend(d);
                }
            }
            other => *other = data,
        }
        self.report.diff = Some(verify::diff(&v.reports));
        if v.skipped {
            self.report.msg = format!(
                "{} on {}: already in the requested state (read back); nothing sent",
                req.op.name(),
                device.name
            );
        } else if v.drift.is_none() {
            self.report.msg.push_str(if self.report.changed {
                "; verified"
            } else {
                "; verified, the ports read back unchanged"
            });
        }
        match v.drift {
            Some(d) => Err(Error::Drift(format!(
                "verify: {} was accepted by {} but {d}",
                req.op.name(),
                device.name
            ))),
            None => Ok(()),
        }
    }

    /// `verify_port`: reads the ports (a session slot under the device lock, no change, no
    /// coalescing) and compares each with the expectations the request gives, if any.
    pub(super) fn verify_port(
        &mut self,
        req: &Request,
        device: &Device,
        platform: &crate::catalog::Platform,
        checks: Vec<Check>,
    ) -> Result<(), Error> {
        let spec = platform
            .verify
            .spec(&platform.name)
            .map_err(driver::Unsupported)?;
        let ovs = ovs::handles(platform);
        let prepared = if ovs {
            Some(ovs::prepare_read(req, device, platform)?)
        } else {
            None
        };
        let (reads, mode) = if ovs {
            (Vec::new(), None)
        } else {
            read_lines(platform, &checks)?
        };
        if self.report.dry_run {
            let lines: Vec<String> = match &prepared {
                Some(p) => p
                    .dry_plan()
                    .lines
                    .into_iter()
                    .take(1)
                    .map(|l| l.text)
                    .collect(),
                None => session::script_with_reads(platform, None, false, &reads, mode)
                    .into_iter()
                    .map(|(_, l)| l)
                    .collect(),
            };
            self.report.commands = lines.into_iter().map(CommandRecord::planned).collect();
            self.report.msg = format!(
                "dry run: verify_port would send {} lines to {}",
                self.report.commands.len(),
                device.name
            );
            return Ok(());
        }
        let holder = Holder::now(&self.report.request_id, req.op.name());
        let lock_deadline = Instant::now() + device.lock_timeout;
        let locks = Locks {
            settings: &self.config.lock,
            dir: &self.config.lock_dir,
            device: &device.name,
            slots: device.max_sessions,
            holder: &holder,
        };
        let local = locks.acquire(lock_deadline)?;
        let _held = locks.complete(local, lock_deadline)?;
        self.audit_started()?;
        self.device_contacted = true;
        let settings = session_settings(device, false)?;
        let conn = transport::open(device, platform.kind, settings.deadline)?;
        self.report.warnings.extend(conn.warnings());
        let states: Vec<PortState> = match &prepared {
            Some(p) => {
                let (t, r) = p.read(conn, &settings);
                self.report.commands = t.commands;
                self.report.round_trips = t.round_trips;
                let read = r?;
                checks
                    .iter()
                    .map(|c| {
                        let s = read
                            .iter()
                            .find(|(p, _)| *p == c.port)
                            .and_then(|(_, s)| s.as_ref());
                        ovs::normalised(s)
                    })
                    .collect()
            }
            None => {
                let (mut session, opened) = Session::open(conn, platform, &settings);
                let mut transcript = opened.transcript;
                let read = match opened.result {
                    Ok(()) => {
                        let (t, r) =
                            read_states(&mut session, platform, spec, &checks, settings.deadline);
                        transcript.append(t);
                        r
                    }
                    Err(e) => Err(e),
                };
                transcript.append(session.finish().transcript);
                self.report.commands = transcript.commands;
                self.report.round_trips = transcript.round_trips;
                read?
            }
        };
        let mut reports = Vec::new();
        let mut drifted = Vec::new();
        for (c, state) in checks.iter().zip(states) {
            let verdict = c.expect.check(&state);
            if !verdict.drift.is_empty() {
                drifted.push(format!("{}: {}", c.port, verdict.describe()));
            }
            let after = (!c.expect.is_empty()).then(|| c.expect.desired(&state));
            reports.push(PortReport {
                port: c.port.clone(),
                changed: false,
                drift: verdict.drift,
                unverified: verdict.unverified,
                before: Some(state),
                after,
            });
        }
        let expecting = checks.iter().any(|c| !c.expect.is_empty());
        self.warn_unverified(&reports);
        self.report.data = json!({
            "in_state": expecting.then_some(drifted.is_empty()),
            "ports": reports.iter().map(|r| json!({
                "port": r.port,
                "state": r.before,
                "drift": r.drift,
                "unverified": r.unverified,
            })).collect::<Vec<_>>(),
        });
        if expecting {
            self.report.diff = Some(verify::diff(&reports));
        }
        self.report.msg = if !expecting {
            format!("read {} port(s) on {}", reports.len(), device.name)
        } else if drifted.is_empty() {
            format!(
                "{} port(s) on {} are in the expected state",
                reports.len(),
                device.name
            )
        } else {
            return Err(Error::Drift(format!(
                "not in the expected state on {}: {}",
                device.name,
                drifted.join("; ")
            )));
        };
        Ok(())
    }
}
