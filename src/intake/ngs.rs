//! `mercury import-ngs`: networking-generic-switch's switch sections become a `mercury.toml`.
//!
//! NGS keeps one `[genericswitch:NAME]` section per switch in its ML2 config files (oslo.config
//! INI: `key = value` or `key: value`, `#`/`;` comments, indented continuation lines, a
//! value wrapped in matching quotes loses them; a later file's section replaces an earlier
//! one whole, and within a section the first value of a repeated key wins). This module
//! reads those files, maps every key it knows to Mercury's (NGS's own semantics, from its
//! `devices/__init__.py` and configuration guide), and says which keys have no equivalent.
//!
//! What it must never do: put a secret in `mercury.toml`, in its result or in a message.
//! Passwords and enable secrets go into one file each under `secrets/` (mode 0600, the
//! directory 0700); `mercury.toml` names them with `password_file` / `enable_secret_file`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::catalog::Catalog;
use crate::request::validate;
use crate::request::vlan::Vlan;

/// One INI section: its name and its `(key, value, line)` entries in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The name between the brackets.
    pub name: String,
    /// The file the section came from.
    pub file: PathBuf,
    /// The line of its `[header]`.
    pub line: usize,
    /// Keys (lowercased, as oslo.config does not but NGS's keys are) with value and line.
    pub entries: Vec<(String, String, usize)>,
}

impl Section {
    /// The first value of `key` (oslo.config's `v[0]`).
    fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(k, _, _)| k == key)
            .map(|(_, v, _)| v.as_str())
    }
}

/// Parses oslo.config INI text. Errors name the line.
pub fn parse_ini(file: &Path, text: &str) -> Result<Vec<Section>, String> {
    let mut sections: Vec<Section> = Vec::new();
    let mut last_key: Option<usize> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim_end_matches('\r');
        let trimmed = line.trim();
        if trimmed.is_empty() {
            last_key = None;
            continue;
        }
        if trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            // A continuation of the previous value.
            match (sections.last_mut(), last_key) {
                (Some(s), Some(k)) => {
                    if let Some(e) = s.entries.get_mut(k) {
                        e.1.push('\n');
                        e.1.push_str(trimmed);
                    }
                    continue;
                }
                _ => return Err(format!("{}:{n}: unexpected indented line", file.display())),
            }
        }
        if let Some(rest) = trimmed.strip_prefix('[') {
            let Some(name) = rest.strip_suffix(']') else {
                return Err(format!(
                    "{}:{n}: unterminated section header",
                    file.display()
                ));
            };
            sections.push(Section {
                name: name.trim().to_string(),
                file: file.to_path_buf(),
                line: n,
                entries: Vec::new(),
            });
            last_key = None;
            continue;
        }
        let colon = trimmed.find(':');
        let equal = trimmed.find('=');
        let split = match (colon, equal) {
            (None, None) => {
                return Err(format!(
                    "{}:{n}: expected `key = value` or a [section]",
                    file.display()
                ))
            }
            (None, Some(e)) => e,
            (Some(c), None) => c,
            (Some(c), Some(e)) => c.min(e),
        };
        let key = trimmed[..split].trim().to_string();
        let mut value = trimmed[split + 1..].trim().to_string();
        if value.len() >= 2
            && (value.starts_with('"') && value.ends_with('"')
                || value.starts_with('\'') && value.ends_with('\''))
        {
            value = value[1..value.len() - 1].to_string();
        }
        let Some(section) = sections.last_mut() else {
            return Err(format!(
                "{}:{n}: `{}` before any [section]",
                file.display(),
                validate::printable(&key)
            ));
        };
        if key.is_empty() {
            return Err(format!("{}:{n}: empty key", file.display()));
        }
        section.entries.push((key, value, n));
        last_key = Some(section.entries.len() - 1);
    }
    Ok(sections)
}

/// Something in the NGS files that Mercury has no (exact) equivalent for, or that the
/// operator has to finish by hand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Note {
    /// The switch (NGS section name), or `None` for a file-wide note.
    pub device: Option<String>,
    /// The NGS key (`ngs_trunk_ports`), or a section name.
    pub key: String,
    /// `file:line`.
    pub at: String,
    /// What Mercury does instead, or what is left to do.
    pub message: String,
}

