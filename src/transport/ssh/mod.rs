//! The `ssh` transport: libssh2 through the `ssh2` crate.
//!
//! Every connection goes TCP connect → SSH key exchange → host-key check → authentication →
//! one channel: a PTY shell for CLI platforms, or one exec channel per command for exec
//! platforms. Each stage that fails says which it was: TCP connect and key exchange are
//! "unreachable" (69), host key and authentication are "not permitted" (77).
//!
//! Host keys are checked before any credential is sent, on every connection: against a
//! pinned `SHA256:` fingerprint (`host_key`), else the device's `known_hosts`. An unknown
//! key is refused unless the device says `host_key = "trust-on-first-use"`; a changed key
//! is always refused. A learned key is written only once the session is established, and
//! the result and audit record carry a warning that says so.
//!
//! libssh2 runs in non-blocking mode; every wait is `poll(2)` on the socket for the
//! direction libssh2 is blocked on, bounded by the stage's deadline — never a sleep. The
//! stage deadlines (`connect_timeout` for TCP + key exchange + host key, `auth_timeout` for
//! authentication + opening the channel, `command_timeout` per prompt or command) are all
//! capped by the request's deadline.
//!
//! This module moves bytes; prompts, modes and failure indicators are `session`'s business.
//! Credentials come only from the device's files; the caller's SSH agent is never used.

mod jump;
pub mod known_hosts;
#[cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu"))]
pub mod openssl;

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec};
use ssh2::{BlockDirections, ErrorCode, MethodType, Session};

use super::{remaining, Chunk, Connection, Ended, Exec, ExecOutput, Shell, TransportError};
use crate::catalog::Channel;
use crate::config::{Device, Secrets, TRUST_ON_FIRST_USE};
use known_hosts::{fingerprint, host_name, key_type, KnownHosts, Verdict};

/// The terminal type asked for with the PTY: no colours, no cursor addressing.
pub const TERM: &str = "dumb";
/// PTY size: wide enough that no device wraps a configuration line, tall enough that a
/// device that cannot turn paging off pages rarely.
pub const PTY_SIZE: (u32, u32) = (511, 1000);

const EAGAIN: i32 = -37;
const FILE_ERROR: i32 = -16;
const AUTH_FAILED: i32 = -18;
const PUBKEY_UNVERIFIED: i32 = -19;
const REQUEST_DENIED: i32 = -22;
const KEYFILE_AUTH_FAILED: i32 = -48;
const PASSWORD_EXPIRED: i32 = -15;

/// Largest read from a channel at once.
const READ_CHUNK: usize = 16 * 1024;
/// Largest exec output kept per stream.
const MAX_EXEC_OUTPUT: usize = 4 * 1024 * 1024;
/// How long a best-effort goodbye may take: the disconnect message, then the server's
/// closing of the connection.
const GOODBYE: Duration = Duration::from_millis(2000);

/// Opens an SSH connection to the device: the PTY shell for CLI platforms, an exec runner
/// for exec platforms.
pub fn open(
    device: &Device,
    secrets: &Secrets,
    channel: Channel,
    deadline: Instant,
) -> Result<Connection, TransportError> {
    if let Some(problem) = check(device).into_iter().next() {
        return Err(TransportError::Config(problem));
    }
    load_openssl()?;
    let creds = Creds::new(device, secrets);
    let target = Hop::target(device)?;
    let hop_deadline = || (Instant::now() + device.connect_timeout).min(deadline);

    // connect_timeout bounds TCP connect + key exchange + host-key check, per hop.
    let (sock, tunnel, connect_deadline) = match &device.proxy_jump {
        Some(_) => {
            let bastion = Hop::jump(device)?;
            let (sock, tunnel) = jump::open(&bastion, &creds, &target, device, deadline)?;
            (Sock::Unix(sock), Some(tunnel), hop_deadline())
        }
        None => {
            let connect_deadline = hop_deadline();
            let tcp = tcp_connect(&target, connect_deadline)?;
            (Sock::Tcp(tcp), None, connect_deadline)
        }
    };
    let est = establish(
        &target,
        &creds,
        sock,
        tunnel,
        device,
        connect_deadline,
        deadline,
    )?;
    let conn = match channel {
        Channel::Shell => {
            let channel = est.link.open_shell(est.auth_deadline)?;
            let warnings = learned(est.learn)?;
            Connection::Shell(Box::new(SshShell {
                link: est.link,
                channel,
                send_timeout: device.command_timeout.max(Duration::from_millis(1)),
                request_deadline: deadline,
                warnings,
            }))
        }
        Channel::Exec => {
            let warnings = learned(est.learn)?;
            Connection::Exec(Box::new(SshExec {
                link: est.link,
                warnings,
            }))
        }
    };
    Ok(conn)
}

/// Makes OpenSSL ready before anything is opened: where it is bound lazily
/// ([`openssl`]) this loads `libcrypto.so.3`, binds every function and initialises it, so a
/// missing or unusable library is a configuration error here rather than an abort
/// mid-session.
pub fn load_openssl() -> Result<(), TransportError> {
    #[cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu"))]
    openssl::load().map_err(TransportError::Config)?;
    Ok(())
}

/// Writes a trust-on-first-use key, if one was learned, and returns the warning about it.
fn learned(learn: Option<Learn>) -> Result<Vec<String>, TransportError> {
    learn
        .map(Learn::commit)
        .transpose()
        .map(|w| w.into_iter().collect())
}

/// Problems that keep the device from being reached over SSH, found without connecting
/// (for `mercury check` and before every connection).
pub fn check(device: &Device) -> Vec<String> {
    let mut out = Vec::new();
    let name = &device.name;
    if device.username.is_none() {
        out.push(format!(
            "devices.{name}.username: missing: transport ssh needs a login user"
        ));
    }
    if device.key_file.is_none() && device.password_file.is_none() {
        out.push(format!(
            "devices.{name}: transport ssh needs key_file or password_file (the caller's SSH agent is never used)"
        ));
    }
    if device.passphrase_file.is_some() && device.key_file.is_none() {
        out.push(format!(
            "devices.{name}.passphrase_file: set without key_file"
        ));
    }
    if device.host_key.is_none() && device.known_hosts.is_none() {
        out.push(format!(
            "devices.{name}: transport ssh needs host_key (a pinned SHA256: fingerprint) or known_hosts; host keys are always checked"
        ));
    }
    if device.proxy_jump.is_some()
        && device.proxy_jump_host_key.is_none()
        && device.known_hosts.is_none()
    {
        out.push(format!(
            "devices.{name}.proxy_jump: the jump host's key needs proxy_jump_host_key or a known_hosts file that lists it"
        ));
    }
    out
}

