//! The session: the conversation with a device, over either channel.
//!
//! CLI (`cli`): prompt-driven, the mode tracked from each prompt; a line's result is failed
//! until its output has been checked against the platform's failure indicators. On the first
//! failure the platform's abort lines run, the session leaves configuration mode and closes;
//! the error names the line. Exec (`exec`): each line is judged by its exit status and
//! failure indicators; a plan's lines run one per channel, the lines of one
//! [`Session::read`] share one channel where the platform's channels run a POSIX shell
//! (`exec_shell`), each line's output and status recovered between nonce markers.
//!
//! A *dry* session ([`Session::dry`]) runs the same code without a connection and records
//! every line it would send: `--dry-run` shows what a real session sends when the device
//! lands in the expected login mode and the ports need the change.
//!
//! This layer takes the platform and the plan as data; it knows nothing of requests,
//! policy or how the configuration was loaded.

mod clean;
mod cli;
mod exec;
pub mod plan;

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

pub use clean::Cleaner;
use cli::CliSession;
pub use exec::judge_status;
use exec::ExecSession;
use plan::{Line, Plan};

use crate::catalog::{Channel, Pattern, Platform};
use crate::transport::{Connection, Ended, ExecOutput, TransportError};

/// Longest wait for a device to end its session after the close lines.
const MAX_END_WAIT: Duration = Duration::from_secs(10);

/// Shown in messages instead of a secret.
pub const REDACTED: &str = "********";

/// One line sent and what came back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandRecord {
    /// The line (secrets never appear).
    pub input: String,
    /// The device's answer (echo and prompt removed), redacted.
    pub output: String,
    /// Time from send to prompt.
    pub elapsed_ms: u64,
}

impl CommandRecord {
    /// A line a dry run would send: no output, no time.
    pub fn planned(input: String) -> CommandRecord {
        CommandRecord {
            input,
            output: String::new(),
            elapsed_ms: 0,
        }
    }
}

/// A session failure (`Clone`: a batch of coalesced requests hands one session failure to
/// every request it stopped).
#[derive(Debug, Clone, thiserror::Error)]
pub enum SessionError {
    /// The device answered a line with a failure indicator, a failed commit, or a non-zero
    /// exit status (exit 1).
    #[error("device rejected {line:?}: {indicator}")]
    Rejected {
        /// The line.
        line: String,
        /// The indicator or exit status.
        indicator: String,
    },
    /// The device is busy (configuration database locked) (exit 75).
    #[error("device busy on {line:?}: {indicator}")]
    Busy {
        /// The line.
        line: String,
        /// What it said.
        indicator: String,
    },
    /// The awaited prompt did not come before the deadline (exit 75).
    #[error("timed out after {:.1}s waiting for {awaited}; last output: {tail:?}", waited.as_secs_f64())]
    Timeout {
        /// What was awaited.
        awaited: String,
        /// For how long.
        waited: Duration,
        /// The redacted tail of the output.
        tail: String,
    },
    /// The device closed the connection (exit 69).
    #[error("connection closed by the device while waiting for {awaited}; the change may be partly applied; last output: {tail:?}")]
    Closed {
        /// What was awaited.
        awaited: String,
        /// The redacted tail of the output.
        tail: String,
    },
    /// A prompt of an unexpected mode (exit 76).
    #[error("unexpected mode after {line:?}: expected {expected}, device is in {actual}")]
    UnexpectedMode {
        /// The line.
        line: String,
        /// Expected mode.
        expected: String,
        /// Mode seen.
        actual: String,
    },
    /// The device's reply could not be understood (exit 76).
    #[error("unparsable reply to {line:?}: {message}")]
    Unparsable {
        /// The line.
        line: String,
        /// What was wrong with the reply.
        message: String,
    },
    /// The device asked for the enable secret but none is configured (exit 77).
    #[error("the device asks for an enable secret after {line:?} but devices.{device}.enable_secret_file is not set")]
    NoSecret {
        /// The line.
        line: String,
        /// The device.
        device: String,
    },
    /// The enable secret was refused (exit 77).
    #[error("the device refused the enable secret")]
    SecretRefused,
    /// The transport failed.
    #[error(transparent)]
    Transport(#[from] TransportError),
}

/// What the session produced, success or not.
#[derive(Debug, Default)]
pub struct Transcript {
    /// Every line sent, in order.
    pub commands: Vec<CommandRecord>,
    /// Prompt waits (round trips) the request needed.
    pub round_trips: u32,
}

/// Settings a session needs besides the platform.
pub struct Settings {
    /// Device name (for messages).
    pub device: String,
    /// Per prompt wait.
    pub command_timeout: Duration,
    /// Whole request.
    pub deadline: Instant,
    /// Enable secret, if configured.
    pub enable_secret: Option<String>,
    /// Other secrets to redact from output (passwords).
    pub secrets: Vec<String>,
    /// Run the save lines.
    pub save: bool,
}

/// Runs a plan over an open connection. The transcript is returned in both cases so the
/// caller can report what was sent before a failure.
pub fn run(
    conn: Connection,
    platform: &Platform,
    plan: &Plan,
    settings: &Settings,
) -> (Transcript, Result<(), SessionError>) {
    let (mut session, opened) = Session::open(conn, platform, settings);
    let mut transcript = opened.transcript;
    if let Err(e) = opened.result {
        session.finish();
        return (transcript, Err(e));
    }
    let applied = session.apply(plan, settings.deadline);
    transcript.append(applied.transcript);
    let finished = session.finish();
    transcript.append(finished.transcript);
    (transcript, applied.result.and(finished.result))
}

/// The lines a dry session records for `plan`: what [`run`] sends when the device lands
/// in the expected login mode (`--dry-run` of a plain plan).
pub fn dry_lines(platform: &Platform, plan: &Plan, settings: &Settings) -> Vec<String> {
    let (mut session, opened) = Session::dry(platform, settings);
    let mut t = opened.transcript;
    t.append(session.apply(plan, settings.deadline).transcript);
    t.append(session.finish().transcript);
    t.commands.into_iter().map(|c| c.input).collect()
}

/// One part of a session: the lines sent for it and how it ended.
#[derive(Debug)]
pub struct Segment {
    /// Lines sent during this part, with their round trips.
    pub transcript: Transcript,
    /// How it ended.
    pub result: Result<(), SessionError>,
    /// What of a plan reached the device (`apply`, `finish`).
    pub progress: Progress,
    /// Things the result must mention (`finish`: the device did not end the session).
    pub warnings: Vec<String>,
}

/// How far a change got on the device: what the result and the audit record say when a
/// request fails part-way, so that a half-applied change is never reported as unchanged.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// Configuration lines (and commits) the device accepted, in order.
    pub accepted: Vec<String>,
    /// The line the device refused (not in effect).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejected: Option<String>,
    /// The line sent when the conversation failed without an answer (a timeout, a lost
    /// connection): it may have taken effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_flight: Option<String>,
    /// Lines typed ahead behind the failed one in the same write (the body of an
    /// `interface` block on a `type_ahead` CLI) whose outcome is unknown: no answer came
    /// (a timeout, a lost connection), or they ran after a line had left the mode they were
    /// meant for. Like `in_flight`, they may have taken effect.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unconfirmed: Vec<String>,
    /// Where in the plan the refused or in-flight line is (the session's own bookkeeping,
    /// so that a batch can tell whose lines were accepted: on a `type_ahead` CLI lines
    /// after it in its block may be accepted too).
    #[serde(skip)]
    pub failed_at: Option<usize>,
    /// Where in the plan each of `accepted` is (the same bookkeeping).
    #[serde(skip)]
    pub accepted_at: Vec<usize>,
    /// Some change may be in effect on the device: a line accepted on a platform that
    /// applies each line, or a commit accepted or in flight on one that applies at commit.
    pub took_effect: bool,
    /// The save ran and succeeded (`true`), ran and failed (`false`); absent when no save
    /// was due.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saved: Option<bool>,
    /// After a refusal on a platform that applies each line as it goes: whether the ports
    /// were put back as read before the change (and read back so), absent when no restore
    /// was attempted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restored: Option<bool>,
    /// Accepted lines whose effect the platform's reader does not show, so no restore can
    /// undo or check them (AOS-CX `no routing` on a port that may have been routed): with
    /// any, `restored` is never `true`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unrestorable: Vec<String>,
}

