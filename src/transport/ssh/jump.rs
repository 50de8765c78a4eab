//! Jump hosts (`proxy_jump = "[user@]host[:port]"`): the device's SSH session runs inside a
//! `direct-tcpip` channel of a second SSH session, to the bastion — what OpenSSH's
//! `ProxyJump` does, in process, with the same host-key checks and credentials.
//!
//! libssh2 needs a socket for a session, so the device's session gets one end of a Unix
//! socket pair and a thread carries bytes between the other end and the bastion's channel.
//! The thread owns the bastion's session; it waits in `poll(2)` on both sockets (never a
//! sleep) and ends when either side closes.

use std::io::{Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::thread::JoinHandle;
use std::time::Instant;

use rustix::event::{PollFd, PollFlags};
use ssh2::{BlockDirections, Channel};

use super::{establish, tcp_connect, Creds, Fail, Hop, Link, Sock, GOODBYE, READ_CHUNK};
use crate::config::Device;
use crate::transport::TransportError;

/// Bytes buffered per direction before the pump stops reading that side.
const LIMIT: usize = 256 * 1024;
/// libssh2: the server refused to open the channel.
const CHANNEL_FAILURE: i32 = -21;

/// The running tunnel; dropping it waits for its thread (which ends once the device's
/// socket is closed).
pub(crate) struct Tunnel {
    thread: Option<JoinHandle<()>>,
}

impl Drop for Tunnel {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Connects and authenticates to the bastion, opens a `direct-tcpip` channel to the
/// target, and returns the socket the target's session should use.
pub(crate) fn open(
    bastion: &Hop,
    creds: &Creds,
    target: &Hop,
    device: &Device,
    deadline: Instant,
) -> Result<(UnixStream, Tunnel), TransportError> {
    let connect_deadline = (Instant::now() + device.connect_timeout).min(deadline);
    let tcp = tcp_connect(bastion, connect_deadline)?;
    // The bastion's key is never learned (its Hop never allows it), so nothing to commit.
    let link = establish(
        bastion,
        creds,
        Sock::Tcp(tcp),
        None,
        device,
        connect_deadline,
        deadline,
    )?
    .link;
    let stage = format!("tunnel through {} to {}", bastion.label, target.label);
    let channel_deadline = (Instant::now() + device.connect_timeout).min(deadline);
    let channel = link
        .retry(channel_deadline, || {
            link.session
                .channel_direct_tcpip(&target.host, target.port, None)
        })
        .map_err(|f| match f {
            Fail::Timeout(waited) => TransportError::Timeout {
                awaited: stage.clone(),
                waited,
            },
            f if f.code() == Some(CHANNEL_FAILURE) => TransportError::Unreachable {
                stage: stage.clone(),
                message: format!(
                    "the jump host refused to forward ({}): is AllowTcpForwarding on there, and is the device reachable from it?",
                    f.message()
                ),
            },
            f => TransportError::Unreachable {
                stage: stage.clone(),
                message: f.message(),
            },
        })?;
    log::debug!("ssh {}: tunnel to {} open", bastion.label, target.label);
    let io = |e: std::io::Error| TransportError::Unreachable {
        stage: stage.clone(),
        message: e.to_string(),
    };
    let (ours, theirs) = UnixStream::pair().map_err(io)?;
    theirs.set_nonblocking(true).map_err(io)?;
    let thread = std::thread::Builder::new()
        .name("mercury-ssh-jump".into())
        .spawn(move || pump(link, channel, theirs))
        .map_err(io)?;
    Ok((
        ours,
        Tunnel {
            thread: Some(thread),
        },
    ))
}

/// Carries bytes both ways until the device's side closes, the channel ends, or either
/// connection breaks.
fn pump(link: Link, mut ch: Channel, mut local: UnixStream) {
    let mut up: Vec<u8> = Vec::new(); // device session → bastion channel
    let mut down: Vec<u8> = Vec::new(); // bastion channel → device session
    let (mut local_eof, mut remote_eof, mut shut) = (false, false, false);
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        let mut progress = false;
        if down.len() < LIMIT && !remote_eof {
            match ch.read(&mut buf) {
                Ok(0) if ch.eof() => {
                    remote_eof = true;
                    progress = true;
                }
                Ok(0) => {}
                Ok(n) => {
                    down.extend_from_slice(&buf[..n]);
                    progress = true;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => break,
            }
        }
        if !down.is_empty() {
            match local.write(&down) {
                Ok(n) => {
                    down.drain(..n);
                    progress |= n > 0;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => break,
            }
        }
        if remote_eof && down.is_empty() && !shut {
            // The device side ended: let the device's session see EOF.
            let _ = local.shutdown(Shutdown::Write);
            shut = true;
        }
        if up.len() < LIMIT && !local_eof {
            match local.read(&mut buf) {
                Ok(0) => {
                    local_eof = true;
                    progress = true;
                }
                Ok(n) => {
                    up.extend_from_slice(&buf[..n]);
                    progress = true;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => progress = true,
                Err(_) => local_eof = true,
            }
        }
        if !up.is_empty() {
            match ch.write(&up) {
                Ok(n) => {
                    up.drain(..n);
                    progress |= n > 0;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => break,
            }
        }
        if local_eof && up.is_empty() {
            // Mercury is done with the device: nothing more to carry.
            break;
        }
        if !progress {
            let mut bastion = PollFlags::empty();
            if (!remote_eof && down.len() < LIMIT) || !up.is_empty() {
                bastion |= PollFlags::IN;
            }
            if matches!(
                link.session.block_directions(),
                BlockDirections::Outbound | BlockDirections::Both
            ) {
                bastion |= PollFlags::OUT;
            }
            let mut device = PollFlags::empty();
            if !local_eof && up.len() < LIMIT {
                device |= PollFlags::IN;
            }
            if !down.is_empty() {
                device |= PollFlags::OUT;
            }
            let mut fds = [
                PollFd::new(&link.sock, bastion),
                PollFd::new(&local, device),
            ];
            match rustix::event::poll(&mut fds, None) {
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(_) => break,
            }
        }
    }
    let _ = local.shutdown(Shutdown::Both);
    let deadline = Instant::now() + GOODBYE;
    let _ = link.retry(deadline, || ch.close());
    drop(ch);
    // Dropping the link says goodbye to the bastion.
    drop(link);
}
