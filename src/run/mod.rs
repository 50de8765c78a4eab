//! One run, start to finish: config → resolve → policy → plan → lock → audit → session →
//! result. Every path ends in exactly one [`Report`] and one exit code.
//!
//! What arrives here is a [`Submission`] (built by `intake` from argv, the forced command or
//! JSON, or by `serve` from a JSON-RPC call); this file holds the main path (`Job::handle`)
//! and the audit records. The branches live beside it: `resolve` (which device, which
//! platform), `query` (answers without device contact), `coalesce` (lock slots and riding
//! another process's session), `check` (`mercury check` and the platforms table). What is
//! sent, read back and concluded from it is the driver's (`driver`).

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::catalog::{Catalog, CatalogError, Platform, Verify};
use crate::config::{Config, Device, Secrets, TransportKind};
use crate::driver::{self, Summary};
use crate::lock::spool::{self, Answer, Claim, Entry, HolderRef, Spool, SpoolError, Waited, Wake};
use crate::lock::{self, DeviceLock, Holder, LockError};
use crate::policy::{self, Removal, Scope};
use crate::report::audit::{self, AuditLog, Who};
use crate::report::error::Error;
use crate::report::exit::ExitKind;
use crate::report::{Format, Outcome, Report};
use crate::request::{Op, RawRequest, Request};
use crate::session::{Progress, Segment, Session, Settings, Transcript};
use crate::transport;

mod check;
mod coalesce;
mod query;
pub mod resolve;
mod uplink;

use check::check;
pub use check::table;
use coalesce::Locks;

/// One request (or `mercury check`) as intake hands it over, with who is asking.
#[derive(Debug, Clone, Default)]
pub struct Submission {
    /// The request; `None` for `mercury check`.
    pub raw: Option<RawRequest>,
    /// `mercury check`: `Some(catalog_only)`.
    pub check: Option<bool>,
    /// The forced command's `--caller` (policy scope `[callers.NAME]`).
    pub caller: Option<String>,
    /// The forced command's `--allow-device` list, narrowing the caller further.
    pub allow_devices: Option<Vec<String>>,
    /// Where the request came from, for the audit record.
    pub origin: Origin,
    /// Plan only: no lock, no connection, no audit.
    pub dry_run: bool,
    /// `mercury check --connect`: `Some(devices)` (empty: every device).
    pub connect: Option<Vec<String>>,
}

/// How a request reached Mercury, for the audit record: the SSH client (`SSH_CONNECTION`),
/// or the authenticated HTTP user and the client address (`serve-jsonrpc`).
#[derive(Debug, Clone, Default)]
pub struct Origin {
    /// `SSH_CONNECTION` of a forced-command or shell login.
    pub ssh_connection: Option<String>,
    /// The authenticated user (HTTP Basic).
    pub http_user: Option<String>,
    /// The client's address: the inherited socket's peer, or what the activator reported.
    pub remote: Option<String>,
    /// The fingerprint of the client's verified TLS certificate (`serve-jsonrpc
    /// --tls-client-ca`).
    pub tls_client: Option<String>,
}

impl Origin {
    /// Who this origin is, for an audit record (`caller` is the policy scope, if any).
    fn who(&self, caller: Option<String>) -> Who {
        let mut who = Who::current(caller, self.ssh_connection.as_deref());
        if self.http_user.is_some() || self.remote.is_some() || self.tls_client.is_some() {
            who.ssh_client = None;
            who.http_user = self.http_user.clone();
            who.http_client = self.remote.clone();
            who.tls_client = self.tls_client.clone();
        }
        who
    }
}

/// Records a request refused before it became one (a failed HTTP authentication) in the
/// audit log `config` names, as one `refused` record. A config or audit log that cannot be
/// used is logged, not returned: the refusal stands either way.
pub fn audit_refusal(
    config_path: &Path,
    origin: &Origin,
    what: serde_json::Value,
    how: serde_json::Value,
) {
    let written = Config::load(config_path)
        .map_err(Error::from)
        .and_then(|config| {
            Ok(AuditLog::open(
                &config.audit_log,
                config.audit_syslog.as_deref(),
            )?)
        })
        .and_then(|mut log| {
            let who = origin.who(None);
            let id = new_request_id();
            Ok(log.write(&audit::record(
                "refused",
                &id,
                &who,
                &what,
                &json!({}),
                Some(how),
            ))?)
        });
    match written {
        Err(e) => log::warn!("refusal not audited: {e}"),
        Ok(Some(w)) => log::warn!("{w}"),
        Ok(None) => {}
    }
}

