//! One run, start to finish: intake → config → request → policy → plan → lock → audit →
//! session → result. Every path ends in exactly one [`Report`] and one exit code.
//!
//! This file holds intake and the main path (`Job::handle`) with the audit records; the
//! branches live beside it: `query` (answers without device contact), `coalesce` (lock
//! slots and riding another process's session), `verifying` (`--verify`, `verify-port`),
//! `check` (`mercury check` and the platforms table).

use std::io::{IsTerminal, Read};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::catalog::{Catalog, CatalogError, Kind};
use crate::config::{Config, Device, TransportKind};
use crate::driver::{self, ovsdb as ovs};
use crate::intake::cli::{Cli, Command, Format};
use crate::intake::forced::{self, Forced};
use crate::lock::spool::{self, Answer, Claim, Entry, HolderRef, Spool, SpoolError, Waited};
use crate::lock::{self, DeviceLock, Holder, LockError};
use crate::policy::{self, Scope};
use crate::report::audit::{self, AuditLog, Who};
use crate::report::error::Error;
use crate::report::exit::ExitKind;
use crate::report::Report;
use crate::request::{Op, RawRequest, Request, RequestError};
use crate::session::{self, CommandRecord, Segment, Session, Settings, Transcript};
use crate::transport;
use crate::verify::{self, Check, PortReport, PortState};

mod check;
mod coalesce;
mod query;
mod verifying;

use check::{check, table};
use coalesce::Locks;
use verifying::{ovs_diff, read_lines, verified_apply, Verified};

/// Largest JSON request read from stdin or a file.
pub const MAX_REQUEST_BYTES: u64 = 1024 * 1024;

/// What the process prints and how it exits.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Standard output (one JSON object, or text).
    pub stdout: String,
    /// Exit code.
    pub code: u8,
}

/// Where the request comes from, and who is asking.
struct Intake {
    raw: Option<RawRequest>,
    caller: Option<String>,
    allow_devices: Option<Vec<String>>,
    origin: Origin,
}

/// How a request that did not come through argv or SSH reached Mercury, for the audit
/// record: the authenticated HTTP user and the client address (`serve-jsonrpc`).
#[derive(Debug, Clone, Default)]
pub struct Origin {
    /// The authenticated user (HTTP Basic).
    pub http_user: Option<String>,
    /// The client's address, as the socket activator reported it.
    pub remote: Option<String>,
}

/// Runs one request that arrived through another intake (the JSON-RPC server) down the same
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
    let intake = Intake {
        raw: Some(raw),
        caller,
        allow_devices: None,
        origin,
    };
    let result = execute_intake(config, intake, None, &mut report);
    if report.request_id.is_empty() {
        report.request_id = new_request_id();
    }
    if let Err(e) = result {
        report.fail(e.kind(), e.to_string());
    }
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    report
}

/// Runs one invocation.
pub fn run(cli: Cli) -> Outcome {
    let started = Instant::now();
    let format = cli.format.unwrap_or(if std::io::stdout().is_terminal() {
        Format::Text
    } else {
        Format::Json
    });
    if let Command::Completions(c) = &cli.command {
        let mut buf = Vec::new();
        clap_complete::generate(
            c.shell,
            &mut crate::intake::cli::command(),
            "mercury",
            &mut buf,
        );
        return Outcome {
            stdout: String::from_utf8_lossy(&buf).into_owned(),
            code: 0,
        };
    }
    if let Command::ServeJsonrpc(args) = &cli.command {
        return crate::serve::jsonrpc::serve_inetd(&cli.config, args);
    }
    if let Command::Check(c) = &cli.command {
        if c.table {
            return match table(&cli.config) {
                Ok(t) => Outcome { stdout: t, code: 0 },
                Err(e) => finish(Report::new(new_request_id()), Err(e), started, format),
            };
        }
    }
    let mut report = Report::new(String::new());
    let result = execute(&cli, &mut report);
    finish(report, result, started, format)
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
            finish(
                Report::new(new_request_id()),
                Err(Error::Internal(format!(
                    "{} (please report this bug)",
                    crate::request::validate::printable(&what)
                ))),
                Instant::now(),
                Format::Json,
            )
        }
    }
}

