//! `mercury serve-jsonrpc --inetd` against the bytes Ironic 39's JSON-RPC client sends
//! (shared/ironic-jsonrpc-wire.md): one HTTP connection on stdin/stdout, several requests
//! on it, the simulator's state asserted afterwards.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use common::{set_mode, Lab, SimDevice};
use serde_json::Value;

/// `ironic:secret`, as keystoneauth's http_basic plugin sends it.
const GOOD: &str = "Basic aXJvbmljOnNlY3JldA==";
/// `ironic:wrong`.
const WRONG: &str = "Basic aXJvbmljOndyb25n";

const CONTEXT: &str = r#""context": {"user": null, "project_id": null, "system_scope": null, "project": null, "domain": null, "user_domain": null, "project_domain": null, "is_admin": true, "read_only": false, "show_deleted": false, "auth_token": null, "request_id": "req-22222222-2222-2222-2222-222222222222", "global_request_id": null, "resource_uuid": null, "roles": ["admin"], "user_identity": "- - - - -", "is_admin_project": true, "auth_token_info": null}, "rpc.version": "1.0""#;

fn lab() -> Lab {
    let lab = Lab::new(&[SimDevice {
        extra: "mac = \"02:00:00:00:01:01\"",
        ..SimDevice::new("sw1", "cisco_ios")
    }]);
    lab.append_config("\n[callers.ironic]\ndevices = [\"sw1\"]\n");
    for v in ["10", "100", "150"] {
        lab.mercury([
            "add-network",
            "--device",
            "sw1",
            "--vlan",
            v,
            "--reason",
            "setup",
        ])
        .run()
        .expect(0);
    }
    // bcrypt cost 4 of "secret" (htpasswd -B writes $2y$).
    let hash = "$2y$04$g89FzS2kk46fDeP0k33vLOPiZH8Rt2WvMvE8ZBT.B4tgzIdUIrQ2W";
    std::fs::write(lab.path("htpasswd"), format!("ironic:{hash}\n")).unwrap();
    set_mode(&lab.path("htpasswd"), 0o600);
    lab
}

/// A request exactly as requests/urllib3 lays it out (header order of the wire doc).
fn post(auth: Option<&str>, body: &str) -> String {
    let mut s = String::from(
        "POST / HTTP/1.1\r\nHost: 127.0.0.1:8089\r\nUser-Agent: ironic-conductor keystoneauth1/5.18.1 python-requests/2.34.2 CPython/3.11.7\r\nAccept-Encoding: gzip, deflate\r\nAccept: */*\r\nConnection: keep-alive\r\nContent-Type: application/json\r\n",
    );
    if let Some(a) = auth {
        s.push_str(&format!("Authorization: {a}\r\n"));
    }
    s.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    s
}

fn call(method: &str, params: &str) -> String {
    let sep = if params.is_empty() { "" } else { ", " };
    format!(
        r#"{{"jsonrpc": "2.0", "method": "{method}", "params": {{{params}{sep}{CONTEXT}}}, "id": "req-22222222-2222-2222-2222-222222222222"}}"#
    )
}

