//! The audit log: one JSON line per event, appended (`O_APPEND`) to `audit_log`.
//!
//! For a request that may touch a device, a `started` record is written (and must succeed)
//! before the device is contacted, and a `finished` record after, so a crash mid-change
//! still leaves a trace. Requests refused before that (invalid, denied) and queries get a
//! single `finished` record. Records answer who / what / when / why / how. With
//! `audit_syslog = true` each record also goes to syslog / journald. Secrets never
//! reach this module: it records the lines sent, which never contain them.
//!
//! The log's directory is trust-checked (`config::trust`: root's or the running user's,
//! no group/other write access, nor above it) and the log is opened with
//! `O_APPEND | O_NOFOLLOW | O_CLOEXEC`: a symbolic link planted as `audit.log` is refused
//! (exit 78), never appended to; so is a log that group or others could rewrite.

use std::fs::{self, File};
use std::io::Write;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::trust::{self, OpenError, Role};
use crate::config::ConfigError;

/// The audit log could not be written (exit 78: the request is refused, not run unaudited).
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The system refused (permissions, disk full).
    #[error("audit log {path}: {source}")]
    Io {
        /// The log.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The log or its directory may not be trusted.
    #[error("audit log: {0}")]
    Untrusted(ConfigError),
}

/// The directory the audit log lives in.
fn log_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// What `mercury check` can know offline about the audit log, with the checks a run makes:
/// its directory may be trusted (or could be created), the log is no link and may be
/// trusted, and the running user can write it (or create it).
pub fn check_usable(path: &Path) -> Vec<String> {
    let dir = log_dir(path);
    let checked = if dir.exists() {
        trust::check_create_dir(dir, Role::Audit)
    } else {
        trust::check_would_create(dir, Role::Audit).map(|_| ())
    };
    if let Err(e) = checked {
        return vec![format!("audit_log: {e}")];
    }
    if let Ok(meta) = fs::symlink_metadata(path) {
        if meta.file_type().is_symlink() {
            return vec![format!(
                "audit_log: {}: is a symbolic link, which Mercury never follows here; remove the link",
                path.display()
            )];
        }
        if let Err(e) = trust::check_file(path, Role::Audit) {
            return vec![format!("audit_log: {e}")];
        }
    }
    match trust::writable(path) {
        Ok(()) => Vec::new(),
        Err(e) => vec![format!(
            "audit_log: {} is not writable by the running user (uid {}): {e}",
            path.display(),
            trust::running_uid()
        )],
    }
}

/// Who asked.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Who {
    /// Forced-command caller (`serve-ssh --caller`).
    pub caller: Option<String>,
    /// SSH client address from `SSH_CONNECTION`.
    pub ssh_client: Option<String>,
    /// HTTP Basic user (`serve-jsonrpc`); absent for other intakes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_user: Option<String>,
    /// HTTP client address (`serve-jsonrpc`); absent for other intakes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_client: Option<String>,
    /// SHA-256 fingerprint of the verified TLS client certificate (`serve-jsonrpc
    /// --tls-client-ca`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls_client: Option<String>,
    /// Unix user running Mercury.
    pub unix_user: String,
    /// Its uid.
    pub uid: Option<u32>,
    /// Process id.
    pub pid: u32,
}

impl Who {
    /// Identity of this process; `caller` comes from argv only.
    pub fn current(caller: Option<String>, ssh_connection: Option<&str>) -> Who {
        let uid = rustix::process::getuid().as_raw();
        Who {
            caller,
            ssh_client: ssh_connection
                .and_then(|c| c.split_whitespace().next())
                .map(str::to_string),
            http_user: None,
            http_client: None,
            tls_client: None,
            unix_user: user_name(uid).unwrap_or_else(|| uid.to_string()),
            uid: Some(uid),
            pid: std::process::id(),
        }
    }
}

fn user_name(uid: u32) -> Option<String> {
    let passwd = fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|l| {
        let mut f = l.split(':');
        let name = f.next()?;
        let _ = f.next();
        (f.next()?.parse::<u32>().ok()? == uid).then(|| name.to_string())
    })
}

/// One audit line.
#[derive(Debug, Clone, Serialize)]
pub struct Record<'a> {
    /// When (RFC 3339, UTC).
    pub ts: String,
    /// `started` or `finished`.
    pub event: &'static str,
    /// Correlates the two records and the JSON result.
    pub request_id: &'a str,
    /// Who.
    pub who: &'a Who,
    /// What.
    pub what: &'a serde_json::Value,
    /// Why.
    pub why: &'a serde_json::Value,
    /// How (lines, outcome, exit code, duration); absent on `started`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub how: Option<serde_json::Value>,
}

/// An open audit log.
pub struct AuditLog {
    path: PathBuf,
    file: File,
    syslog: Option<Syslog>,
}

/// Audit records as syslog messages (RFC 3164 framing, facility authpriv, severity info,
/// tag `mercury`, the JSON line as the message) on a local datagram socket: `/dev/log`,
/// which rsyslog and systemd-journald both serve. Best effort: the file is the record of
/// truth, and a message that cannot be sent becomes a warning in the result.
struct Syslog {
    socket: PathBuf,
    sender: Option<std::os::unix::net::UnixDatagram>,
}

