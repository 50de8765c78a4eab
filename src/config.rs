//! `mercury.toml`: devices, credentials (as file paths), policy and callers.
//!
//! This module owns loading and checking the local configuration, including the OpenSSH-style
//! file-mode checks on the config and on secret files. It never reads a secret's contents
//! except through [`Device::read_secret`], and never puts one in an error message.
//! Policy *decisions* live in `policy`; this module only parses the policy keys.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::validate;
use crate::vlan::{Vlan, VlanSet};

/// Where the configuration is looked for when neither `--config` nor `MERCURY_CONFIG` is set.
pub const DEFAULT_PATH: &str = "/etc/mercury/mercury.toml";
const DEFAULT_LOCK_DIR: &str = "/run/mercury/locks";
const DEFAULT_AUDIT_LOG: &str = "/var/log/mercury/audit.log";

/// A configuration problem; always exit 78. Messages name the file and the key (and the
/// line, where the TOML parser knows it).
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// TOML syntax or an unknown / mistyped key (the parser's message has line and column).
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// A key whose value is wrong in a way only Mercury can tell.
    #[error("{path}: {key}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Dotted key, e.g. `devices.leaf-1.platform`.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A file whose permissions would let someone else read a secret or change the config.
    #[error("{path}: unsafe permissions {mode:04o} ({why}); {fix}")]
    UnsafeMode {
        /// The file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
        /// Who could do what.
        why: &'static str,
        /// The remedy.
        fix: &'static str,
    },
}

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
}

/// The `host_key` value that allows learning an unknown host key (never a changed one).
pub const TRUST_ON_FIRST_USE: &str = "trust-on-first-use";

/// A `proxy_jump = "[user@]host[:port]"` bastion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JumpHost {
    /// Login user on the bastion (default: the device's `username`).
    pub user: Option<String>,
    /// Host name or address (IPv6 addresses in `[]` when a port follows).
    pub host: String,
    /// TCP port, default 22.
    pub port: u16,
}

impl JumpHost {
    /// Parses `[user@]host[:port]` (`[v6]:port` for IPv6 with a port).
    pub fn parse(s: &str) -> Result<JumpHost, String> {
        let bad = || format!("{} is not [user@]host[:port]", validate::Escaped(s));
        if s.is_empty()
            || s.chars()
                .any(|c| validate::is_dangerous(c) || c.is_whitespace())
            || s.contains(['/', ','])
        {
            return Err(bad());
        }
        let (user, rest) = match s.rsplit_once('@') {
            Some((u, r)) if !u.is_empty() => (Some(u.to_string()), r),
            Some(_) => return Err(bad()),
            None => (None, s),
        };
        let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
            let (h, after) = v6.split_once(']').ok_or_else(bad)?;
            let port = match after {
                "" => None,
                p => Some(p.strip_prefix(':').ok_or_else(bad)?),
            };
            (h, port)
        } else {
            match rest.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (rest, None),
            }
        };
        let port = match port {
            Some(p) => p.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(bad)?,
            None => 22,
        };
        if host.is_empty() {
            return Err(bad());
        }
        Ok(JumpHost {
            user,
            host: host.to_string(),
            port,
        })
    }
}

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
            "{} is not an OpenSSH SHA256 fingerprint (`ssh-keygen -lf KEY.pub` prints it: SHA256: and 43 base64 characters){}",
            validate::Escaped(value),
            if allow_tofu {
                format!(" nor \"{TRUST_ON_FIRST_USE}\"")
            } else {
                String::new()
            }
        ))
    }
}

/// A forced-command caller (`serve-ssh --caller NAME`).
#[derive(Debug, Clone)]
pub struct Caller {
    /// The name.
    pub name: String,
    /// Devices it may touch (names as in `[devices]`); empty allows nothing.
    pub devices: Vec<String>,
    /// VLANs it may use, narrowing each device's own policy (`None`: the device's policy).
    pub allowed_vlans: Option<VlanSet>,
}