/// One parsed response.
#[derive(Debug)]
struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Resp {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {self:?}"))
    }
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Sends `input` as one connection (then EOF) and parses every response.
fn converse(lab: &Lab, extra: &[&str], input: &str) -> (Vec<Resp>, i32, String) {
    let mut args = vec![
        "--config".to_string(),
        lab.config.display().to_string(),
        "serve-jsonrpc".into(),
        "--inetd".into(),
        "--htpasswd".into(),
        lab.path("htpasswd").display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let mut child = Command::new(common::mercury_bin())
        .args(&args)
        .env("REMOTE_ADDR", "192.0.2.7")
        .env_remove("SSH_CONNECTION")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    let mut out = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    let output = child.wait_with_output().unwrap();
    (
        parse_responses(&out),
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn parse_responses(mut bytes: &[u8]) -> Vec<Resp> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let text = String::from_utf8_lossy(bytes).into_owned();
        let head_end = text.find("\r\n\r\n").expect("response head");
        let head = &text[..head_end];
        let mut lines = head.split("\r\n");
        let status: u16 = lines
            .next()
            .unwrap()
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        let headers: Vec<(String, String)> = lines
            .map(|l| {
                let (n, v) = l.split_once(": ").unwrap();
                (n.to_string(), v.to_string())
            })
            .collect();
        let len: usize = headers
            .iter()
            .find(|(n, _)| n == "Content-Length")
            .map(|(_, v)| v.parse().unwrap())
            .unwrap_or(0);
        let start = head_end + 4;
        let body = String::from_utf8(bytes[start..start + len].to_vec()).unwrap();
        bytes = &bytes[start + len..];
        out.push(Resp {
            status,
            headers,
            body,
        });
    }
    out
}

#[test]
fn update_then_reset_on_one_keep_alive_connection() {
    let lab = lab();
    let update = call(
        "update_port",
        r#""switch_id": "sw1", "port_name": "Gi1/0/1", "description": "Ironic Port 7d1f6c2e-0000-4000-8000-000000000001", "mode": "access", "native_vlan": 100, "allowed_vlans": null, "lag_name": null, "default_vlan": null"#,
    );
    let reset = call(
        "reset_port",
        r#""switch_id": "sw1", "port_name": "Gi1/0/1", "native_vlan": 100, "allowed_vlans": null, "default_vlan": 150"#,
    );
    let (r, code, stderr) = converse(&lab, &[], &(post(Some(GOOD), &update)));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].status, 200);
    assert_eq!(
        r[0].body,
        r#"{"jsonrpc":"2.0","result":{"switch_id":"sw1","port_name":"Gi1/0/1","description":"Ironic Port 7d1f6c2e-0000-4000-8000-000000000001","mode":"access","native_vlan":100,"allowed_vlans":[],"default_vlan":null,"lag_name":null,"status":"configured"},"id":"req-22222222-2222-2222-2222-222222222222"}"#
    );
    assert_eq!(r[0].header("Content-Type"), Some("application/json"));
    assert!(r[0].header("Date").unwrap().ends_with(" GMT"));
    let port = lab.port("sw1", "GigabitEthernet1/0/1");
    assert_eq!(
        (port["mode"].as_str(), port["access_vlan"].as_u64()),
        (Some("access"), Some(100)),
        "{port}"
    );

    // Both calls on one connection, same JSON-RPC id (Ironic reuses the request id).
    let (r, code, _) = converse(
        &lab,
        &[],
        &format!("{}{}", post(Some(GOOD), &update), post(Some(GOOD), &reset)),
    );
    assert_eq!(code, 0);
    assert_eq!(
        r.iter().map(|r| r.status).collect::<Vec<_>>(),
        vec![200, 200]
    );
    assert_eq!(
        r[1].body,
        r#"{"jsonrpc":"2.0","result":{"switch_id":"sw1","port_name":"Gi1/0/1","description":"Default port configuration","mode":"access","native_vlan":100,"allowed_vlans":[],"default_vlan":150,"status":"reset"},"id":"req-22222222-2222-2222-2222-222222222222"}"#
    );
    assert_eq!(
        lab.port("sw1", "GigabitEthernet1/0/1")["access_vlan"],
        150,
        "the idle VLAN Ironic named is restored"
    );

    // Every call is audited as an ordinary request, naming the HTTP user and client.
    let audit = lab.audit();
    let rec = audit
        .iter()
        .rev()
        .find(|r| r["event"] == "finished" && r["what"]["op"] == "reset_port")
        .expect("audited");
    assert_eq!(rec["who"]["caller"], "ironic");
    assert_eq!(rec["who"]["http_user"], "ironic");
    assert_eq!(rec["who"]["http_client"], "192.0.2.7");
    assert_eq!(
        rec["request_id"],
        "req-22222222-2222-2222-2222-222222222222"
    );
    let started = audit
        .iter()
        .find(|r| r["event"] == "started" && r["what"]["op"] == "update_port")
        .expect("started record");
    assert_eq!(
        started["why"]["port_uuid"],
        "7d1f6c2e-0000-4000-8000-000000000001"
    );
}

