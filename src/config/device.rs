//! One device's settings (`[devices.NAME]` over `[defaults]`), checked when parsed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::jump::JumpHost;
use super::{KeyError, RawSettings};
use crate::request::validate;
use crate::request::vlan::{Vlan, VlanSet};

/// How Mercury reaches a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportKind {
    /// SSH with strict host-key checking (the default).
    Ssh,
    /// A local program spoken to over stdin/stdout (a console server tool, `ssh -J`,
    /// `mercury-sim`). `argv[0]` is looked up in `PATH` when it has no `/`.
    Command {
        /// Program and arguments, `{config_dir}` already expanded.
        argv: Vec<String>,
    },
    /// Commands run on this host (Mercury running on the DPU itself).
    Local,
}

/// One device, with `[defaults]` merged in and every value checked.
#[derive(Debug, Clone)]
pub struct Device {
    /// The config name (`[devices.NAME]`).
    pub name: String,
    /// The catalog platform name as written (resolved against the catalog by the caller).
    pub platform: String,
    /// How to reach it.
    pub transport: TransportKind,
    /// Host name or address (SSH).
    pub address: Option<String>,
    /// TCP port (SSH), default 22.
    pub port: u16,
    /// Login user (SSH).
    pub username: Option<String>,
    /// File holding the login password.
    pub password_file: Option<PathBuf>,
    /// Private key file.
    pub key_file: Option<PathBuf>,
    /// File holding the private key's passphrase.
    pub passphrase_file: Option<PathBuf>,
    /// File holding the enable / privileged-mode secret.
    pub enable_secret_file: Option<PathBuf>,
    /// Pinned host key fingerprint (`SHA256:...`) or [`TRUST_ON_FIRST_USE`] (checked when
    /// the config is parsed).
    pub host_key: Option<String>,
    /// known_hosts file for host-key checking (and where a trust-on-first-use key is written).
    pub known_hosts: Option<PathBuf>,
    /// SSH jump host (bastion) the connection is tunnelled through.
    pub proxy_jump: Option<JumpHost>,
    /// Pinned host key fingerprint of the jump host (else it must be in `known_hosts`).
    pub proxy_jump_host_key: Option<String>,
    /// Chassis MAC (the `switch_id` Ironic learns from LLDP), normalised lowercase.
    pub mac: Option<String>,
    /// Other names this device answers to.
    pub aliases: Vec<String>,
    /// The idle VLAN: removed before plugging, restored after unplugging.
    pub default_vlan: Option<Vlan>,
    /// Save the configuration (copy to startup) after a change.
    pub save_config: bool,
    /// May Mercury create and delete VLANs on this device?
    pub manage_vlans: bool,
    /// Shut ports that have no network left, enable them when plugging.
    pub shut_unused_ports: bool,
    /// Concurrent sessions the device allows (lock slots).
    pub max_sessions: u32,
    /// How long to wait for the device lock.
    pub lock_timeout: Duration,
    /// TCP connect, SSH key exchange and host-key check, together.
    pub connect_timeout: Duration,
    /// SSH authentication and opening the shell or exec channel.
    pub auth_timeout: Duration,
    /// Per-command (per prompt wait) deadline.
    pub command_timeout: Duration,
    /// Whole-request deadline.
    pub request_timeout: Duration,
    /// VLANs callers may use (`None`: not configured, which allows nothing).
    pub allowed_vlans: Option<VlanSet>,
    /// VLANs never allowed (beats allow).
    pub denied_vlans: VlanSet,
    /// Port globs callers may touch (`None`: every port the platform pattern accepts).
    pub allowed_ports: Option<Vec<String>>,
    /// Port globs never touched (beats allow).
    pub denied_ports: Vec<String>,
    /// OVS: `ovs-vsctl --db=` target.
    pub ovs_db: Option<String>,
    /// OVS: the command that runs ovs-vsctl (default `["ovs-vsctl"]`), e.g. `["sudo", "ovs-vsctl"]`.
    pub ovs_vsctl: Option<Vec<String>>,
    /// OVS: integration bridge (default `br-int`).
    pub bridge: Option<String>,
    /// OVS: the bridges requests may plug into and unplug from (default: the integration
    /// bridge only).
    pub bridges: Vec<String>,
    /// OVS: callers (`[callers.NAME]`) that may plug a port without a VLAN, which carries
    /// every VLAN of the bridge (local, unscoped runs always may).
    pub flat_ports: Vec<String>,
    /// Read the ports a request changes before and after it (read-before-write): nothing
    /// is sent when they already are as requested, removals are authorised against what
    /// the port carries, and a change the device accepted but does not show fails. Default
    /// on where the platform can read ports.
    pub verify: bool,
    /// VLANs a change may take off a port (`None`: `allowed_vlans`); the idle VLAN always.
    pub remove_vlans: Option<VlanSet>,
    /// OVS (a DPU): the switch port the card's uplink is cabled to. `plug_port` /
    /// `unplug_port` then program that switch port too (the two-hop path, docs/ovs.md).
    pub uplink: Option<Uplink>,
}

