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
    /// This line enters a configuration sub-mode (`interface X`): how many of the lines
    /// after it make up the block, its closing line (back to the mode the line was typed
    /// in) last. 0: not a block's opening line. Set by the driver from the templates it
    /// rendered (`port_enter` ... `port_exit`); a `type_ahead` CLI session sends a block's
    /// lines after its opening one in one write.
    pub opens: usize,
}

impl Line {
    /// A CLI line, typed as is.
    pub fn cli(text: impl Into<String>) -> Line {
        Line {
            text: text.into(),
            argv: None,
            opens: 0,
        }
    }

    /// An exec line from its argument vector; the text is the shell-quoted form a remote
    /// shell receives.
    pub fn exec(argv: Vec<String>) -> Line {
        Line {
            text: shell_join(&argv),
            argv: Some(argv),
            opens: 0,
        }
    }

    /// An exec line fixed in the catalog (commit, save, abort): its words are its arguments.
    pub fn words(text: &str) -> Line {
        Line {
            text: text.to_string(),
            argv: Some(text.split_whitespace().map(str::to_string).collect()),
            opens: 0,
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

    /// Marks `lines[at]` as opening a block of the `len` lines after it (its closing line
    /// last); ignored where the plan has fewer lines after it.
    pub fn block(mut self, at: usize, len: usize) -> Plan {
        if at + len < self.lines.len() {
            if let Some(l) = self.lines.get_mut(at) {
                l.opens = len;
            }
        }
        self
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
