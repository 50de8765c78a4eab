//! The `command` transport: a local program stands in for the connection.
//!
//! For CLI platforms the program's stdin/stdout is the session (a console-server tool,
//! `ssh -tt -J bastion switch`, or `mercury-sim` in the lab). For exec platforms each command
//! runs as `argv + [command line]`, the way `ssh host 'command'` passes it to a remote shell.
//! No shell is involved locally: argv is executed directly.

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::{remaining, Chunk, Ended, Exec, ExecOutput, Shell, TransportError};

/// How long a program asked to stop (SIGTERM) at the close deadline gets before it is
/// killed.
const TERM_GRACE: Duration = Duration::from_secs(3);

/// Largest stderr kept from a child for diagnostics.
const MAX_DIAGNOSTICS: usize = 16 * 1024;

/// Variables of the caller's SSH session that must not reach a child: under `serve-ssh`
/// they describe the *caller's* connection (a child reading `SSH_ORIGINAL_COMMAND` would
/// run the caller's string), and the caller's agent must never be usable by Mercury's
/// onward connections.
const CALLER_ENV: &[&str] = &[
    "SSH_ORIGINAL_COMMAND",
    "SSH_CONNECTION",
    "SSH_CLIENT",
    "SSH_TTY",
    "SSH_AUTH_SOCK",
];

/// A `Command` for `program` with the caller's SSH variables removed.
fn clean_command(program: &str) -> Command {
    let mut c = Command::new(program);
    for v in CALLER_ENV {
        c.env_remove(v);
    }
    c
}

/// A child process spoken to over its stdin/stdout.
pub struct CommandShell {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Option<Vec<u8>>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    program: String,
}

fn spawn_error(program: &str, e: std::io::Error) -> TransportError {
    if e.kind() == std::io::ErrorKind::NotFound {
        TransportError::Config(format!(
            "transport command: program {program:?} not found (argv[0])"
        ))
    } else {
        TransportError::Unreachable {
            stage: format!("spawn {program:?}"),
            message: e.to_string(),
        }
    }
}

impl CommandShell {
    /// Waits until the child has exited (its stdout closes when it does) or `deadline`;
    /// whether it exited. The wait blocks on the child's stdout (no polling loop).
    fn exited_by(&mut self, deadline: Instant) -> bool {
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => return true,
                Ok(None) => match self.rx.recv_timeout(remaining(deadline)) {
                    // Output still coming: keep draining, but never past the deadline.
                    Ok(Some(_)) if !remaining(deadline).is_zero() => continue,
                    Ok(Some(_)) => return false,
                    Ok(None) | Err(RecvTimeoutError::Disconnected) => {
                        let _ = self.child.wait();
                        return true;
                    }
                    Err(RecvTimeoutError::Timeout) => return false,
                },
            }
        }
    }

    /// Starts `argv` with piped stdio.
    pub fn spawn(argv: &[String]) -> Result<CommandShell, TransportError> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| TransportError::Config("transport command: empty argv".into()))?;
        let mut child = clean_command(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| spawn_error(program, e))?;
        let stdout = child.stdout.take();
        let stderr_pipe = child.stderr.take();
        let (tx, rx) = mpsc::channel();
        if let Some(mut out) = stdout {
            thread::spawn(move || {
                let mut buf = [0u8; 4096];
                loop {
                    match out.read(&mut buf) {
                        Ok(0) | Err(_) => {
                            let _ = tx.send(None);
                            break;
                        }
                        Ok(n) => {
                            if tx.send(Some(buf[..n].to_vec())).is_err() {
                                break;
                            }
                        }
                    }
                }
            });
        }
        let stderr = Arc::new(Mutex::new(Vec::new()));
        if let Some(err) = stderr_pipe {
            collect_into(err, Arc::clone(&stderr));
        }
        Ok(CommandShell {
            stdin: child.stdin.take(),
            child,
            rx,
            stderr,
            program: program.clone(),
        })
    }
}

