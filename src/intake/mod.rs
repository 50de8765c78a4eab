//! Intake: where a run enters. Command-line flags (`cli`), the SSH forced-command grammar
//! (`forced`), or JSON on stdin / in a file become one [`Submission`] with the caller's
//! identity, handed to `run`; `serve-jsonrpc` is handed to `serve`.
//!
//! This layer is the only one that reads argv, the environment (`SSH_ORIGINAL_COMMAND`,
//! `SSH_CONNECTION`) and stdin. Nothing below it sees clap types or unvalidated command
//! strings.

pub mod cli;
pub mod forced;
pub mod manual;
pub mod ngs;

use std::io::{IsTerminal, Read};
use std::path::Path;
use std::time::Duration;

use cli::{Cli, Command};
use forced::Forced;

use crate::report::error::Error;
use crate::report::exit::ExitKind;
use crate::report::{Format, Outcome, Report};
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
        Command::Completions(c) => match c.shell {
            Some(shell) => Outcome {
                stdout: completions(shell),
                code: 0,
            },
            None => device_names(&cli.config),
        },
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
        Command::ImportNgs(args) => import_ngs(args, cli.dry_run, format),
        _ => match submission(&cli) {
            Ok(Intake::Submit(s)) => run::submit(&cli.config, *s, format),
            Ok(Intake::Reply(msg)) => run::reply(msg, format),
            Err(e) => run::failed(e, format),
        },
    }
}

/// The completion script for `shell`, with `--device` completed from the configured
/// devices (bash, zsh, fish) instead of file names.
pub fn completions(shell: clap_complete::Shell) -> String {
    use clap_complete::Shell;
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cli::command(), "mercury", &mut buf);
    let script = String::from_utf8_lossy(&buf).into_owned();
    match shell {
        Shell::Bash => script.replace(
            "--device)\n                    COMPREPLY=($(compgen -f \"${cur}\"))",
            "--device)\n                    COMPREPLY=($(compgen -W \"$(mercury completions --devices 2>/dev/null)\" -- \"${cur}\"))",
        ),
        Shell::Zsh => {
            let lines: Vec<String> = script
                .lines()
                .map(|l| {
                    if l.starts_with("'--device=[") && l.contains(":NAME:_default'") {
                        l.replace(":NAME:_default'", ":NAME:_mercury_devices'")
                    } else {
                        l.to_string()
                    }
                })
                .collect();
            let mut out = lines.join("\n");
            out.push_str(
                "\n\n(( $+functions[_mercury_devices] )) ||\n_mercury_devices() {\n    local -a devices\n    devices=(${(f)\"$(mercury completions --devices 2>/dev/null)\"})\n    _describe -t devices 'device' devices\n}\n",
            );
            out
        }
        Shell::Fish => {
            let mut out: String = script
                .lines()
                .map(|l| {
                    if l.contains(" -l device ") && l.ends_with(" -r") {
                        format!("{l} -f -a \"(__mercury_devices)\"\n")
                    } else {
                        format!("{l}\n")
                    }
                })
                .collect();
            out.insert_str(
                0,
                "function __mercury_devices\n    mercury completions --devices 2>/dev/null\nend\n\n",
            );
            out
        }
        _ => script,
    }
}

/// `mercury completions --devices`: configured device names and aliases, one per line
/// (nothing, and exit 78, when the configuration cannot be read).
fn device_names(config: &Path) -> Outcome {
    match crate::config::Config::load(config) {
        Ok(c) => {
            let mut names: Vec<&str> = c
                .devices
                .values()
                .flat_map(|d| {
                    std::iter::once(d.name.as_str()).chain(d.aliases.iter().map(String::as_str))
                })
                .collect();
            names.sort_unstable();
            Outcome {
                stdout: names.iter().map(|n| format!("{n}\n")).collect(),
                code: 0,
            }
        }
        Err(_) => Outcome {
            stdout: String::new(),
            code: ExitKind::Config.code(),
        },
    }
}

