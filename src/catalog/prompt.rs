//! Prompt patterns: compiled end-anchored, so a prompt-like line in output never counts, and
//! pinned to the host name seen at login.

use super::pattern::{Pattern, Syntax};

/// A prompt pattern, matched at the very end of the received output.
#[derive(Debug, Clone)]
pub struct Prompt {
    /// The pattern as written in the catalog.
    pub source: String,
    /// The compiled end-anchored form.
    pub regex: Pattern,
}

impl Prompt {
    pub(crate) fn compile(source: &str, syntax: Syntax) -> Result<Prompt, String> {
        // Multi-line so `^` anchors a line start; the match must reach the end of the
        // buffer (trailing blanks allowed) so a prompt-like line in output never counts.
        let anchored = format!(r"(?m)(?:{source})[ \t]*\z");
        let regex = super::pattern::compile(&anchored, syntax)
            .map_err(|e| format!("prompt {source:?}: {e}"))?;
        Ok(Prompt {
            source: source.to_string(),
            regex,
        })
    }

    /// This prompt with its `host` group replaced by the literal `host` pinned at login, or
    /// `None` when the pattern has no `host` group. A pattern like `[\w.-]+-[^\]]+` cannot
    /// tell where a dashed host name ends (`[leaf-1-Eth-Trunk7]`); the literal can.
    pub fn pinned(&self, host: &str) -> Option<Pattern> {
        let start = self.source.find("(?P<host>")?;
        let end = group_end(&self.source, start)?;
        let source = format!(
            "{}(?P<host>{}){}",
            &self.source[..start],
            regex::escape(host),
            &self.source[end + 1..]
        );
        // The host is escaped into a pattern that was itself compiled: nothing to check.
        Prompt::compile(&source, Syntax::Trusted)
            .ok()
            .map(|p| p.regex)
    }

    /// Whether the tail of `text` is this prompt; returns the `host` capture if any.
    pub fn matches<'t>(&self, text: &'t str) -> Option<Option<&'t str>> {
        self.regex
            .captures(text)
            .map(|c| c.name("host").map(|m| m.as_str()))
    }
}

/// The index of the `)` closing the group that opens at `start` in a regex source,
/// skipping escapes and character classes.
fn group_end(source: &str, start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut class = false;
    let mut chars = source[start..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '[' if !class => class = true,
            ']' if class => class = false,
            '(' if !class => depth += 1,
            ')' if !class => {
                depth -= 1;
                if depth == 0 {
                    return Some(start + i);
                }
            }
            _ => {}
        }
    }
    None
}