#[test]
fn wrong_credentials_get_401_and_touch_nothing() {
    let lab = lab();
    let body = call("get_switches", "");
    // Three refusals on one connection; the third closes it (MAX_AUTH_FAILURES).
    let (r, code, _) = converse(
        &lab,
        &[],
        &format!(
            "{}{}{}{}",
            post(Some(WRONG), &body),
            post(None, &body),
            post(Some("Bearer abc"), &body),
            post(Some("Basic !!"), &body)
        ),
    );
    assert_eq!(code, 0);
    assert_eq!(r.len(), 3, "{r:?}");
    assert_eq!(r[2].header("Connection"), Some("close"));
    let (fourth, _, _) = converse(&lab, &[], &post(Some("Basic !!"), &body));
    let r: Vec<Resp> = r.into_iter().chain(fourth).collect();
    assert_eq!(r[0].status, 401);
    assert_eq!(
        r[0].body,
        r#"{"error":{"message":"Incorrect username or password","code":401}}"#
    );
    assert_eq!(
        r[0].header("WWW-Authenticate"),
        Some("Basic realm=\"Baremetal API\"")
    );
    assert_eq!(
        (r[1].status, r[1].body.as_str()),
        (
            401,
            r#"{"error":{"message":"Authorization required","code":401}}"#
        )
    );
    assert_eq!(
        (r[2].status, r[2].body.as_str()),
        (
            400,
            r#"{"error":{"message":"Unsupported authorization type \"Bearer\"","code":400}}"#
        )
    );
    assert_eq!(r[2].header("WWW-Authenticate"), None);
    assert_eq!(r[3].status, 400);
    assert!(lab
        .audit()
        .iter()
        .all(|a| a["what"]["op"] != "get_switches"));
    // Refusals that carried credentials are audited (the missing header is not).
    let audit = lab.audit();
    let refused: Vec<&Value> = audit.iter().filter(|a| a["event"] == "refused").collect();
    assert_eq!(refused.len(), 3, "{refused:?}");
    assert_eq!(refused[0]["who"]["http_user"], "ironic");
    assert_eq!(refused[0]["how"]["msg"], "Incorrect username or password");

    // An unauthenticated GET is refused by auth before the method check.
    let (r, _, _) = converse(&lab, &[], "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(r[0].status, 401);
    let (r, _, _) = converse(
        &lab,
        &[],
        &format!("GET / HTTP/1.1\r\nHost: x\r\nAuthorization: {GOOD}\r\n\r\n"),
    );
    assert_eq!(
        (r[0].status, r[0].body.as_str()),
        (
            405,
            r#"{"error":{"code":405,"message":"Only POST method can be used"}}"#
        )
    );
}

#[test]
fn errors_are_http_200_with_ironic_exception_classes() {
    let lab = lab();
    let before = lab.transcript("sw1").len();
    let denied = call(
        "update_port",
        r#""switch_id": "sw1", "port_name": "Gi1/0/2", "description": "d", "mode": "access", "native_vlan": 300, "allowed_vlans": null, "lag_name": null, "default_vlan": null"#,
    );
    let unknown = call(
        "reset_port",
        r#""switch_id": "sw9", "port_name": "Gi1/0/2", "native_vlan": 100, "allowed_vlans": null, "default_vlan": null"#,
    );
    let injection = call(
        "update_port",
        r#""switch_id": "sw1", "port_name": "Gi1/0/2\nreload", "description": "d", "mode": "access", "native_vlan": 100, "allowed_vlans": null, "lag_name": null, "default_vlan": null"#,
    );
    let no_method = call("no_such_method", "");
    let (r, _, _) = converse(
        &lab,
        &[],
        &[
            post(Some(GOOD), &denied),
            post(Some(GOOD), &unknown),
            post(Some(GOOD), &injection),
            post(Some(GOOD), &no_method),
            post(Some(GOOD), "{not json"),
        ]
        .concat(),
    );
    assert!(r.iter().all(|r| r.status == 200), "{r:?}");
    let v: Vec<Value> = r.iter().map(Resp::json).collect();
    // An unknown switch is Ironic's SwitchNotFound (code 404), as the stock service raises
    // it from its switch lookup for update_port and reset_port alike.
    assert_eq!(
        v[1]["error"]["data"]["class"], "ironic.common.exception.SwitchNotFound",
        "{}",
        v[1]
    );
    assert_eq!(v[1]["error"]["code"], 404);
    assert!(v[1]["error"]["message"].as_str().unwrap().starts_with(
        "Switch sw9 could not be found or is not supported by any configured switch driver."
    ));
    for (i, needle) in [(0, "denied by"), (2, "port")] {
        assert_eq!(
            v[i]["error"]["data"]["class"], "ironic.common.exception.InvalidParameterValue",
            "{}",
            v[i]
        );
        assert_eq!(v[i]["error"]["code"], 400);
        assert!(
            v[i]["error"]["message"].as_str().unwrap().contains(needle),
            "{}",
            v[i]
        );
    }
    assert!(r[0]
        .body
        .starts_with(r#"{"jsonrpc":"2.0","id":"req-22222222-2222-2222-2222-222222222222","error":{"code":400,"message":"#));
    assert_eq!(
        r[3].body,
        r#"{"jsonrpc":"2.0","id":"req-22222222-2222-2222-2222-222222222222","error":{"code":-32601,"message":"Method no_such_method was not found"}}"#
    );
    assert_eq!(
        r[4].body,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Invalid JSON received by RPC server"}}"#
    );
    assert_eq!(
        lab.transcript("sw1").len(),
        before,
        "a refused call reached the switch"
    );
}

/// A caller is never told whether a device outside its scope exists: a configured switch of
/// another caller gets the SwitchNotFound an unknown one gets, and nothing is sent to it.
#[test]
fn a_switch_outside_the_callers_scope_is_switch_not_found_like_an_unknown_one() {
    let lab = lab();
    lab.append_config("\n[callers.nobody]\ndevices = []\n");
    let before = lab.transcript("sw1").len();
    let hidden = call(
        "update_port",
        r#""switch_id": "sw1", "port_name": "Gi1/0/2", "description": "d", "mode": "access", "native_vlan": 100, "allowed_vlans": null, "lag_name": null, "default_vlan": null"#,
    );
    let unknown = hidden.replace("\"sw1\"", "\"sw9\"");
    let (r, _, _) = converse(
        &lab,
        &["--caller", "nobody"],
        &[post(Some(GOOD), &hidden), post(Some(GOOD), &unknown)].concat(),
    );
    let v: Vec<Value> = r.iter().map(Resp::json).collect();
    for (x, name) in v.iter().zip(["sw1", "sw9"]) {
        assert_eq!(
            x["error"]["data"]["class"], "ironic.common.exception.SwitchNotFound",
            "{x}"
        );
        assert_eq!(x["error"]["code"], 404, "{x}");
        let msg = x["error"]["message"].as_str().unwrap();
        assert!(
            msg.starts_with(&format!("Switch {name} could not be found")),
            "{x}"
        );
    }
    assert_eq!(
        lab.transcript("sw1").len(),
        before,
        "a hidden switch was contacted"
    );
}

#[test]
fn get_switches_is_scoped_to_the_caller() {
    let lab = lab();
    lab.append_config("\n[callers.nobody]\ndevices = []\n");
    let body = call("get_switches", "");
    let (r, _, _) = converse(&lab, &[], &post(Some(GOOD), &body));
    let v = r[0].json();
    let info = &v["result"]["02:00:00:00:01:01"];
    assert_eq!(info["device_name"], "sw1", "{v}");
    assert_eq!(info["device_type"], "cisco_ios");
    assert!(!r[0].body.contains("secret"));
    // --caller names the scope for every user.
    let (r, _, _) = converse(&lab, &["--caller", "nobody"], &post(Some(GOOD), &body));
    assert_eq!(r[0].json()["result"], serde_json::json!({}));
}

#[test]
fn delete_lag_runs_once_per_switch_and_notifications_get_204() {
    let lab = lab();
    lab.mercury([
        "update-lag",
        "--device",
        "sw1",
        "--lag",
        "10",
        "--member",
        "Gi1/0/7",
        "--reason",
        "setup",
    ])
    .run()
    .expect(0);
    assert!(!lab.state("sw1")["running"]["lags"]["Port-channel10"].is_null());
    let del = call("delete_lag", r#""switch_ids": ["sw1"], "lag_name": "10""#);
    let notification = r#"{"jsonrpc": "2.0", "method": "get_switches", "params": {}}"#;
    let (r, _, _) = converse(
        &lab,
        &[],
        &format!(
            "{}{}",
            post(Some(GOOD), &del),
            post(Some(GOOD), notification)
        ),
    );
    assert_eq!(
        r[0].json()["result"],
        serde_json::json!({"switch_ids": ["sw1"], "lag_name": "10", "status": "deleted"}),
        "{r:?}"
    );
    assert!(lab.state("sw1")["running"]["lags"]["Port-channel10"].is_null());
    assert_eq!((r[1].status, r[1].body.as_str()), (204, ""));
}

#[test]
fn connection_close_and_unsafe_htpasswd() {
    let lab = lab();
    let body = call("get_switches", "");
    let closing = post(Some(GOOD), &body).replace("Connection: keep-alive", "Connection: close");
    // The second request is never read: the client asked to close after the first.
    let (r, _, _) = converse(&lab, &[], &format!("{closing}{}", post(Some(GOOD), &body)));
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].header("Connection"), Some("close"));

    set_mode(&lab.path("htpasswd"), 0o666);
    let (r, code, stderr) = converse(&lab, &[], &post(Some(GOOD), &body));
    assert_eq!(code, 78);
    assert_eq!(r[0].status, 500);
    assert!(stderr.contains("unsafe permissions"), "{stderr}");
}

#[test]
fn idle_connection_ends_the_process() {
    let lab = lab();
    let mut child = Command::new(common::mercury_bin())
        .args(["--config"])
        .arg(&lab.config)
        .args([
            "serve-jsonrpc",
            "--inetd",
            "--idle-timeout",
            "1",
            "--htpasswd",
        ])
        .arg(lab.path("htpasswd"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _stdin = child.stdin.take();
    let started = std::time::Instant::now();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn serve_jsonrpc_is_not_reachable_through_the_ssh_forced_command() {
    let lab = lab();
    for cmd in [
        "serve-jsonrpc --inetd --htpasswd /etc/shadow",
        "mercury serve-jsonrpc --inetd --htpasswd x",
    ] {
        let v = lab
            .mercury(["serve-ssh", "--caller", "ironic"])
            .env("SSH_ORIGINAL_COMMAND", cmd)
            .run()
            .expect(64);
        assert_eq!(v["error_kind"], "usage", "{cmd}");
    }
}

#[test]
fn the_shipped_systemd_unit_runs_a_valid_command_line() {
    let unit = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("integrations/systemd/mercury-jsonrpc@.service"),
    )
    .unwrap();
    let exec = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .expect("ExecStart");
    let mut words = exec.split_whitespace();
    assert!(words.next().unwrap().ends_with("/mercury"));
    let args: Vec<&str> = words.collect();
    assert!(args.contains(&"--inetd"), "{exec}");
    // The connection closes at once: the flags parse, nothing is read, exit 0.
    let out = common::mercury(args).run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
}

/// A `serve-jsonrpc --inetd` process on pipes, for tests that talk to it step by step.
fn spawn_server(lab: &Lab, extra: &[&str]) -> std::process::Child {
    Command::new(common::mercury_bin())
        .arg("--config")
        .arg(&lab.config)
        .args(["serve-jsonrpc", "--inetd", "--htpasswd"])
        .arg(lab.path("htpasswd"))
        .args(extra)
        .env("REMOTE_ADDR", "192.0.2.7")
        .env_remove("SSH_CONNECTION")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

const UPDATE_GI3: &str = r#""switch_id": "sw1", "port_name": "Gi1/0/3", "description": "d", "mode": "access", "native_vlan": 150, "allowed_vlans": null, "lag_name": null, "default_vlan": null"#;

/// Regression (issue 13 item 8): with two Content-Length fields the first won, and the
/// bytes past it ran as a second, smuggled request.
#[test]
fn duplicate_content_length_is_a_400_and_closes() {
    let lab = lab();
    let before = lab.transcript("sw1").len();
    let smuggled = post(Some(GOOD), &call("update_port", UPDATE_GI3));
    let head = format!(
        "POST / HTTP/1.1\r\nHost: x\r\nAuthorization: {GOOD}\r\nContent-Length: 2\r\nContent-Length: {}\r\n\r\n{{}}",
        smuggled.len() + 2
    );
    let (r, code, _) = converse(&lab, &[], &format!("{head}{smuggled}"));
    assert_eq!(code, 0);
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0].status, 400);
    assert_eq!(r[0].header("Connection"), Some("close"));
    assert_eq!(lab.transcript("sw1").len(), before, "the smuggled call ran");
    assert!(lab.port("sw1", "GigabitEthernet1/0/3")["access_vlan"] != 150);
}

/// Regression (issue 13 item 8): `Content-Length: +N` was read as N.
#[test]
fn signed_content_length_is_a_400_and_closes() {
    let lab = lab();
    let before = lab.transcript("sw1").len();
    let body = call("update_port", UPDATE_GI3);
    let request = post(Some(GOOD), &body).replace(
        &format!("Content-Length: {}", body.len()),
        &format!("Content-Length: +{}", body.len()),
    );
    let (r, _, _) = converse(&lab, &[], &format!("{request}{}", post(Some(GOOD), &body)));
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0].status, 400);
    assert_eq!(lab.transcript("sw1").len(), before);
}

/// Regression (issue 13 item 8): `100 Continue` was sent before the credentials were
/// checked, inviting an unauthenticated client to send its body.
#[test]
fn continue_is_sent_only_after_authentication() {
    let lab = lab();
    let body = call("get_switches", "");
    let expecting = |auth: &str| {
        post(Some(auth), "").replace(
            "Content-Length: 0\r\n",
            &format!("Expect: 100-continue\r\nContent-Length: {}\r\n", body.len()),
        )
    };
    // Wrong credentials, body held back: one 401 that closes, no 100.
    let (r, code, _) = converse(&lab, &[], &expecting(WRONG));
    assert_eq!(code, 0);
    assert_eq!(
        r.iter().map(|r| r.status).collect::<Vec<_>>(),
        vec![401],
        "{r:?}"
    );
    assert_eq!(r[0].header("Connection"), Some("close"));

    // Good credentials: 100 Continue, then the body is read and answered.
    let mut child = spawn_server(&lab, &[]);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    stdin.write_all(expecting(GOOD).as_bytes()).unwrap();
    let mut got = Vec::new();
    let mut byte = [0u8; 1];
    while !got.ends_with(b"\r\n\r\n") {
        assert_eq!(stdout.read(&mut byte).unwrap(), 1, "{got:?}");
        got.push(byte[0]);
    }
    assert_eq!(got, b"HTTP/1.1 100 Continue\r\n\r\n");
    stdin.write_all(body.as_bytes()).unwrap();
    drop(stdin);
    let mut rest = Vec::new();
    stdout.read_to_end(&mut rest).unwrap();
    let r = parse_responses(&rest);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].status, 200);
    assert!(r[0].json()["result"]["02:00:00:00:01:01"].is_object());
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

