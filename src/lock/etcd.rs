//! The etcd lock backend: one key per device slot, `<prefix>/<device>/<slot>`, created in a
//! transaction only if absent and bound to a lease, so that executor hosts sharing an etcd
//! cluster never hold more slots of a device than `max_sessions`.
//!
//! It speaks etcd's v3 JSON gateway (`/v3/lease/grant`, `/v3/kv/txn`, `/v3/lease/keepalive`,
//! `/v3/lease/revoke`, `/v3/kv/range`, `/v3/auth/authenticate`; keys and values base64)
//! through `ureq`, a small synchronous HTTP client: a one-shot process needs a handful of
//! requests, not an async runtime and a gRPC stack. `https://` endpoints use rustls (the
//! `ring` provider of `crate::tls`), verify etcd's certificate against `ca_file`, and
//! present `cert_file`/`key_file` when etcd runs with `--client-cert-auth`. One agent per
//! process keeps its connection (and TLS session) for the next call. Proxies from the
//! environment are ignored: the lock service is reached directly or not at all.
//!
//! While a slot is held, a thread refreshes the lease every third of its TTL; if the
//! process dies, the lease expires after at most one TTL and etcd deletes the key. Dropping
//! the lock revokes the lease at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{Holder, LockError};
use crate::config::{EtcdEndpoint, EtcdSettings, EtcdTls};
use crate::util::b64;

/// Largest HTTP response read.
const MAX_RESPONSE: u64 = 4 * 1024 * 1024;

/// A failed call to etcd.
#[derive(Debug, Clone)]
pub struct CallError {
    /// What failed, with the endpoint.
    pub message: String,
    /// The failure was in reaching the endpoint (try the next one), not in etcd's answer.
    pub connect: bool,
    /// TLS failed: etcd's certificate is not trusted, or etcd refused ours. Retrying will
    /// not help (exit 77, like a host key mismatch).
    pub tls: bool,
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

// --- HTTP(S) ---

fn remaining(deadline: Instant) -> Duration {
    deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1))
}

/// The agent every call of this process goes through.
fn agent(settings: &EtcdSettings) -> Result<ureq::Agent, LockError> {
    let mut tls = ureq::tls::TlsConfig::builder()
        .provider(ureq::tls::TlsProvider::Rustls)
        .unversioned_rustls_crypto_provider(crate::tls::provider());
    if let Some(t) = &settings.tls {
        tls = tls_material(tls, t).map_err(|e| LockError::Config(e.to_string()))?;
    }
    let config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .max_redirects(0)
        .timeout_global(Some(settings.request_timeout))
        .user_agent(format!("mercury/{}", env!("CARGO_PKG_VERSION")))
        .tls_config(tls.build())
        .build();
    Ok(ureq::Agent::new_with_config(config))
}

/// The CA to verify etcd against, and the client certificate to present.
fn tls_material(
    mut tls: ureq::tls::TlsConfigBuilder,
    t: &EtcdTls,
) -> Result<ureq::tls::TlsConfigBuilder, crate::tls::TlsError> {
    use ureq::tls::{Certificate, ClientCert, PrivateKey, RootCerts};
    let to_ureq = |certs: Vec<rustls::pki_types::CertificateDer<'static>>| {
        certs
            .iter()
            .map(|c| Certificate::from_der(c.as_ref()).to_owned())
            .collect::<Vec<_>>()
    };
    let roots = to_ureq(crate::tls::load_certs(&t.ca_file)?);
    tls = tls.root_certs(RootCerts::new_with_certs(&roots));
    if let Some((cert, key_file)) = &t.client {
        let chain = to_ureq(crate::tls::load_certs(cert)?);
        let (_, pem) = crate::tls::read_key(key_file)?;
        let key = PrivateKey::from_pem(&pem).map_err(|e| crate::tls::TlsError::Pem {
            path: key_file.clone(),
            problem: format!("unusable private key ({e})"),
        })?;
        tls = tls.client_cert(Some(ClientCert::new_with_certs(&chain, key)));
    }
    Ok(tls)
}

/// What `mercury check` finds wrong with the etcd TLS material (unreadable, not PEM, a key
/// others can read): the same loading a lock acquisition does, without connecting.
pub fn check(lock: &crate::config::LockSettings) -> Vec<String> {
    let crate::config::LockSettings::Etcd(settings) = lock else {
        return Vec::new();
    };
    match &settings.tls {
        Some(t) => match tls_material(ureq::tls::TlsConfig::builder(), t) {
            Ok(_) => Vec::new(),
            Err(e) => vec![format!("lock: {e}")],
        },
        None => Vec::new(),
    }
}