/// Runs one submission with the configuration at `config` and renders its result.
pub fn submit(config: &Path, submission: Submission, format: Format) -> Outcome {
    let started = Instant::now();
    let mut report = Report::new(String::new());
    report.dry_run = submission.dry_run;
    let result = execute(config, submission, &mut report);
    finish(report, result, started, format)
}

/// Runs one request that arrived through another front (the JSON-RPC server) down the same
/// path as `mercury run`: config (re-read for every request), policy with the caller's
/// scope, lock, audit, session. Returns the finished result.
pub fn run_request(
    config: &Path,
    raw: RawRequest,
    caller: Option<String>,
    origin: Origin,
) -> Report {
    let started = Instant::now();
    let mut report = Report::new(String::new());
    let submission = Submission {
        raw: Some(raw),
        caller,
        origin,
        ..Submission::default()
    };
    let result = execute(config, submission, &mut report);
    if report.request_id.is_empty() {
        report.request_id = new_request_id();
    }
    if let Err(e) = result {
        report.fail(e.kind(), e.to_string());
    }
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    report
}

/// Runs `f`, turning a panic (a bug: clippy denies unwrap/expect/panic, but arithmetic or a
/// dependency can still panic) into the contract's answer: one JSON result with exit 70,
/// instead of a Rust backtrace and no result. The panic message still reaches stderr.
pub fn guarded(f: impl FnOnce() -> Outcome + std::panic::UnwindSafe) -> Outcome {
    match std::panic::catch_unwind(f) {
        Ok(outcome) => outcome,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".to_string());
            failed(
                Error::Internal(format!(
                    "{} (please report this bug)",
                    crate::request::validate::printable(&what)
                )),
                Format::Json,
            )
        }
    }
}

/// A run that ended before it had a request (usage error, unreadable request): its result.
pub fn failed(error: Error, format: Format) -> Outcome {
    finish(
        Report::new(new_request_id()),
        Err(error),
        Instant::now(),
        format,
    )
}

/// A successful answer without a device (the forced command's health checks).
pub fn reply(msg: String, format: Format) -> Outcome {
    let mut report = Report::new(new_request_id());
    report.msg = msg;
    finish(report, Ok(()), Instant::now(), format)
}

/// Ends a run: fills in the request id and elapsed time, records `result`'s error (if any)
/// in the report, and renders it in `format`.
pub fn finish(
    mut report: Report,
    result: Result<(), Error>,
    started: Instant,
    format: Format,
) -> Outcome {
    if report.request_id.is_empty() {
        report.request_id = new_request_id();
    }
    if let Err(e) = result {
        report.fail(e.kind(), e.to_string());
    }
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    let stdout = match format {
        Format::Json => format!("{}\n", report.to_json()),
        Format::Text => report.to_text(),
    };
    Outcome {
        stdout,
        code: report.rc,
    }
}

/// Everything after intake: config, request, policy, lock, audit, session.
fn execute(config_path: &Path, sub: Submission, report: &mut Report) -> Result<(), Error> {
    if let Some(raw) = &sub.raw {
        report.op = raw.op.clone();
        if let Some(id) = &raw.request_id {
            if crate::request::validate::identifier("request_id", id).is_ok() {
                report.request_id = id.clone();
            }
        }
    }

    let config = Config::load(config_path)?;
    let catalog = Catalog::load(&config.plugins_dir)?;

    let Some(raw) = sub.raw else {
        let Some(catalog_only) = sub.check else {
            return Err(Error::Internal("no request".into()));
        };
        report.op = Some("check".into());
        let offline = check(&config, &catalog, catalog_only, report);
        return match &sub.connect {
            Some(devices) => check::connect(&config, &catalog, devices, report, offline),
            None => offline,
        };
    };
    // Part of loading: an uplink the catalog cannot accept is a configuration error.
    let uplinks = resolve::check_uplinks(&config, &catalog);
    if !uplinks.is_empty() {
        return Err(Error::ConfigMessage(format!(
            "{}: {}",
            config.path.display(),
            uplinks.join("; ")
        )));
    }

    let who = sub.origin.who(sub.caller.clone());
    let scope = match &sub.caller {
        Some(name) => Some(Scope {
            caller: config.callers.get(name).ok_or_else(|| {
                Error::Denied(policy::Denied {
                    rule: "callers".into(),
                    message: format!(
                        "caller {} is not configured{}",
                        crate::request::validate::Escaped(name),
                        crate::util::suggest::did_you_mean(
                            name,
                            config.callers.keys().map(String::as_str)
                        )
                    ),
                })
            })?,
            allow_devices: sub.allow_devices.clone(),
        }),
        None => None,
    };
    let mut job = Job {
        config: &config,
        catalog: &catalog,
        scope,
        who,
        report,
        audit: None,
        started_written: false,
        device_contacted: false,
        how_extra: serde_json::Map::new(),
        batches: Vec::new(),
        hops_audited: false,
        what: json!({"op": raw.op}),
        why: json!({}),
    };
    let result = job.handle(raw);
    job.audit_finished(&result);
    result
}