/// Regression (issue 13 item 8): failed logins were neither audited nor limited; a client
/// could guess passwords on one connection for as long as it liked.
#[test]
fn failed_authentications_are_audited_and_close_the_connection_after_three() {
    let lab = lab();
    let body = call("get_switches", "");
    let nobody = "Basic bm9ib2R5OnNlY3JldA=="; // nobody:secret
    let input = [WRONG, nobody, WRONG, WRONG, GOOD]
        .iter()
        .map(|a| post(Some(a), &body))
        .collect::<String>();
    let (r, code, stderr) = converse(&lab, &[], &input);
    assert_eq!(code, 0);
    assert_eq!(
        r.iter().map(|r| r.status).collect::<Vec<_>>(),
        vec![401, 401, 401],
        "{r:?}"
    );
    assert_eq!(r[2].header("Connection"), Some("close"));
    assert!(
        stderr.contains("refused POST from 192.0.2.7 (user nobody)"),
        "{stderr}"
    );
    let audit = lab.audit();
    let refused: Vec<&Value> = audit.iter().filter(|a| a["event"] == "refused").collect();
    assert_eq!(refused.len(), 3, "{audit:?}");
    assert_eq!(
        refused
            .iter()
            .map(|a| a["who"]["http_user"].as_str().unwrap())
            .collect::<Vec<_>>(),
        vec!["ironic", "nobody", "ironic"]
    );
    for (i, a) in refused.iter().enumerate() {
        assert_eq!(a["who"]["http_client"], "192.0.2.7");
        assert_eq!(a["how"]["http_status"], 401);
        assert_eq!(a["how"]["failures_on_connection"], i + 1);
        assert!(
            !a.to_string().contains("secret"),
            "a password reached the audit log"
        );
    }
    // The good request after the close never ran.
    assert!(audit.iter().all(|a| a["what"]["op"] != "get_switches"));
}

