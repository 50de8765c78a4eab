//! Transports: how bytes reach a device. Three kinds behind two small traits:
//! [`Shell`] (an interactive byte stream, for CLI platforms) and [`Exec`] (one command, exit
//! status and output, for exec platforms).
//!
//! This layer moves bytes and reports *how* a connection failed (which stage, what was
//! awaited). It never interprets output: prompts, modes and failure indicators belong to
//! `session`.

pub mod command;
pub mod local;
pub mod ssh;

use std::time::{Duration, Instant};

use crate::catalog::Channel;
use crate::config::{Device, Secrets, TransportKind};

/// A transport failure, with the stage that failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TransportError {
    /// Could not reach the device (TCP refused or timed out, name resolution, handshake).
    #[error("{stage}: {message}")]
    Unreachable {
        /// Which stage (`TCP connect to 192.0.2.1:22`, `SSH handshake`, `spawn`).
        stage: String,
        /// What happened.
        message: String,
    },
    /// Authentication or host-key verification failed.
    #[error("{stage}: {message}")]
    Denied {
        /// `host key` or `authentication`.
        stage: String,
        /// What happened (fingerprints, methods tried).
        message: String,
    },
    /// Nothing arrived before the deadline.
    #[error("timed out after {:.1}s waiting for {awaited}", waited.as_secs_f64())]
    Timeout {
        /// What was awaited.
        awaited: String,
        /// How long.
        waited: Duration,
    },
    /// The connection closed or broke mid-session.
    #[error("connection lost: {0}")]
    Lost(String),
    /// The transport is misconfigured (missing program, unsupported combination).
    #[error("{0}")]
    Config(String),
}

/// What one read produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Chunk {
    /// Bytes from the device.
    Data(Vec<u8>),
    /// The device closed the stream.
    Eof,
}

/// How a session ended, as the transport saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The device ended the session itself after its close lines: its CLI exited (SSH: the
    /// server's EOF and channel close, which follow the exit status; a child: its exit).
    ByDevice,
    /// The device did not end it within the wait, or was not asked to: Mercury hung up.
    HungUp,
}

/// An interactive byte stream (PTY shell over SSH, a child's stdin/stdout).
pub trait Shell {
    /// Sends bytes.
    fn send(&mut self, data: &[u8]) -> Result<(), TransportError>;
    /// Waits for the next bytes until `deadline` (`Err(Timeout)` when it passes).
    fn recv(&mut self, deadline: Instant) -> Result<Chunk, TransportError>;
    /// Closes the stream (hangs up), waiting at most until `deadline` for the far end to
    /// finish.
    fn close(&mut self, deadline: Instant);
    /// The platform's close lines have been sent: waits until `deadline` — blocked in the
    /// kernel, never polling in a loop — for the device to end the session by itself, then
    /// closes. Only once this returns may the device's lock slot go to another session:
    /// a device with few VTY lines counts a session until *it* has ended it.
    fn finish(&mut self, deadline: Instant) -> Ended {
        self.close(deadline);
        Ended::HungUp
    }
    /// Diagnostics the far end wrote outside the stream (a child's stderr), if any.
    fn diagnostics(&self) -> String {
        String::new()
    }
    /// Things the connection did that the result and audit record must mention (an SSH
    /// host key learned on first use).
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
}

/// The result of one executed command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecOutput {
    /// Exit status (`-1` when killed by a signal).
    pub status: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs one command per call.
pub trait Exec {
    /// Runs `argv` (local) or `line` (its shell-quoted form, for a remote shell) until
    /// `deadline`.
    fn exec(
        &mut self,
        argv: &[String],
        line: &str,
        deadline: Instant,
    ) -> Result<ExecOutput, TransportError>;
    /// Whether `line` reaches a shell that parses it (an SSH exec channel; a `command`
    /// transport, which hands it on the way `ssh host 'line'` does), so that a session may
    /// join several lines into one script. `false` where argv is executed directly
    /// (`local`): no shell is ever involved there.
    fn through_shell(&self) -> bool {
        false
    }
    /// Things the connection did that the result and audit record must mention (an SSH
    /// host key learned on first use).
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
}

/// An open connection of either kind.
pub enum Connection {
    /// For CLI platforms.
    Shell(Box<dyn Shell>),
    /// For exec platforms.
    Exec(Box<dyn Exec>),
}

impl Connection {
    /// The connection's warnings (see [`Shell::warnings`]).
    pub fn warnings(&self) -> Vec<String> {
        match self {
            Connection::Shell(s) => s.warnings(),
            Connection::Exec(e) => e.warnings(),
        }
    }
}

/// Whether the device's transport can carry `channel`: the `local` transport runs commands
/// only. Checked before the device is locked, and by `mercury check`.
pub fn fits(device: &Device, channel: Channel) -> Result<(), TransportError> {
    if device.transport == TransportKind::Local && channel == Channel::Shell {
        return Err(unfit(device));
    }
    Ok(())
}

fn unfit(device: &Device) -> TransportError {
    TransportError::Config(format!(
        "devices.{}: transport local runs commands only; platform {} needs an interactive CLI",
        device.name, device.platform
    ))
}

/// Opens the device's transport for `channel`, logging in with `secrets` (the caller has
/// checked that the transport [`fits`]).
pub fn open(
    device: &Device,
    secrets: &Secrets,
    channel: Channel,
    deadline: Instant,
) -> Result<Connection, TransportError> {
    match (&device.transport, channel) {
        (TransportKind::Command { argv }, Channel::Shell) => Ok(Connection::Shell(Box::new(
            command::CommandShell::spawn(argv)?,
        ))),
        (TransportKind::Command { argv }, Channel::Exec) => Ok(Connection::Exec(Box::new(
            command::CommandExec::new(argv.clone()),
        ))),
        (TransportKind::Local, Channel::Exec) => Ok(Connection::Exec(Box::new(local::LocalExec))),
        (TransportKind::Local, Channel::Shell) => Err(unfit(device)),
        (TransportKind::Ssh, channel) => ssh::open(device, secrets, channel, deadline),
    }
}

/// Time left until `deadline`, zero if passed.
pub fn remaining(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}