/// Read before write, unless the request or the device says not to: on for every request
/// that changes ports on a platform that can read them (`verify_port` always reads).
pub(crate) fn settled_verify(req: &Request, device: &Device, platform: &Platform) -> bool {
    if req.op == Op::VerifyPort {
        return true;
    }
    match req.verify_asked {
        Some(asked) => asked,
        None => {
            changes_ports(req.op) && device.verify && matches!(platform.verify, Verify::Show(_))
        }
    }
}

/// Operations that change ports (and so read them first, and say whether they were read).
fn changes_ports(op: Op) -> bool {
    matches!(
        op,
        Op::AttachPort
            | Op::DetachPort
            | Op::UpdatePort
            | Op::ResetPort
            | Op::UpdateLag
            | Op::DeleteLag
            | Op::PlugPort
            | Op::UnplugPort
    )
}

/// Requests are only coalesced with a holder that would have prepared them the same way:
/// same binary, same config file, same device settings and platform.
fn compat(config: &Config, device: &Device, platform: &Platform) -> String {
    format!(
        "mercury {} {} {} {:?}",
        env!("CARGO_PKG_VERSION"),
        config.path.display(),
        platform.name,
        device
    )
}

/// A random request id (`mercury-` + 16 hex digits).
pub fn new_request_id() -> String {
    format!("mercury-{}", crate::util::random::hex::<8>())
}

struct Job<'a> {
    config: &'a Config,
    catalog: &'a Catalog,
    scope: Option<Scope<'a>>,
    who: Who,
    report: &'a mut Report,
    audit: Option<AuditLog>,
    started_written: bool,
    /// Lines were (or may have been) sent to the device for this request.
    device_contacted: bool,
    /// Extra keys for the finished record's `how` (coalescing).
    how_extra: serde_json::Map<String, serde_json::Value>,
    /// The holder's batches of more than one served request (request ids, in order).
    batches: Vec<Vec<String>>,
    /// The DPU path wrote each device's own audit records (`uplink`).
    hops_audited: bool,
    what: serde_json::Value,
    why: serde_json::Value,
}

