//! The session: the conversation with a device, for both platform kinds.
//!
//! CLI: read until a prompt of the platform or a deadline — never sleep-and-hope — and match
//! only the text received since the current line was sent (after its echo), in a bounded
//! tail window, with `\r`, backspaces and ANSI sequences stripped. The mode is worked out
//! once from the login prompt (which also pins the host name) and then tracked from each
//! prompt. A line's result is failed until its output has been checked against the
//! platform's failure indicators. On the first failure the platform's abort lines run, the
//! session leaves configuration mode and closes; the error names the line.
//!
//! Exec: each line runs on its own channel, judged by exit status and failure indicators.
//!
//! [`script`] is the same sequence as data, for `--dry-run`.

pub mod plan;

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::catalog::{Kind, Platform};
use crate::transport::{Chunk, Connection, Exec, Shell, TransportError};
use plan::{Line, Plan};

/// How much of the cleaned output is searched for a prompt or a question.
const TAIL_WINDOW: usize = 1024;
/// Largest output kept per command (the rest is dropped from the start).
const MAX_OUTPUT: usize = 256 * 1024;
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

/// A session failure.
#[derive(Debug, thiserror::Error)]
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

/// Where a scripted line runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Session setup (paging, width).
    Setup,
    /// A mode change.
    Navigate,
    /// A configuration line from the plan.
    Config,
    /// Commit / apply.
    Commit,
    /// Save.
    Save,
    /// Leaving.
    Close,
    /// A show line reading a port back (`--verify`, `verify_port`).
    Read,
}

/// The full sequence of lines a plan needs on a platform, starting from `start_mode`
/// (CLI) — what `--dry-run` shows, and what a session sends when the device lands in the
/// expected login mode.
pub fn script(platform: &Platform, plan: &Plan, save: bool) -> Vec<(Phase, String)> {
    let mut out = Vec::new();
    match platform.kind {
        Kind::Exec => {
            out.extend(plan.lines.iter().map(|l| (Phase::Config, l.text.clone())));
            out.extend(platform.commit.iter().map(|l| (Phase::Commit, l.clone())));
            if save {
                out.extend(platform.save.iter().map(|l| (Phase::Save, l.clone())));
            }
        }
        Kind::Cli => {
            out.extend(platform.on_open.iter().map(|l| (Phase::Setup, l.clone())));
            let nav = |from: &str, to: &str| platform.path(from, to).unwrap_or_default();
            out.extend(
                nav(&platform.login_mode, &platform.config_mode)
                    .into_iter()
                    .map(|(l, _, _)| (Phase::Navigate, l)),
            );
            out.extend(plan.lines.iter().map(|l| (Phase::Config, l.text.clone())));
            out.extend(platform.commit.iter().map(|l| (Phase::Commit, l.clone())));
            out.extend(
                nav(&platform.config_mode, &platform.save_mode)
                    .into_iter()
                    .map(|(l, _, _)| (Phase::Navigate, l)),
            );
            if save {
                out.extend(platform.save.iter().map(|l| (Phase::Save, l.clone())));
            }
            out.extend(platform.close.iter().map(|l| (Phase::Close, l.clone())));
        }
    }
    out
}

