//! Test helpers: run the built simulator, read its state.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_mercury-sim");

/// A scratch directory removed on drop.
pub struct Tmp(pub PathBuf);

impl Tmp {
    pub fn new(tag: &str) -> Tmp {
        let d = std::env::temp_dir().join(format!(
            "mercury-sim-test-{tag}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::create_dir_all(&d).unwrap();
        Tmp(d)
    }
    pub fn path(&self, f: &str) -> PathBuf {
        self.0.join(f)
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Run the simulator with args, stdin, and extra env.
pub fn run(args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Run {
    let mut c = Command::new(BIN);
    c.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("SSH_ORIGINAL_COMMAND")
        .env_remove("MERCURY_SIM_FAULTS")
        .env_remove("MERCURY_SIM_PLATFORM")
        .env_remove("MERCURY_SIM_STATE");
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        // The simulator may exit before reading (a refused session): ignore EPIPE.
        .ok();
    let o = child.wait_with_output().unwrap();
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).replace('\r', ""),
        stderr: String::from_utf8_lossy(&o.stderr).to_string(),
    }
}

/// Interactive session on `platform` with `lines` (each gets a newline).
pub fn session(platform: &str, state: &Path, lines: &[&str]) -> Run {
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    run(
        &["--platform", platform, "--state", state.to_str().unwrap()],
        &input,
        &[],
    )
}

/// Exec-mode command on `platform`.
pub fn exec(platform: &str, state: &Path, cmd: &str) -> Run {
    run(
        &["--platform", platform, "--state", state.to_str().unwrap()],
        "",
        &[("SSH_ORIGINAL_COMMAND", cmd)],
    )
}

/// The state JSON via `mercury-sim show`.
pub fn state(state: &Path) -> Value {
    let r = run(&["show", "--state", state.to_str().unwrap()], "", &[]);
    assert_eq!(r.code, 0, "show failed: {}", r.stderr);
    serde_json::from_str(&r.stdout).unwrap()
}

pub fn port<'a>(st: &'a Value, name: &str) -> &'a Value {
    &st["running"]["ports"][name]
}
