//! `serve-jsonrpc --inetd`: Ironic's networking JSON-RPC, one HTTP connection per process.
//!
//! Stock Ironic (39.x) talks to its standalone networking service with JSON-RPC 2.0 over
//! HTTP (`[ironic_networking] rpc_transport = json-rpc`). This module answers the same
//! calls — `update_port`, `reset_port`, `update_lag`, `delete_lag`, `get_switches` — with
//! the same parameters, result dicts and error shapes (HTTP 200, `error.data.class` in
//! `ironic.common.exception`), so a conductor needs no Ironic code change. It owns the
//! JSON-RPC envelope, parameter checks and the mapping of results and exit codes to Ironic
//! exceptions. It does not touch devices itself: every call becomes a [`RawRequest`] run
//! by [`run::run_request`], the same path as `mercury run` (config re-read, policy with the
//! caller's scope, lock, audit, session). HTTP is `http`; credentials are `htpasswd`; TLS
//! (`--tls-cert`, rustls, TLS 1.3 unless told otherwise, optional client certificates) is
//! `serve::tls` over the material `crate::tls` loads. The client's address for the audit
//! record is the inherited socket's peer (`getpeername` on stdin).

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::report::Outcome;
use crate::report::Report;
use crate::request::RawRequest;
use crate::run::{self, Origin};
use crate::serve::htpasswd::{claimed_user, AuthError, Htpasswd};
use crate::serve::http::{self, Connection, HttpRequest, HttpResponse, ReadError};

const CLASS_PREFIX: &str = "ironic.common.exception.";

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpcError {
    /// `error.code`: -32xxx for protocol errors, the exception's HTTP-like code otherwise.
    pub code: i64,
    /// `error.message`.
    pub message: String,
    /// The Ironic exception class name (`InvalidParameterValue`), sent as `data.class`.
    pub class: Option<&'static str>,
}

impl RpcError {
    fn protocol(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            class: None,
        }
    }

    /// `ironic.common.exception.InvalidParameterValue` (code 400).
    pub fn invalid(message: impl Into<String>) -> RpcError {
        RpcError {
            code: 400,
            message: message.into(),
            class: Some("InvalidParameterValue"),
        }
    }
}

/// Who is calling, for policy and audit.
#[derive(Debug, Clone)]
pub struct CallContext<'a> {
    /// The configuration file.
    pub config: &'a Path,
    /// The `[callers.NAME]` scope.
    pub caller: String,
    /// Audit origin (HTTP user, client address).
    pub origin: Origin,
}

/// How `serve-jsonrpc` serves its connection.
#[derive(Debug, Clone)]
pub struct Options {
    /// htpasswd file with bcrypt hashes for HTTP Basic authentication.
    pub htpasswd: std::path::PathBuf,
    /// Policy scope (`[callers.NAME]`) for every user; default: the authenticated user.
    pub caller: Option<String>,
    /// Close the connection after this long idle between requests.
    pub idle_timeout: Duration,
    /// Longest a request's head and body may take to arrive, from its first byte.
    pub request_timeout: Duration,
    /// Terminate TLS on the connection (`--tls-cert`/`--tls-key`).
    pub tls: Option<crate::tls::ServerSettings>,
}

/// Failed authentications one connection may make; the last one's answer closes it.
pub const MAX_AUTH_FAILURES: u32 = 3;

/// Longest a response write may block on a client that does not read.
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// The byte stream responses go to, and what it knows of the client.
pub trait Wire: Write {
    /// The verified TLS client certificate's fingerprint, on a TLS connection with
    /// client-certificate verification.
    fn tls_client(&self) -> Option<String> {
        None
    }
}

/// A plaintext connection's write side.
pub struct Plain<W: Write>(pub W);

impl<W: Write> Write for Plain<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

impl<W: Write> Wire for Plain<W> {}

impl Wire for crate::serve::tls::TlsWriter {
    fn tls_client(&self) -> Option<String> {
        self.peer().client_cert
    }
}

/// The client's address: the peer of the inherited socket (systemd `Accept=yes`, inetd),
/// which the kernel vouches for; when stdin is not an inet socket (a pipe, socat's
/// socketpair), what the activator put in the environment (`REMOTE_ADDR`, socat's
/// `SOCAT_PEERADDR`).
pub fn client_address() -> Option<String> {
    let stdin = std::io::stdin();
    let from_socket = rustix::net::getpeername(&stdin)
        .ok()
        .flatten()
        .and_then(|a| std::net::SocketAddr::try_from(a).ok())
        .map(|a| match a.ip() {
            // An IPv4 client on a dual-stack socket is written as IPv4.
            std::net::IpAddr::V6(v6) => v6
                .to_ipv4_mapped()
                .map(|v4| v4.to_string())
                .unwrap_or_else(|| v6.to_string()),
            ip => ip.to_string(),
        });
    from_socket.or_else(|| {
        std::env::var("REMOTE_ADDR")
            .or_else(|_| std::env::var("SOCAT_PEERADDR"))
            .ok()
            .filter(|a| {
                crate::request::validate::identifier("remote", a).is_ok() || a.contains(':')
            })
            .map(|a| crate::request::validate::printable(&a))
    })
}

