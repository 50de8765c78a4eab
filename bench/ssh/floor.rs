//! The floor for the SSH benchmark: the least a libssh2 client must do for one change —
//! connect, exchange keys, authenticate with a key file, open one exec channel running a
//! no-op command, read it to the end. Same library and build as Mercury (the `ssh2` crate),
//! so the same key exchange and authentication; blocking mode, no host-key check, no
//! configuration, no lock, no audit. OpenSSL is bound the way Mercury binds it (on x86_64
//! Linux, loaded when the first connection opens: `transport::ssh::openssl`), so both pay
//! the same for it.
//!
//! ```text
//! ssh-floor HOST PORT USER KEY [COMMAND]      # one exec, prints elapsed ms
//! ssh-floor --rtt N HOST PORT USER KEY        # PTY shell: N empty lines, each awaiting the
//!                                             # prompt; prints the mean ms per line
//! ssh-floor --quickack HOST PORT USER KEY [COMMAND]
//!                                             # the exec floor, non-blocking, with
//!                                             # TCP_QUICKACK set before every wait as
//!                                             # Mercury does (docs/ssh.md)
//! ```
//!
//! Without `--quickack` the floor is plain blocking libssh2, which pays the ~40 ms stall of
//! sshd's Nagle against our delayed ACK after authentication (docs/proof.md, issue 18); the
//! `--quickack` floor is the one to compare with a Mercury that avoids it.
//!
//! Run by `bench/ssh/run`; not a test.

use std::error::Error;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Instant;

use ssh2::Session;

fn connect(host: &str, port: u16, user: &str, key: &str) -> Result<Session, Box<dyn Error>> {
    mercury::transport::ssh::load_openssl()?;
    let tcp = TcpStream::connect((host, port))?;
    // As Mercury does: libssh2 writes small packets.
    tcp.set_nodelay(true)?;
    let mut s = Session::new()?;
    s.set_tcp_stream(tcp);
    s.handshake()?;
    s.userauth_pubkey_file(user, None, Path::new(key), None)?;
    Ok(s)
}

/// Reads until the output ends in a prompt character (`#` or `>`, spaces allowed).
fn until_prompt(ch: &mut ssh2::Channel) -> Result<(), Box<dyn Error>> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = ch.read(&mut buf)?;
        if n == 0 {
            return Err("EOF before a prompt".into());
        }
        seen.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&seen);
        let t = text.trim_end_matches(' ');
        if t.ends_with('#') || t.ends_with('>') {
            return Ok(());
        }
    }
}

/// Calls `f` until libssh2 stops saying "would block", asking for quick ACKs and polling
/// the socket in between (what `--quickack` measures).
fn nb<T>(
    s: &Session,
    tcp: &TcpStream,
    mut f: impl FnMut() -> Result<T, ssh2::Error>,
) -> Result<T, Box<dyn Error>> {
    loop {
        match f() {
            Ok(v) => return Ok(v),
            Err(e) if e.code() == ssh2::ErrorCode::Session(-37) => wait(s, tcp)?,
            Err(e) => return Err(e.into()),
        }
    }
}

fn wait(s: &Session, tcp: &TcpStream) -> Result<(), Box<dyn Error>> {
    use rustix::event::{poll, PollFd, PollFlags};
    let flags = match s.block_directions() {
        ssh2::BlockDirections::Outbound => PollFlags::OUT,
        ssh2::BlockDirections::Both => PollFlags::IN | PollFlags::OUT,
        _ => PollFlags::IN,
    };
    if flags.contains(PollFlags::IN) {
        rustix::net::sockopt::set_tcp_quickack(tcp, true)?;
    }
    poll(&mut [PollFd::new(tcp, flags)], None)?;
    Ok(())
}

/// The exec floor, non-blocking with quick ACKs.
fn quickack(host: &str, port: u16, user: &str, key: &str, cmd: &str) -> Result<(), Box<dyn Error>> {
    let started = Instant::now();
    mercury::transport::ssh::load_openssl()?;
    let tcp = TcpStream::connect((host, port))?;
    tcp.set_nodelay(true)?;
    let mut s = Session::new()?;
    s.set_tcp_stream(tcp.try_clone()?);
    s.set_blocking(false);
    let mut h = s.clone();
    nb(&s, &tcp, || h.handshake())?;
    nb(&s, &tcp, || {
        s.userauth_pubkey_file(user, None, Path::new(key), None)
    })?;
    let mut ch = nb(&s, &tcp, || s.channel_session())?;
    nb(&s, &tcp, || ch.exec(cmd))?;
    let mut buf = [0u8; 4096];
    loop {
        match ch.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => wait(&s, &tcp)?,
            Err(e) => return Err(e.into()),
        }
    }
    nb(&s, &tcp, || ch.wait_close())?;
    println!("{:.3}", started.elapsed().as_secs_f64() * 1000.0);
    Ok(())
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--quickack") {
        let [_, host, port, user, key, rest @ ..] = args.as_slice() else {
            return Err("usage: ssh-floor --quickack HOST PORT USER KEY [COMMAND]".into());
        };
        let cmd = rest.first().map(String::as_str).unwrap_or("true");
        return quickack(host, port.parse()?, user, key, cmd);
    }
    let rtt = if args.first().map(String::as_str) == Some("--rtt") {
        let n: u32 = args.get(1).ok_or("--rtt N")?.parse()?;
        args.drain(..2);
        Some(n)
    } else {
        None
    };
    let [host, port, user, key, rest @ ..] = args.as_slice() else {
        return Err("usage: ssh-floor [--rtt N] HOST PORT USER KEY [COMMAND]".into());
    };
    let port: u16 = port.parse()?;
    let started = Instant::now();
    let s = connect(host, port, user, key)?;
    let mut ch = s.channel_session()?;
    match rtt {
        None => {
            ch.exec(rest.first().map(String::as_str).unwrap_or("true"))?;
            let mut out = Vec::new();
            ch.read_to_end(&mut out)?;
            ch.wait_close()?;
            println!("{:.3}", started.elapsed().as_secs_f64() * 1000.0);
        }
        Some(n) => {
            ch.request_pty("dumb", None, Some((511, 1000, 0, 0)))?;
            ch.shell()?;
            until_prompt(&mut ch)?;
            let t = Instant::now();
            for _ in 0..n {
                ch.write_all(b"\n")?;
                until_prompt(&mut ch)?;
            }
            println!(
                "{:.3}",
                t.elapsed().as_secs_f64() * 1000.0 / f64::from(n.max(1))
            );
            ch.write_all(b"exit\n")?;
            let mut rest = Vec::new();
            ch.read_to_end(&mut rest)?;
            ch.wait_close()?;
        }
    }
    Ok(())
}