/// A secret to write: path relative to the output directory, and the value.
#[derive(Clone)]
pub struct SecretFile {
    /// Relative path (`secrets/leaf-1.password`).
    pub path: PathBuf,
    /// The value (never printed).
    pub value: String,
}

impl std::fmt::Debug for SecretFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretFile({})", self.path.display())
    }
}

/// The result of an import, before anything is written.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The `mercury.toml` text.
    pub toml: String,
    /// Secret files to write (mode 0600).
    pub secrets: Vec<SecretFile>,
    /// Devices imported, by name.
    pub devices: Vec<String>,
    /// Switches that could not be imported.
    pub skipped: Vec<String>,
    /// What had no equivalent, and what is left to do.
    pub notes: Vec<Note>,
}

/// NGS's `strutils.bool_from_string` (non-strict): true for 1/t/true/on/y/yes.
fn ngs_bool(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "1" | "t" | "true" | "on" | "y" | "yes"
    )
}

fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn toml_list<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    let v: Vec<String> = items.into_iter().map(toml_str).collect();
    format!("[{}]", v.join(", "))
}

/// netmiko connection arguments NGS passes through that Mercury has a fixed answer for.
const NETMIKO_PASSTHROUGH: &[(&str, &str)] = &[
    ("use_keys", "implied by key_file"),
    (
        "allow_agent",
        "Mercury never uses an SSH agent: credentials come from files",
    ),
    ("timeout", "use command_timeout"),
    ("conn_timeout", "use connect_timeout"),
    ("auth_timeout", "use auth_timeout"),
    ("banner_timeout", "use connect_timeout"),
    ("session_timeout", "use request_timeout"),
    (
        "global_delay_factor",
        "Mercury waits for prompts, never fixed delays",
    ),
    ("fast_cli", "Mercury waits for prompts, never fixed delays"),
    (
        "session_log",
        "the audit log records every line sent (audit_log)",
    ),
    ("ssh_config_file", "use proxy_jump for a jump host"),
];

/// Maps the `[genericswitch:NAME]` sections of `files` (in order; a later section of the
/// same name replaces an earlier one) and `[ngs_coordination]` to a `mercury.toml`.
pub fn import(files: &[(PathBuf, String)], catalog: &Catalog) -> Result<Imported, String> {
    let mut switches: BTreeMap<String, Section> = BTreeMap::new();
    let mut coordination: Option<Section> = None;
    for (path, text) in files {
        for s in parse_ini(path, text)? {
            if let Some(name) = s.name.strip_prefix("genericswitch:") {
                switches.insert(name.to_string(), s.clone());
            } else if s.name == "ngs_coordination" {
                coordination = Some(s);
            }
        }
    }
    let mut out = Imported {
        toml: String::new(),
        secrets: Vec::new(),
        devices: Vec::new(),
        skipped: Vec::new(),
        notes: Vec::new(),
    };
    let mut t = String::new();
    let sources: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
    let _ = writeln!(
        t,
        "# Imported from networking-generic-switch by `mercury import-ngs` ({}).\n\
         # Secrets are in secrets/ (mode 0600), never in this file. Review, then run\n\
         # `mercury --config THIS_FILE check`.\n",
        sources.join(", ")
    );
    let _ = writeln!(t, "[defaults]");
    let _ = writeln!(t, "lock_dir = \"/run/mercury/locks\"");
    let _ = writeln!(t, "audit_log = \"/var/log/mercury/audit.log\"");
    let _ = writeln!(
        t,
        "# NGS does not check SSH host keys; Mercury always does. Add each switch's key\n\
         # (ssh-keyscan -p PORT ADDRESS, compared out of band) to this file.\n\
         known_hosts = \"known_hosts\""
    );
    let lock = coordination.as_ref().map(|c| map_coordination(c, &mut out));
    if let Some((_, Some(timeout))) = &lock {
        let _ = writeln!(t, "lock_timeout = {timeout}");
    }
    if switches.is_empty() {
        out.notes.push(Note {
            device: None,
            key: "genericswitch".into(),
            at: sources.join(", "),
            message: "no [genericswitch:NAME] section found".into(),
        });
    }
    for (name, s) in &switches {
        match map_switch(name, s, catalog, &mut out) {
            Some(table) => {
                t.push('\n');
                t.push_str(&table);
                out.devices.push(name.clone());
            }
            None => out.skipped.push(name.clone()),
        }
    }
    if let Some((Some(lock_table), _)) = lock {
        t.push('\n');
        t.push_str(&lock_table);
    }
    out.toml = t;
    Ok(out)
}

