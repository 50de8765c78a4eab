//! The CLI session: read until a prompt of the platform or a deadline — never
//! sleep-and-hope — and match only the text received since the current line was sent (after
//! its echo), in a bounded tail window. The mode is worked out once from the login prompt
//! (which also pins the host name) and then tracked from each prompt.
//!
//! On a `type_ahead` platform the reads and the navigation to them (and the setup lines)
//! go in one batch, one round trip: such a CLI echoes each typed-ahead line when its parser
//! reads it, after the previous line's output and prompt. The stream is split into one
//! output per line: a line's output ends at the prompt immediately followed by the next
//! line's echo (the prompt pattern, anchored at the end, is matched on the text up to that
//! echo), the last at the final prompt. Each navigation line's landing mode and each
//! output's failure indicators are checked as for a line sent alone, and each line is
//! recorded with its own output. A device that echoes the lines as they arrive (a tty's
//! ECHO: every echo before the first output) never shows a prompt followed by an echo,
//! so the batch times out rather than give a line another line's output.
//!
//! Configuration lines wait for their prompts, one by one, except the body of a block
//! (issue 18): a plan line the driver marked as opening one (`Line::opens`, from the
//! catalog's `port_enter` ... `port_exit`: `interface X` ... `exit`) is sent alone, and
//! only when its prompt shows a configuration sub-mode — neither the mode it was typed in
//! nor the global configuration mode — are the block's body and closing line typed ahead
//! in one write, split as above. A refused `interface` line therefore never leaves body
//! lines running in the global configuration context. Each body line must keep the
//! sub-mode and is judged by the failure indicators as if sent alone; a refused body line
//! does not stop the lines after it in the write (the device runs them), so they are
//! counted as accepted when the device accepted them, and the first refusal is the plan's
//! failure: no further line or block is sent, the abort follows, and the caller's restore
//! and read-back work from what the device did. A timeout, a lost connection or a body
//! line landing in another mode leaves the line awaited in flight and the lines typed
//! ahead behind it unconfirmed (`Progress::unconfirmed`): they may have taken effect.
//! Lines outside blocks (VLAN creation, LAG removal), the commit and the save are never
//! typed ahead, and neither is a navigation that may ask for the enable secret.
//!
//! Without a shell (a dry run) the same code runs and records every line it would send,
//! taking each navigation line to land where the catalog says: there is one copy of the
//! mode navigation, and `--dry-run` shows what a session sends when the device lands in the
//! expected login mode.

use std::time::Instant;

use super::clean::Cleaner;
use super::plan::{Line, Plan};
use super::{
    describe_failure, find_indicator, redact, CommandRecord, SessionError, Settings, Transcript,
};
use crate::catalog::{Pattern, Platform};
use crate::transport::{Chunk, Ended, Shell, TransportError};

/// How much of the cleaned output is searched for a prompt or a question.
const TAIL_WINDOW: usize = 1024;
/// Largest output kept per command (the rest is dropped from the start).
const MAX_OUTPUT: usize = 256 * 1024;

pub(super) struct CliSession<'a> {
    /// `None`: a dry run, recording what would be sent.
    pub(super) shell: Option<Box<dyn Shell>>,
    pub(super) platform: &'a Platform,
    pub(super) settings: &'a Settings,
    /// Host name pinned from the login prompt.
    host: Option<String>,
    /// Each mode's prompt with the pinned host written in literally (`None`: the mode's
    /// prompt has no `host` group).
    pinned: Vec<Option<Pattern>>,
    pub(super) mode: String,
    /// Deadline of the current part of the session.
    pub(super) deadline: Instant,
    pub(super) transcript: Transcript,
    /// The current plan's lines and commits the device accepted, with their places in the
    /// plan (commits after the plan's lines).
    pub(super) accepted: Vec<(usize, String)>,
    /// The plan line (or commit) being sent when the plan failed, with its place in the
    /// plan (commits after the plan's lines).
    pub(super) failed: Option<(usize, String)>,
    /// Lines typed ahead behind the failed one whose outcome is unknown.
    pub(super) unconfirmed: Vec<String>,
}

/// What to wait for after a line.
struct Wait<'w> {
    /// The line sent (for echo detection and messages); empty at login.
    line: &'w str,
    /// Answer the enable-secret question.
    secret: bool,
}

/// A line of a batch sent without waiting for its prompt.
struct Ahead {
    text: String,
    /// Where a navigation line leads, or the sub-mode a block's body line stays in
    /// (checked against the prompt after it); `None`: judged by its output alone.
    lands: Option<String>,
}

