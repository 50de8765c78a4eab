//! `mercury.toml`: devices, credentials (as file paths), policy and callers.
//!
//! This module owns loading and checking the local configuration, including the OpenSSH-style
//! file-trust checks (`trust`) on the config, secrets, known_hosts and the directories
//! Mercury writes in. It never reads a secret's contents except through [`Secrets`] and
//! [`read_secret`], and no error message it makes repeats a configuration value: messages
//! name the file, the line and the key (`diag`). Policy *decisions* live in `policy`; this
//! module only parses the policy keys.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

mod device;
mod diag;
mod files;
mod jump;
mod lock;
pub mod trust;

use device::{build_device, check_unique_names, check_uplinks};
pub use device::{check_host_key, Device, TransportKind, Uplink, TRUST_ON_FIRST_USE};
pub use files::{check_config_mode, check_secret_mode, read_secret, Secrets};
pub use jump::JumpHost;
use lock::{build_lock, RawCoalesce, RawLock};
pub use lock::{CoalesceSettings, EtcdEndpoint, EtcdSettings, EtcdTls, LockSettings};
pub use trust::Role;

use crate::request::validate;
use crate::request::vlan::{Vlan, VlanSet};

/// Where the configuration is looked for when neither `--config` nor `MERCURY_CONFIG` is set.
pub const DEFAULT_PATH: &str = "/etc/mercury/mercury.toml";
const DEFAULT_LOCK_DIR: &str = "/run/mercury/locks";
const DEFAULT_AUDIT_LOG: &str = "/var/log/mercury/audit.log";
const DEFAULT_SYSLOG_SOCKET: &str = "/dev/log";

/// A configuration problem; always exit 78. Messages name the file, the line (where it is
/// known) and the key, never the value.
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
    /// TOML syntax or an unknown / mistyped key: line, column, key and what was expected.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The message, without the offending value.
        message: String,
    },
    /// A key whose value is wrong in a way only Mercury can tell.
    #[error("{path}: {}{key}: {message}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The line the key is on, when it is in the file (not inherited from `[defaults]`).
        line: Option<usize>,
        /// Dotted key, e.g. `devices.leaf-1.platform`.
        key: String,
        /// What is wrong (never the value).
        message: String,
    },
    /// A file or directory Mercury may not trust (owner, permissions, a link where none may
    /// be); see [`trust`].
    #[error("{path}: not trusted for {what}: {problem}; {fix}")]
    Untrusted {
        /// The file or directory at fault.
        path: PathBuf,
        /// What it was to be trusted for.
        what: &'static str,
        /// What is wrong with it.
        problem: String,
        /// The remedy.
        fix: String,
    },
    /// A secret file that is not one line (its contents are never shown).
    #[error("{path}: {problem}")]
    Secret {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: &'static str,
    },
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
    /// VLANs a change of its may take off a port (`None`: those it may use). Wider than
    /// `allowed_vlans` so that tear-down still works after the network team narrows it.
    pub remove_vlans: Option<VlanSet>,
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
    /// `audit_syslog = true`: every audit record is also sent to syslog / journald through
    /// this socket (`audit_syslog_socket`, default `/dev/log`).
    pub audit_syslog: Option<PathBuf>,
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
    /// `[networks.NAME]`: network names a request may give instead of a VLAN id (an Ironic
    /// VIF id such as `tenant-a`), each naming exactly one VLAN.
    pub networks: BTreeMap<String, Network>,
}

/// A named network (`[networks.tenant-a] vlan = 120`): the network team's name for one VLAN,
/// so that callers (Ironic VIF ids) use names, not numbers. The VLAN id is what policy
/// checks; the name never selects anything else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Network {
    /// Its name (the table key).
    pub name: String,
    /// The VLAN it is.
    pub vlan: Vlan,
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
    #[serde(default)]
    networks: BTreeMap<String, RawNetwork>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNetwork {
    vlan: Vlan,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCaller {
    #[serde(default)]
    devices: Vec<String>,
    allowed_vlans: Option<VlanSet>,
    remove_vlans: Option<VlanSet>,
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
    audit_syslog: Option<bool>,
    audit_syslog_socket: Option<PathBuf>,
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
    options: Option<BTreeMap<String, toml::Value>>,
    bridges: Option<Vec<String>>,
    flat_ports: Option<Vec<String>>,
    verify: Option<bool>,
    remove_vlans: Option<VlanSet>,
    uplink: Option<RawUplink>,
}

/// `uplink = { device = "leaf-1", port = "Ethernet1/5" }` of an OVS device (a DPU).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUplink {
    device: String,
    port: String,
}