/// Serves one connection on stdin/stdout until the client closes it, asks to close, or is
/// idle too long; through TLS when `args.tls` is set. Returns an [`Outcome`] with nothing
/// more to print (exit 78 when the htpasswd file or the TLS material is unusable).
pub fn serve_inetd(config: &Path, args: &Options) -> Outcome {
    let remote = client_address();
    // Best effort: only a socket has a send timeout (not a pipe in tests).
    let _ = rustix::net::sockopt::set_socket_timeout(
        std::io::stdout(),
        rustix::net::sockopt::Timeout::Send,
        Some(WRITE_TIMEOUT),
    );
    let limits = http::Limits {
        idle: args.idle_timeout,
        request: args.request_timeout,
    };
    let code = match &args.tls {
        None => serve(
            Connection::new(std::io::stdin(), limits),
            &mut Plain(std::io::stdout().lock()),
            config,
            args,
            remote,
        ),
        Some(settings) => {
            let started = crate::tls::server_config(settings)
                .map_err(|e| e.to_string())
                .and_then(|c| {
                    crate::serve::tls::start(c, std::io::stdin(), std::io::stdout())
                        .map_err(|e| format!("TLS: {e}"))
                });
            match started {
                Err(e) => {
                    // Nothing can be said to the client before a handshake: log and close.
                    log::error!("serve-jsonrpc: {e}");
                    78
                }
                Ok((plaintext, mut writer)) => {
                    let code = serve(
                        Connection::from_chunks(plaintext, limits),
                        &mut writer,
                        config,
                        args,
                        remote,
                    );
                    writer.close();
                    code
                }
            }
        }
    };
    Outcome {
        stdout: String::new(),
        code,
    }
}

/// The connection loop, on any byte streams. Returns the exit code: 0 when the connection
/// ended (normally, or refused), 78 when the htpasswd file is unusable.
///
/// Per request: read the head; authenticate (HTTP Basic, bcrypt); only then answer
/// `Expect: 100-continue` and read the body; answer. A failed authentication is logged
/// and audited, and after [`MAX_AUTH_FAILURES`] of them the connection closes.
pub fn serve(
    mut conn: Connection,
    out: &mut dyn Wire,
    config: &Path,
    args: &Options,
    remote: Option<String>,
) -> u8 {
    let htpasswd = Htpasswd::load(&args.htpasswd);
    // A verified Authorization value, so that keep-alive requests skip bcrypt.
    let mut verified: Option<(String, String)> = None;
    let mut failures = 0u32;
    loop {
        let mut req = match conn.next_head() {
            Ok(r) => r,
            Err(ReadError::Closed) | Err(ReadError::Idle(_)) => return 0,
            Err(ReadError::Bad { status, message }) => {
                log::warn!("serve-jsonrpc: {status} {message}");
                let _ = http::write_response(out, &plain_error(status, &message), true);
                return 0;
            }
        };
        let keep_alive = req.keep_alive();
        let htpasswd = match &htpasswd {
            Ok(h) => h,
            Err(e) => {
                log::error!("serve-jsonrpc: {e}");
                let _ = http::write_response(
                    out,
                    &plain_error(500, "server configuration error (see the server's log)"),
                    true,
                );
                return 78;
            }
        };
        let authorization = req.header("authorization").map(str::to_string);
        let user = match (&verified, &authorization) {
            (Some((header, user)), Some(a)) if header == a => Ok(user.clone()),
            _ => htpasswd.check(authorization.as_deref()),
        };
        let origin = Origin {
            http_user: None,
            remote: remote.clone(),
            ssh_connection: None,
            tls_client: out.tls_client(),
        };
        let user = match user {
            Ok(user) => user,
            Err(e) => {
                failures += 1;
                let claimed = claimed_user(authorization.as_deref());
                log::warn!(
                    "serve-jsonrpc: refused {} from {} (user {}): {e}",
                    req.method,
                    remote.as_deref().unwrap_or("?"),
                    claimed.as_deref().unwrap_or("-"),
                );
                if e != AuthError::Missing {
                    run::audit_refusal(
                        config,
                        &Origin {
                            http_user: claimed,
                            ..origin
                        },
                        json!({"http": format!("{} {}", req.method, crate::request::validate::printable(&req.target))}),
                        json!({
                            "outcome": "refused",
                            "error_kind": "denied",
                            "msg": e.to_string(),
                            "http_status": e.status(),
                            "failures_on_connection": failures,
                        }),
                    );
                }
                // A client waiting for 100 Continue has not sent its body: there is no
                // point in waiting for it. Too many failures end the connection.
                let close = !keep_alive || req.expects_continue() || failures >= MAX_AUTH_FAILURES;
                if !close {
                    if let Err(ReadError::Bad { status, message }) = conn.read_body(&mut req, || ())
                    {
                        let _ = http::write_response(out, &plain_error(status, &message), true);
                        return 0;
                    }
                }
                if http::write_response(out, &auth_error(&e), close).is_err() || close {
                    return 0;
                }
                continue;
            }
        };
        // Authenticated: only now may the client send its body.
        let body = conn.read_body(&mut req, || {
            let _ = out
                .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                .and_then(|_| out.flush());
        });
        if let Err(ReadError::Bad { status, message }) = body {
            log::warn!("serve-jsonrpc: {status} {message}");
            let _ = http::write_response(out, &plain_error(status, &message), true);
            return 0;
        }
        if let Some(a) = &authorization {
            verified = Some((a.clone(), user.clone()));
        }
        let ctx = CallContext {
            config,
            caller: args.caller.clone().unwrap_or_else(|| user.clone()),
            origin: Origin {
                http_user: Some(user),
                ..origin
            },
        };
        let response = respond(&req, &ctx);
        if http::write_response(out, &response, !keep_alive).is_err() || !keep_alive {
            return 0;
        }
    }
}

