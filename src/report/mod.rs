//! The JSON result: exactly one object on stdout per run, every key always present.
//!
//! Keys callers rely on (DESIGN §4): `ok`, `failed`, `changed`, `rc`, `msg`, `error_kind`,
//! `op`, `device`, `platform`, `request_id`, `elapsed_ms`, `commands`, `warnings`. Mercury
//! adds `dry_run`, `round_trips` and an operation's answer under `data`. `--format text`
//! renders the same object for people (`text`).

pub mod audit;
pub mod error;
pub mod exit;
pub mod text;

use serde::Serialize;

use crate::report::exit::ExitKind;
use crate::session::{CommandRecord, Progress};

/// What the process prints and how it exits.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Standard output (one JSON object, or text).
    pub stdout: String,
    /// Exit code.
    pub code: u8,
}

/// How the result is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One JSON object (the contract).
    Json,
    /// For people.
    Text,
}

/// One run's result.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Succeeded.
    pub ok: bool,
    /// Did not succeed (Ansible's key).
    pub failed: bool,
    /// The device configuration was changed.
    pub changed: bool,
    /// The exit code.
    pub rc: u8,
    /// What happened, in one sentence.
    pub msg: String,
    /// The error kind (`null` on success).
    pub error_kind: Option<&'static str>,
    /// The operation, when known.
    pub op: Option<String>,
    /// The device's config name, when resolved.
    pub device: Option<String>,
    /// The platform, when resolved.
    pub platform: Option<String>,
    /// Correlation id (the caller's, or generated).
    pub request_id: String,
    /// Wall time of the run.
    pub elapsed_ms: u64,
    /// Lines sent (or, with `--dry-run`, that would be sent).
    pub commands: Vec<CommandRecord>,
    /// Notes.
    pub warnings: Vec<String>,
    /// Planned only.
    pub dry_run: bool,
    /// Prompt waits / exec round trips.
    pub round_trips: u32,
    /// The operation's answer (queries), or `null`.
    pub data: serde_json::Value,
    /// With `--verify` / `verify_port`: Ansible's `diff` (a list of `before` / `after` pairs
    /// with headers, one per port). Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<serde_json::Value>,
    /// A request that failed after some of it reached the device: the lines accepted, the
    /// one refused or in flight, whether the change may be in effect, whether it was saved.
    /// Absent when nothing reached the device or the request succeeded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<Progress>,
    /// For a request that changes ports: whether they were read before and after the
    /// change (read before write), so that `changed` is what the device shows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
    /// The request named no device the caller can see (unknown, or outside its scope). Not
    /// part of the JSON result (its `msg` says so); the JSON-RPC front answers
    /// `SwitchNotFound` from it.
    #[serde(skip)]
    pub device_not_found: bool,
}

