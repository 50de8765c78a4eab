//! `mercury check`: configuration, catalog and file trust, without device contact; `check
//! --connect`: each device reached, logged in, its prompt and idle VLAN read, nothing
//! configured; and the supported-platforms table.
//!
//! Whatever a run would refuse for a reason knowable offline, check refuses too, through the
//! same functions: the configuration and catalog files were trust-checked by loading them;
//! here come each device's secrets (read, as a run reads them) and known_hosts, the lock directory and the audit log
//! (trusted, and writable by the user running check), and the etcd credentials file.

use super::*;

pub(super) fn check(
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
                    "devices.{}.platform: unknown platform {:?}{}",
                    d.name,
                    d.platform,
                    catalog.did_you_mean(&d.platform)
                )),
                // The lint above already reports a platform that does not compile.
                Err(_) => {}
                Ok(p) => {
                    if let Err(e) = transport::fits(d, p.kind.channel()) {
                        problems.push(e.to_string());
                    }
                }
            }
            // Read as a run reads them (trust checks, one line each); the values are dropped.
            if let Err(e) = Secrets::read(d) {
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
    if !catalog_only {
        problems.extend(resolve::check_uplinks(config, catalog));
        problems.extend(lock::etcd::check(&config.lock));
        let slots: Vec<(&str, u32)> = config
            .devices
            .values()
            .map(|d| (d.name.as_str(), d.max_sessions))
            .collect();
        problems.extend(lock::check_usable(&config.lock_dir, &slots));
        problems.extend(audit::check_usable(&config.audit_log));
        if let crate::config::LockSettings::Etcd(e) = &config.lock {
            if let Some(path) = &e.credentials_file {
                if let Err(e) = crate::config::check_secret_mode(path) {
                    problems.push(format!("lock.credentials_file: {e}"));
                }
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
            "{} problem{}: {}",
            problems.len(),
            if problems.len() == 1 { "" } else { "s" },
            problems.join("; ")
        )))
    }
}

/// The supported-platforms table (Markdown), generated from the catalog (built-in plus the
/// config's plugins.d when a configuration is readable).
pub fn table(config_path: &Path, format: Format) -> Outcome {
    let table = || -> Result<String, Error> {
        let catalog = match Config::load(config_path) {
            Ok(c) => Catalog::load(&c.plugins_dir)?,
            Err(_) => Catalog::builtin()?,
        };
        Ok(catalog.table()?)
    };
    match table() {
        Ok(stdout) => Outcome { stdout, code: 0 },
        Err(e) => failed(e, format),
    }
}

/// `mercury check --connect`: every device (or the named ones) reached, its host key
/// verified, logged in, its prompt and mode worked out and the idle VLAN's existence read —
/// with the device lock held, and nothing configured. One row per device in
/// `data.connect`; the run fails with the first failing device's exit code.
pub(super) fn connect(
    config: &Config,
    catalog: &Catalog,
    names: &[String],
    report: &mut Report,
    offline: Result<(), Error>,
) -> Result<(), Error> {
    let mut devices: Vec<&Device> = Vec::new();
    for n in names {
        match config.find_device(n) {
            Some(d) => devices.push(d),
            None => {
                return Err(Error::Request(crate::request::RequestError(format!(
                    "unknown device {}{}",
                    crate::request::validate::Escaped(n),
                    crate::util::suggest::did_you_mean(
                        n,
                        config.devices.keys().map(String::as_str)
                    )
                ))))
            }
        }
    }
    if names.is_empty() {
        devices = config.devices.values().collect();
    }
    if report.request_id.is_empty() {
        report.request_id = new_request_id();
    }
    let mut rows = Vec::new();
    let mut first_failure: Option<(ExitKind, String)> = None;
    for d in devices {
        let started = Instant::now();
        let mut warnings = Vec::new();
        let outcome = connect_one(config, catalog, d, &report.request_id, &mut warnings);
        let (ok, rc, kind, detail) = match outcome {
            Ok(detail) => (true, 0, None, detail),
            Err(e) => {
                let kind = e.kind();
                let detail = format!("{e}{}", fix_for(kind));
                if first_failure.is_none() {
                    first_failure = Some((kind, format!("{}: {detail}", d.name)));
                }
                (false, kind.code(), kind.name(), detail)
            }
        };
        rows.push(json!({
            "device": d.name,
            "platform": d.platform,
            "ok": ok,
            "rc": rc,
            "error_kind": kind,
            "detail": detail,
            "warnings": warnings,
            "elapsed_ms": started.elapsed().as_millis() as u64,
        }));
    }
    let failed = rows.iter().filter(|r| r["ok"] != true).count();
    report.data["connect"] = json!(rows);
    offline?;
    match first_failure {
        None => {
            report.msg = format!(
                "configuration ok; {} device{} reached, logged in and read; nothing configured",
                rows.len(),
                if rows.len() == 1 { "" } else { "s" }
            );
            Ok(())
        }
        Some((kind, first)) => Err(Error::Check(
            kind,
            format!(
                "{failed} of {} devices failed the check (first: {first}); nothing configured",
                rows.len()
            ),
        )),
    }
}

