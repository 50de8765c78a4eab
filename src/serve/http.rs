//! A minimal HTTP/1.1 server side for exactly one connection (`serve-jsonrpc --inetd`).
//!
//! This module owns the wire: reading requests (the head parsed by `httparse`, then a
//! `Content-Length` body) from a byte stream, keep-alive, time limits, and writing
//! responses. It knows nothing of JSON-RPC, authentication, TLS or Mercury requests: the
//! head and the body are read in two steps so that the caller can authenticate in between
//! (and only then answer `Expect: 100-continue`). It handles only what Ironic's JSON-RPC
//! client (python-requests through keystoneauth) and curl send: no chunked request bodies,
//! no pipelining guarantees beyond reading requests in order.
//!
//! Refused, and answered with an error status before the connection closes: a head over
//! [`MAX_HEAD_BYTES`] or with more than [`MAX_HEADERS`] fields, a body over
//! [`MAX_BODY_BYTES`], a `Content-Length` that appears twice or is not plain digits (`+5`,
//! `5, 5`: the ambiguity request smuggling lives on), `Transfer-Encoding`, and a request
//! whose head and body do not arrive within the request deadline from its first byte.

use std::io::{Read, Write};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Largest request head (request line plus headers).
pub const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Most header fields in one request.
pub const MAX_HEADERS: usize = 100;
/// Largest request body.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;
/// Default for how long a request (head and body) may take to arrive once its first byte
/// has come. Ironic's client sends a request in one or two segments.
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(10);

/// One parsed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpRequest {
    /// `POST`, `GET`, ...
    pub method: String,
    /// The request target (`/`).
    pub target: String,
    /// `HTTP/1.1` or `HTTP/1.0`.
    pub version: String,
    /// Header names (lowercased) and values, in order.
    pub headers: Vec<(String, String)>,
    /// The body's length from `Content-Length` (0 without one).
    pub content_length: usize,
    /// The body (empty until [`Connection::read_body`]; empty without `Content-Length`).
    pub body: Vec<u8>,
}

impl HttpRequest {
    /// The first value of a header (name compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the client wants the connection kept open after the response.
    pub fn keep_alive(&self) -> bool {
        let tokens: Vec<String> = self
            .header("connection")
            .unwrap_or("")
            .split(',')
            .map(|t| t.trim().to_ascii_lowercase())
            .collect();
        if self.version == "HTTP/1.0" {
            tokens.iter().any(|t| t == "keep-alive")
        } else {
            !tokens.iter().any(|t| t == "close")
        }
    }

    /// The client holds its body back until it is told `100 Continue` (or a while passes).
    pub fn expects_continue(&self) -> bool {
        self.content_length > 0
            && self
                .header("expect")
                .is_some_and(|e| e.eq_ignore_ascii_case("100-continue"))
    }
}

/// Why no request could be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The client closed the connection between requests (the normal end).
    #[error("connection closed")]
    Closed,
    /// Nothing arrived for the idle timeout.
    #[error("idle for {0:?}")]
    Idle(Duration),
    /// The request was malformed, too large or too slow; answer with this status and close.
    #[error("{status} {message}")]
    Bad {
        /// The HTTP status to answer with.
        status: u16,
        /// Why.
        message: String,
    },
}

fn bad(status: u16, message: impl Into<String>) -> ReadError {
    ReadError::Bad {
        status,
        message: message.into(),
    }
}

/// How long a connection may wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest wait for the first byte of the next request.
    pub idle: Duration,
    /// Longest a request's head and body may take to arrive, from its first byte.
    pub request: Duration,
}

/// Reads requests from a stream of byte chunks. A plain stream is read on a helper thread
/// (so that waits can be bounded without non-blocking I/O on an inherited descriptor); a
/// TLS session hands over its decrypted chunks the same way.
pub struct Connection {
    chunks: Receiver<Vec<u8>>,
    buf: Vec<u8>,
    eof: bool,
    limits: Limits,
    /// The current request's deadline, set at its first byte.
    deadline: Option<Instant>,
}

impl Connection {
    /// Starts reading `input` on a helper thread.
    pub fn new<R: Read + Send + 'static>(mut input: R, limits: Limits) -> Connection {
        let (tx, rx) = mpsc::sync_channel::<Vec<u8>>(4);
        std::thread::spawn(move || {
            let mut chunk = vec![0u8; 16 * 1024];
            loop {
                match input.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => {
                        if tx.send(chunk[..n].to_vec()).is_err() {
                            break;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                }
            }
        });
        Connection::from_chunks(rx, limits)
    }