impl Progress {
    /// Adds a later part's progress (several plans in one request).
    pub fn append(&mut self, other: Progress) {
        self.accepted.extend(other.accepted);
        self.accepted_at.extend(other.accepted_at);
        if other.rejected.is_some() {
            self.rejected = other.rejected;
        }
        if other.in_flight.is_some() {
            self.in_flight = other.in_flight;
        }
        self.unconfirmed.extend(other.unconfirmed);
        if other.failed_at.is_some() {
            self.failed_at = other.failed_at;
        }
        self.took_effect |= other.took_effect;
        if other.saved.is_some() {
            self.saved = other.saved;
        }
        if other.restored.is_some() {
            self.restored = other.restored;
        }
        self.unrestorable.extend(other.unrestorable);
    }

    /// How far a plan got: the lines (and commits) the device accepted, and the one it was
    /// sent when `result` failed (`None`: the failure came before or between lines), with
    /// its place in the plan.
    fn of(
        accepted: Vec<(usize, String)>,
        failed: Option<(usize, String)>,
        unconfirmed: Vec<String>,
        commit: &[String],
        result: &Result<(), SessionError>,
    ) -> Progress {
        let mut p = Progress {
            failed_at: failed.as_ref().map(|(at, _)| *at),
            ..Progress::default()
        };
        let failed = failed.map(|(_, l)| l);
        match (result, failed) {
            (Ok(()), _) | (Err(_), None) => {}
            (Err(SessionError::Rejected { .. }) | Err(SessionError::Busy { .. }), Some(l)) => {
                p.rejected = Some(l)
            }
            (Err(_), Some(l)) => p.in_flight = Some(l),
        }
        (p.accepted_at, p.accepted) = accepted.into_iter().unzip();
        let is_commit = |l: &String| commit.contains(l);
        p.took_effect = if commit.is_empty() {
            !p.accepted.is_empty() || p.in_flight.is_some() || !unconfirmed.is_empty()
        } else {
            p.accepted.iter().any(is_commit) || p.in_flight.as_ref().is_some_and(is_commit)
        };
        p.unconfirmed = unconfirmed;
        p
    }
}

impl Transcript {
    /// Appends another part's lines and round trips.
    pub fn append(&mut self, other: Transcript) {
        self.commands.extend(other.commands);
        self.round_trips += other.round_trips;
    }
}

/// An open conversation that applies one or more plans in turn (request coalescing).
///
/// [`Session::open`] logs in and sets the terminal up; each [`Session::apply`] enters
/// configuration mode if needed, sends one plan's lines and the platform's commit, and on a
/// failure runs the platform's abort and leaves configuration mode, so the next plan starts
/// from a known mode and never inherits the failed plan's uncommitted lines (Junos
/// `rollback 0`, NVUE `nv config detach`). [`Session::finish`] leaves configuration mode,
/// saves once if any plan was applied and closes. A session whose failure left it in an
/// unknown state (timeout, lost connection, unexpected mode, busy device) is not
/// [`healthy`](Session::healthy) and must not be given more plans.
pub struct Session<'a> {
    inner: Inner<'a>,
    healthy: bool,
    applied: bool,
    dry: bool,
    no_save: bool,
}

/// One [`Session::exec`] line: what was recorded and its unjudged output.
#[derive(Debug)]
pub struct Ran {
    /// The line, with its output and round trip.
    pub transcript: Transcript,
    /// Its output, or how the transport failed under it.
    pub result: Result<ExecOutput, SessionError>,
}

impl Ran {
    fn lost() -> Ran {
        Ran {
            transcript: Transcript::default(),
            result: Err(SessionError::Transport(TransportError::Lost(
                "the session is unusable after an earlier failure".into(),
            ))),
        }
    }
}

