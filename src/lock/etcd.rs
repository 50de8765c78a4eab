//! The etcd lock backend: one key per device slot, `<prefix>/<device>/<slot>`, created in a
//! transaction only if absent and bound to a lease, so that executor hosts sharing an etcd
//! cluster never hold more slots of a device than `max_sessions`.
//!
//! It speaks etcd's v3 JSON gateway (`/v3/lease/grant`, `/v3/kv/txn`, `/v3/lease/keepalive`,
//! `/v3/lease/revoke`, `/v3/kv/range`, `/v3/auth/authenticate`; keys and values base64) over
//! a minimal HTTP/1.1 client on `std::net::TcpStream`: a one-shot process needs a handful
//! of requests, not an async runtime and a gRPC stack. TLS is expected to be terminated by
//! a local proxy on 127.0.0.1 (docs/scale.md).
//!
//! While a slot is held, a thread refreshes the lease every third of its TTL; if the
//! process dies, the lease expires after at most one TTL and etcd deletes the key. Dropping
//! the lock revokes the lease at once.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{Holder, LockError};
use crate::config::{EtcdEndpoint, EtcdSettings};
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
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

// --- HTTP/1.1 ---

fn remaining(deadline: Instant) -> Duration {
    deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1))
}

/// POSTs `body` to `path` and returns the response body's first JSON value.
fn post(
    ep: &EtcdEndpoint,
    path: &str,
    body: &Value,
    token: Option<&str>,
    timeout: Duration,
) -> Result<Value, CallError> {
    let deadline = Instant::now() + timeout;
    let fail = |connect: bool, what: String| CallError {
        message: format!("etcd {ep}{path}: {what}"),
        connect,
    };
    let addrs: Vec<_> = (ep.host.as_str(), ep.port)
        .to_socket_addrs()
        .map_err(|e| fail(true, format!("cannot resolve: {e}")))?
        .collect();
    let mut stream = None;
    let mut last = String::from("no address");
    for a in &addrs {
        match TcpStream::connect_timeout(a, remaining(deadline)) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = e.to_string(),
        }
    }
    let mut stream = stream.ok_or_else(|| fail(true, format!("connect: {last}")))?;
    let payload = body.to_string();
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: {}:{}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n",
        ep.host,
        ep.port,
        payload.len()
    );
    if let Some(t) = token {
        request.push_str(&format!("Authorization: {t}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&payload);
    let io = |e: std::io::Error| fail(true, e.to_string());
    stream
        .set_write_timeout(Some(remaining(deadline)))
        .map_err(io)?;
    stream.write_all(request.as_bytes()).map_err(io)?;
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        stream
            .set_read_timeout(Some(remaining(deadline)))
            .map_err(io)?;
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                raw.extend_from_slice(&buf[..n]);
                if raw.len() as u64 > MAX_RESPONSE {
                    return Err(fail(false, "response too large".into()));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                let what = if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) {
                    format!("no answer within {:.1}s", timeout.as_secs_f64())
                } else {
                    e.to_string()
                };
                return Err(fail(true, what));
            }
        }
    }
    let (status, body) = parse_response(&raw).map_err(|m| fail(false, m))?;
    let value = serde_json::Deserializer::from_slice(&body)
        .into_iter::<Value>()
        .next()
        .transpose()
        .map_err(|e| fail(false, format!("unparsable answer: {e}")))?
        .unwrap_or(Value::Null);
    if status != 200 {
        let msg = value
            .get("message")
            .or_else(|| value.get("error"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        return Err(fail(false, format!("HTTP {status}: {msg}")));
    }
    Ok(value)
}

/// Status code and body (chunked transfer decoded).
fn parse_response(raw: &[u8]) -> Result<(u16, Vec<u8>), String> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("truncated HTTP response")?;
    let head = String::from_utf8_lossy(&raw[..end]);
    let body = &raw[end + 4..];
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or("bad HTTP status line")?;
    let chunked = lines.any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    if !chunked {
        return Ok((status, body.to_vec()));
    }
    let mut out = Vec::new();
    let mut rest = body;
    loop {
        let nl = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("truncated chunk")?;
        let size_text = String::from_utf8_lossy(&rest[..nl]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| "bad chunk size")?;
        rest = &rest[nl + 2..];
        if size == 0 {
            break;
        }
        if rest.len() < size {
            // The stream was cut (keepalive streams end with the connection): keep what came.
            out.extend_from_slice(rest);
            break;
        }
        out.extend_from_slice(&rest[..size]);
        rest = rest.get(size + 2..).unwrap_or(&[]);
    }
    Ok((status, out))
}

/// An etcd client over the configured endpoints.
#[derive(Debug, Clone)]
pub struct Client {
    settings: EtcdSettings,
    token: Option<String>,
}

impl Client {
    /// Connects (authenticating when a credentials file is configured).
    pub fn new(settings: &EtcdSettings) -> Result<Client, LockError> {
        let mut client = Client {
            settings: settings.clone(),
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
                    if e.connect {
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
    if !e.connect && denied.iter().any(|d| e.message.contains(d)) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_and_plain_responses() {
        let raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n2\r\n1}\r\n0\r\n\r\n";
        let (s, b) = parse_response(raw).unwrap();
        assert_eq!((s, b.as_slice()), (200, b"{\"a\":1}".as_slice()));
        let raw = b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 2\r\n\r\n{}";
        assert_eq!(parse_response(raw).unwrap().0, 401);
    }
}