/// The switch port a DPU's uplink is cabled to (`uplink = { device, port }`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uplink {
    /// The switch's config name (`[devices.NAME]`, never an alias or MAC).
    pub device: String,
    /// The switch port, as the switch's platform names it.
    pub port: String,
}

impl Device {
    /// OVS: the bridge a port is plugged into when the request names none (`bridge`, else
    /// the integration bridge `br-int`).
    pub fn default_bridge(&self) -> String {
        self.bridge.clone().unwrap_or_else(|| "br-int".into())
    }
}

/// The `host_key` value that allows learning an unknown host key (never a changed one).
pub const TRUST_ON_FIRST_USE: &str = "trust-on-first-use";

/// Checks a `host_key` value: an OpenSSH `SHA256:` fingerprint (43 base64 characters, no
/// padding) or [`TRUST_ON_FIRST_USE`].
pub fn check_host_key(value: &str, allow_tofu: bool) -> Result<(), String> {
    if allow_tofu && value == TRUST_ON_FIRST_USE {
        return Ok(());
    }
    let ok = value.strip_prefix("SHA256:").is_some_and(|b| {
        b.len() == 43
            && b.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '/')
    });
    if ok {
        Ok(())
    } else {
        Err(format!(
            "not an OpenSSH SHA256 fingerprint (`ssh-keygen -lf KEY.pub` prints it: SHA256: and 43 base64 characters){}",
            if allow_tofu {
                format!(" nor \"{TRUST_ON_FIRST_USE}\"")
            } else {
                String::new()
            }
        ))
    }
}