/// Credentials for a login: the key file (mode-checked with the other secrets) and the
/// secrets read from the device's files.
pub(crate) struct Creds {
    key_file: Option<PathBuf>,
    passphrase: Option<String>,
    password: Option<String>,
}

impl Creds {
    fn new(device: &Device, secrets: &Secrets) -> Creds {
        Creds {
            key_file: device.key_file.clone(),
            passphrase: secrets.passphrase.clone(),
            password: secrets.password.clone(),
        }
    }
}

/// How a hop's host key is checked.
#[derive(Debug, Clone)]
pub(crate) enum HostKeyCheck {
    /// Exactly this fingerprint.
    Pinned(String),
    /// Listed in this file; `learn` allows adding an unknown key.
    KnownHosts { path: PathBuf, learn: bool },
}

/// One SSH server on the way: the device, or its jump host.
#[derive(Debug, Clone)]
pub(crate) struct Hop {
    /// How messages name it (`127.0.0.1:2222`, `jump host bastion:22`).
    label: String,
    host: String,
    port: u16,
    user: String,
    host_key: HostKeyCheck,
    /// Config key to name in host-key messages.
    host_key_key: &'static str,
}

impl Hop {
    fn target(device: &Device) -> Result<Hop, TransportError> {
        let missing =
            |k: &str| TransportError::Config(format!("devices.{}.{k}: missing", device.name));
        let host = device.address.clone().ok_or_else(|| missing("address"))?;
        let user = device.username.clone().ok_or_else(|| missing("username"))?;
        let host_key = match (device.host_key.as_deref(), &device.known_hosts) {
            (Some(fp), _) if fp != TRUST_ON_FIRST_USE => HostKeyCheck::Pinned(fp.to_string()),
            (h, Some(path)) => HostKeyCheck::KnownHosts {
                path: path.clone(),
                learn: h == Some(TRUST_ON_FIRST_USE),
            },
            _ => return Err(missing("host_key")),
        };
        Ok(Hop {
            label: endpoint(&host, device.port),
            host,
            port: device.port,
            user,
            host_key,
            host_key_key: "host_key",
        })
    }

    fn jump(device: &Device) -> Result<Hop, TransportError> {
        let missing =
            |k: &str| TransportError::Config(format!("devices.{}.{k}: missing", device.name));
        let j = device
            .proxy_jump
            .as_ref()
            .ok_or_else(|| missing("proxy_jump"))?;
        let user = j
            .user
            .clone()
            .or_else(|| device.username.clone())
            .ok_or_else(|| missing("username"))?;
        let host_key = match (&device.proxy_jump_host_key, &device.known_hosts) {
            (Some(fp), _) => HostKeyCheck::Pinned(fp.clone()),
            (None, Some(path)) => HostKeyCheck::KnownHosts {
                path: path.clone(),
                learn: false,
            },
            (None, None) => return Err(missing("proxy_jump_host_key")),
        };
        Ok(Hop {
            label: format!("jump host {}", endpoint(&j.host, j.port)),
            host: j.host.clone(),
            port: j.port,
            user,
            host_key,
            host_key_key: "proxy_jump_host_key",
        })
    }
}

fn endpoint(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// The socket libssh2 talks over (the session owns one handle; this is a second one, for
/// `poll`).
pub(crate) enum Sock {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl AsFd for Sock {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Sock::Tcp(s) => s.as_fd(),
            Sock::Unix(s) => s.as_fd(),
        }
    }
}

impl Sock {
    /// Asks the kernel to acknowledge what arrives next at once (`TCP_QUICKACK`) instead of
    /// delaying the ACK for up to 40 ms in the hope of piggybacking it on a reply.
    ///
    /// Why: an OpenSSH server has Nagle's algorithm on until it starts a PTY or command, so
    /// a small packet it sends while an earlier one is unacknowledged waits for our ACK.
    /// Right after authentication sshd sends an unsolicited `hostkeys-00@openssh.com`
    /// message that we do not answer, and then the confirmation of the channel we opened:
    /// with a delayed ACK that confirmation sat in the server for 40-45 ms (`tcpdump` of
    /// the bench, docs/proof.md). Linux falls back into delayed ACKs after we send, so this
    /// is set again before every wait for input. Not a security setting; a failure (not a
    /// TCP socket, not Linux) only loses the speed-up.
    fn ack_promptly(&self) {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if let Sock::Tcp(s) = self {
            let _ = rustix::net::sockopt::set_tcp_quickack(s, true);
        }
    }

    fn try_clone(&self) -> std::io::Result<Sock> {
        Ok(match self {
            Sock::Tcp(s) => Sock::Tcp(s.try_clone()?),
            Sock::Unix(s) => Sock::Unix(s.try_clone()?),
        })
    }
}

/// Why a non-blocking call did not complete.
#[derive(Debug)]
pub(crate) enum Fail {
    /// The deadline passed first.
    Timeout(Duration),
    /// libssh2 said no.
    Ssh(ssh2::Error),
    /// The wait itself failed.
    Io(std::io::Error),
}

impl Fail {
    fn code(&self) -> Option<i32> {
        match self {
            Fail::Ssh(e) => match e.code() {
                ErrorCode::Session(c) => Some(c),
                ErrorCode::SFTP(_) => None,
            },
            _ => None,
        }
    }

    fn message(&self) -> String {
        match self {
            Fail::Timeout(d) => format!("no answer within {:.1}s", d.as_secs_f64()),
            Fail::Ssh(e) => e.message().to_string(),
            Fail::Io(e) => e.to_string(),
        }
    }
}

/// An SSH session over a socket, driven in non-blocking mode.
pub(crate) struct Link {
    session: Session,
    sock: Sock,
    label: String,
    /// The jump host's tunnel, when there is one; dropped after the session and socket so
    /// that its thread sees the socket close and ends.
    tunnel: Option<jump::Tunnel>,
}

