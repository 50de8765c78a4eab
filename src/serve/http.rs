//! A minimal HTTP/1.1 server side for exactly one connection (`serve-jsonrpc --inetd`).
//!
//! This module owns the wire: reading requests (request line, headers, a `Content-Length`
//! body) from a byte stream, keep-alive, time limits, and writing responses. It knows
//! nothing of JSON-RPC, authentication or Mercury requests. It handles only what Ironic's
//! JSON-RPC client (python-requests through keystoneauth) and curl send: no chunked request
//! bodies, no pipelining guarantees beyond reading requests in order, no TLS.

use std::io::{Read, Write};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Largest request head (request line plus headers).
pub const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Largest request body.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;
/// Longest a single request may take to arrive once its first byte has come.
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(60);

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
    /// The body (empty without `Content-Length`).
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
    /// The request was malformed or too large; answer with this status and close.
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

/// Reads requests from a byte stream. The stream is read on a helper thread so that waits
/// can be bounded without non-blocking I/O on an inherited descriptor.
pub struct Connection {
    chunks: Receiver<Vec<u8>>,
    buf: Vec<u8>,
    eof: bool,
    idle: Duration,
}

impl Connection {
    /// Starts reading `input`; between requests, `idle` is the longest wait.
    pub fn new<R: Read + Send + 'static>(mut input: R, idle: Duration) -> Connection {
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
        Connection {
            chunks: rx,
            buf: Vec::new(),
            eof: false,
            idle,
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

    /// Reads the next request. `on_expect_continue` is called (once) when the client asked
    /// for `Expect: 100-continue`, before the body is read (it should send `100 Continue`).
    pub fn next_request(
        &mut self,
        mut on_expect_continue: impl FnMut(),
    ) -> Result<HttpRequest, ReadError> {
        // Blank lines between requests are tolerated (RFC 9112 §2.2).
        let idle_deadline = Instant::now() + self.idle;
        let mut deadline = idle_deadline;
        let head_end = loop {
            while self.buf.first().is_some_and(|b| *b == b'\r' || *b == b'\n') {
                self.buf.remove(0);
            }
            if !self.buf.is_empty() && deadline == idle_deadline {
                deadline = Instant::now() + REQUEST_DEADLINE;
            }
            if let Some(end) = find_head_end(&self.buf) {
                break end;
            }
            if self.buf.len() > MAX_HEAD_BYTES {
                return Err(bad(431, "request header fields too large"));
            }
            match self.fill(deadline) {
                Ok(true) => {}
                Ok(false) if self.buf.is_empty() => return Err(ReadError::Closed),
                Ok(false) => return Err(bad(400, "connection closed inside a request")),
                Err(_) if self.buf.is_empty() => return Err(ReadError::Idle(self.idle)),
                Err(_) => return Err(bad(408, "request not received in time")),
            }
        };
        let (head_len, body_start) = head_end;
        let head = String::from_utf8(self.buf[..head_len].to_vec())
            .map_err(|_| bad(400, "request head is not UTF-8"))?;
        self.buf.drain(..body_start);
        let mut req = parse_head(&head)?;
        if req.header("transfer-encoding").is_some() {
            return Err(bad(501, "chunked request bodies are not supported"));
        }
        let length = match req.header("content-length") {
            None => 0,
            Some(v) => v
                .trim()
                .parse::<usize>()
                .map_err(|_| bad(400, "invalid Content-Length"))?,
        };
        if length > MAX_BODY_BYTES {
            return Err(bad(
                413,
                format!("request body larger than {MAX_BODY_BYTES} bytes"),
            ));
        }
        if length > 0
            && req
                .header("expect")
                .is_some_and(|e| e.eq_ignore_ascii_case("100-continue"))
            && self.buf.is_empty()
        {
            on_expect_continue();
        }
        while self.buf.len() < length {
            match self.fill(deadline) {
                Ok(true) => {}
                Ok(false) => return Err(bad(400, "connection closed inside a request body")),
                Err(_) => return Err(bad(408, "request body not received in time")),
            }
        }
        req.body = self.buf.drain(..length).collect();
        Ok(req)
    }
}

/// Finds the blank line ending the head: (head length, body start).
fn find_head_end(buf: &[u8]) -> Option<(usize, usize)> {
    let mut i = 0;
    while i < buf.len() {
        if buf[i] == b'\n' {
            if buf.get(i + 1) == Some(&b'\n') {
                return Some((i, i + 2));
            }
            if buf.get(i + 1) == Some(&b'\r') && buf.get(i + 2) == Some(&b'\n') {
                return Some((i, i + 3));
            }
        }
        i += 1;
    }
    None
}

fn parse_head(head: &str) -> Result<HttpRequest, ReadError> {
    let mut lines = head.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let start = lines.next().unwrap_or_default();
    let mut parts = start.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad(400, "malformed request line"));
    };
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(bad(400, "malformed request method"));
    }
    if version != "HTTP/1.1" && version != "HTTP/1.0" {
        return Err(bad(505, "only HTTP/1.0 and HTTP/1.1 are supported"));
    }
    let mut headers = Vec::new();
    for line in lines {
        if line.starts_with([' ', '\t']) {
            return Err(bad(400, "obsolete header line folding"));
        }
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| bad(400, "malformed header line"))?;
        if name.is_empty() || name.bytes().any(|b| b.is_ascii_whitespace()) {
            return Err(bad(400, "malformed header name"));
        }
        headers.push((name.to_ascii_lowercase(), value.trim().to_string()));
        if headers.len() > 100 {
            return Err(bad(431, "too many header fields"));
        }
    }
    Ok(HttpRequest {
        method: method.to_string(),
        target: target.to_string(),
        version: version.to_string(),
        headers,
        body: Vec::new(),
    })
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

    fn conn(bytes: &'static [u8]) -> Connection {
        Connection::new(bytes, Duration::from_secs(5))
    }

    #[test]
    fn two_requests_on_one_connection() {
        let mut c = conn(
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}POST / HTTP/1.1\r\nContent-Length: 3\r\nConnection: close\r\n\r\n[1]",
        );
        let a = c.next_request(|| ()).unwrap();
        assert_eq!((a.method.as_str(), a.body.as_slice()), ("POST", &b"{}"[..]));
        assert!(a.keep_alive());
        let b = c.next_request(|| ()).unwrap();
        assert_eq!(b.body, b"[1]");
        assert!(!b.keep_alive());
        assert_eq!(c.next_request(|| ()), Err(ReadError::Closed));
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
            (&b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nab"[..], 400),
            (&b"POST / HTTP/1.1\r\n folded\r\n\r\n"[..], 400),
        ] {
            match conn(bytes).next_request(|| ()) {
                Err(ReadError::Bad { status: s, .. }) => {
                    assert_eq!(s, status, "{}", String::from_utf8_lossy(bytes))
                }
                other => panic!("{}: {other:?}", String::from_utf8_lossy(bytes)),
            }
        }
    }

    #[test]
    fn http10_closes_unless_asked() {
        let mut c = conn(b"GET / HTTP/1.0\r\n\r\n");
        assert!(!c.next_request(|| ()).unwrap().keep_alive());
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
        let mut c = Connection::new(read_end, Duration::from_millis(50));
        assert_eq!(
            c.next_request(|| ()),
            Err(ReadError::Idle(Duration::from_millis(50)))
        );
    }
}