impl CommandShell {
    /// Closes stdin and gives the program until `deadline` to exit on EOF; then asks it to
    /// stop (SIGTERM lets it finish what it is writing — a device's state, its session
    /// count) and, after [`TERM_GRACE`], kills it: a hung child must never keep the lock
    /// held. A SIGKILL in the middle of a write could leave the far end's files half
    /// written.
    fn end(&mut self, deadline: Instant) -> Ended {
        drop(self.stdin.take());
        if self.exited_by(deadline) {
            return Ended::ByDevice;
        }
        let pid = i32::try_from(self.child.id())
            .ok()
            .and_then(rustix::process::Pid::from_raw);
        if let Some(pid) = pid {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
            if self.exited_by(Instant::now() + TERM_GRACE) {
                return Ended::HungUp;
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        Ended::HungUp
    }
}

fn collect_into(mut pipe: impl Read + Send + 'static, sink: Arc<Mutex<Vec<u8>>>) {
    thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            if let Ok(mut s) = sink.lock() {
                if s.len() < MAX_DIAGNOSTICS {
                    s.extend_from_slice(&buf[..n]);
                }
            }
        }
    });
}

impl Shell for CommandShell {
    fn send(&mut self, data: &[u8]) -> Result<(), TransportError> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| TransportError::Lost("stdin already closed".into()))?;
        stdin
            .write_all(data)
            .and_then(|_| stdin.flush())
            .map_err(|e| TransportError::Lost(format!("writing to {}: {e}", self.program)))
    }

    fn recv(&mut self, deadline: Instant) -> Result<Chunk, TransportError> {
        match self.rx.recv_timeout(remaining(deadline)) {
            Ok(Some(data)) => Ok(Chunk::Data(data)),
            Ok(None) | Err(RecvTimeoutError::Disconnected) => Ok(Chunk::Eof),
            Err(RecvTimeoutError::Timeout) => Err(TransportError::Timeout {
                awaited: "output".into(),
                waited: Duration::ZERO,
            }),
        }
    }

    fn close(&mut self, deadline: Instant) {
        self.end(deadline);
    }

    fn finish(&mut self, deadline: Instant) -> Ended {
        // The close lines are written; EOF on stdin follows them, for a program that ends
        // on EOF rather than on its CLI's exit.
        self.end(deadline)
    }

    fn diagnostics(&self) -> String {
        self.stderr
            .lock()
            .map(|s| String::from_utf8_lossy(&s).into_owned())
            .unwrap_or_default()
    }
}

impl Drop for CommandShell {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Runs each command as `argv + [line]`.
pub struct CommandExec {
    base: Vec<String>,
}

impl CommandExec {
    /// A runner for the configured argv.
    pub fn new(base: Vec<String>) -> CommandExec {
        CommandExec { base }
    }
}

impl Exec for CommandExec {
    fn exec(
        &mut self,
        _argv: &[String],
        line: &str,
        deadline: Instant,
    ) -> Result<ExecOutput, TransportError> {
        let mut argv = self.base.clone();
        argv.push(line.to_string());
        run_process(&argv, deadline)
    }

