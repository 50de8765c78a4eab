//! The `mercury` binary: parse argv, dispatch, print one result, exit with its code.

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let outcome = match mercury::intake::cli::parse_args() {
        Ok(cli) => {
            init_logging(cli.verbose, cli.log_from_env());
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

/// Logs to stderr at the `-v` level; `RUST_LOG` overrides it only when `from_env` (never
/// for serve-ssh, where a remote client may set the environment).
fn init_logging(verbose: u8, from_env: bool) {
    let level = match verbose {
        0 => log::LevelFilter::Warn,
        1 => log::LevelFilter::Info,
        _ => log::LevelFilter::Debug,
    };
    let mut builder = if from_env {
        env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(level.as_str()))
    } else {
        let mut b = env_logger::Builder::new();
        b.filter_level(level);
        b
    };
    let _ = builder.target(env_logger::Target::Stderr).try_init();
}