macro_rules! merge_fields {
    ($dev:expr, $def:expr, $($f:ident),* $(,)?) => {
        RawSettings { $($f: $dev.$f.or_else(|| $def.$f.clone()),)* options: None }
    };
}

impl RawSettings {
    /// Per-device keys override `[defaults]`; `options` are merged key by key.
    fn over(self, d: &RawSettings) -> RawSettings {
        let mut options = d.options.clone().unwrap_or_default();
        options.extend(self.options.clone().unwrap_or_default());
        let mut merged = merge_fields!(
            self,
            d,
            lock_dir,
            audit_log,
            plugins_dir,
            audit_syslog,
            audit_syslog_socket,
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
            bridges,
            flat_ports,
            verify,
            remove_vlans,
            uplink,
        );
        merged.options = (!options.is_empty()).then_some(options);
        merged
    }
}

impl Config {
    /// Trust-checks ([`trust`]), reads and parses the configuration file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        check_config_mode(path)?;
        let text = fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Config::parse(path, &text)
    }

    /// Parses configuration text; `path` names it in messages and anchors relative paths.
    pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
        let source = diag::Source::new(text);
        let raw: RawFile = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: source.describe(&e),
        })?;
        let base = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        // A message about `devices.NAME.KEY` (or a `[defaults]` value it inherited) with
        // its line, and without any word of the value.
        let invalid = |key: &[&str], message: String| {
            let inherited = match key {
                ["devices", _, k] => Some(["defaults", *k]),
                _ => None,
            };
            let at = source
                .value_text(key)
                .map(|v| (key.to_vec(), v))
                .or_else(|| inherited.and_then(|d| source.value_text(&d).map(|v| (d.to_vec(), v))));
            let (line, shown, message) = match at {
                Some((k, value)) if k != key => (
                    source.line_of(&k),
                    format!("{} (inherited by {})", k.join("."), key[..2].join(".")),
                    diag::redact(&message, value),
                ),
                Some((k, value)) => (
                    source.line_of(&k),
                    key.join("."),
                    diag::redact(&message, value),
                ),
                None => (source.line_of(key), key.join("."), message),
            };
            ConfigError::Invalid {
                path: path.to_path_buf(),
                line,
                key: shown,
                message,
            }
        };
        let resolve = |p: &Path| {
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                base.join(p)
            }
        };

        let defaults = raw.defaults;
        if defaults.uplink.is_some() {
            return Err(invalid(
                &["defaults", "uplink"],
                "an uplink names one DPU's switch port: it belongs in that device's table".into(),
            ));
        }
        let mut devices = BTreeMap::new();
        for (name, dev) in raw.devices {
            validate::simple_name("device name", &name, 64)
                .map_err(|e| invalid(&["devices", &name], e.0))?;
            for (set, global) in [
                (dev.lock_dir.is_some(), "lock_dir"),
                (dev.audit_log.is_some(), "audit_log"),
                (dev.plugins_dir.is_some(), "plugins_dir"),
                (dev.audit_syslog.is_some(), "audit_syslog"),
                (dev.audit_syslog_socket.is_some(), "audit_syslog_socket"),
            ] {
                if set {
                    return Err(invalid(
                        &["devices", &name, global],
                        "this key belongs in [defaults]".into(),
                    ));
                }
            }
            let device = build_device(&name, dev.over(&defaults), &base, &resolve)
                .map_err(|(k, m)| invalid(&["devices", &name, &k], m))?;
            devices.insert(name, device);
        }
        check_unique_names(&devices).map_err(|(name, k, m)| invalid(&["devices", &name, k], m))?;
        check_uplinks(&devices)
            .map_err(|(name, m)| invalid(&["devices", &name, "uplink", "device"], m))?;

        let mut callers = BTreeMap::new();
        for (name, c) in raw.callers {
            validate::simple_name("caller name", &name, 64)
                .map_err(|e| invalid(&["callers", &name], e.0))?;
            if let Some(i) = c.devices.iter().position(|d| !devices.contains_key(d)) {
                return Err(invalid(
                    &["callers", &name, "devices"],
                    format!("item {} names no [devices] table", i + 1),
                ));
            }
            callers.insert(
                name.clone(),
                Caller {
                    name,
                    devices: c.devices,
                    allowed_vlans: c.allowed_vlans,
                    remove_vlans: c.remove_vlans,
                },
            );
        }

        let lock = build_lock(raw.lock, &resolve).map_err(|(k, m)| invalid(&["lock", &k], m))?;
        let coalesce = CoalesceSettings {
            enabled: raw.coalesce.enabled.unwrap_or(true),
            max_batch: match raw
                .coalesce
                .max_batch
                .unwrap_or(CoalesceSettings::default().max_batch)
            {
                n @ 0..=1024 => n,
                _ => return Err(invalid(&["coalesce", "max_batch"], "must be 0-1024".into())),
            },
        };

        let mut networks = BTreeMap::new();
        for (name, n) in raw.networks {
            validate::simple_name("network name", &name, 64)
                .map_err(|e| invalid(&["networks", &name], e.0))?;
            networks.insert(name.clone(), Network { name, vlan: n.vlan });
        }

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
            audit_syslog: defaults.audit_syslog.unwrap_or(false).then(|| {
                resolve(
                    defaults
                        .audit_syslog_socket
                        .as_deref()
                        .unwrap_or(Path::new(DEFAULT_SYSLOG_SOCKET)),
                )
            }),
            devices,
            callers,
            lock,
            coalesce,
            networks,
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

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
    fn an_inline_password_points_at_password_file_and_is_never_repeated() {
        for (key, instead) in [
            ("password", "password_file"),
            ("secret", "enable_secret_file"),
            ("passphrase", "passphrase_file"),
        ] {
            let text = format!(
                "[defaults]\nlock_dir = \"l\"\n\n[devices.leaf-1]\nplatform = \"cisco_ios\"\n{key} = \"hunter2-XYZ\"\n"
            );
            let e = parse(&text).unwrap_err().to_string();
            assert!(!e.contains("hunter2"), "{e}");
            assert!(e.contains(instead), "{e}");
            assert!(e.contains(&format!("devices.leaf-1.{key}")), "{e}");
            assert!(e.contains("line 6"), "{e}");
        }
        // No error message quotes the source line (it could hold a secret).
        let e = parse(
            "[devices.a]\nplatform = \"x\"\nport = \"22 s3cr3t\"\naddress = \"h\" junk s3cr3t\n",
        )
        .unwrap_err()
        .to_string();
        assert!(!e.contains("junk") && e.contains("line 4"), "{e}");
    }

    #[test]
    fn an_unknown_key_gets_the_closest_known_one() {
        let e = parse("[devices.a]\nplatform = \"x\"\nalowed_vlans = [\"1\"]\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("did you mean allowed_vlans?") && e.contains("line 3"),
            "{e}"
        );
        let e = parse("[defualts]\n").unwrap_err().to_string();
        assert!(e.contains("did you mean defaults?"), "{e}");
        let e = parse("[devices.a]\nplatform = \"x\"\nzzzzzz = 1\n")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("did you mean"), "{e}");
    }

    #[test]
    fn inherited_values_are_named_where_they_are_written_and_never_shown() {
        let e = parse(
            "[defaults]\nhost_key = \"hunter2\"\n[devices.a]\nplatform = \"x\"\naddress = \"h\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("line 2: defaults.host_key (inherited by devices.a)"),
            "{e}"
        );
        assert!(!e.contains("hunter2"), "{e}");
        let e = parse("[devices.a]\nplatform = \"x\"\ntransport = \"hunter2\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 3: devices.a.transport: unknown transport"),
            "{e}"
        );
        assert!(!e.contains("hunter2"), "{e}");
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
        let c = parse(
            "[lock]\nbackend = \"etcd\"\nendpoints = [\"https://etcd-1:2379\", \"http://[::1]:2379\"]\nca_file = \"/etc/mercury/ca.pem\"\ncert_file = \"/etc/mercury/c.pem\"\nkey_file = \"/etc/mercury/c.key\"\n",
        )
        .unwrap();
        let LockSettings::Etcd(e) = c.lock else {
            panic!("{:?}", c.lock)
        };
        assert_eq!(e.endpoints[0].url(), "https://etcd-1:2379");
        assert_eq!(e.endpoints[1].url(), "http://[::1]:2379");
        let tls = e.tls.unwrap();
        assert_eq!(tls.ca_file, Path::new("/etc/mercury/ca.pem"));
        assert_eq!(
            tls.client,
            Some((
                PathBuf::from("/etc/mercury/c.pem"),
                PathBuf::from("/etc/mercury/c.key")
            ))
        );
        for (text, key) in [
            ("[lock]\nbackend = \"zk\"\n", "lock.backend"),
            ("[lock]\nendpoints = [\"http://h:1\"]\n", "lock.endpoints"),
            ("[lock]\nbackend = \"etcd\"\n", "lock.endpoints"),
            (
                "[lock]\nbackend = \"etcd\"\nendpoints = [\"https://h:2379\"]\n",
                "lock.ca_file",
            ),
            (
                "[lock]\nbackend = \"etcd\"\nendpoints = [\"https://h\"]\nca_file = \"ca.pem\"\ncert_file = \"c.pem\"\n",
                "lock.key_file",
            ),
            (
                "[lock]\nbackend = \"etcd\"\nendpoints = [\"ftp://h\"]\n",
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