impl<'a> CliSession<'a> {
    pub(super) fn new(
        shell: Option<Box<dyn Shell>>,
        platform: &'a Platform,
        settings: &'a Settings,
    ) -> Self {
        CliSession {
            shell,
            platform,
            settings,
            host: None,
            pinned: Vec::new(),
            mode: String::new(),
            deadline: settings.deadline,
            transcript: Transcript::default(),
            accepted: Vec::new(),
            failed: None,
            unconfirmed: Vec::new(),
        }
    }

    /// Login prompt and setup lines.
    pub(super) fn open(&mut self) -> Result<(), SessionError> {
        if self.shell.is_none() {
            self.mode = self.platform.login_mode.clone();
        } else {
            self.wait(&Wait {
                line: "",
                secret: false,
            })?;
        }
        if self.platform.on_open.is_empty() {
            return Ok(());
        }
        let mode = self
            .platform
            .on_open_mode
            .clone()
            .unwrap_or_else(|| self.mode.clone());
        self.visit(&mode, &self.platform.on_open).map(|_| ())
    }

    /// Configuration mode, the plan's lines and the commit; on failure the abort.
    pub(super) fn apply(&mut self, plan: &Plan) -> Result<(), SessionError> {
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
    pub(super) fn read(
        &mut self,
        lines: &[Line],
        mode: Option<&str>,
        outputs: &mut Vec<String>,
    ) -> Result<(), SessionError> {
        let target = mode.unwrap_or(&self.platform.save_mode).to_string();
        let texts: Vec<String> = lines.iter().map(|l| l.text.clone()).collect();
        outputs.extend(self.visit(&target, &texts)?);
        Ok(())
    }

    /// Goes to `target` and sends `lines` there (show or setup lines, judged by their
    /// outputs); their outputs. On a live `type_ahead` session the navigation and the lines
    /// are one batch; a way that asks for the enable secret is walked line by line first
    /// (the question must be answered), and the lines are typed ahead after it.
    fn visit(&mut self, target: &str, lines: &[String]) -> Result<Vec<String>, SessionError> {
        if !self.platform.type_ahead || self.shell.is_none() {
            self.goto(target)?;
            let mut outs = Vec::new();
            for l in lines {
                outs.push(self.send_and_wait(l, false, None)?);
            }
            return Ok(outs);
        }
        let mut path = if self.mode == target {
            Vec::new()
        } else {
            self.route(target)?
        };
        if path.iter().any(|(_, _, secret)| *secret) {
            self.goto(target)?;
            path.clear();
        }
        let nav = path.len();
        let batch: Vec<Ahead> = path
            .into_iter()
            .map(|(text, lands, _)| Ahead {
                text,
                lands: Some(lands),
            })
            .chain(lines.iter().map(|l| Ahead {
                text: l.clone(),
                lands: None,
            }))
            .collect();
        let mut outs = self.pipelined(&batch, &mut Vec::new())?;
        Ok(outs.split_off(nav))
    }

    /// Out of configuration mode, and save (when `save`).
    pub(super) fn finish(&mut self, save: bool) -> Result<(), SessionError> {
        let p = self.platform;
        self.leave_config()?;
        if save {
            for line in &p.save {
                self.command(line)?;
            }
        }
        Ok(())
    }

    /// Ends the session the way the device expects: out of configuration mode, the close
    /// lines (no prompt follows the last one), then wait until `deadline` for the device to
    /// end the session itself. A session that cannot get there is hung up.
    pub(super) fn leave(&mut self, deadline: Instant) -> Ended {
        if self.leave_config().is_err() {
            if let Some(shell) = self.shell.as_mut() {
                shell.close(deadline);
            }
            return Ended::HungUp;
        }
        let mut sent = true;
        for line in &self.platform.close {
            if let Some(shell) = self.shell.as_mut() {
                sent &= shell.send(format!("{line}\n").as_bytes()).is_ok();
            }
            self.record(line, String::new(), Instant::now());
        }
        match self.shell.as_mut() {
            None => Ended::ByDevice,
            Some(shell) if sent && !self.platform.close.is_empty() => shell.finish(deadline),
            Some(shell) => {
                shell.close(deadline);
                Ended::HungUp
            }
        }
    }

    /// The plan's lines, then the commit. On a live `type_ahead` session a block's lines
    /// after its opening line go in one write ([`CliSession::block`]); elsewhere each line
    /// waits for its prompt.
    fn configure(&mut self, plan: &Plan) -> Result<(), SessionError> {
        let typed = self.platform.type_ahead && self.shell.is_some();
        let mut at = 0;
        while let Some(line) = plan.lines.get(at) {
            let typed_in = self.mode.clone();
            if let Err(e) = self.command(&line.text) {
                self.failed = Some((at, line.text.clone()));
                return Err(e);
            }
            self.accepted.push((at, line.text.clone()));
            if !self.in_config() {
                return Err(SessionError::UnexpectedMode {
                    line: line.text.clone(),
                    expected: "a configuration mode".into(),
                    actual: self.mode.clone(),
                });
            }
            let body = plan
                .lines
                .get(at + 1..=at + line.opens)
                .filter(|b| typed && !b.is_empty());
            at += 1;
            if let Some(body) = body {
                self.block(&line.text, &typed_in, body, at)?;
                at += body.len();
            }
        }
        let lands = self.platform.commit_leaves_to.clone();
        for (k, line) in self.platform.commit.iter().enumerate() {
            if let Err(e) = self.send_and_wait(line, false, lands.as_deref()) {
                self.failed = Some((plan.lines.len() + k, line.clone()));
                return Err(e);
            }
            self.accepted.push((plan.lines.len() + k, line.clone()));
        }
        Ok(())
    }

    /// A block's body and closing line (plan lines from `first`), after its opening line
    /// `opener` (typed in `typed_in`) was accepted: sent in one write once the opening
    /// line's prompt shows a configuration sub-mode — never the mode it was typed in or the
    /// global configuration mode, where the body must not run — and split line by line
    /// (see [`CliSession::pipelined`]). Each body line must leave the CLI in that sub-mode,
    /// the closing line in a configuration mode. Every line the device accepted is
    /// accepted, also those after a refused one (they ran); the refused line is the first
    /// refused; after a timeout, a lost connection or a line landing elsewhere, the line
    /// awaited is the one in flight and the lines after it are unconfirmed.
    fn block(
        &mut self,
        opener: &str,
        typed_in: &str,
        body: &[Line],
        first: usize,
    ) -> Result<(), SessionError> {
        let sub = self.mode.clone();
        if sub == typed_in || sub == self.platform.config_mode {
            return Err(SessionError::UnexpectedMode {
                line: opener.to_string(),
                expected: "a configuration sub-mode for the block".into(),
                actual: sub,
            });
        }
        let last = body.len() - 1;
        let batch: Vec<Ahead> = body
            .iter()
            .enumerate()
            .map(|(k, l)| Ahead {
                text: l.text.clone(),
                lands: (k < last).then(|| sub.clone()),
            })
            .collect();
        let mut judged = Vec::new();
        let sent = self.pipelined(&batch, &mut judged);
        for (k, (l, ok)) in body.iter().zip(&judged).enumerate() {
            if *ok {
                self.accepted.push((first + k, l.text.clone()));
            }
        }
        if let Err(e) = sent {
            let at = match e {
                SessionError::Rejected { .. } | SessionError::Busy { .. } => {
                    judged.iter().position(|ok| !ok).unwrap_or(judged.len())
                }
                _ => judged.len(),
            };
            if let Some(l) = body.get(at) {
                self.failed = Some((first + at, l.text.clone()));
            }
            self.unconfirmed = body
                .iter()
                .skip(judged.len().max(at + 1))
                .map(|l| l.text.clone())
                .collect();
            return Err(e);
        }
        if !self.in_config() {
            return Err(SessionError::UnexpectedMode {
                line: body[last].text.clone(),
                expected: "a configuration mode".into(),
                actual: self.mode.clone(),
            });
        }
        Ok(())
    }

    /// After a failure: discard what the platform can discard, get out of configuration
    /// mode so the device is left clean. Errors here are secondary and not reported.
    fn abort(&mut self) {
        if self.in_config() {
            let lands = self.platform.commit_leaves_to.clone();
            for line in &self.platform.abort {
                if self.send_and_wait(line, false, lands.as_deref()).is_err() {
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

    /// The catalog's transitions from the current mode to `target`: each line, the mode it
    /// lands in, and whether it may ask for the enable secret.
    fn route(&self, target: &str) -> Result<Vec<(String, String, bool)>, SessionError> {
        self.platform
            .path(&self.mode, target)
            .ok_or_else(|| SessionError::UnexpectedMode {
                line: String::new(),
                expected: format!("a way from {} to {target}", self.mode),
                actual: self.mode.clone(),
            })
    }

    /// Walks the catalog's transitions from the current mode to `target`.
    fn goto(&mut self, target: &str) -> Result<(), SessionError> {
        if self.mode == target {
            return Ok(());
        }
        for (line, lands, secret) in self.route(target)? {
            self.send_and_wait(&line, secret, Some(&lands))?;
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
        self.send_and_wait(line, false, None).map(|_| ())
    }

    /// `lands`: the mode the catalog says the line leads to, which a dry run takes as
    /// reached (a live session learns the mode from the prompt).
    fn send_and_wait(
        &mut self,
        line: &str,
        secret: bool,
        lands: Option<&str>,
    ) -> Result<String, SessionError> {
        let started = Instant::now();
        let Some(shell) = self.shell.as_mut() else {
            self.record(line, String::new(), started);
            if let Some(mode) = lands {
                self.mode = mode.to_string();
            }
            return Ok(String::new());
        };
        log::debug!("{}: send {line:?}", self.settings.device);
        // The line is recorded even when no answer comes: it may have taken effect.
        if let Err(e) = shell.send(format!("{line}\n").as_bytes()) {
            self.record(line, String::new(), started);
            return Err(e.into());
        }
        let output = match self.wait(&Wait { line, secret }) {
            Ok(o) => o,
            Err(e) => {
                self.record(line, String::new(), started);
                return Err(e);
            }
        };
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
        self.judge(line, &output)?;
        Ok(output)
    }

    /// Sends every line of `batch` at once (one round trip) and splits what comes back
    /// into one output per line (see the module docs); each line is recorded with its own
    /// output and checked as if sent alone. A refused line does not stop the split (the
    /// rest of the batch was sent and its output must be consumed to keep the session in
    /// step); the first refusal is returned after the final prompt. A line that lands
    /// elsewhere than its `lands`, a timeout or a lost connection end it at once.
    /// `judged` gets, for each line answered in order, whether it passed its checks (a line
    /// that landed elsewhere is not judged).
    fn pipelined(
        &mut self,
        batch: &[Ahead],
        judged: &mut Vec<bool>,
    ) -> Result<Vec<String>, SessionError> {
        let started = Instant::now();
        let Some(first) = batch.first() else {
            return Ok(Vec::new());
        };
        let payload: String = batch.iter().map(|a| format!("{}\n", a.text)).collect();
        log::debug!(
            "{}: send {} lines in one write",
            self.settings.device,
            batch.len()
        );
        for a in batch {
            log::debug!("{}: send {:?} (typed ahead)", self.settings.device, a.text);
        }
        let sent = self.live()?.send(payload.as_bytes());
        if let Err(e) = sent {
            for a in batch {
                self.record(&a.text, String::new(), started);
            }
            return Err(e.into());
        }
        self.transcript.round_trips += 1;
        let deadline = (started + self.settings.command_timeout).min(self.deadline);
        let mut cleaner = Cleaner::default();
        let mut text = String::new();
        let mut outputs = Vec::new();
        // The line whose output is being read, and where that output starts (after its echo).
        let mut i = 0usize;
        let mut start = None;
        let mut refused = None;
        loop {
            loop {
                if start.is_none() {
                    match find_echo(&text, &first.text) {
                        Some(s) => start = Some(s),
                        None => break,
                    }
                }
                let Some(s) = start else { break };
                let split = match batch.get(i + 1) {
                    Some(next) => self.prompt_before_echo(&text, s, &next.text),
                    None => {
                        let tail_start =
                            floor_char(&text, text.len().saturating_sub(TAIL_WINDOW).max(s));
                        self.match_prompt(&text[tail_start..])
                            .map(|(mode, host, at)| (mode, host, tail_start + at, text.len()))
                    }
                };
                let Some((mode, host, prompt_at, next_start)) = split else {
                    break;
                };
                self.pin(host);
                self.mode = mode;
                let out = text[s..prompt_at].trim_matches('\n').to_string();
                let a = &batch[i];
                self.record(&a.text, out.clone(), started);
                if let Some(lands) = &a.lands {
                    if &self.mode != lands {
                        for rest in &batch[i + 1..] {
                            self.record(&rest.text, String::new(), started);
                        }
                        return Err(SessionError::UnexpectedMode {
                            line: a.text.clone(),
                            expected: lands.clone(),
                            actual: self.mode.clone(),
                        });
                    }
                }
                let verdict = self.judge(&a.text, &out);
                judged.push(verdict.is_ok());
                if refused.is_none() {
                    refused = verdict.err();
                }
                outputs.push(out);
                i += 1;
                if i == batch.len() {
                    return match refused {
                        Some(e) => Err(e),
                        None => Ok(outputs),
                    };
                }
                start = Some(next_start);
            }
            let awaited = format!("the prompt after {:?} (typed ahead)", batch[i].text);
            let got = self.live()?.recv(deadline);
            let failed = match got {
                Ok(Chunk::Data(bytes)) => {
                    cleaner.feed(&bytes, &mut text);
                    if text.len() > MAX_OUTPUT {
                        let cut = floor_char(&text, text.len() - MAX_OUTPUT / 2);
                        text.drain(..cut);
                        start = start.map(|b| b.saturating_sub(cut));
                    }
                    continue;
                }
                Ok(Chunk::Eof) => {
                    let diag = self.live()?.diagnostics();
                    let mut tail = tail_of(&text, 300);
                    if !diag.trim().is_empty() {
                        tail.push_str(&format!(" [stderr: {}]", tail_of(&diag, 300)));
                    }
                    SessionError::Closed {
                        awaited,
                        tail: self.redact(&tail),
                    }
                }
                Err(TransportError::Timeout { .. }) => SessionError::Timeout {
                    awaited,
                    waited: started.elapsed(),
                    tail: self.redact(&tail_of(&text, 300)),
                },
                Err(e) => e.into(),
            };
            // Sent, unanswered: recorded, since a line may have taken effect.
            for rest in &batch[i..] {
                self.record(&rest.text, String::new(), started);
            }
            return Err(failed);
        }
    }

    /// Where the output that begins at `from` ends: a prompt that `next`'s echo follows
    /// at once. Returns the prompt's mode and host, where it starts and where the output
    /// after that echo starts.
    fn prompt_before_echo(
        &self,
        text: &str,
        from: usize,
        next: &str,
    ) -> Option<(String, Option<String>, usize, usize)> {
        let needle = next.trim_end();
        if needle.is_empty() {
            return None;
        }
        let mut search = from;
        while let Some(rel) = text.get(search..).and_then(|t| t.find(needle)) {
            let at = search + rel;
            search = at + needle.len();
            // The echo is complete at its newline, with nothing but blanks after the line.
            let rest = &text[search..];
            let nl = rest.find('\n')?;
            if !rest[..nl].trim().is_empty() {
                continue;
            }
            let tail_start = floor_char(text, at.saturating_sub(TAIL_WINDOW).max(from));
            if let Some((mode, host, p)) = self.match_prompt(&text[tail_start..at]) {
                return Some((mode, host, tail_start + p, search + nl + 1));
            }
        }
        None
    }

    /// Pins the host name seen in the first prompt that has one.
    fn pin(&mut self, host: Option<String>) {
        if self.host.is_none() {
            if let Some(h) = &host {
                self.pinned = self
                    .platform
                    .modes
                    .iter()
                    .map(|m| m.prompt.pinned(h))
                    .collect();
            }
            self.host = host;
        }
    }

    /// A line's output checked for the platform's temporary and failure indicators.
    fn judge(&self, line: &str, output: &str) -> Result<(), SessionError> {
        if let Some(ind) = find_indicator(&self.platform.temporary_failures, output) {
            return Err(SessionError::Busy {
                line: line.to_string(),
                indicator: ind,
            });
        }
        if let Some(ind) = describe_failure(&self.platform.failures, output) {
            if find_indicator(&self.platform.idempotent_for(line), output).is_none() {
                return Err(SessionError::Rejected {
                    line: line.to_string(),
                    indicator: ind,
                });
            }
        }
        Ok(())
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

    /// The shell of a live session (a dry run never waits).
    fn live(&mut self) -> Result<&mut Box<dyn Shell>, SessionError> {
        self.shell.as_mut().ok_or_else(|| {
            SessionError::Transport(TransportError::Config(
                "a dry run has no connection to wait on".into(),
            ))
        })
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
                    self.pin(host);
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
                        self.live()?.send(format!("{secret}\n").as_bytes())?;
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
                    self.live()?.send(answer.as_bytes())?;
                    scan_from = text.len();
                    self.transcript.round_trips += 1;
                    continue;
                }
            }
            match self.live()?.recv(deadline) {
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
                    let diag = self.live()?.diagnostics();
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
