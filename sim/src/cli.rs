//! What every platform implements: a line-at-a-time CLI with prompts, modes
//! and the state under lock. The session loop (session.rs) drives it.

use crate::faults::Faults;
use crate::model::DeviceState;
use crate::platform::Platform;

/// Per-session settings a platform CLI needs.
#[derive(Debug, Clone)]
pub struct Env {
    /// Platform.
    pub platform: Platform,
    /// Hostname for prompts.
    pub hostname: String,
    /// Login user.
    pub username: String,
    /// Enable secret; when set, IOS-like platforms log in unprivileged.
    pub enable_secret: Option<String>,
    /// Faults in force.
    pub faults: Faults,
    /// Hardware model (`c3750`), where models of a platform differ.
    pub model: Option<String>,
    /// Interactive session (false = exec mode, one command).
    pub interactive: bool,
}

/// The result of handling one line.
#[derive(Debug, Default)]
pub struct Out {
    /// Text for stdout, lines ended by `\n` (the terminal layer adds `\r`).
    pub text: String,
    /// Text for stderr (shell platforms in exec mode; merged when interactive).
    pub err: String,
    /// The line was rejected / failed (drives exec-mode exit status 1).
    pub failed: bool,
    /// Exit status for shell platforms (0 = ok).
    pub status: i32,
}

impl Out {
    /// Append a line to stdout.
    pub fn line(&mut self, s: impl AsRef<str>) {
        self.text.push_str(s.as_ref());
        self.text.push('\n');
    }
    /// Append raw text to stdout.
    pub fn raw(&mut self, s: impl AsRef<str>) {
        self.text.push_str(s.as_ref());
    }
    /// Append an error line to stdout and mark the line failed.
    pub fn fail(&mut self, s: impl AsRef<str>) {
        self.line(s);
        self.failed = true;
        if self.status == 0 {
            self.status = 1;
        }
    }
    /// Append a line to stderr and set the exit status.
    pub fn stderr(&mut self, status: i32, s: impl AsRef<str>) {
        self.err.push_str(s.as_ref());
        self.err.push('\n');
        self.failed = true;
        self.status = status;
    }
}

/// What the session does after a line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Flow {
    /// Print the next prompt and read on.
    Continue,
    /// End the session with this exit status.
    Exit(i32),
}

/// A platform's CLI for one session.
pub trait Cli {
    /// Printed once after login, before the first prompt.
    fn banner(&self) -> String {
        String::new()
    }
    /// The prompt (or pending question) to print now.
    fn prompt(&self) -> String;
    /// Name of the current mode (for `unmodelled` and the transcript).
    fn mode_name(&self) -> String;
    /// The mode the transcript records: `question` while a question waits for
    /// its answer, else the mode's name.
    fn mode(&self) -> String {
        if self.asking() {
            "question".into()
        } else {
            self.mode_name()
        }
    }
    /// Handle one received line with the state locked.
    fn handle(&mut self, line: &str, st: &mut DeviceState, out: &mut Out) -> Flow;
    /// Produce the platform's error for a line refused by the `reject` fault.
    fn reject(&mut self, line: &str, out: &mut Out);
    /// Paging: `Some((lines per page, more prompt))`, or None when disabled.
    fn pager(&self) -> Option<(usize, &'static str)> {
        None
    }
    /// Whether a question (confirmation, password) is waiting for an answer.
    fn asking(&self) -> bool {
        false
    }
    /// Enter the context exec-mode commands run in (privileged / operational).
    fn exec_context(&mut self) {}
    /// Whether this is a Linux shell (exec mode prints stderr, exits with status).
    fn is_shell(&self) -> bool {
        false
    }
}

/// The caret line vendors print under the offending word: `^` below byte
/// offset `at` of `line`, shifted right by the prompt the line was typed after
/// (`None` in exec mode, where no prompt precedes the line).
pub fn caret(prompt: Option<&str>, line: &str, at: usize) -> String {
    let col = prompt.map_or(0, |p| p.chars().count()) + line[..at.min(line.len())].chars().count();
    format!("{}^", " ".repeat(col))
}

/// Record a valid but unmodelled line.
pub fn unmodelled(st: &mut DeviceState, mode: &str, line: &str) {
    st.unmodelled.push(format!("{mode}: {}", line.trim()));
}
