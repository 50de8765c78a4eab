//! Resolution: the device a request names (by name, alias, switch MAC, or an Ironic
//! `local_link_connection`), its platform in the catalog, and the request's port names
//! checked against that platform. The first step that needs the configuration.
//!
//! For a caller with a scope (serve-ssh, serve-jsonrpc) only the devices in its scope exist:
//! a reference to any other device, configured or not, gets one answer (exit 77, the
//! reference as written), before anything about the device (its name, platform, port
//! pattern) could show in a message or a result.
//!
//! Network names (`"network": "tenant-a"`, from the configuration's `[networks]`) become
//! VLAN ids here too ([`networks`]), before the request is validated: policy then sees the
//! id, as it does for any VLAN.

use crate::catalog::{Catalog, CatalogError, Platform};
use crate::config::{Config, Device};
use crate::policy::{Denied, Scope};
use crate::report::error::Error;
use crate::request::validate::Escaped;
use crate::request::vlan::Vlan;
use crate::request::{Op, RawPortItem, RawRequest, Request, RequestError};

fn bad(msg: impl Into<String>) -> RequestError {
    RequestError(msg.into())
}

/// Replaces network names (`network` on the request or on a port item) with the VLAN the
/// configuration's `[networks.NAME]` gives: `vlan` for attach/detach/plug/unplug,
/// `native_vlan` for the other operations. An unknown name, or a name next to a different
/// VLAN id, is the caller's mistake (exit 65).
pub fn networks(mut raw: RawRequest, config: &Config) -> Result<RawRequest, RequestError> {
    let lookup = |name: &str| -> Result<Vlan, RequestError> {
        config.networks.get(name).map(|n| n.vlan).ok_or_else(|| {
            bad(format!(
                "unknown network {}: not in [networks] of the configuration",
                Escaped(name)
            ))
        })
    };
    let by_vlan = matches!(
        raw.op.as_deref().and_then(Op::parse),
        Some(Op::AttachPort | Op::DetachPort | Op::PlugPort | Op::UnplugPort)
    );
    let place = |name: &str, vlan: &mut Option<Vlan>, native: &mut Option<Vlan>| {
        let id = lookup(name)?;
        let slot = if by_vlan { vlan } else { native };
        match slot {
            Some(given) if *given != id => Err(bad(format!(
                "network {} is VLAN {id}, not {given}",
                Escaped(name)
            ))),
            _ => {
                *slot = Some(id);
                Ok(())
            }
        }
    };
    if let Some(name) = raw.network.take() {
        place(&name, &mut raw.vlan, &mut raw.native_vlan)?;
    }
    for item in raw.ports.iter_mut().flatten() {
        if let RawPortItem::Full(f) = item {
            if let Some(name) = f.network.take() {
                place(&name, &mut f.vlan, &mut f.native_vlan)?;
            }
        }
    }
    Ok(raw)
}

/// Finds the device `req` targets among those `scope` allows (every device when `None`) and
/// turns every port name in it (ports, LAG members, the LAG itself,
/// `local_link_connection.port_id`) into the platform's canonical name, so that policy,
/// lock, audit and rendering all see the name the device uses (`Et48` is `Ethernet48` to
/// `denied_ports`). Unknown device or a port name the platform does not know: exit 65;
/// with a scope, a device outside it (or unknown): exit 77.
pub fn resolve<'c>(
    req: &mut Request,
    config: &'c Config,
    catalog: &'c Catalog,
    scope: Option<&Scope>,
) -> Result<(&'c Device, &'c Platform), ResolveError> {
    let device = find_device(req, config, scope)?;
    let platform = catalog.get(&device.platform).map_err(|e| match e {
        CatalogError::Unknown { .. } => ResolveError::UnknownPlatform {
            device: device.name.clone(),
            platform: device.platform.clone(),
            suggestion: catalog.did_you_mean(&device.platform),
        },
        other => ResolveError::Catalog(other),
    })?;
    platform
        .with_options(&device.options)
        .map_err(|m| ResolveError::Options {
            device: device.name.clone(),
            message: m,
        })?;
    canonicalise(req, platform)?;
    Ok((device, platform))
}

/// Every port name of `req` in `platform`'s canonical form; two names for one port are
/// refused (they would be two changes to one port in one request).
pub fn canonicalise(req: &mut Request, platform: &Platform) -> Result<(), RequestError> {
    let canon = |p: &str| platform.canonical_port(p).map_err(|e| bad(e.0));
    let mut seen = std::collections::BTreeMap::new();
    for c in &mut req.ports {
        let name = canon(&c.port)?;
        if let Some(first) = seen.insert(name.clone(), c.port.clone()) {
            return Err(bad(format!(
                "ports {} and {} are the same port {} on {}",
                Escaped(&first),
                Escaped(&c.port),
                Escaped(&name),
                platform.name
            )));
        }
        c.port = name;
    }
    if let Some(l) = req.link.as_mut() {
        if let Some(p) = l.port_id.as_mut() {
            *p = canon(p)?;
        }
    }
    if let Some(lag) = req.lag.as_mut() {
        let mut members = std::collections::BTreeSet::new();
        for m in &mut lag.members {
            *m = canon(m)?;
            if !members.insert(m.clone()) {
                return Err(bad(format!(
                    "member {} appears twice (as another spelling of the same port)",
                    Escaped(m)
                )));
            }
        }
        // A LAG given by name (`po7`) is the platform's LAG interface (`Port-channel7`);
        // one given by number is rendered by the driver.
        if !lag.name.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(name) = platform.canonical_port(&lag.name) {
                lag.name = name;
            }
        }
        if let Some(l2) = lag.l2.as_mut() {
            l2.port = lag.name.clone();
        }
    }
    Ok(())
}