    /// Reads the chunks another reader delivers; the end of the stream is the sender
    /// hanging up.
    pub fn from_chunks(chunks: Receiver<Vec<u8>>, limits: Limits) -> Connection {
        Connection {
            chunks,
            buf: Vec::new(),
            eof: false,
            limits,
            deadline: None,
        }
    }

    /// Waits for more bytes until `deadline`. `Ok(false)` at end of stream.
    fn fill(&mut self, deadline: Instant) -> Result<bool, RecvTimeoutError> {
        if self.eof {
            return Ok(false);
        }
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.chunks.recv_timeout(wait) {
            Ok(c) => {
                self.buf.extend_from_slice(&c);
                Ok(true)
            }
            Err(RecvTimeoutError::Disconnected) => {
                self.eof = true;
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Reads the next request's head (the body stays unread: see [`Connection::read_body`]).
    pub fn next_head(&mut self) -> Result<HttpRequest, ReadError> {
        self.deadline = None;
        let idle_deadline = Instant::now() + self.limits.idle;
        loop {
            // Blank lines between requests are tolerated (RFC 9112 §2.2).
            let blank = self
                .buf
                .iter()
                .take_while(|b| **b == b'\r' || **b == b'\n')
                .count();
            self.buf.drain(..blank);
            if !self.buf.is_empty() && self.deadline.is_none() {
                self.deadline = Some(Instant::now() + self.limits.request);
            }
            if !self.buf.is_empty() {
                if let Some((req, len)) = parse_head(&self.buf)? {
                    self.buf.drain(..len);
                    return Ok(req);
                }
            }
            if self.buf.len() > MAX_HEAD_BYTES {
                return Err(bad(431, "request header fields too large"));
            }
            match self.fill(self.deadline.unwrap_or(idle_deadline)) {
                Ok(true) => {}
                Ok(false) if self.buf.is_empty() => return Err(ReadError::Closed),
                Ok(false) => return Err(bad(400, "connection closed inside a request")),
                Err(_) if self.buf.is_empty() => return Err(ReadError::Idle(self.limits.idle)),
                Err(_) => return Err(bad(408, "request not received in time")),
            }
        }
    }

    /// Reads `req`'s body, within the request's deadline. `on_continue` is called first
    /// when the client waits for `100 Continue` and has sent none of the body yet.
    pub fn read_body(
        &mut self,
        req: &mut HttpRequest,
        on_continue: impl FnOnce(),
    ) -> Result<(), ReadError> {
        let length = req.content_length;
        if req.expects_continue() && self.buf.is_empty() {
            on_continue();
        }
        let deadline = self
            .deadline
            .unwrap_or_else(|| Instant::now() + self.limits.request);
        while self.buf.len() < length {
            match self.fill(deadline) {
                Ok(true) => {}
                Ok(false) => return Err(bad(400, "connection closed inside a request body")),
                Err(_) => return Err(bad(408, "request body not received in time")),
            }
        }
        req.body = self.buf.drain(..length).collect();
        Ok(())
    }

    /// Reads the next whole request (head and body), for callers that need nothing between.
    pub fn next_request(&mut self) -> Result<HttpRequest, ReadError> {
        let mut req = self.next_head()?;
        self.read_body(&mut req, || ())?;
        Ok(req)
    }
}

/// Parses a complete head at the start of `buf`: the request and the head's length, or
/// `None` while it is incomplete.
fn parse_head(buf: &[u8]) -> Result<Option<(HttpRequest, usize)>, ReadError> {
    let mut fields = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut fields);
    let len = match parsed.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(bad(431, "too many header fields")),
        Err(httparse::Error::Version) => {
            return Err(bad(505, "only HTTP/1.0 and HTTP/1.1 are supported"))
        }
        Err(e) => return Err(bad(400, format!("malformed request head ({e})"))),
    };
    let method = parsed.method.unwrap_or_default();
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(bad(400, "malformed request method"));
    }
    let version = match parsed.version {
        Some(0) => "HTTP/1.0",
        Some(1) => "HTTP/1.1",
        _ => return Err(bad(505, "only HTTP/1.0 and HTTP/1.1 are supported")),
    };
    let mut headers = Vec::with_capacity(parsed.headers.len());
    for h in parsed.headers.iter() {
        let value = std::str::from_utf8(h.value)
            .map_err(|_| bad(400, "request head is not UTF-8"))?
            .trim();
        headers.push((h.name.to_ascii_lowercase(), value.to_string()));
    }
    let mut req = HttpRequest {
        method: method.to_string(),
        target: parsed.path.unwrap_or_default().to_string(),
        version: version.to_string(),
        headers,
        content_length: 0,
        body: Vec::new(),
    };
    if req.header("transfer-encoding").is_some() {
        return Err(bad(501, "chunked request bodies are not supported"));
    }
    req.content_length = content_length(&req)?;
    Ok(Some((req, len)))
}

