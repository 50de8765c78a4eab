//! A real OpenSSH `sshd` for integration tests, on a free 127.0.0.1 port, with a generated
//! config, host key and user keys in a temp dir; stopped (killed) when dropped.
//!
//! Facts this follows (from the project's CI machines): sshd is started as root by full
//! path (`/usr/sbin/sshd -D -f CONFIG -E LOG`) or PTY sessions fail; `/run/sshd` must exist
//! (privilege separation); `StrictModes no` because keys live under /tmp; `MaxStartups` is
//! raised for concurrent tests. `ForceCommand` puts `mercury-sim` behind every login, the
//! way a switch's CLI sits behind its sshd.
//!
//! Password and keyboard-interactive logins need a real account with a password: the
//! harness creates `mercury-sshtest` once (as root only), with a random password kept in
//! a root-only file under /run, and serialises that setup across test processes with a
//! file lock.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs;
use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::set_mode;

/// The OpenSSH server, by full path (sshd re-executes itself and refuses relative paths).
pub const SSHD: &str = "/usr/sbin/sshd";
/// The account used for password and keyboard-interactive logins.
pub const PASSWORD_USER: &str = "mercury-sshtest";
const PASSWORD_FILE: &str = "/run/mercury-sshtest.password";
const SETUP_LOCK: &str = "/run/mercury-sshtest.lock";

