//! `[lock]` and `[coalesce]`: the lock backend (files, or etcd across executor hosts) and
//! request coalescing.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::KeyError;
use crate::request::validate;

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
    /// TLS material for `https://` endpoints.
    pub tls: Option<EtcdTls>,
}

/// How to speak TLS to etcd: whom to trust, and what to present.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdTls {
    /// PEM CA certificates that signed etcd's server certificates (`ca_file`).
    pub ca_file: PathBuf,
    /// PEM client certificate and private key (`cert_file`, `key_file`), for etcd's
    /// `--client-cert-auth`; the key is a secret (mode 0600).
    pub client: Option<(PathBuf, PathBuf)>,
}

/// One etcd client endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdEndpoint {
    /// Host name or address.
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// `https://`.
    pub tls: bool,
}

impl EtcdEndpoint {
    /// `http(s)://host:port`, an IPv6 address in brackets.
    pub fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        if self.host.contains(':') {
            format!("{scheme}://[{}]:{}", self.host, self.port)
        } else {
            format!("{scheme}://{}:{}", self.host, self.port)
        }
    }
}

impl std::fmt::Display for EtcdEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.url())
    }
}

/// `[coalesce]`: request coalescing (docs/scale.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoalesceSettings {
    /// A process that finds the device locked spools its request for the holder.
    pub enabled: bool,
    /// Most spooled requests one holder applies in its session (default 256: a burst of
    /// 256 on one switch was four sessions at the earlier 64, each a new login and lock
    /// hand-over, 2.28 s against 1.73 s in one; docs/scale.md).
    pub max_batch: u32,
}

impl Default for CoalesceSettings {
    fn default() -> Self {
        CoalesceSettings {
            enabled: true,
            max_batch: 256,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLock {
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
pub(super) struct RawCoalesce {
    pub(super) enabled: Option<bool>,
    pub(super) max_batch: Option<u32>,
}

pub(super) fn build_lock(
    r: RawLock,
    resolve: &dyn Fn(&Path) -> PathBuf,
) -> Result<LockSettings, KeyError> {
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
    let raw_endpoints = r.endpoints.clone().unwrap_or_default();
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
    let tls = build_tls(&r, endpoints.iter().any(|e| e.tls), resolve)?;
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
        tls,
    }))
}

/// `ca_file`, `cert_file`, `key_file`: needed (the CA) and only used with `https://`
/// endpoints; the client certificate and key come together.
fn build_tls(
    r: &RawLock,
    https: bool,
    resolve: &dyn Fn(&Path) -> PathBuf,
) -> Result<Option<EtcdTls>, KeyError> {
    let err = |k: &str, m: &str| Err((k.to_string(), m.to_string()));
    if !https {
        for (k, set) in [
            ("ca_file", r.ca_file.is_some()),
            ("cert_file", r.cert_file.is_some()),
            ("key_file", r.key_file.is_some()),
        ] {
            if set {
                return err(k, "only used with https:// endpoints");
            }
        }
        return Ok(None);
    }
    let Some(ca) = &r.ca_file else {
        return err(
            "ca_file",
            "missing: https:// endpoints need the CA that signed etcd's server certificates \
             (etcd --trusted-ca-file's CA, PEM)",
        );
    };
    let client = match (&r.cert_file, &r.key_file) {
        (Some(c), Some(k)) => Some((resolve(c), resolve(k))),
        (None, None) => None,
        (Some(_), None) => return err("key_file", "missing: cert_file needs its key_file"),
        (None, Some(_)) => return err("cert_file", "missing: key_file needs its cert_file"),
    };
    Ok(Some(EtcdTls {
        ca_file: resolve(ca),
        client,
    }))
}

fn parse_endpoint(text: &str) -> Result<EtcdEndpoint, String> {
    let (tls, rest) = if let Some(rest) = text.strip_prefix("https://") {
        (true, rest)
    } else if let Some(rest) = text.strip_prefix("http://") {
        (false, rest)
    } else {
        return Err(format!(
            "{}: expected http://host:port or https://host:port",
            validate::Escaped(text)
        ));
    };
    let rest = rest.trim_end_matches('/');
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() && !h.ends_with(':') => (
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
        tls,
    })
}