/// The one `Content-Length`, as plain decimal digits (RFC 9110 §8.6). A second field, a
/// list, a sign or anything but digits is refused: two parties reading one request with
/// different lengths is how a body becomes a second, smuggled request.
fn content_length(req: &HttpRequest) -> Result<usize, ReadError> {
    let mut values = req
        .headers
        .iter()
        .filter(|(n, _)| n == "content-length")
        .map(|(_, v)| v.as_str());
    let Some(value) = values.next() else {
        return Ok(0);
    };
    if values.next().is_some() {
        return Err(bad(400, "more than one Content-Length"));
    }
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad(400, "invalid Content-Length"));
    }
    let too_large = || {
        bad(
            413,
            format!("request body larger than {MAX_BODY_BYTES} bytes"),
        )
    };
    let length = value.parse::<usize>().map_err(|_| too_large())?;
    if length > MAX_BODY_BYTES {
        return Err(too_large());
    }
    Ok(length)
}
/// A response to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    /// Status code.
    pub status: u16,
    /// Extra headers (besides Content-Type, Content-Length, Date, Server, Connection).
    pub headers: Vec<(String, String)>,
    /// Content type of the body.
    pub content_type: &'static str,
    /// The body.
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// An `application/json` response.
    pub fn json(status: u16, body: String) -> HttpResponse {
        HttpResponse {
            status,
            headers: Vec::new(),
            content_type: "application/json",
            body: body.into_bytes(),
        }
    }

    /// The bytes on the wire; `close` adds `Connection: close`.
    pub fn to_bytes(&self, date: &str, close: bool) -> Vec<u8> {
        let mut out = format!("HTTP/1.1 {} {}\r\n", self.status, reason(self.status));
        for (n, v) in &self.headers {
            out.push_str(&format!("{n}: {v}\r\n"));
        }
        if self.status != 204 {
            out.push_str(&format!("Content-Type: {}\r\n", self.content_type));
        }
        out.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        out.push_str(&format!("Date: {date}\r\n"));
        out.push_str(&format!(
            "Server: mercury-jsonrpc/{}\r\n",
            env!("CARGO_PKG_VERSION")
        ));
        if close {
            out.push_str("Connection: close\r\n");
        }
        out.push_str("\r\n");
        let mut bytes = out.into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes
    }
}

/// Writes a response and flushes.
pub fn write_response(
    out: &mut dyn Write,
    response: &HttpResponse,
    close: bool,
) -> std::io::Result<()> {
    // IMF-fixdate (RFC 9110): `Sun, 29 Nov 2026 21:55:35 GMT`.
    let date = jiff::fmt::rfc2822::DateTimePrinter::new()
        .timestamp_to_rfc9110_string(&jiff::Timestamp::now())
        .unwrap_or_default();
    out.write_all(&response.to_bytes(&date, close))?;
    out.flush()
}