/// Whether a ureq error is a TLS failure (certificate, handshake, alert).
fn is_tls(e: &ureq::Error) -> bool {
    match e {
        ureq::Error::Rustls(_) | ureq::Error::Tls(_) | ureq::Error::Pem(_) => true,
        ureq::Error::Io(io) => io
            .get_ref()
            .is_some_and(|inner| inner.downcast_ref::<rustls::Error>().is_some()),
        _ => false,
    }
}

/// POSTs `body` to `path` and returns the response body's first JSON value (a streaming
/// answer, as `/v3/lease/keepalive`, is read only that far).
fn post(
    agent: &ureq::Agent,
    client_cert: bool,
    ep: &EtcdEndpoint,
    path: &str,
    body: &Value,
    token: Option<&str>,
    timeout: Duration,
) -> Result<Value, CallError> {
    let deadline = Instant::now() + timeout;
    let fail = |connect: bool, tls: bool, what: String| CallError {
        message: format!("etcd {ep}{path}: {what}"),
        connect,
        tls,
    };
    let mut request = agent
        .post(format!("{}{path}", ep.url()))
        .content_type("application/json");
    if let Some(t) = token {
        request = request.header("Authorization", t);
    }
    let mut response = request.send(body.to_string()).map_err(|e| {
        let what = match &e {
            ureq::Error::Timeout(_) => format!("no answer within {:.1}s", timeout.as_secs_f64()),
            ureq::Error::HostNotFound => "cannot resolve".into(),
            other => other.to_string(),
        };
        let tls = is_tls(&e);
        let what = if tls && ep.tls && !client_cert && what.contains("Certificate") {
            // No certificate offered, and etcd's alert is about the client's certificate:
            // CertificateRequired, or BadCertificate from etcd versions that send that for
            // an empty certificate message.
            format!(
                "TLS: {what} (no client certificate is configured: etcd requires one, \
                 cert_file and key_file)"
            )
        } else if tls {
            format!("TLS: {what}")
        } else if ep.tls && !client_cert && matches!(&e, ureq::Error::Io(_)) {
            // TLS 1.3 refuses a missing client certificate after the handshake: the
            // request's write may meet the closed connection before the alert is read.
            format!(
                "{what} (right after the TLS handshake: etcd may require a client \
                 certificate, cert_file and key_file)"
            )
        } else {
            what
        };
        fail(true, tls, what)
    })?;
    let status = response.status().as_u16();
    let reader = response
        .body_mut()
        .with_config()
        .limit(MAX_RESPONSE)
        .reader();
    let value = serde_json::Deserializer::from_reader(reader)
        .into_iter::<Value>()
        .next()
        .transpose()
        .map_err(|e| {
            if e.is_io() && Instant::now() >= deadline {
                fail(
                    true,
                    false,
                    format!("no answer within {:.1}s", timeout.as_secs_f64()),
                )
            } else if e.is_io() {
                fail(true, false, format!("answer cut: {e}"))
            } else {
                fail(false, false, format!("unparsable answer: {e}"))
            }
        })?
        .unwrap_or(Value::Null);
    if status != 200 {
        let msg = value
            .get("message")
            .or_else(|| value.get("error"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        return Err(fail(false, false, format!("HTTP {status}: {msg}")));
    }
    Ok(value)
}

/// An etcd client over the configured endpoints.
#[derive(Debug, Clone)]
pub struct Client {
    settings: EtcdSettings,
    agent: ureq::Agent,
    token: Option<String>,
}

impl Client {
    /// Connects (authenticating when a credentials file is configured).
    pub fn new(settings: &EtcdSettings) -> Result<Client, LockError> {
        let mut client = Client {
            settings: settings.clone(),
            agent: agent(settings)?,
            token: None,
        };
        if let Some(path) = &settings.credentials_file {
            let text =
                crate::config::read_secret(path).map_err(|e| LockError::Config(e.to_string()))?;
            let (name, password) = text.split_once(':').ok_or_else(|| {
                LockError::Config(format!(
                    "{}: expected one line user:password",
                    path.display()
                ))
            })?;
            let answer = client
                .call(
                    "/v3/auth/authenticate",
                    &json!({"name": name, "password": password}),
                )
                .map_err(|e| {
                    let what = format!("etcd authentication failed: {e}");
                    if e.connect && !e.tls {
                        LockError::Backend(what)
                    } else {
                        LockError::Denied(what)
                    }
                })?;
            client.token = answer
                .get("token")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        Ok(client)
    }

    /// One call, trying the endpoints in order while they cannot be reached.
    pub fn call(&self, path: &str, body: &Value) -> Result<Value, CallError> {
        let mut last = None;
        for ep in &self.settings.endpoints {
            match post(
                &self.agent,
                self.settings
                    .tls
                    .as_ref()
                    .is_some_and(|t| t.client.is_some()),
                ep,
                path,
                body,
                self.token.as_deref(),
                self.settings.request_timeout,
            ) {
                Ok(v) => return Ok(v),
                Err(e) if e.connect => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or(CallError {
            message: "no etcd endpoint configured".into(),
            connect: true,
            tls: false,
        }))
    }
    fn grant(&self) -> Result<String, CallError> {
        let v = self.call(
            "/v3/lease/grant",
            &json!({"TTL": self.settings.lease_ttl.as_secs()}),
        )?;
        id_of(&v, "ID").ok_or_else(|| CallError {
            message: format!("etcd lease grant: no lease id in {v}"),
            connect: false,
            tls: false,
        })
    }

    /// Refreshes a lease; its remaining TTL (0: expired).
    fn keepalive(&self, lease: &str) -> Result<i64, CallError> {
        let v = self.call("/v3/lease/keepalive", &json!({"ID": lease}))?;
        let r = v.get("result").unwrap_or(&v);
        Ok(id_of(r, "TTL").and_then(|t| t.parse().ok()).unwrap_or(0))
    }

    fn revoke(&self, lease: &str) -> Result<(), CallError> {
        self.call("/v3/lease/revoke", &json!({"ID": lease}))
            .map(|_| ())
    }

    /// Creates `key` bound to `lease` if it does not exist; whether it was created.
    fn create(&self, key: &str, value: &str, lease: &str) -> Result<bool, CallError> {
        let k = b64::encode(key.as_bytes());
        let v = self.call(
            "/v3/kv/txn",
            &json!({
                "compare": [{"key": k, "target": "CREATE", "result": "EQUAL", "create_revision": "0"}],
                "success": [{"request_put": {"key": k, "value": b64::encode(value.as_bytes()), "lease": lease}}],
            }),
        )?;
        Ok(v.get("succeeded").and_then(Value::as_bool).unwrap_or(false))
    }

    /// Values under `prefix`.
    fn values(&self, prefix: &str) -> Result<Vec<String>, CallError> {
        let mut end = prefix.as_bytes().to_vec();
        if let Some(last) = end.last_mut() {
            *last += 1;
        }
        let v = self.call(
            "/v3/kv/range",
            &json!({"key": b64::encode(prefix.as_bytes()), "range_end": b64::encode(&end)}),
        )?;
        Ok(v.get("kvs")
            .and_then(Value::as_array)
            .map(|kvs| {
                kvs.iter()
                    .filter_map(|kv| kv.get("value").and_then(Value::as_str))
                    .filter_map(b64::decode)
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .collect()
            })
            .unwrap_or_default())
    }
}

/// etcd's JSON encodes 64-bit integers as strings; accept both.
fn id_of(v: &Value, key: &str) -> Option<String> {
    match v.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A held slot in etcd; dropping it revokes the lease.
#[derive(Debug)]
pub struct RemoteLock {
    client: Client,
    lease: String,
    /// The key held.
    pub key: String,
    lost: Arc<AtomicBool>,
    stop: Option<mpsc::Sender<()>>,
    keeper: Option<thread::JoinHandle<()>>,
}

impl RemoteLock {
    /// The lease could not be refreshed or expired: the slot may be someone else's now.
    pub fn lost(&self) -> bool {
        self.lost.load(Ordering::SeqCst)
    }
}

impl Drop for RemoteLock {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(k) = self.keeper.take() {
            let _ = k.join();
        }
        // Best effort: if this fails the lease still expires within one TTL.
        let _ = self.client.revoke(&self.lease);
    }
}

fn slot_key(settings: &EtcdSettings, device: &str, slot: u32) -> String {
    format!("{}/{device}/{slot}", settings.prefix)
}

fn backend(e: CallError) -> LockError {
    // Missing or insufficient credentials will not get better by retrying.
    let denied = [
        "permission denied",
        "user name is empty",
        "invalid auth token",
    ];
    if e.tls || (!e.connect && denied.iter().any(|d| e.message.contains(d))) {
        LockError::Denied(e.message)
    } else {
        LockError::Backend(e.message)
    }
}

/// Takes a free slot of `device` in etcd, polling until `deadline` (at least one pass).
pub fn acquire(
    settings: &EtcdSettings,
    device: &str,
    slots: u32,
    holder: &Holder,
    deadline: Instant,
) -> Result<RemoteLock, LockError> {
    let started = Instant::now();
    let client = Client::new(settings)?;
    let mut lease = client.grant().map_err(backend)?;
    let mut info = serde_json::to_value(holder).unwrap_or(Value::Null);
    if let Some(m) = info.as_object_mut() {
        m.insert("host".into(), json!(settings.host));
    }
    let info = info.to_string();
    let mut pause = Duration::from_millis(20);
    loop {
        for slot in 0..slots.max(1) {
            let key = slot_key(settings, device, slot);
            match client.create(&key, &info, &lease) {
                Ok(true) => return Ok(hold(client, lease, key, settings.lease_ttl)),
                Ok(false) => {}
                Err(e) => {
                    let _ = client.revoke(&lease);
                    return Err(backend(e));
                }
            }
        }
        if Instant::now() >= deadline {
            let holders = describe(&client, settings, device);
            let _ = client.revoke(&lease);
            return Err(LockError::Timeout {
                device: device.to_string(),
                waited: started.elapsed(),
                holders,
            });
        }
        thread::sleep(pause.min(remaining(deadline)));
        pause = (pause * 2).min(Duration::from_millis(250));
        // Nothing refreshes the lease while we wait: a wait longer than its TTL would
        // create the slot key on an expired lease ("requested lease not found").
        lease = refreshed(&client, lease).map_err(backend)?;
    }
}

/// Keeps a waiter's lease alive, or grants a new one if it has expired.
fn refreshed(client: &Client, lease: String) -> Result<String, CallError> {
    match client.keepalive(&lease) {
        Ok(ttl) if ttl > 0 => Ok(lease),
        _ => {
            let _ = client.revoke(&lease);
            client.grant()
        }
    }
}

fn hold(client: Client, lease: String, key: String, ttl: Duration) -> RemoteLock {
    let lost = Arc::new(AtomicBool::new(false));
    let (stop, stopped) = mpsc::channel::<()>();
    let keeper = {
        let client = client.clone();
        let lease = lease.clone();
        let lost = Arc::clone(&lost);
        let every = (ttl / 3).max(Duration::from_millis(300));
        thread::spawn(move || loop {
            match stopped.recv_timeout(every) {
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                _ => return,
            }
            match client.keepalive(&lease) {
                Ok(ttl) if ttl > 0 => {}
                Ok(_) => {
                    lost.store(true, Ordering::SeqCst);
                    return;
                }
                Err(e) => {
                    // One failed refresh is not yet a lost lease; keep trying while the
                    // TTL lasts, and say so.
                    log::warn!("etcd lease keepalive failed: {e}");
                }
            }
        })
    };
    RemoteLock {
        client,
        lease,
        key,
        lost,
        stop: Some(stop),
        keeper: Some(keeper),
    }
}

/// Who holds the slots of `device`, for a message.
pub fn describe(client: &Client, settings: &EtcdSettings, device: &str) -> String {
    match client.values(&format!("{}/{device}/", settings.prefix)) {
        Ok(values) if !values.is_empty() => values
            .iter()
            .map(|v| match serde_json::from_str::<Value>(v) {
                Ok(h) => format!(
                    "pid {} on {} (request {}, {} since {})",
                    h["pid"],
                    h["host"].as_str().unwrap_or("?"),
                    h["request_id"].as_str().unwrap_or("?"),
                    h["op"].as_str().unwrap_or("?"),
                    h["since"].as_str().unwrap_or("?"),
                ),
                Err(_) => "an unknown holder".into(),
            })
            .collect::<Vec<_>>()
            .join("; "),
        Ok(_) => "no one (the slots were freed just now)".into(),
        Err(e) => format!("unknown ({e})"),
    }
}