/// The loaded configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file it came from.
    pub path: PathBuf,
    /// Directory holding lock files.
    pub lock_dir: PathBuf,
    /// Audit log (JSON lines, appended).
    pub audit_log: PathBuf,
    /// Extra catalog files (`plugins.d/*.toml` next to the config, or `plugins_dir`).
    pub plugins_dir: PathBuf,
    /// Devices by config name.
    pub devices: BTreeMap<String, Device>,
    /// Forced-command callers by name.
    pub callers: BTreeMap<String, Caller>,
    /// `[lock]`: which lock backend serialises sessions per device.
    pub lock: LockSettings,
    /// `[coalesce]`: waiting requests ride the lock holder's session.
    pub coalesce: CoalesceSettings,
}

/// `[lock]`: the device lock backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockSettings {
    /// Lock files in `lock_dir` (flock): serialises the processes of this host (the default).
    File,
    /// Lock files for this host, then a lease-bound key per slot in etcd, shared by every
    /// executor host that uses the same etcd cluster and prefix.
    Etcd(EtcdSettings),
}

/// How to reach etcd for the `etcd` lock backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdSettings {
    /// Client endpoints (`http://host:port`), tried in order.
    pub endpoints: Vec<EtcdEndpoint>,
    /// Key prefix; a slot is `<prefix>/<device>/<slot>`.
    pub prefix: String,
    /// Lease time-to-live: how long a crashed holder keeps the slot.
    pub lease_ttl: Duration,
    /// Per HTTP request deadline.
    pub request_timeout: Duration,
    /// File with `user:password` for etcd authentication (mode 0600).
    pub credentials_file: Option<PathBuf>,
    /// This host's name in holder info.
    pub host: String,
}

/// One etcd client endpoint (plain HTTP; TLS is terminated by a local proxy).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdEndpoint {
    /// Host name or address.
    pub host: String,
    /// TCP port.
    pub port: u16,
}

impl std::fmt::Display for EtcdEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "http://{}:{}", self.host, self.port)
    }
}

/// `[coalesce]`: request coalescing (docs/scale.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoalesceSettings {
    /// A process that finds the device locked spools its request for the holder.
    pub enabled: bool,
    /// Most spooled requests one holder applies in its session.
    pub max_batch: u32,
}

impl Default for CoalesceSettings {
    fn default() -> Self {
        CoalesceSettings {
            enabled: true,
            max_batch: 64,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLock {
    backend: Option<String>,
    endpoints: Option<Vec<String>>,
    prefix: Option<String>,
    lease_ttl: Option<u64>,
    request_timeout: Option<f64>,
    credentials_file: Option<PathBuf>,
    host: Option<String>,
    ca_file: Option<PathBuf>,
    cert_file: Option<PathBuf>,
    key_file: Option<PathBuf>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCoalesce {
    enabled: Option<bool>,
    max_batch: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    defaults: RawSettings,
    #[serde(default)]
    devices: BTreeMap<String, RawSettings>,
    #[serde(default)]
    callers: BTreeMap<String, RawCaller>,
    #[serde(default)]
    lock: RawLock,
    #[serde(default)]
    coalesce: RawCoalesce,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCaller {
    #[serde(default)]
    devices: Vec<String>,
    allowed_vlans: Option<VlanSet>,
}

/// Every key a `[defaults]` or `[devices.X]` table may hold. Global-only keys are refused
/// in device tables by [`Config::parse`].
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSettings {
    // global only
    lock_dir: Option<PathBuf>,
    audit_log: Option<PathBuf>,
    plugins_dir: Option<PathBuf>,
    // per device
    platform: Option<String>,
    transport: Option<String>,
    argv: Option<Vec<String>>,
    address: Option<String>,
    port: Option<u16>,
    username: Option<String>,
    password_file: Option<PathBuf>,
    key_file: Option<PathBuf>,
    passphrase_file: Option<PathBuf>,
    enable_secret_file: Option<PathBuf>,
    host_key: Option<String>,
    known_hosts: Option<PathBuf>,
    proxy_jump: Option<String>,
    proxy_jump_host_key: Option<String>,
    mac: Option<String>,
    aliases: Option<Vec<String>>,
    default_vlan: Option<Vlan>,
    save_config: Option<bool>,
    manage_vlans: Option<bool>,
    shut_unused_ports: Option<bool>,
    max_sessions: Option<u32>,
    lock_timeout: Option<f64>,
    connect_timeout: Option<f64>,
    auth_timeout: Option<f64>,
    command_timeout: Option<f64>,
    request_timeout: Option<f64>,
    allowed_vlans: Option<VlanSet>,
    denied_vlans: Option<VlanSet>,
    allowed_ports: Option<Vec<String>>,
    denied_ports: Option<Vec<String>>,
    ovs_db: Option<String>,
    ovs_vsctl: Option<Vec<String>>,
    bridge: Option<String>,
}

macro_rules! merge_fields {
    ($dev:expr, $def:expr, $($f:ident),* $(,)?) => {
        RawSettings { $($f: $dev.$f.or_else(|| $def.$f.clone()),)* }
    };
}

impl RawSettings {
    /// Per-device keys override `[defaults]`.
    fn over(self, d: &RawSettings) -> RawSettings {
        merge_fields!(
            self,
            d,
            lock_dir,
            audit_log,
            plugins_dir,
            platform,
            transport,
            argv,
            address,
            port,
            username,
            password_file,
            key_file,
            passphrase_file,
            enable_secret_file,
            host_key,
            known_hosts,
            proxy_jump,
            proxy_jump_host_key,
            mac,
            aliases,
            default_vlan,
            save_config,
            manage_vlans,
            shut_unused_ports,
            max_sessions,
            lock_timeout,
            connect_timeout,
            auth_timeout,
            command_timeout,
            request_timeout,
            allowed_vlans,
            denied_vlans,
            allowed_ports,
            denied_ports,
            ovs_db,
            ovs_vsctl,
            bridge,
        )
    }
}

impl Config {
    /// Reads, permission-checks and parses the configuration file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        check_config_mode(path)?;
        Config::parse(path, &text)
    }

    /// Parses configuration text; `path` names it in messages and anchors relative paths.
    pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
        let raw: RawFile = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string().trim_end().to_string(),
        })?;
        let base = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let invalid = |key: String, message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            key,
            message,
        };
        let resolve = |p: &Path| {
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                base.join(p)
            }
        };