/// The reason phrase of a status code.
pub fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        411 => "Length Required",
        413 => "Payload Too Large",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        505 => "HTTP Version Not Supported",
        _ => "Unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(idle: Duration) -> Limits {
        Limits {
            idle,
            request: Duration::from_secs(5),
        }
    }

    fn conn(bytes: &'static [u8]) -> Connection {
        Connection::new(bytes, limits(Duration::from_secs(5)))
    }

    fn status_of(bytes: &'static [u8]) -> u16 {
        match conn(bytes).next_request() {
            Err(ReadError::Bad { status, .. }) => status,
            other => panic!("{}: {other:?}", String::from_utf8_lossy(bytes)),
        }
    }

    #[test]
    fn two_requests_on_one_connection() {
        let mut c = conn(
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}\r\nPOST / HTTP/1.1\r\nContent-Length: 3\r\nConnection: close\r\n\r\n[1]",
        );
        let a = c.next_request().unwrap();
        assert_eq!((a.method.as_str(), a.body.as_slice()), ("POST", &b"{}"[..]));
        assert!(a.keep_alive());
        let b = c.next_request().unwrap();
        assert_eq!(b.body, b"[1]");
        assert!(!b.keep_alive());
        assert_eq!(c.next_request(), Err(ReadError::Closed));
    }

    #[test]
    fn refusals() {
        for (bytes, status) in [
            (&b"GARBAGE\r\n\r\n"[..], 400),
            (&b"POST / HTTP/2\r\n\r\n"[..], 505),
            (
                &b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"[..],
                501,
            ),
            (&b"POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n"[..], 400),
            (
                &b"POST / HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n"[..],
                413,
            ),
            (
                &b"POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n"[..],
                413,
            ),
            (&b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nab"[..], 400),
            (&b"POST / HTTP/1.1\r\n folded\r\n\r\n"[..], 400),
            (&b"post / HTTP/1.1\r\n\r\n"[..], 400),
        ] {
            let got = match Connection::new(bytes, limits(Duration::from_secs(5))).next_request() {
                Err(ReadError::Bad { status, .. }) => status,
                other => panic!("{}: {other:?}", String::from_utf8_lossy(bytes)),
            };
            assert_eq!(got, status, "{}", String::from_utf8_lossy(bytes));
        }
    }

    /// Regression (issue 13 item 8): the first of two Content-Length fields won, and the
    /// bytes past it were read as a second request.
    #[test]
    fn duplicate_content_length_is_refused() {
        assert_eq!(
            status_of(b"POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}"),
            400
        );
        assert_eq!(
            status_of(b"POST / HTTP/1.1\r\nContent-Length: 2\r\ncontent-length: 2\r\n\r\n{}"),
            400
        );
        assert_eq!(
            status_of(b"POST / HTTP/1.1\r\nContent-Length: 2, 2\r\n\r\n{}"),
            400
        );
    }

    /// Regression (issue 13 item 8): `+2` parsed as 2 (Rust's integer parser takes a sign).
    #[test]
    fn signed_content_length_is_refused() {
        assert_eq!(
            status_of(b"POST / HTTP/1.1\r\nContent-Length: +2\r\n\r\n{}"),
            400
        );
        assert_eq!(
            status_of(b"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n"),
            400
        );
    }

    #[test]
    fn too_many_headers() {
        let mut head = String::from("POST / HTTP/1.1\r\n");
        for i in 0..=MAX_HEADERS {
            head.push_str(&format!("X-{i}: y\r\n"));
        }
        head.push_str("\r\n");
        let bytes: &'static [u8] = Box::leak(head.into_bytes().into_boxed_slice());
        assert_eq!(status_of(bytes), 431);
    }

    #[test]
    fn the_body_is_read_only_when_asked_and_continue_only_then() {
        let mut c = conn(b"POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n");
        let mut req = c.next_head().unwrap();
        assert!(req.expects_continue());
        let mut asked = 0;
        // The body never comes: the stream ends.
        assert!(matches!(
            c.read_body(&mut req, || asked += 1),
            Err(ReadError::Bad { status: 400, .. })
        ));
        assert_eq!(asked, 1);
    }

    #[test]
    fn http10_closes_unless_asked() {
        let mut c = conn(b"GET / HTTP/1.0\r\n\r\n");
        assert!(!c.next_request().unwrap().keep_alive());
    }

    #[test]
    fn response_bytes() {
        let r = HttpResponse::json(200, "{}".into());
        let text = String::from_utf8(r.to_bytes("D", false)).unwrap();
        assert!(text.starts_with(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nDate: D\r\n"
        ));
        assert!(text.ends_with("\r\n\r\n{}"));
    }

    #[test]
    fn idle_connection_times_out() {
        let (_keep, read_end) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut c = Connection::new(read_end, limits(Duration::from_millis(50)));
        assert_eq!(
            c.next_request(),
            Err(ReadError::Idle(Duration::from_millis(50)))
        );
    }

    /// A request whose first byte came must be whole within the request deadline, however
    /// often a byte trickles in (each byte used to restart nothing, but the deadline was a
    /// fixed minute).
    #[test]
    fn a_dripped_head_is_cut_at_the_request_deadline() {
        let (tx, rx) = mpsc::sync_channel::<Vec<u8>>(64);
        let mut c = Connection::from_chunks(
            rx,
            Limits {
                idle: Duration::from_secs(30),
                request: Duration::from_millis(300),
            },
        );
        let drip = std::thread::spawn(move || {
            let mut sent = 0;
            for b in b"POST / HTTP/1.1\r\nHost: a-long-host-name.example\r\n\r\n" {
                if tx.send(vec![*b]).is_err() {
                    break;
                }
                sent += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
            sent
        });
        let got = c.next_head();
        drop(c);
        assert!(
            matches!(got, Err(ReadError::Bad { status: 408, .. })),
            "{got:?}"
        );
        assert!(drip.join().unwrap() < 49, "the whole head was accepted");
    }
}