/// Regression (issue 13 item 8): a request dripped a byte at a time survived far longer
/// than any timeout (12 s against --idle-timeout 2). Now its head and body must arrive
/// within --request-timeout of its first byte: the drip is cut with a 408 long before its
/// last byte.
#[test]
fn a_slow_drip_is_cut_at_the_request_deadline() {
    let lab = lab();
    let mut child = spawn_server(&lab, &["--idle-timeout", "2", "--request-timeout", "1"]);
    let mut stdin = child.stdin.take().unwrap();
    let request = post(Some(GOOD), &call("get_switches", ""));
    let total = request.len();
    let drip = std::thread::spawn(move || {
        let mut sent = 0;
        for b in request.as_bytes() {
            if stdin.write_all(&[*b]).and_then(|_| stdin.flush()).is_err() {
                break;
            }
            sent += 1;
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        sent
    });
    let mut out = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    let r = parse_responses(&out);
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0].status, 408);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let sent = drip.join().unwrap();
    assert!(sent < total / 2, "{sent} of {total} bytes were accepted");
}

/// A LAG across two switches is changed on both or on neither: update_lag configured the
/// first switch and then failed on the second, leaving a half-built LAG. Now every switch is
/// checked first, and a failure on the second puts the first back as it was read.
#[test]
fn a_two_switch_lag_failure_on_one_switch_restores_the_other() {
    // The LAG interfaces carry an access VLAN before: put back exactly.
    let (lab, before, after, msg) = two_switch_lag_failure(true);
    assert!(msg.contains("sw1 restored"), "{msg}");
    // The simulator's `mode` is the LACP mode; `mode_l2` the switchport mode. An access
    // port keeps trunk lists it was given as inert lines (IOS does too); what carries
    // traffic is the mode and the access VLAN.
    for (i, sw) in ["sw1", "sw2"].iter().enumerate() {
        for key in ["mode_l2", "access_vlan"] {
            assert_eq!(after[i][key], before[i][key], "{sw} {key}: {after:?}");
        }
    }
    assert_eq!(before[0]["mode_l2"], "access", "{before:?}");
    assert_eq!(
        after[1]["allowed_vlans"], before[1]["allowed_vlans"],
        "{after:?}"
    );
    drop(lab);
    // The LAG interfaces had no L2 mode (a port-channel made by its members): no request
    // declares "no mode", so sw1 goes to its idle VLAN and the message says so; sw2, where
    // the device refused the change, is undone by the driver to no mode.
    let (_lab, before, after, msg) = two_switch_lag_failure(false);
    assert!(msg.contains("sw1 reset to its idle VLAN"), "{msg}");
    assert!(before[0]["mode_l2"].is_null(), "{before:?}");
    assert_eq!(
        (
            after[0]["mode_l2"].as_str(),
            after[0]["access_vlan"].as_u64()
        ),
        (Some("access"), Some(10)),
        "sw1: {after:?}"
    );
    for key in ["mode_l2", "access_vlan", "native_vlan", "allowed_vlans"] {
        assert_eq!(after[1][key], before[1][key], "sw2 {key}: {after:?}");
    }
}

