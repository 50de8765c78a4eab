//! `serve-jsonrpc --inetd` behind `systemd-socket-activate` (what a systemd `Accept=yes`
//! socket unit does) on 127.0.0.1: the audit record names the client from the inherited
//! socket, and the built-in TLS (`--tls-cert/--tls-key`, `--tls-min-version`,
//! `--tls-client-ca`) against `openssl s_client`, with certificates from the `openssl` CLI.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;

use common::tls::{s_client, Activator, Pki, ACTIVATE, OPENSSL};
use common::{set_mode, Lab, SimDevice};
use serde_json::Value;

/// `ironic:secret`.
const GOOD: &str = "Basic aXJvbmljOnNlY3JldA==";

macro_rules! require {
    ($($tool:expr),*) => {
        if !common::tls::available(&[$($tool),*]) {
            return;
        }
    };
}

struct Setup {
    lab: Lab,
    pki: Pki,
    server: (PathBuf, PathBuf),
}

fn setup() -> Setup {
    let lab = Lab::new(&[SimDevice {
        extra: "mac = \"02:00:00:00:01:01\"",
        ..SimDevice::new("sw1", "cisco_ios")
    }]);
    lab.append_config("\n[callers.ironic]\ndevices = [\"sw1\"]\n");
    lab.mercury([
        "add-network",
        "--device",
        "sw1",
        "--vlan",
        "120",
        "--reason",
        "setup",
    ])
    .run()
    .expect(0);
    // bcrypt cost 4 of "secret".
    let hash = "$2y$04$g89FzS2kk46fDeP0k33vLOPiZH8Rt2WvMvE8ZBT.B4tgzIdUIrQ2W";
    std::fs::write(lab.path("htpasswd"), format!("ironic:{hash}\n")).unwrap();
    set_mode(&lab.path("htpasswd"), 0o600);
    let pki_dir = lab.path("pki");
    std::fs::create_dir(&pki_dir).unwrap();
    let pki = Pki::new(&pki_dir, "ca");
    let server = pki.issue("ca", "server", true);
    Setup { lab, pki, server }
}

impl Setup {
    fn argv(&self, extra: &[&str]) -> Vec<String> {
        let mut v = vec![
            common::mercury_bin().display().to_string(),
            "--config".into(),
            self.lab.config.display().to_string(),
            "serve-jsonrpc".into(),
            "--inetd".into(),
            "--htpasswd".into(),
            self.lab.path("htpasswd").display().to_string(),
        ];
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    }

