//! The `mercury` binary: parse argv, dispatch, print one result, exit with its code.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let outcome = match mercury::intake::cli::Cli::try_parse() {
        Ok(cli) => {
            init_logging(cli.verbose);
            mercury::run::guarded(move || mercury::dispatch(cli))
        }
        Err(e) => match e.kind() {
            clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            _ => {
                // The full clap message (usage, hints) goes to stderr; the JSON result
                // carries its first line.
                eprintln!("{}", e.render());
                let text = e.to_string();
                let first = text
                    .lines()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("usage error");
                let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
                mercury::intake::usage_error(first, &args)
            }
        },
    };
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(outcome.stdout.as_bytes());
    let _ = out.flush();
    ExitCode::from(outcome.code)
}

fn init_logging(verbose: u8) {
    let level = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let _ = env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(level))
        .target(env_logger::Target::Stderr)
        .try_init();
}
