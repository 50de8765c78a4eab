//! A throwaway OpenSSH `sshd` on 127.0.0.1 for the OVS-over-SSH tests, reached with the
//! system `ssh` client through Mercury's `command` transport (each line on its own exec
//! channel, as `ssh host LINE`). Host and client keys, `authorized_keys` and `known_hosts`
//! live in a temp dir; only the current user may log in, with the test key.
//!
//! A stop-gap until the SSH branch's own sshd harness and ssh2 transport land; then the same
//! tests gain a `transport = "ssh"` twin.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Read;
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running sshd.
pub struct Sshd {
    pub dir: tempfile::TempDir,
    pub port: u16,
    pub user: String,
    child: Child,
}

fn program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/local/sbin", "/sbin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn keygen(path: &std::path::Path) {
    let st = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "mercury-test", "-f"])
        .arg(path)
        .stdin(Stdio::null())
        .status()
        .expect("ssh-keygen");
    assert!(st.success(), "ssh-keygen {}", path.display());
}

/// Starts sshd, or returns `None` (test skipped) when OpenSSH is not installed outside CI.
pub fn start() -> Option<Sshd> {
    let (Some(sshd), Some(_), Some(_)) = (program("sshd"), program("ssh"), program("ssh-keygen"))
    else {
        if std::env::var_os("CI").is_some() {
            panic!("OpenSSH (sshd, ssh, ssh-keygen) is not installed (scripts/test installs openssh-server)");
        }
        eprintln!("skipping: OpenSSH sshd/ssh is not installed");
        return None;
    };
    let dir = tempfile::Builder::new()
        .prefix("mercury-sshd.")
        .tempdir()
        .expect("tempdir");
    let d = dir.path();
    keygen(&d.join("host_ed25519"));
    keygen(&d.join("client"));
    std::fs::copy(d.join("client.pub"), d.join("authorized_keys")).expect("authorized_keys");
    let user = String::from_utf8(
        Command::new("id")
            .arg("-un")
            .output()
            .expect("id -un")
            .stdout,
    )
    .expect("user name")
    .trim()
    .to_string();
    // sshd started by root insists on its privilege separation directory.
    if Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.starts_with(b"0\n"))
        .unwrap_or(false)
    {
        let _ = std::fs::create_dir_all("/run/sshd");
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let config = format!(
        "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_ed25519\n\
         AuthorizedKeysFile {d}/authorized_keys\nPidFile none\nStrictModes no\nUsePAM no\n\
         PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
         PermitRootLogin prohibit-password\nAllowUsers {user}\nLogLevel ERROR\n",
        d = d.display()
    );
    std::fs::write(d.join("sshd_config"), config).expect("sshd_config");
    let log = std::fs::File::create(d.join("sshd.log")).expect("sshd.log");
    let child = Command::new(&sshd)
        .args(["-D", "-e", "-f"])
        .arg(d.join("sshd_config"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("spawn sshd");
    let host = std::fs::read_to_string(d.join("host_ed25519.pub")).expect("host key");
    std::fs::write(d.join("known_hosts"), format!("[127.0.0.1]:{port} {host}"))
        .expect("known_hosts");
    let s = Sshd {
        dir,
        port,
        user,
        child,
    };
    s.wait_ready();
    Some(s)
}

impl Sshd {
    fn wait_ready(&self) {
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(mut c) = TcpStream::connect(("127.0.0.1", self.port)) {
                let _ = c.set_read_timeout(Some(Duration::from_secs(2)));
                let mut banner = [0u8; 7];
                if c.read_exact(&mut banner).is_ok() && &banner == b"SSH-2.0" {
                    return;
                }
            }
            assert!(
                Instant::now() < until,
                "sshd did not come up: {}",
                std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The `command` transport argv that reaches this sshd with the system ssh client and
    /// strict host-key checking against the test's known_hosts (`known_hosts` overrides it).
    pub fn ssh_argv(&self, known_hosts: Option<&std::path::Path>) -> Vec<String> {
        let d = self.dir.path();
        let known = known_hosts
            .map(|p| p.to_path_buf())
            .unwrap_or_else(|| d.join("known_hosts"));
        [
            "ssh".to_string(),
            "-F".into(),
            "/dev/null".into(),
            "-i".into(),
            d.join("client").display().to_string(),
            "-p".into(),
            self.port.to_string(),
            "-o".into(),
            "BatchMode=yes".into(),
            "-o".into(),
            "IdentitiesOnly=yes".into(),
            "-o".into(),
            "StrictHostKeyChecking=yes".into(),
            "-o".into(),
            format!("UserKnownHostsFile={}", known.display()),
            "-o".into(),
            "GlobalKnownHostsFile=/dev/null".into(),
            "-o".into(),
            "LogLevel=ERROR".into(),
            format!("{}@127.0.0.1", self.user),
        ]
        .to_vec()
    }
}

impl Sshd {
    /// The host key's `SHA256:` fingerprint (for `host_key = ...`).
    pub fn fingerprint(&self) -> String {
        let out = Command::new("ssh-keygen")
            .arg("-lf")
            .arg(self.dir.path().join("host_ed25519.pub"))
            .output()
            .expect("ssh-keygen -lf");
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .nth(1)
            .expect("fingerprint")
            .to_string()
    }

    /// The client's private key.
    pub fn key(&self) -> PathBuf {
        self.dir.path().join("client")
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