pub(super) fn build_device(
    name: &str,
    r: RawSettings,
    base: &Path,
    resolve: &dyn Fn(&Path) -> PathBuf,
) -> Result<Device, KeyError> {
    let err = |k: &str, m: String| (k.to_string(), m);
    let platform = r
        .platform
        .ok_or_else(|| err("platform", "missing: every device needs a platform".into()))?;
    let transport = match r.transport.as_deref().unwrap_or("ssh") {
        "ssh" => TransportKind::Ssh,
        "local" => TransportKind::Local,
        "command" => {
            let argv = r.argv.clone().filter(|a| !a.is_empty()).ok_or_else(|| {
                err(
                    "argv",
                    "transport = \"command\" needs argv = [program, args...]".into(),
                )
            })?;
            let dir = base.to_string_lossy();
            TransportKind::Command {
                argv: argv
                    .iter()
                    .map(|a| a.replace("{config_dir}", &dir))
                    .collect(),
            }
        }
        _ => {
            return Err(err(
                "transport",
                "unknown transport (ssh, command, local)".to_string(),
            ))
        }
    };
    if r.argv.is_some() && !matches!(transport, TransportKind::Command { .. }) {
        return Err(err("argv", "only used with transport = \"command\"".into()));
    }
    if transport == TransportKind::Ssh && r.address.is_none() {
        return Err(err(
            "address",
            "missing: transport ssh needs an address".into(),
        ));
    }
    if let Some(h) = &r.host_key {
        check_host_key(h, true).map_err(|m| err("host_key", m))?;
        if h == TRUST_ON_FIRST_USE && r.known_hosts.is_none() {
            return Err(err(
                "host_key",
                "trust-on-first-use needs known_hosts: the file the learned key is written to"
                    .into(),
            ));
        }
    }
    if let Some(h) = &r.proxy_jump_host_key {
        check_host_key(h, false).map_err(|m| err("proxy_jump_host_key", m))?;
    }
    let proxy_jump = r
        .proxy_jump
        .as_deref()
        .map(JumpHost::parse)
        .transpose()
        .map_err(|m| err("proxy_jump", m))?;
    if proxy_jump.is_some() && transport != TransportKind::Ssh {
        return Err(err(
            "proxy_jump",
            "only used with transport = \"ssh\"".into(),
        ));
    }
    let mac = r
        .mac
        .as_deref()
        .map(|m| validate::mac("mac", m))
        .transpose()
        .map_err(|_| {
            err(
                "mac",
                "expected a MAC address like aa:bb:cc:dd:ee:ff".into(),
            )
        })?;
    let aliases = r.aliases.unwrap_or_default();
    for (i, a) in aliases.iter().enumerate() {
        validate::simple_name("alias", a, 128).map_err(|_| {
            err(
                "aliases",
                format!(
                    "item {}: 1-128 letters, digits, '.', '_' and '-', starting with a letter or digit",
                    i + 1
                ),
            )
        })?;
    }
    if let Some(b) = &r.bridge {
        validate::simple_name("bridge", b, 15).map_err(|_| {
            err(
                "bridge",
                "1-15 letters, digits, '.', '_' and '-', starting with a letter or digit".into(),
            )
        })?;
    }
    if let Some(db) = &r.ovs_db {
        validate::ovs_db(db).map_err(|m| err("ovs_db", m))?;
    }
    if let Some(argv) = &r.ovs_vsctl {
        validate::ovs_vsctl(argv).map_err(|m| err("ovs_vsctl", m))?;
    }
    for (k, globs) in [
        ("allowed_ports", &r.allowed_ports),
        ("denied_ports", &r.denied_ports),
    ] {
        for g in globs.iter().flatten() {
            if g.is_empty() || g.chars().any(validate::is_dangerous) {
                return Err(err(
                    k,
                    "a port pattern is empty or holds a control or invisible character".into(),
                ));
            }
        }
    }
    let secs = |k: &str, v: Option<f64>, default: f64| -> Result<Duration, KeyError> {
        let v = v.unwrap_or(default);
        if v.is_finite() && (0.0..=86_400.0).contains(&v) {
            Ok(Duration::from_secs_f64(v))
        } else {
            Err(err(
                k,
                "must be a number of seconds between 0 and 86400".into(),
            ))
        }
    };
    let max_sessions = r.max_sessions.unwrap_or(1);
    if !(1..=64).contains(&max_sessions) {
        return Err(err("max_sessions", "must be 1-64".into()));
    }
    if name.is_empty() {
        return Err(err("name", "empty".into()));
    }
    Ok(Device {
        name: name.to_string(),
        platform,
        transport,
        address: r.address,
        port: r.port.unwrap_or(22),
        username: r.username,
        password_file: r.password_file.as_deref().map(resolve),
        key_file: r.key_file.as_deref().map(resolve),
        passphrase_file: r.passphrase_file.as_deref().map(resolve),
        enable_secret_file: r.enable_secret_file.as_deref().map(resolve),
        host_key: r.host_key,
        known_hosts: r.known_hosts.as_deref().map(resolve),
        proxy_jump,
        proxy_jump_host_key: r.proxy_jump_host_key,
        mac,
        aliases,
        default_vlan: r.default_vlan,
        save_config: r.save_config.unwrap_or(true),
        manage_vlans: r.manage_vlans.unwrap_or(false),
        shut_unused_ports: r.shut_unused_ports.unwrap_or(false),
        max_sessions,
        lock_timeout: secs("lock_timeout", r.lock_timeout, 60.0)?,
        connect_timeout: secs("connect_timeout", r.connect_timeout, 10.0)?,
        auth_timeout: secs("auth_timeout", r.auth_timeout, 15.0)?,
        command_timeout: secs("command_timeout", r.command_timeout, 30.0)?,
        request_timeout: secs("request_timeout", r.request_timeout, 300.0)?,
        allowed_vlans: r.allowed_vlans,
        denied_vlans: r.denied_vlans.unwrap_or_default(),
        allowed_ports: r.allowed_ports,
        denied_ports: r.denied_ports.unwrap_or_default(),
        ovs_db: r.ovs_db,
        ovs_vsctl: r.ovs_vsctl,
        bridges: match r.bridges {
            Some(b) => {
                for name in &b {
                    validate::simple_name("bridge", name, 15).map_err(|e| err("bridges", e.0))?;
                }
                b
            }
            None => vec![r.bridge.clone().unwrap_or_else(|| "br-int".into())],
        },
        bridge: r.bridge,
        flat_ports: r.flat_ports.unwrap_or_default(),
        verify: r.verify.unwrap_or(true),
        remove_vlans: r.remove_vlans,
        uplink: match r.uplink {
            Some(u) => {
                validate::simple_name("uplink.device", &u.device, 64)
                    .map_err(|_| err("uplink.device", "not a device name".into()))?;
                if u.port.is_empty()
                    || u.port.len() > 64
                    || u.port
                        .chars()
                        .any(|c| c.is_whitespace() || validate::is_dangerous(c))
                {
                    return Err(err(
                        "uplink.port",
                        "1-64 characters without whitespace or control characters".into(),
                    ));
                }
                Some(Uplink {
                    device: u.device,
                    port: u.port,
                })
            }
            None => None,
        },
    })
}