impl Job<'_> {
    fn handle(&mut self, raw: RawRequest) -> Result<(), Error> {
        let raw = resolve::networks(raw, self.config)?;
        let mut req = Request::from_raw(raw.clone())?;
        self.report.op = Some(req.op.name().to_string());
        if self.report.request_id.is_empty() {
            self.report.request_id = new_request_id();
        }
        self.why = json!({
            "reason": req.meta.reason,
            "node_uuid": req.meta.node_uuid,
            "port_uuid": req.meta.port_uuid,
            "vif_id": req.meta.vif_id,
            "lifecycle": req.meta.lifecycle,
        });
        self.what = json!({
            "op": req.op.name(),
            "device": req.target_reference(),
            "ports": req.port_names(),
            "vlans": req.vlans(),
            "network": req.network,
            "lag": req.lag,
            "verify": req.verify,
        });
        match req.op {
            Op::GetSwitches => return self.get_switches(),
            Op::IsPortSupported => return self.is_port_supported(&req),
            Op::IsLinkValid => return self.is_link_valid(&req),
            _ => {}
        }
        let (device, platform) =
            resolve::resolve(&mut req, self.config, self.catalog, self.scope.as_ref())
                .inspect_err(|e| self.report.device_not_found = e.is_not_found())?;
        self.report.device = Some(device.name.clone());
        self.report.platform = Some(platform.name.clone());
        // From here on every port name is the platform's canonical one (audit included).
        self.what["ports"] = json!(req.port_names());
        if let Some(lag) = &req.lag {
            self.what["lag"] = json!(lag);
        }
        self.what["device"] = json!(device.name);
        self.what["platform"] = json!(platform.name);
        if req.op == Op::GetAllowedNetworkTypes {
            self.report.data = json!({"network_types": platform.network_types});
            self.report.msg = format!(
                "{} provides {}",
                device.name,
                platform.network_types.join(", ")
            );
            return Ok(());
        }
        policy::check(&req, device, platform, self.scope.as_ref())?;
        transport::fits(device, platform.kind.channel())?;
        req.verify = self.settle_verify(&req, device, platform);
        if changes_ports(req.op) {
            self.report.verified = Some(req.verify);
            self.what["verify"] = json!(req.verify);
        }
        // A DPU whose uplink is configured: the switch port facing it too (`uplink`).
        if let (Some(up), Some(plug)) = (&device.uplink, &req.plug) {
            if !plug.card_only {
                return self.two_hops(req.clone(), device, platform, up);
            }
        }
        let prepared = driver::for_platform(platform).prepare(&req, device, platform)?;
        self.report.warnings.extend(prepared.warnings());
        if self.report.dry_run {
            return self.dry_run(&req, device, platform, prepared.as_ref());
        }

        let holder = Holder::now(&self.report.request_id, req.op.name());
        let waited = Instant::now();
        let lock_deadline = waited + device.lock_timeout;
        // A read changes nothing: it never rides another's session. A verified request does:
        // the holder reads, writes and reads again for it as it would itself.
        let coalesce = self.config.coalesce.enabled
            && self.config.coalesce.max_batch > 0
            && prepared.mutates();
        let spool = Spool::new(&self.config.lock_dir, &device.name);
        let compat = compat(self.config, device, platform);
        let locks = Locks {
            settings: &self.config.lock,
            dir: &self.config.lock_dir,
            device: &device.name,
            slots: device.max_sessions,
            holder: &holder,
            platform,
        };
        let local = match locks.try_acquire()? {
            Some(lock) => lock,
            None if coalesce => {
                match self.wait_in_spool(&spool, &raw, &req, device, &locks, lock_deadline)? {
                    Some(lock) => lock,
                    // A holder applied it; the report is filled in.
                    None => return Ok(()),
                }
            }
            None => locks.acquire(lock_deadline)?,
        };
        // With etcd: this host's slot is ours; now the cluster-wide one (local requests
        // spool to us meanwhile).
        let held = locks.complete(local, lock_deadline)?;
        log::info!(
            "{}: {} on {} ({}), lock slot {} after {} ms",
            self.report.request_id,
            req.op.name(),
            device.name,
            platform.name,
            held.local.slot,
            waited.elapsed().as_millis()
        );
        if !self.started_written {
            // The started record must be on disk before the device is touched.
            self.audit_started()?;
        }
        self.device_contacted = true;
        let save = device.save_config && prepared.mutates();
        let (secrets, settings) = session_settings(device, save)?;
        let deadline = settings.deadline;
        let conn = transport::open(device, &secrets, platform.kind.channel(), deadline)?;
        self.report.warnings.extend(conn.warnings());
        log::info!("{}: connected to {}", self.report.request_id, device.name);
        let (mut session, opened) = Session::open(conn, platform, &settings);
        let mut transcript = opened.transcript;
        let mut progress = Progress::default();
        let scope = self.scope.clone();
        let op = req.op.name();
        let guard = |r: &[Removal]| policy::check_removals(device, scope.as_ref(), op, r);
        let own: Result<driver::Done, Error> = match opened.result {
            Ok(()) => {
                let applied = prepared.apply(&mut session, deadline, &guard);
                transcript.append(applied.transcript);
                progress = applied.progress;
                applied.result.map_err(Error::from)
            }
            Err(e) => Err(e.into()),
        };
        // Our own change failed part-way and was not undone: never save it (nor anything
        // else in this session).
        if own.is_err() && progress.took_effect && progress.restored != Some(true) {
            session.skip_save();
        }
        // Before closing (after our own lines, before the save): apply spooled requests.
        let served = if coalesce {
            self.serve(
                &mut session,
                &spool,
                &compat,
                device,
                platform,
                deadline,
                &held,
            )
        } else {
            Vec::new()
        };
        let finished = session.finish();
        self.report
            .warnings
            .extend(finished.warnings.iter().cloned());
        let shared: Result<(), (ExitKind, String)> = finished
            .result
            .as_ref()
            .map(|_| ())
            .map_err(|e| (crate::report::error::session_kind(e), e.to_string()));
        let mut served_ids = Vec::new();
        for (claim, done) in served {
            served_ids.push(claim.entry.request_id.clone());
            let answer = self.answer_for(&claim, done, &finished, &shared, device);
            if let Err(e) = claim.answer(&answer) {
                self.report
                    .warnings
                    .push(format!("coalesced request {}: {e}", answer.request_id));
            }
        }
        if !served_ids.is_empty() {
            self.report.data = json!({"coalesced": {
                "role": "holder",
                "served": served_ids,
                "batches": self.batches,
            }});
            self.how_extra
                .insert("coalesced_served".into(), json!(served_ids));
            self.how_extra
                .insert("coalesced_batches".into(), json!(self.batches));
        }
        if own.is_ok() {
            transcript.append(finished.transcript);
            progress.append(finished.progress);
        }
        self.report.commands = transcript.commands;
        self.report.round_trips = transcript.round_trips;
        let outcome = own.and_then(|done| finished.result.map(|()| done).map_err(Error::from));
        match outcome {
            Ok(done) => self.report_done(&req, device, done),
            Err(e) => {
                self.report.note_progress(progress);
                Err(e)
            }
        }
    }

    /// Settles read before write for the request (see [`settled_verify`]), and says so when
    /// the platform cannot read.
    fn settle_verify(&mut self, req: &Request, device: &Device, platform: &Platform) -> bool {
        let verify = settled_verify(req, device, platform);
        if !verify && req.verify_asked.is_none() && changes_ports(req.op) && device.verify {
            if let Verify::Unsupported(why) = &platform.verify {
                self.report.warnings.push(format!(
                    "not read back: {} cannot read ports yet ({why}); changed says what was sent",
                    platform.name
                ));
            }
        }
        verify
    }

    /// `--dry-run`: the same driver code in a session that records what it would send.
    fn dry_run(
        &mut self,
        req: &Request,
        device: &Device,
        platform: &Platform,
        prepared: &dyn driver::Prepared,
    ) -> Result<(), Error> {
        let settings = dry_settings(device, prepared);
        let (mut session, opened) = Session::dry(platform, &settings);
        let mut transcript = opened.transcript;
        // A dry run sends nothing: what a change would remove is unknown, policy says
        // nothing here.
        let applied = prepared.apply(&mut session, settings.deadline, &|_| Ok(()));
        transcript.append(applied.transcript);
        transcript.append(session.finish().transcript);
        let done = applied.result?;
        self.report.warnings.extend(done.warnings);
        self.report.commands = transcript.commands;
        self.report.msg = format!(
            "dry run: {} would send {} lines to {}{}",
            req.op.name(),
            self.report.commands.len(),
            device.name,
            if prepared.mutates() {
                " (nothing is read, so changed is unknown: --check reads the ports and predicts it)"
            } else {
                ""
            }
        );
        Ok(())
    }

    /// The result of a request that ran to the end: `changed`, the message, the driver's
    /// data and diff; drift read back fails it (exit 1).
    fn report_done(
        &mut self,
        req: &Request,
        device: &Device,
        done: driver::Done,
    ) -> Result<(), Error> {
        self.report.changed = done.changed;
        if req.check {
            // Check mode predicts: the device itself was not changed (the audit says so).
            self.how_extra.insert("check".into(), json!(true));
            self.how_extra
                .insert("would_change".into(), json!(done.changed));
        }
        self.report.warnings.extend(done.warnings);
        let applied = format!(
            "{} applied on {} ({} lines, {} round trips)",
            req.op.name(),
            device.name,
            self.report.commands.len(),
            self.report.round_trips
        );
        self.report.msg = match done.summary {
            Summary::Applied => applied,
            Summary::Verified if done.drift.is_some() => applied,
            Summary::Verified if done.changed => format!("{applied}; verified"),
            Summary::Verified => format!("{applied}; verified, the ports read back unchanged"),
            Summary::Skipped => format!(
                "{} on {}: already in the requested state (read back); nothing sent",
                req.op.name(),
                device.name
            ),
            Summary::Said(msg) => msg,
        };
        if !done.data.is_null() {
            match (&mut self.report.data, done.data) {
                (serde_json::Value::Object(m), serde_json::Value::Object(d)) => m.extend(d),
                (slot, data) => *slot = data,
            }
        }
        if done.diff.is_some() {
            self.report.diff = done.diff;
        }
        match done.drift {
            Some(d) => Err(Error::Drift(d)),
            None => Ok(()),
        }
    }

    fn open_audit(&mut self) -> Result<&mut AuditLog, Error> {
        if self.audit.is_none() {
            self.audit = Some(AuditLog::open(
                &self.config.audit_log,
                self.config.audit_syslog.as_deref(),
            )?);
        }
        self.audit
            .as_mut()
            .ok_or_else(|| Error::Internal("audit log".into()))
    }

    fn audit_started(&mut self) -> Result<(), Error> {
        let (id, who, what, why) = (
            self.report.request_id.clone(),
            self.who.clone(),
            self.what.clone(),
            self.why.clone(),
        );
        let log = self.open_audit()?;
        let warning = log.write(&audit::record("started", &id, &who, &what, &why, None))?;
        self.report.warnings.extend(warning);
        self.started_written = true;
        Ok(())
    }

    /// Writes the `finished` record (not for dry runs). A failure to write it after the
    /// device was changed cannot undo the change, so it becomes a warning in the result.
    fn audit_finished(&mut self, result: &Result<(), Error>) {
        if self.report.dry_run || self.hops_audited {
            return;
        }
        let kind = result
            .as_ref()
            .err()
            .map(Error::kind)
            .unwrap_or(ExitKind::Ok);
        let how = json!({
            "outcome": if kind == ExitKind::Ok { "ok" } else { "failed" },
            "rc": kind.code(),
            "error_kind": kind.name(),
            "msg": match result { Ok(()) => self.report.msg.clone(), Err(e) => self.report.failure_message(e.to_string()) },
            "changed": self.report.changed && !self.how_extra.contains_key("check"),
            "partial": self.report.partial,
            "lines": self.report.commands.iter().map(|c| c.input.clone()).collect::<Vec<_>>(),
            "round_trips": self.report.round_trips,
            "device_contacted": self.device_contacted,
            "warnings": self.report.warnings,
        });
        let mut how = how;
        if let Some(map) = how.as_object_mut() {
            map.extend(self.how_extra.clone());
        }
        let (id, who, what, why) = (
            self.report.request_id.clone(),
            self.who.clone(),
            self.what.clone(),
            self.why.clone(),
        );
        let written = self.open_audit().and_then(|log| {
            Ok(log.write(&audit::record(
                "finished",
                &id,
                &who,
                &what,
                &why,
                Some(how),
            ))?)
        });
        match written {
            Err(e) => self
                .report
                .warnings
                .push(format!("audit record not written: {e}")),
            Ok(Some(w)) if !self.report.warnings.contains(&w) => self.report.warnings.push(w),
            Ok(_) => {}
        }
    }
}