fn plain_error(status: u16, message: &str) -> HttpResponse {
    HttpResponse::json(
        status,
        ascii_json(&json!({"error": {"code": status, "message": message}}).to_string()),
    )
}

fn auth_error(e: &AuthError) -> HttpResponse {
    // Ironic's middleware puts "message" before "code" here.
    let body = format!(
        "{{\"error\":{{\"message\":{},\"code\":{}}}}}",
        Value::String(e.to_string()),
        e.status()
    );
    let mut r = HttpResponse::json(e.status(), ascii_json(&body));
    if e.status() == 401 {
        r.headers.push((
            "WWW-Authenticate".into(),
            "Basic realm=\"Baremetal API\"".into(),
        ));
    }
    r
}

/// Answers one authenticated HTTP request.
fn respond(req: &HttpRequest, ctx: &CallContext) -> HttpResponse {
    if req.method != "POST" {
        return plain_error(405, "Only POST method can be used");
    }
    match handle_body(&req.body, ctx) {
        Some(body) => HttpResponse::json(200, body),
        None => HttpResponse {
            status: 204,
            headers: Vec::new(),
            content_type: "application/json",
            body: Vec::new(),
        },
    }
}

/// Handles one JSON-RPC message; `None` for a notification (no `id`: HTTP 204).
pub fn handle_body(body: &[u8], ctx: &CallContext) -> Option<String> {
    let message: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(_) => {
            return Some(error_envelope(
                &Value::Null,
                &RpcError::protocol(-32700, "Invalid JSON received by RPC server"),
            ))
        }
    };
    let invalid = || RpcError::protocol(-32600, "Invalid request object received by RPC server");
    let Some(obj) = message.as_object() else {
        return Some(error_envelope(&Value::Null, &invalid()));
    };
    let id = obj.get("id").cloned();
    let reply_id = id.clone().unwrap_or(Value::Null);
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some(error_envelope(&reply_id, &invalid()));
    }
    let Some(method) = obj.get("method").and_then(Value::as_str) else {
        return Some(error_envelope(&reply_id, &invalid()));
    };
    let params = match obj.get("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Some(error_envelope(&reply_id, &invalid())),
    };
    let outcome = call(method, params, ctx);
    match (&id, &outcome) {
        (Some(_), Ok(_)) => log::info!("serve-jsonrpc: {method} ok"),
        (_, Err(e)) => log::warn!("serve-jsonrpc: {method} failed: {}", e.message),
        _ => {}
    }
    id.as_ref()?;
    Some(match outcome {
        Ok(result) => ascii_json(&format!(
            "{{\"jsonrpc\":\"2.0\",\"result\":{},\"id\":{}}}",
            result, reply_id
        )),
        Err(e) => error_envelope(&reply_id, &e),
    })
}

fn error_envelope(id: &Value, e: &RpcError) -> String {
    let mut error = format!(
        "{{\"code\":{},\"message\":{}",
        e.code,
        Value::String(e.message.clone())
    );
    if let Some(class) = e.class {
        error.push_str(&format!(
            ",\"data\":{{\"class\":\"{CLASS_PREFIX}{class}\"}}"
        ));
    }
    error.push('}');
    ascii_json(&format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{error}}}"
    ))
}

/// Escapes every non-ASCII character as `\uXXXX`, as Python's `json.dumps` does by default.
/// Valid on serialized JSON because non-ASCII can only occur inside strings.
pub fn ascii_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    out
}

