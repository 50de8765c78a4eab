//! Intake: where a run enters. Command-line flags (`cli`), the SSH forced-command grammar
//! (`forced`), or JSON on stdin / in a file become one [`Submission`] with the caller's
//! identity, handed to `run`; `serve-jsonrpc` is handed to `serve`.
//!
//! This layer is the only one that reads argv, the environment (`SSH_ORIGINAL_COMMAND`,
//! `SSH_CONNECTION`) and stdin. Nothing below it sees clap types or unvalidated command
//! strings.

pub mod cli;
pub mod forced;

use std::io::{IsTerminal, Read};
use std::path::Path;
use std::time::Duration;

use cli::{Cli, Command};
use forced::Forced;

use crate::report::error::Error;
use crate::report::{Format, Outcome};
use crate::request::{RawRequest, RequestError};
use crate::run::{self, Origin, Submission};
use crate::serve;

/// Largest JSON request read from stdin or a file.
pub const MAX_REQUEST_BYTES: u64 = 1024 * 1024;

/// Runs one invocation of the binary: completions, the JSON-RPC front, or a submission
/// through `run`.
pub fn dispatch(cli: Cli) -> Outcome {
    let format = cli.format.map(Format::from).unwrap_or_else(default_format);
    match &cli.command {
        Command::Completions(c) => {
            let mut buf = Vec::new();
            clap_complete::generate(c.shell, &mut cli::command(), "mercury", &mut buf);
            Outcome {
                stdout: String::from_utf8_lossy(&buf).into_owned(),
                code: 0,
            }
        }
        Command::ServeJsonrpc(args) => serve::jsonrpc::serve_inetd(
            &cli.config,
            &serve::jsonrpc::Options {
                htpasswd: args.htpasswd.clone(),
                caller: args.caller.clone(),
                idle_timeout: Duration::from_secs(args.idle_timeout),
                request_timeout: Duration::from_secs(args.request_timeout),
                tls: match (&args.tls_cert, &args.tls_key) {
                    (Some(cert), Some(key)) => Some(crate::tls::ServerSettings {
                        cert: cert.clone(),
                        key: key.clone(),
                        client_ca: args.tls_client_ca.clone(),
                        min_version: match args.tls_min_version {
                            cli::TlsVersion::V1_2 => crate::tls::MinVersion::Tls12,
                            cli::TlsVersion::V1_3 => crate::tls::MinVersion::Tls13,
                        },
                    }),
                    _ => None,
                },
            },
        ),
        Command::Check(c) if c.table => run::table(&cli.config, format),
        _ => match submission(&cli) {
            Ok(Intake::Submit(s)) => run::submit(&cli.config, *s, format),
            Ok(Intake::Reply(msg)) => run::reply(msg, format),
            Err(e) => run::failed(e, format),
        },
    }
}

/// The result of a usage error (unknown verb or flag), for `main`.
pub fn usage_error(message: &str) -> Outcome {
    run::failed(Error::Usage(message.trim().to_string()), default_format())
}

/// JSON when stdout is not a terminal (the contract for programs), text for people.
fn default_format() -> Format {
    if std::io::stdout().is_terminal() {
        Format::Text
    } else {
        Format::Json
    }
}

impl From<cli::Format> for Format {
    fn from(f: cli::Format) -> Format {
        match f {
            cli::Format::Json => Format::Json,
            cli::Format::Text => Format::Text,
        }
    }
}

/// What the invocation asks of `run`.
enum Intake {
    /// A request, or `mercury check`.
    Submit(Box<Submission>),
    /// A health check answered here (`serve-ssh` `true` / `version`).
    Reply(String),
}

fn submission(cli: &Cli) -> Result<Intake, Error> {
    let mut sub = Submission {
        dry_run: cli.dry_run,
        origin: Origin {
            ssh_connection: std::env::var("SSH_CONNECTION").ok(),
            ..Origin::default()
        },
        ..Submission::default()
    };
    match &cli.command {
        Command::ServeSsh(s) => {
            let original = std::env::var("SSH_ORIGINAL_COMMAND").unwrap_or_default();
            sub.raw = Some(match forced::parse(&original).map_err(Error::Usage)? {
                Forced::Health => return Ok(Intake::Reply("ok".into())),
                Forced::Version => {
                    return Ok(Intake::Reply(format!(
                        "mercury {}",
                        env!("CARGO_PKG_VERSION")
                    )))
                }
                Forced::Json => read_json(None)?,
                Forced::Args(args) => {
                    let parsed = <Cli as clap::Parser>::try_parse_from(
                        std::iter::once("mercury".to_string()).chain(args),
                    )
                    .map_err(|e| Error::Usage(first_line(&e.to_string())))?;
                    sub.dry_run |= parsed.dry_run;
                    let mut raw = parsed
                        .command
                        .to_raw()
                        .ok_or_else(|| Error::Usage("not an operation".into()))??;
                    if parsed.verify {
                        raw.verify = Some(true);
                    }
                    if parsed.no_verify {
                        raw.verify = Some(false);
                    }
                    raw
                }
            });
            sub.caller = Some(s.caller.clone());
            sub.allow_devices = (!s.allow_devices.is_empty()).then(|| s.allow_devices.clone());
        }
        Command::Run(r) => sub.raw = Some(read_json(r.request.as_deref())?),
        Command::Check(c) => sub.check = Some(c.catalog),
        other => {
            sub.raw = Some(
                other
                    .to_raw()
                    .ok_or_else(|| Error::Internal("no request".into()))??,
            )
        }
    }
    if let Some(raw) = sub.raw.as_mut() {
        if cli.verify {
            raw.verify = Some(true);
        }
        if cli.no_verify {
            raw.verify = Some(false);
        }
    }
    Ok(Intake::Submit(Box::new(sub)))
}

fn first_line(s: &str) -> String {
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("usage error")
        .trim()
        .to_string()
}

/// One JSON request from `file` or stdin, at most [`MAX_REQUEST_BYTES`].
fn read_json(file: Option<&Path>) -> Result<RawRequest, Error> {
    let mut text = String::new();
    let read = match file {
        Some(p) => std::fs::File::open(p)
            .and_then(|f| f.take(MAX_REQUEST_BYTES + 1).read_to_string(&mut text))
            .map_err(|e| RequestError(format!("cannot read request {}: {e}", p.display()))),
        None => std::io::stdin()
            .take(MAX_REQUEST_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|e| RequestError(format!("cannot read request from stdin: {e}"))),
    };
    read?;
    if text.len() as u64 > MAX_REQUEST_BYTES {
        return Err(RequestError(format!("request larger than {MAX_REQUEST_BYTES} bytes")).into());
    }
    if text.trim().is_empty() {
        return Err(RequestError("empty request: expected one JSON object".into()).into());
    }
    Ok(RawRequest::from_json(&text)?)
}