/// `mercury import-ngs`: read the NGS files, write the configuration, report what had no
/// equivalent.
fn import_ngs(args: &cli::ImportNgsArgs, dry_run: bool, format: Format) -> Outcome {
    let started = std::time::Instant::now();
    let mut report = Report::new(run::new_request_id());
    report.op = Some("import_ngs".into());
    report.dry_run = dry_run;
    let result = (|| -> Result<(), Error> {
        let mut files = Vec::new();
        for f in &args.files {
            let text = std::fs::read_to_string(f)
                .map_err(|e| Error::ConfigMessage(format!("cannot read {}: {e}", f.display())))?;
            files.push((f.clone(), text));
        }
        let catalog = crate::catalog::Catalog::builtin()?;
        let imported = ngs::import(&files, &catalog).map_err(Error::ConfigMessage)?;
        let config_path = args.out_dir.join("mercury.toml");
        // What was written must load: a bug here is better caught now than on the first run.
        crate::config::Config::parse(&config_path, &imported.toml).map_err(|e| {
            Error::Internal(format!("the imported configuration does not parse: {e}"))
        })?;
        let written = if dry_run {
            Vec::new()
        } else {
            ngs::write(&imported, &args.out_dir, args.force).map_err(Error::ConfigMessage)?
        };
        report.data = serde_json::json!({
            "config": config_path,
            "written": written,
            "devices": imported.devices,
            "skipped": imported.skipped,
            "secrets": imported.secrets.iter().map(|s| args.out_dir.join(&s.path)).collect::<Vec<_>>(),
            "unmapped": imported.notes,
            "toml": if dry_run { Some(&imported.toml) } else { None },
        });
        report.changed = !written.is_empty();
        report.msg = format!(
            "{} {} device{} from {} file{} into {}{}; {} note{} on settings without an exact equivalent (data.unmapped); next: add the switches' host keys to {}, then `mercury --config {} check`",
            if dry_run { "would import" } else { "imported" },
            imported.devices.len(),
            if imported.devices.len() == 1 { "" } else { "s" },
            files.len(),
            if files.len() == 1 { "" } else { "s" },
            config_path.display(),
            if imported.skipped.is_empty() { String::new() } else { format!(" ({} skipped: {})", imported.skipped.len(), imported.skipped.join(", ")) },
            imported.notes.len(),
            if imported.notes.len() == 1 { "" } else { "s" },
            args.out_dir.join("known_hosts").display(),
            config_path.display(),
        );
        report.warnings.extend(imported.notes.iter().map(|n| {
            format!(
                "{}{} ({}): {}",
                n.device
                    .as_deref()
                    .map(|d| format!("{d}: "))
                    .unwrap_or_default(),
                n.key,
                n.at,
                n.message
            )
        }));
        Ok(())
    })();
    run::finish(report, result, started, format)
}

/// The result of a usage error (unknown verb or flag), for `main`: rendered as `args` asked
/// (`--format text` / `--format=text` is honoured even though the arguments did not parse),
/// else JSON unless stdout is a terminal.
pub fn usage_error(message: &str, args: &[std::ffi::OsString]) -> Outcome {
    run::failed(Error::Usage(message.trim().to_string()), format_in(args))
}

/// The `--format` the raw arguments ask for, if they name one, else the default.
fn format_in(args: &[std::ffi::OsString]) -> Format {
    let args: Vec<&str> = args.iter().filter_map(|a| a.to_str()).collect();
    let mut asked = None;
    for (i, a) in args.iter().enumerate() {
        if *a == "--" {
            break;
        }
        let value = match a.strip_prefix("--format") {
            Some("") => args.get(i + 1).copied(),
            Some(rest) => rest.strip_prefix('='),
            None => None,
        };
        match value {
            Some("text") => asked = Some(Format::Text),
            Some("json") => asked = Some(Format::Json),
            _ => {}
        }
    }
    asked.unwrap_or_else(default_format)
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
                    if parsed.check {
                        raw.check = Some(true);
                    }
                    raw
                }
            });
            sub.caller = Some(s.caller.clone());
            sub.allow_devices = (!s.allow_devices.is_empty()).then(|| s.allow_devices.clone());
        }
        Command::Run(r) => sub.raw = Some(read_json(r.request.as_deref())?),
        Command::Check(c) => {
            sub.check = Some(c.catalog);
            sub.connect = c.connect.then(|| c.device.clone());
        }
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
        if cli.check {
            raw.check = Some(true);
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
