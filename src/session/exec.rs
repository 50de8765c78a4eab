//! The exec session: each line runs on its own channel, judged by exit status and the
//! platform's failure indicators. Without an exec channel (a dry run) it records the lines.

use std::time::Instant;

use super::plan::{Line, Plan};
use super::{
    describe_failure, find_indicator, redact, CommandRecord, SessionError, Settings, Transcript,
};
use crate::catalog::Platform;
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
    /// The current plan's lines and commits the device accepted.
    pub(super) accepted: Vec<String>,
    /// The plan line (or commit) being run when the plan failed.
    pub(super) failed: Option<String>,
}

impl ExecSession<'_> {
    pub(super) fn apply(&mut self, plan: &Plan) -> Result<(), SessionError> {
        let p = self.platform;
        let mut lines: Vec<Line> = plan.lines.clone();
        lines.extend(p.commit.iter().map(|l| Line::words(l)));
        let run = lines.iter().try_for_each(|l| match self.run_line(l) {
            Ok(_) => {
                self.accepted.push(l.text.clone());
                Ok(())
            }
            Err(e) => {
                self.failed = Some(l.text.clone());
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
        let shown = match &result {
            Ok(o) => redact(
                format!("{}{}", o.stdout, o.stderr).trim_end(),
                self.settings
                    .enable_secret
                    .iter()
                    .chain(&self.settings.secrets),
            ),
            Err(_) => String::new(),
        };
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
        if let Some(ind) = find_indicator(&self.platform.temporary_failures, &shown) {
            return Err(SessionError::Busy {
                line: line.text.clone(),
                indicator: ind,
            });
        }
        let already = find_indicator(&self.platform.idempotent, &shown).is_some();
        if out.status != 0 && !already {
            return Err(judge_status(&out, &line.text, &shown));
        }
        if let Some(ind) = describe_failure(&self.platform.failures, &shown).filter(|_| !already) {
            return Err(SessionError::Rejected {
                line: line.text.clone(),
                indicator: ind,
            });
        }
        Ok(out.stdout)
    }
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