/// The sequence with reads: `reads` before the plan and again after it (`--verify`), or
/// only the reads when there is no plan (`verify_port`). `read_mode` is the mode the reads
/// are typed in (CLI; default the save mode).
pub fn script_with_reads(
    platform: &Platform,
    plan: Option<&Plan>,
    save: bool,
    reads: &[Line],
    read_mode: Option<&str>,
) -> Vec<(Phase, String)> {
    let read = |out: &mut Vec<(Phase, String)>| {
        out.extend(reads.iter().map(|l| (Phase::Read, l.text.clone())));
    };
    let mut out = Vec::new();
    match platform.kind {
        Kind::Exec => {
            read(&mut out);
            if let Some(plan) = plan {
                out.extend(plan.lines.iter().map(|l| (Phase::Config, l.text.clone())));
                out.extend(platform.commit.iter().map(|l| (Phase::Commit, l.clone())));
                read(&mut out);
                if save {
                    out.extend(platform.save.iter().map(|l| (Phase::Save, l.clone())));
                }
            }
        }
        Kind::Cli => {
            let rmode = read_mode.unwrap_or(&platform.save_mode);
            let nav = |out: &mut Vec<(Phase, String)>, from: &str, to: &str| {
                out.extend(
                    platform
                        .path(from, to)
                        .unwrap_or_default()
                        .into_iter()
                        .map(|(l, _, _)| (Phase::Navigate, l)),
                )
            };
            out.extend(platform.on_open.iter().map(|l| (Phase::Setup, l.clone())));
            nav(&mut out, &platform.login_mode, rmode);
            read(&mut out);
            if let Some(plan) = plan {
                nav(&mut out, rmode, &platform.config_mode);
                out.extend(plan.lines.iter().map(|l| (Phase::Config, l.text.clone())));
                out.extend(platform.commit.iter().map(|l| (Phase::Commit, l.clone())));
                nav(&mut out, &platform.config_mode, rmode);
                read(&mut out);
                nav(&mut out, rmode, &platform.save_mode);
                if save {
                    out.extend(platform.save.iter().map(|l| (Phase::Save, l.clone())));
                }
            }
            out.extend(platform.close.iter().map(|l| (Phase::Close, l.clone())));
        }
    }
    out
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

/// One part of a session: the lines sent for it and how it ended.
#[derive(Debug)]
pub struct Segment {
    /// Lines sent during this part, with their round trips.
    pub transcript: Transcript,
    /// How it ended.
    pub result: Result<(), SessionError>,
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
        let (inner, result) = match conn {
            Connection::Shell(shell) => {
                let mut s = CliSession::new(shell, platform, settings);
                let r = s.open();
                (Inner::Cli(s), r)
            }
            Connection::Exec(exec) => (
                Inner::Exec(ExecSession {
                    exec,
                    platform,
                    settings,
                    deadline: settings.deadline,
                    transcript: Transcript::default(),
                    aborted_cleanly: true,
                }),
                Ok(()),
            ),
        };
        let mut session = Session {
            inner,
            healthy: result.is_ok(),
            applied: false,
        };
        let transcript = session.take_transcript();
        (session, Segment { transcript, result })
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
        Segment { transcript, result }
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
                lines
                    .iter()
                    .try_for_each(|l| s.run_line(l).map(|out| outputs.push(out)))
            }
        };
        match &result {
            Ok(()) => {}
            Err(SessionError::Rejected { .. }) => {}
            Err(_) => self.healthy = false,
        }
        let transcript = self.take_transcript();
        (Segment { transcript, result }, outputs)
    }

    /// Leaves configuration mode, saves (when configured and some plan was applied) and
    /// closes. Without an applied plan nothing is sent: the failure path already left
    /// configuration mode.
    pub fn finish(mut self) -> Segment {
        let applied = self.applied;
        let result = match &mut self.inner {
            Inner::Cli(s) => {
                let r = if applied { s.finish() } else { Ok(()) };
                s.shell.close(Instant::now() + Duration::from_secs(2));
                r
            }
            Inner::Exec(s) if applied => s.finish(),
            Inner::Exec(_) => Ok(()),
        };
        let transcript = self.take_transcript();
        Segment { transcript, result }
    }

    fn take_transcript(&mut self) -> Transcript {
        match &mut self.inner {
            Inner::Cli(s) => std::mem::take(&mut s.transcript),
            Inner::Exec(s) => std::mem::take(&mut s.transcript),
        }
    }
}

/// Strips `\r`, applies backspaces and drops ANSI escape sequences and other control
/// characters, across chunk boundaries.
#[derive(Debug, Default)]
pub struct Cleaner {
    state: EscState,
    pending: Vec<u8>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum EscState {
    #[default]
    Text,
    Esc,
    Csi,
    Osc,
    OscEsc,
}

impl Cleaner {
    /// Feeds raw bytes, appending clean text to `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut String) {
        for &b in bytes {
            match self.state {
                EscState::Text => match b {
                    0x1b => self.state = EscState::Esc,
                    b'\r' | 0x00 | 0x07 => {}
                    0x08 => {
                        self.flush(out);
                        if !out.ends_with('\n') {
                            out.pop();
                        }
                    }
                    b'\n' | b'\t' => {
                        self.flush(out);
                        out.push(b as char);
                    }
                    b if b < 0x20 || b == 0x7f => {}
                    b => {
                        self.pending.push(b);
                        if b < 0x80
                            || std::str::from_utf8(&self.pending).is_ok()
                            || self.pending.len() >= 4
                        {
                            self.flush(out);
                        }
                    }
                },
                EscState::Esc => {
                    self.state = match b {
                        b'[' => EscState::Csi,
                        b']' => EscState::Osc,
                        _ => EscState::Text,
                    }
                }
                EscState::Csi => {
                    if (0x40..=0x7e).contains(&b) {
                        self.state = EscState::Text;
                    }
                }
                EscState::Osc => match b {
                    0x07 => self.state = EscState::Text,
                    0x1b => self.state = EscState::OscEsc,
                    _ => {}
                },
                EscState::OscEsc => self.state = EscState::Text,
            }
        }
    }

