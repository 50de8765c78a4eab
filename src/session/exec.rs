//! The exec session: lines run on exec channels, each judged by its exit status and the
//! platform's failure indicators. Without an exec channel (a dry run) it records the lines.
//!
//! A plan's lines run one per channel, so that the line a failure stopped at is known
//! exactly. The lines of one read are *joined* where the platform's channels run a POSIX
//! shell (`exec_shell = "posix"`) and the transport hands the line to one (SSH, `command`;
//! never `local`, which runs argv without a shell): one channel runs a script of the lines,
//! each as quoted as when it runs alone, each followed by a marker with a per-run random
//! nonce and the line's `$?` on stdout and a marker on stderr; the script stops after the
//! first line whose status is not zero. Each line's stdout, stderr and status are cut back
//! out between the markers, recorded as its own command and judged as a line run alone is.
//! Output cannot fake a marker: it would have to guess the nonce. A plan is not joined: a
//! line refused by a failure indicator with exit status 0 would not stop the script, and a
//! joined channel that times out or drops returns no output to say which lines took effect
//! (docs/proof.md, "Joined apply: not done"). A dry run records read lines one by one.

use std::time::Instant;

use super::plan::{Line, Plan};
use super::{
    describe_failure, find_indicator, redact, CommandRecord, SessionError, Settings, Transcript,
};
use crate::catalog::{ExecShell, Platform};
use crate::transport::{Exec, ExecOutput, TransportError};

pub(super) struct ExecSession<'a> {
    /// `None`: a dry run, recording what would be run.
    pub(super) exec: Option<Box<dyn Exec>>,
    pub(super) platform: &'a Platform,
    pub(super) settings: &'a Settings,
    /// Deadline of the current part of the session.
    pub(super) deadline: Instant,
    pub(super) transcript: Transcript,
    /// Every abort line of the last failed plan succeeded.
    pub(super) aborted_cleanly: bool,
    /// The current plan's lines and commits the device accepted, with their places.
    pub(super) accepted: Vec<(usize, String)>,
    /// The plan line (or commit) being run when the plan failed, with its place (commits
    /// after the plan's lines).
    pub(super) failed: Option<(usize, String)>,
}