impl Link {
    fn new(
        sock: Sock,
        label: String,
        tunnel: Option<jump::Tunnel>,
    ) -> Result<Link, TransportError> {
        let mut session = Session::new().map_err(|e| TransportError::Unreachable {
            stage: format!("SSH session for {label}"),
            message: e.message().to_string(),
        })?;
        let clone = sock.try_clone().map_err(|e| TransportError::Unreachable {
            stage: format!("SSH session for {label}"),
            message: e.to_string(),
        })?;
        match clone {
            Sock::Tcp(s) => session.set_tcp_stream(s),
            Sock::Unix(s) => session.set_tcp_stream(s),
        }
        session.set_blocking(false);
        Ok(Link {
            session,
            sock,
            label,
            tunnel,
        })
    }

    /// Waits until the socket is ready for what libssh2 is blocked on, or the deadline.
    fn wait(&self, started: Instant, deadline: Instant) -> Result<(), Fail> {
        let flags = match self.session.block_directions() {
            BlockDirections::Outbound => PollFlags::OUT,
            BlockDirections::Both => PollFlags::IN | PollFlags::OUT,
            BlockDirections::Inbound | BlockDirections::None => PollFlags::IN,
        };
        if flags.contains(PollFlags::IN) {
            self.sock.ack_promptly();
        }
        poll_one(&self.sock, flags, deadline).map_err(Fail::Io)?;
        if Instant::now() >= deadline {
            return Err(Fail::Timeout(started.elapsed()));
        }
        Ok(())
    }

    /// Calls `f` until it stops saying "would block", waiting on the socket in between.
    fn retry<T>(
        &self,
        deadline: Instant,
        mut f: impl FnMut() -> Result<T, ssh2::Error>,
    ) -> Result<T, Fail> {
        let started = Instant::now();
        loop {
            match f() {
                Ok(v) => return Ok(v),
                Err(e) if e.code() == ErrorCode::Session(EAGAIN) => self.wait(started, deadline)?,
                Err(e) => return Err(Fail::Ssh(e)),
            }
        }
    }

    /// Like [`Link::retry`] for `std::io` calls on a channel.
    fn retry_io<T>(
        &self,
        deadline: Instant,
        mut f: impl FnMut() -> std::io::Result<T>,
    ) -> Result<T, Fail> {
        let started = Instant::now();
        loop {
            match f() {
                Ok(v) => return Ok(v),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    self.wait(started, deadline)?
                }
                Err(e) => return Err(Fail::Io(e)),
            }
        }
    }

    /// Opens a session channel, asks for a PTY and starts the login shell.
    fn open_shell(&self, deadline: Instant) -> Result<ssh2::Channel, TransportError> {
        let stage = |what: &str| format!("{what} on {}", self.label);
        let fail = |what: &str, f: Fail| match f {
            Fail::Timeout(waited) => TransportError::Timeout {
                awaited: stage(what),
                waited,
            },
            f if f.code() == Some(REQUEST_DENIED) => TransportError::Denied {
                stage: stage(what),
                message: format!("the server refused it ({})", f.message()),
            },
            f => TransportError::Unreachable {
                stage: stage(what),
                message: f.message(),
            },
        };
        let mut ch = self
            .retry(deadline, || self.session.channel_session())
            .map_err(|f| fail("opening a session channel", f))?;
        let (cols, rows) = PTY_SIZE;
        self.retry(deadline, || {
            ch.request_pty(TERM, None, Some((cols, rows, 0, 0)))
        })
        .map_err(|f| fail("requesting a PTY", f))?;
        self.retry(deadline, || ch.shell())
            .map_err(|f| fail("starting the shell", f))?;
        log::debug!("ssh {}: PTY shell open ({TERM}, {cols}x{rows})", self.label);
        Ok(ch)
    }

    /// Best-effort goodbye.
    fn disconnect(&self) {
        let deadline = Instant::now() + GOODBYE;
        let _ = self.retry(deadline, || {
            self.session.disconnect(None, "mercury: done", None)
        });
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.disconnect();
        if let Sock::Tcp(s) = &self.sock {
            // The server closes the connection once it has our goodbye. Wait for that
            // (bounded, in poll): a device that counts sessions by connection must have let
            // this one go before the lock slot is released to the next session.
            let _ = s.shutdown(std::net::Shutdown::Write);
            await_close(s, Instant::now() + GOODBYE);
        }
        if self.tunnel.is_some() {
            // Shut the socket pair down so the tunnel's thread sees the end even while a
            // channel still holds the session (and its descriptor); the tunnel field is
            // dropped after this, which joins the thread.
            if let Sock::Unix(s) = &self.sock {
                let _ = s.shutdown(std::net::Shutdown::Both);
            }
        }
    }
}

/// Reads and drops whatever arrives on `sock` until the peer closes it (read returns 0), an
/// error, or `deadline`.
fn await_close(sock: &TcpStream, deadline: Instant) {
    let mut buf = [0u8; 4096];
    let mut reader = sock;
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        }
        if remaining(deadline).is_zero() || poll_one(sock, PollFlags::IN, deadline).is_err() {
            return;
        }
    }
}