    fn flush(&mut self, out: &mut String) {
        if !self.pending.is_empty() {
            // C1 controls arrive UTF-8 encoded (U+009B is an 8-bit CSI): dropped like the
            // ASCII ones.
            out.extend(
                String::from_utf8_lossy(&self.pending)
                    .chars()
                    .filter(|c| !c.is_control()),
            );
            self.pending.clear();
        }
    }
}

struct CliSession<'a> {
    shell: Box<dyn Shell>,
    platform: &'a Platform,
    settings: &'a Settings,
    /// Host name pinned from the login prompt.
    host: Option<String>,
    /// Each mode's prompt with the pinned host written in literally (`None`: the mode's
    /// prompt has no `host` group).
    pinned: Vec<Option<regex::Regex>>,
    mode: String,
    /// Deadline of the current part of the session.
    deadline: Instant,
    transcript: Transcript,
}

/// What to wait for after a line.
struct Wait<'w> {
    /// The line sent (for echo detection and messages); empty at login.
    line: &'w str,
    /// Answer the enable-secret question.
    secret: bool,
}

impl<'a> CliSession<'a> {
    fn new(shell: Box<dyn Shell>, platform: &'a Platform, settings: &'a Settings) -> Self {
        CliSession {
            shell,
            platform,
            settings,
            host: None,
            pinned: Vec::new(),
            mode: String::new(),
            deadline: settings.deadline,
            transcript: Transcript::default(),
        }
    }

    /// Login prompt and setup lines.
    fn open(&mut self) -> Result<(), SessionError> {
        self.wait(&Wait {
            line: "",
            secret: false,
        })?;
        for line in &self.platform.on_open {
            self.command(line)?;
        }
        Ok(())
    }

    /// Configuration mode, the plan's lines and the commit; on failure the abort.
    fn apply(&mut self, plan: &Plan) -> Result<(), SessionError> {
        let config_mode = self.platform.config_mode.clone();
        self.goto(&config_mode)?;
        let applied = self.configure(plan);
        if let Err(e) = applied {
            self.abort();
            return Err(e);
        }
        Ok(())
    }

    /// Show lines in `mode` (default: the save mode); their outputs.
    fn read(
        &mut self,
        lines: &[Line],
        mode: Option<&str>,
        outputs: &mut Vec<String>,
    ) -> Result<(), SessionError> {
        let target = mode.unwrap_or(&self.platform.save_mode).to_string();
        self.goto(&target)?;
        for l in lines {
            outputs.push(self.send_and_wait(&l.text, false)?);
        }
        Ok(())
    }

    /// Out of configuration mode, save, leave.
    fn finish(&mut self) -> Result<(), SessionError> {
        let p = self.platform;
        self.leave_config()?;
        if self.settings.save {
            for line in &p.save {
                self.command(line)?;
            }
        }
        for line in &p.close {
            // Leaving: no prompt follows the last exit.
            let _ = self.shell.send(format!("{line}\n").as_bytes());
            self.record(line, String::new(), Instant::now());
        }
        Ok(())
    }

    fn configure(&mut self, plan: &Plan) -> Result<(), SessionError> {
        for Line { text, .. } in &plan.lines {
            self.command(text)?;
            if !self.in_config() {
                return Err(SessionError::UnexpectedMode {
                    line: text.clone(),
                    expected: "a configuration mode".into(),
                    actual: self.mode.clone(),
                });
            }
        }
        for line in &self.platform.commit {
            self.command(line)?;
        }
        Ok(())
    }

    /// After a failure: discard what the platform can discard, get out of configuration
    /// mode so the device is left clean. Errors here are secondary and not reported.
    fn abort(&mut self) {
        if self.in_config() {
            for line in &self.platform.abort {
                if self.command(line).is_err() {
                    return;
                }
            }
            let _ = self.leave_config();
        }
    }

