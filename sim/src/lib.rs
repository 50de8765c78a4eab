//! mercury-sim: a stateful multi-vendor switch CLI simulator.
//!
//! `run` parses the command line (flags, then env vars), opens the state
//! file, registers the session, and runs either an interactive CLI session
//! or one exec-mode command. Platforms live in their own modules.

pub mod cli;
pub mod faults;
pub mod grammar;
pub mod ios;
pub mod junos;
pub mod model;
pub mod netvisor;
pub mod platform;
pub mod script;
pub mod session;
pub mod shell;
pub mod srl;
pub mod store;
pub mod vrp;
pub mod words;

use faults::Faults;
use platform::Platform;
use std::io::IsTerminal;
use std::path::PathBuf;
use store::{Store, Transcript};

/// Echo policy for received lines.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Echo {
    /// Echo when stdin is not a TTY.
    Auto,
    /// Always echo.
    On,
    /// Never echo.
    Off,
}

/// Validated settings of one invocation.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Platform, when given by flag/env.
    pub platform: Option<String>,
    /// State file.
    pub state: PathBuf,
    /// Hostname override.
    pub hostname: Option<String>,
    /// Username (prompts of Junos, Linux shells).
    pub username: Option<String>,
    /// Enable secret.
    pub enable_secret: Option<String>,
    /// Echo policy.
    pub echo: Echo,
    /// Transcript file.
    pub transcript: Option<PathBuf>,
    /// Faults.
    pub faults: Faults,
    /// Hardware model, where the vendor's models behave differently (`--model c3750`: an
    /// ISL-capable Catalyst).
    pub model: Option<String>,
    /// VLANs that exist as shipped (`--vlans 10,100-105`): a lab's idle and demo VLANs.
    /// Used only when the state file is created.
    pub vlans: Vec<u16>,
    /// Exec-mode command, if any.
    pub command: Option<String>,
    /// The arguments as given (handed to a script's tool calls).
    pub args: Vec<String>,
}

const USAGE: &str = "usage: mercury-sim [--platform P] [--state FILE] [--hostname H] [--username U]
                   [--enable-secret S] [--echo auto|on|off] [--transcript FILE]
                   [--fault SPEC]... [--model M] [--vlans LIST] [COMMAND...]
       mercury-sim show --state FILE
       mercury-sim platforms";

fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

enum Verb {
    Session(Box<Settings>),
    Show(PathBuf),
    Platforms,
    Help,
}

fn parse(args: Vec<String>) -> Result<Verb, String> {
    let given = args.clone();
    let mut platform = None;
    let mut state = None;
    let mut hostname = None;
    let mut username = None;
    let mut secret = None;
    let mut echo = None;
    let mut transcript = None;
    let mut fault_flags: Vec<String> = Vec::new();
    let mut model = None;
    let mut vlans = Vec::new();
    let mut positional: Vec<String> = Vec::new();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        if a == "--" && positional.is_empty() {
            positional.extend(it.by_ref());
            break;
        }
        let verb_only =
            positional.len() == 1 && (positional[0] == "show" || positional[0] == "platforms");
        if !positional.is_empty() && (!verb_only || !a.starts_with("--")) {
            positional.push(a);
            continue;
        }
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        let known = [
            "--platform",
            "--state",
            "--hostname",
            "--username",
            "--enable-secret",
            "--echo",
            "--transcript",
            "--fault",
            "--model",
            "--vlans",
        ];
        if known.contains(&flag.as_str()) {
            let v = match inline {
                Some(v) => v,
                None => it.next().ok_or_else(|| format!("{flag} needs a value"))?,
            };
            match flag.as_str() {
                "--platform" => platform = Some(v),
                "--state" => state = Some(v),
                "--hostname" => hostname = Some(v),
                "--username" => username = Some(v),
                "--enable-secret" => secret = Some(v),
                "--echo" => echo = Some(v),
                "--transcript" => transcript = Some(v),
                "--model" => model = Some(v),
                "--vlans" => {
                    vlans = words::parse_vlan_list(&v, &[','], "-").ok_or_else(|| {
                        format!("--vlans: {v:?} is not a VLAN list like 10,100-105")
                    })?
                }
                _ => fault_flags.push(v),
            }
        } else if a == "-h" || a == "--help" {
            return Ok(Verb::Help);
        } else if a.starts_with("--") {
            return Err(format!("unknown option {a}"));
        } else {
            positional.push(a);
        }
    }
    if positional.first().map(String::as_str) == Some("platforms") && positional.len() == 1 {
        return Ok(Verb::Platforms);
    }
    let state = state
        .or_else(|| env_var("MERCURY_SIM_STATE"))
        .map(PathBuf::from);
    if positional.first().map(String::as_str) == Some("show") && positional.len() == 1 {
        return state
            .map(Verb::Show)
            .ok_or_else(|| "show needs --state FILE".to_string());
    }
    let echo = match echo
        .or_else(|| env_var("MERCURY_SIM_ECHO"))
        .as_deref()
        .unwrap_or("auto")
    {
        "auto" => Echo::Auto,
        "on" => Echo::On,
        "off" => Echo::Off,
        other => return Err(format!("--echo must be auto, on or off, not {other}")),
    };
    let mut faults = Faults::default();
    if fault_flags.is_empty() {
        if let Some(v) = env_var("MERCURY_SIM_FAULTS") {
            fault_flags = v.split(',').map(str::to_string).collect();
        }
    }
    for f in &fault_flags {
        faults.add(f)?;
    }
    let command = if positional.is_empty() {
        env_var("SSH_ORIGINAL_COMMAND").filter(|c| !c.trim().is_empty())
    } else {
        Some(positional.join(" "))
    };
    Ok(Verb::Session(Box::new(Settings {
        platform: platform.or_else(|| env_var("MERCURY_SIM_PLATFORM")),
        state: state.unwrap_or_else(|| PathBuf::from("mercury-sim-state.json")),
        hostname: hostname.or_else(|| env_var("MERCURY_SIM_HOSTNAME")),
        username: username.or_else(|| env_var("MERCURY_SIM_USERNAME")),
        enable_secret: secret.or_else(|| env_var("MERCURY_SIM_ENABLE_SECRET")),
        echo,
        transcript: transcript
            .or_else(|| env_var("MERCURY_SIM_TRANSCRIPT"))
            .map(PathBuf::from),
        faults,
        model: model.or_else(|| env_var("MERCURY_SIM_MODEL")),
        vlans,
        command,
        args: given,
    })))
}