/// Polls one descriptor until it is ready for `flags` or `deadline` passes. Interrupted
/// polls are retried.
pub(crate) fn poll_one(fd: &impl AsFd, flags: PollFlags, deadline: Instant) -> std::io::Result<()> {
    loop {
        let left = remaining(deadline);
        if left.is_zero() {
            return Ok(());
        }
        let ts = Timespec {
            tv_sec: left.as_secs() as i64,
            tv_nsec: i64::from(left.subsec_nanos()),
        };
        let mut fds = [PollFd::new(fd, flags)];
        match rustix::event::poll(&mut fds, Some(&ts)) {
            Ok(_) => return Ok(()),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

fn tcp_connect(hop: &Hop, deadline: Instant) -> Result<TcpStream, TransportError> {
    let stage = format!("TCP connect to {}", hop.label);
    let addrs: Vec<_> = (hop.host.as_str(), hop.port)
        .to_socket_addrs()
        .map_err(|e| TransportError::Unreachable {
            stage: stage.clone(),
            message: format!("cannot resolve {}: {e}", hop.host),
        })?
        .collect();
    let started = Instant::now();
    let several = addrs.len() > 1;
    let mut last = format!("{} resolves to no address", hop.host);
    for addr in addrs {
        let left = remaining(deadline);
        if left.is_zero() {
            break;
        }
        let why = match TcpStream::connect_timeout(&addr, left) {
            Ok(s) => {
                // libssh2 writes small packets; Nagle would hold each one for an ACK.
                let _ = s.set_nodelay(true);
                log::debug!("ssh {}: TCP connected to {addr}", hop.label);
                return Ok(s);
            }
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                format!("no answer within {:.1}s", started.elapsed().as_secs_f64())
            }
            Err(e) => e.to_string(),
        };
        last = if several {
            format!("{addr}: {why}")
        } else {
            why
        };
    }
    Err(TransportError::Unreachable {
        stage,
        message: last,
    })
}

/// A host key to write to known_hosts once the session is up (trust-on-first-use).
pub(crate) struct Learn {
    path: PathBuf,
    host: String,
    port: u16,
    blob: Vec<u8>,
    label: String,
}

impl Learn {
    /// Writes the key and returns the warning that reports it.
    fn commit(self) -> Result<String, TransportError> {
        let fp = fingerprint(&self.blob);
        let kind = key_type(&self.blob).unwrap_or("unknown").to_string();
        let comment = format!("mercury-trust-on-first-use-{}", crate::util::now_rfc3339());
        match known_hosts::learn(&self.path, &self.host, self.port, &self.blob, &comment) {
            Ok(Verdict::Known) => Ok(format!(
                "host key of {} learned (trust-on-first-use): {kind} {fp} written to {}",
                self.label,
                self.path.display()
            )),
            Ok(other) => Err(host_key_refusal(
                &self.label,
                &self.path,
                &host_name(&self.host, self.port),
                &self.blob,
                other,
            )),
            Err(e) => Err(TransportError::Config(format!(
                "trust-on-first-use for {}: {e}",
                self.label
            ))),
        }
    }
}

/// An SSH session after key exchange, host-key check and authentication.
pub(crate) struct Established {
    link: Link,
    learn: Option<Learn>,
    /// Authentication and opening the first channel share `auth_timeout`.
    auth_deadline: Instant,
}

/// Key exchange and host key (until `connect_deadline`), then authentication (for
/// `auth_timeout`), over an already connected socket.
pub(crate) fn establish(
    hop: &Hop,
    creds: &Creds,
    sock: Sock,
    tunnel: Option<jump::Tunnel>,
    device: &Device,
    connect_deadline: Instant,
    deadline: Instant,
) -> Result<Established, TransportError> {
    let link = Link::new(sock, hop.label.clone(), tunnel)?;
    let known = match &hop.host_key {
        HostKeyCheck::KnownHosts { path, .. } => Some(KnownHosts::load(path).map_err(|e| {
            TransportError::Config(format!("devices.{}.known_hosts: {e}", device.name))
        })?),
        HostKeyCheck::Pinned(_) => None,
    };
    let known_types = known
        .as_ref()
        .map(|kh| kh.key_types(&hop.host, hop.port))
        .unwrap_or_default();
    set_host_key_prefs(&link.session, &known_types);

    let mut handshaking = link.session.clone();
    link.retry(connect_deadline, || handshaking.handshake())
        .map_err(|f| TransportError::Unreachable {
            stage: format!("SSH handshake with {}", hop.label),
            message: match f {
                Fail::Timeout(d) => format!(
                    "no SSH key exchange within {:.1}s (the port accepted TCP but did not speak SSH)",
                    d.as_secs_f64()
                ),
                f => f.message(),
            },
        })?;

    log::debug!(
        "ssh {}: key exchange {} with host key {}",
        hop.label,
        link.session.methods(MethodType::Kex).unwrap_or("?"),
        link.session.methods(MethodType::HostKey).unwrap_or("?"),
    );
    let learn = verify_host_key(&link.session, hop, known.as_ref())?;

    let auth_deadline = (Instant::now() + device.auth_timeout).min(deadline);
    authenticate(&link, hop, creds, auth_deadline)?;
    Ok(Established {
        link,
        learn,
        auth_deadline,
    })
}

/// Sets the host-key algorithms to ask for (see [`host_key_prefs`]).
fn set_host_key_prefs(session: &Session, known_types: &[String]) {
    let Ok(supported) = session.supported_algs(MethodType::HostKey) else {
        return;
    };
    let prefs = host_key_prefs(&supported, known_types);
    if !prefs.is_empty() {
        let _ = session.method_pref(MethodType::HostKey, &prefs);
    }
}

/// The host-key algorithms to ask for, best first: those whose keys known_hosts lists for
/// the host first (as OpenSSH does, so that a server with several keys presents one that
/// can be checked), then libssh2's own order. Certificate algorithms are left out: a host
/// certificate is not a key that can be pinned or listed, and Mercury does not check CAs.
pub fn host_key_prefs(supported: &[&str], known_types: &[String]) -> String {
    let plain: Vec<&str> = supported
        .iter()
        .copied()
        .filter(|a| !a.contains("-cert-"))
        .collect();
    let mut prefs: Vec<&str> = Vec::new();
    for t in known_types {
        let algs: Vec<&str> = match t.as_str() {
            "ssh-rsa" => vec!["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"],
            other => vec![other],
        };
        for a in algs {
            if plain.contains(&a) && !prefs.contains(&a) {
                prefs.push(a);
            }
        }
    }
    for a in plain {
        if !prefs.contains(&a) {
            prefs.push(a);
        }
    }
    prefs.join(",")
}

fn verify_host_key(
    session: &Session,
    hop: &Hop,
    known: Option<&KnownHosts>,
) -> Result<Option<Learn>, TransportError> {
    let stage = format!("host key of {}", hop.label);
    let blob =
        session
            .host_key()
            .map(|(b, _)| b.to_vec())
            .ok_or_else(|| TransportError::Denied {
                stage: stage.clone(),
                message: "the server presented no host key".into(),
            })?;
    let presented = fingerprint(&blob);
    let kind = key_type(&blob).unwrap_or("unknown");
    log::debug!("ssh {}: host key {kind} {presented}", hop.label);
    match (&hop.host_key, known) {
        (HostKeyCheck::Pinned(pin), _) => {
            if &presented == pin {
                Ok(None)
            } else {
                Err(TransportError::Denied {
                    stage,
                    message: format!(
                        "the server presented {kind} {presented}, but {} pins {pin}: the key changed or this is not the device",
                        hop.host_key_key
                    ),
                })
            }
        }
        (HostKeyCheck::KnownHosts { path, learn }, Some(kh)) => {
            match kh.check(&hop.host, hop.port, &blob) {
                Verdict::Known => Ok(None),
                Verdict::Unknown if *learn => Ok(Some(Learn {
                    path: path.clone(),
                    host: hop.host.clone(),
                    port: hop.port,
                    blob,
                    label: hop.label.clone(),
                })),
                other => Err(host_key_refusal(
                    &hop.label,
                    path,
                    &host_name(&hop.host, hop.port),
                    &blob,
                    other,
                )),
            }
        }
        (HostKeyCheck::KnownHosts { .. }, None) => {
            Err(TransportError::Config("known_hosts not loaded".into()))
        }
    }
}

fn host_key_refusal(
    label: &str,
    path: &Path,
    name: &str,
    blob: &[u8],
    verdict: Verdict,
) -> TransportError {
    let presented = fingerprint(blob);
    let kind = key_type(blob).unwrap_or("unknown");
    let message = match verdict {
        Verdict::Known => format!("{kind} {presented} is known"),
        Verdict::Revoked { line } => format!(
            "the server presented {kind} {presented}, which {} line {line} marks @revoked",
            path.display()
        ),
        Verdict::Changed { known } => {
            let listed: Vec<String> = known
                .iter()
                .map(|k| format!("{} {} (line {})", k.key_type, k.fingerprint, k.line))
                .collect();
            let why = if known.iter().any(|k| k.key_type == kind) {
                "the key changed or this is not the device"
            } else {
                "the server has no key of the listed types any more, or this is not the device"
            };
            format!(
                "the server presented {kind} {presented}, but {} lists {} for {name}: {why}",
                path.display(),
                listed.join(", ")
            )
        }
        Verdict::Unknown => format!(
            "the server presented {kind} {presented}, and {} has no key for {name}; verify the fingerprint out of band, then add the key (or pin it with host_key)",
            path.display()
        ),
    };
    TransportError::Denied {
        stage: format!("host key of {label}"),
        message,
    }
}

/// Answers keyboard-interactive password prompts with the password.
struct PasswordPrompter<'a> {
    password: &'a str,
    rounds: u32,
}

impl ssh2::KeyboardInteractivePrompt for PasswordPrompter<'_> {
    fn prompt<'b>(
        &mut self,
        _username: &str,
        _instructions: &str,
        prompts: &[ssh2::Prompt<'b>],
    ) -> Vec<String> {
        self.rounds += 1;
        prompts
            .iter()
            .map(|p| {
                // Hidden prompts are password questions; anything else (or a server that
                // keeps asking) gets an empty answer rather than the password again.
                if !p.echo && self.rounds <= 2 {
                    self.password.to_string()
                } else {
                    String::new()
                }
            })
            .collect()
    }
}