    fn in_config(&self) -> bool {
        self.platform.mode(&self.mode).is_some_and(|m| m.config)
    }

    fn leave_config(&mut self) -> Result<(), SessionError> {
        let target = self.platform.save_mode.clone();
        self.goto(&target)
    }

    /// Walks the catalog's transitions from the current mode to `target`.
    fn goto(&mut self, target: &str) -> Result<(), SessionError> {
        if self.mode == target {
            return Ok(());
        }
        let path =
            self.platform
                .path(&self.mode, target)
                .ok_or_else(|| SessionError::UnexpectedMode {
                    line: String::new(),
                    expected: format!("a way from {} to {target}", self.mode),
                    actual: self.mode.clone(),
                })?;
        for (line, lands, secret) in path {
            self.send_and_wait(&line, secret)?;
            if self.mode != lands {
                return Err(SessionError::UnexpectedMode {
                    line,
                    expected: lands,
                    actual: self.mode.clone(),
                });
            }
        }
        Ok(())
    }

    /// Sends a line, waits for the prompt, checks the output for failure indicators.
    fn command(&mut self, line: &str) -> Result<(), SessionError> {
        self.send_and_wait(line, false).map(|_| ())
    }

    fn send_and_wait(&mut self, line: &str, secret: bool) -> Result<String, SessionError> {
        let started = Instant::now();
        log::debug!("{}: send {line:?}", self.settings.device);
        self.shell.send(format!("{line}\n").as_bytes())?;
        let output = self.wait(&Wait { line, secret })?;
        log::debug!(
            "{}: prompt of mode {} after {} ms",
            self.settings.device,
            self.mode,
            started.elapsed().as_millis()
        );
        self.record(line, output.clone(), started);
        if secret && find_indicator(&self.platform.failures, &output).is_some() {
            return Err(SessionError::SecretRefused);
        }
        if let Some(ind) = find_indicator(&self.platform.temporary_failures, &output) {
            return Err(SessionError::Busy {
                line: line.to_string(),
                indicator: ind,
            });
        }
        if let Some(ind) = find_indicator(&self.platform.failures, &output) {
            if find_indicator(&self.platform.idempotent, &output).is_none() {
                return Err(SessionError::Rejected {
                    line: line.to_string(),
                    indicator: ind,
                });
            }
        }
        Ok(output)
    }

    fn record(&mut self, line: &str, output: String, started: Instant) {
        self.transcript.commands.push(CommandRecord {
            input: line.to_string(),
            output: self.redact(&output),
            elapsed_ms: started.elapsed().as_millis() as u64,
        });
    }

    fn redact(&self, text: &str) -> String {
        redact(
            text,
            self.settings
                .enable_secret
                .iter()
                .chain(&self.settings.secrets),
        )
    }