        let defaults = raw.defaults;
        let mut devices = BTreeMap::new();
        for (name, dev) in raw.devices {
            let key = format!("devices.{name}");
            validate::simple_name("device name", &name, 64)
                .map_err(|e| invalid(key.clone(), e.0))?;
            for (set, global) in [
                (dev.lock_dir.is_some(), "lock_dir"),
                (dev.audit_log.is_some(), "audit_log"),
                (dev.plugins_dir.is_some(), "plugins_dir"),
            ] {
                if set {
                    return Err(invalid(
                        format!("{key}.{global}"),
                        "this key belongs in [defaults]".into(),
                    ));
                }
            }
            let device = build_device(&name, dev.over(&defaults), &base, &resolve)
                .map_err(|(k, m)| invalid(format!("{key}.{k}"), m))?;
            devices.insert(name, device);
        }
        check_unique_names(&devices).map_err(|(k, m)| invalid(k, m))?;

        let mut callers = BTreeMap::new();
        for (name, c) in raw.callers {
            let key = format!("callers.{name}");
            validate::simple_name("caller name", &name, 64)
                .map_err(|e| invalid(key.clone(), e.0))?;
            for d in &c.devices {
                if !devices.contains_key(d) {
                    return Err(invalid(
                        format!("{key}.devices"),
                        format!("unknown device {}", validate::Escaped(d)),
                    ));
                }
            }
            callers.insert(
                name.clone(),
                Caller {
                    name,
                    devices: c.devices,
                    allowed_vlans: c.allowed_vlans,
                },
            );
        }

        let lock =
            build_lock(raw.lock, &resolve).map_err(|(k, m)| invalid(format!("lock.{k}"), m))?;
        let coalesce = CoalesceSettings {
            enabled: raw.coalesce.enabled.unwrap_or(true),
            max_batch: match raw.coalesce.max_batch.unwrap_or(64) {
                n @ 0..=1024 => n,
                n => {
                    return Err(invalid(
                        "coalesce.max_batch".into(),
                        format!("{n} is not 0-1024"),
                    ))
                }
            },
        };

