//! TLS fixtures made with the `openssl` command-line tool (a client and a CA nobody on this
//! project wrote): a throwaway CA, server and client certificates signed by it, and
//! `openssl s_client` as a client. Plus `systemd-socket-activate`, which serves a port on
//! 127.0.0.1 the way systemd's `Accept=yes` socket units do (fd 0/1 = the accepted socket).
//!
//! Outside CI a missing `openssl` or `systemd-socket-activate` skips the test with a note;
//! under CI (`CI` set) it is a failure.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const OPENSSL: &str = "/usr/bin/openssl";
pub const ACTIVATE: &str = "/usr/bin/systemd-socket-activate";

/// Whether the tools are here (see the module doc for what happens when not).
pub fn available(tools: &[&str]) -> bool {
    let missing: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|t| !Path::new(t).exists())
        .collect();
    if missing.is_empty() {
        return true;
    }
    let why = format!(
        "{} missing (apt-get install openssl systemd; scripts/test does it as root)",
        missing.join(", ")
    );
    if std::env::var_os("CI").is_some() {
        panic!("TLS tests cannot run: {why}");
    }
    eprintln!("SKIPPED: {why}");
    false
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new(OPENSSL)
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA and certificates it signed, in a directory. Keys are mode 0600.
pub struct Pki {
    pub dir: PathBuf,
}

impl Pki {
    /// A CA named `name` (files `<name>.crt`, `<name>.key`) in `dir`.
    pub fn new(dir: &Path, name: &str) -> Pki {
        let pki = Pki {
            dir: dir.to_path_buf(),
        };
        openssl(
            dir,
            &[
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-days",
                "2",
                "-subj",
                &format!("/CN={name}"),
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &format!("{name}.crt"),
            ],
        );
        super::set_mode(&dir.join(format!("{name}.key")), 0o600);
        pki
    }

    /// A certificate `<name>.crt` + key `<name>.key` signed by CA `ca`; `server` adds the
    /// 127.0.0.1 address and serverAuth (and clientAuth: etcd's JSON gateway dials its own
    /// gRPC port with the server certificate, which `--client-cert-auth` then checks),
    /// otherwise clientAuth only.
    pub fn issue(&self, ca: &str, name: &str, server: bool) -> (PathBuf, PathBuf) {
        let ext = if server {
            "basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n"
        } else {
            "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n"
        };
        std::fs::write(self.dir.join(format!("{name}.ext")), ext).unwrap();
        openssl(
            &self.dir,
            &[
                "req",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-subj",
                &format!("/CN={name}"),
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &format!("{name}.csr"),
            ],
        );
        openssl(
            &self.dir,
            &[
                "x509",
                "-req",
                "-in",
                &format!("{name}.csr"),
                "-CA",
                &format!("{ca}.crt"),
                "-CAkey",
                &format!("{ca}.key"),
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                &format!("{name}.ext"),
                "-out",
                &format!("{name}.crt"),
            ],
        );
        let key = self.dir.join(format!("{name}.key"));
        super::set_mode(&key, 0o600);
        (self.dir.join(format!("{name}.crt")), key)
    }

    pub fn path(&self, file: &str) -> PathBuf {
        self.dir.join(file)
    }
}

/// `systemd-socket-activate --inetd --accept` on 127.0.0.1: one `argv` process per
/// connection, its stdin/stdout the accepted socket, its stderr the log.
pub struct Activator {
    child: Child,
    pub port: u16,
    pub log: PathBuf,
}

impl Activator {
    pub fn start(argv: &[String], log: PathBuf) -> Activator {
        let port = free_port();
        let child = Command::new(ACTIVATE)
            .args(["--inetd", "--accept", "-l"])
            .arg(format!("127.0.0.1:{port}"))
            .args(argv)
            .env_remove("REMOTE_ADDR")
            .env_remove("SOCAT_PEERADDR")
            .env_remove("SSH_CONNECTION")
            .env_remove("MERCURY_CONFIG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(std::fs::File::create(&log).unwrap()))
            .spawn()
            .expect("start systemd-socket-activate");
        let a = Activator { child, port, log };
        let t = Instant::now();
        while !a.log_text().contains("Listening on") {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "systemd-socket-activate did not listen: {}",
                a.log_text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        a
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Activator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What `openssl s_client` got.
#[derive(Debug)]
pub struct Client {
    pub ok: bool,
    /// What the server sent (decrypted).
    pub stdout: String,
    pub stderr: String,
}

/// Sends `input` over TLS with `openssl s_client` (verifying the server against `ca`) and
/// returns what came back once the server closed. `extra`: `-tls1_2`, `-cert`, ...
pub fn s_client(port: u16, ca: &Path, extra: &[&str], input: &str) -> Client {
    let mut child = Command::new(OPENSSL)
        .args(["s_client", "-connect"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("-CAfile")
        .arg(ca)
        .args(["-verify_return_error", "-verify_ip", "127.0.0.1", "-quiet"])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("openssl s_client");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_string();
    std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
        // -quiet implies -ign_eof: the client waits for the server to close.
    });
    let out = child.wait_with_output().unwrap();
    Client {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
