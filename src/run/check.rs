//! `mercury check`: configuration, catalog and file trust, without device contact; and the
//! supported-platforms table.
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
                    "devices.{}.platform: unknown platform {:?}",
                    d.name, d.platform
                )),
                // The lint above already reports a platform that does not compile.
                Err(_) => {}
                Ok(p) => {
                    if let Err(e) = transport::fits(d, p.kind.channel()) {
                        problems.push(e.to_string());
                    }
                    if let Err(m) = p.with_options(&d.options) {
                        problems.push(format!("devices.{}.{m}", d.name));
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
            "{} problems: {}",
            problems.len(),
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
