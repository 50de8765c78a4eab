//! A device that counts its sessions the way a switch with few VTY lines does: from the TCP
//! accept until the session is over on the device — the connection closed by the server
//! *and* the device's CLI process gone — observed by the kernel, not reported by the
//! simulator itself.
//!
//! Two loopback listeners make it: a TCP proxy in front of a real sshd (clients connect to
//! [`CountingDevice::port`]), and a registry that every CLI process connects to when it
//! starts (the [`CountingDevice::force_command`] wrapper opens the connection with bash's
//! `/dev/tcp`, writes `$SSH_CONNECTION`, and runs the simulator; the socket stays open in
//! the wrapper until the device has torn the session down, and the kernel closes it
//! however the wrapper ends). `SSH_CONNECTION`
//! names the proxy's upstream port, which ties a CLI to its TCP session.
//!
//! A session is open from accept until the proxy has read EOF from sshd (counted *before*
//! that EOF is passed on to the client, so a client that waits for the server's close
//! knows the count has dropped) and its CLI's registry connection has closed.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Instant;

#[derive(Default)]
struct Session {
    tcp_open: bool,
    cli_open: u32,
}

#[derive(Default)]
struct Counts {
    sessions: HashMap<u64, Session>,
    by_upstream_port: HashMap<u16, u64>,
    next: u64,
    open: usize,
    max: usize,
    accepted: usize,
    clis: usize,
    /// (ms since start, session, what, open sessions after it) for failure messages.
    events: Vec<(u128, u64, &'static str, usize)>,
}

impl Counts {
    fn recount(&mut self, started: Instant, id: u64, what: &'static str) {
        self.open = self
            .sessions
            .values()
            .filter(|s| s.tcp_open || s.cli_open > 0)
            .count();
        self.max = self.max.max(self.open);
        self.events
            .push((started.elapsed().as_millis(), id, what, self.open));
    }
}

/// The proxy and the registry; both threads live as long as the test process.
pub struct CountingDevice {
    /// Where clients connect (the proxy on 127.0.0.1).
    pub port: u16,
    /// Where the CLI wrapper connects.
    pub registry_port: u16,
    counts: Arc<Mutex<Counts>>,
    upstream: Arc<AtomicU16>,
}

impl CountingDevice {
    /// Starts the proxy and the registry; [`CountingDevice::front`] names the sshd behind
    /// the proxy (which needs [`CountingDevice::force_command`] first).
    pub fn start() -> CountingDevice {
        let started = Instant::now();
        let counts = Arc::new(Mutex::new(Counts::default()));
        let proxy = TcpListener::bind("127.0.0.1:0").expect("bind proxy");
        let registry = TcpListener::bind("127.0.0.1:0").expect("bind registry");
        let port = proxy.local_addr().unwrap().port();
        let registry_port = registry.local_addr().unwrap().port();

        let upstream_port = Arc::new(AtomicU16::new(0));
        let c = Arc::clone(&counts);
        let up = Arc::clone(&upstream_port);
        thread::spawn(move || {
            for client in proxy.incoming().flatten() {
                let sshd_port = up.load(Ordering::SeqCst);
                let upstream = TcpStream::connect(("127.0.0.1", sshd_port)).expect("sshd");
                let _ = client.set_nodelay(true);
                let _ = upstream.set_nodelay(true);
                let id = {
                    let mut k = c.lock().unwrap();
                    let id = k.next;
                    k.next += 1;
                    k.accepted += 1;
                    let up_port = upstream.local_addr().unwrap().port();
                    k.by_upstream_port.insert(up_port, id);
                    k.sessions.insert(
                        id,
                        Session {
                            tcp_open: true,
                            cli_open: 0,
                        },
                    );
                    k.recount(started, id, "accept");
                    id
                };
                // client -> sshd
                let (mut from_client, mut to_up) =
                    (client.try_clone().unwrap(), upstream.try_clone().unwrap());
                thread::spawn(move || {
                    pump(&mut from_client, &mut to_up);
                    let _ = to_up.shutdown(Shutdown::Write);
                });
                // sshd -> client: sshd closing is the end of the TCP session.
                let (mut from_up, mut to_client) = (upstream, client);
                let c2 = Arc::clone(&c);
                thread::spawn(move || {
                    pump(&mut from_up, &mut to_client);
                    {
                        let mut k = c2.lock().unwrap();
                        if let Some(s) = k.sessions.get_mut(&id) {
                            s.tcp_open = false;
                        }
                        k.recount(started, id, "tcp close");
                    }
                    let _ = to_client.shutdown(Shutdown::Write);
                });
            }
        });

        let c = Arc::clone(&counts);
        thread::spawn(move || {
            for cli in registry.incoming().flatten() {
                let c = Arc::clone(&c);
                thread::spawn(move || {
                    let mut reader = BufReader::new(cli);
                    let mut line = String::new();
                    let _ = reader.read_line(&mut line);
                    // SSH_CONNECTION: client-ip client-port server-ip server-port
                    let up_port: Option<u16> =
                        line.split_whitespace().nth(1).and_then(|p| p.parse().ok());
                    let id = {
                        let mut k = c.lock().unwrap();
                        k.clis += 1;
                        let id = match up_port.and_then(|p| k.by_upstream_port.get(&p).copied()) {
                            Some(id) => id,
                            None => {
                                // A CLI with no known connection is a session of its own.
                                let id = k.next;
                                k.next += 1;
                                id
                            }
                        };
                        k.sessions.entry(id).or_default().cli_open += 1;
                        k.recount(started, id, "cli start");
                        id
                    };
                    let mut sink = [0u8; 256];
                    while matches!(reader.get_mut().read(&mut sink), Ok(n) if n > 0) {}
                    let mut k = c.lock().unwrap();
                    if let Some(s) = k.sessions.get_mut(&id) {
                        s.cli_open = s.cli_open.saturating_sub(1);
                    }
                    k.recount(started, id, "cli exit");
                });
            }
        });
        CountingDevice {
            port,
            registry_port,
            counts,
            upstream: upstream_port,
        }
    }