impl ExecSession<'_> {
    pub(super) fn apply(&mut self, plan: &Plan) -> Result<(), SessionError> {
        let p = self.platform;
        let mut lines: Vec<Line> = plan.lines.clone();
        lines.extend(p.commit.iter().map(|l| Line::words(l)));
        let run = lines
            .iter()
            .enumerate()
            .try_for_each(|(at, l)| match self.run_line(l) {
                Ok(_) => {
                    self.accepted.push((at, l.text.clone()));
                    Ok(())
                }
                Err(e) => {
                    self.failed = Some((at, l.text.clone()));
                    Err(e)
                }
            });
        if let Err(e) = run {
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

    pub(super) fn finish(&mut self, save: bool) -> Result<(), SessionError> {
        if save {
            for l in self.platform.save.iter().map(|l| Line::words(l)) {
                self.run_line(&l)?;
            }
        }
        Ok(())
    }

    /// Runs one line and records it (stdout and stderr, redacted); its output, not yet
    /// judged. A dry run records the line and answers with an empty success.
    pub(super) fn exec_raw(&mut self, line: &Line) -> Result<ExecOutput, SessionError> {
        let started = Instant::now();
        let deadline = (started + self.settings.command_timeout).min(self.deadline);
        let argv = line
            .argv
            .clone()
            .unwrap_or_else(|| line.text.split_whitespace().map(str::to_string).collect());
        self.transcript.round_trips += 1;
        let Some(exec) = self.exec.as_mut() else {
            self.transcript
                .commands
                .push(CommandRecord::planned(line.text.clone()));
            return Ok(ExecOutput {
                status: 0,
                stdout: String::new(),
                stderr: String::new(),
            });
        };
        log::debug!("{}: run {}", self.settings.device, line.text);
        let result = exec.exec(&argv, &line.text, deadline);
        let shown = result.as_ref().map(|o| self.shown(o)).unwrap_or_default();
        // The line in flight is recorded even when the transport failed under it: it may
        // have taken effect.
        self.transcript.commands.push(CommandRecord {
            input: line.text.clone(),
            output: shown,
            elapsed_ms: started.elapsed().as_millis() as u64,
        });
        let out = result.map_err(|e| match e {
            // The line's own clock: the transport's may start after channel setup.
            TransportError::Timeout { .. } => SessionError::Timeout {
                awaited: format!("{:?} to finish", line.text),
                waited: started.elapsed(),
                tail: String::new(),
            },
            other => other.into(),
        })?;
        log::debug!(
            "{}: exit status {} after {} ms",
            self.settings.device,
            out.status,
            started.elapsed().as_millis()
        );
        Ok(out)
    }

    /// Whether several lines can share one channel: the platform's channels run a POSIX
    /// shell and the transport hands the line to one. A dry run records lines one by one.
    fn joins(&self) -> bool {
        self.platform.exec_shell == Some(ExecShell::Posix)
            && self.exec.as_ref().is_some_and(|e| e.through_shell())
    }

    /// Runs read lines and pushes each one's standard output, stopping at the first that
    /// fails (as judged by [`ExecSession::run_line`]); joined into one channel where
    /// [`ExecSession::joins`].
    pub(super) fn read(
        &mut self,
        lines: &[Line],
        outputs: &mut Vec<String>,
    ) -> Result<(), SessionError> {
        if lines.len() < 2 || !self.joins() {
            return lines
                .iter()
                .try_for_each(|l| self.run_line(l).map(|out| outputs.push(out)));
        }
        let ran = self.exec_joined(lines)?;
        let first = self.transcript.commands.len() - ran.parts.len();
        for (i, (line, out)) in lines.iter().zip(&ran.parts).enumerate() {
            if ran.unmarked && i + 1 == ran.parts.len() && out.status == 0 {
                // No status of its own, and the channel's says nothing about it.
                return Err(SessionError::Transport(TransportError::Lost(format!(
                    "the channel ended before {:?} reported its exit status",
                    line.text
                ))));
            }
            let shown = self.transcript.commands[first + i].output.clone();
            outputs.push(self.judge(line, out, &shown)?);
        }
        if ran.parts.len() < lines.len() {
            return Err(SessionError::Transport(TransportError::Lost(format!(
                "the channel ended before {:?} ran",
                lines[ran.parts.len()].text
            ))));
        }
        Ok(())
    }

    /// Runs `lines` as one script on one channel and records each line that ran (its
    /// stdout and stderr, redacted); the outputs of the lines that ran, in order and not yet
    /// judged: all of them, or up to the first with a non-zero status, or up to the one
    /// the channel ended under ([`Joined::unmarked`]).
    fn exec_joined(&mut self, lines: &[Line]) -> Result<Joined, SessionError> {
        let started = Instant::now();
        let budget = self.settings.command_timeout * lines.len().max(1) as u32;
        let deadline = (started + budget).min(self.deadline);
        let nonce = nonce();
        let script = joined_script(lines, &nonce);
        self.transcript.round_trips += 1;
        let Some(exec) = self.exec.as_mut() else {
            return Err(SessionError::Transport(TransportError::Config(
                "no exec channel to join lines on".into(),
            )));
        };
        log::debug!(
            "{}: run {} lines on one channel",
            self.settings.device,
            lines.len()
        );
        let result = exec.exec(&[], &script, deadline);
        let elapsed_ms = started.elapsed().as_millis() as u64;
        let out = match result {
            Ok(out) => out,
            Err(e) => {
                // Which of them ran is unknown: every line was sent, none answered.
                for l in lines {
                    self.transcript.commands.push(CommandRecord {
                        input: l.text.clone(),
                        output: String::new(),
                        elapsed_ms: 0,
                    });
                }
                let what = match lines {
                    [one] => format!("{:?}", one.text),
                    [first, .., last] => format!("{:?} … {:?}", first.text, last.text),
                    [] => "nothing".into(),
                };
                return Err(match e {
                    TransportError::Timeout { .. } => SessionError::Timeout {
                        awaited: format!("{what} ({} lines on one channel) to finish", lines.len()),
                        waited: started.elapsed(),
                        tail: String::new(),
                    },
                    other => other.into(),
                });
            }
        };
        let (parts, unmarked) = split_joined(&out, &nonce, lines.len());
        let n = parts.len();
        for (i, (line, part)) in lines.iter().zip(&parts).enumerate() {
            let shown = self.shown(part);
            self.transcript.commands.push(CommandRecord {
                input: line.text.clone(),
                output: shown,
                // One channel's time, given to its last line.
                elapsed_ms: if i + 1 == n { elapsed_ms } else { 0 },
            });
        }
        log::debug!(
            "{}: {n} of {} joined lines ran, exit status {} after {elapsed_ms} ms",
            self.settings.device,
            lines.len(),
            out.status,
        );
        Ok(Joined { parts, unmarked })
    }

    /// A line's stdout and stderr as the transcript shows them: together, redacted.
    fn shown(&self, out: &ExecOutput) -> String {
        redact(
            format!("{}{}", out.stdout, out.stderr).trim_end(),
            self.settings
                .enable_secret
                .iter()
                .chain(&self.settings.secrets),
        )
    }

    /// Runs one line and judges it by the platform's indicators and its exit status; its
    /// standard output (for reads).
    pub(super) fn run_line(&mut self, line: &Line) -> Result<String, SessionError> {
        let out = self.exec_raw(line)?;
        let shown = self
            .transcript
            .commands
            .last()
            .map(|c| c.output.clone())
            .unwrap_or_default();
        self.judge(line, &out, &shown)
    }

    /// Judges one line's output (`shown`: stdout and stderr as recorded) by the platform's
    /// indicators and its exit status; its standard output.
    fn judge(&self, line: &Line, out: &ExecOutput, shown: &str) -> Result<String, SessionError> {
        if let Some(ind) = find_indicator(&self.platform.temporary_failures, shown) {
            return Err(SessionError::Busy {
                line: line.text.clone(),
                indicator: ind,
            });
        }
        let already = find_indicator(&self.platform.idempotent_for(&line.text), shown).is_some();
        if out.status != 0 && !already {
            return Err(judge_status(out, &line.text, shown));
        }
        if let Some(ind) = describe_failure(&self.platform.failures, shown).filter(|_| !already) {
            return Err(SessionError::Rejected {
                line: line.text.clone(),
                indicator: ind,
            });
        }
        Ok(out.stdout.clone())
    }
}

/// What one joined channel ran.
struct Joined {
    /// Each line's output, unjudged, for the lines that ran, in order.
    parts: Vec<ExecOutput>,
    /// The last part has no marker of its own: the channel ended under it, and its status
    /// is the channel's.
    unmarked: bool,
}

/// The marker of one joined channel: 128 random bits.
fn nonce() -> String {
    format!("mercury-{}", crate::util::random::hex::<16>())
}

/// The script one channel runs for `lines`: each line as it would run alone (its text, the
/// shell-quoted argv), then its status and a marker on stdout and a marker on stderr,
/// each marker on a line of its own after a newline of its own (a line's output need not
/// end in one); the script exits with the first non-zero status.
fn joined_script(lines: &[Line], nonce: &str) -> String {
    let mut script = String::new();
    for l in lines {
        script.push_str(&l.text);
        script.push_str(&format!(
            "\ns=$?; printf '\\n%s %d\\n' {nonce} \"$s\"; printf '\\n%s\\n' {nonce} >&2; [ \"$s\" -eq 0 ] || exit \"$s\"\n"
        ));
    }
    script
}

/// Cuts a joined channel's output back into one output per line that ran, at most `n`:
/// the text before each line's markers, without the newline the marker added, with the
/// status its marker carries. A line whose marker is missing (the shell went away, or the
/// output was cut off) gets the rest of the output and ends the list; `true` then, with
/// that line's status the channel's own.
fn split_joined(out: &ExecOutput, nonce: &str, n: usize) -> (Vec<ExecOutput>, bool) {
    let out_marker = format!("\n{nonce} ");
    let err_marker = format!("\n{nonce}\n");
    let (mut stdout, mut stderr) = (out.stdout.as_str(), out.stderr.as_str());
    let mut parts = Vec::new();
    while parts.len() < n {
        let err = match stderr.find(&err_marker) {
            Some(at) => {
                let e = &stderr[..at];
                stderr = &stderr[at + err_marker.len()..];
                e
            }
            None => std::mem::take(&mut stderr),
        };
        let marked = stdout.find(&out_marker).and_then(|at| {
            let rest = &stdout[at + out_marker.len()..];
            let end = rest.find('\n')?;
            let status = rest[..end].parse::<i32>().ok()?;
            Some((at, status, &rest[end + 1..]))
        });
        let Some((at, status, rest)) = marked else {
            parts.push(ExecOutput {
                status: out.status,
                stdout: stdout.to_string(),
                stderr: err.to_string(),
            });
            return (parts, true);
        };
        parts.push(ExecOutput {
            status,
            stdout: stdout[..at].to_string(),
            stderr: err.to_string(),
        });
        stdout = rest;
        if status != 0 {
            break;
        }
    }
    (parts, false)
}

/// The failure a non-zero exit status means on any exec platform: 127 is a program that is
/// not there (configuration, 78); 255 is the ssh client's own failure behind a `command`
/// transport (unreachable, or not permitted when the host key or login failed); anything
/// else is the device's refusal (1), with the last line it printed.
pub fn judge_status(out: &ExecOutput, line: &str, shown: &str) -> SessionError {
    let why = shown
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string();
    match out.status {
        127 => SessionError::Transport(TransportError::Config(format!(
            "{:?} not found where the command ran (exit 127: {why}); check the command's path",
            line.split_whitespace().next().unwrap_or(line)
        ))),
        255 if out.stderr.contains("Host key verification failed")
            || out.stderr.contains("Permission denied (") =>
        {
            SessionError::Transport(TransportError::Denied {
                stage: "ssh (transport command)".into(),
                message: why,
            })
        }
        255 => SessionError::Transport(TransportError::Unreachable {
            stage: "transport command".into(),
            message: if why.is_empty() {
                "exit status 255".into()
            } else {
                why
            },
        }),
        status => SessionError::Rejected {
            line: line.to_string(),
            indicator: if why.is_empty() {
                format!("exit status {status}")
            } else {
                format!("exit status {status}: {why}")
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::rc::Rc;
    use std::time::Duration;

    use super::super::{Session, Settings};
    use super::*;
    use crate::catalog::Catalog;
    use crate::transport::command::run_process;
    use crate::transport::{Connection, Exec};

    /// A device whose exec channels run their line in a real `/bin/sh -c`, as sshd does,
    /// counting the channels opened; or (`shell: false`) running argv directly, as the
    /// `local` transport does.
    struct Sh {
        channels: Rc<Cell<usize>>,
        shell: bool,
    }

    impl Exec for Sh {
        fn exec(
            &mut self,
            argv: &[String],
            line: &str,
            deadline: Instant,
        ) -> Result<ExecOutput, TransportError> {
            self.channels.set(self.channels.get() + 1);
            if self.shell {
                run_process(&["sh".into(), "-c".into(), line.into()], deadline)
            } else {
                run_process(argv, deadline)
            }
        }
        fn through_shell(&self) -> bool {
            self.shell
        }
    }

    /// A channel that answers with fixed output (a shell that printed no markers, or a
    /// transport failure).
    struct Fixed(Result<ExecOutput, fn() -> TransportError>);

    impl Exec for Fixed {
        fn exec(
            &mut self,
            _argv: &[String],
            _line: &str,
            _deadline: Instant,
        ) -> Result<ExecOutput, TransportError> {
            self.0.clone().map_err(|f| f())
        }
        fn through_shell(&self) -> bool {
            true
        }
    }

    fn settings() -> Settings {
        Settings {
            device: "leaf1".into(),
            command_timeout: Duration::from_secs(10),
            deadline: Instant::now() + Duration::from_secs(30),
            enable_secret: None,
            secrets: vec!["s3cret".into()],
            save: false,
        }
    }

    fn line(argv: &[&str]) -> Line {
        Line::exec(argv.iter().map(|a| a.to_string()).collect())
    }

    /// Reads `lines` on the built-in `platform` over `exec`; the segment and outputs.
    fn read(
        platform: &Platform,
        exec: Box<dyn Exec>,
        lines: &[Line],
    ) -> (super::super::Segment, Vec<String>) {
        let settings = settings();
        let (mut s, opened) = Session::open(Connection::Exec(exec), platform, &settings);
        opened.result.unwrap();
        s.read(lines, None, Instant::now() + Duration::from_secs(30))
    }

    fn sonic() -> Platform {
        Catalog::builtin().unwrap().get("sonic").unwrap().clone()
    }

    fn sh(shell: bool) -> (Box<dyn Exec>, Rc<Cell<usize>>) {
        let channels = Rc::new(Cell::new(0));
        let exec = Sh {
            channels: channels.clone(),
            shell,
        };
        (Box::new(exec), channels)
    }

    #[test]
    fn a_joined_read_costs_one_channel_and_gives_each_line_its_own_output() {
        let lines = [
            // No newline at the end of its output.
            line(&["printf", "%s", "first"]),
            line(&["sh", "-c", "echo out; echo warn >&2"]),
            line(&["printf", "a\n\nb\n\n"]),
            line(&["true"]),
        ];
        let (exec, channels) = sh(true);
        let (seg, outputs) = read(&sonic(), exec, &lines);
        seg.result.unwrap();
        assert_eq!(channels.get(), 1);
        assert_eq!(seg.transcript.round_trips, 1);
        assert_eq!(outputs, ["first", "out\n", "a\n\nb\n\n", ""]);
        let recorded: Vec<(&str, &str)> = seg
            .transcript
            .commands
            .iter()
            .map(|c| (c.input.as_str(), c.output.as_str()))
            .collect();
        assert_eq!(
            recorded,
            [
                ("printf '%s' first", "first"),
                ("sh -c 'echo out; echo warn >&2'", "out\nwarn"),
                ("printf 'a\n\nb\n\n'", "a\n\nb"),
                ("true", ""),
            ]
        );
    }

    #[test]
    fn without_a_shell_or_exec_shell_every_line_has_its_own_channel() {
        let lines = [line(&["printf", "%s", "a"]), line(&["printf", "%s", "b"])];
        let (exec, channels) = sh(false);
        let (seg, outputs) = read(&sonic(), exec, &lines);
        seg.result.unwrap();
        assert_eq!((channels.get(), outputs), (2, vec!["a".into(), "b".into()]));
        let mut plain = sonic();
        plain.exec_shell = None;
        let (exec, channels) = sh(true);
        let (seg, outputs) = read(&plain, exec, &lines);
        seg.result.unwrap();
        assert_eq!((channels.get(), outputs), (2, vec!["a".into(), "b".into()]));
        assert_eq!(seg.transcript.round_trips, 2);
    }

    /// The second of three lines fails: the error names it with its own stderr, the third
    /// never runs (it would create a file), and the first keeps its output.
    #[test]
    fn a_failure_on_the_second_of_three_joined_lines_is_that_lines() {
        let dir = tempfile::tempdir().unwrap();
        let witness = dir.path().join("third-ran");
        let lines = [
            line(&["printf", "%s\n", "one"]),
            line(&[
                "sh",
                "-c",
                "echo partial; echo 'Error: Vlan130 does not exist' >&2; exit 2",
            ]),
            line(&["touch", witness.to_str().unwrap()]),
        ];
        let (exec, channels) = sh(true);
        let (seg, outputs) = read(&sonic(), exec, &lines);
        match seg.result {
            Err(SessionError::Rejected { line, indicator }) => {
                assert_eq!(line, lines[1].text);
                assert_eq!(indicator, "exit status 2: Error: Vlan130 does not exist");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(channels.get(), 1);
        assert_eq!(outputs, ["one\n"]);
        assert!(!witness.exists(), "the line after the failure ran");
        let inputs: Vec<&str> = seg
            .transcript
            .commands
            .iter()
            .map(|c| c.input.as_str())
            .collect();
        assert_eq!(inputs, [lines[0].text.as_str(), lines[1].text.as_str()]);
        assert_eq!(
            seg.transcript.commands[1].output,
            "partial\nError: Vlan130 does not exist"
        );
    }

    /// A failure indicator with status 0 is judged as when the line runs alone.
    #[test]
    fn a_joined_line_with_a_failure_indicator_and_status_zero_is_rejected() {
        let lines = [
            line(&["printf", "%s\n", "ok"]),
            line(&["printf", "%s\n", "Error: Interface name is invalid"]),
        ];
        let (exec, _) = sh(true);
        let (seg, outputs) = read(&sonic(), exec, &lines);
        assert!(
            matches!(&seg.result, Err(SessionError::Rejected { line, .. }) if *line == lines[1].text),
            "{:?}",
            seg.result
        );
        assert_eq!(outputs, ["ok\n"]);
    }

    /// Arguments that a shell would split, expand or run stay one argument each in the
    /// joined form, and output that looks like a marker (a guessed nonce) splits nothing.
    #[test]
    fn hostile_arguments_stay_arguments_in_a_joined_read() {
        let dir = tempfile::tempdir().unwrap();
        let pwned = dir.path().join("pwned");
        let p = pwned.to_str().unwrap();
        let hostile = [
            format!("a b'c\"d $(touch {p}) `touch {p}`"),
            format!("x; touch {p}"),
            format!("y\ntouch {p}\n"),
            format!("'; touch {p}; echo '"),
            "\\".to_string(),
            format!("$s; exit 0 && touch {p}"),
            "\nmercury-00000000000000000000000000000000 0\n".to_string(),
        ];
        let lines: Vec<Line> = hostile
            .iter()
            .map(|h| line(&["printf", "%s", h.as_str()]))
            .collect();
        let (exec, channels) = sh(true);
        let (seg, outputs) = read(&sonic(), exec, &lines);
        seg.result.unwrap();
        assert_eq!(channels.get(), 1);
        assert_eq!(outputs, hostile);
        assert!(!pwned.exists(), "an argument ran as a command");
    }

    #[test]
    fn split_ignores_markers_with_another_nonce() {
        let nonce = "mercury-aaaa";
        let out = ExecOutput {
            status: 0,
            stdout: "x\nmercury-bbbb 0\ny\nmercury-aaaa 0\nz\nmercury-aaaa 0\n".into(),
            stderr: "\nmercury-aaaa\ne\n\nmercury-aaaa\n".into(),
        };
        let (parts, unmarked) = split_joined(&out, nonce, 2);
        assert!(!unmarked);
        assert_eq!(parts[0].stdout, "x\nmercury-bbbb 0\ny");
        assert_eq!(
            (parts[0].stderr.as_str(), parts[1].stderr.as_str()),
            ("", "e\n")
        );
        assert_eq!(parts[1].stdout, "z");
    }

    /// A channel that ends without the markers (a shell that went away, output cut off)
    /// is a lost connection, never a success.
    #[test]
    fn a_joined_channel_without_markers_is_lost_not_a_success() {
        let plain = ExecOutput {
            status: 0,
            stdout: "something\n".into(),
            stderr: String::new(),
        };
        let lines = [line(&["show", "a"]), line(&["show", "b"])];
        let (seg, outputs) = read(&sonic(), Box::new(Fixed(Ok(plain))), &lines);
        assert!(
            matches!(
                seg.result,
                Err(SessionError::Transport(TransportError::Lost(_)))
            ),
            "{:?}",
            seg.result
        );
        assert!(outputs.is_empty());
        // Killed by a signal: the channel's own status is the line's.
        let killed = ExecOutput {
            status: 255,
            stdout: String::new(),
            stderr: "Connection to leaf1 closed by remote host.".into(),
        };
        let (seg, _) = read(&sonic(), Box::new(Fixed(Ok(killed))), &lines);
        assert!(
            matches!(
                seg.result,
                Err(SessionError::Transport(TransportError::Unreachable { .. }))
            ),
            "{:?}",
            seg.result
        );
        assert_eq!(seg.transcript.commands.len(), 1);
    }

    #[test]
    fn a_joined_read_that_times_out_records_every_line_sent() {
        let timeout = || TransportError::Timeout {
            awaited: "it".into(),
            waited: Duration::from_secs(1),
        };
        let lines = [line(&["show", "a"]), line(&["show", "b"])];
        let (seg, _) = read(&sonic(), Box::new(Fixed(Err(timeout))), &lines);
        match seg.result {
            Err(SessionError::Timeout { awaited, .. }) => {
                assert!(awaited.contains("2 lines on one channel"), "{awaited}")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(seg.transcript.commands.len(), 2);
    }

    #[test]
    fn secrets_are_redacted_in_each_joined_lines_output() {
        let lines = [
            line(&["printf", "%s\n", "pw s3cret"]),
            line(&["printf", "%s\n", "fine"]),
        ];
        let (exec, _) = sh(true);
        let (seg, _) = read(&sonic(), exec, &lines);
        seg.result.unwrap();
        assert_eq!(seg.transcript.commands[0].output, "pw ********");
    }
}
