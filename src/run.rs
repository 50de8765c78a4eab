//! One run, start to finish: intake → config → request → policy → plan → lock → audit →
//! session → result. Every path ends in exactly one [`Report`] and one exit code.

use std::io::{IsTerminal, Read};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::audit::{self, AuditLog, Who};
use crate::catalog::{Catalog, CatalogError, Kind};
use crate::cli::{Cli, Command, Format};
use crate::config::{Config, Device, TransportKind};
use crate::error::Error;
use crate::exit::ExitKind;
use crate::forced::{self, Forced};
use crate::lock::{self, DeviceLock, Holder, LockError};
use crate::policy::{self, Scope};
use crate::report::Report;
use crate::request::{Op, RawRequest, Request, RequestError};
use crate::session::{self, CommandRecord, Segment, Session, Settings, Transcript};
use crate::spool::{self, Answer, Claim, Entry, HolderRef, Spool, SpoolError, Waited};
use crate::verify::{self, Check, PortReport, PortState};
use crate::{driver, ovs, timefmt, transport};

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
        clap_complete::generate(c.shell, &mut crate::cli::command(), "mercury", &mut buf);
        return Outcome {
            stdout: String::from_utf8_lossy(&buf).into_owned(),
            code: 0,
        };
    }
    if let Command::ServeJsonrpc(args) = &cli.command {
        return crate::jsonrpc::serve_inetd(&cli.config, args);
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
            if crate::validate::identifier("request_id", id).is_ok() {
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
                        crate::validate::Escaped(name)
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

/// The lock slots of one device, for one request.
struct Locks<'l> {
    settings: &'l crate::config::LockSettings,
    dir: &'l Path,
    device: &'l str,
    slots: u32,
    holder: &'l Holder,
}

impl Locks<'_> {
    fn try_acquire(&self) -> Result<Option<DeviceLock>, Error> {
        Ok(lock::try_acquire(
            self.dir,
            self.device,
            self.slots,
            self.holder,
        )?)
    }

    fn acquire(&self, deadline: Instant) -> Result<DeviceLock, Error> {
        Ok(lock::acquire(
            self.dir,
            self.device,
            self.slots,
            deadline.saturating_duration_since(Instant::now()),
            self.holder,
        )?)
    }

    fn complete(&self, local: DeviceLock, deadline: Instant) -> Result<lock::Held, Error> {
        Ok(lock::complete(
            self.settings,
            local,
            self.device,
            self.slots,
            self.holder,
            deadline,
        )?)
    }

    fn timeout(&self, waited: Duration) -> LockError {
        LockError::Timeout {
            device: self.device.to_string(),
            waited,
            holders: lock::describe_holders(self.dir, self.device, self.slots),
        }
    }
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
                .map(|(_, input)| CommandRecord {
                    input,
                    output: String::new(),
                    elapsed_ms: 0,
                })
                .collect();
            self.report.msg = format!(
                "dry run: {} would send {} lines to {}",
                req.op.name(),
                self.report.commands.len(),
                device.name
            );
            return Ok(());
        }

        let holder = Holder {
            pid: std::process::id(),
            request_id: self.report.request_id.clone(),
            op: req.op.name().to_string(),
            since: timefmt::now_rfc3339(),
        };
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
            .map_err(|e| (crate::error::session_kind(e), e.to_string()));
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

    /// The result of a `--verify` run: `changed` from the states read, per-port before /
    /// after, Ansible's `diff`; a port that does not show the change fails the request.
    fn report_verified(
        &mut self,
        req: &Request,
        device: &Device,
        v: Verified,
    ) -> Result<(), Error> {
        self.report.changed = v.reports.iter().any(|p| p.changed);
        let unverified: Vec<String> = v
            .reports
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
    fn verify_port(
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
            self.report.commands = lines
                .into_iter()
                .map(|input| CommandRecord {
                    input,
                    output: String::new(),
                    elapsed_ms: 0,
                })
                .collect();
            self.report.msg = format!(
                "dry run: verify_port would send {} lines to {}",
                self.report.commands.len(),
                device.name
            );
            return Ok(());
        }
        let holder = Holder {
            pid: std::process::id(),
            request_id: self.report.request_id.clone(),
            op: req.op.name().to_string(),
            since: timefmt::now_rfc3339(),
        };
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

    /// The lock is busy: spool the planned request for the holder and wait for its answer,
    /// or for the lock. `Some(lock)`: run it ourselves; `None`: done, the report is filled.
    #[allow(clippy::too_many_arguments)]
    fn wait_in_spool(
        &mut self,
        spool: &Spool,
        req: &Request,
        plan: &driver::Plan,
        compat: &str,
        device: &Device,
        locks: &Locks,
        lock_deadline: Instant,
    ) -> Result<Option<DeviceLock>, Error> {
        // A holder may touch the device for us as soon as the request is spooled.
        self.audit_started()?;
        let entry = Entry::new(&self.report.request_id, req.op.name(), compat, plan);
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
        let waited = spool::wait(&ticket, lock_deadline, cap, || locks.try_acquire());
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
        self.report.data = json!({"coalesced": {
            "role": "waiter",
            "holder_pid": answer.holder.pid,
            "holder_request_id": answer.holder.request_id,
        }});
        self.how_extra
            .insert("coalesced_by".into(), json!(answer.holder.request_id));
        match answer.kind() {
            ExitKind::Ok => Ok(None),
            kind => Err(SpoolError::Relayed {
                kind,
                message: answer.msg.clone(),
            }
            .into()),
        }
    }

    /// Claims spooled requests (oldest first, at most `max_batch`) and applies each in
    /// this session, each with its own deadline and failure isolation.
    fn serve(
        &mut self,
        session: &mut Session,
        spool: &Spool,
        compat: &str,
        device: &Device,
        own_deadline: Instant,
        held: &lock::Held,
    ) -> Vec<(Claim, Segment)> {
        let mut server = spool.server(compat);
        let mut out = Vec::new();
        let max = self.config.coalesce.max_batch as usize;
        while session.healthy() && out.len() < max && Instant::now() < own_deadline && !held.lost()
        {
            match server.claim_next() {
                Ok(Some(claim)) => {
                    let segment =
                        session.apply(&claim.entry.plan(), Instant::now() + device.request_timeout);
                    out.push((claim, segment));
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

    /// A waiter's result: its own lines and outcome, plus the shared save when its own
    /// part succeeded.
    fn answer_for(
        &self,
        claim: &Claim,
        segment: Segment,
        finish: &Transcript,
        shared: &Result<(), (ExitKind, String)>,
        device: &Device,
    ) -> Answer {
        let mut t = segment.transcript;
        let result = match segment.result {
            Err(e) => Err((crate::error::session_kind(&e), e.to_string())),
            Ok(()) => {
                t.append(Transcript {
                    commands: finish.commands.clone(),
                    round_trips: finish.round_trips,
                });
                shared.clone()
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
        Answer {
            request_id: claim.entry.request_id.clone(),
            rc,
            msg,
            changed: rc == 0 && !claim.entry.lines.is_empty(),
            commands: t.commands,
            round_trips: t.round_trips,
            holder: HolderRef {
                pid: std::process::id(),
                request_id: self.report.request_id.clone(),
            },
        }
    }

    fn get_switches(&mut self) -> Result<(), Error> {
        let mut list = Vec::new();
        for d in self.config.devices.values() {
            if let Some(s) = &self.scope {
                if s.allows_device(d).is_err() {
                    continue;
                }
            }
            let platform = self.catalog.get(&d.platform).ok();
            list.push(json!({
                "name": d.name,
                "platform": platform.map(|p| p.name.clone()).unwrap_or_else(|| d.platform.clone()),
                "aliases": d.aliases,
                "mac": d.mac,
                "address": d.address,
                "transport": match d.transport { TransportKind::Ssh => "ssh", TransportKind::Command { .. } => "command", TransportKind::Local => "local" },
                "default_vlan": d.default_vlan,
                "allowed_vlans": d.allowed_vlans.as_ref().map(|s| s.to_string()),
                "manage_vlans": d.manage_vlans,
                "network_types": platform.map(|p| p.network_types.clone()).unwrap_or_default(),
            }));
        }
        self.report.msg = format!("{} devices", list.len());
        self.report.data = json!({ "switches": list });
        Ok(())
    }

    fn is_link_valid(&mut self, req: &Request) -> Result<(), Error> {
        let verdict = match req.resolve(self.config, self.catalog) {
            Ok((device, platform)) => {
                self.report.device = Some(device.name.clone());
                self.report.platform = Some(platform.name.clone());
                let scoped = match &self.scope {
                    Some(s) => s.allows_device(device),
                    None => Ok(()),
                };
                scoped
                    .and_then(|_| {
                        req.port_names()
                            .iter()
                            .try_for_each(|p| policy::check_port(device, p))
                    })
                    .map_err(|e| e.to_string())
            }
            Err(crate::request::ResolveError::Request(e)) => Err(e.0),
            Err(e) => return Err(e.into()),
        };
        let valid = verdict.is_ok();
        self.report.msg = match &verdict {
            Ok(()) => "link is valid".into(),
            Err(why) => format!("link is not valid: {why}"),
        };
        self.report.data = json!({ "valid": valid, "reason": verdict.err() });
        Ok(())
    }

    fn is_port_supported(&mut self, req: &Request) -> Result<(), Error> {
        let vnic = req.kind.vnic_type.as_deref().unwrap_or("baremetal");
        let smartnic = req.kind.is_smartnic.unwrap_or(false);
        let platform = match req.target_reference() {
            Some(_) => {
                let (device, platform) = req.resolve(self.config, self.catalog)?;
                self.report.device = Some(device.name.clone());
                self.report.platform = Some(platform.name.clone());
                Some(platform)
            }
            None => None,
        };
        let (supported, why) = match vnic {
            "baremetal" if smartnic => (false, "a SmartNIC port has vnic_type smart-nic"),
            "baremetal" => (
                platform.is_none_or(|p| p.network_types.iter().any(|t| t == "vlan")),
                "switch port",
            ),
            "smart-nic" if !smartnic => (false, "vnic_type smart-nic needs is_smartnic"),
            "smart-nic" => (
                platform.is_none_or(|p| p.supports("plug")),
                "OVS representor on a DPU",
            ),
            _ => (false, "only baremetal and smart-nic ports are handled"),
        };
        self.report.msg = format!(
            "{vnic} port {}supported: {why}",
            if supported { "" } else { "not " }
        );
        self.report.data = json!({ "supported": supported });
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

/// Every show line for `checks`, in order, and the mode they are typed in.
fn read_lines<'p>(
    platform: &'p crate::catalog::Platform,
    checks: &[Check],
) -> Result<(Vec<driver::Line>, Option<&'p str>), Error> {
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
struct Verified {
    /// Per port: before, after, drift.
    reports: Vec<PortReport>,
    /// Every port already was as requested: nothing was sent.
    skipped: bool,
    /// Ports that do not show the change.
    drift: Option<String>,
}

/// Reads each checked port (its show lines, then the platform's parser).
fn read_states(
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
fn verified_apply(
    session: &mut Session,
    platform: &crate::catalog::Platform,
    plan: &driver::Plan,
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
fn ovs_diff(data: &serde_json::Value) -> serde_json::Value {
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

fn check_transport_fits(device: &Device, kind: Kind) -> Result<(), Error> {
    if device.transport == TransportKind::Local && kind == Kind::Cli {
        return Err(Error::ConfigMessage(format!(
            "devices.{}: transport local runs commands only; platform {} needs an interactive CLI",
            device.name, device.platform
        )));
    }
    Ok(())
}

fn check(
    config: &Config,
    catalog: &Catalog,
    catalog_only: bool,
    report: &mut Report,
) -> Result<(), Error> {
    let mut problems: Vec<String> = catalog.lint();
    if !catalog_only {
        for d in config.devices.values() {
            match catalog.get(&d.platform) {
                Err(CatalogError::Unknown { .. }) => problems.push(format!(
                    "devices.{}.platform: unknown platform {:?}",
                    d.name, d.platform
                )),
                // The lint above already reports a platform that does not compile.
                Err(_) => {}
                Ok(p) => {
                    if let Err(e) = check_transport_fits(d, p.kind) {
                        problems.push(e.to_string());
                    }
                }
            }
            if let Err(e) = d.check_secret_modes() {
                problems.push(format!("devices.{}: {e}", d.name));
            }
            if d.transport == TransportKind::Ssh {
                problems.extend(transport::ssh::check(d));
            }
            if d.allowed_vlans.is_none() {
                report.warnings.push(format!(
                    "devices.{}: no allowed_vlans, so every VLAN change is denied (fail-closed)",
                    d.name
                ));
            }
        }
    }
    report.data = json!({
        "problems": problems,
        "platforms": catalog.names().collect::<Vec<_>>(),
        "devices": if catalog_only { 0 } else { config.devices.len() },
    });
    if problems.is_empty() {
        report.msg = if catalog_only {
            format!("catalog ok: {} platforms", catalog.names().count())
        } else {
            format!(
                "configuration ok: {} devices, {} callers, catalog of {} platforms",
                config.devices.len(),
                config.callers.len(),
                catalog.names().count()
            )
        };
        Ok(())
    } else {
        Err(Error::ConfigMessage(format!(
            "{} problems: {}",
            problems.len(),
            problems.join("; ")
        )))
    }
}

/// The supported-platforms table (Markdown), generated from the catalog (built-in plus the
/// config's plugins.d when a configuration is readable).
fn table(config_path: &Path) -> Result<String, Error> {
    let catalog = match Config::load(config_path) {
        Ok(c) => Catalog::load(&c.plugins_dir)?,
        Err(_) => Catalog::builtin()?,
    };
    Ok(catalog.table()?)
}
