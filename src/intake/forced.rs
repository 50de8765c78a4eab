//! The forced-command grammar (`serve-ssh`): what a restricted SSH key may ask for.
//!
//! The request comes from `SSH_ORIGINAL_COMMAND`, tokenised here — never by a shell — into
//! a verb and flags. Only the operation verbs, `run` (JSON on stdin), and the health checks
//! `true` and `version` are accepted; only each verb's own flags plus `--dry-run`,
//! `--format` and `--verify` may follow. Anything that could change configuration, audit or
//! lock paths, read a file, or turn on diagnostics (`--config`, `--request`, `-v`,
//! `--verbose`) is refused, as are control and format characters anywhere, shell
//! metacharacters outside quotes, and overlong input. Quoting follows the POSIX shell's
//! rules closely enough that a command built with Python's `shlex.join` arrives word for
//! word, so a quoted reason may carry any printable text (`'CHG-1 (urgent)'`, `'node #7'`).
//! All refusals are usage errors (exit 64).

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
    /// An operation verb with its flags, ready for the CLI parser (without `argv[0]`).
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
        "check".to_string(),
    ];
    let mut cmd = crate::intake::cli::command();
    cmd.build();
    if let Some(sub) = cmd.find_subcommand(verb) {
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

/// Characters a shell would treat specially outside quotes. Outside quotes they are refused
/// (a caller who typed one expected a shell); inside quotes they are ordinary text.
const SHELL_SPECIAL: &[char] = &[
    ';', '|', '&', '$', '`', '<', '>', '\\', '(', ')', '{', '}', '*', '?', '[', ']', '~', '!', '#',
];

/// Splits like a POSIX shell would, without ever running one: words are separated by spaces
/// and tabs; `'...'` keeps everything literally; `"..."` too, except that `\"`, `\\`, `\$`
/// and `` \` `` stand for the character (an unescaped `$` or backquote inside `"..."` is
/// refused: a shell would expand it). Adjacent quoted and unquoted parts join into one word,
/// so Python's `shlex.join` / `shlex.quote` output (`'it'"'"'s'`) comes back as it was
/// quoted. Control and format characters are refused everywhere, shell metacharacters
/// outside quotes.
fn tokenize(s: &str) -> Result<Vec<String>, String> {
    use crate::request::validate::{is_dangerous, Escaped};
    if let Some(c) = s.chars().find(|c| is_dangerous(*c) && *c != '\t') {
        return Err(format!(
            "control or format character {} in forced command",
            Escaped(&c.to_string())
        ));
    }
    #[derive(Clone, Copy, PartialEq)]
    enum Quote {
        None,
        Single,
        Double,
    }
    let mut tokens = Vec::new();
    let mut cur = String::new();
    let mut in_token = false;
    let mut quote = Quote::None;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match quote {
            Quote::Single => match c {
                '\'' => quote = Quote::None,
                '\t' => return Err("tab inside a quoted word in forced command".into()),
                c => cur.push(c),
            },
            Quote::Double => match c {
                '"' => quote = Quote::None,
                '\\' => match chars.next() {
                    Some(e @ ('"' | '\\' | '$' | '`')) => cur.push(e),
                    Some(e) => {
                        cur.push('\\');
                        cur.push(e);
                    }
                    None => return Err("unterminated quote in forced command".into()),
                },
                '$' | '`' => {
                    return Err(format!(
                        "character {c:?} inside double quotes would be expanded by a shell; \
                         use single quotes"
                    ))
                }
                '\t' => return Err("tab inside a quoted word in forced command".into()),
                c => cur.push(c),
            },
            Quote::None => match c {
                '\'' => {
                    quote = Quote::Single;
                    in_token = true;
                }
                '"' => {
                    quote = Quote::Double;
                    in_token = true;
                }
                ' ' | '\t' => {
                    if in_token {
                        tokens.push(std::mem::take(&mut cur));
                        in_token = false;
                    }
                }
                c if SHELL_SPECIAL.contains(&c) => {
                    return Err(format!(
                        "character {c:?} is not allowed outside quotes in a forced command"
                    ))
                }
                c => {
                    cur.push(c);
                    in_token = true;
                }
            },
        }
    }
    if quote != Quote::None {
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

    fn reason_of(command: &str) -> String {
        match parse(command) {
            Ok(Forced::Args(a)) => {
                let i = a.iter().position(|t| t == "--reason").unwrap();
                a[i + 1].clone()
            }
            other => panic!("{command:?}: {other:?}"),
        }
    }

    #[test]
    fn a_quoted_reason_carries_any_printable_text() {
        for (command, reason) in [
            ("attach-port --reason 'CHG-1 (urgent)'", "CHG-1 (urgent)"),
            ("attach-port --reason 'node #7'", "node #7"),
            (
                "attach-port --reason 'a; b | c && $(d) `e` <f> *?[]~!{}'",
                "a; b | c && $(d) `e` <f> *?[]~!{}",
            ),
            ("attach-port --reason \"deploy node 7\"", "deploy node 7"),
            (
                "attach-port --reason \"say \\\"hi\\\" \\$5 \\\\ \\x\"",
                "say \"hi\" $5 \\ \\x",
            ),
            ("attach-port --reason 'back\\slash'", "back\\slash"),
            ("attach-port --reason 'Zürich → 東京 ✓'", "Zürich → 東京 ✓"),
            // shlex.quote("it's") == 'it'"'"'s'
            ("attach-port --reason 'it'\"'\"'s'", "it's"),
            ("attach-port --reason CHG-''1", "CHG-1"),
        ] {
            assert_eq!(reason_of(command), reason, "{command}");
        }
        assert_eq!(
            parse("attach-port --reason=\"x (y)\"").unwrap(),
            Forced::Args(vec!["attach-port".into(), "--reason=x (y)".into()])
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
            "attach-port --reason 'a\u{200b}b'",
            "attach-port --reason 'a\u{ad}b'",
            "attach-port --reason 'a\u{2060}b'",
            "attach-port --reason 'a\u{e0041}b'",
            "attach-port --reason 'a\tb'",
            "attach-port --reason \"$(id)\"",
            "attach-port --reason \"`id`\"",
            "attach-port --reason \"unterminated\\",
            "attach-port --reason (urgent)",
            "attach-port --reason node#7",
            "attach-port '--config' /tmp/x",
            "attach-port --reason ok '--config=/tmp/x'",
            "'attach-port' -v",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} accepted");
        }
        assert!(parse(&"x".repeat(MAX_LEN + 1)).is_err());
    }
}