/// Entry point with the program's own name: a tool link called from an exec-mode script
/// ([`script`]) runs its one command in the script's session; anything else is [`run`].
pub fn main(argv0: Option<String>, args: Vec<String>) -> i32 {
    let Some((parent, session_id, command)) = script::call(argv0.as_deref(), &args) else {
        return run(args);
    };
    match parse(parent) {
        Ok(Verb::Session(s)) => session(
            Settings {
                command: Some(command),
                ..*s
            },
            Some(session_id),
        ),
        Ok(_) => 64,
        Err(e) => {
            eprintln!("mercury-sim: {e}");
            64
        }
    }
}

/// Entry point: returns the process exit status.
pub fn run(args: Vec<String>) -> i32 {
    let verb = match parse(args) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("mercury-sim: {e}\n{USAGE}");
            return 64;
        }
    };
    match verb {
        Verb::Help => {
            println!("{USAGE}");
            0
        }
        Verb::Platforms => {
            for p in Platform::ALL {
                println!("{}", p.name());
            }
            0
        }
        Verb::Show(path) => show(path),
        Verb::Session(s) => session(*s, None),
    }
}

fn show(path: PathBuf) -> i32 {
    let Some(name) = Store::peek_platform(&path) else {
        eprintln!("mercury-sim: no state in {}", path.display());
        return 66;
    };
    let Some(p) = Platform::from_name(&name) else {
        eprintln!("mercury-sim: unknown platform {name} in {}", path.display());
        return 65;
    };
    match Store::new(path, p, None).show() {
        Ok(st) => match serde_json::to_string_pretty(&st) {
            Ok(t) => {
                println!("{t}");
                0
            }
            Err(e) => {
                eprintln!("mercury-sim: {e}");
                70
            }
        },
        Err(e) => {
            eprintln!("mercury-sim: {e}");
            70
        }
    }
}

/// One session, or (`call`: the session of the script it belongs to) one command of an
/// exec-mode script, which registers no session of its own.
fn session(s: Settings, call: Option<u64>) -> i32 {
    let stored = Store::peek_platform(&s.state);
    let name = s
        .platform
        .clone()
        .or(stored.clone())
        .unwrap_or_else(|| "cisco_ios".to_string());
    let Some(platform) = Platform::from_name(&name) else {
        eprintln!("mercury-sim: unknown platform {name}; see `mercury-sim platforms`");
        return 64;
    };
    if let Some(st) = stored {
        if Platform::from_name(&st) != Some(platform) {
            eprintln!(
                "mercury-sim: state file {} is for platform {st}, not {name}",
                s.state.display()
            );
            return 65;
        }
    }
    let store = Store::new(s.state.clone(), platform, s.hostname.clone()).with_vlans(&s.vlans);
    let hostname = match store.with(|st| st.hostname.clone()) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("mercury-sim: {e}");
            return 70;
        }
    };
    // A script's command belongs to the script's session: the device counts the channel once.
    let started = match call {
        Some(id) => Ok(Ok(id)),
        None => store.session_start(s.faults.max_sessions),
    };
    let session = match started {
        Ok(Ok(id)) => id,
        Ok(Err(active)) => {
            platform::refuse_session(platform, active);
            return 1;
        }
        Err(e) => {
            eprintln!("mercury-sim: {e}");
            return 70;
        }
    };
    if call.is_none() {
        install_signal_cleanup(store.clone());
    }
    let env = cli::Env {
        platform,
        hostname,
        username: s
            .username
            .clone()
            .unwrap_or_else(|| platform.default_user().to_string()),
        enable_secret: s.enable_secret.clone(),
        faults: s.faults.clone(),
        model: s.model.clone(),
        interactive: s.command.is_none(),
    };
    let transcript = Transcript::new(s.transcript.clone());
    let mut input = session::Input::new(Box::new(std::io::stdin()));
    let mut cli = platform.new_cli(&env);
    let code = match &s.command {
        Some(cmd) if call.is_none() && cli.is_shell() && script::has_shell_syntax(cmd) => {
            script::run(&s.args, &s.state, session, cmd).unwrap_or_else(|e| {
                eprintln!("mercury-sim: {e}");
                70
            })
        }
        Some(cmd) => session::exec(
            cli.as_mut(),
            &store,
            &env,
            &transcript,
            session,
            cmd,
            &mut input,
        ),
        None => {
            let echo = match s.echo {
                Echo::On => true,
                Echo::Off => false,
                Echo::Auto => !std::io::stdin().is_terminal(),
            };
            session::interactive(
                cli.as_mut(),
                &store,
                &env,
                &transcript,
                session,
                echo,
                &mut input,
            )
        }
    };
    if call.is_none() {
        store.session_end();
    }
    code
}

/// On SIGTERM/SIGHUP/SIGINT, unregister the session and exit (128 + signal).
fn install_signal_cleanup(store: Store) {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGINT]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            store.session_end();
            std::process::exit(128 + sig);
        }
    });
}