enum Inner<'a> {
    Cli(CliSession<'a>),
    Exec(ExecSession<'a>),
}

impl<'a> Session<'a> {
    /// Opens the conversation: waits for the login prompt and runs the setup lines (CLI).
    pub fn open(
        conn: Connection,
        platform: &'a Platform,
        settings: &'a Settings,
    ) -> (Session<'a>, Segment) {
        match conn {
            Connection::Shell(shell) => Session::start(Some(shell), None, platform, settings),
            Connection::Exec(exec) => Session::start(None, Some(exec), platform, settings),
        }
    }

    /// A session without a connection: every line is recorded as sent, every read answers
    /// nothing, every navigation line lands where the catalog says (`--dry-run`).
    pub fn dry(platform: &'a Platform, settings: &'a Settings) -> (Session<'a>, Segment) {
        Session::start(None, None, platform, settings)
    }

    fn start(
        shell: Option<Box<dyn crate::transport::Shell>>,
        exec: Option<Box<dyn crate::transport::Exec>>,
        platform: &'a Platform,
        settings: &'a Settings,
    ) -> (Session<'a>, Segment) {
        let dry = shell.is_none() && exec.is_none();
        let (inner, result) = match platform.kind.channel() {
            Channel::Shell if exec.is_none() => {
                let mut s = CliSession::new(shell, platform, settings);
                let r = s.open();
                (Inner::Cli(s), r)
            }
            _ => (
                Inner::Exec(ExecSession {
                    exec,
                    platform,
                    settings,
                    deadline: settings.deadline,
                    transcript: Transcript::default(),
                    aborted_cleanly: true,
                    accepted: Vec::new(),
                    failed: None,
                }),
                Ok(()),
            ),
        };
        let mut session = Session {
            inner,
            healthy: result.is_ok(),
            applied: false,
            dry,
            no_save: false,
        };
        let transcript = session.take_transcript();
        (
            session,
            Segment {
                transcript,
                result,
                progress: Progress::default(),
                warnings: Vec::new(),
            },
        )
    }

    /// The mode the CLI is in, worked out from the last prompt (`None` for exec sessions,
    /// which have no modes).
    pub fn mode(&self) -> Option<&str> {
        match &self.inner {
            Inner::Cli(s) => Some(s.mode.as_str()),
            Inner::Exec(_) => None,
        }
    }

    /// A dry run: nothing is sent, reads answer nothing.
    pub fn is_dry(&self) -> bool {
        self.dry
    }

    /// Runs one exec line and returns its output unjudged (drivers with their own reading of
    /// exit status and output: ovs-vsctl). The line is recorded; a CLI session refuses.
    pub fn exec(&mut self, line: &Line, deadline: Instant) -> Ran {
        if !self.healthy {
            return Ran::lost();
        }
        let result = match &mut self.inner {
            Inner::Exec(s) => {
                s.deadline = deadline;
                s.exec_raw(line)
            }
            Inner::Cli(_) => Err(SessionError::Transport(TransportError::Config(
                "this platform's commands need an exec channel (transport local, ssh or command)"
                    .into(),
            ))),
        };
        if result.is_err() {
            self.healthy = false;
        }
        let transcript = self.take_transcript();
        Ran { transcript, result }
    }

    /// Records that a change was applied through [`Session::exec`], so that
    /// [`Session::finish`] commits and saves as after [`Session::apply`].
    pub fn mark_applied(&mut self) {
        self.applied = true;
    }

    /// Keeps [`Session::finish`] from saving: a plan in this session failed part-way and
    /// could not be undone, and saving would persist its partial change (`saved: false`).
    pub fn skip_save(&mut self) {
        self.no_save = true;
    }

    /// Can it take another plan?
    pub fn healthy(&self) -> bool {
        self.healthy
    }

    /// Applies one plan (lines + commit) with its own deadline. A rejected line or commit is
    /// rolled back as far as the platform allows and leaves the session healthy; any
    /// other failure does not.
    pub fn apply(&mut self, plan: &Plan, deadline: Instant) -> Segment {
        if !self.healthy {
            return Segment {
                transcript: Transcript::default(),
                result: Err(SessionError::Transport(TransportError::Lost(
                    "the session is unusable after an earlier failure".into(),
                ))),
                progress: Progress::default(),
                warnings: Vec::new(),
            };
        }
        let result = match &mut self.inner {
            Inner::Cli(s) => {
                s.deadline = deadline;
                s.apply(plan)
            }
            Inner::Exec(s) => {
                s.deadline = deadline;
                s.apply(plan)
            }
        };
        match &result {
            Ok(()) => self.applied = true,
            Err(SessionError::Rejected { .. }) => {
                // Usable again only if the abort brought it back where a plan starts.
                self.healthy = match &self.inner {
                    Inner::Cli(s) => s.mode == s.platform.save_mode,
                    Inner::Exec(s) => s.aborted_cleanly,
                }
            }
            Err(_) => self.healthy = false,
        }
        let transcript = self.take_transcript();
        let (accepted, failed, unconfirmed) = match &mut self.inner {
            Inner::Cli(s) => (
                std::mem::take(&mut s.accepted),
                s.failed.take(),
                std::mem::take(&mut s.unconfirmed),
            ),
            Inner::Exec(s) => (std::mem::take(&mut s.accepted), s.failed.take(), Vec::new()),
        };
        let progress = Progress::of(
            accepted,
            failed,
            unconfirmed,
            &self.platform().commit,
            &result,
        );
        Segment {
            transcript,
            result,
            progress,
            warnings: Vec::new(),
        }
    }

    /// Reads: sends show lines (CLI: in `mode`, default the save mode, leaving configuration
    /// mode first, which applies a commit-on-exit candidate) and returns each line's output.
    /// A failure indicator in the output is a rejection; the session stays usable after one.
    pub fn read(
        &mut self,
        lines: &[Line],
        mode: Option<&str>,
        deadline: Instant,
    ) -> (Segment, Vec<String>) {
        if !self.healthy {
            return (
                Segment {
                    transcript: Transcript::default(),
                    result: Err(SessionError::Transport(TransportError::Lost(
                        "the session is unusable after an earlier failure".into(),
                    ))),
                    progress: Progress::default(),
                    warnings: Vec::new(),
                },
                Vec::new(),
            );
        }
        let mut outputs = Vec::new();
        let result = match &mut self.inner {
            Inner::Cli(s) => {
                s.deadline = deadline;
                s.read(lines, mode, &mut outputs)
            }
            Inner::Exec(s) => {
                s.deadline = deadline;
                s.read(lines, &mut outputs)
            }
        };
        match &result {
            Ok(()) => {}
            Err(SessionError::Rejected { .. }) => {}
            Err(_) => self.healthy = false,
        }
        let transcript = self.take_transcript();
        (
            Segment {
                transcript,
                result,
                progress: Progress::default(),
                warnings: Vec::new(),
            },
            outputs,
        )
    }

    /// Leaves configuration mode, saves (when configured and some plan was applied) and
    /// ends the session. A CLI session that is still usable sends the platform's close
    /// lines and waits — bounded, blocked in the kernel — until the device has ended the
    /// session itself (the SSH server's EOF and channel close, which follow the CLI's exit;
    /// a child's exit), so that the device never counts it after the caller releases the
    /// lock; a broken one is hung up. [`Segment::warnings`] says when the device did not
    /// end the session in time.
    pub fn finish(mut self) -> Segment {
        let applied = self.applied;
        let healthy = self.healthy;
        let due = applied && self.settings().save && !self.platform().save.is_empty();
        let saving = due && !self.no_save;
        let end_wait = self
            .settings()
            .command_timeout
            .clamp(Duration::from_millis(100), MAX_END_WAIT);
        let mut warnings = Vec::new();
        let result = match &mut self.inner {
            Inner::Cli(s) => {
                let r = if applied { s.finish(saving) } else { Ok(()) };
                // After a refusal (of the save) the session is still in a known mode.
                let orderly = healthy && matches!(r, Ok(()) | Err(SessionError::Rejected { .. }));
                if orderly {
                    if s.leave(Instant::now() + end_wait) == Ended::HungUp {
                        warnings.push(format!(
                            "{} did not end the session within {:.1}s of {:?}; hung up",
                            s.settings.device,
                            end_wait.as_secs_f64(),
                            s.platform.close.join("; ")
                        ));
                    }
                } else if let Some(shell) = s.shell.as_mut() {
                    shell.close(Instant::now() + Duration::from_secs(2));
                }
                r
            }
            Inner::Exec(s) if applied => s.finish(saving),
            Inner::Exec(_) => Ok(()),
        };
        let transcript = self.take_transcript();
        let progress = Progress {
            saved: due.then_some(saving && result.is_ok()),
            ..Progress::default()
        };
        Segment {
            transcript,
            result,
            progress,
            warnings,
        }
    }

    fn platform(&self) -> &Platform {
        match &self.inner {
            Inner::Cli(s) => s.platform,
            Inner::Exec(s) => s.platform,
        }
    }

    fn settings(&self) -> &Settings {
        match &self.inner {
            Inner::Cli(s) => s.settings,
            Inner::Exec(s) => s.settings,
        }
    }

    fn take_transcript(&mut self) -> Transcript {
        match &mut self.inner {
            Inner::Cli(s) => std::mem::take(&mut s.transcript),
            Inner::Exec(s) => std::mem::take(&mut s.transcript),
        }
    }
}

/// The device's own words for a refusal: the first output line matching a failure
/// indicator, after the message lines just before it when the indicator is only a summary
/// (Junos prints `No vlan matches vlan tag 130 for interface ge-0/0/5.0` before `error:
/// configuration check-out failed`), and before the lines indented under it when it is a
/// heading (NVUE prints `Invalid config [rev_id: 4]`, then `  Config invalid at ...`).
/// Context headers (`[edit ...]`), quoted statements and caret lines are left out.
pub(crate) fn describe_failure(patterns: &[Pattern], output: &str) -> Option<String> {
    let raw: Vec<&str> = output.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let lines: Vec<&str> = raw.iter().map(|l| l.trim()).collect();
    let at = lines
        .iter()
        .position(|l| patterns.iter().any(|r| r.is_match(l)))?;
    let message_like = |l: &&&str| {
        !l.is_empty()
            && !l.starts_with('[')
            && !l.starts_with('\'')
            && !l.starts_with('"')
            && l.chars().any(char::is_alphabetic)
            && !patterns.iter().any(|r| r.is_match(l))
    };
    let mut context: Vec<&str> = lines[..at]
        .iter()
        .rev()
        .take_while(message_like)
        .take(2)
        .copied()
        .collect();
    context.reverse();
    context.push(lines[at]);
    let under = indent(raw[at]);
    context.extend(
        raw[at + 1..]
            .iter()
            .take_while(|l| indent(l) > under)
            .map(|l| l.trim())
            .filter(|l| {
                !l.starts_with('[')
                    && !l.starts_with('\'')
                    && !l.starts_with('"')
                    && l.chars().any(char::is_alphabetic)
            })
            .take(2),
    );
    Some(context.join(": "))
}

pub(crate) fn find_indicator<P: std::borrow::Borrow<Pattern>>(
    patterns: &[P],
    output: &str,
) -> Option<String> {
    for line in output.lines() {
        if patterns.iter().any(|r| r.borrow().is_match(line)) {
            return Some(line.trim().to_string());
        }
    }
    None
}

/// Replaces every occurrence of each non-empty secret with [`REDACTED`].
pub fn redact<'s>(text: &str, secrets: impl Iterator<Item = &'s String>) -> String {
    let mut out = text.to_string();
    for s in secrets {
        if !s.is_empty() {
            out = out.replace(s.as_str(), REDACTED);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::{Chunk, Shell};

    fn script(p: &Platform, plan: &Plan, save: bool) -> Vec<String> {
        dry_lines(p, plan, &settings(save, None))
    }
    use crate::catalog::Catalog;
    use std::collections::VecDeque;

    /// A scripted device: for each line received (several may come in one send), replies
    /// with the next canned answer,
    /// delivered in `chunk`-byte reads (1 shakes out boundary bugs).
    struct Replay {
        banner: Vec<u8>,
        replies: VecDeque<Vec<u8>>,
        pending: VecDeque<u8>,
        chunk: usize,
        sent: Vec<String>,
    }

    impl Replay {
        fn new(banner: &str, replies: &[&str], chunk: usize) -> Replay {
            Replay {
                banner: banner.as_bytes().to_vec(),
                replies: replies.iter().map(|r| r.as_bytes().to_vec()).collect(),
                pending: banner.as_bytes().iter().copied().collect(),
                chunk,
                sent: Vec::new(),
            }
        }
    }

    /// A fake device's next `chunk` bytes of `pending`; nothing left is a timeout.
    fn trickle(pending: &mut VecDeque<u8>, chunk: usize) -> Result<Chunk, TransportError> {
        if pending.is_empty() {
            return Err(TransportError::Timeout {
                awaited: "output".into(),
                waited: Duration::ZERO,
            });
        }
        let n = chunk.min(pending.len());
        Ok(Chunk::Data(pending.drain(..n).collect()))
    }

    impl Shell for Replay {
        fn send(&mut self, data: &[u8]) -> Result<(), TransportError> {
            let _ = &self.banner;
            self.sent.push(String::from_utf8_lossy(data).into_owned());
            // One reply per line received (lines typed ahead are answered in order, as a
            // network OS does); a key without a newline gets one too.
            let lines = data.iter().filter(|b| **b == b'\n').count().max(1);
            for _ in 0..lines {
                if let Some(r) = self.replies.pop_front() {
                    self.pending.extend(r);
                }
            }
            Ok(())
        }
        fn recv(&mut self, _deadline: Instant) -> Result<Chunk, TransportError> {
            trickle(&mut self.pending, self.chunk)
        }
        fn close(&mut self, _deadline: Instant) {}
    }

    fn settings(save: bool, secret: Option<&str>) -> Settings {
        Settings {
            device: "leaf1".into(),
            command_timeout: Duration::from_secs(5),
            deadline: Instant::now() + Duration::from_secs(30),
            enable_secret: secret.map(str::to_string),
            secrets: vec![],
            save,
        }
    }

    fn ios_plan() -> Plan {
        Plan::cli(&["interface Gi1/0/5", "switchport access vlan 120", "exit"])
    }

    /// An IOS conversation: every reply echoes the line, then output, then the prompt.
    fn ios_replies() -> Vec<&'static str> {
        vec![
            "terminal length 0\r\nleaf1#",
            "terminal width 511\r\nleaf1#",
            "configure terminal\r\nEnter configuration commands, one per line.  End with CNTL/Z.\r\nleaf1(config)#",
            "interface Gi1/0/5\r\nleaf1(config-if)#",
            "switchport access vlan 120\r\nleaf1(config-if)#",
            "exit\r\nleaf1(config)#",
            "end\r\nleaf1#",
            "copy running-config startup-config\r\nDestination filename [startup-config]? ",
            "\r\nBuilding configuration...\r\n[OK]\r\nleaf1#",
            "",
        ]
    }

    /// Found by `bench/fuzz.sh` (target `cleaner`): a UTF-8 encoded C1 control (U+009B,
    /// the 8-bit CSI) went through into the text prompts are matched on and results show.
    #[test]
    fn cleaner_drops_utf8_encoded_c1_controls() {
        let crash = b"Ol\xc2\x9b\x9e\xb9\xce\xc1\xf2\xf5\xd2\x0f\n";
        for step in 1..=crash.len() {
            let mut out = String::new();
            let mut c = Cleaner::default();
            for piece in crash.chunks(step) {
                c.feed(piece, &mut out);
            }
            assert!(
                !out.chars().any(|ch| ch.is_control() && ch != '\n'),
                "step {step}: {out:?}"
            );
        }
        let mut out = String::new();
        Cleaner::default().feed("a\u{9b}b\u{85}c\u{7f}d".as_bytes(), &mut out);
        assert_eq!(out, "abcd");
    }

    #[test]
    fn ios_session_matches_the_dry_run_script_at_every_read_size() {
        let cat = Catalog::builtin().unwrap();
        let p = cat.get("cisco_ios").unwrap();
        for chunk in [1, 2, 3, 7, 4096] {
            let replay = Replay::new("\r\nleaf1#", &ios_replies(), chunk);
            let (t, r) = run(
                Connection::Shell(Box::new(replay)),
                p,
                &ios_plan(),
                &settings(true, None),
            );
            r.unwrap_or_else(|e| panic!("chunk {chunk}: {e}"));
            let sent: Vec<String> = t.commands.iter().map(|c| c.input.clone()).collect();
            let scripted = script(p, &ios_plan(), true);
            assert_eq!(sent, scripted, "chunk {chunk}");
            // copy + the confirmation answered = 2 waits for one line; the two setup lines
            // go typed ahead in one
            assert_eq!(
                t.round_trips as usize,
                scripted.len() - 1 + 1 + 1 - 1,
                "chunk {chunk}"
            );
        }
    }

    /// Issue 18: a whole cisco_ios attach (login, configuration, the save's question, the
    /// failure lines checked after every line) matches every pattern without building a
    /// regex-crate automaton.
    #[test]
    fn an_ios_attach_builds_no_regex_automaton() {
        let cat = Catalog::builtin().unwrap();
        let p = cat.get("cisco_ios").unwrap();
        let replay = Replay::new("\r\nleaf1#", &ios_replies(), 7);
        let (_, r) = run(
            Connection::Shell(Box::new(replay)),
            p,
            &ios_plan(),
            &settings(true, None),
        );
        r.unwrap();
        let matched: Vec<_> = p
            .patterns()
            .into_iter()
            .filter(|(_, r)| r.is_built())
            .collect();
        assert!(matched.len() > 10, "{} patterns matched", matched.len());
        let regex: Vec<_> = matched
            .iter()
            .filter(|(_, r)| r.built_by_the_regex_crate())
            .map(|(what, r)| format!("{what} {:?}", r.as_str()))
            .collect();
        assert!(regex.is_empty(), "built by the regex crate: {regex:?}");
    }

    /// Coalescing: three plans in one session; the rejected middle one leaves
    /// configuration mode, the next enters it again, and one save covers the batch.
    #[test]
    fn a_rejected_plan_in_a_session_does_not_disturb_the_next() {
        let cat = Catalog::builtin().unwrap();
        let p = cat.get("cisco_ios").unwrap();
        let replies = [
            "terminal length 0\r\nleaf1#",
            "terminal width 511\r\nleaf1#",
            "configure terminal\r\nleaf1(config)#",
            "interface Gi1/0/5\r\nleaf1(config-if)#",
            "switchport access vlan 120\r\nleaf1(config-if)#",
            "exit\r\nleaf1(config)#",
            "interface Gi1/0/6\r\nleaf1(config-if)#",
            "switchport access vlan 150\r\n% Invalid input detected at '^' marker.\r\nleaf1(config-if)#",
            "end\r\nleaf1#",
            "configure terminal\r\nleaf1(config)#",
            "interface Gi1/0/7\r\nleaf1(config-if)#",
            "switchport access vlan 130\r\nleaf1(config-if)#",
            "exit\r\nleaf1(config)#",
            "end\r\nleaf1#",
            "copy running-config startup-config\r\nDestination filename [startup-config]? ",
            "\r\n[OK]\r\nleaf1#",
            "",
        ];
        let settings = settings(true, None);
        let (mut s, opened) = Session::open(
            Connection::Shell(Box::new(Replay::new("leaf1#", &replies, 3))),
            p,
            &settings,
        );
        opened.result.unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        let a = s.apply(
            &Plan::cli(&["interface Gi1/0/5", "switchport access vlan 120", "exit"]),
            deadline,
        );
        a.result.unwrap();
        let b = s.apply(
            &Plan::cli(&["interface Gi1/0/6", "switchport access vlan 150", "exit"]),
            deadline,
        );
        assert!(matches!(b.result, Err(SessionError::Rejected { .. })));
        assert!(s.healthy(), "a rejected line leaves the session usable");
        let inputs = |t: &Transcript| -> Vec<String> {
            t.commands.iter().map(|c| c.input.clone()).collect()
        };
        assert_eq!(
            inputs(&b.transcript),
            ["interface Gi1/0/6", "switchport access vlan 150", "end"]
        );
        let c = s.apply(
            &Plan::cli(&["interface Gi1/0/7", "switchport access vlan 130", "exit"]),
            deadline,
        );
        c.result.unwrap();
        assert_eq!(inputs(&c.transcript)[0], "configure terminal");
        let f = s.finish();
        f.result.unwrap();
        assert_eq!(
            inputs(&f.transcript),
            ["end", "copy running-config startup-config", "exit"]
        );
    }

    #[test]
    fn prompt_lookalike_in_output_does_not_end_the_wait() {
        let cat = Catalog::builtin().unwrap();
        let p = cat.get("cisco_ios").unwrap();
        let mut replies = ios_replies();
        // Output that ends in another host's prompt-like text before the real prompt.
        replies[4] = "switchport access vlan 120\r\nother#\r\nleaf1(config-if)#";
        let replay = Replay::new("leaf1#", &replies, 1);
        let (t, r) = run(
            Connection::Shell(Box::new(replay)),
            p,
            &ios_plan(),
            &settings(true, None),
        );
        r.unwrap();
        assert_eq!(t.commands[4].output, "other#");
    }

    #[test]
    fn failure_indicator_stops_and_leaves_config_mode() {
        let cat = Catalog::builtin().unwrap();
        let p = cat.get("cisco_ios").unwrap();
        let mut replies = ios_replies();
        replies[4] = "switchport access vlan 120\r\n                 ^\r\n% Invalid input detected at '^' marker.\r\n\r\nleaf1(config-if)#";
        replies[5] = "end\r\nleaf1#";
        let replay = Replay::new("leaf1#", &replies[..6], 1);
        let (t, r) = run(
            Connection::Shell(Box::new(replay)),
            p,
            &ios_plan(),
            &settings(true, None),
        );
        match r {
            Err(SessionError::Rejected { line, indicator }) => {
                assert_eq!(line, "switchport access vlan 120");
                assert!(indicator.starts_with("% Invalid input"), "{indicator}");
            }
            other => panic!("{other:?}"),
        }
        let inputs: Vec<&str> = t.commands.iter().map(|c| c.input.as_str()).collect();
        assert_eq!(
            inputs[inputs.len() - 2..],
            ["end", "exit"],
            "left config mode, nothing saved, the session ended"
        );
        assert!(!t.commands.iter().any(|c| c.input.starts_with("copy")));
    }

    #[test]
    fn enable_secret_is_answered_and_never_shown() {
        let cat = Catalog::builtin().unwrap();
        let p = cat.get("cisco_ios").unwrap();
        let mut replies = vec![
            "terminal length 0\r\nleaf1>",
            "terminal width 511\r\nleaf1>",
            "enable\r\nPassword: ",
            "\r\nleaf1#",
        ];
        replies.extend(&ios_replies()[2..]);
        let replay = Replay::new("leaf1>", &replies, 1);
        let (t, r) = run(
            Connection::Shell(Box::new(replay)),
            p,
            &ios_plan(),
            &settings(true, Some("s3cret")),
        );
        r.unwrap();
        assert!(t
            .commands
            .iter()
            .all(|c| !c.input.contains("s3cret") && !c.output.contains("s3cret")));
        assert!(t.commands.iter().any(|c| c.input == "enable"));
        let no_secret = Replay::new("leaf1>", &replies, 1);
        let (_, r) = run(
            Connection::Shell(Box::new(no_secret)),
            p,
            &ios_plan(),
            &settings(true, None),
        );
        assert!(matches!(r, Err(SessionError::NoSecret { .. })), "{r:?}");
    }

    #[test]
    fn silence_is_a_timeout_with_the_tail() {
        let cat = Catalog::builtin().unwrap();
        let p = cat.get("cisco_ios").unwrap();
        let replay = Replay::new("leaf1#", &["terminal length 0\r\nstuck here"], 4096);
        let (_, r) = run(
            Connection::Shell(Box::new(replay)),
            p,
            &ios_plan(),
            &settings(true, None),
        );
        match r {
            Err(SessionError::Timeout { awaited, tail, .. }) => {
                assert!(awaited.contains("terminal length 0"), "{awaited}");
                assert!(tail.contains("stuck here"), "{tail}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn junos_two_line_prompt_and_commit() {
        let cat = Catalog::builtin().unwrap();
        let p = cat.get("juniper").unwrap();
        let plan = Plan::cli(&["set vlans v120 vlan-id 120"]);
        let replies = [
            "set cli screen-length 0 \r\nScreen length set to 0\r\n\r\nadmin@leaf1> ",
            "set cli screen-width 0 \r\nScreen width set to 0\r\n\r\nadmin@leaf1> ",
            "configure private \r\nwarning: uncommitted changes will be discarded on exit\r\nEntering configuration mode\r\n\r\n[edit]\r\nadmin@leaf1# ",
            "set vlans v120 vlan-id 120 \r\n\r\n[edit]\r\nadmin@leaf1# ",
            "commit \r\ncommit complete\r\n\r\n[edit]\r\nadmin@leaf1# ",
            "exit configuration-mode \r\nExiting configuration mode\r\n\r\nadmin@leaf1> ",
            "",
        ];
        for chunk in [1, 5, 4096] {
            let replay = Replay::new(
                "\r\n--- JUNOS 23.4R1 built 2024\r\nadmin@leaf1> ",
                &replies,
                chunk,
            );
            let (t, r) = run(
                Connection::Shell(Box::new(replay)),
                p,
                &plan,
                &settings(false, None),
            );
            r.unwrap_or_else(|e| panic!("chunk {chunk}: {e}"));
            let sent: Vec<String> = t.commands.iter().map(|c| c.input.clone()).collect();
            let scripted = script(p, &plan, false);
            assert_eq!(sent, scripted);
        }
    }

    /// `[sw-1-Eth-Trunk7]`: with a greedy host group the host would read `sw-1-Eth`, not
    /// the `sw-1` pinned at login, and the prompt would never be recognised.
    #[test]
    fn dashed_host_and_interface_names_do_not_split_vrp_prompts() {
        let cat = Catalog::builtin().unwrap();
        let p = cat.get("huawei").unwrap();
        let plan = Plan::cli(&["interface Eth-Trunk7", "mode lacp", "quit"]);
        let replies = [
            "screen-length 0 temporary\r\nInfo: The configuration takes effect on the current user terminal interface only.\r\n<sw-1>",
            "system-view\r\nEnter system view, return user view with Ctrl+Z.\r\n[sw-1]",
            "interface Eth-Trunk7\r\n[sw-1-Eth-Trunk7]",
            "mode lacp\r\n[sw-1-Eth-Trunk7]",
            "quit\r\n[sw-1]",
            "return\r\n<sw-1>",
            "save\r\n  The current configuration will be written to the device.\r\n  Are you sure to continue?[Y/N]:",
            "y\r\n  Save the configuration successfully.\r\n<sw-1>",
            "",
        ];
        for chunk in [1, 3, 4096] {
            let replay = Replay::new("\r\n<sw-1>", &replies, chunk);
            let (t, r) = run(
                Connection::Shell(Box::new(replay)),
                p,
                &plan,
                &settings(true, None),
            );
            r.unwrap_or_else(|e| panic!("chunk {chunk}: {e}"));
            let sent: Vec<String> = t.commands.iter().map(|c| c.input.clone()).collect();
            let scripted = script(p, &plan, true);
            assert_eq!(sent, scripted, "chunk {chunk}");
        }
    }

    #[test]
    fn srl_two_line_prompt_and_commit_on_leaving_the_candidate() {
        let cat = Catalog::builtin().unwrap();
        let p = cat.get("nokia_srl").unwrap();
        let plan = Plan::cli(&["set / interface ethernet-1/5 admin-state enable"]);
        let running = "--{ running }--[  ]--\r\nA:leaf1# ";
        let cand = "--{ candidate private private-admin }--[  ]--\r\nA:leaf1# ";
        let replies = [
            format!("enter candidate private\r\n{cand}"),
            "set / interface ethernet-1/5 admin-state enable\r\n--{ +* candidate private private-admin }--[  ]--\r\nA:leaf1# ".to_string(),
            format!("commit now\r\nAll changes have been committed. Leaving candidate mode.\r\n{running}"),
            String::new(),
        ];
        let replies: Vec<&str> = replies.iter().map(String::as_str).collect();
        for chunk in [1, 7, 4096] {
            let replay = Replay::new(&format!("Welcome\r\n{running}"), &replies, chunk);
            let (t, r) = run(
                Connection::Shell(Box::new(replay)),
                p,
                &plan,
                &settings(false, None),
            );
            r.unwrap_or_else(|e| panic!("chunk {chunk}: {e}"));
            let sent: Vec<String> = t.commands.iter().map(|c| c.input.clone()).collect();
            assert_eq!(
                sent,
                vec![
                    "enter candidate private",
                    "set / interface ethernet-1/5 admin-state enable",
                    "commit now",
                    "quit"
                ],
                "chunk {chunk}"
            );
        }
    }

    /// A CLI that reads lines typed ahead: for each line it receives (however many come in
    /// one send) it answers `replies[line]` (output and prompt), delivered `chunk` bytes per
    /// recv. A network OS echoes a line when its parser reads it, just before that line's
    /// answer; a tty with kernel ECHO (`kernel_echo`) echoes every line as it arrives, so
    /// all echoes of a batch come before the first answer.
    struct TypeAhead {
        replies: std::collections::HashMap<String, VecDeque<String>>,
        pending: VecDeque<u8>,
        chunk: usize,
        kernel_echo: bool,
        /// The sends, as received (one per write), shared with the test.
        sends: std::rc::Rc<std::cell::RefCell<Vec<String>>>,
    }

    impl TypeAhead {
        fn new(banner: &str, replies: &[(&str, &str)], chunk: usize, kernel_echo: bool) -> Self {
            let mut map: std::collections::HashMap<String, VecDeque<String>> =
                std::collections::HashMap::new();
            for (line, reply) in replies {
                map.entry(line.to_string())
                    .or_default()
                    .push_back(reply.to_string());
            }
            TypeAhead {
                replies: map,
                pending: banner.bytes().collect(),
                chunk,
                kernel_echo,
                sends: Default::default(),
            }
        }
    }

    impl Shell for TypeAhead {
        fn send(&mut self, data: &[u8]) -> Result<(), TransportError> {
            let text = String::from_utf8_lossy(data).into_owned();
            self.sends.borrow_mut().push(text.clone());
            let lines: Vec<&str> = text.split_terminator('\n').collect();
            if self.kernel_echo {
                for l in &lines {
                    self.pending.extend(format!("{l}\r\n").bytes());
                }
            }
            for l in lines {
                let reply = self
                    .replies
                    .get_mut(l)
                    .and_then(VecDeque::pop_front)
                    .unwrap_or_default();
                if !self.kernel_echo {
                    self.pending.extend(format!("{l}\r\n").bytes());
                }
                self.pending.extend(reply.bytes());
            }
            Ok(())
        }
        fn recv(&mut self, _deadline: Instant) -> Result<Chunk, TransportError> {
            trickle(&mut self.pending, self.chunk)
        }
        fn close(&mut self, _deadline: Instant) {}
    }

    const RUN_INT: &str = "show running-config interface Gi1/0/5";
    const RUN_INT_OUT: &str = "Building configuration...\r\n\r\ninterface GigabitEthernet1/0/5\r\n switchport access vlan 120\r\nend\r\n\r\nleaf1#";
    const VLANS: &str = "show vlan brief";
    const VLANS_OUT: &str =
        "VLAN Name                             Status    Ports\r\n120  vlan120                          active    Gi1/0/5\r\nleaf1#";

    fn ios_type_ahead() -> Vec<(&'static str, &'static str)> {
        vec![
            ("terminal length 0", "leaf1#"),
            ("terminal width 511", "leaf1#"),
            (RUN_INT, RUN_INT_OUT),
            (VLANS, VLANS_OUT),
        ]
    }

    fn shows(lines: &[&str]) -> Vec<Line> {
        lines.iter().map(|l| Line::cli(*l)).collect()
    }

    /// From user mode the way to the reads asks for the enable secret: `enable` and the
    /// secret go one by one (the question must be answered), then the show lines are typed
    /// ahead in privileged mode — never in the mode the session happened to be in.
    #[test]
    fn a_read_behind_the_enable_secret_enables_first_then_types_ahead() {
        let cat = Catalog::builtin().unwrap();
        let p = cat.get("cisco_ios").unwrap();
        let settings = settings(false, Some("s3cret"));
        for chunk in [1, 4096] {
            let mut replies = vec![
                ("terminal length 0", "leaf1>"),
                ("terminal width 511", "leaf1>"),
                ("enable", "Password: "),
                ("s3cret", "leaf1#"),
            ];
            replies.extend(ios_type_ahead().into_iter().skip(2));
            let (mut s, opened) = Session::open(
                Connection::Shell(Box::new(TypeAhead::new(
                    "\r\nleaf1>",
                    &replies,
                    chunk,
                    false,
                ))),
                p,
                &settings,
            );
            opened.result.unwrap();
            assert_eq!(s.mode(), Some("user"));
            let (seg, outs) = s.read(&shows(&[RUN_INT, VLANS]), None, settings.deadline);
            seg.result.unwrap_or_else(|e| panic!("chunk {chunk}: {e}"));
            let sent: Vec<&str> = seg
                .transcript
                .commands
                .iter()
                .map(|c| c.input.as_str())
                .collect();
            assert_eq!(sent, ["enable", RUN_INT, VLANS], "chunk {chunk}");
            assert_eq!(outs.len(), 2);
            assert!(outs[0].contains("switchport access vlan 120"), "{outs:?}");
            assert_eq!(s.mode(), Some("privileged"));
        }
    }

    /// The setup lines go together, then both show lines: each line is recorded with its
    /// own output, at every read size, in one round trip per batch.
    #[test]
    fn a_pipelined_read_is_split_at_each_prompt_before_the_next_echo() {
        let cat = Catalog::builtin().unwrap();
        let p = cat.get("cisco_ios").unwrap();
        assert!(p.type_ahead);
        let settings = settings(false, None);
        for chunk in [1, 2, 5, 4096] {
            let (mut s, opened) = Session::open(
                Connection::Shell(Box::new(TypeAhead::new(
                    "\r\nleaf1#",
                    &ios_type_ahead(),
                    chunk,
                    false,
                ))),
                p,
                &settings,
            );
            opened.result.unwrap();
            assert_eq!(opened.transcript.round_trips, 2, "login + setup batch");
            let (seg, outs) = s.read(&shows(&[RUN_INT, VLANS]), None, settings.deadline);
            seg.result.unwrap_or_else(|e| panic!("chunk {chunk}: {e}"));
            assert_eq!(seg.transcript.round_trips, 1, "chunk {chunk}");
            assert_eq!(
                outs,
                [
                    "Building configuration...\n\ninterface GigabitEthernet1/0/5\n switchport access vlan 120\nend",
                    "VLAN Name                             Status    Ports\n120  vlan120                          active    Gi1/0/5",
                ],
                "chunk {chunk}"
            );
            let recorded: Vec<(&str, &str)> = seg
                .transcript
                .commands
                .iter()
                .map(|c| (c.input.as_str(), c.output.as_str()))
                .collect();
            assert_eq!(recorded[0].0, RUN_INT);
            assert_eq!(recorded[0].1, outs[0]);
            assert_eq!(recorded[1], (VLANS, outs[1].as_str()));
            assert_eq!(s.mode(), Some("privileged"));
        }
    }

    /// Three show lines in one batch, the second refused: the refusal names the second
    /// line, the third still gets its own output, and the session stays usable.
    #[test]
    fn a_refusal_in_a_batch_is_the_refused_lines() {
        let cat = Catalog::builtin().unwrap();
        let p = cat.get("cisco_ios").unwrap();
        let settings = settings(false, None);
        let mut replies = ios_type_ahead();
        replies.push((
            "show interfaces Gi1/0/99 switchport",
            "                 ^\r\n% Invalid input detected at '^' marker.\r\n\r\nleaf1#",
        ));
        let (mut s, opened) = Session::open(
            Connection::Shell(Box::new(TypeAhead::new("leaf1#", &replies, 1, false))),
            p,
            &settings,
        );
        opened.result.unwrap();
        let (seg, _) = s.read(
            &shows(&[RUN_INT, "show interfaces Gi1/0/99 switchport", VLANS]),
            None,
            settings.deadline,
        );
        match &seg.result {
            Err(SessionError::Rejected { line, indicator }) => {
                assert_eq!(line, "show interfaces Gi1/0/99 switchport");
                assert!(indicator.contains("Invalid input"), "{indicator}");
            }
            other => panic!("{other:?}"),
        }
        let c = &seg.transcript.commands;
        assert_eq!(c.len(), 3);
        assert!(c[0].output.contains("switchport access vlan 120"));
        assert!(!c[0].output.contains("Invalid"));
        assert!(c[1].output.contains("% Invalid input"));
        assert!(c[2].output.starts_with("VLAN Name"));
        assert!(!c[2].output.contains("Invalid"));
        assert!(s.healthy(), "a refused read leaves the session usable");
    }

    /// The navigation line of a batch (`end`, out of configuration mode) whose prompt is
    /// not the mode it should land in: an unexpected mode, named, and no output taken for
    /// the show line as if it had run where it should.
    #[test]
    fn a_navigation_line_landing_elsewhere_in_a_batch_is_detected() {
        let cat = Catalog::builtin().unwrap();
        let p = cat.get("cisco_ios").unwrap();
        let settings = settings(false, None);
        let mut replies = ios_type_ahead();
        replies.extend([
            ("configure terminal", "leaf1(config)#"),
            ("interface Gi1/0/5", "leaf1(config-if)#"),
            ("switchport access vlan 120", "leaf1(config-if)#"),
            ("exit", "leaf1(config)#"),
            // `end` refused to leave: still in configuration mode.
            ("end", "leaf1(config)#"),
        ]);
        let (mut s, opened) = Session::open(
            Connection::Shell(Box::new(TypeAhead::new("leaf1#", &replies, 1, false))),
            p,
            &settings,
        );
        opened.result.unwrap();
        s.apply(&ios_plan(), settings.deadline).result.unwrap();
        let (seg, outs) = s.read(&shows(&[RUN_INT]), None, settings.deadline);
        match &seg.result {
            Err(SessionError::UnexpectedMode {
                line,
                expected,
                actual,
            }) => {
                assert_eq!(line, "end");
                assert_eq!(expected, "privileged");
                assert_eq!(actual, "config");
            }
            other => panic!("{other:?}"),
        }
        assert!(outs.is_empty());
        let c = &seg.transcript.commands;
        assert_eq!(
            c.iter().map(|c| c.input.as_str()).collect::<Vec<_>>(),
            ["end", RUN_INT]
        );
        assert_eq!(c[1].output, "", "no output attributed to the show line");
        assert!(!s.healthy());
    }

    /// A device that echoes every typed-ahead line as it arrives (a tty's ECHO) never shows
    /// a prompt followed by the next line's echo: the batch times out, naming the line
    /// waited on, and no line is given another line's output.
    #[test]
    fn a_kernel_echo_device_fails_cleanly_without_misattributing() {
        let cat = Catalog::builtin().unwrap();
        let p = cat.get("cisco_ios").unwrap();
        let settings = settings(false, None);
        for chunk in [1, 4096] {
            let (mut s, opened) = Session::open(
                Connection::Shell(Box::new(TypeAhead::new(
                    "leaf1#",
                    &ios_type_ahead(),
                    chunk,
                    true,
                ))),
                p,
                &settings,
            );
            match &opened.result {
                Err(SessionError::Timeout { awaited, .. }) => {
                    assert!(awaited.contains("terminal length 0"), "{awaited}")
                }
                other => panic!("chunk {chunk}: {other:?}"),
            }
            assert!(opened
                .transcript
                .commands
                .iter()
                .all(|c| c.output.is_empty()));
            let (seg, outs) = s.read(&shows(&[RUN_INT, VLANS]), None, settings.deadline);
            assert!(seg.result.is_err(), "an unusable session reads nothing");
            assert!(outs.is_empty());
        }
        // Setup done line by line first (no setup in the batch): the read itself.
        let mut q = p.clone();
        q.on_open.clear();
        let (mut s, opened) = Session::open(
            Connection::Shell(Box::new(TypeAhead::new(
                "leaf1#",
                &ios_type_ahead(),
                1,
                true,
            ))),
            &q,
            &settings,
        );
        opened.result.unwrap();
        let (seg, outs) = s.read(&shows(&[RUN_INT, VLANS]), None, settings.deadline);
        match &seg.result {
            Err(SessionError::Timeout { awaited, .. }) => {
                assert!(awaited.contains(RUN_INT), "{awaited}")
            }
            other => panic!("{other:?}"),
        }
        assert!(outs.is_empty());
        assert!(
            seg.transcript.commands.iter().all(|c| c.output.is_empty()),
            "{:?}",
            seg.transcript.commands
        );
    }

    /// The body of the IOS access-port block the driver renders for an attach.
    const BODY: [&str; 4] = [
        "no switchport access vlan",
        "switchport mode access",
        "switchport access vlan 120",
        "no shutdown",
    ];
    /// What IOS prints for an access VLAN it creates on the fly: output that is no refusal.
    const CREATED: &str = "% Access VLAN does not exist. Creating vlan 120";
    const INVALID: &str =
        "                 ^\r\n% Invalid input detected at '^' marker.\r\n\r\nleaf1(config-if)#";

    /// One interface block per port, marked as the driver marks it.
    fn block_plan(ports: &[&str]) -> Plan {
        let mut lines = Vec::new();
        let mut opens = Vec::new();
        for p in ports {
            opens.push(lines.len());
            lines.push(format!("interface {p}"));
            lines.extend(BODY.iter().map(|l| l.to_string()));
            lines.push("exit".into());
        }
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        opens
            .into_iter()
            .fold(Plan::cli(&refs), |plan, at| plan.block(at, BODY.len() + 1))
    }

    /// An IOS device that takes the block; `over` replaces the answers of some lines.
    fn block_replies(over: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
        let mut r = ios_type_ahead();
        let mut conf: Vec<(&'static str, &'static str)> =
            vec![
            (
                "configure terminal",
                "Enter configuration commands, one per line.  End with CNTL/Z.\r\nleaf1(config)#",
            ),
            ("interface Gi1/0/5", "leaf1(config-if)#"),
            (BODY[0], "leaf1(config-if)#"),
            (BODY[1], "leaf1(config-if)#"),
            (BODY[2], "% Access VLAN does not exist. Creating vlan 120\r\nleaf1(config-if)#"),
            (BODY[3], "leaf1(config-if)#"),
            ("exit", "leaf1(config)#"),
            ("interface Gi1/0/6", "leaf1(config-if)#"),
            ("end", "leaf1#"),
        ];
        for (line, answer) in over {
            match conf.iter_mut().find(|(l, _)| l == line) {
                Some(slot) => slot.1 = answer,
                None => conf.push((line, answer)),
            }
        }
        conf.retain(|(_, a)| *a != "(silent)");
        r.extend(conf);
        r
    }

    type Sends = std::rc::Rc<std::cell::RefCell<Vec<String>>>;

    fn typed_ahead<'a>(
        p: &'a Platform,
        settings: &'a Settings,
        replies: &[(&str, &str)],
        chunk: usize,
        kernel_echo: bool,
    ) -> (Session<'a>, Sends) {
        let device = TypeAhead::new("\r\nleaf1#", replies, chunk, kernel_echo);
        let sends = device.sends.clone();
        let (s, opened) = Session::open(Connection::Shell(Box::new(device)), p, settings);
        opened.result.unwrap();
        sends.borrow_mut().clear();
        (s, sends)
    }

    fn recorded(t: &Transcript) -> Vec<(&str, &str)> {
        t.commands
            .iter()
            .map(|c| (c.input.as_str(), c.output.as_str()))
            .collect()
    }

    /// Issue 18: `configure terminal` and the `interface` line wait for their prompts; the
    /// block's body and `exit` go in one write, and each line is recorded with its own
    /// output (IOS's note under the line that made it), at every read size: three round
    /// trips where there were eight.
    #[test]
    fn an_interface_block_body_is_one_write_split_at_each_prompt() {
        let cat = Catalog::builtin().unwrap();
        let p = cat.get("cisco_ios").unwrap();
        let settings = settings(false, None);
        for chunk in [1, 2, 5, 4096] {
            let (mut s, sends) = typed_ahead(p, &settings, &block_replies(&[]), chunk, false);
            let seg = s.apply(&block_plan(&["Gi1/0/5"]), settings.deadline);
            seg.result.unwrap_or_else(|e| panic!("chunk {chunk}: {e}"));
            assert_eq!(seg.transcript.round_trips, 3, "chunk {chunk}");
            assert_eq!(
                *sends.borrow(),
                [
                    "configure terminal\n".to_string(),
                    "interface Gi1/0/5\n".into(),
                    format!("{}\nexit\n", BODY.join("\n")),
                ],
                "chunk {chunk}"
            );
            let r = recorded(&seg.transcript);
            assert_eq!(r.len(), 7, "{r:?}");
            assert_eq!(r[1], ("interface Gi1/0/5", ""));
            for (k, line) in BODY.iter().enumerate() {
                let want = if k == 2 { CREATED } else { "" };
                assert_eq!(r[2 + k], (*line, want), "chunk {chunk}");
            }
            assert_eq!(r[6], ("exit", ""));
            let mut all = vec!["interface Gi1/0/5"];
            all.extend(BODY);
            all.push("exit");
            assert_eq!(seg.progress.accepted, all);
            assert_eq!(s.mode(), Some("config"));
        }
    }

    /// A body line refused in the middle of the write: the refusal is that line's, the
    /// lines after it ran on the device and are listed as accepted with their own outputs,
    /// the next port's block is never sent, and the abort leaves configuration mode with
    /// the session usable (for the restore and the read-back).
    #[test]
    fn a_refused_body_line_is_its_own_and_the_lines_after_it_are_accepted() {
        let cat = Catalog::builtin().unwrap();
        let p = cat.get("cisco_ios").unwrap();
        let settings = settings(false, None);
        for chunk in [1, 3, 4096] {
            let replies = block_replies(&[(BODY[1], INVALID)]);
            let (mut s, sends) = typed_ahead(p, &settings, &replies, chunk, false);
            let seg = s.apply(&block_plan(&["Gi1/0/5", "Gi1/0/6"]), settings.deadline);
            match &seg.result {
                Err(SessionError::Rejected { line, indicator }) => {
                    assert_eq!(line, BODY[1]);
                    assert!(indicator.contains("Invalid input"), "{indicator}");
                }
                other => panic!("chunk {chunk}: {other:?}"),
            }
            let pr = &seg.progress;
            assert_eq!(
                pr.accepted,
                ["interface Gi1/0/5", BODY[0], BODY[2], BODY[3], "exit"],
                "chunk {chunk}"
            );
            assert_eq!(pr.rejected.as_deref(), Some(BODY[1]));
            assert_eq!(pr.failed_at, Some(2));
            assert_eq!(pr.accepted_at, [0, 1, 3, 4, 5]);
            assert!(pr.in_flight.is_none() && pr.unconfirmed.is_empty());
            assert!(pr.took_effect);
            let r = recorded(&seg.transcript);
            assert!(r[3].1.contains("% Invalid input"), "{r:?}");
            assert_eq!(r[4], (BODY[2], CREATED), "chunk {chunk}");
            assert_eq!(
                r.iter().filter(|(_, o)| o.contains("Invalid")).count(),
                1,
                "the refusal is under its own line only: {r:?}"
            );
            assert_eq!(r.last().map(|c| c.0), Some("end"), "{r:?}");
            assert!(
                !sends.borrow().iter().any(|w| w.contains("Gi1/0/6")),
                "no block after a refused one: {:?}",
                sends.borrow()
            );
            assert!(s.healthy());
            assert_eq!(s.mode(), Some("privileged"));
        }
    }

    /// The `interface` line refused (its prompt is still the global configuration mode):
    /// not one body line is typed, so none runs in the global configuration context. An
    /// `interface` line answered without an error but without the sub-mode is stopped the
    /// same way, as an unexpected mode.
    #[test]
    fn a_refused_interface_line_never_sends_the_body() {
        let cat = Catalog::builtin().unwrap();
        let p = cat.get("cisco_ios").unwrap();
        let settings = settings(false, None);
        let refused = "% Invalid input detected at '^' marker.\r\nleaf1(config)#";
        for (answer, rejected) in [(refused, true), ("leaf1(config)#", false)] {
            let replies = block_replies(&[("interface Gi1/0/5", answer)]);
            let (mut s, sends) = typed_ahead(p, &settings, &replies, 1, false);
            let seg = s.apply(&block_plan(&["Gi1/0/5"]), settings.deadline);
            match (&seg.result, rejected) {
                (Err(SessionError::Rejected { line, .. }), true) => {
                    assert_eq!(line, "interface Gi1/0/5");
                    assert_eq!(seg.progress.rejected.as_deref(), Some("interface Gi1/0/5"));
                    assert!(seg.progress.accepted.is_empty());
                    assert!(!seg.progress.took_effect);
                }
                (Err(SessionError::UnexpectedMode { line, actual, .. }), false) => {
                    assert_eq!(line, "interface Gi1/0/5");
                    assert_eq!(actual, "config");
                }
                (other, _) => panic!("{answer:?}: {other:?}"),
            }
            let written = sends.borrow().join("");
            for l in BODY {
                assert!(!written.contains(l), "{l:?} was typed: {written:?}");
            }
            assert_eq!(
                recorded(&seg.transcript)
                    .iter()
                    .map(|c| c.0)
                    .collect::<Vec<_>>(),
                ["configure terminal", "interface Gi1/0/5", "end"]
            );
        }
    }

    /// The device stops answering in the middle of the block: the line awaited is in
    /// flight, the lines typed ahead behind it are unconfirmed (they may have run), all of
    /// them recorded as sent without output, and the session is not used again.
    #[test]
    fn a_timeout_mid_block_leaves_the_unanswered_lines_unconfirmed() {
        let cat = Catalog::builtin().unwrap();
        let p = cat.get("cisco_ios").unwrap();
        let settings = settings(false, None);
        for chunk in [1, 4096] {
            let replies = block_replies(&[
                (BODY[2], "(silent)"),
                (BODY[3], "(silent)"),
                ("exit", "(silent)"),
            ]);
            let (mut s, _) = typed_ahead(p, &settings, &replies, chunk, false);
            let seg = s.apply(&block_plan(&["Gi1/0/5"]), settings.deadline);
            match &seg.result {
                Err(SessionError::Timeout { awaited, .. }) => {
                    assert!(awaited.contains(BODY[2]), "{awaited}")
                }
                other => panic!("chunk {chunk}: {other:?}"),
            }
            let pr = &seg.progress;
            assert_eq!(pr.accepted, ["interface Gi1/0/5", BODY[0], BODY[1]]);
            assert_eq!(pr.in_flight.as_deref(), Some(BODY[2]));
            assert_eq!(pr.unconfirmed, [BODY[3], "exit"]);
            assert!(pr.took_effect);
            let r = recorded(&seg.transcript);
            assert_eq!(&r[4..7], [(BODY[2], ""), (BODY[3], ""), ("exit", "")]);
            assert!(!s.healthy());
        }
    }

    /// A device that echoes the block's lines as they arrive (a tty's ECHO) never shows a
    /// prompt followed by the next line's echo: the write times out on its first line and
    /// no body line is given another line's output.
    #[test]
    fn a_kernel_echo_device_fails_a_block_cleanly_without_misattributing() {
        let cat = Catalog::builtin().unwrap();
        let mut q = cat.get("cisco_ios").unwrap().clone();
        q.on_open.clear();
        let settings = settings(false, None);
        for chunk in [1, 4096] {
            let (mut s, _) = typed_ahead(&q, &settings, &block_replies(&[]), chunk, true);
            let seg = s.apply(&block_plan(&["Gi1/0/5"]), settings.deadline);
            match &seg.result {
                Err(SessionError::Timeout { awaited, .. }) => {
                    assert!(awaited.contains(BODY[0]), "{awaited}")
                }
                other => panic!("chunk {chunk}: {other:?}"),
            }
            let pr = &seg.progress;
            assert_eq!(pr.accepted, ["interface Gi1/0/5"]);
            assert_eq!(pr.in_flight.as_deref(), Some(BODY[0]));
            assert_eq!(pr.unconfirmed, [BODY[1], BODY[2], BODY[3], "exit"]);
            let r = recorded(&seg.transcript);
            assert!(r[2..7].iter().all(|c| c.1.is_empty()), "{r:?}");
        }
    }

    #[test]
    fn cleaner_strips_ansi_cr_and_backspaces() {
        let mut c = Cleaner::default();
        let mut out = String::new();
        c.feed(
            b"ab\x08c\r\n\x1b[31mred\x1b[0m --More--\x08\x08\x08\x08\x08\x08\x08\x08",
            &mut out,
        );
        c.feed(b"\x1b]0;title\x07x", &mut out);
        assert_eq!(out, "ac\nred x");
        // An escape sequence split across chunks.
        let mut out = String::new();
        c.feed(b"a\x1b[", &mut out);
        c.feed(b"1mb", &mut out);
        assert_eq!(out, "ab");
    }

    #[test]
    fn redaction() {
        let s = ["hunter2".to_string()];
        assert_eq!(redact("pw hunter2 ok", s.iter()), "pw ******** ok");
    }

    /// The words a refusal is reported with: the message before a summary line (Junos),
    /// the indented detail under a heading (NVUE, whose `Invalid config [rev_id: N]` says
    /// nothing itself), neither the `[edit ...]` context nor the quoted statement.
    #[test]
    fn describe_failure_keeps_the_message_before_a_summary_and_the_detail_under_a_heading() {
        let re = |p: &[&str]| -> Vec<Pattern> {
            p.iter()
                .map(|p| {
                    crate::catalog::pattern::compile(p, crate::catalog::pattern::Syntax::Check)
                        .unwrap()
                })
                .collect()
        };
        let junos = "[edit interfaces ge-0/0/5 unit 0 family ethernet-switching vlan]\n  'members 130'\n    No vlan matches vlan tag 130 for interface ge-0/0/5.0\nerror: configuration check-out failed\n";
        assert_eq!(
            describe_failure(&re(&["^error:"]), junos).unwrap(),
            "No vlan matches vlan tag 130 for interface ge-0/0/5.0: error: configuration check-out failed"
        );
        let nvue = "Invalid config [rev_id: 4]\n  Config invalid at interface.swp1.link.breakout: '4x10G' is not of type 'object'\n";
        assert_eq!(
            describe_failure(&re(&["^Invalid config", "^Config invalid at"]), nvue).unwrap(),
            "Invalid config [rev_id: 4]: Config invalid at interface.swp1.link.breakout: '4x10G' is not of type 'object'"
        );
        // A line that is not indented under the refusal is not part of it (the prompt).
        let ios = "% Invalid input detected at '^' marker.\nleaf1(config-if)#";
        assert_eq!(
            describe_failure(&re(&["^% Invalid"]), ios).unwrap(),
            "% Invalid input detected at '^' marker."
        );
    }
}
