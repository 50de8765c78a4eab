//! The forced-command grammar (`serve-ssh`): what a restricted SSH key may ask for.
//!
//! The request comes from `SSH_ORIGINAL_COMMAND`, tokenised here — never by a shell — into
//! a verb and flags. Only the operation verbs, `run` (JSON on stdin), and the health checks
//! `true` and `version` are accepted; only each verb's own flags plus `--dry-run`,
//! `--format` and `--verify` may follow. Anything that could change configuration, audit or lock paths, read
//! a file, or turn on diagnostics (`--config`, `--request`, `-v`, `--verbose`) is refused, as
//! are control characters, shell metacharacters and overlong input. All refusals are usage
//! errors (exit 64).

use crate::request::Op;

/// Longest accepted forced command.
pub const MAX_LEN: usize = 4096;

/// What the forced command asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Forced {
    /// `true`: a health check; succeeds without reading config.
    Health,
    /// `version`.
    Version,
    /// Empty or `run`: one JSON request on stdin.
    Json,
    /// An operation verb with its flags, ready for the CLI parser (without argv[0]).
    Args(Vec<String>),
}

/// Tokenises and checks a forced command.
pub fn parse(command: &str) -> Result<Forced, String> {
    if command.len() > MAX_LEN {
        return Err(format!("forced command longer than {MAX_LEN} bytes"));
    }
    let tokens = tokenize(command)?;
    let Some(verb) = tokens.first() else {
        return Ok(Forced::Json);
    };
    // The forced command line may start with the program name, as `ssh host mercury ...`
    // users tend to type; it is dropped, nothing else is.
    let (verb, rest) = if verb == "mercury" {
        match tokens.get(1) {
            Some(v) => (v.clone(), tokens[2..].to_vec()),
            None => return Ok(Forced::Json),
        }
    } else {
        (verb.clone(), tokens[1..].to_vec())
    };
    match verb.as_str() {
        "true" | "version" | "run" if !rest.is_empty() => {
            Err(format!("{verb} takes no arguments over SSH"))
        }
        "true" => Ok(Forced::Health),
        "version" | "--version" => Ok(Forced::Version),
        "run" => Ok(Forced::Json),
        v => {
            if Op::parse(v).is_none() || v.contains('_') {
                return Err(format!(
                    "verb {:?} is not allowed over SSH (allowed: true, version, run, {})",
                    crate::request::validate::printable(v),
                    Op::ALL.map(|o| o.name().replace('_', "-")).join(", ")
                ));
            }
            let allowed = allowed_flags(v);
            for t in &rest {
                if let Some(flag) = t.strip_prefix("--") {
                    let name = flag.split('=').next().unwrap_or(flag);
                    if !allowed.iter().any(|a| a == name) {
                        return Err(format!(
                            "option --{} is not allowed over SSH",
                            crate::request::validate::printable(name)
                        ));
                    }
                } else if t.starts_with('-') {
                    return Err(format!(
                        "option {} is not allowed over SSH",
                        crate::request::validate::printable(t)
                    ));
                }
            }
            let mut args = vec![v.to_string()];
            args.extend(rest);
            Ok(Forced::Args(args))
        }
    }
}

/// The long flags a verb may carry over SSH: its own, plus `--dry-run`, `--format`,
/// `--verify` and `--no-verify` (not reading is safe to allow: removals it cannot see are
/// refused for a caller).
fn allowed_flags(verb: &str) -> Vec<String> {
    let mut out = vec![
        "dry-run".to_string(),
        "format".to_string(),
        "verify".to_string(),
        "no-verify".to_string(),
    ];
    if let Some(sub) = crate::intake::cli::command().find_subcommand(verb) {
        out.extend(
            sub.get_arguments()
                .filter_map(|a| a.get_long().map(str::to_string)),
        );
    }
    out.retain(|f| {
        !matches!(
            f.as_str(),
            "config" | "request" | "verbose" | "help" | "version"
        )
    });
    out
}

/// Splits on spaces and tabs; `'...'` and `"..."` group (no escapes inside). Refuses
/// control characters, backslashes and shell metacharacters outright.
fn tokenize(s: &str) -> Result<Vec<String>, String> {
    if let Some(c) = s
        .chars()
        .find(|c| crate::request::validate::is_dangerous(*c) && *c != '\t')
    {
        return Err(format!(
            "control character {} in forced command",
            crate::request::validate::Escaped(&c.to_string())
        ));
    }
    if let Some(c) = s.chars().find(|c| {
        matches!(
            c,
            ';' | '|'
                | '&'
                | '$'
                | '`'
                | '<'
                | '>'
                | '\\'
                | '('
                | ')'
                | '{'
                | '}'
                | '*'
                | '?'
                | '['
                | ']'
                | '~'
                | '!'
                | '#'
        )
    }) {
        return Err(format!(
            "character {c:?} is not allowed in a forced command"
        ));
    }
    let mut tokens = Vec::new();
    let mut cur = String::new();
    let mut in_token = false;
    let mut quote: Option<char> = None;
    for c in s.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_token = true;
            }
            (None, ' ' | '\t') => {
                if in_token {
                    tokens.push(std::mem::take(&mut cur));
                    in_token = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_token = true;
            }
        }
    }
    if quote.is_some() {
        return Err("unterminated quote in forced command".into());
    }
    if in_token {
        tokens.push(cur);
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_and_quotes() {
        assert_eq!(parse("").unwrap(), Forced::Json);
        assert_eq!(parse("run").unwrap(), Forced::Json);
        assert_eq!(parse("true").unwrap(), Forced::Health);
        assert_eq!(parse("mercury version").unwrap(), Forced::Version);
        assert_eq!(
            parse("attach-port --device leaf-1 --port Ethernet1/5 --vlan 120 --reason 'CHG 1'")
                .unwrap(),
            Forced::Args(
                [
                    "attach-port",
                    "--device",
                    "leaf-1",
                    "--port",
                    "Ethernet1/5",
                    "--vlan",
                    "120",
                    "--reason",
                    "CHG 1"
                ]
                .map(String::from)
                .to_vec()
            )
        );
    }

    #[test]
    fn verify_is_allowed_over_ssh() {
        assert!(matches!(
            parse("attach-port --verify --device leaf-1 --port E1 --vlan 120 --reason r"),
            Ok(Forced::Args(_))
        ));
        assert!(matches!(
            parse("verify-port --device leaf-1 --port E1 --mode access --native-vlan 120"),
            Ok(Forced::Args(_))
        ));
    }

    #[test]
    fn refusals() {
        for bad in [
            "attach-port --config /tmp/x.toml",
            "attach-port --config=/tmp/x.toml",
            "attach-port -v",
            "attach-port --verbose",
            "run --request /etc/shadow",
            "check",
            "serve-ssh --caller other",
            "attach_port",
            "reload",
            "attach-port --port E1;reload",
            "attach-port --port $(id)",
            "attach-port --port `id`",
            "attach-port --reason 'a\nb'",
            "attach-port --reason \"a\rb\"",
            "attach-port --port E1 | cat",
            "attach-port --port E1 && x",
            "attach-port --reason 'unterminated",
            "attach-port --reason a\\b",
            "true now",
            "attach-port --reason a\u{2028}b",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} accepted");
        }
        assert!(parse(&"x".repeat(MAX_LEN + 1)).is_err());
    }
}