/// A method's keyword parameters: required, then optional (sent as `null` by Ironic).
struct Signature {
    required: &'static [&'static str],
    optional: &'static [&'static str],
}

fn signature(method: &str) -> Option<Signature> {
    Some(match method {
        "update_port" => Signature {
            required: &[
                "switch_id",
                "port_name",
                "description",
                "mode",
                "native_vlan",
            ],
            optional: &["allowed_vlans", "lag_name", "default_vlan"],
        },
        "reset_port" => Signature {
            required: &["switch_id", "port_name", "native_vlan"],
            optional: &["allowed_vlans", "default_vlan"],
        },
        "update_lag" => Signature {
            required: &[
                "switch_ids",
                "lag_name",
                "description",
                "mode",
                "native_vlan",
                "aggregation_mode",
            ],
            optional: &["allowed_vlans", "default_vlan"],
        },
        "delete_lag" => Signature {
            required: &["switch_ids", "lag_name"],
            optional: &[],
        },
        "get_switches" => Signature {
            required: &[],
            optional: &[],
        },
        _ => return None,
    })
}

/// Dispatches one call: checks the parameters like Ironic's server does (-32602), then runs
/// the Mercury request(s).
fn call(
    method: &str,
    mut params: Map<String, Value>,
    ctx: &CallContext,
) -> Result<String, RpcError> {
    let sig = signature(method).ok_or_else(|| {
        RpcError::protocol(
            -32601,
            format!(
                "Method {} was not found",
                crate::request::validate::printable(method)
            ),
        )
    })?;
    let given = params.keys().cloned().collect::<Vec<_>>().join(", ");
    let invalid_params = |why: String| {
        RpcError::protocol(
            -32602,
            format!(
                "Params {} are invalid for {method}: {why}",
                crate::request::validate::printable(&given)
            ),
        )
    };
    let context = params.remove("context");
    params.remove("rpc.version");
    let context = match context {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m,
        Some(_) => {
            return Err(RpcError::protocol(
                -32602,
                "Context must be a dictionary, if provided",
            ))
        }
    };
    if let Some(extra) = params
        .keys()
        .find(|k| !sig.required.contains(&k.as_str()) && !sig.optional.contains(&k.as_str()))
    {
        return Err(invalid_params(format!(
            "got an unexpected keyword argument '{}'",
            crate::request::validate::printable(extra)
        )));
    }
    let missing: Vec<String> = sig
        .required
        .iter()
        .filter(|r| !params.contains_key(**r))
        .map(|r| format!("'{r}'"))
        .collect();
    if !missing.is_empty() {
        return Err(invalid_params(format!(
            "missing required arguments: {}",
            missing.join(", ")
        )));
    }
    let call = Call {
        method,
        params,
        request_id: ["request_id", "global_request_id"]
            .iter()
            .filter_map(|k| context.get(*k).and_then(Value::as_str))
            .find(|id| crate::request::validate::identifier("request_id", id).is_ok())
            .map(str::to_string),
        ctx,
    };
    let rendered = match method {
        "update_port" => serde_json::to_string(&call.update_port()?),
        "reset_port" => serde_json::to_string(&call.reset_port()?),
        "update_lag" => serde_json::to_string(&call.update_lag()?),
        "delete_lag" => serde_json::to_string(&call.delete_lag()?),
        _ => serde_json::to_string(&call.get_switches()?),
    };
    rendered.map_err(|e| RpcError {
        code: 500,
        message: format!("cannot render result: {e}"),
        class: Some("NetworkError"),
    })
}

/// One call being translated into Mercury requests.
struct Call<'a> {
    method: &'a str,
    params: Map<String, Value>,
    request_id: Option<String>,
    ctx: &'a CallContext<'a>,
}

/// `update_port`'s result, in the stock key order.
#[derive(Serialize)]
struct PortResult {
    switch_id: String,
    port_name: String,
    description: String,
    mode: String,
    native_vlan: i64,
    allowed_vlans: Vec<i64>,
    default_vlan: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lag_name: Option<Option<String>>,
    status: &'static str,
}

/// `update_lag`'s / `delete_lag`'s result.
#[derive(Serialize)]
struct LagResult {
    switch_ids: Vec<String>,
    lag_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    native_vlan: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    aggregation_mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    allowed_vlans: Option<Vec<i64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    default_vlan: Option<Option<i64>>,
    status: &'static str,
}

/// The L2 arguments Ironic's `update_port` and `update_lag` share.
struct L2<'a> {
    mode: &'a str,
    native_vlan: i64,
    allowed_vlans: Option<&'a [i64]>,
    default_vlan: Option<i64>,
    description: &'a str,
}