    fn through_shell(&self) -> bool {
        // The program is handed the line as `ssh host 'line'` hands it to a remote shell.
        true
    }
}

/// Runs a program to completion (or kills it at the deadline), capturing its output.
pub fn run_process(argv: &[String], deadline: Instant) -> Result<ExecOutput, TransportError> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| TransportError::Config("empty command".into()))?;
    let started = Instant::now();
    let mut child = clean_command(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| spawn_error(program, e))?;
    let (tx, rx) = mpsc::channel::<(bool, Vec<u8>)>();
    for (is_out, pipe) in [
        (
            true,
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        ),
        (
            false,
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        ),
    ] {
        if let Some(mut p) = pipe {
            let tx = tx.clone();
            thread::spawn(move || {
                let mut buf = Vec::new();
                let _ = p.read_to_end(&mut buf);
                let _ = tx.send((is_out, buf));
            });
        }
    }
    drop(tx);
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    for _ in 0..2 {
        match rx.recv_timeout(remaining(deadline)) {
            Ok((true, b)) => stdout = b,
            Ok((false, b)) => stderr = b,
            Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(TransportError::Timeout {
                    awaited: format!("{program} to finish"),
                    waited: started.elapsed(),
                });
            }
        }
    }
    let status = child
        .wait()
        .map_err(|e| TransportError::Lost(format!("waiting for {program}: {e}")))?;
    Ok(ExecOutput {
        status: status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn exec_captures_status_and_output() {
        let deadline = Instant::now() + Duration::from_secs(10);
        let out = run_process(
            &argv(&["sh", "-c", "echo out; echo err >&2; exit 3"]),
            deadline,
        )
        .unwrap();
        assert_eq!(
            (out.status, out.stdout.as_str(), out.stderr.as_str()),
            (3, "out\n", "err\n")
        );
    }

    #[test]
    fn exec_deadline_kills() {
        let deadline = Instant::now() + Duration::from_millis(200);
        let e = run_process(&argv(&["sleep", "5"]), deadline).unwrap_err();
        assert!(matches!(e, TransportError::Timeout { .. }), "{e}");
    }

    #[test]
    fn missing_program_is_a_config_error() {
        let e = CommandShell::spawn(&argv(&["/nonexistent/mercury-test"]))
            .err()
            .unwrap();
        assert!(matches!(e, TransportError::Config(_)), "{e}");
    }

    #[test]
    fn shell_round_trip_through_cat() {
        let mut s = CommandShell::spawn(&argv(&["cat"])).unwrap();
        s.send(b"hello\n").unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut got = Vec::new();
        while !got.ends_with(b"\n") {
            match s.recv(deadline).unwrap() {
                Chunk::Data(d) => got.extend(d),
                Chunk::Eof => break,
            }
        }
        assert_eq!(got, b"hello\n");
        s.close(Instant::now() + Duration::from_secs(2));
    }

    /// A program that does not end on EOF is asked to stop with SIGTERM at the close
    /// deadline, so it can finish writing (a device's state, its session count) before it
    /// goes; a SIGKILL straight away would leave its trap unrun.
    #[test]
    fn close_asks_a_program_ignoring_eof_to_stop_before_killing_it() {
        let dir = tempfile::tempdir().unwrap();
        let mark = dir.path().join("term");
        let script = format!(
            "trap 'echo finished > {}; exit 0' TERM; while :; do sleep 0.05; done",
            mark.display()
        );
        let mut s = CommandShell::spawn(&argv(&["sh", "-c", &script])).unwrap();
        let ended = s.finish(Instant::now() + Duration::from_millis(200));
        assert_eq!(ended, Ended::HungUp);
        assert_eq!(std::fs::read_to_string(&mark).unwrap(), "finished\n");
        assert!(matches!(s.child.try_wait(), Ok(Some(_))));
    }

    /// A program that ignores SIGTERM too is killed once the grace has passed: a hung
    /// child never keeps the device's lock held.
    #[test]
    fn close_kills_a_program_ignoring_sigterm_after_the_grace() {
        let mut s = CommandShell::spawn(&argv(&[
            "sh",
            "-c",
            "trap '' TERM; while :; do sleep 0.05; done",
        ]))
        .unwrap();
        let ended = s.finish(Instant::now() + Duration::from_millis(100));
        assert_eq!(ended, Ended::HungUp);
        let status = s.child.try_wait().unwrap().expect("the child is gone");
        assert!(status.code().is_none(), "killed by a signal: {status:?}");
    }

    /// A program that ends on EOF is left to end by itself.
    #[test]
    fn close_lets_a_program_end_on_eof() {
        let mut s = CommandShell::spawn(&argv(&["cat"])).unwrap();
        assert_eq!(
            s.finish(Instant::now() + Duration::from_secs(5)),
            Ended::ByDevice
        );
    }
}