fn at(s: &Section, key: &str) -> String {
    let line = s
        .entries
        .iter()
        .find(|(k, _, _)| k == key)
        .map(|(_, _, n)| *n)
        .unwrap_or(s.line);
    format!("{}:{line}", s.file.display())
}

/// `[ngs_coordination]`: `backend_url` (tooz) → `[lock]` etcd endpoints, `acquire_timeout`
/// → `lock_timeout`.
fn map_coordination(c: &Section, out: &mut Imported) -> (Option<String>, Option<u64>) {
    let mut table = None;
    let note = |out: &mut Imported, key: &str, message: String| {
        out.notes.push(Note {
            device: None,
            key: format!("ngs_coordination.{key}"),
            at: at(c, key),
            message,
        })
    };
    if let Some(url) = c.get("backend_url") {
        // tooz etcd3gw URLs: etcd3+http://host:port[?options]; never echo the URL (it
        // is a secret option in NGS: it may carry credentials).
        let rest = url
            .strip_prefix("etcd3+http://")
            .or_else(|| url.strip_prefix("etcd3gw://"));
        match rest {
            Some(hostport) if !hostport.contains('@') => {
                let hostport = hostport
                    .split(['?', '/'])
                    .next()
                    .unwrap_or_default()
                    .to_string();
                table = Some(format!(
                    "[lock]\n# NGS [ngs_coordination] backend_url: the same etcd, shared by every executor host.\n\
                     backend = \"etcd\"\nendpoints = [{}]\n",
                    toml_str(&format!("http://{hostport}"))
                ));
                note(
                    out,
                    "backend_url",
                    "mapped to [lock] backend = \"etcd\"; URL options (if any) were not carried over".into(),
                );
            }
            _ => note(
                out,
                "backend_url",
                "not an etcd3+http URL without credentials: set [lock] by hand (plain HTTP \
                 endpoints; credentials_file for user:password; TLS through a local proxy)"
                    .into(),
            ),
        }
    }
    let timeout = c.get("acquire_timeout").and_then(|v| {
        match v.trim().parse::<u64>() {
            Ok(0) => {
                note(
                    out,
                    "acquire_timeout",
                    "0 (wait forever) has no equivalent: Mercury always bounds the wait; lock_timeout left at 60".into(),
                );
                None
            }
            Ok(n) => Some(n),
            Err(_) => {
                note(out, "acquire_timeout", "not a number; ignored".into());
                None
            }
        }
    });
    (table, timeout)
}