impl Syslog {
    /// `<86>` = facility authpriv (10) × 8 + severity info (6).
    const PRIORITY: &'static str = "<86>";

    fn send(&mut self, json: &[u8]) -> Result<(), String> {
        if self.sender.is_none() {
            let s = std::os::unix::net::UnixDatagram::unbound()
                .map_err(|e| format!("syslog socket: {e}"))?;
            self.sender = Some(s);
        }
        let mut msg = format!("{}mercury[{}]: ", Self::PRIORITY, std::process::id()).into_bytes();
        msg.extend_from_slice(json);
        match &self.sender {
            Some(s) => s
                .send_to(&msg, &self.socket)
                .map(|_| ())
                .map_err(|e| format!("syslog {}: {e}", self.socket.display())),
            None => Err("syslog socket".into()),
        }
    }
}

impl AuditLog {
    /// Opens (creating, mode 0640, parent directory 0750) the log for appending, after the
    /// trust checks; never through a symbolic link. With `syslog`, records are also sent to
    /// that syslog socket.
    pub fn open(path: &Path, syslog: Option<&Path>) -> Result<AuditLog, AuditError> {
        let err = |source| AuditError::Io {
            path: path.to_path_buf(),
            source,
        };
        let dir = log_dir(path);
        if !dir.exists() {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o750)
                .create(dir)
                .map_err(err)?;
        }
        trust::check_create_dir(dir, Role::Audit).map_err(AuditError::Untrusted)?;
        let file = trust::open_nofollow(path, Role::Audit, true, 0o640).map_err(|e| match e {
            OpenError::Untrusted(c) => AuditError::Untrusted(c),
            OpenError::Io(source) => err(source),
        })?;
        Ok(AuditLog {
            path: path.to_path_buf(),
            file,
            syslog: syslog.map(|p| Syslog {
                socket: p.to_path_buf(),
                sender: None,
            }),
        })
    }

    /// Appends one record as one line, in one write, and sends it to syslog when
    /// configured. A syslog failure is returned as `Ok(Some(warning))`: the file has it.
    pub fn write(&mut self, record: &Record) -> Result<Option<String>, AuditError> {
        let mut line = serde_json::to_vec(record).map_err(|e| AuditError::Io {
            path: self.path.clone(),
            source: std::io::Error::other(e),
        })?;
        let syslog = self.syslog.as_mut().and_then(|s| s.send(&line).err());
        line.push(b'\n');
        self.file
            .write_all(&line)
            .map_err(|source| AuditError::Io {
                path: self.path.clone(),
                source,
            })?;
        Ok(syslog.map(|e| format!("audit record not sent to syslog: {e}")))
    }
}

/// A record stamped now.
pub fn record<'a>(
    event: &'static str,
    request_id: &'a str,
    who: &'a Who,
    what: &'a serde_json::Value,
    why: &'a serde_json::Value,
    how: Option<serde_json::Value>,
) -> Record<'a> {
    Record {
        ts: crate::util::now_rfc3339(),
        event,
        request_id,
        who,
        what,
        why,
        how,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_parseable_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/audit.log");
        let who = Who::current(Some("c".into()), Some("192.0.2.9 5555 192.0.2.1 22"));
        assert_eq!(who.ssh_client.as_deref(), Some("192.0.2.9"));
        let what = serde_json::json!({"op": "attach_port"});
        let why = serde_json::json!({"reason": "CHG-1"});
        let sock_path = dir.path().join("log.sock");
        let sock = std::os::unix::net::UnixDatagram::bind(&sock_path).unwrap();
        let mut log = AuditLog::open(&path, Some(&sock_path)).unwrap();
        log.write(&record("started", "r1", &who, &what, &why, None))
            .unwrap();
        log.write(&record(
            "finished",
            "r1",
            &who,
            &what,
            &why,
            Some(serde_json::json!({"rc": 0})),
        ))
        .unwrap();
        let text = fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1]["how"]["rc"], 0);
        assert!(lines[0].get("how").is_none());
        // The same two records reached the syslog socket, framed as RFC 3164 messages.
        let mut buf = vec![0u8; 65536];
        for want in &lines {
            let n = sock.recv(&mut buf).unwrap();
            let msg = std::str::from_utf8(&buf[..n]).unwrap();
            let json = msg
                .strip_prefix(&format!("<86>mercury[{}]: ", std::process::id()))
                .unwrap_or_else(|| panic!("{msg}"));
            assert_eq!(
                &serde_json::from_str::<serde_json::Value>(json).unwrap(),
                want
            );
        }
        // A syslog that is not there is a warning; the file still gets the record.
        drop(sock);
        std::fs::remove_file(&sock_path).unwrap();
        let warning = log
            .write(&record("finished", "r2", &who, &what, &why, None))
            .unwrap();
        assert!(warning.unwrap().contains("syslog"));
        assert_eq!(fs::read_to_string(&path).unwrap().lines().count(), 3);
    }
}