        Ok(Config {
            path: path.to_path_buf(),
            lock_dir: resolve(
                defaults
                    .lock_dir
                    .as_deref()
                    .unwrap_or(Path::new(DEFAULT_LOCK_DIR)),
            ),
            audit_log: resolve(
                defaults
                    .audit_log
                    .as_deref()
                    .unwrap_or(Path::new(DEFAULT_AUDIT_LOG)),
            ),
            plugins_dir: resolve(
                defaults
                    .plugins_dir
                    .as_deref()
                    .unwrap_or(Path::new("plugins.d")),
            ),
            devices,
            callers,
            lock,
            coalesce,
        })
    }

    /// Finds a device by config name, alias or chassis MAC (`switch_id`).
    pub fn find_device(&self, reference: &str) -> Option<&Device> {
        if let Some(d) = self.devices.get(reference) {
            return Some(d);
        }
        if let Some(d) = self
            .devices
            .values()
            .find(|d| d.aliases.iter().any(|a| a == reference))
        {
            return Some(d);
        }
        let mac = validate::mac("switch_id", reference).ok()?;
        self.devices
            .values()
            .find(|d| d.mac.as_deref() == Some(mac.as_str()))
    }
}

type KeyError = (String, String);

fn build_lock(r: RawLock, resolve: &dyn Fn(&Path) -> PathBuf) -> Result<LockSettings, KeyError> {
    let err = |k: &str, m: String| (k.to_string(), m);
    let backend = r.backend.as_deref().unwrap_or("file");
    if backend == "file" {
        let etcd_keys = [
            ("endpoints", r.endpoints.is_some()),
            ("prefix", r.prefix.is_some()),
            ("lease_ttl", r.lease_ttl.is_some()),
            ("request_timeout", r.request_timeout.is_some()),
            ("credentials_file", r.credentials_file.is_some()),
            ("host", r.host.is_some()),
        ];
        if let Some((k, _)) = etcd_keys.iter().find(|(_, set)| *set) {
            return Err(err(k, "only used with backend = \"etcd\"".into()));
        }
        return Ok(LockSettings::File);
    }
    if backend != "etcd" {
        return Err(err(
            "backend",
            format!(
                "unknown lock backend {} (file, etcd)",
                validate::Escaped(backend)
            ),
        ));
    }
    for (k, set) in [
        ("ca_file", r.ca_file.is_some()),
        ("cert_file", r.cert_file.is_some()),
        ("key_file", r.key_file.is_some()),
    ] {
        if set {
            return Err(err(
                k,
                "TLS to etcd is not built in yet: point endpoints at a local TLS-terminating \
                 proxy on 127.0.0.1 (docs/scale.md)"
                    .into(),
            ));
        }
    }
    let raw_endpoints = r.endpoints.unwrap_or_default();
    if raw_endpoints.is_empty() {
        return Err(err(
            "endpoints",
            "missing: backend etcd needs endpoints = [\"http://127.0.0.1:2379\"]".into(),
        ));
    }
    let mut endpoints = Vec::new();
    for e in &raw_endpoints {
        endpoints.push(parse_endpoint(e).map_err(|m| err("endpoints", m))?);
    }
    let prefix = r.prefix.unwrap_or_else(|| "mercury/locks".into());
    if prefix.is_empty()
        || prefix.len() > 200
        || prefix.chars().any(|c| c.is_control() || c.is_whitespace())
    {
        return Err(err(
            "prefix",
            format!("invalid key prefix {}", validate::Escaped(&prefix)),
        ));
    }
    let lease_ttl = r.lease_ttl.unwrap_or(10);
    if !(2..=3600).contains(&lease_ttl) {
        return Err(err(
            "lease_ttl",
            format!("{lease_ttl} is not a number of seconds between 2 and 3600"),
        ));
    }
    let request_timeout = r.request_timeout.unwrap_or(5.0);
    if !(request_timeout.is_finite() && (0.1..=600.0).contains(&request_timeout)) {
        return Err(err(
            "request_timeout",
            format!("{request_timeout} is not a number of seconds between 0.1 and 600"),
        ));
    }
    let host = match r.host {
        Some(h) => {
            validate::simple_name("host", &h, 128).map_err(|e| err("host", e.0))?;
            h
        }
        None => fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .ok()
            .filter(|h| validate::simple_name("host", h, 128).is_ok())
            .unwrap_or_else(|| "unknown-host".into()),
    };
    Ok(LockSettings::Etcd(EtcdSettings {
        endpoints,
        prefix: prefix.trim_end_matches('/').to_string(),
        lease_ttl: Duration::from_secs(lease_ttl),
        request_timeout: Duration::from_secs_f64(request_timeout),
        credentials_file: r.credentials_file.as_deref().map(resolve),
        host,
    }))
}