/// One switch; `None` (with a note) when it cannot be imported.
fn map_switch(name: &str, s: &Section, catalog: &Catalog, out: &mut Imported) -> Option<String> {
    let note = |out: &mut Imported, key: &str, message: String| {
        out.notes.push(Note {
            device: Some(name.to_string()),
            key: key.to_string(),
            at: at(s, key),
            message,
        })
    };
    if validate::simple_name("device name", name, 64).is_err() {
        note(
            out,
            "section",
            format!(
                "switch name {} is not a Mercury device name (letters, digits, '.', '_', '-'): not imported",
                validate::Escaped(name)
            ),
        );
        return None;
    }
    let device_type = s.get("device_type").unwrap_or_default();
    let platform = match catalog.get(device_type) {
        Ok(p) => p.name.clone(),
        Err(_) => {
            let why = if device_type.starts_with("netconf_") {
                "NETCONF devices are not supported by Mercury (CLI and OVS only)".to_string()
            } else if device_type.is_empty() {
                "no device_type".to_string()
            } else {
                format!(
                    "unknown device_type {} (see `mercury check --catalog --table`)",
                    validate::Escaped(device_type)
                )
            };
            note(out, "device_type", format!("{why}: not imported"));
            return None;
        }
    };
    let mut t = String::new();
    let _ = writeln!(t, "[devices.{name}]");
    let _ = writeln!(t, "# from [genericswitch:{name}] in {}", s.file.display());
    let _ = writeln!(t, "platform = {}", toml_str(&platform));
    let mut manage_vlans_seen = false;
    let mut save_seen = false;
    let mut has_credential = false;
    let mut seen: Vec<&str> = Vec::new();
    for (key, value, _) in &s.entries {
        if seen.contains(&key.as_str()) {
            note(
                out,
                key,
                "repeated in the section: the first value is used, as NGS does".into(),
            );
            continue;
        }
        seen.push(key);
        let v = value.trim();
        match key.as_str() {
            "device_type" => {}
            "ip" | "host" => {
                let _ = writeln!(t, "address = {}", toml_str(v));
            }
            "port" => match v.parse::<u16>() {
                Ok(p) => {
                    let _ = writeln!(t, "port = {p}");
                }
                Err(_) => note(out, key, "not a TCP port; left at 22".into()),
            },
            "username" => {
                let _ = writeln!(t, "username = {}", toml_str(v));
            }
            "password" => {
                let path = PathBuf::from(format!("secrets/{name}.password"));
                let _ = writeln!(
                    t,
                    "password_file = {}",
                    toml_str(&path.display().to_string())
                );
                out.secrets.push(SecretFile {
                    path,
                    value: value.clone(),
                });
                has_credential = true;
            }
            "secret" => {
                let path = PathBuf::from(format!("secrets/{name}.enable"));
                let _ = writeln!(
                    t,
                    "enable_secret_file = {}",
                    toml_str(&path.display().to_string())
                );
                out.secrets.push(SecretFile {
                    path,
                    value: value.clone(),
                });
            }
            "key_file" | "key_filename" => {
                let _ = writeln!(t, "key_file = {}", toml_str(v));
                note(
                    out,
                    key,
                    "kept as a path: Mercury refuses a key file that group or others can read (chmod 600) and that the mercury user cannot read".into(),
                );
                has_credential = true;
            }
            "ngs_mac_address" => match validate::mac("ngs_mac_address", v) {
                Ok(mac) => {
                    let _ = writeln!(t, "mac = {}", toml_str(&mac));
                }
                Err(e) => note(out, key, format!("{}; not imported", e.0)),
            },
            "ngs_allowed_vlans" => {
                // NGS: unset allows every VLAN, an empty string none; otherwise a list of
                // ids compared as text (`str(segmentation_id) in allowed_vlans`).
                let mut ok = Vec::new();
                for item in v.split(',').map(str::trim).filter(|i| !i.is_empty()) {
                    match item.parse::<i64>().ok().and_then(|n| Vlan::new(n).ok()) {
                        Some(vlan) => ok.push(vlan.get().to_string()),
                        None => note(
                            out,
                            key,
                            format!(
                                "{} is not a VLAN id; NGS compares ids as text, so it allowed nothing there; not imported",
                                validate::Escaped(item)
                            ),
                        ),
                    }
                }
                let _ = writeln!(t, "allowed_vlans = {}", toml_list(ok.iter().map(String::as_str)));
            }
            "ngs_allowed_ports" => {
                let ports: Vec<&str> = v.split(',').map(str::trim).filter(|p| !p.is_empty()).collect();
                if ports.iter().any(|p| p.contains(['*', '?'])) {
                    note(out, key, "Mercury reads * and ? in allowed_ports as wildcards; NGS compared names exactly".into());
                }
                let _ = writeln!(t, "allowed_ports = {}", toml_list(ports));
            }
            "ngs_port_default_vlan" => match Vlan::parse(v) {
                Ok(vlan) => {
                    let _ = writeln!(t, "default_vlan = {}", vlan.get());
                }
                Err(e) => note(out, key, format!("{e}; not imported")),
            },
            "ngs_save_configuration" => {
                save_seen = true;
                let _ = writeln!(t, "save_config = {}", ngs_bool(v));
            }
            "ngs_manage_vlans" => {
                manage_vlans_seen = true;
                let _ = writeln!(t, "manage_vlans = {}", ngs_bool(v));
            }
            "ngs_max_connections" => match v.parse::<u32>() {
                Ok(n) if n >= 1 => {
                    let _ = writeln!(t, "max_sessions = {n}");
                }
                _ => note(out, key, "not a positive number; max_sessions left at 1".into()),
            },
            "ngs_disable_inactive_ports" => {
                let _ = writeln!(t, "shut_unused_ports = {}", ngs_bool(v));
            }
            "ngs_ssh_connect_timeout" => match v.parse::<u64>() {
                Ok(n) if n > 0 => {
                    let _ = writeln!(t, "connect_timeout = {n}");
                }
                _ => note(out, key, "not a positive number; ignored".into()),
            },
            "ngs_trunk_ports" => note(
                out,
                key,
                "no equivalent: Mercury's add-network creates the VLAN only; tag uplinks and \
                 port-channels with `attach-port --mode trunk` (or update-port) per VLAN"
                    .into(),
            ),
            "ngs_physical_networks" => note(
                out,
                key,
                "no equivalent: Mercury does not group switches by physical network; scope \
                 conductors with [callers.NAME] devices instead"
                    .into(),
            ),
            "ngs_network_name_format" => note(
                out,
                key,
                "no equivalent: a VLAN's name comes from the request (`add-network --name`, \
                 default vlan<N>)"
                    .into(),
            ),
            "ngs_switchport_mode" if v.eq_ignore_ascii_case("access") => {}
            "ngs_switchport_mode" => note(
                out,
                key,
                format!("{} has no equivalent: Mercury configures access and trunk ports", validate::Escaped(v)),
            ),
            "ngs_ssh_connect_interval" => note(
                out,
                key,
                "no equivalent: Mercury does not retry; exit 69 (unreachable) and 75 (temporary) tell the caller to".into(),
            ),
            "ngs_ssh_reuse_connection" | "ngs_batch_requests" => note(
                out,
                key,
                "no key needed: each request is one session, and requests that find the device busy ride the holder's session ([coalesce], on by default)".into(),
            ),
            "ngs_ssh_disabled_algorithms" => note(
                out,
                key,
                "no equivalent: libssh2 negotiates its own algorithm list".into(),
            ),
            "ngs_security_groups_enabled" => note(
                out,
                key,
                "no equivalent: security groups are not Mercury's job".into(),
            ),
            k if k.starts_with("ngs_netconf") || k.starts_with("ngs_openconfig") || k == "ngs_port_id_re_sub" => {
                note(out, key, "NETCONF option; Mercury has no NETCONF driver".into())
            }
            k if k.starts_with("ngs_") => note(
                out,
                key,
                "no equivalent (NGS driver- or test-specific option); ignored".into(),
            ),
            k => match NETMIKO_PASSTHROUGH.iter().find(|(n, _)| *n == k) {
                Some((_, why)) => note(out, key, format!("netmiko argument: {why}")),
                None => note(
                    out,
                    key,
                    "netmiko connection argument with no Mercury equivalent; ignored".into(),
                ),
            },
        }
    }
    if !manage_vlans_seen {
        // NGS's default is True; Mercury's is false.
        let _ = writeln!(t, "manage_vlans = true   # NGS default");
    }
    if !save_seen {
        let _ = writeln!(t, "save_config = true    # NGS default");
    }
    if s.get("ngs_allowed_vlans").is_none() {
        note(
            out,
            "ngs_allowed_vlans",
            "unset: NGS allows every VLAN, Mercury none until allowed_vlans is set (fail-closed); \
             set it to the physical network's VLAN range (ML2 network_vlan_ranges)"
                .into(),
        );
        let _ = writeln!(
            t,
            "# allowed_vlans = [\"100-199\"]   # NGS allowed every VLAN; Mercury allows none until set"
        );
    }
    let _ = writeln!(
        t,
        "# Ironic's local_link_connection switch_info = \"{name}\" finds this device by name."
    );
    if !has_credential && device_type.starts_with("netmiko_") {
        note(
            out,
            "password",
            "neither password nor key_file: add key_file or password_file".into(),
        );
    }
    Some(t)
}

