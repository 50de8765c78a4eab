//! Resolution: the device a request names (by name, alias, switch MAC, or an Ironic
//! `local_link_connection`), its platform in the catalog, and the request's port names
//! checked against that platform. The first step that needs the configuration.

use crate::catalog::{Catalog, CatalogError, Platform};
use crate::config::{Config, Device};
use crate::report::error::Error;
use crate::request::validate::Escaped;
use crate::request::{Request, RequestError};

fn bad(msg: impl Into<String>) -> RequestError {
    RequestError(msg.into())
}

/// Finds the device `req` targets and checks the port names against its platform. Unknown
/// device or platform-invalid port: exit 65.
pub fn resolve<'c>(
    req: &Request,
    config: &'c Config,
    catalog: &'c Catalog,
) -> Result<(&'c Device, &'c Platform), ResolveError> {
    let device = find_device(req, config)?;
    let platform = catalog.get(&device.platform).map_err(|e| match e {
        CatalogError::Unknown { .. } => ResolveError::UnknownPlatform {
            device: device.name.clone(),
            platform: device.platform.clone(),
            suggestion: catalog.did_you_mean(&device.platform),
        },
        other => ResolveError::Catalog(other),
    })?;
    for p in &req.ports {
        check_port_for(platform, &p.port)?;
    }
    if let Some(lag) = &req.lag {
        for m in &lag.members {
            check_port_for(platform, m)?;
        }
    }
    Ok((device, platform))
}

/// The device: `device` by name, alias or MAC; for an Ironic link, the first of
/// `switch_info`, `hostname`, `switch_id` that names a configured device (NGS-style
/// `switch_info` values that are not Mercury device names fall back to the MAC). When
/// both a name and a MAC resolve, they must agree.
fn find_device<'c>(req: &Request, config: &'c Config) -> Result<&'c Device, ResolveError> {
    let unknown = |what: &str| {
        let names = config.devices.values().flat_map(|d| {
            std::iter::once(d.name.as_str()).chain(d.aliases.iter().map(String::as_str))
        });
        ResolveError::UnknownDevice {
            reference: what.to_string(),
            suggestion: crate::util::suggest::closest(what, names).map(str::to_string),
        }
    };
    if let Some(d) = &req.device {
        return config.find_device(d).ok_or_else(|| unknown(d));
    }
    let l = req
        .link
        .as_ref()
        .ok_or_else(|| ResolveError::Request(bad("this request names no device")))?;
    let by_name = [&l.switch_info, &l.hostname]
        .into_iter()
        .flatten()
        .find_map(|n| config.find_device(n));
    let by_mac = l.switch_id.as_deref().and_then(|m| config.find_device(m));
    match (by_name, by_mac) {
        (Some(a), Some(b)) if a.name != b.name => Err(ResolveError::Request(bad(format!(
            "local_link_connection disagrees: switch_id {} is device {} but switch_info names {}",
            Escaped(l.switch_id.as_deref().unwrap_or_default()),
            b.name,
            a.name
        )))),
        (Some(d), _) | (None, Some(d)) => Ok(d),
        (None, None) => Err(unknown(&req.target_reference().unwrap_or_default())),
    }
}

/// Resolution failures: an unknown device is the caller's mistake (65); a device whose
/// platform the catalog lacks is a configuration mistake (78).
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// Bad request.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// No device has this name, alias or MAC (exit 65). `suggestion` is a configured name
    /// close to it; callers that must not learn other device names drop it
    /// ([`ResolveError::without_suggestion`]).
    #[error(
        "unknown device {}: not a device name, alias or switch MAC in the configuration{}",
        Escaped(reference),
        suggestion.as_deref().map(|s| format!("; did you mean {s}?")).unwrap_or_default()
    )]
    UnknownDevice {
        /// What the request named.
        reference: String,
        /// The configured name or alias it is probably a typo of.
        suggestion: Option<String>,
    },
    /// The device's platform is in the catalog but does not compile (exit 78).
    #[error(transparent)]
    Catalog(CatalogError),
    /// devices.X.platform names no catalog platform.
    #[error("devices.{device}.platform: unknown platform {platform:?}{suggestion}; see `mercury check --catalog --table` for the list")]
    UnknownPlatform {
        /// The device.
        device: String,
        /// The platform it names.
        platform: String,
        /// `"; did you mean X?"` or empty.
        suggestion: String,
    },
}

impl ResolveError {
    /// The same error without a device-name suggestion (for a scoped caller, who may only
    /// learn the names of devices it is allowed to use).
    pub fn without_suggestion(self) -> ResolveError {
        match self {
            ResolveError::UnknownDevice { reference, .. } => ResolveError::UnknownDevice {
                reference,
                suggestion: None,
            },
            other => other,
        }
    }
}

fn check_port_for(platform: &Platform, port: &str) -> Result<(), RequestError> {
    if !platform.port_pattern.is_match(port) {
        return Err(bad(format!(
            "invalid port {} for platform {}: expected a name like {}",
            Escaped(port),
            platform.name,
            platform
                .port_pattern
                .as_str()
                .trim_start_matches("^(?:")
                .trim_end_matches(")$")
        )));
    }
    Ok(())
}

impl From<ResolveError> for Error {
    fn from(e: ResolveError) -> Self {
        match e {
            ResolveError::Request(r) => Error::Request(r),
            e @ ResolveError::UnknownDevice { .. } => Error::Request(RequestError(e.to_string())),
            ResolveError::Catalog(c) => Error::Catalog(c),
            other @ ResolveError::UnknownPlatform { .. } => Error::ConfigMessage(other.to_string()),
        }
    }
}