/// Renders a usage error (unknown verb/flag) as a result.
pub fn usage_error(message: &str, format: Option<Format>) -> Outcome {
    let report = Report::new(new_request_id());
    let format = format.unwrap_or(if std::io::stdout().is_terminal() {
        Format::Text
    } else {
        Format::Json
    });
    finish(
        report,
        Err(Error::Usage(message.trim().to_string())),
        Instant::now(),
        format,
    )
}

fn finish(
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

fn execute(cli: &Cli, report: &mut Report) -> Result<(), Error> {
    let intake = match &cli.command {
        Command::ServeSsh(s) => {
            let original = std::env::var("SSH_ORIGINAL_COMMAND").unwrap_or_default();
            let raw = match forced::parse(&original).map_err(Error::Usage)? {
                Forced::Health => {
                    report.msg = "ok".into();
                    return Ok(());
                }
                Forced::Version => {
                    report.msg = format!("mercury {}", env!("CARGO_PKG_VERSION"));
                    return Ok(());
                }
                Forced::Json => read_json(None)?,
                Forced::Args(args) => {
                    let parsed = <Cli as clap::Parser>::try_parse_from(
                        std::iter::once("mercury".to_string()).chain(args),
                    )
                    .map_err(|e| Error::Usage(first_line(&e.to_string())))?;
                    if parsed.dry_run {
                        report.dry_run = true;
                    }
                    let mut raw = parsed
                        .command
                        .to_raw()
                        .ok_or_else(|| Error::Usage("not an operation".into()))??;
                    if parsed.verify {
                        raw.verify = Some(true);
                    }
                    raw
                }
            };
            Intake {
                raw: Some(raw),
                caller: Some(s.caller.clone()),
                allow_devices: (!s.allow_devices.is_empty()).then(|| s.allow_devices.clone()),
                origin: Origin::default(),
            }
        }
        Command::Run(r) => Intake {
            raw: Some(read_json(r.request.as_deref())?),
            caller: None,
            allow_devices: None,
            origin: Origin::default(),
        },
        Command::Check(_) => Intake {
            raw: None,
            caller: None,
            allow_devices: None,
            origin: Origin::default(),
        },
        other => Intake {
            raw: Some(
                other
                    .to_raw()
                    .ok_or_else(|| Error::Internal("no request".into()))??,
            ),
            caller: None,
            allow_devices: None,
            origin: Origin::default(),
        },
    };
    report.dry_run |= cli.dry_run;
    let mut intake = intake;
    if cli.verify {
        if let Some(raw) = intake.raw.as_mut() {
            raw.verify = Some(true);
        }
    }
    let check_only = match &cli.command {
        Command::Check(c) => Some(c.catalog),
        _ => None,
    };
    execute_intake(&cli.config, intake, check_only, report)
}

/// Everything after intake: config, request, policy, lock, audit, session. `check_only` is
/// `Some(catalog_only)` for `mercury check`, which has no request.
fn execute_intake(
    config_path: &Path,
    intake: Intake,
    check_only: Option<bool>,
    report: &mut Report,
) -> Result<(), Error> {
    if let Some(raw) = &intake.raw {
        report.op = raw.op.clone();
        if let Some(id) = &raw.request_id {
            if crate::request::validate::identifier("request_id", id).is_ok() {
                report.request_id = id.clone();
            }
        }
    }

    let config = Config::load(config_path)?;
    let catalog = Catalog::load(&config.plugins_dir)?;

    let Some(raw) = intake.raw else {
        let Some(catalog_only) = check_only else {
            return Err(Error::Internal("no request".into()));
        };
        return check(&config, &catalog, catalog_only, report);
    };

    let mut who = Who::current(
        intake.caller.clone(),
        std::env::var("SSH_CONNECTION").ok().as_deref(),
    );
    if intake.origin.http_user.is_some() || intake.origin.remote.is_some() {
        who.ssh_client = None;
        who.http_user = intake.origin.http_user.clone();
        who.http_client = intake.origin.remote.clone();
    }
    let scope = match &intake.caller {
        Some(name) => Some(Scope {
            caller: config.callers.get(name).ok_or_else(|| {
                Error::Denied(policy::Denied {
                    rule: "callers".into(),
                    message: format!(
                        "caller {} is not configured",
                        crate::request::validate::Escaped(name)
                    ),
                })
            })?,
            allow_devices: intake.allow_devices.clone(),
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
        what: json!({"op": raw.op}),
        why: json!({}),
    };
    let result = job.handle(raw);
    job.audit_finished(&result);
    result
}

fn first_line(s: &str) -> String {
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("usage error")
        .trim()
        .to_string()
}

fn read_json(file: Option<&Path>) -> Result<RawRequest, Error> {
    let mut text = String::new();
    let read = match file {
        Some(p) => std::fs::File::open(p)
            .and_then(|f| f.take(MAX_REQUEST_BYTES + 1).read_to_string(&mut text))
            .map_err(|e| RequestError(format!("cannot read request {}: {e}", p.display()))),
        None => std::io::stdin()
            .take(MAX_REQUEST_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|e| RequestError(format!("cannot read request from stdin: {e}"))),
    };
    read?;
    if text.len() as u64 > MAX_REQUEST_BYTES {
        return Err(RequestError(format!("request larger than {MAX_REQUEST_BYTES} bytes")).into());
    }
    if text.trim().is_empty() {
        return Err(RequestError("empty request: expected one JSON object".into()).into());
    }
    Ok(RawRequest::from_json(&text)?)
}

/// A random request id (`mercury-` + 16 hex digits).
pub fn new_request_id() -> String {
    let mut bytes = [0u8; 8];
    let random = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if random.is_err() {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        bytes = (t.as_nanos() as u64 ^ (std::process::id() as u64) << 32).to_le_bytes();
    }
    format!(
        "mercury-{}",
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
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
    what: serde_json::Value,
    why: serde_json::Value,
}

impl Job<'_> {
    fn handle(&mut self, raw: RawRequest) -> Result<(), Error> {
        let req = Request::from_raw(raw)?;
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
        let (device, platform) = req.resolve(self.config, self.catalog)?;
        self.report.device = Some(device.name.clone());
        self.report.platform = Some(platform.name.clone());
        self.what["device"] = json!(device.name);
        self.what["platform"] = json!(platform.name);
        if let Some(s) = &self.scope {
            s.allows_device(device)?;
        }
        if req.op == Op::GetAllowedNetworkTypes {
            self.report.data = json!({"network_types": platform.network_types});
            self.report.msg = format!(
                "{} provides {}",
                device.name,
                platform.network_types.join(", ")
            );
            return Ok(());
        }
        policy::check(&req, device, self.scope.as_ref())?;
        check_transport_fits(device, platform.kind)?;
        // Reading back is refused up front where the platform cannot (never "verified"
        // silently), as is verifying an operation that changes no port.
        let checks: Option<Vec<Check>> = if req.verify {
            let spec = platform
                .verify
                .spec(&platform.name)
                .map_err(driver::Unsupported)?;
            if !ovs::handles(platform) {
                for c in &verify::checks(&req, device, platform)? {
                    driver::show_lines(platform, spec, &c.port)?;
                }
            }
            Some(verify::checks(&req, device, platform)?)
        } else {
            None
        };
        if req.op == Op::VerifyPort {
            return self.verify_port(&req, device, platform, checks.unwrap_or_default());
        }
        let plan = driver::plan(&req, device, platform)?;
        self.report.warnings.extend(plan.warnings.iter().cloned());
        let save = device.save_config;
        if self.report.dry_run {
            if ovs::handles(platform) {
                self.report.warnings.push(ovs::DRY_RUN_NOTE.into());
            }
            let script = match (&checks, ovs::handles(platform)) {
                (Some(checks), false) => {
                    let (reads, mode) = read_lines(platform, checks)?;
                    session::script_with_reads(platform, Some(&plan), save, &reads, mode)
                }
                (Some(_), true) => {
                    self.report.warnings.push(
                        "ovs: with --verify, OVSDB is read again after the transaction".into(),
                    );
                    session::script(platform, &plan, save)
                }
                (None, _) => session::script(platform, &plan, save),
            };
            self.report.commands = script
                .into_iter()
                .map(|(_, input)| CommandRecord::planned(input))
                .collect();
            self.report.msg = format!(
                "dry run: {} would send {} lines to {}",
                req.op.name(),
                self.report.commands.len(),
                device.name
            );
            return Ok(());
        }

        let holder = Holder::now(&self.report.request_id, req.op.name());
        let waited = Instant::now();
        let lock_deadline = waited + device.lock_timeout;
        // OVS requests are computed from OVSDB state read in their own session (`ovs`), so
        // their plan is not what gets applied: they never ride another session.
        let coalesce = self.config.coalesce.enabled
            && self.config.coalesce.max_batch > 0
            && !ovs::handles(platform);
        let spool = Spool::new(&self.config.lock_dir, &device.name);
        // Requests are only coalesced with a holder that would have planned them the same
        // way: same binary, same config file, same device settings and platform.
        let compat = format!(
            "mercury {} {} {} {:?}",
            env!("CARGO_PKG_VERSION"),
            self.config.path.display(),
            platform.name,
            device
        );
        let locks = Locks {
            settings: &self.config.lock,
            dir: &self.config.lock_dir,
            device: &device.name,
            slots: device.max_sessions,
            holder: &holder,
        };
        let local = match locks.try_acquire()? {
            Some(lock) => lock,
            // A verified request reads its ports before and after its own change, in its
            // own session: it never rides another's.
            None if coalesce && !req.verify => {
                match self.wait_in_spool(
                    &spool,
                    &req,
                    &plan,
                    &compat,
                    device,
                    &locks,
                    lock_deadline,
                )? {
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
        let settings = session_settings(device, save)?;
        let deadline = settings.deadline;
        let conn = transport::open(device, platform.kind, deadline)?;
        self.report.warnings.extend(conn.warnings());
        log::info!("{}: connected to {}", self.report.request_id, device.name);
        if ovs::handles(platform) {
            // Reads OVSDB first, then one transaction (or none when already as requested).
            let prepared = ovs::prepare(&req, device, platform)?;
            let (transcript, result) = prepared.apply(conn, &settings, req.verify);
            self.report.commands = transcript.commands;
            self.report.round_trips = transcript.round_trips;
            let done = result?;
            self.report.changed = done.changed;
            self.report.msg = done.msg;
            let mut data = done.data;
            if req.verify {
                self.report.diff = Some(ovs_diff(&data));
                if let Some(m) = data.as_object_mut() {
                    m.insert("verified".into(), json!(done.drift.is_none()));
                    m.insert("skipped".into(), json!(!done.changed));
                }
            }
            self.report.data = data;
            self.report.warnings.extend(done.warnings);
            if let Some(drift) = done.drift {
                return Err(Error::Drift(format!(
                    "verify: the change was committed but OVSDB does not show it: {drift}"
                )));
            }
            return Ok(());
        }
        let (mut session, opened) = Session::open(conn, platform, &settings);
        let mut transcript = opened.transcript;
        let mut verified: Option<Verified> = None;
        let own = match (opened.result, &checks) {
            (Ok(()), Some(checks)) => {
                let (t, r) = verified_apply(&mut session, platform, &plan, checks, deadline);
                transcript.append(t);
                r.map(|v| verified = Some(v))
            }
            (Ok(()), None) => {
                let applied = session.apply(&plan, deadline);
                transcript.append(applied.transcript);
                applied.result
            }
            (Err(e), _) => Err(e),
        };
        // Before closing (after our own lines, before the save): apply spooled requests.
        let served = if coalesce {
            self.serve(&mut session, &spool, &compat, device, deadline, &held)
        } else {
            Vec::new()
        };
        let finished = session.finish();
        let shared: Result<(), (ExitKind, String)> = finished
            .result
            .as_ref()
            .map(|_| ())
            .map_err(|e| (crate::report::error::session_kind(e), e.to_string()));
        let mut served_ids = Vec::new();
        for (claim, segment) in served {
            served_ids.push(claim.entry.request_id.clone());
            let answer = self.answer_for(&claim, segment, &finished.transcript, &shared, device);
            if let Err(e) = claim.answer(&answer) {
                self.report
                    .warnings
                    .push(format!("coalesced request {}: {e}", answer.request_id));
            }
        }
        if !served_ids.is_empty() {
            self.report.data = json!({"coalesced": {"role": "holder", "served": served_ids}});
            self.how_extra
                .insert("coalesced_served".into(), json!(served_ids));
        }
        if own.is_ok() {
            transcript.append(finished.transcript);
        }
        self.report.commands = transcript.commands;
        self.report.round_trips = transcript.round_trips;
        own?;
        finished.result?;
        self.report.changed = !plan.lines.is_empty();
        self.report.msg = format!(
            "{} applied on {} ({} lines, {} round trips)",
            req.op.name(),
            device.name,
            self.report.commands.len(),
            self.report.round_trips
        );
        if let Some(v) = verified {
            return self.report_verified(&req, device, v);
        }
        Ok(())
    }

    fn open_audit(&mut self) -> Result<&mut AuditLog, Error> {
        if self.audit.is_none() {
            self.audit = Some(AuditLog::open(&self.config.audit_log)?);
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
        log.write(&audit::record("started", &id, &who, &what, &why, None))?;
        self.started_written = true;
        Ok(())
    }

    /// Writes the `finished` record (not for dry runs). A failure to write it after the
    /// device was changed cannot undo the change, so it becomes a warning in the result.
    fn audit_finished(&mut self, result: &Result<(), Error>) {
        if self.report.dry_run {
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
            "msg": match result { Ok(()) => self.report.msg.clone(), Err(e) => e.to_string() },
            "changed": self.report.changed && kind == ExitKind::Ok,
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
        if let Err(e) = written {
            self.report
                .warnings
                .push(format!("audit record not written: {e}"));
        }
    }
}

/// The secrets and deadlines a session needs.
fn session_settings(device: &Device, save: bool) -> Result<Settings, Error> {
    device.check_secret_modes()?;
    let enable_secret = device
        .enable_secret_file
        .as_deref()
        .map(Device::read_secret)
        .transpose()?;
    let password = device
        .password_file
        .as_deref()
        .map(Device::read_secret)
        .transpose()?;
    Ok(Settings {
        device: device.name.clone(),
        command_timeout: device
            .command_timeout
            .min(device.request_timeout)
            .max(Duration::from_millis(1)),
        deadline: Instant::now() + device.request_timeout,
        enable_secret,
        secrets: password.into_iter().collect(),
        save,
    })
}

fn check_transport_fits(device: &Device, kind: Kind) -> Result<(), Error> {
    if device.transport == TransportKind::Local && kind == Kind::Cli {
        return Err(Error::ConfigMessage(format!(
            "devices.{}: transport local runs commands only; platform {} needs an interactive CLI",
            device.name, device.platform
        )));
    }
    Ok(())
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