impl Call<'_> {
    fn string(&self, key: &str) -> Result<String, RpcError> {
        self.params
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| RpcError::invalid(format!("{key} must be a string")))
    }

    fn vlan(&self, key: &str) -> Result<Option<i64>, RpcError> {
        match self.params.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_i64()
                .filter(|n| (1..=4094).contains(n))
                .map(Some)
                .ok_or_else(|| {
                    RpcError::invalid(format!("{key} must be an integer between 1 and 4094"))
                }),
        }
    }

    fn required_vlan(&self, key: &str) -> Result<i64, RpcError> {
        self.vlan(key)?.ok_or_else(|| {
            RpcError::invalid(format!("{key} must be an integer between 1 and 4094"))
        })
    }

    fn vlan_list(&self, key: &str) -> Result<Option<Vec<i64>>, RpcError> {
        match self.params.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_i64().filter(|n| (1..=4094).contains(n)))
                .collect::<Option<Vec<i64>>>()
                .map(Some)
                .ok_or_else(|| {
                    RpcError::invalid(format!(
                        "Each VLAN in {key} must be an integer between 1 and 4094"
                    ))
                }),
            Some(_) => Err(RpcError::invalid(format!("{key} must be a list or tuple"))),
        }
    }

    fn switch_ids(&self) -> Result<Vec<String>, RpcError> {
        let ids = self
            .params
            .get("switch_ids")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|v| v.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
            })
            .and_then(|o| o)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| RpcError::invalid("switch_ids must be a non-empty list of strings"))?;
        Ok(ids)
    }

    fn reason(&self) -> String {
        match &self.request_id {
            Some(id) => format!("ironic {} over JSON-RPC ({id})", self.method),
            None => format!("ironic {} over JSON-RPC", self.method),
        }
    }

    /// Builds the Mercury request from JSON fields plus the call's metadata, and runs it.
    /// A device the caller cannot see (unknown, or outside its scope) is Ironic's
    /// `SwitchNotFound`, naming the `switch_id` as the stock service does.
    fn run(&self, mut fields: Map<String, Value>) -> Result<Report, RpcError> {
        fields.insert("reason".into(), json!(self.reason()));
        if let Some(id) = &self.request_id {
            fields.insert("request_id".into(), json!(id));
        }
        let switch_id = fields
            .get("device")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let raw: RawRequest = serde_json::from_value(Value::Object(fields))
            .map_err(|e| RpcError::invalid(format!("invalid request: {e}")))?;
        let report = run::run_request(
            self.ctx.config,
            raw,
            Some(self.ctx.caller.clone()),
            self.ctx.origin.clone(),
        );
        if report.ok {
            Ok(report)
        } else if report.device_not_found {
            Err(switch_not_found(&switch_id, &report))
        } else {
            Err(report_error(&report))
        }
    }

    fn update_port(&self) -> Result<PortResult, RpcError> {
        let switch_id = self.string("switch_id")?;
        let port_name = self.string("port_name")?;
        let description = self.string("description")?;
        let mode = self.string("mode")?;
        let native_vlan = self.required_vlan("native_vlan")?;
        let allowed_vlans = self.vlan_list("allowed_vlans")?;
        let default_vlan = self.vlan("default_vlan")?;
        let lag_name = match self.params.get("lag_name") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(RpcError::invalid("lag_name must be a string")),
        };
        let l2 = L2 {
            mode: &mode,
            native_vlan,
            allowed_vlans: allowed_vlans.as_deref(),
            default_vlan,
            description: &description,
        };
        let mut fields = match &lag_name {
            None => self.update_port_fields(&switch_id, &port_name, &l2),
            // The port's switchport names its LAG (ironic-networking's port_changed sends
            // it): the port joins that LAG, and the L2 settings go on the LAG interface,
            // in one session.
            Some(lag) => self.lag_member_fields(&switch_id, &port_name, lag, &l2),
        };
        if let Some(uuid) = description
            .strip_prefix("Ironic Port ")
            .filter(|u| crate::request::validate::uuid("port_uuid", u).is_ok())
        {
            fields.insert("port_uuid".into(), json!(uuid));
        }
        self.run(fields)?;
        Ok(PortResult {
            switch_id,
            port_name,
            description,
            mode,
            native_vlan,
            allowed_vlans: allowed_vlans.unwrap_or_default(),
            default_vlan,
            lag_name: Some(lag_name),
            status: "configured",
        })
    }

    fn reset_port(&self) -> Result<PortResult, RpcError> {
        let switch_id = self.string("switch_id")?;
        let port_name = self.string("port_name")?;
        let native_vlan = self.required_vlan("native_vlan")?;
        let allowed_vlans = self.vlan_list("allowed_vlans")?;
        let default_vlan = self.vlan("default_vlan")?;
        let mut fields = self.port_fields(&switch_id, &port_name);
        fields.insert("op".into(), json!("reset_port"));
        fields.insert("native_vlan".into(), json!(native_vlan));
        if let Some(a) = allowed_vlans.as_ref().filter(|a| !a.is_empty()) {
            fields.insert("allowed_vlans".into(), json!(a));
        }
        if let Some(d) = default_vlan {
            fields.insert("default_vlan".into(), json!(d));
        }
        self.run(fields)?;
        Ok(PortResult {
            switch_id,
            port_name,
            description: "Default port configuration".into(),
            mode: "access".into(),
            native_vlan,
            allowed_vlans: Vec::new(),
            default_vlan,
            lag_name: None,
            status: "reset",
        })
    }

    /// A request that must hold on every switch of a multi-switch LAG or none: each switch is
    /// checked first (check mode: resolved, authorised, its port read, nothing sent), then
    /// changed in turn; when one fails, the switches already changed are put back as they
    /// were read, and the error says which were and which could not be.
    fn on_every_switch(
        &self,
        switch_ids: &[String],
        fields: impl Fn(&str) -> Map<String, Value>,
    ) -> Result<(), RpcError> {
        for switch_id in switch_ids {
            self.check_first(fields(switch_id))?;
        }
        let mut changed: Vec<(&str, Report)> = Vec::new();
        for switch_id in switch_ids {
            match self.run(fields(switch_id)) {
                Ok(report) => changed.push((switch_id, report)),
                Err(mut e) => {
                    let mut said = Vec::new();
                    for (done, report) in changed.iter().rev() {
                        said.push(match self.restore(done, report) {
                            Ok(how) => format!("{done} {how}"),
                            Err(why) => format!("{done} NOT restored ({why})"),
                        });
                    }
                    if !said.is_empty() {
                        e.message = format!("{}; {}", e.message, said.join(", "));
                    }
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Runs `fields` in check mode: everything a real run would refuse is refused here,
    /// nothing is sent.
    fn check_first(&self, mut fields: Map<String, Value>) -> Result<(), RpcError> {
        fields.insert("check".into(), json!(true));
        self.run(fields).map(|_| ())
    }

    /// Declares a port back as `report` read it before its change, and says how: "unchanged"
    /// (nothing was changed), "restored", or — for a port that had no L2 mode, which no
    /// request can declare — "reset to its idle VLAN" (where Ironic's tear-down leaves it).
    fn restore(&self, switch_id: &str, report: &Report) -> Result<&'static str, String> {
        if !report.changed {
            return Ok("unchanged");
        }
        let port = &report.data["ports"][0];
        let before = &port["before"];
        let name = port["port"].as_str().ok_or("no port read")?;
        let mut fields = self.port_fields(switch_id, name);
        fields.insert("op".into(), json!("update_port"));
        match before["mode"].as_str() {
            Some("access") => {
                fields.insert("mode".into(), json!("access"));
                fields.insert("native_vlan".into(), before["access_vlan"].clone());
            }
            Some(m @ ("trunk" | "hybrid")) => {
                fields.insert("mode".into(), json!(m));
                if !before["native_vlan"].is_null() {
                    fields.insert("native_vlan".into(), before["native_vlan"].clone());
                }
                if let Some(a) = before["allowed_vlans"].as_str().filter(|a| !a.is_empty()) {
                    fields.insert("allowed_vlans".into(), json!(a));
                }
            }
            _ => {
                let mut reset = self.port_fields(switch_id, name);
                reset.insert("op".into(), json!("reset_port"));
                let after = &port["after"];
                let set = after["native_vlan"]
                    .as_u64()
                    .or(after["access_vlan"].as_u64());
                if let Some(v) = set {
                    reset.insert("native_vlan".into(), json!(v));
                }
                return self
                    .run(reset)
                    .map(|_| "reset to its idle VLAN (it had no L2 mode to put back)")
                    .map_err(|e| e.message);
            }
        }
        if let Some(d) = before["description"].as_str().filter(|d| !d.is_empty()) {
            fields.insert("description".into(), json!(d));
        }
        self.run(fields).map(|_| "restored").map_err(|e| e.message)
    }

    /// Ironic's `switch_id` is a device reference for Mercury: a config name, an alias or
    /// the switch MAC.
    fn port_fields(&self, switch_id: &str, port_name: &str) -> Map<String, Value> {
        let mut fields = Map::new();
        fields.insert("device".into(), json!(switch_id));
        fields.insert("port".into(), json!(port_name));
        fields
    }

    /// A Mercury `update_port` request declaring a port's (or LAG interface's) L2 state.
    fn update_port_fields(&self, switch_id: &str, port: &str, l2: &L2) -> Map<String, Value> {
        let mut fields = self.port_fields(switch_id, port);
        fields.insert("op".into(), json!("update_port"));
        insert_l2(&mut fields, l2);
        fields.insert("description".into(), json!(l2.description));
        fields
    }

    /// A Mercury `update_lag` putting one member port into a LAG, with the L2 settings on
    /// the LAG interface (Ironic's `update_port` with a `lag_name`). Ironic says nothing of
    /// the aggregation: LACP, the mode Ironic's LAG schema and 802.3ad bonds use.
    fn lag_member_fields(
        &self,
        switch_id: &str,
        port: &str,
        lag: &str,
        l2: &L2,
    ) -> Map<String, Value> {
        let mut fields = Map::new();
        fields.insert("op".into(), json!("update_lag"));
        fields.insert("device".into(), json!(switch_id));
        fields.insert("lag".into(), json!(lag));
        fields.insert("members".into(), json!([port]));
        fields.insert("aggregation_mode".into(), json!("lacp"));
        insert_l2(&mut fields, l2);
        fields
    }

    /// Ironic's `update_lag` names no member ports, so it configures the L2 side of an
    /// existing LAG interface on each switch (an `update_port` on the LAG interface);
    /// membership is Mercury's own `update_lag` (`mercury update-lag --member ...`).
    fn update_lag(&self) -> Result<LagResult, RpcError> {
        let switch_ids = self.switch_ids()?;
        let lag_name = self.string("lag_name")?;
        let description = self.string("description")?;
        let mode = self.string("mode")?;
        let native_vlan = self.required_vlan("native_vlan")?;
        let aggregation_mode = self.string("aggregation_mode")?;
        let allowed_vlans = self.vlan_list("allowed_vlans")?;
        let default_vlan = self.vlan("default_vlan")?;
        let l2 = L2 {
            mode: &mode,
            native_vlan,
            allowed_vlans: allowed_vlans.as_deref(),
            default_vlan,
            description: &description,
        };
        self.on_every_switch(&switch_ids, |switch_id| {
            self.update_port_fields(switch_id, &lag_name, &l2)
        })?;
        Ok(LagResult {
            switch_ids,
            lag_name,
            description: Some(description),
            mode: Some(mode),
            native_vlan: Some(native_vlan),
            aggregation_mode: Some(aggregation_mode),
            allowed_vlans: Some(allowed_vlans.unwrap_or_default()),
            default_vlan: Some(default_vlan),
            status: "configured",
        })
    }

    fn delete_lag(&self) -> Result<LagResult, RpcError> {
        let switch_ids = self.switch_ids()?;
        let lag_name = self.string("lag_name")?;
        let fields = |switch_id: &str| {
            let mut fields = Map::new();
            fields.insert("op".into(), json!("delete_lag"));
            fields.insert("device".into(), json!(switch_id));
            fields.insert("lag".into(), json!(lag_name));
            fields
        };
        // Every switch is checked before any is touched (a deleted LAG is not recreated).
        for switch_id in &switch_ids {
            self.check_first(fields(switch_id))?;
        }
        for switch_id in &switch_ids {
            self.run(fields(switch_id))?;
        }
        Ok(LagResult {
            switch_ids,
            lag_name,
            description: None,
            mode: None,
            native_vlan: None,
            aggregation_mode: None,
            allowed_vlans: None,
            default_vlan: None,
            status: "deleted",
        })
    }

    /// `{switch_id: info}` for every device the caller may use; the key is the device's
    /// switch MAC when configured (what Ironic learns from LLDP), else its config name.
    fn get_switches(&self) -> Result<Map<String, Value>, RpcError> {
        let mut fields = Map::new();
        fields.insert("op".into(), json!("get_switches"));
        let report = self.run(fields)?;
        let mut out = Map::new();
        for s in report.data["switches"].as_array().into_iter().flatten() {
            let name = s["name"].as_str().unwrap_or_default().to_string();
            let id = s["mac"]
                .as_str()
                .map(str::to_string)
                .unwrap_or(name.clone());
            out.insert(
                id.clone(),
                json!({
                    "switch_id": id,
                    "device_name": name,
                    "device_type": s["platform"],
                    "allowed_vlans": s["allowed_vlans"],
                    "default_vlan": s["default_vlan"],
                    "aliases": s["aliases"],
                    "network_types": s["network_types"],
                    "driver": "mercury",
                    "status": "configured",
                }),
            );
        }
        Ok(out)
    }
}

/// Ironic's `SwitchNotFound` (code 404), worded as the stock service words it, with
/// Mercury's reason and request id.
/// The layer-2 settings of a port or LAG interface as Mercury request fields (an empty
/// allowed list is left out: Ironic sends `[]` for an access port).
fn insert_l2(fields: &mut Map<String, Value>, l2: &L2) {
    fields.insert("mode".into(), json!(l2.mode));
    fields.insert("native_vlan".into(), json!(l2.native_vlan));
    if let Some(a) = l2.allowed_vlans.filter(|a| !a.is_empty()) {
        fields.insert("allowed_vlans".into(), json!(a));
    }
    if let Some(d) = l2.default_vlan {
        fields.insert("default_vlan".into(), json!(d));
    }
}

fn switch_not_found(switch_id: &str, r: &Report) -> RpcError {
    RpcError {
        code: 404,
        message: format!(
            "Switch {} could not be found or is not supported by any configured switch driver. ({}) [mercury rc {} {}, request {}]",
            crate::request::validate::printable(switch_id),
            r.msg,
            r.rc,
            r.error_kind.unwrap_or("error"),
            r.request_id
        ),
        class: Some("SwitchNotFound"),
    }
}

/// Maps a failed Mercury result to the Ironic exception the conductor should raise.
/// Invalid data and policy refusals are `InvalidParameterValue`; everything else is
/// `NetworkError` (code 503 when Mercury says a retry may succeed). Both are the classes
/// Ironic's network interfaces catch to fail a step cleanly.
pub fn report_error(r: &Report) -> RpcError {
    let (class, code) = match r.rc {
        64 | 65 | 77 => ("InvalidParameterValue", 400),
        69 | 75 => ("NetworkError", 503),
        _ => ("NetworkError", 500),
    };
    RpcError {
        code,
        message: format!(
            "{} [mercury rc {} {}, request {}]",
            r.msg,
            r.rc,
            r.error_kind.unwrap_or("error"),
            r.request_id
        ),
        class: Some(class),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> CallContext<'static> {
        CallContext {
            config: Path::new("/nonexistent/mercury.toml"),
            caller: "ironic".into(),
            origin: Origin::default(),
        }
    }

    fn answer(body: &str) -> Value {
        serde_json::from_str(&handle_body(body.as_bytes(), &ctx()).unwrap()).unwrap()
    }

    #[test]
    fn protocol_errors_have_no_data() {
        let v = handle_body(b"{not json", &ctx()).unwrap();
        assert_eq!(
            v,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Invalid JSON received by RPC server"}}"#
        );
        assert_eq!(answer(r#"[1]"#)["error"]["code"], -32600);
        assert_eq!(
            answer(r#"{"jsonrpc":"1.0","method":"x","id":3}"#)["error"]["code"],
            -32600
        );
        let v = answer(r#"{"jsonrpc":"2.0","method":"cleanup","params":{},"id":7}"#);
        assert_eq!(v["error"]["message"], "Method cleanup was not found");
        assert_eq!(v["id"], 7);
        let v = answer(
            r#"{"jsonrpc":"2.0","method":"reset_port","params":{"switch_id":"sw1","context":{}},"id":"r"}"#,
        );
        assert_eq!(v["error"]["code"], -32602);
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("missing required arguments: 'port_name', 'native_vlan'"),
            "{v}"
        );
        let v =
            answer(r#"{"jsonrpc":"2.0","method":"get_switches","params":{"bogus":1},"id":"r"}"#);
        assert!(v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unexpected keyword argument 'bogus'"));
        let v =
            answer(r#"{"jsonrpc":"2.0","method":"get_switches","params":{"context":5},"id":8}"#);
        assert_eq!(
            v["error"]["message"],
            "Context must be a dictionary, if provided"
        );
    }

    #[test]
    fn bad_values_are_invalid_parameter_value() {
        let v = answer(
            r#"{"jsonrpc":"2.0","method":"update_port","params":{"switch_id":"sw1","port_name":"E1","description":"d","mode":"access","native_vlan":5000,"allowed_vlans":null,"lag_name":null,"default_vlan":null},"id":"x"}"#,
        );
        assert_eq!(v["error"]["code"], 400);
        assert_eq!(
            v["error"]["data"]["class"],
            "ironic.common.exception.InvalidParameterValue"
        );
        let text = handle_body(
            br#"{"jsonrpc":"2.0","method":"reset_port","params":{"switch_id":"sw1","port_name":"E1","native_vlan":10,"allowed_vlans":"100"},"id":"x"}"#,
            &ctx(),
        )
        .unwrap();
        assert!(
            text.starts_with(r#"{"jsonrpc":"2.0","id":"x","error":{"code":400,"message":"allowed_vlans must be a list or tuple","data":{"class":"ironic.common.exception.InvalidParameterValue"}}}"#),
            "{text}"
        );
    }

    #[test]
    fn notifications_get_no_body_and_config_errors_are_network_errors() {
        assert_eq!(
            handle_body(br#"{"jsonrpc":"2.0","method":"get_switches"}"#, &ctx()),
            None
        );
        let v = answer(r#"{"jsonrpc":"2.0","method":"get_switches","id":1}"#);
        assert_eq!(
            v["error"]["data"]["class"],
            "ironic.common.exception.NetworkError"
        );
        assert!(v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("mercury rc 78 config"));
    }

    #[test]
    fn ascii_only_output() {
        assert_eq!(ascii_json("\"é😀\""), "\"\\u00e9\\ud83d\\ude00\"");
    }
}