/// Writes an import into `dir`: `mercury.toml` (0600) and the secret files (0600, in a 0700
/// `secrets/`), and an empty `known_hosts` (0600) when there is none. Refuses to replace an
/// existing file unless `force`. Returns the paths written.
pub fn write(imported: &Imported, dir: &Path, force: bool) -> Result<Vec<PathBuf>, String> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let config = dir.join("mercury.toml");
    let mut targets: Vec<PathBuf> = vec![config.clone()];
    targets.extend(imported.secrets.iter().map(|s| dir.join(&s.path)));
    if !force {
        if let Some(p) = targets.iter().find(|p| p.exists()) {
            return Err(format!(
                "{} exists; pass --force to replace it, or --out-dir another directory",
                p.display()
            ));
        }
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir.join("secrets"))
        .map_err(|e| format!("cannot create {}: {e}", dir.join("secrets").display()))?;
    let put = |path: &Path, text: &str| -> Result<(), String> {
        // Remove first so an existing file's looser mode is not kept (and a symlink is not
        // followed).
        if force && path.symlink_metadata().is_ok() {
            std::fs::remove_file(path)
                .map_err(|e| format!("cannot replace {}: {e}", path.display()))?;
        }
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        f.write_all(text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    let mut written = Vec::new();
    for s in &imported.secrets {
        let p = dir.join(&s.path);
        put(&p, &format!("{}\n", s.value))?;
        written.push(p);
    }
    let known_hosts = dir.join("known_hosts");
    if known_hosts.symlink_metadata().is_err() {
        put(&known_hosts, "")?;
        written.push(known_hosts);
    }
    put(&config, &imported.toml)?;
    written.push(config);
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Catalog {
        Catalog::builtin().unwrap()
    }

    fn one(text: &str) -> Imported {
        import(
            &[(PathBuf::from("/etc/neutron/ngs.ini"), text.to_string())],
            &catalog(),
        )
        .unwrap()
    }

    #[test]
    fn oslo_ini_rules() {
        let s = parse_ini(
            Path::new("f.ini"),
            "# c\n[a]\nk1 = v1\nk2: v2 = x\nk3 = \"quoted\"\nk4 = a:b\nlong = one\n  two\n; c\n\n[b]\nk = 'x'\n",
        )
        .unwrap();
        assert_eq!(s.len(), 2);
        let a = &s[0];
        assert_eq!(a.get("k1"), Some("v1"));
        assert_eq!(a.get("k2"), Some("v2 = x"));
        assert_eq!(a.get("k3"), Some("quoted"));
        assert_eq!(a.get("k4"), Some("a:b"));
        assert_eq!(a.get("long"), Some("one\ntwo"));
        assert_eq!(s[1].get("k"), Some("x"));
        assert!(parse_ini(Path::new("f"), "k = v\n")
            .unwrap_err()
            .contains("f:1"));
        assert!(parse_ini(Path::new("f"), "[a\n")
            .unwrap_err()
            .contains("f:1"));
        assert!(parse_ini(Path::new("f"), "[a]\nnovalue\n")
            .unwrap_err()
            .contains("f:2"));
    }

    #[test]
    fn ngs_keys_map_and_secrets_never_reach_the_config() {
        let i = one(
            "[genericswitch:leaf-1]\ndevice_type = netmiko_cisco_ios\nngs_mac_address = AA:BB:CC:DD:EE:01\n\
             ip = 192.0.2.10\nport = 2222\nusername = admin\npassword = hunter2-pw\nsecret = en-secret-9\n\
             ngs_allowed_vlans = 100,101,200\nngs_allowed_ports = Gi1/0/1, Gi1/0/2\nngs_port_default_vlan = 10\n\
             ngs_save_configuration = False\nngs_manage_vlans = false\nngs_max_connections = 2\n\
             ngs_disable_inactive_ports = True\nngs_trunk_ports = Port-channel1\nngs_physical_networks = physnet1\n\
             ngs_network_name_format = {segmentation_id}\nngs_ssh_connect_timeout = 30\n",
        );
        assert_eq!(i.devices, ["leaf-1"]);
        for secret in ["hunter2-pw", "en-secret-9"] {
            assert!(!i.toml.contains(secret), "{}", i.toml);
            assert!(!format!("{:?}", i.notes).contains(secret));
        }
        let config = crate::config::Config::parse(Path::new("/x/mercury.toml"), &i.toml).unwrap();
        let d = &config.devices["leaf-1"];
        assert_eq!(d.platform, "cisco_ios");
        assert_eq!(d.address.as_deref(), Some("192.0.2.10"));
        assert_eq!(d.port, 2222);
        assert_eq!(d.mac.as_deref(), Some("aa:bb:cc:dd:ee:01"));
        assert_eq!(
            d.password_file.as_deref(),
            Some(Path::new("/x/secrets/leaf-1.password"))
        );
        assert_eq!(
            d.enable_secret_file.as_deref(),
            Some(Path::new("/x/secrets/leaf-1.enable"))
        );
        assert_eq!(
            d.allowed_vlans.as_ref().map(|v| v.to_string()).as_deref(),
            Some("100,101,200")
        );
        assert_eq!(
            d.allowed_ports.as_deref(),
            Some(&["Gi1/0/1".to_string(), "Gi1/0/2".to_string()][..])
        );
        assert_eq!(d.default_vlan.map(Vlan::get), Some(10));
        assert!(!d.save_config && !d.manage_vlans && d.shut_unused_ports);
        assert_eq!(d.max_sessions, 2);
        assert_eq!(d.connect_timeout, std::time::Duration::from_secs(30));
        let keys: Vec<&str> = i.notes.iter().map(|n| n.key.as_str()).collect();
        for k in [
            "ngs_trunk_ports",
            "ngs_physical_networks",
            "ngs_network_name_format",
        ] {
            assert!(keys.contains(&k), "{keys:?}");
        }
        assert!(i
            .notes
            .iter()
            .all(|n| n.at.starts_with("/etc/neutron/ngs.ini:")));
        assert_eq!(i.secrets.len(), 2);
    }

    #[test]
    fn ngs_defaults_and_fail_closed_vlans() {
        let i = one("[genericswitch:sw]\ndevice_type = netmiko_juniper\nip = h\nusername = u\nkey_file = /k\n");
        let c = crate::config::Config::parse(Path::new("/x/m.toml"), &i.toml).unwrap();
        let d = &c.devices["sw"];
        assert!(d.manage_vlans && d.save_config, "NGS defaults");
        assert!(d.allowed_vlans.is_none());
        assert!(i
            .notes
            .iter()
            .any(|n| n.key == "ngs_allowed_vlans" && n.message.contains("fail-closed")));
        // An empty list blocks everything in NGS, and in Mercury.
        let i = one("[genericswitch:sw]\ndevice_type = netmiko_juniper\nip = h\nusername = u\nkey_file = /k\nngs_allowed_vlans =\n");
        let c = crate::config::Config::parse(Path::new("/x/m.toml"), &i.toml).unwrap();
        assert_eq!(
            c.devices["sw"].allowed_vlans.as_ref().map(|s| s.len()),
            Some(0)
        );
    }

    #[test]
    fn unsupported_switches_are_skipped_with_a_reason() {
        let i = one(
            "[genericswitch:oc]\ndevice_type = netconf_openconfig\nhost = h\n\
             [genericswitch:x]\ndevice_type = netmiko_nonesuch\nip = h\n\
             [genericswitch:bad name]\ndevice_type = netmiko_cisco_ios\nip = h\n\
             [ml2]\nmechanism_drivers = genericswitch\n",
        );
        assert!(i.devices.is_empty());
        assert_eq!(i.skipped.len(), 3);
        assert!(i.notes.iter().any(|n| n.message.contains("NETCONF")));
        assert!(i
            .notes
            .iter()
            .any(|n| n.message.contains("netmiko_nonesuch")));
    }

    #[test]
    fn later_files_replace_a_section_and_coordination_maps_to_etcd() {
        let i = import(
            &[
                (PathBuf::from("a.ini"), "[genericswitch:s]\ndevice_type = netmiko_cisco_ios\nip = old\nusername = u\npassword = p\n[ngs_coordination]\nbackend_url = etcd3+http://192.0.2.5:2379?api_version=v3\nacquire_timeout = 120\n".into()),
                (PathBuf::from("b.ini"), "[genericswitch:s]\ndevice_type = netmiko_arista_eos\nip = new\nusername = u\nkey_file = /k\n".into()),
            ],
            &catalog(),
        )
        .unwrap();
        let c = crate::config::Config::parse(Path::new("/x/m.toml"), &i.toml).unwrap();
        let d = &c.devices["s"];
        assert_eq!(
            (d.platform.as_str(), d.address.as_deref()),
            ("arista_eos", Some("new"))
        );
        assert!(d.password_file.is_none() && i.secrets.is_empty());
        assert_eq!(d.lock_timeout, std::time::Duration::from_secs(120));
        let crate::config::LockSettings::Etcd(e) = &c.lock else {
            panic!("{:?}", c.lock)
        };
        assert_eq!(e.endpoints[0].to_string(), "http://192.0.2.5:2379");
    }
}
