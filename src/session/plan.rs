//! What a session is handed to send: [`Line`]s and the [`Plan`] that orders them.
//!
//! This is data, produced by a driver and consumed by a session (and spooled for
//! coalescing); it knows nothing of platforms or requests.

/// One line to type (CLI) or run (exec).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// What is shown in results and audit; for exec platforms the shell-quoted command.
    pub text: String,
    /// Exec platforms: the argument vector, each element one rendered template token.
    pub argv: Option<Vec<String>>,
}

impl Line {
    /// A CLI line, typed as is.
    pub fn cli(text: impl Into<String>) -> Line {
        Line {
            text: text.into(),
            argv: None,
        }
    }

    /// An exec line from its argument vector; the text is the shell-quoted form a remote
    /// shell receives.
    pub fn exec(argv: Vec<String>) -> Line {
        Line {
            text: shell_join(&argv),
            argv: Some(argv),
        }
    }

    /// An exec line fixed in the catalog (commit, save, abort): its words are its arguments.
    pub fn words(text: &str) -> Line {
        Line {
            text: text.to_string(),
            argv: Some(text.split_whitespace().map(str::to_string).collect()),
        }
    }
}

/// The configuration lines a request needs, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Lines typed in configuration mode (CLI) or run one per channel (exec).
    pub lines: Vec<Line>,
    /// Notes for the caller (e.g. a description was sanitised).
    pub warnings: Vec<String>,
}

impl Plan {
    /// A plan of CLI lines (tests, fuzzing, replays).
    pub fn cli(lines: &[&str]) -> Plan {
        Plan {
            lines: lines.iter().map(|l| Line::cli(*l)).collect(),
            warnings: Vec::new(),
        }
    }
}

/// POSIX-shell-quotes each argument that needs it and joins with spaces; what a remote
/// shell behind an SSH exec channel receives.
pub fn shell_join(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.chars().all(|c| {
                    c.is_ascii_alphanumeric()
                        || matches!(c, '_' | '-' | '.' | '/' | ':' | ',' | '=' | '@' | '+')
                });
            if plain {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quoting() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(shell_join(&v(&["nv", "set", "a b"])), "nv set 'a b'");
        assert_eq!(shell_join(&v(&["it's"])), r"'it'\''s'");
        assert_eq!(shell_join(&v(&["$(x)"])), "'$(x)'");
    }
}
