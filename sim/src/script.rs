//! Exec-mode scripts. A command line with shell syntax (`;`, `|`, `&`, `$`, a newline ...
//! outside quotes), which a client sends when it joins several commands into one exec
//! channel, runs in a real `/bin/sh -c`, as sshd runs an exec request on a Linux switch:
//! the shell does the parsing, the quoting, `$?` and its builtins (`printf`, `echo`, `[`,
//! `exit`). The device's own tools (`nv`, `config`, `show`, `ovs-vsctl`, `sudo`, ...) are
//! the only programs on its `PATH`: links to this binary in a directory beside the state
//! file. Each link runs one command as an exec-mode command of the channel's session — the
//! same session id in the transcript, no second session counted — with its argv quoted
//! back into the line the platform's shell module parses.
//!
//! A command line without shell syntax (one command, as `ssh host 'cmd'` sends it) is run
//! by the simulator itself, as before.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Set in a script's environment: the session id and the parent's arguments, as JSON
/// (`{"session": 7, "args": [...]}`). A tool link started with it runs one command.
pub const CALL_ENV: &str = "MERCURY_SIM_CALL";

/// The programs a Linux-shell platform's script can run (what `shell::Shell` dispatches
/// on, less the shell's own builtins).
const TOOLS: &[&str] = &[
    "sudo",
    "nv",
    "net",
    "bridge",
    "config",
    "show",
    "sonic-db-cli",
    "ovs-vsctl",
    "ip",
    "hostname",
    "whoami",
    "vtysh",
    "cat",
    "ls",
    "uname",
    "ping",
    "systemctl",
    "acl-loader",
    "rm",
    "ethtool",
];

/// Whether `line` needs a shell beyond splitting into words: a character outside quotes
/// that `sh` treats as syntax (a list, a pipe, an expansion, a redirection, a newline).
pub fn has_shell_syntax(line: &str) -> bool {
    let mut chars = line.chars();
    let mut double = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '\'' if !double => {
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                }
            }
            '"' => double = !double,
            '$' | '`' => return true,
            ';' | '&' | '|' | '<' | '>' | '(' | ')' | '\n' if !double => return true,
            _ => {}
        }
    }
    false
}

/// POSIX-shell-quotes each word that needs it and joins with spaces.
pub fn quote_join<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| {
            let w = w.as_ref();
            let plain = !w.is_empty()
                && w.chars().all(|c| {
                    c.is_ascii_alphanumeric()
                        || matches!(c, '_' | '-' | '.' | '/' | ':' | ',' | '=' | '@' | '+')
                });
            if plain {
                w.to_string()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The directory of tool links for a state file (`STATE.tools/`), made if missing; where
/// that directory cannot be written (a simulator running as another user), a directory of
/// this process's own under the temporary directory, removed after the script (`true`).
fn tools_dir(state: &Path) -> Result<(PathBuf, bool), String> {
    let mut name = state.as_os_str().to_owned();
    name.push(".tools");
    let beside = PathBuf::from(name);
    if links(&beside).is_ok() {
        return Ok((beside, false));
    }
    let own = std::env::temp_dir().join(format!("mercury-sim-tools.{}", std::process::id()));
    links(&own)?;
    Ok((own, true))
}

/// Makes `dir` hold a link to this binary under every tool's name.
fn links(dir: &Path) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("own path: {e}"))?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for tool in TOOLS {
        let link = dir.join(tool);
        if std::fs::read_link(&link).ok().as_deref() == Some(exe.as_path()) {
            continue;
        }
        let _ = std::fs::remove_file(&link);
        match std::os::unix::fs::symlink(&exe, &link) {
            Ok(()) => {}
            // Another session made it at the same moment.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(format!("{}: {e}", link.display())),
        }
    }
    Ok(())
}

/// Runs `script` in `/bin/sh -c` for session `session` (the channel), its tools being
/// this binary under their names; the shell's exit status (255 when it was killed, as
/// sshd reports a signal to an ssh client).
pub fn run(args: &[String], state: &Path, session: u64, script: &str) -> Result<i32, String> {
    let (dir, own) = tools_dir(state)?;
    let call = serde_json::json!({ "session": session, "args": args }).to_string();
    let status = Command::new("/bin/sh")
        .arg("-c")
        .arg(script)
        .env("PATH", &dir)
        .env(CALL_ENV, call)
        .status();
    if own {
        let _ = std::fs::remove_dir_all(&dir);
    }
    let status = status.map_err(|e| format!("/bin/sh: {e}"))?;
    Ok(status.code().unwrap_or(255))
}

/// One tool call from a script: the parent's arguments, the session, and the command line
/// (`argv0`'s base name and `args`, quoted back). `None` when this process is no tool call.
pub fn call(argv0: Option<&str>, args: &[String]) -> Option<(Vec<String>, u64, String)> {
    let spec = std::env::var(CALL_ENV).ok()?;
    let tool = Path::new(argv0?).file_name()?.to_str()?.to_string();
    if !TOOLS.contains(&tool.as_str()) {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(&spec).ok()?;
    let session = v["session"].as_u64()?;
    let parent = v["args"]
        .as_array()?
        .iter()
        .map(|a| a.as_str().map(str::to_string))
        .collect::<Option<Vec<_>>>()?;
    let mut words = vec![tool];
    words.extend(args.iter().cloned());
    Some((parent, session, quote_join(&words)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::words::shell_words;

    #[test]
    fn shell_syntax_outside_quotes_only() {
        assert!(!has_shell_syntax(
            "nv set interface swp5 bridge domain br_default"
        ));
        assert!(!has_shell_syntax(
            "nv set interface 'a;b' description 'x|y $(z)'"
        ));
        assert!(!has_shell_syntax(r"net add 'it'\''s'"));
        assert!(has_shell_syntax("show vlan brief\nshow x"));
        assert!(has_shell_syntax("a; b"));
        assert!(has_shell_syntax("a \"$(b)\""));
        assert!(has_shell_syntax("echo $?"));
    }

    #[test]
    fn quoting_round_trips_through_the_word_splitter() {
        for w in [
            "a b",
            "it's",
            "$(x)",
            "\"q\"",
            ";",
            "",
            "back\\slash",
            "new\nline",
        ] {
            let words = vec!["nv".to_string(), w.to_string()];
            assert_eq!(shell_words(&quote_join(&words)), words, "{w:?}");
        }
    }
}