/// Two IOS switches with Port-channel10 (member Gi1/0/7), the second refusing trunk lists;
/// Ironic's update_lag over both. Returns the LAG interfaces before and after, and the
/// error message.
fn two_switch_lag_failure(access_before: bool) -> (Lab, Vec<Value>, Vec<Value>, String) {
    let lab = Lab::new(&[
        SimDevice::new("sw1", "cisco_ios"),
        SimDevice {
            // The second switch refuses the tagged list at apply time (check mode sends no
            // configuration line, so it passes).
            sim_args: &["--fault", "reject=trunk allowed vlan"],
            ..SimDevice::new("sw2", "cisco_ios")
        },
    ]);
    lab.append_config("\n[callers.ironic]\ndevices = [\"sw1\", \"sw2\"]\n");
    let hash = "$2y$04$g89FzS2kk46fDeP0k33vLOPiZH8Rt2WvMvE8ZBT.B4tgzIdUIrQ2W";
    std::fs::write(lab.path("htpasswd"), format!("ironic:{hash}\n")).unwrap();
    set_mode(&lab.path("htpasswd"), 0o600);
    for sw in ["sw1", "sw2"] {
        for v in ["10", "100", "150"] {
            lab.mercury([
                "add-network",
                "--device",
                sw,
                "--vlan",
                v,
                "--reason",
                "setup",
            ])
            .run()
            .expect(0);
        }
        lab.mercury([
            "update-lag",
            "--device",
            sw,
            "--lag",
            "10",
            "--member",
            "Gi1/0/7",
            "--reason",
            "setup",
        ])
        .run()
        .expect(0);
        if access_before {
            lab.mercury([
                "update-port",
                "--device",
                sw,
                "--port",
                "Port-channel10",
                "--mode",
                "access",
                "--native-vlan",
                "10",
                "--reason",
                "setup",
            ])
            .run()
            .expect(0);
        }
    }
    let lags = |lab: &Lab| -> Vec<Value> {
        ["sw1", "sw2"]
            .iter()
            .map(|sw| lab.state(sw)["running"]["lags"]["Port-channel10"].clone())
            .collect()
    };
    let before = lags(&lab);
    let update = call(
        "update_lag",
        r#""switch_ids": ["sw1", "sw2"], "lag_name": "Port-channel10", "description": "Ironic Portgroup",
           "mode": "trunk", "native_vlan": 10, "aggregation_mode": "lacp", "allowed_vlans": [100, 150],
           "default_vlan": 10"#,
    );
    let (r, _, _) = converse(&lab, &[], &post(Some(GOOD), &update));
    let v = r[0].json();
    let msg = v["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!msg.is_empty(), "update_lag did not fail: {v}");
    let after = lags(&lab);
    (lab, before, after, msg)
}
