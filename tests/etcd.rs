//! The etcd lock backend against a real etcd (Debian's `etcd-server`, `/usr/bin/etcd`)
//! started on free 127.0.0.1 ports with a temporary data dir: two executor "hosts" (two
//! config files with their own lock_dir and audit log) share one simulated device.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Lab, SimDevice};

const ETCD: &str = "/usr/bin/etcd";

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A throwaway single-member etcd cluster.
struct Etcd {
    child: Child,
    _dir: tempfile::TempDir,
    url: String,
    port: u16,
}

/// The server side of a TLS etcd: its certificate and key, and the CA whose client
/// certificates it accepts (`--client-cert-auth`).
struct EtcdTls {
    cert: PathBuf,
    key: PathBuf,
    client_ca: PathBuf,
}

impl Etcd {
    fn start() -> Etcd {
        Etcd::start_with(None)
    }

    fn start_with(tls: Option<&EtcdTls>) -> Etcd {
        assert!(
            std::path::Path::new(ETCD).exists(),
            "{ETCD} is missing: apt-get install etcd-server (scripts/test does)"
        );
        let dir = tempfile::tempdir().unwrap();
        let (client, peer) = (free_port(), free_port());
        let scheme = if tls.is_some() { "https" } else { "http" };
        let url = format!("{scheme}://127.0.0.1:{client}");
        let peer_url = format!("http://127.0.0.1:{peer}");
        let mut cmd = Command::new(ETCD);
        if let Some(t) = tls {
            cmd.arg("--cert-file")
                .arg(&t.cert)
                .arg("--key-file")
                .arg(&t.key)
                .arg("--trusted-ca-file")
                .arg(&t.client_ca)
                .arg("--client-cert-auth");
        }
        let child = cmd
            .args(["--name", "t", "--data-dir"])
            .arg(dir.path().join("data"))
            .args([
                "--listen-client-urls",
                &url,
                "--advertise-client-urls",
                &url,
            ])
            .args([
                "--listen-peer-urls",
                &peer_url,
                "--initial-advertise-peer-urls",
                &peer_url,
            ])
            .args(["--initial-cluster", &format!("t={peer_url}")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(
                std::fs::File::create(dir.path().join("etcd.log")).unwrap(),
            ))
            .spawn()
            .expect("start etcd");
        let etcd = Etcd {
            child,
            _dir: dir,
            url,
            port: client,
        };
        let t = Instant::now();
        let log = etcd._dir.path().join("etcd.log");
        let ready = |etcd: &Etcd| {
            if tls.is_some() {
                // Only a client with a certificate could ask /health: wait for the log line.
                std::fs::read_to_string(&log)
                    .unwrap_or_default()
                    .contains("serving client requests on")
            } else {
                etcd.healthy()
            }
        };
        while !ready(&etcd) {
            assert!(t.elapsed() < Duration::from_secs(30), "etcd did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        etcd
    }

    /// One JSON-gateway call; the response body.
    fn post(&self, path: &str, body: &str, token: Option<&str>) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let auth = token
            .map(|t| format!("Authorization: {t}\r\n"))
            .unwrap_or_default();
        write!(
            s,
            "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n{auth}Connection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut text = String::new();
        let _ = s.read_to_string(&mut text);
        text
    }

    fn healthy(&self) -> bool {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
        if s.write_all(b"GET /health HTTP/1.0\r\n\r\n").is_err() {
            return false;
        }
        let mut text = String::new();
        let _ = s.read_to_string(&mut text);
        text.contains("\"health\":\"true\"")
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Host A is the lab's own config; host B a second config (own lock_dir and audit log)
/// over the same devices and simulator state. `sim_b` rewrites B's simulator flags.
struct Hosts {
    lab: Lab,
    b: PathBuf,
}

fn lock_table(etcd: &Etcd, host: &str, ttl: u32) -> String {
    format!(
        "\n[lock]\nbackend = \"etcd\"\nendpoints = [\"{}\"]\nhost = \"{host}\"\nlease_ttl = {ttl}\n",
        etcd.url
    )
}

impl Hosts {
    fn new(devices: &[SimDevice], lock_a: &str, lock_b: &str) -> Hosts {
        let lab = Lab::new(devices);
        let base = std::fs::read_to_string(&lab.config).unwrap();
        lab.append_config(lock_a);
        let hosts = Hosts {
            b: lab.path("host-b.toml"),
            lab,
        };
        hosts.write_b(&base, lock_b, |t| t);
        hosts
    }

    fn write_b(&self, base: &str, lock_b: &str, edit: impl Fn(String) -> String) {
        let text = base
            .replace("lock_dir = \"locks\"", "lock_dir = \"locks-b\"")
            .replace("audit_log = \"audit.log\"", "audit_log = \"audit-b.log\"");
        std::fs::write(&self.b, format!("{}{lock_b}", edit(text))).unwrap();
        common::set_mode(&self.b, 0o600);
    }

    fn a(&self, args: &[&str]) -> common::Run {
        self.lab.mercury(args)
    }

    fn b(&self, args: &[&str]) -> common::Run {
        let mut all = vec!["--config", self.b.to_str().unwrap()];
        all.extend(args);
        common::mercury(all)
    }
}

fn attach_args<'a>(device: &'a str, port: &'a str, vlan: &'a str, id: &'a str) -> Vec<&'a str> {
    vec![
        "attach-port",
        "--device",
        device,
        "--port",
        port,
        "--vlan",
        vlan,
        "--reason",
        "etcd",
        "--request-id",
        id,
    ]
}

fn add_vlans(hosts: &Hosts, device: &str, vlans: &[u32]) {
    for v in vlans {
        hosts
            .a(&[
                "add-network",
                "--device",
                device,
                "--vlan",
                &v.to_string(),
                "--reason",
                "setup",
            ])
            .run()
            .expect(0);
    }
}

/// Runs 4 requests per host at once on one device; returns the simulator state.
fn race_two_hosts(hosts: &Hosts, device: &str) -> serde_json::Value {
    let mut children = Vec::new();
    for i in 1..=8u32 {
        let port = format!("Gi1/0/{i}");
        let vlan = (100 + i).to_string();
        let id = format!("r{i}");
        let args = attach_args(device, &port, &vlan, &id);
        let run = if i % 2 == 0 {
            hosts.a(&args)
        } else {
            hosts.b(&args)
        };
        children.push((i, run.spawn()));
    }
    for (i, c) in children {
        let r = common::finish(c);
        let v = r.expect(0);
        assert_eq!(v["request_id"], format!("r{i}"));
    }
    let state = hosts.lab.state(device);
    for i in 1..=8u32 {
        assert_eq!(
            state["running"]["ports"][format!("GigabitEthernet1/0/{i}")]["access_vlan"],
            100 + i,
            "port {i}"
        );
    }
    state
}

#[test]
fn two_hosts_never_open_more_sessions_than_allowed() {
    let etcd = Etcd::start();
    let hosts = Hosts::new(
        &[
            SimDevice {
                // The simulator refuses a second session, so a lock violation fails a run.
                sim_args: &["--fault", "slow=40", "--fault", "max-sessions=1"],
                ..SimDevice::new("leaf", "cisco_ios")
            },
            SimDevice {
                sim_args: &["--fault", "slow=40", "--fault", "max-sessions=2"],
                extra: "max_sessions = 2",
                ..SimDevice::new("leaf2", "cisco_ios")
            },
        ],
        &lock_table(&etcd, "exec-a", 5),
        &lock_table(&etcd, "exec-b", 5),
    );
    let vlans: Vec<u32> = std::iter::once(10).chain(101..=108).collect();
    add_vlans(&hosts, "leaf", &vlans);
    add_vlans(&hosts, "leaf2", &vlans);

    let state = race_two_hosts(&hosts, "leaf");
    assert_eq!(state["sessions"]["max_seen"], 1, "{}", state["sessions"]);
    let state = race_two_hosts(&hosts, "leaf2");
    assert!(
        state["sessions"]["max_seen"].as_u64().unwrap() <= 2,
        "{}",
        state["sessions"]
    );
    // Both hosts' audit logs have their own requests.
    let b_audit = std::fs::read_to_string(hosts.lab.path("audit-b.log")).unwrap();
    assert!(b_audit.contains("\"r1\"") && !b_audit.contains("\"r2\""));
}

/// The control: per-host lock files alone let two hosts open concurrent sessions — what
/// the etcd backend exists to prevent.
#[test]
fn file_locks_alone_let_two_hosts_overlap() {
    let hosts = Hosts::new(
        &[SimDevice {
            sim_args: &["--fault", "slow=100"],
            ..SimDevice::new("leaf", "cisco_ios")
        }],
        "",
        "",
    );
    add_vlans(&hosts, "leaf", &[10, 101, 102]);
    let a = hosts.a(&attach_args("leaf", "Gi1/0/1", "101", "a")).spawn();
    let b = hosts.b(&attach_args("leaf", "Gi1/0/2", "102", "b")).spawn();
    common::finish(a).expect(0);
    common::finish(b).expect(0);
    assert_eq!(hosts.lab.state("leaf")["sessions"]["max_seen"], 2);
}

#[test]
fn a_killed_holder_frees_the_etcd_slot_after_the_lease_ttl() {
    let etcd = Etcd::start();
    let hosts = Hosts::new(
        &[SimDevice {
            sim_args: &["--fault", "slow=400"],
            ..SimDevice::new("leaf", "cisco_ios")
        }],
        &lock_table(&etcd, "exec-a", 2),
        &lock_table(&etcd, "exec-b", 2),
    );
    add_vlans(&hosts, "leaf", &[10, 101, 102]);
    let base = std::fs::read_to_string(&hosts.lab.config)
        .unwrap()
        .replace(&lock_table(&etcd, "exec-a", 2), "");
    // Host B: a short lock wait, and a fast device (same simulator state).
    let b_lock = lock_table(&etcd, "exec-b", 2);
    hosts.write_b(&base, &b_lock, |t| {
        t.replace("lock_timeout = 20", "lock_timeout = 0.5")
            .replace(",\"--fault\",\"slow=400\"", "")
    });

    let mut a = hosts.a(&attach_args("leaf", "Gi1/0/1", "101", "a")).spawn();
    // A holds the etcd slot once its session has started.
    let t = Instant::now();
    while hosts.lab.state("leaf")["sessions"]["active"] == 0 {
        assert!(t.elapsed() < Duration::from_secs(20), "A never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Longer than the TTL: only the keepalive keeps A's slot.
    std::thread::sleep(Duration::from_millis(2500));
    let busy = hosts
        .b(&attach_args("leaf", "Gi1/0/2", "102", "b-busy"))
        .run();
    let v = busy.expect(75);
    let msg = v["msg"].as_str().unwrap();
    assert!(
        msg.contains("lock not acquired") && msg.contains("on exec-a") && msg.contains("request a"),
        "{msg}"
    );

    a.kill().unwrap();
    let _ = a.wait();
    let killed = Instant::now();
    hosts.write_b(&base, &b_lock, |t| {
        t.replace("lock_timeout = 20", "lock_timeout = 10")
            .replace(",\"--fault\",\"slow=400\"", "")
    });
    hosts
        .b(&attach_args("leaf", "Gi1/0/2", "102", "b"))
        .run()
        .expect(0);
    let waited = killed.elapsed();
    // The lease was refreshed every TTL/3, so between 2/3 TTL and one TTL remained.
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(15),
        "{waited:?}"
    );
    // Released on exit (lease revoked), not left to expire: the next request is instant.
    hosts.write_b(&base, &b_lock, |t| {
        t.replace("lock_timeout = 20", "lock_timeout = 0.5")
            .replace(",\"--fault\",\"slow=400\"", "")
    });
    hosts
        .b(&attach_args("leaf", "Gi1/0/3", "101", "b-again"))
        .run()
        .expect(0);
}

/// Regression: a waiter's own lease was only kept alive once it held a slot, so a wait
/// longer than the lease TTL ended in 75 "requested lease not found" although the lock
/// timeout had not passed.
#[test]
fn a_wait_longer_than_the_lease_ttl_still_gets_the_slot() {
    let etcd = Etcd::start();
    let hosts = Hosts::new(
        &[SimDevice {
            sim_args: &["--fault", "slow=400"],
            ..SimDevice::new("leaf", "cisco_ios")
        }],
        &lock_table(&etcd, "exec-a", 2),
        &lock_table(&etcd, "exec-b", 2),
    );
    add_vlans(&hosts, "leaf", &[10, 101, 102]);
    let a = hosts.a(&attach_args("leaf", "Gi1/0/1", "101", "a")).spawn();
    let t = Instant::now();
    while hosts.lab.state("leaf")["sessions"]["active"] == 0 {
        assert!(t.elapsed() < Duration::from_secs(20), "A never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // A's session takes several seconds (a dozen lines at 400 ms): B waits through
    // more than one TTL of its own lease.
    let b = hosts.b(&attach_args("leaf", "Gi1/0/2", "102", "b")).run();
    b.expect(0);
    common::finish(a).expect(0);
    let state = hosts.lab.state("leaf");
    assert_eq!(
        state["running"]["ports"]["GigabitEthernet1/0/2"]["access_vlan"],
        102
    );
    assert_eq!(state["sessions"]["max_seen"], 1, "{}", state["sessions"]);
}

#[test]
fn an_unreachable_etcd_is_a_temporary_failure() {
    let closed = free_port();
    let lab = Lab::new(&[SimDevice::new("leaf", "cisco_ios")]);
    lab.append_config(&format!(
        "\n[lock]\nbackend = \"etcd\"\nendpoints = [\"http://127.0.0.1:{closed}\"]\nrequest_timeout = 1\n"
    ));
    let v = lab
        .mercury(attach_args("leaf", "Gi1/0/1", "101", "x"))
        .run()
        .expect(75);
    assert!(v["msg"].as_str().unwrap().contains("lock service"), "{v}");
    assert!(lab.transcript("leaf").is_empty(), "device contacted");
}

#[test]
fn a_credentials_file_authenticates_to_etcd() {
    let etcd = Etcd::start();
    for (path, body) in [
        (
            "/v3/auth/user/add",
            r#"{"name":"root","password":"s3cret"}"#,
        ),
        ("/v3/auth/user/grant", r#"{"user":"root","role":"root"}"#),
        ("/v3/auth/enable", "{}"),
    ] {
        let r = etcd.post(path, body, None);
        assert!(r.starts_with("HTTP/1.1 200"), "{path}: {r}");
    }
    let lab = Lab::new(&[SimDevice::new("leaf", "cisco_ios")]);
    lab.append_config(&format!(
        "\n[lock]\nbackend = \"etcd\"\nendpoints = [\"{}\"]\ncredentials_file = \"etcd.cred\"\n",
        etcd.url
    ));
    let cred = lab.path("etcd.cred");
    std::fs::write(&cred, "root:s3cret\n").unwrap();
    common::set_mode(&cred, 0o600);
    lab.mercury([
        "add-network",
        "--device",
        "leaf",
        "--vlan",
        "101",
        "--reason",
        "r",
    ])
    .run()
    .expect(0);
    std::fs::write(&cred, "root:wrong\n").unwrap();
    let v = lab
        .mercury(attach_args("leaf", "Gi1/0/1", "101", "x"))
        .run()
        .expect(77);
    assert!(
        v["msg"].as_str().unwrap().contains("authentication failed"),
        "{v}"
    );
    common::set_mode(&cred, 0o644);
    lab.mercury(attach_args("leaf", "Gi1/0/1", "101", "y"))
        .run()
        .expect(78);
    // Without credentials, etcd refuses the lock transaction.
    let t = std::fs::read_to_string(&lab.config)
        .unwrap()
        .replace("credentials_file = \"etcd.cred\"\n", "");
    lab.write_config(&t);
    lab.mercury(attach_args("leaf", "Gi1/0/1", "101", "z"))
        .run()
        .expect(77);
}

/// A TLS etcd with `--client-cert-auth` (as production clusters run), its CA, and a
/// client certificate for Mercury, all made by the `openssl` CLI.
struct TlsEtcd {
    etcd: Etcd,
    pki: common::tls::Pki,
    _dir: tempfile::TempDir,
}

fn tls_etcd() -> Option<TlsEtcd> {
    if !common::tls::available(&[common::tls::OPENSSL]) {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let pki = common::tls::Pki::new(dir.path(), "etcd-ca");
    let (cert, key) = pki.issue("etcd-ca", "etcd-server", true);
    pki.issue("etcd-ca", "mercury-client", false);
    let etcd = Etcd::start_with(Some(&EtcdTls {
        cert,
        key,
        client_ca: pki.path("etcd-ca.crt"),
    }));
    Some(TlsEtcd {
        etcd,
        pki,
        _dir: dir,
    })
}

impl TlsEtcd {
    /// A `[lock]` table for host `host` with the CA and (optionally) the client certificate.
    fn lock_table(&self, host: &str, ttl: u32, client_cert: bool) -> String {
        let mut t = format!(
            "\n[lock]\nbackend = \"etcd\"\nendpoints = [\"{}\"]\nhost = \"{host}\"\nlease_ttl = {ttl}\nca_file = \"{}\"\n",
            self.etcd.url,
            self.pki.path("etcd-ca.crt").display()
        );
        if client_cert {
            t.push_str(&format!(
                "cert_file = \"{}\"\nkey_file = \"{}\"\n",
                self.pki.path("mercury-client.crt").display(),
                self.pki.path("mercury-client.key").display()
            ));
        }
        t
    }
}

/// Issue 12/13: production etcd always has TLS with client certificates; before, only a
/// local TLS-terminating proxy worked (https:// endpoints and ca_file were refused). The
/// lock semantics hold over mutual TLS: two hosts never open more sessions than allowed.
#[test]
fn two_hosts_share_locks_through_etcd_with_mutual_tls() {
    let Some(etcd) = tls_etcd() else { return };
    let hosts = Hosts::new(
        &[SimDevice {
            sim_args: &["--fault", "slow=40", "--fault", "max-sessions=1"],
            ..SimDevice::new("leaf", "cisco_ios")
        }],
        &etcd.lock_table("exec-a", 5, true),
        &etcd.lock_table("exec-b", 5, true),
    );
    let vlans: Vec<u32> = std::iter::once(10).chain(101..=108).collect();
    add_vlans(&hosts, "leaf", &vlans);
    let state = race_two_hosts(&hosts, "leaf");
    assert_eq!(state["sessions"]["max_seen"], 1, "{}", state["sessions"]);
}

#[test]
fn etcd_tls_refusals_are_not_permitted_and_touch_nothing() {
    let Some(etcd) = tls_etcd() else { return };
    let lab = Lab::new(&[SimDevice::new("leaf", "cisco_ios")]);
    let base = std::fs::read_to_string(&lab.config).unwrap();
    let attach = |lock: &str| {
        lab.write_config(&format!("{base}{lock}"));
        lab.mercury(attach_args("leaf", "Gi1/0/1", "101", "x"))
            .run()
    };

    // No client certificate: etcd refuses it after the TLS 1.3 handshake, with the alert
    // CertificateRequired or BadCertificate (both seen from the same etcd, run to run).
    // Whether the client reads the alert (77) or meets the closed connection first (75) is
    // a race; either way nothing runs and the message says a client certificate is needed.
    let r = attach(&etcd.lock_table("exec-a", 5, false));
    let v = r.json();
    assert!(r.code == 77 || r.code == 75, "{v}");
    let msg = v["msg"].as_str().unwrap();
    assert!(
        msg.contains("CertificateRequired") || msg.contains("client certificate"),
        "{v}"
    );

    // etcd's certificate checked against a CA that did not sign it.
    common::tls::Pki::new(&etcd.pki.dir, "other-ca");
    let wrong_ca = etcd.lock_table("exec-a", 5, true).replace(
        &etcd.pki.path("etcd-ca.crt").display().to_string(),
        &etcd.pki.path("other-ca.crt").display().to_string(),
    );
    let v = attach(&wrong_ca).expect(77);
    assert!(v["msg"].as_str().unwrap().contains("TLS"), "{v}");

    // A client key others can read is a configuration error, before any connection.
    let key = etcd.pki.path("mercury-client.key");
    common::set_mode(&key, 0o644);
    let v = attach(&etcd.lock_table("exec-a", 5, true)).expect(78);
    assert!(
        v["msg"].as_str().unwrap().contains("unsafe permissions"),
        "{v}"
    );
    // `mercury check` finds the same.
    let v = lab.mercury(["check"]).run().json();
    assert!(
        v["data"]["problems"].as_array().unwrap().iter().any(|p| {
            let p = p.as_str().unwrap();
            p.contains("mercury-client.key") && p.contains("unsafe permissions")
        }),
        "{v}"
    );
    common::set_mode(&key, 0o600);
    assert!(lab.transcript("leaf").is_empty(), "device contacted");

    // Configuration mistakes: https without a CA, TLS keys with http.
    let no_ca = etcd.lock_table("exec-a", 5, false).replace(
        &format!("ca_file = \"{}\"\n", etcd.pki.path("etcd-ca.crt").display()),
        "",
    );
    let v = attach(&no_ca).expect(78);
    assert!(v["msg"].as_str().unwrap().contains("ca_file"), "{v}");
    let http_with_ca = etcd
        .lock_table("exec-a", 5, false)
        .replace("https://", "http://");
    let v = attach(&http_with_ca).expect(78);
    assert!(
        v["msg"].as_str().unwrap().contains("only used with https"),
        "{v}"
    );

    // And with everything right, the change is made.
    lab.write_config(&format!("{base}{}", etcd.lock_table("exec-a", 5, true)));
    lab.mercury([
        "add-network",
        "--device",
        "leaf",
        "--vlan",
        "101",
        "--reason",
        "r",
    ])
    .run()
    .expect(0);
    attach(&etcd.lock_table("exec-a", 5, true)).expect(0);
    assert_eq!(lab.port("leaf", "GigabitEthernet1/0/1")["access_vlan"], 101);
}