    /// Reads until a prompt (after the echo of `w.line`), answering declared questions.
    /// Returns the output between echo and prompt; updates the mode and pinned host.
    fn wait(&mut self, w: &Wait) -> Result<String, SessionError> {
        let p = self.platform;
        let now = Instant::now();
        let deadline = (now + self.settings.command_timeout).min(self.deadline);
        let awaited = if w.line.is_empty() {
            "the login prompt".to_string()
        } else {
            format!("the prompt after {:?}", w.line)
        };
        let mut cleaner = Cleaner::default();
        let mut text = String::new();
        // Where output starts (after the echo) and where the next search for questions starts.
        let mut body_start: Option<usize> = if w.line.is_empty() || !p.echo {
            Some(0)
        } else {
            None
        };
        let mut scan_from = 0usize;
        let mut secret_sent = false;
        self.transcript.round_trips += 1;
        loop {
            if body_start.is_none() {
                body_start = find_echo(&text, w.line);
                if let Some(b) = body_start {
                    scan_from = b;
                }
            }
            if let Some(start) = body_start {
                let from = scan_from.max(start);
                let tail_start =
                    floor_char(&text, text.len().saturating_sub(TAIL_WINDOW).max(from));
                let tail = &text[tail_start..];
                if let Some((mode, host, at)) = self.match_prompt(tail) {
                    if self.host.is_none() {
                        if let Some(h) = &host {
                            self.pinned = p.modes.iter().map(|m| m.prompt.pinned(h)).collect();
                        }
                        self.host = host;
                    }
                    self.mode = mode;
                    let out = text[start..tail_start + at].trim_matches('\n').to_string();
                    return Ok(out);
                }
                if let Some(sp) = p.secret_prompt.as_ref().filter(|_| w.secret) {
                    if sp.matches(tail).is_some() {
                        if secret_sent {
                            // Asked again after we answered: the secret was wrong.
                            return Err(SessionError::SecretRefused);
                        }
                        let secret = self.settings.enable_secret.clone().ok_or_else(|| {
                            SessionError::NoSecret {
                                line: w.line.to_string(),
                                device: self.settings.device.clone(),
                            }
                        })?;
                        self.shell.send(format!("{secret}\n").as_bytes())?;
                        secret_sent = true;
                        scan_from = text.len();
                        self.transcript.round_trips += 1;
                        continue;
                    }
                }
                if let Some(r) = p
                    .responses
                    .iter()
                    .find(|r| r.prompt.matches(tail).is_some())
                {
                    let answer = if r.newline {
                        format!("{}\n", r.answer)
                    } else {
                        r.answer.clone()
                    };
                    self.shell.send(answer.as_bytes())?;
                    scan_from = text.len();
                    self.transcript.round_trips += 1;
                    continue;
                }
            }
            match self.shell.recv(deadline) {
                Ok(Chunk::Data(bytes)) => {
                    cleaner.feed(&bytes, &mut text);
                    if text.len() > MAX_OUTPUT {
                        // Keep the tail; positions before the cut are no longer needed
                        // once the echo has been found.
                        let cut = floor_char(&text, text.len() - MAX_OUTPUT / 2);
                        text.drain(..cut);
                        body_start = body_start.map(|b| b.saturating_sub(cut));
                        scan_from = scan_from.saturating_sub(cut);
                    }
                }
                Ok(Chunk::Eof) => {
                    let diag = self.shell.diagnostics();
                    let mut tail = tail_of(&text, 300);
                    if !diag.trim().is_empty() {
                        tail.push_str(&format!(" [stderr: {}]", tail_of(&diag, 300)));
                    }
                    return Err(SessionError::Closed {
                        awaited,
                        tail: self.redact(&tail),
                    });
                }
                Err(TransportError::Timeout { .. }) => {
                    return Err(SessionError::Timeout {
                        awaited,
                        waited: now.elapsed(),
                        tail: self.redact(&tail_of(&text, 300)),
                    })
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// The mode whose prompt ends `tail` (respecting the pinned host), with the host
    /// capture and where the prompt starts in `tail`.
    fn match_prompt(&self, tail: &str) -> Option<(String, Option<String>, usize)> {
        for (i, m) in self.platform.modes.iter().enumerate() {
            let regex = self
                .pinned
                .get(i)
                .and_then(Option::as_ref)
                .unwrap_or(&m.prompt.regex);
            if let Some(caps) = regex.captures(tail) {
                let host = caps.name("host").map(|h| h.as_str().to_string());
                if let (Some(pinned), Some(h)) = (&self.host, &host) {
                    if pinned != h {
                        continue;
                    }
                }
                let at = caps.get(0).map(|x| x.start()).unwrap_or(tail.len());
                return Some((m.name.clone(), host, at));
            }
        }
        None
    }
}

/// Where the output of `line` starts: just after the line's echo, if it has arrived.
/// Long lines may come back wrapped or scrolled, so the end of the line is what is sought.
fn find_echo(text: &str, line: &str) -> Option<usize> {
    let needle = line.trim_end();
    let suffix_start = floor_char(needle, needle.len().saturating_sub(40));
    let suffix = &needle[suffix_start..];
    let pos = text.find(suffix)?;
    let end = pos + suffix.len();
    // The echo is complete at its newline.
    text[end..].find('\n').map(|nl| end + nl + 1)
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn tail_of(text: &str, n: usize) -> String {
    text[floor_char(text, text.len().saturating_sub(n))..].to_string()
}

fn find_indicator(patterns: &[regex::Regex], output: &str) -> Option<String> {
    for line in output.lines() {
        if patterns.iter().any(|r| r.is_match(line)) {
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

struct ExecSession<'a> {
    exec: Box<dyn Exec>,
    platform: &'a Platform,
    settings: &'a Settings,
    /// Deadline of the current part of the session.
    deadline: Instant,
    transcript: Transcript,
    /// Every abort line of the last failed plan succeeded.
    aborted_cleanly: bool,
}

impl ExecSession<'_> {
    fn apply(&mut self, plan: &Plan) -> Result<(), SessionError> {
        let p = self.platform;
        let mut lines: Vec<Line> = plan.lines.clone();
        lines.extend(p.commit.iter().map(|l| Line::words(l)));
        if let Err(e) = lines.iter().try_for_each(|l| self.run_line(l).map(|_| ())) {
            self.aborted_cleanly = true;
            for l in p.abort.iter().map(|l| Line::words(l)) {
                if self.run_line(&l).is_err() {
                    self.aborted_cleanly = false;
                }
            }
            return Err(e);
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), SessionError> {
        if self.settings.save {
            for l in self.platform.save.iter().map(|l| Line::words(l)) {
                self.run_line(&l)?;
            }
        }
        Ok(())
    }

    /// Runs one line; its standard output (for reads).
    fn run_line(&mut self, line: &Line) -> Result<String, SessionError> {
        let started = Instant::now();
        let deadline = (started + self.settings.command_timeout).min(self.deadline);
        let argv = line
            .argv
            .clone()
            .unwrap_or_else(|| line.text.split_whitespace().map(str::to_string).collect());
        self.transcript.round_trips += 1;
        let out = self
            .exec
            .exec(&argv, &line.text, deadline)
            .map_err(|e| match e {
                // The line's own clock: the transport's may start after channel setup.
                TransportError::Timeout { .. } => SessionError::Timeout {
                    awaited: format!("{:?} to finish", line.text),
                    waited: started.elapsed(),
                    tail: String::new(),
                },
                other => other.into(),
            })?;
        let both = format!("{}{}", out.stdout, out.stderr);
        let secrets = self
            .settings
            .enable_secret
            .iter()
            .chain(&self.settings.secrets);
        let shown = redact(both.trim_end(), secrets);
        self.transcript.commands.push(CommandRecord {
            input: line.text.clone(),
            output: shown.clone(),
            elapsed_ms: started.elapsed().as_millis() as u64,
        });
        if let Some(ind) = find_indicator(&self.platform.temporary_failures, &shown) {
            return Err(SessionError::Busy {
                line: line.text.clone(),
                indicator: ind,
            });
        }
        let already = find_indicator(&self.platform.idempotent, &shown).is_some();
        if out.status != 0 && !already {
            let why = shown
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .trim()
                .to_string();
            return Err(SessionError::Rejected {
                line: line.text.clone(),
                indicator: format!(
                    "exit status {}{}",
                    out.status,
                    if why.is_empty() {
                        String::new()
                    } else {
                        format!(": {why}")
                    }
                ),
            });
        }
        if let Some(ind) = find_indicator(&self.platform.failures, &shown).filter(|_| !already) {
            return Err(SessionError::Rejected {
                line: line.text.clone(),
                indicator: ind,
            });
        }
        Ok(out.stdout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use std::collections::VecDeque;

    /// A scripted device: for each line received, replies with the next canned answer,
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

    impl Shell for Replay {
        fn send(&mut self, data: &[u8]) -> Result<(), TransportError> {
            let _ = &self.banner;
            self.sent.push(String::from_utf8_lossy(data).into_owned());
            if let Some(r) = self.replies.pop_front() {
                self.pending.extend(r);
            }
            Ok(())
        }
        fn recv(&mut self, _deadline: Instant) -> Result<Chunk, TransportError> {
            if self.pending.is_empty() {
                return Err(TransportError::Timeout {
                    awaited: "output".into(),
                    waited: Duration::ZERO,
                });
            }
            let n = self.chunk.min(self.pending.len());
            Ok(Chunk::Data(self.pending.drain(..n).collect()))
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
            let scripted: Vec<String> = script(p, &ios_plan(), true)
                .into_iter()
                .map(|(_, l)| l)
                .collect();
            assert_eq!(sent, scripted, "chunk {chunk}");
            // copy + the confirmation answered = 2 waits for one line
            assert_eq!(
                t.round_trips as usize,
                scripted.len() - 1 + 1 + 1,
                "chunk {chunk}"
            );
        }
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
        let last = t.commands.last().map(|c| c.input.as_str());
        assert_eq!(last, Some("end"), "left config mode; nothing saved");
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
            let scripted: Vec<String> = script(p, &plan, false)
                .into_iter()
                .map(|(_, l)| l)
                .collect();
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
            let scripted: Vec<String> =
                script(p, &plan, true).into_iter().map(|(_, l)| l).collect();
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
}