    /// Forwards connections to the sshd on `port`.
    pub fn front(&self, port: u16) {
        self.upstream.store(port, Ordering::SeqCst);
    }

    /// The `ForceCommand` argv: `sim_argv` run behind the registry wrapper. After the CLI
    /// has ended (its `exit`, or the end of its terminal when the client hangs up) the
    /// device takes `teardown_ms` more to free the session — a VTY line released a moment
    /// after the CLI is done, as real switches do; a hangup does not cut that short (the
    /// wrapper, and the CLI under it, ignore SIGHUP; the CLI still ends on its terminal's
    /// end). sshd reports the exit status and closes the
    /// channel only after that; a client that lets the next session in before then makes
    /// the device count two sessions, every time, not only when the timing is unlucky.
    pub fn force_command(&self, sim_argv: &[String], teardown_ms: u32) -> Vec<String> {
        let script = format!(
            "trap '' HUP; exec 3<>/dev/tcp/127.0.0.1/{} || exit 1; \
             printf '%s\\n' \"$SSH_CONNECTION\" >&3; \"$0\" \"$@\"; rc=$?; sleep {}.{:03}; exit $rc",
            self.registry_port,
            teardown_ms / 1000,
            teardown_ms % 1000
        );
        let mut argv = vec!["/bin/bash".to_string(), "-c".to_string(), script];
        argv.extend(sim_argv.iter().cloned());
        argv
    }

    /// Most sessions open at once so far.
    pub fn max_open(&self) -> usize {
        self.counts.lock().unwrap().max
    }

    /// Sessions open now.
    pub fn open(&self) -> usize {
        self.counts.lock().unwrap().open
    }

    /// TCP connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.counts.lock().unwrap().accepted
    }

    /// CLI processes registered so far.
    pub fn clis(&self) -> usize {
        self.counts.lock().unwrap().clis
    }

    /// Forgets the maximum (the next burst is measured on its own).
    pub fn reset_max(&self) {
        let mut k = self.counts.lock().unwrap();
        k.max = k.open;
    }

    /// The event log, one line per event, for a failure message.
    pub fn timeline(&self) -> String {
        let k = self.counts.lock().unwrap();
        k.events
            .iter()
            .map(|(t, id, what, open)| {
                format!("{t:>7} ms  session {id:>3}  {what:<9}  open {open}")
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn pump(from: &mut TcpStream, to: &mut TcpStream) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    // The other side is gone: keep reading until this side ends too.
                    while matches!(from.read(&mut buf), Ok(n) if n > 0) {}
                    return;
                }
            }
        }
    }
}