/// What to try next, by the kind of failure.
fn fix_for(kind: ExitKind) -> &'static str {
    match kind {
        ExitKind::Unreachable => " — check address, port and the management network",
        ExitKind::NotPermitted => {
            " — check the host key (host_key / known_hosts) and the credentials (username, key_file / password_file)"
        }
        ExitKind::Protocol => {
            " — the prompt did not match the platform's patterns: is the platform right?"
        }
        ExitKind::Temporary => " — the device is busy or slow: retry, or raise the timeouts",
        _ => "",
    }
}

fn connect_one(
    config: &Config,
    catalog: &Catalog,
    d: &Device,
    request_id: &str,
    warnings: &mut Vec<String>,
) -> Result<String, Error> {
    let platform = catalog.get(&d.platform).map_err(|e| match e {
        CatalogError::Unknown { .. } => Error::ConfigMessage(format!(
            "devices.{}.platform: unknown platform {:?}{}",
            d.name,
            d.platform,
            catalog.did_you_mean(&d.platform)
        )),
        other => other.into(),
    })?;
    transport::fits(d, platform.kind.channel())?;
    let holder = Holder::now(request_id, "check");
    let _lock = lock::acquire(
        &config.lock_dir,
        &d.name,
        d.max_sessions,
        d.lock_timeout,
        &holder,
    )?;
    let (secrets, settings) = session_settings(d, false)?;
    let deadline = settings.deadline;
    let conn = transport::open(d, &secrets, platform.kind.channel(), deadline)?;
    warnings.extend(conn.warnings());
    let how = match d.transport {
        TransportKind::Ssh => "host key verified, logged in",
        TransportKind::Command { .. } => "command started",
        TransportKind::Local => "local",
    };
    let (mut session, opened) = Session::open(conn, platform, &settings);
    if let Err(e) = opened.result {
        session.finish();
        return Err(e.into());
    }
    let mut parts = vec![how.to_string()];
    if let Some(mode) = session.mode() {
        parts.push(format!("prompt in {mode} mode"));
    }
    let vlan = match (d.default_vlan, &platform.vlan_check) {
        (None, _) => Ok("no idle VLAN configured".to_string()),
        (Some(v), None) => Ok(format!(
            "idle VLAN {v} not read ({} has no VLAN listing in the catalog)",
            platform.name
        )),
        (Some(v), Some(c)) => {
            let line = match platform.kind.channel() {
                crate::catalog::Channel::Shell => crate::session::plan::Line::cli(&c.show),
                _ => crate::session::plan::Line::words(&c.show),
            };
            let (seg, outputs) = session.read(&[line], None, deadline);
            match seg.result {
                Err(e) => Err(Error::from(e)),
                Ok(()) if outputs.first().is_some_and(|o| c.lists(o, v.get())) => {
                    Ok(format!("idle VLAN {v} exists"))
                }
                Ok(()) => Err(Error::ConfigMessage(format!(
                    "idle VLAN {v} (devices.{}.default_vlan) is not on the device: create it (add-network --vlan {v}) or fix default_vlan",
                    d.name
                ))),
            }
        }
    };
    let finished = session.finish();
    let vlan = vlan?;
    finished.result?;
    parts.push(vlan);
    Ok(parts.join("; "))
}
