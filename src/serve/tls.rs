//! TLS termination for the one connection `serve-jsonrpc --inetd` serves: a rustls server
//! session between the inherited socket (stdin to read, stdout to write) and the HTTP
//! layer, which sees only plaintext.
//!
//! A reader thread blocks on the socket, feeds the records to the session and hands the
//! decrypted bytes over a channel (`http::Connection::from_chunks`), so the HTTP layer's
//! deadlines work exactly as on a plain connection; the handshake is driven from there
//! too. Responses are encrypted through [`TlsWriter`]. The session and the socket's write
//! side sit behind one mutex, so the two threads never interleave records. A failed
//! handshake (wrong version, no or untrusted client certificate) ends the connection with
//! rustls's alert; it is logged, and nothing was read, so nothing is run or audited.

use std::io::{Read, Write};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex, MutexGuard};

use rustls::{ServerConfig, ServerConnection};

struct Shared {
    session: ServerConnection,
    out: Box<dyn Write + Send>,
}

impl Shared {
    /// Sends every pending TLS record.
    fn flush_tls(&mut self) -> std::io::Result<()> {
        while self.session.wants_write() {
            self.session.write_tls(&mut self.out)?;
        }
        self.out.flush()
    }
}

/// What the handshake learnt about the client.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Peer {
    /// `TLSv1_3` / `TLSv1_2`.
    pub version: Option<String>,
    /// SHA-256 fingerprint (`SHA256:` + hex) of the verified client certificate.
    pub client_cert: Option<String>,
}

/// The write side of a TLS connection: plaintext in, records out.
pub struct TlsWriter {
    shared: Arc<Mutex<Shared>>,
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    // A poisoned lock means the reader thread panicked; the session state is still the
    // one rustls left, and the connection is about to end anyway.
    shared.lock().unwrap_or_else(|p| p.into_inner())
}

impl TlsWriter {
    /// Sends `close_notify` (the orderly end of a TLS connection), if a handshake was
    /// completed: a connection that never spoke TLS gets nothing.
    pub fn close(&mut self) {
        let mut s = lock(&self.shared);
        if s.session.is_handshaking() {
            return;
        }
        s.session.send_close_notify();
        let _ = s.flush_tls();
    }

    /// The negotiated version and the client certificate, once the handshake is done.
    pub fn peer(&self) -> Peer {
        let s = lock(&self.shared);
        use sha2::Digest;
        Peer {
            version: s.session.protocol_version().map(|v| format!("{v:?}")),
            client_cert: s
                .session
                .peer_certificates()
                .and_then(|c| c.first())
                .map(|c| {
                    let digest = sha2::Sha256::digest(c.as_ref());
                    format!(
                        "SHA256:{}",
                        digest
                            .iter()
                            .map(|b| format!("{b:02x}"))
                            .collect::<String>()
                    )
                }),
        }
    }
}

impl Write for TlsWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut s = lock(&self.shared);
        let n = s.session.writer().write(buf)?;
        s.flush_tls()?;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let mut s = lock(&self.shared);
        s.session.writer().flush()?;
        s.flush_tls()
    }
}

/// Starts a TLS server session on `input`/`output`: the decrypted chunks (the channel
/// closes at the end of the stream, on a TLS error, or on the client's `close_notify`) and
/// the writer for responses.
pub fn start(
    config: Arc<ServerConfig>,
    mut input: impl Read + Send + 'static,
    output: impl Write + Send + 'static,
) -> Result<(Receiver<Vec<u8>>, TlsWriter), rustls::Error> {
    let shared = Arc::new(Mutex::new(Shared {
        session: ServerConnection::new(config)?,
        out: Box::new(output),
    }));
    let (tx, rx) = mpsc::sync_channel::<Vec<u8>>(4);
    let reader = Arc::clone(&shared);
    std::thread::spawn(move || {
        let mut raw = vec![0u8; 16 * 1024];
        loop {
            let n = match input.read(&mut raw) {
                Ok(0) => return,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return,
            };
            let (plain, done) = {
                let mut s = lock(&reader);
                feed(&mut s, &raw[..n])
            };
            if !plain.is_empty() && tx.send(plain).is_err() {
                return;
            }
            if done {
                return;
            }
        }
    });
    Ok((rx, TlsWriter { shared }))
}

/// Feeds received bytes to the session; returns the plaintext they carried and whether
/// the connection is over (a TLS error, or the peer's `close_notify`).
fn feed(s: &mut Shared, mut bytes: &[u8]) -> (Vec<u8>, bool) {
    let mut plain = Vec::new();
    while !bytes.is_empty() {
        match s.session.read_tls(&mut bytes) {
            // Nothing taken from a non-empty buffer: rustls will take no more.
            Ok(0) => return (plain, true),
            Ok(_) => {}
            Err(e) => {
                log::warn!("serve-jsonrpc: TLS: {e}");
                return (plain, true);
            }
        }
        let state = match s.session.process_new_packets() {
            Ok(state) => state,
            Err(e) => {
                log::warn!("serve-jsonrpc: TLS handshake or record refused: {e}");
                // The alert rustls queued tells the client why.
                let _ = s.flush_tls();
                return (plain, true);
            }
        };
        let available = state.plaintext_bytes_to_read();
        if available > 0 {
            let start = plain.len();
            plain.resize(start + available, 0);
            if s.session.reader().read_exact(&mut plain[start..]).is_err() {
                plain.truncate(start);
            }
        }
        if s.flush_tls().is_err() {
            return (plain, true);
        }
        if state.peer_has_closed() {
            return (plain, true);
        }
    }
    (plain, false)
}