/// The secrets (read once: the transport logs in with them, the session answers the enable
/// question and redacts them) and the deadlines a session needs.
fn session_settings(device: &Device, save: bool) -> Result<(Secrets, Settings), Error> {
    let secrets = Secrets::read(device)?;
    let settings = Settings {
        device: device.name.clone(),
        command_timeout: device
            .command_timeout
            .min(device.request_timeout)
            .max(Duration::from_millis(1)),
        deadline: Instant::now() + device.request_timeout,
        enable_secret: secrets.enable_secret.clone(),
        secrets: secrets.values().cloned().collect(),
        save,
    };
    Ok((secrets, settings))
}

/// The session settings of a dry run on `device`: no secrets (nothing is sent), and a
/// save only where the real run would save.
pub(crate) fn dry_settings(device: &Device, prepared: &dyn driver::Prepared) -> Settings {
    Settings {
        device: device.name.clone(),
        command_timeout: device.command_timeout,
        deadline: Instant::now() + device.request_timeout,
        enable_secret: None,
        secrets: Vec::new(),
        save: device.save_config && prepared.mutates(),
    }
}

#[cfg(test)]
mod guard_tests {
    use super::*;

    #[test]
    fn a_panic_becomes_one_json_result_with_exit_70() {
        let out = guarded(|| panic!("index out of bounds"));
        assert_eq!(out.code, 70);
        let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
        assert_eq!(v["error_kind"], "internal");
        assert!(
            v["msg"].as_str().unwrap().contains("index out of bounds"),
            "{v}"
        );
        let fine = guarded(|| Outcome {
            stdout: "{}".into(),
            code: 0,
        });
        assert_eq!(fine.code, 0);
    }
}