/// Every `uplink` names another configured device that has no uplink itself (a switch, not
/// a second card). Whether that device's platform is a switch and the port fits it is the
/// catalog's to say (`run::resolve::check_uplinks`).
pub(super) fn check_uplinks(devices: &BTreeMap<String, Device>) -> Result<(), (String, String)> {
    for d in devices.values() {
        let Some(u) = &d.uplink else { continue };
        match devices.get(&u.device) {
            None => {
                return Err((
                    d.name.clone(),
                    "names no [devices] table (a config name, not an alias)".into(),
                ))
            }
            Some(s) if s.name == d.name => {
                return Err((d.name.clone(), "a device cannot be its own uplink".into()))
            }
            Some(s) if s.uplink.is_some() => {
                return Err((
                    d.name.clone(),
                    format!(
                        "devices.{} has an uplink itself; an uplink is a switch port",
                        s.name
                    ),
                ))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Names, aliases and MACs must each identify exactly one device. The error names the
/// device and the key (`aliases`, `mac`) whose value another device already uses.
pub(super) fn check_unique_names(
    devices: &BTreeMap<String, Device>,
) -> Result<(), (String, &'static str, String)> {
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    for d in devices.values() {
        let ids = std::iter::once((d.name.clone(), "name"))
            .chain(d.aliases.iter().map(|a| (a.clone(), "aliases")))
            .chain(d.mac.iter().map(|m| (m.clone(), "mac")));
        for (id, key) in ids {
            if let Some(other) = seen.insert(id, &d.name) {
                if other != d.name {
                    let key = if key == "name" { "aliases" } else { key };
                    return Err((
                        d.name.clone(),
                        key,
                        format!("a name, alias or mac here is also used by devices.{other}"),
                    ));
                }
            }
        }
    }
    Ok(())
}