    fn tls_argv(&self, extra: &[&str]) -> Vec<String> {
        let mut args = vec![
            "--tls-cert".to_string(),
            self.server.0.display().to_string(),
            "--tls-key".into(),
            self.server.1.display().to_string(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.argv(&args)
    }

    fn activator(&self, argv: Vec<String>) -> Activator {
        Activator::start(
            &argv,
            self.lab
                .path(&format!("activator-{}.log", common::tls::free_port())),
        )
    }
}

fn request(body: &str) -> String {
    format!(
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: {GOOD}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn update_port(port: &str, vlan: u16) -> String {
    request(&format!(
        r#"{{"jsonrpc": "2.0", "method": "update_port", "params": {{"switch_id": "sw1", "port_name": "{port}", "description": "d", "mode": "access", "native_vlan": {vlan}, "allowed_vlans": null, "lag_name": null, "default_vlan": null, "context": {{}}}}, "id": "t1"}}"#
    ))
}

fn get_switches() -> String {
    request(r#"{"jsonrpc": "2.0", "method": "get_switches", "params": {}, "id": "g"}"#)
}

/// The JSON body of the one HTTP response in `text`.
fn body(text: &str) -> Value {
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    let (_, b) = text.split_once("\r\n\r\n").unwrap();
    serde_json::from_str(b).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The `started` audit records of JSON-RPC calls (not the lab's own setup).
fn started(lab: &Lab) -> Vec<Value> {
    lab.audit()
        .into_iter()
        .filter(|r| r["event"] == "started" && r["who"]["http_user"].is_string())
        .collect()
}

/// Issue 16 item 7: under socket activation nothing sets REMOTE_ADDR or SOCAT_PEERADDR;
/// the audit record used to have no client at all. It is the inherited socket's peer.
#[test]
fn audit_names_the_client_under_socket_activation() {
    require!(ACTIVATE);
    let s = setup();
    let a = s.activator(s.argv(&[]));
    let mut c = TcpStream::connect(("127.0.0.1", a.port)).unwrap();
    c.write_all(update_port("Gi1/0/5", 120).as_bytes()).unwrap();
    let mut text = String::new();
    c.read_to_string(&mut text).unwrap();
    assert_eq!(body(&text)["result"]["status"], "configured", "{text}");
    assert_eq!(
        s.lab.port("sw1", "GigabitEthernet1/0/5")["access_vlan"],
        120
    );
    let rec = started(&s.lab);
    assert_eq!(rec.len(), 1, "{rec:?}");
    assert_eq!(rec[0]["who"]["http_client"], "127.0.0.1", "{}", rec[0]);
    assert_eq!(rec[0]["who"]["http_user"], "ironic");
}

#[test]
fn a_tls13_call_from_openssl_s_client() {
    require!(ACTIVATE, OPENSSL);
    let s = setup();
    let a = s.activator(s.tls_argv(&[]));
    let ca = s.pki.path("ca.crt");
    let c = s_client(a.port, &ca, &["-tls1_3"], &update_port("Gi1/0/6", 120));
    assert!(c.ok, "{c:?}\n{}", a.log_text());
    assert_eq!(body(&c.stdout)["result"]["native_vlan"], 120);
    assert_eq!(
        s.lab.port("sw1", "GigabitEthernet1/0/6")["access_vlan"],
        120
    );
    let rec = started(&s.lab);
    assert_eq!(rec[0]["who"]["http_client"], "127.0.0.1");
    assert!(rec[0]["who"].get("tls_client").is_none(), "{}", rec[0]);

    // s_client's default offers 1.3 and 1.2: 1.3 is chosen.
    let c = s_client(a.port, &ca, &["-brief"], &get_switches());
    assert!(c.ok, "{c:?}");
    assert!(
        c.stderr.contains("Protocol version: TLSv1.3"),
        "{}",
        c.stderr
    );
    assert!(body(&c.stdout)["result"]["02:00:00:00:01:01"].is_object());
    // A plain-text client on the TLS port gets no HTTP answer and runs nothing.
    let mut plain = TcpStream::connect(("127.0.0.1", a.port)).unwrap();
    plain.write_all(get_switches().as_bytes()).unwrap();
    let mut text = Vec::new();
    let _ = plain.read_to_end(&mut text);
    assert!(!String::from_utf8_lossy(&text).contains("HTTP/1.1"));
    assert_eq!(started(&s.lab).len(), 1);
}

#[test]
fn tls12_is_refused_unless_allowed() {
    require!(ACTIVATE, OPENSSL);
    let s = setup();
    let ca = s.pki.path("ca.crt");
    let strict = s.activator(s.tls_argv(&[]));
    let c = s_client(strict.port, &ca, &["-tls1_2"], &get_switches());
    assert!(!c.ok, "{c:?}");
    assert!(c.stdout.is_empty(), "{c:?}");
    assert!(
        c.stderr.contains("protocol version") || c.stderr.contains("alert"),
        "{}",
        c.stderr
    );
    let loose = s.activator(s.tls_argv(&["--tls-min-version", "1.2"]));
    let c = s_client(loose.port, &ca, &["-tls1_2", "-brief"], &get_switches());
    assert!(c.ok, "{c:?}\n{}", loose.log_text());
    assert!(
        c.stderr.contains("Protocol version: TLSv1.2"),
        "{}",
        c.stderr
    );
    assert!(body(&c.stdout)["result"]["02:00:00:00:01:01"].is_object());
}

#[test]
fn a_client_certificate_is_required_when_a_ca_is_configured() {
    require!(ACTIVATE, OPENSSL);
    let s = setup();
    let ca = s.pki.path("ca.crt");
    let (cert, key) = s.pki.issue("ca", "conductor", false);
    // A certificate from another CA.
    Pki::new(&s.pki.dir, "rogue-ca");
    let (rogue, rogue_key) = s.pki.issue("rogue-ca", "rogue", false);
    let a = s.activator(s.tls_argv(&["--tls-client-ca", ca.to_str().unwrap()]));

    let c = s_client(a.port, &ca, &[], &update_port("Gi1/0/7", 120));
    assert!(!c.stdout.contains("HTTP/1.1"), "{c:?}");
    let c = s_client(
        a.port,
        &ca,
        &[
            "-cert",
            rogue.to_str().unwrap(),
            "-key",
            rogue_key.to_str().unwrap(),
        ],
        &update_port("Gi1/0/7", 120),
    );
    assert!(!c.stdout.contains("HTTP/1.1"), "{c:?}");
    assert!(started(&s.lab).is_empty(), "a refused client's call ran");
    assert_ne!(
        s.lab.port("sw1", "GigabitEthernet1/0/7")["access_vlan"],
        120
    );
    assert!(
        a.log_text().contains("TLS handshake or record refused"),
        "{}",
        a.log_text()
    );

    let c = s_client(
        a.port,
        &ca,
        &[
            "-cert",
            cert.to_str().unwrap(),
            "-key",
            key.to_str().unwrap(),
        ],
        &update_port("Gi1/0/7", 120),
    );
    assert!(c.ok, "{c:?}\n{}", a.log_text());
    assert_eq!(body(&c.stdout)["result"]["status"], "configured");
    let rec = started(&s.lab);
    assert_eq!(rec.len(), 1);
    // The audit record carries the client certificate's fingerprint, as openssl sees it.
    let out = std::process::Command::new(OPENSSL)
        .args(["x509", "-noout", "-fingerprint", "-sha256", "-in"])
        .arg(&cert)
        .output()
        .unwrap();
    let fp = String::from_utf8_lossy(&out.stdout)
        .split('=')
        .nth(1)
        .unwrap()
        .trim()
        .replace(':', "")
        .to_ascii_lowercase();
    assert_eq!(rec[0]["who"]["tls_client"], format!("SHA256:{fp}"));
}

#[test]
fn a_private_key_others_can_read_is_refused() {
    require!(OPENSSL);
    let s = setup();
    set_mode(&s.server.1, 0o644);
    let r = common::mercury(s.tls_argv(&[]).into_iter().skip(1)).run();
    assert_eq!(r.code, 78, "{r:?}");
    assert!(r.stderr.contains("unsafe permissions"), "{}", r.stderr);
    assert!(!r.stderr.contains("PRIVATE KEY"), "{}", r.stderr);
    // A key that is not PEM names the file and never its content.
    std::fs::write(&s.server.1, "hunter2-not-a-key\n").unwrap();
    set_mode(&s.server.1, 0o600);
    let r = common::mercury(s.tls_argv(&[]).into_iter().skip(1)).run();
    assert_eq!(r.code, 78, "{r:?}");
    assert!(r.stderr.contains("no PEM private key"), "{}", r.stderr);
    assert!(!r.stderr.contains("hunter2"), "{}", r.stderr);
    // --tls-key without --tls-cert is a usage error.
    let r = common::mercury([
        "serve-jsonrpc",
        "--inetd",
        "--htpasswd",
        "x",
        "--tls-key",
        "k",
    ])
    .run();
    assert_eq!(r.code, 64, "{r:?}");
}

#[test]
fn the_shipped_tls_systemd_unit_runs_a_valid_command_line() {
    require!(OPENSSL);
    let s = setup();
    let unit = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("integrations/systemd/mercury-jsonrpc-tls@.service"),
    )
    .unwrap();
    let exec = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .expect("ExecStart");
    let mut words = exec.split_whitespace();
    assert!(words.next().unwrap().ends_with("/mercury"));
    // The unit's paths, pointed at this test's files.
    let args: Vec<String> = words
        .map(|w| match w {
            "/etc/mercury/mercury.toml" => s.lab.config.display().to_string(),
            "/etc/mercury/jsonrpc.htpasswd" => s.lab.path("htpasswd").display().to_string(),
            "/etc/mercury/tls/jsonrpc.crt" => s.server.0.display().to_string(),
            "/etc/mercury/tls/jsonrpc.key" => s.server.1.display().to_string(),
            other => other.to_string(),
        })
        .collect();
    assert!(args.iter().any(|a| a == "--tls-cert"), "{exec}");
    assert!(!args.iter().any(|a| a.starts_with("/etc/")), "{args:?}");
    // The TLS material loads, the connection closes at once: exit 0, nothing written.
    let out = common::mercury(&args).run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
}