/// The device: `device` by name, alias or MAC; for an Ironic link, the first of
/// `switch_info`, `hostname`, `switch_id` that names a configured device (NGS-style
/// `switch_info` values that are not Mercury device names fall back to the MAC). When
/// both a name and a MAC resolve, they must agree.
fn find_device<'c>(
    req: &Request,
    config: &'c Config,
    scope: Option<&Scope>,
) -> Result<&'c Device, ResolveError> {
    let visible = |d: &&Device| scope.is_none_or(|s| s.allows(d));
    let find = |r: &str| config.find_device(r).filter(visible);
    let unknown = |what: &str| match scope {
        Some(s) => ResolveError::NotYours(s.not_yours(what)),
        // Only an unscoped caller (the operator) may learn the names of other devices.
        None => ResolveError::Unknown(bad(format!(
            "unknown device {}: not a device name, alias or switch MAC in the configuration{}",
            Escaped(what),
            crate::util::suggest::did_you_mean(
                what,
                config.devices.values().flat_map(|d| {
                    std::iter::once(d.name.as_str()).chain(d.aliases.iter().map(String::as_str))
                })
            )
        ))),
    };
    if let Some(d) = &req.device {
        return find(d).ok_or_else(|| unknown(d));
    }
    let l = req
        .link
        .as_ref()
        .ok_or_else(|| ResolveError::Request(bad("this request names no device")))?;
    let by_name = [&l.switch_info, &l.hostname]
        .into_iter()
        .flatten()
        .find_map(|n| find(n));
    let by_mac = l.switch_id.as_deref().and_then(find);
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

/// Resolution failures: an unknown device is the caller's mistake (65; 77 for a caller with
/// a scope); a device whose platform the catalog lacks is a configuration mistake (78).
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// Bad request.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// No configured device has this name, alias or MAC (exit 65).
    #[error(transparent)]
    Unknown(RequestError),
    /// The device is not in the caller's scope, or does not exist (one answer for both,
    /// exit 77).
    #[error(transparent)]
    NotYours(Denied),
    /// The device's platform is in the catalog but does not compile (exit 78).
    #[error(transparent)]
    Catalog(CatalogError),
    /// devices.X.options names an option the platform lacks, or a value it does not take.
    #[error("devices.{device}.{message}")]
    Options {
        /// The device.
        device: String,
        /// What is wrong.
        message: String,
    },
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
    /// The request names no device the caller can see: unknown, or outside its scope (the
    /// JSON-RPC front answers Ironic's `SwitchNotFound`).
    pub fn is_not_found(&self) -> bool {
        matches!(self, ResolveError::Unknown(_) | ResolveError::NotYours(_))
    }
}

impl From<ResolveError> for Error {
    fn from(e: ResolveError) -> Self {
        match e {
            ResolveError::Request(r) | ResolveError::Unknown(r) => Error::Request(r),
            ResolveError::NotYours(d) => Error::Denied(d),
            ResolveError::Catalog(c) => Error::Catalog(c),
            other @ (ResolveError::UnknownPlatform { .. } | ResolveError::Options { .. }) => {
                Error::ConfigMessage(other.to_string())
            }
        }
    }
}

/// Checks every DPU's `uplink` against the catalog, as part of loading the configuration
/// (every run, and `mercury check`): the card is driven by the `ovsdb` kind, the uplink's
/// device is a switch (any other kind), and the port is a name the switch's platform
/// accepts and its port policy allows. A problem is a configuration error (exit 78) naming
/// `devices.NAME.uplink`.
pub fn check_uplinks(config: &Config, catalog: &Catalog) -> Vec<String> {
    let mut problems = Vec::new();
    for card in config.devices.values() {
        let Some(up) = &card.uplink else { continue };
        let key = format!("devices.{}.uplink", card.name);
        // An unknown platform is reported for the device itself (check, resolve).
        let Ok(card_platform) = catalog.get(&card.platform) else {
            continue;
        };
        if card_platform.kind != crate::catalog::Kind::Ovsdb {
            problems.push(format!(
                "{key}: only a DPU (a device whose platform is driven through OVSDB, like ovs) has an uplink; {} is a {} platform",
                card.platform,
                format!("{:?}", card_platform.kind).to_lowercase()
            ));
            continue;
        }
        let Some(switch) = config.devices.get(&up.device) else {
            problems.push(format!("{key}.device: names no [devices] table"));
            continue;
        };
        let Ok(platform) = catalog.get(&switch.platform) else {
            continue;
        };
        if platform.kind == crate::catalog::Kind::Ovsdb {
            problems.push(format!(
                "{key}.device: devices.{} is itself an OVS device; an uplink is a switch port",
                switch.name
            ));
            continue;
        }
        let port = match platform.canonical_port(&up.port) {
            Ok(p) => p,
            Err(e) => {
                problems.push(format!("{key}.port: {}", e.0));
                continue;
            }
        };
        if let Err(e) = crate::policy::check_port(switch, platform, &port) {
            problems.push(format!("{key}.port: {e}"));
        }
    }
    problems
}
