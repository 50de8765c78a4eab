//! `mercury check`: configuration, catalog and file permissions, without device contact;
//! and the supported-platforms table.

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