fn authenticate(
    link: &Link,
    hop: &Hop,
    creds: &Creds,
    deadline: Instant,
) -> Result<(), TransportError> {
    let who = format!("{}@{}", hop.user, hop.label);
    let stage = format!("authentication as {who}");
    let timeout = |f: Fail| match f {
        Fail::Timeout(waited) => TransportError::Timeout {
            awaited: stage.clone(),
            waited,
        },
        f => TransportError::Unreachable {
            stage: stage.clone(),
            message: f.message(),
        },
    };
    let s = &link.session;
    let mut tried: Vec<String> = Vec::new();
    // A key is tried first, without asking which methods the server offers: the question
    // (a `none` request) is a round trip of its own, which a key login does not need. The
    // methods are asked for only when the key did not do (for the password and for the
    // message), so a refusal still names what the server accepts.
    let mut refused_key = None;
    if let Some(key) = &creds.key_file {
        match link.retry(deadline, || {
            s.userauth_pubkey_file(&hop.user, None, key, creds.passphrase.as_deref())
        }) {
            Ok(()) => {
                log::debug!("ssh {who}: authenticated (publickey)");
                return Ok(());
            }
            Err(f) if matches!(f.code(), Some(AUTH_FAILED | PUBKEY_UNVERIFIED)) => {
                refused_key = Some(key);
            }
            Err(f) if matches!(f.code(), Some(FILE_ERROR | KEYFILE_AUTH_FAILED)) => {
                return Err(TransportError::Config(format!(
                    "{stage}: cannot use key_file {}: {}{}",
                    key.display(),
                    f.message(),
                    if creds.passphrase.is_some() {
                        " (is passphrase_file right?)"
                    } else {
                        " (encrypted? set passphrase_file)"
                    }
                )))
            }
            Err(f) => return Err(timeout(f)),
        }
    }
    let offered = link
        .retry(deadline, || s.auth_methods(&hop.user).map(str::to_string))
        .or_else(|f| {
            if s.authenticated() {
                Ok(String::new())
            } else {
                Err(f)
            }
        })
        .map_err(timeout)?;
    if s.authenticated() {
        return Ok(());
    }
    log::debug!("ssh {who}: server offers {offered}");
    let offers = |m: &str| offered.split(',').any(|o| o == m);
    if let Some(key) = refused_key {
        tried.push(if offers("publickey") {
            format!("publickey ({} refused)", key.display())
        } else {
            "publickey (not offered)".into()
        });
    }
    if let Some(password) = &creds.password {
        if offers("password") {
            match link.retry(deadline, || s.userauth_password(&hop.user, password)) {
                Ok(()) => {
                    log::debug!("ssh {who}: authenticated (password)");
                    return Ok(());
                }
                Err(f) if matches!(f.code(), Some(AUTH_FAILED | PASSWORD_EXPIRED)) => {
                    tried.push(format!("password ({})", f.message()))
                }
                Err(f) => return Err(timeout(f)),
            }
        }
        if !s.authenticated() && offers("keyboard-interactive") {
            let mut prompter = PasswordPrompter {
                password,
                rounds: 0,
            };
            match link.retry(deadline, || {
                s.userauth_keyboard_interactive(&hop.user, &mut prompter)
            }) {
                Ok(()) => {
                    log::debug!("ssh {who}: authenticated (keyboard-interactive)");
                    return Ok(());
                }
                Err(f) if matches!(f.code(), Some(AUTH_FAILED | PASSWORD_EXPIRED)) => {
                    tried.push("keyboard-interactive (password refused)".into())
                }
                Err(f) => return Err(timeout(f)),
            }
        }
        if !offers("password") && !offers("keyboard-interactive") {
            tried.push("password (not offered)".into());
        }
    }
    if s.authenticated() {
        return Ok(());
    }
    Err(TransportError::Denied {
        stage,
        message: format!(
            "tried {}; the server accepts {}",
            if tried.is_empty() {
                "nothing".to_string()
            } else {
                tried.join(", ")
            },
            if offered.is_empty() {
                "nothing".to_string()
            } else {
                offered.replace(',', ", ")
            }
        ),
    })
}