/// The sentence added to a failure's message when some of the change reached the device.
fn partly(p: &Progress) -> String {
    let mut s = String::new();
    if p.took_effect && p.restored == Some(true) {
        s.push_str(&format!(
            "; {} line(s) had taken effect and were undone: the ports read back as before",
            p.accepted.len()
        ));
    } else if p.took_effect {
        s.push_str(&format!(
            "; PARTLY APPLIED: {} line(s) took effect",
            p.accepted.len()
        ));
        if let Some(l) = &p.in_flight {
            s.push_str(&format!(" and {l:?} may have"));
        }
        if !p.unconfirmed.is_empty() {
            s.push_str(&format!(
                ", as may the {} line(s) typed ahead behind it",
                p.unconfirmed.len()
            ));
        }
        if p.saved == Some(false) {
            s.push_str(", not saved");
        }
        if p.restored == Some(false) && !p.unrestorable.is_empty() {
            s.push_str(&format!(
                ", and {} cannot be read back or undone (the rest was put back as read before)",
                p.unrestorable
                    .iter()
                    .map(|l| format!("{l:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        } else if p.restored == Some(false) {
            s.push_str(", and putting the ports back as read before failed");
        }
        s.push_str(": read the port back (verify-port) and repeat or reset the request");
    } else if let Some(l) = &p.in_flight {
        s.push_str(&format!(
            "; {l:?} was sent without an answer and may have taken effect: read the port back (verify-port)"
        ));
    } else if !p.accepted.is_empty() {
        s.push_str("; nothing was committed");
    }
    s
}

impl Report {
    /// An empty successful report.
    pub fn new(request_id: String) -> Report {
        Report {
            ok: true,
            failed: false,
            changed: false,
            rc: 0,
            msg: String::new(),
            error_kind: None,
            op: None,
            device: None,
            platform: None,
            request_id,
            elapsed_ms: 0,
            commands: Vec::new(),
            warnings: Vec::new(),
            dry_run: false,
            round_trips: 0,
            data: serde_json::Value::Null,
            diff: None,
            partial: None,
            verified: None,
            device_not_found: false,
        }
    }

    /// Records how far a failing request got: `changed` becomes whether any of it may be in
    /// effect, and `partial` says what (the message says so when the failure is rendered).
    pub fn note_progress(&mut self, progress: Progress) {
        let reached = progress.took_effect
            || progress.in_flight.is_some()
            || !progress.accepted.is_empty()
            || progress.saved == Some(false);
        // Undone and read back as before: the device is as it was.
        self.changed |= progress.took_effect && progress.restored != Some(true);
        if reached {
            self.partial = Some(progress);
        }
    }

    /// Marks the report failed with `kind` and `msg`.
    pub fn fail(&mut self, kind: ExitKind, msg: String) {
        self.ok = kind == ExitKind::Ok;
        self.failed = !self.ok;
        self.rc = kind.code();
        self.error_kind = kind.name();
        // `changed` stays what the run found: a failure after lines took effect is a change.
        self.msg = if self.failed {
            self.failure_message(msg)
        } else {
            msg
        };
    }

    /// A failure's message, with what reached the device when part of it did.
    pub fn failure_message(&self, msg: String) -> String {
        match &self.partial {
            Some(p) => format!("{msg}{}", partly(p)),
            None => msg,
        }
    }

    /// The JSON text (one line).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!(r#"{{"ok":false,"failed":true,"changed":false,"rc":70,"msg":"cannot render result: {e}","error_kind":"internal","op":null,"device":null,"platform":null,"request_id":"","elapsed_ms":0,"commands":[],"warnings":[],"dry_run":false,"round_trips":0,"data":null}}"#)
        })
    }

    /// A rendering for people ([`text::render`]).
    pub fn to_text(&self) -> String {
        text::render(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_contract_key_is_present_even_when_empty() {
        let r = Report::new("r1".into());
        let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        for k in [
            "ok",
            "failed",
            "changed",
            "rc",
            "msg",
            "error_kind",
            "op",
            "device",
            "platform",
            "request_id",
            "elapsed_ms",
            "commands",
            "warnings",
        ] {
            assert!(v.get(k).is_some(), "missing {k}");
        }
    }

    #[test]
    fn fail_sets_kind_and_code() {
        let mut r = Report::new("r1".into());
        r.changed = true;
        r.fail(ExitKind::Temporary, "busy".into());
        // A failure after the device changed is still a change (Ansible's changed).
        assert!(!r.ok && r.failed && r.changed);
        assert_eq!((r.rc, r.error_kind), (75, Some("temporary")));
        assert!(r.to_text().starts_with("FAILED"));
    }

    #[test]
    fn a_partly_applied_failure_says_so_and_stays_changed() {
        let mut r = Report::new("r1".into());
        r.note_progress(Progress {
            accepted: vec!["interface Gi1/0/7".into(), "undo port default vlan".into()],
            rejected: Some("port default vlan 130".into()),
            took_effect: true,
            ..Progress::default()
        });
        r.fail(ExitKind::DeviceRejected, "device rejected".into());
        assert!(r.changed && r.failed);
        assert!(
            r.msg
                .starts_with("device rejected; PARTLY APPLIED: 2 line(s)"),
            "{}",
            r.msg
        );
        let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(v["partial"]["rejected"], "port default vlan 130");
        // Nothing reached the device: no partial, unchanged.
        let mut clean = Report::new("r2".into());
        clean.note_progress(Progress::default());
        clean.fail(ExitKind::Unreachable, "refused".into());
        assert!(!clean.changed && clean.partial.is_none());
        assert_eq!(clean.msg, "refused");
    }
}