fn is_root() -> bool {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

/// Whether sshd tests can run here. Outside CI a missing sshd or a non-root user skips the
/// test with a message on stderr; under CI (`CI` set) it is a failure, so a broken runner
/// can never pass by skipping.
pub fn available() -> bool {
    let why = if !Path::new(SSHD).exists() {
        Some(format!(
            "{SSHD} is missing (apt-get install openssh-server; scripts/test does it as root)"
        ))
    } else if !is_root() {
        Some("sshd tests need root: sshd only allocates PTYs when started as root".to_string())
    } else {
        None
    };
    match why {
        None => true,
        Some(why) if std::env::var_os("CI").is_some() => panic!("sshd tests cannot run: {why}"),
        Some(why) => {
            eprintln!("SKIPPED: {why}");
            false
        }
    }
}

/// Returns early from a test when sshd tests cannot run here.
#[macro_export]
macro_rules! require_sshd {
    () => {
        if !common::sshd::available() {
            return;
        }
    };
}

/// How to set up one sshd.
#[derive(Clone, Default)]
pub struct SshdOptions {
    /// `ForceCommand` argv (quoted for the login shell); `None` lets logins run anything.
    pub force_command: Option<Vec<String>>,
    /// Allow password and keyboard-interactive logins (through PAM) for [`PASSWORD_USER`].
    pub passwords: bool,
    /// Allow `direct-tcpip` forwarding (a jump host).
    pub forwarding: bool,
    /// Extra sshd_config lines; they come first, so they override the harness's defaults.
    pub extra: String,
    /// More host key types besides ed25519 (`ecdsa`, `rsa`).
    pub extra_host_keys: Vec<&'static str>,
}

/// A running sshd.
pub struct Sshd {
    /// Config, host key, user keys, authorized_keys, log.
    pub dir: tempfile::TempDir,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// The ed25519 host key's `SHA256:` fingerprint (as `ssh-keygen -l` prints it).
    pub fingerprint: String,
    /// The ed25519 host public key, `ssh-ed25519 AAAA...`.
    pub host_public: String,
    /// Every host public key, ed25519 first, then `extra_host_keys` in order.
    pub host_publics: Vec<String>,
    child: Child,
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Generates a key pair with ssh-keygen (`kind`: ed25519, ecdsa, rsa).
pub fn keygen(path: &Path, kind: &str, passphrase: &str) {
    let mut cmd = Command::new("ssh-keygen");
    cmd.args([
        "-q",
        "-t",
        kind,
        "-N",
        passphrase,
        "-C",
        "mercury-test",
        "-f",
    ])
    .arg(path);
    if kind == "rsa" {
        cmd.args(["-b", "2048"]);
    }
    run(&mut cmd);
}

/// The `SHA256:` fingerprint of a public key file.
pub fn fingerprint_of(public: &Path) -> String {
    run(Command::new("ssh-keygen")
        .args(["-l", "-E", "sha256", "-f"])
        .arg(public))
    .split_whitespace()
    .nth(1)
    .expect("fingerprint")
    .to_string()
}

/// A port that was free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

fn quote(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', "'\\''"))
}

impl Sshd {
    /// Starts sshd and waits (bounded) until it accepts connections.
    pub fn start(opts: &SshdOptions) -> Sshd {
        fs::create_dir_all("/run/sshd").expect("/run/sshd");
        let dir = tempfile::tempdir().expect("tempdir");
        let host_key = dir.path().join("ssh_host_ed25519_key");
        keygen(&host_key, "ed25519", "");
        let host_public = fs::read_to_string(host_key.with_extension("pub"))
            .expect("host key")
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ");
        let fingerprint = fingerprint_of(&host_key.with_extension("pub"));
        let mut host_keys = vec![host_key.clone()];
        let mut host_publics = vec![host_public.clone()];
        for kind in &opts.extra_host_keys {
            let k = dir.path().join(format!("ssh_host_{kind}_key"));
            keygen(&k, kind, "");
            let public = fs::read_to_string(k.with_extension("pub")).expect("host key");
            host_publics.push(
                public
                    .split_whitespace()
                    .take(2)
                    .collect::<Vec<_>>()
                    .join(" "),
            );
            host_keys.push(k);
        }
        let authorized = dir.path().join("authorized_keys");
        fs::write(&authorized, "").expect("authorized_keys");
        if opts.passwords {
            ensure_password_user();
            // The forced command runs as that user: let it reach the temp dir.
            set_mode(dir.path(), 0o755);
            set_mode(&authorized, 0o644);
        }
        // Another process may grab the port between our probe and sshd's bind: retry.
        let log = dir.path().join("sshd.log");
        let mut last_log = String::new();
        for _ in 0..5 {
            let port = free_port();
            let config = dir.path().join("sshd_config");
            fs::write(&config, config_text(dir.path(), port, &host_keys, opts)).expect("config");
            let _ = fs::remove_file(&log);
            let mut child = Command::new(SSHD)
                .arg("-D")
                .arg("-f")
                .arg(&config)
                .arg("-E")
                .arg(&log)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn sshd");
            if wait_ready(&mut child, port, &log, Duration::from_secs(10)) {
                return Sshd {
                    dir,
                    port,
                    fingerprint,
                    host_public,
                    host_publics,
                    child,
                };
            }
            let _ = child.kill();
            let _ = child.wait();
            last_log = fs::read_to_string(&log).unwrap_or_default();
        }
        panic!("sshd did not start:\n{last_log}");
    }

    /// sshd's log so far.
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }

    /// A new user key of `kind` (ed25519, ecdsa, rsa), authorised for every user, optionally
    /// encrypted with `passphrase`. Returns the private key's path (mode 0600).
    pub fn user_key(&self, name: &str, kind: &str, passphrase: &str) -> PathBuf {
        let key = self.dir.path().join(name);
        keygen(&key, kind, passphrase);
        let public = fs::read_to_string(key.with_extension("pub")).expect("pub");
        let authorized = self.dir.path().join("authorized_keys");
        let mut all = fs::read_to_string(&authorized).unwrap_or_default();
        all.push_str(&public);
        fs::write(&authorized, all).expect("authorized_keys");
        set_mode(&key, 0o600);
        key
    }

    /// This server's line for a known_hosts file (`[127.0.0.1]:PORT ssh-ed25519 AAAA...`).
    pub fn known_hosts_line(&self) -> String {
        format!("[127.0.0.1]:{} {}\n", self.port, self.host_public)
    }

    /// Adds a hashed known_hosts line for this server to `path` (what `ssh-keygen -H` makes).
    pub fn add_hashed_known_host(&self, path: &Path) {
        let mut text = fs::read_to_string(path).unwrap_or_default();
        text.push_str(&self.known_hosts_line());
        fs::write(path, text).expect("known_hosts");
        run(Command::new("ssh-keygen").arg("-H").arg("-f").arg(path));
        let _ = fs::remove_file(path.with_extension("old"));
        let hashed = fs::read_to_string(path).expect("known_hosts");
        assert!(hashed.contains("|1|"), "not hashed: {hashed}");
    }
}

/// Waits until sshd logs that it listens and accepts a TCP connection (or has exited).
fn wait_ready(child: &mut Child, port: u16, log: &Path, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return false;
        }
        if fs::read_to_string(log)
            .unwrap_or_default()
            .contains("Server listening on")
            && TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
        {
            return true;
        }
        // sshd needs a few milliseconds to bind; this bounded loop only waits for that.
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn config_text(dir: &Path, port: u16, host_keys: &[PathBuf], opts: &SshdOptions) -> String {
    let d = dir.display();
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    // sshd takes the first value of a keyword: the extra lines go first to override.
    let mut text = format!(
        "{extra}
Port {port}
ListenAddress 127.0.0.1
{host_keys}
PidFile {d}/sshd.pid
AuthorizedKeysFile {d}/authorized_keys
StrictModes no
PermitRootLogin prohibit-password
PubkeyAuthentication yes
UsePAM {pam}
PasswordAuthentication {pw}
KbdInteractiveAuthentication {pw}
MaxStartups 200:30:400
MaxSessions 100
MaxAuthTries 10
LoginGraceTime 30
AllowTcpForwarding {fwd}
PermitOpen any
X11Forwarding no
PrintMotd no
PrintLastLog no
UseDNS no
LogLevel VERBOSE
# The login shell runs ForceCommand; as bash under sshd it would source the user's ~/.bashrc
# (Debian builds bash to), whose start-up (pyenv init, say) then sits in front of every
# login prompt and can stall it behind a stale lock. A switch has no such shell: with
# SHLVL=1 bash does not take itself for an sshd session shell and skips it.
SetEnv SHLVL=1
",
        host_keys = host_keys
            .iter()
            .map(|k| format!("HostKey {}", k.display()))
            .collect::<Vec<_>>()
            .join("\n"),
        pam = yes_no(opts.passwords),
        pw = yes_no(opts.passwords),
        fwd = yes_no(opts.forwarding),
        extra = opts.extra,
    );
    if let Some(argv) = &opts.force_command {
        let line: Vec<String> = argv.iter().map(|a| quote(a)).collect();
        text.push_str(&format!("ForceCommand {}\n", line.join(" ")));
    }
    text
}

/// Creates [`PASSWORD_USER`] with a random password (once per machine) and returns the
/// password. Serialised across test processes by a lock file.
pub fn ensure_password_user() -> String {
    use std::os::unix::fs::OpenOptionsExt;
    let lock = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(SETUP_LOCK)
        .expect("setup lock");
    lock.lock().expect("lock");
    let exists = Command::new("id")
        .arg(PASSWORD_USER)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !exists {
        run(Command::new("useradd").args([
            "--no-create-home",
            "--home-dir",
            "/nonexistent",
            "--shell",
            "/bin/sh",
            PASSWORD_USER,
        ]));
    }
    let password = match fs::read_to_string(PASSWORD_FILE) {
        Ok(p) if exists && !p.trim().is_empty() => p.trim().to_string(),
        _ => {
            let mut bytes = [0u8; 12];
            fs::File::open("/dev/urandom")
                .and_then(|mut f| f.read_exact(&mut bytes))
                .expect("urandom");
            let password: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            let mut child = Command::new("chpasswd")
                .stdin(Stdio::piped())
                .spawn()
                .expect("chpasswd");
            use std::io::Write;
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(format!("{PASSWORD_USER}:{password}\n").as_bytes())
                .expect("chpasswd stdin");
            assert!(child.wait().expect("chpasswd").success(), "chpasswd failed");
            fs::write(PASSWORD_FILE, &password).expect("password file");
            set_mode(Path::new(PASSWORD_FILE), 0o600);
            password
        }
    };
    password
}

impl super::Lab {
    /// The `mercury-sim` argv for device `name`, keeping its state and transcript in this
    /// lab (so [`super::Lab::state`] and [`super::Lab::transcript`] work).
    pub fn sim_argv(&self, name: &str, platform: &str, extra: &[&str]) -> Vec<String> {
        let mut argv = vec![
            super::sim_bin().display().to_string(),
            "--platform".into(),
            platform.into(),
            "--hostname".into(),
            name.into(),
            "--state".into(),
            self.path(&format!("{name}.json")).display().to_string(),
            "--transcript".into(),
            self.path(&format!("{name}.transcript"))
                .display()
                .to_string(),
        ];
        argv.extend(extra.iter().map(|s| s.to_string()));
        argv
    }

    /// Starts an sshd whose logins run the simulator for `name` (with `sim_extra` flags,
    /// e.g. faults). With `opts.passwords` the password user's simulator must write its
    /// state and transcript here: those two files are opened to it (the lab directory only
    /// becomes searchable, since Mercury refuses a configuration in a directory others can
    /// write).
    pub fn sshd_for(
        &self,
        name: &str,
        platform: &str,
        sim_extra: &[&str],
        mut opts: SshdOptions,
    ) -> Sshd {
        opts.force_command = Some(self.sim_argv(name, platform, sim_extra));
        if opts.passwords {
            set_mode(self.dir.path(), 0o755);
            for ext in ["json", "transcript"] {
                let f = self.path(&format!("{name}.{ext}"));
                if !f.exists() {
                    fs::write(&f, "").expect("sim file");
                }
                set_mode(&f, 0o666);
            }
        }
        Sshd::start(&opts)
    }

    /// Adds `[devices.NAME]`, a cisco_ios device over SSH on a loopback port where nothing
    /// listens (a fresh key file, host key pinned to `host_key`); returns the port.
    pub fn add_unreachable_ssh_device(&self, name: &str, host_key: &str) -> u16 {
        let key = self.path(&format!("{name}_id_ed25519"));
        keygen(&key, "ed25519", "");
        set_mode(&key, 0o600);
        let port = free_port();
        self.append_config(&format!(
            "\n[devices.{name}]\nplatform = \"cisco_ios\"\naddress = \"127.0.0.1\"\nport = {port}\n\
             username = \"root\"\nkey_file = \"{}\"\nhost_key = \"{host_key}\"\n",
            key.display()
        ));
        port
    }

    /// Adds `[devices.NAME]` reaching `sshd` over SSH; `lines` adds credentials, host keys
    /// and other keys.
    pub fn add_ssh_device(&self, name: &str, platform: &str, sshd: &Sshd, lines: &str) {
        self.append_config(&format!(
            "\n[devices.{name}]\nplatform = \"{platform}\"\naddress = \"127.0.0.1\"\nport = {}\n{lines}\n",
            sshd.port
        ));
    }

    /// Adds `[devices.NAME]` on `sshd`, logged in as root with `key` and the server's host
    /// key pinned; `extra` are further device lines.
    pub fn add_key_device(&self, name: &str, platform: &str, sshd: &Sshd, key: &Path, extra: &str) {
        self.add_ssh_device(
            name,
            platform,
            sshd,
            &format!(
                "username = \"root\"\nkey_file = \"{}\"\nhost_key = \"{}\"\n{extra}",
                key.display(),
                sshd.fingerprint
            ),
        );
    }

    /// The simulator's state once every session of `device` has ended. Behind sshd the
    /// simulator's session ends after Mercury has disconnected (sshd hangs it up), and its
    /// last write races a reader (`mercury-sim show` peeks at the file without its lock), so
    /// wait — bounded — until the state parses and no session is active.
    pub fn settled_state(&self, device: &str) -> serde_json::Value {
        let deadline = Instant::now() + Duration::from_secs(15);
        let path = self.path(&format!("{device}.json"));
        loop {
            let out = Command::new(super::sim_bin())
                .args(["show", "--state"])
                .arg(&path)
                .output()
                .expect("mercury-sim show");
            let parsed: Option<serde_json::Value> = serde_json::from_slice(&out.stdout).ok();
            if let Some(v) = &parsed {
                if v["sessions"]["active"] == 0 {
                    return v.clone();
                }
            }
            if Instant::now() >= deadline {
                panic!(
                    "state of {device} did not settle: {}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A running-config port entry of [`super::Lab::settled_state`].
    pub fn settled_port(&self, device: &str, port: &str) -> serde_json::Value {
        self.settled_state(device)["running"]["ports"][port].clone()
    }

    /// Writes a secret file (mode 0600) in the lab and returns its path.
    pub fn secret(&self, name: &str, value: &str) -> PathBuf {
        let p = self.path(name);
        fs::write(&p, format!("{value}\n")).expect("secret");
        set_mode(&p, 0o600);
        p
    }
}

impl Sshd {
    /// Authorises an existing key pair (its `.pub` next to it) on this server too.
    pub fn authorize(&self, private_key: &Path) {
        let public = fs::read_to_string(private_key.with_extension("pub")).expect("pub");
        let authorized = self.dir.path().join("authorized_keys");
        let mut all = fs::read_to_string(&authorized).unwrap_or_default();
        all.push_str(&public);
        fs::write(&authorized, all).expect("authorized_keys");
    }
}

/// A listener on 127.0.0.1 that accepts TCP connections and never says anything (a port
/// that is open but is not an SSH server). Connections are held until the process ends.
pub fn silent_listener() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in l.incoming().flatten() {
            held.push(s);
        }
    });
    port
}