/// The interactive PTY shell of a CLI device.
pub struct SshShell {
    // The channel is dropped before the link, which says goodbye and ends a tunnel.
    channel: ssh2::Channel,
    link: Link,
    send_timeout: Duration,
    request_deadline: Instant,
    warnings: Vec<String>,
}

impl Shell for SshShell {
    fn send(&mut self, data: &[u8]) -> Result<(), TransportError> {
        let deadline = (Instant::now() + self.send_timeout).min(self.request_deadline);
        let mut sent = 0;
        while sent < data.len() {
            let ch = &mut self.channel;
            let n = self
                .link
                .retry_io(deadline, || ch.write(&data[sent..]))
                .map_err(|f| match f {
                    Fail::Timeout(waited) => TransportError::Timeout {
                        awaited: format!("{} to accept input", self.link.label),
                        waited,
                    },
                    f => TransportError::Lost(format!(
                        "sending to {}: {}",
                        self.link.label,
                        f.message()
                    )),
                })?;
            if n == 0 {
                return Err(TransportError::Lost(format!(
                    "{} closed the channel",
                    self.link.label
                )));
            }
            sent += n;
        }
        Ok(())
    }

    fn recv(&mut self, deadline: Instant) -> Result<Chunk, TransportError> {
        let mut buf = vec![0u8; READ_CHUNK];
        let started = Instant::now();
        loop {
            match self.channel.read(&mut buf) {
                Ok(0) if self.channel.eof() => return Ok(Chunk::Eof),
                Ok(0) => {}
                Ok(n) => {
                    buf.truncate(n);
                    return Ok(Chunk::Data(buf));
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => {
                    return Err(TransportError::Lost(format!(
                        "reading from {}: {e}",
                        self.link.label
                    )))
                }
            }
            self.link.wait(started, deadline).map_err(|f| match f {
                Fail::Timeout(waited) => TransportError::Timeout {
                    awaited: "output".into(),
                    waited,
                },
                f => TransportError::Lost(format!(
                    "waiting for {}: {}",
                    self.link.label,
                    f.message()
                )),
            })?;
        }
    }

    fn close(&mut self, deadline: Instant) {
        // Hanging up: a PTY shell does not end on EOF, so the channel is closed. sshd
        // closes the terminal (the device's CLI gets a hangup) and answers with its own
        // close, which is awaited (bounded) so the goodbye is orderly.
        let ch = &mut self.channel;
        let _ = self.link.retry(deadline, || ch.send_eof());
        let _ = self.link.retry(deadline, || ch.close());
        self.drain_to_eof(deadline);
        let ch = &mut self.channel;
        let _ = self.link.retry(deadline, || ch.wait_close());
    }

    fn finish(&mut self, deadline: Instant) -> Ended {
        // The close lines are on their way: the device's CLI ends the session, and only
        // then does the server send EOF, the exit status and its channel close (sshd waits
        // for the child). Closing our side first would end the session from here while the
        // CLI may still be running — a session the device still counts after the lock is
        // released. Every wait is poll(2) on the socket.
        let ended = self.drain_to_eof(deadline) && {
            let ch = &mut self.channel;
            self.link.retry(deadline, || ch.wait_close()).is_ok()
        };
        if !ended {
            self.close(Instant::now() + GOODBYE);
            return Ended::HungUp;
        }
        let ch = &mut self.channel;
        let _ = self.link.retry(deadline, || ch.close());
        log::debug!(
            "ssh {}: the device ended the session (exit status {:?})",
            self.link.label,
            self.channel.exit_status().ok()
        );
        Ended::ByDevice
    }

    fn diagnostics(&self) -> String {
        match self.channel.exit_status() {
            Ok(s) if s != 0 => format!("the remote session exited with status {s}"),
            _ => String::new(),
        }
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

impl SshShell {
    /// Reads and drops output until the server's EOF (`true`) or the deadline.
    fn drain_to_eof(&mut self, deadline: Instant) -> bool {
        let mut buf = [0u8; READ_CHUNK];
        loop {
            if self.channel.eof() {
                return true;
            }
            match self.channel.read(&mut buf) {
                Ok(n) if n > 0 => continue,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => return false,
            }
            if self.channel.eof() {
                return true;
            }
            if self.link.wait(Instant::now(), deadline).is_err() {
                return false;
            }
        }
    }
}

/// Runs each command on its own exec channel of one SSH session.
pub struct SshExec {
    link: Link,
    warnings: Vec<String>,
}

impl SshExec {
    fn run(&mut self, line: &str, deadline: Instant) -> Result<ExecOutput, Fail> {
        let link = &self.link;
        let mut ch = link.retry(deadline, || link.session.channel_session())?;
        link.retry(deadline, || ch.exec(line))?;
        let started = Instant::now();
        let (out, err) = drain(&mut ExecChannel {
            ch: &mut ch,
            link,
            started,
            deadline,
        })?;
        link.retry(deadline, || ch.wait_close())?;
        let status = match ch.exit_signal() {
            Ok(s) if s.exit_signal.is_some() => -1,
            _ => ch.exit_status().map_err(Fail::Ssh)?,
        };
        Ok(ExecOutput {
            status,
            stdout: String::from_utf8_lossy(&out).into_owned(),
            stderr: String::from_utf8_lossy(&err).into_owned(),
        })
    }
}

/// What [`drain`] needs of an exec channel: libssh2's reads, its EOF flag, the bytes it
/// holds unread, and a wait on the socket.
trait Streams {
    /// Reads stdout (0) or stderr (1); `WouldBlock` when libssh2 found the socket empty.
    fn read(&mut self, stream: i32, buf: &mut [u8]) -> std::io::Result<usize>;
    /// The server's EOF has arrived and no data of the channel is left unread.
    fn eof(&self) -> bool;
    /// Bytes of the channel's data libssh2 has taken off the socket but not handed out.
    fn queued(&self) -> u32;
    /// Waits until the socket is readable (or the deadline).
    fn wait(&mut self) -> Result<(), Fail>;
}

struct ExecChannel<'a> {
    ch: &'a mut ssh2::Channel,
    link: &'a Link,
    started: Instant,
    deadline: Instant,
}

impl Streams for ExecChannel<'_> {
    fn read(&mut self, stream: i32, buf: &mut [u8]) -> std::io::Result<usize> {
        self.ch.stream(stream).read(buf)
    }
    fn eof(&self) -> bool {
        self.ch.eof()
    }
    fn queued(&self) -> u32 {
        self.ch.read_window().available
    }
    fn wait(&mut self) -> Result<(), Fail> {
        self.link.wait(self.started, self.deadline)
    }
}

/// Reads an exec channel's stdout and stderr to their end. Both are drained as data
/// arrives, so neither can fill its window while the other is awaited.
///
/// Every libssh2 read first takes *all* waiting packets off the socket, whichever stream
/// they belong to, and the server's EOF with them. So the socket is polled only when
/// nothing is left in libssh2 either: no data queued and no EOF. Polling after a read of
/// one stream had taken the other's data or the EOF off the socket waited for bytes that
/// had already come, until the deadline: a `config save` whose channel ended between the
/// two reads timed out after 30 s (once in ~700 SONiC attaches over sshd, issue 18's
/// bench).
fn drain(ch: &mut impl Streams) -> Result<(Vec<u8>, Vec<u8>), Fail> {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let (mut out_done, mut err_done) = (false, false);
    let mut buf = vec![0u8; READ_CHUNK];
    // Rounds in a row that moved nothing although libssh2 said something was pending (data
    // of a stream other than 0 and 1 would stay queued): bounded, then the socket is polled.
    let mut spins = 0u32;
    while !(out_done && err_done) {
        let mut progress = false;
        for (stream, sink, done) in [(0, &mut out, &mut out_done), (1, &mut err, &mut err_done)] {
            if *done {
                continue;
            }
            match ch.read(stream, &mut buf) {
                Ok(0) if ch.eof() => {
                    *done = true;
                    progress = true;
                }
                Ok(0) => {}
                Ok(n) => {
                    if sink.len() < MAX_EXEC_OUTPUT {
                        sink.extend_from_slice(&buf[..n]);
                    }
                    progress = true;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(Fail::Io(e)),
            }
        }
        if progress {
            spins = 0;
            continue;
        }
        if (ch.eof() || ch.queued() > 0) && spins < 64 {
            spins += 1;
            continue;
        }
        spins = 0;
        ch.wait()?;
    }
    Ok((out, err))
}

impl Exec for SshExec {
    fn exec(
        &mut self,
        _argv: &[String],
        line: &str,
        deadline: Instant,
    ) -> Result<ExecOutput, TransportError> {
        self.run(line, deadline).map_err(|f| match f {
            Fail::Timeout(waited) => TransportError::Timeout {
                awaited: format!("{line:?} to finish on {}", self.link.label),
                waited,
            },
            f => TransportError::Lost(format!(
                "running {line:?} on {}: {}",
                self.link.label,
                f.message()
            )),
        })
    }

    fn through_shell(&self) -> bool {
        // sshd runs an exec request's string with the login shell's `-c`.
        true
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    /// What reaches the client's socket, in a scripted exec channel.
    #[derive(Clone)]
    enum Ev {
        Out(&'static str),
        Err(&'static str),
        Eof,
    }

    /// An exec channel that behaves as libssh2 does (see [`drain`]): every read takes all
    /// waiting packets off the socket, whichever stream they are for; a read with nothing
    /// for its stream says `WouldBlock`, or 0 once the EOF has come. `arrive[i]` reaches
    /// the socket just before read number `i + 1`; `on_wait` after each wait; a wait with
    /// nothing more to come is the deadline.
    struct Scripted {
        socket: Vec<Ev>,
        out: Vec<u8>,
        err: Vec<u8>,
        eof: bool,
        reads: usize,
        arrive: Vec<(usize, Vec<Ev>)>,
        on_wait: Vec<Vec<Ev>>,
        waits: usize,
    }

    impl Scripted {
        fn new(arrive: Vec<(usize, Vec<Ev>)>, on_wait: Vec<Vec<Ev>>) -> Scripted {
            Scripted {
                socket: Vec::new(),
                out: Vec::new(),
                err: Vec::new(),
                eof: false,
                reads: 0,
                arrive,
                on_wait,
                waits: 0,
            }
        }
    }

    impl Streams for Scripted {
        fn read(&mut self, stream: i32, buf: &mut [u8]) -> std::io::Result<usize> {
            self.reads += 1;
            for (at, evs) in &self.arrive {
                if *at == self.reads {
                    self.socket.extend(evs.iter().cloned());
                }
            }
            for ev in std::mem::take(&mut self.socket) {
                match ev {
                    Ev::Out(t) => self.out.extend_from_slice(t.as_bytes()),
                    Ev::Err(t) => self.err.extend_from_slice(t.as_bytes()),
                    Ev::Eof => self.eof = true,
                }
            }
            let q = if stream == 0 {
                &mut self.out
            } else {
                &mut self.err
            };
            if !q.is_empty() {
                let n = q.len().min(buf.len());
                buf[..n].copy_from_slice(&q[..n]);
                q.drain(..n);
                return Ok(n);
            }
            if self.eof {
                Ok(0)
            } else {
                Err(std::io::ErrorKind::WouldBlock.into())
            }
        }
        fn eof(&self) -> bool {
            self.eof && self.out.is_empty() && self.err.is_empty()
        }
        fn queued(&self) -> u32 {
            (self.out.len() + self.err.len()) as u32
        }
        fn wait(&mut self) -> Result<(), Fail> {
            self.waits += 1;
            if self.on_wait.is_empty() {
                return Err(Fail::Timeout(Duration::ZERO));
            }
            let evs = self.on_wait.remove(0);
            self.socket.extend(evs);
            Ok(())
        }
    }

    fn text((out, err): (Vec<u8>, Vec<u8>)) -> (String, String) {
        (
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    /// The EOF of a silent command (`config save`) reaches the socket between the stdout
    /// read and the stderr read: the stderr read takes it, and the channel is done
    /// without a wait (a wait would see nothing more and last until the deadline).
    #[test]
    fn an_eof_taken_off_the_socket_by_the_other_stream_ends_the_channel_without_a_wait() {
        let mut ch = Scripted::new(vec![(2, vec![Ev::Eof])], vec![]);
        let got = drain(&mut ch)
            .map_err(|_| "waited for bytes already read")
            .unwrap();
        assert_eq!(text(got), (String::new(), String::new()));
        assert_eq!(ch.waits, 0);
    }

    /// Stdout's last bytes and the EOF come in while stderr is read: stdout is read from
    /// libssh2's queue, not awaited on the socket.
    #[test]
    fn data_taken_off_the_socket_by_the_other_stream_is_read_without_a_wait() {
        let mut ch = Scripted::new(vec![(2, vec![Ev::Out("saved\n"), Ev::Eof])], vec![]);
        let got = drain(&mut ch)
            .map_err(|_| "waited for bytes already read")
            .unwrap();
        assert_eq!(text(got), ("saved\n".to_string(), String::new()));
        assert_eq!(ch.waits, 0);
    }

    /// With nothing on the socket or queued, the socket is waited on, once per arrival.
    #[test]
    fn an_idle_channel_waits_on_the_socket() {
        let mut ch = Scripted::new(
            vec![],
            vec![
                vec![Ev::Out("a")],
                vec![Ev::Err("e"), Ev::Out("b"), Ev::Eof],
            ],
        );
        let got = drain(&mut ch).map_err(|_| "timed out").unwrap();
        assert_eq!(text(got), ("ab".to_string(), "e".to_string()));
        assert_eq!(ch.waits, 2);
        // And the deadline when nothing ever comes.
        let mut silent = Scripted::new(vec![], vec![]);
        assert!(matches!(drain(&mut silent), Err(Fail::Timeout(_))));
    }

    fn device(extra: &str) -> Device {
        let c = Config::parse(
            Path::new("/etc/mercury/mercury.toml"),
            &format!("[devices.d]\nplatform = \"cisco_ios\"\naddress = \"127.0.0.1\"\n{extra}"),
        )
        .unwrap();
        c.devices["d"].clone()
    }

    #[test]
    fn check_names_every_missing_piece() {
        let problems = check(&device(""));
        let all = problems.join("\n");
        assert!(all.contains("username"), "{all}");
        assert!(all.contains("key_file or password_file"), "{all}");
        assert!(all.contains("host_key"), "{all}");
        let ok = device("username = \"u\"\nkey_file = \"k\"\nknown_hosts = \"kh\"\n");
        assert!(check(&ok).is_empty(), "{:?}", check(&ok));
        let jump = device(
            "username = \"u\"\nkey_file = \"k\"\nhost_key = \"SHA256:BVxl72jCAdocpUhiumAXcRl5g6y858UL9mVJqExf/V4\"\nproxy_jump = \"b\"\n",
        );
        assert!(
            check(&jump).join("").contains("proxy_jump"),
            "{:?}",
            check(&jump)
        );
    }

    /// The server's small packets must not wait for a delayed ACK of ours (see
    /// [`Sock::ack_promptly`]): every wait for input turns quick ACKs back on, since Linux
    /// turns them off again once we have sent something.
    #[cfg(target_os = "linux")]
    #[test]
    fn every_wait_for_input_asks_for_quick_acks() {
        load_openssl().unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let tcp = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        // As libssh2 leaves it after its handshake.
        tcp.set_nonblocking(true).unwrap();
        let (server, _) = listener.accept().unwrap();
        let link = Link::new(Sock::Tcp(tcp), "test".into(), None).unwrap();
        // What Linux does after we send: ACKs delayed again.
        rustix::net::sockopt::set_tcp_quickack(&link.sock, false).unwrap();
        assert!(!rustix::net::sockopt::tcp_quickack(&link.sock).unwrap());
        let now = Instant::now();
        // Nothing arrives: the wait ends at its deadline.
        assert!(matches!(
            link.wait(now, now + Duration::from_millis(1)),
            Err(Fail::Timeout(_))
        ));
        assert!(rustix::net::sockopt::tcp_quickack(&link.sock).unwrap());
        // The goodbye of a dropped link waits for the peer to close.
        drop(server);
    }

    #[test]
    fn connection_refused_is_unreachable_and_names_the_stage() {
        // Bind then drop: the port is (almost certainly) closed now.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let hop = Hop {
            label: endpoint("127.0.0.1", port),
            host: "127.0.0.1".into(),
            port,
            user: "u".into(),
            host_key: HostKeyCheck::Pinned(String::new()),
            host_key_key: "host_key",
        };
        match tcp_connect(&hop, Instant::now() + Duration::from_secs(5)) {
            Err(TransportError::Unreachable { stage, .. }) => {
                assert!(stage.starts_with("TCP connect to 127.0.0.1:"), "{stage}")
            }
            other => panic!("{:?}", other.map(|_| ())),
        }
    }

    #[test]
    fn host_key_algorithms_prefer_known_types_and_never_certificates() {
        let supported = [
            "ssh-ed25519-cert-v01@openssh.com",
            "ssh-ed25519",
            "ecdsa-sha2-nistp256",
            "rsa-sha2-512",
            "rsa-sha2-256",
            "ssh-rsa",
        ];
        assert_eq!(
            host_key_prefs(&supported, &[]),
            "ssh-ed25519,ecdsa-sha2-nistp256,rsa-sha2-512,rsa-sha2-256,ssh-rsa"
        );
        assert_eq!(
            host_key_prefs(
                &supported,
                &["ssh-rsa".into(), "ecdsa-sha2-nistp256".into()]
            ),
            "rsa-sha2-512,rsa-sha2-256,ssh-rsa,ecdsa-sha2-nistp256,ssh-ed25519"
        );
        // A type libssh2 cannot do is skipped.
        assert_eq!(
            host_key_prefs(&["ssh-ed25519"], &["sk-ssh-ed25519@openssh.com".into()]),
            "ssh-ed25519"
        );
    }

    #[test]
    fn endpoints_bracket_ipv6() {
        assert_eq!(endpoint("::1", 22), "[::1]:22");
        assert_eq!(endpoint("leaf", 2222), "leaf:2222");
    }
}