fn parse_endpoint(text: &str) -> Result<EtcdEndpoint, String> {
    if text.starts_with("https://") {
        return Err(format!(
            "{}: TLS to etcd is not built in yet; use a local TLS-terminating proxy and an \
             http:// endpoint on 127.0.0.1 (docs/scale.md)",
            validate::Escaped(text)
        ));
    }
    let rest = text
        .strip_prefix("http://")
        .ok_or_else(|| format!("{}: expected http://host:port", validate::Escaped(text)))?
        .trim_end_matches('/');
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() => (
            h.trim_start_matches('[').trim_end_matches(']'),
            p.parse::<u16>()
                .map_err(|_| format!("{}: bad port", validate::Escaped(text)))?,
        ),
        _ => (rest, 2379),
    };
    if host.is_empty()
        || !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':'))
    {
        return Err(format!("{}: bad host", validate::Escaped(text)));
    }
    Ok(EtcdEndpoint {
        host: host.to_string(),
        port,
    })
}

fn build_device(
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
        other => {
            return Err(err(
                "transport",
                format!(
                    "unknown transport {} (ssh, command, local)",
                    validate::Escaped(other)
                ),
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
        .map_err(|e| err("mac", e.0))?;
    let aliases = r.aliases.unwrap_or_default();
    for a in &aliases {
        validate::simple_name("alias", a, 128).map_err(|e| err("aliases", e.0))?;
    }
    if let Some(b) = &r.bridge {
        validate::simple_name("bridge", b, 15).map_err(|e| err("bridge", e.0))?;
    }
    if let Some(db) = &r.ovs_db {
        crate::ovs::check_db(db).map_err(|m| err("ovs_db", m))?;
    }
    if let Some(argv) = &r.ovs_vsctl {
        crate::ovs::check_vsctl(argv).map_err(|m| err("ovs_vsctl", m))?;
    }
    for (k, globs) in [
        ("allowed_ports", &r.allowed_ports),
        ("denied_ports", &r.denied_ports),
    ] {
        for g in globs.iter().flatten() {
            if g.is_empty() || g.chars().any(validate::is_dangerous) {
                return Err(err(
                    k,
                    format!("invalid port pattern {}", validate::Escaped(g)),
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
                format!("{v} is not a number of seconds between 0 and 86400"),
            ))
        }
    };
    let max_sessions = r.max_sessions.unwrap_or(1);
    if !(1..=64).contains(&max_sessions) {
        return Err(err("max_sessions", format!("{max_sessions} is not 1-64")));
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
        bridge: r.bridge,
    })
}

/// Names, aliases and MACs must each identify exactly one device.
fn check_unique_names(devices: &BTreeMap<String, Device>) -> Result<(), KeyError> {
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    for d in devices.values() {
        let ids = std::iter::once(d.name.clone())
            .chain(d.aliases.iter().cloned())
            .chain(d.mac.iter().cloned());
        for id in ids {
            if let Some(other) = seen.insert(id.clone(), &d.name) {
                if other != d.name {
                    return Err((
                        format!("devices.{}", d.name),
                        format!("name, alias or mac {id:?} is also used by devices.{other}"),
                    ));
                }
            }
        }
    }
    Ok(())
}

impl Device {
    /// Every secret file this device names, with its key.
    pub fn secret_files(&self) -> Vec<(&'static str, &Path)> {
        [
            ("password_file", &self.password_file),
            ("key_file", &self.key_file),
            ("passphrase_file", &self.passphrase_file),
            ("enable_secret_file", &self.enable_secret_file),
        ]
        .into_iter()
        .filter_map(|(k, p)| p.as_deref().map(|p| (k, p)))
        .collect()
    }

    /// Checks that no secret file can be read or written by group or others.
    pub fn check_secret_modes(&self) -> Result<(), ConfigError> {
        for (_, path) in self.secret_files() {
            check_secret_mode(path)?;
        }
        Ok(())
    }

    /// Reads a one-line secret (password, passphrase, enable secret) after the mode check.
    /// The trailing newline is removed; the value is never logged.
    pub fn read_secret(path: &Path) -> Result<String, ConfigError> {
        check_secret_mode(path)?;
        let text = fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(text.trim_end_matches(['\r', '\n']).to_string())
    }
}

/// Refuses a secret readable or writable by group or others (OpenSSH's rule for keys).
pub fn check_secret_mode(path: &Path) -> Result<(), ConfigError> {
    let meta = fs::metadata(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mode = meta.mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(ConfigError::UnsafeMode {
            path: path.to_path_buf(),
            mode,
            why: "group or others can access a secret",
            fix: "chmod 600 it",
        });
    }
    Ok(())
}

/// Refuses a config file that group or others can write (they could add devices or lift
/// policy), like sshd's StrictModes.
pub fn check_config_mode(path: &Path) -> Result<(), ConfigError> {
    let meta = fs::metadata(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mode = meta.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(ConfigError::UnsafeMode {
            path: path.to_path_buf(),
            mode,
            why: "group or others can change the configuration",
            fix: "chmod go-w it",
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(Path::new("/etc/mercury/mercury.toml"), text)
    }

    #[test]
    fn defaults_merge_and_device_overrides() {
        let c = parse(
            r#"
            [defaults]
            lock_dir = "locks"
            default_vlan = 10
            save_config = false
            allowed_vlans = ["100-199"]
            [devices.leaf-1]
            platform = "cisco_ios"
            address = "192.0.2.10"
            save_config = true
            mac = "AA:BB:CC:DD:EE:01"
            aliases = ["leaf-1.dc1"]
            "#,
        )
        .unwrap();
        let d = &c.devices["leaf-1"];
        assert_eq!(c.lock_dir, Path::new("/etc/mercury/locks"));
        assert_eq!(d.default_vlan.map(Vlan::get), Some(10));
        assert!(d.save_config);
        assert_eq!(d.allowed_vlans.as_ref().map(|s| s.len()), Some(100));
        assert_eq!(
            c.find_device("aa-bb-cc-dd-ee-01").map(|d| d.name.as_str()),
            Some("leaf-1")
        );
        assert_eq!(
            c.find_device("leaf-1.dc1").map(|d| d.name.as_str()),
            Some("leaf-1")
        );
        assert!(c.find_device("leaf-2").is_none());
    }

    #[test]
    fn errors_name_key_and_line() {
        let e = parse("[devices.a]\nplatform = \"x\"\naddress = \"h\"\nbogus = 1\n").unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("line 4") && msg.contains("bogus"), "{msg}");
        let e =
            parse("[devices.a]\nplatform = \"x\"\naddress = \"h\"\nallowed_vlans = [\"1-5000\"]\n")
                .unwrap_err()
                .to_string();
        assert!(e.contains("line 4") && e.contains("out of range"), "{e}");
        let e = parse("[devices.a]\nplatform = \"x\"\nlock_dir = \"/tmp\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("devices.a.lock_dir"), "{e}");
        let e = parse("[devices.a]\nplatform = \"x\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("devices.a.address"), "{e}");
    }

    #[test]
    fn duplicate_aliases_are_refused() {
        let e = parse(
            "[devices.a]\nplatform = \"x\"\ntransport = \"local\"\naliases = [\"b\"]\n\
             [devices.b]\nplatform = \"x\"\ntransport = \"local\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("also used"), "{e}");
    }

    #[test]
    fn command_transport_expands_config_dir() {
        let c = parse(
            "[devices.s]\nplatform = \"x\"\ntransport = \"command\"\nargv = [\"sim\", \"{config_dir}/s.json\"]\n",
        )
        .unwrap();
        assert_eq!(
            c.devices["s"].transport,
            TransportKind::Command {
                argv: vec!["sim".into(), "/etc/mercury/s.json".into()]
            }
        );
    }

    #[test]
    fn lock_and_coalesce_tables() {
        let c = parse("").unwrap();
        assert_eq!(c.lock, LockSettings::File);
        assert_eq!(c.coalesce, CoalesceSettings::default());
        let c = parse(
            "[lock]\nbackend = \"etcd\"\nendpoints = [\"http://127.0.0.1:2379\", \"http://etcd-2\"]\n\
             lease_ttl = 5\nhost = \"exec-a\"\ncredentials_file = \"etcd.cred\"\n\
             [coalesce]\nenabled = false\nmax_batch = 8\n",
        )
        .unwrap();
        let LockSettings::Etcd(e) = &c.lock else {
            panic!("{:?}", c.lock)
        };
        assert_eq!(e.endpoints[0].to_string(), "http://127.0.0.1:2379");
        assert_eq!(e.endpoints[1].port, 2379);
        assert_eq!(e.lease_ttl, Duration::from_secs(5));
        assert_eq!(e.prefix, "mercury/locks");
        assert_eq!(
            e.credentials_file.as_deref(),
            Some(Path::new("/etc/mercury/etcd.cred"))
        );
        assert!(!c.coalesce.enabled);
        for (text, key) in [
            ("[lock]\nbackend = \"zk\"\n", "lock.backend"),
            ("[lock]\nendpoints = [\"http://h:1\"]\n", "lock.endpoints"),
            ("[lock]\nbackend = \"etcd\"\n", "lock.endpoints"),
            (
                "[lock]\nbackend = \"etcd\"\nendpoints = [\"https://h:2379\"]\n",
                "lock.endpoints",
            ),
            (
                "[lock]\nbackend = \"etcd\"\nendpoints = [\"http://h\"]\nca_file = \"ca.pem\"\n",
                "lock.ca_file",
            ),
            (
                "[lock]\nbackend = \"etcd\"\nendpoints = [\"http://h\"]\nlease_ttl = 1\n",
                "lock.lease_ttl",
            ),
            ("[coalesce]\nmax_batch = 5000\n", "coalesce.max_batch"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(key), "{text}: {e}");
        }
    }

    #[test]
    fn ssh_keys_are_checked_when_parsed() {
        let dev = |extra: &str| {
            parse(&format!(
                "[devices.a]\nplatform = \"x\"\naddress = \"h\"\n{extra}\n"
            ))
        };
        let fp = "SHA256:BVxl72jCAdocpUhiumAXcRl5g6y858UL9mVJqExf/V4";
        let c = dev(&format!(
            "host_key = \"{fp}\"\nproxy_jump = \"ops@bastion.dc1:2222\"\nproxy_jump_host_key = \"{fp}\"\nauth_timeout = 3"
        ))
        .unwrap();
        let d = &c.devices["a"];
        assert_eq!(
            d.proxy_jump,
            Some(JumpHost {
                user: Some("ops".into()),
                host: "bastion.dc1".into(),
                port: 2222
            })
        );
        assert_eq!(d.auth_timeout, Duration::from_secs(3));
        for (extra, key) in [
            ("host_key = \"SHA256:short\"", "devices.a.host_key"),
            ("host_key = \"md5:aa:bb\"", "devices.a.host_key"),
            ("host_key = \"trust-on-first-use\"", "devices.a.host_key"),
            ("proxy_jump = \"a b\"", "devices.a.proxy_jump"),
            ("proxy_jump = \"b:99999\"", "devices.a.proxy_jump"),
            (
                "proxy_jump_host_key = \"trust-on-first-use\"",
                "devices.a.proxy_jump_host_key",
            ),
        ] {
            let e = dev(extra).unwrap_err().to_string();
            assert!(e.contains(key), "{extra}: {e}");
        }
        // Trust on first use needs the file to write the key to.
        assert!(dev("host_key = \"trust-on-first-use\"\nknown_hosts = \"kh\"").is_ok());
    }

    #[test]
    fn jump_host_forms() {
        let j = |s: &str| JumpHost::parse(s);
        assert_eq!(
            j("bastion").unwrap(),
            JumpHost {
                user: None,
                host: "bastion".into(),
                port: 22
            }
        );
        assert_eq!(j("[2001:db8::1]:2200").unwrap().host, "2001:db8::1");
        assert_eq!(j("[2001:db8::1]:2200").unwrap().port, 2200);
        assert_eq!(j("u@[::1]").unwrap().user.as_deref(), Some("u"));
        for bad in ["", "@h", "h:", "h:0", "a,b", "h/x", "u@", "[::1"] {
            assert!(j(bad).is_err(), "{bad:?}");
        }
    }
}
