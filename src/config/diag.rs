//! Configuration messages that name the file, the line and the key — never the value.
//!
//! A broken `mercury.toml` line may hold a secret someone pasted in the wrong place
//! (`password = "hunter2"`), and configuration errors reach serve-ssh and JSON-RPC callers
//! as well as the terminal. The TOML parser's own message quotes the offending source line
//! and often the value (`invalid type: string "hunter2"`), so it is never shown as is: this
//! module finds the line, column and dotted key of the error (from the document's spans),
//! rewords the parser's message into what was expected, and as a last guard blanks every
//! word of the offending value that still appears in the message.

use std::ops::Range;

use toml_edit::{ImDocument, Item, Table, Value};

use crate::request::validate::printable;

/// Keys people use for inline secrets; they get a pointer to the `*_file` keys instead.
const INLINE_SECRET_KEYS: &[(&str, &str)] = &[
    ("password", "password_file"),
    ("pass", "password_file"),
    ("secret", "enable_secret_file"),
    ("enable_secret", "enable_secret_file"),
    ("enable_password", "enable_secret_file"),
    ("passphrase", "passphrase_file"),
    ("key", "key_file"),
    ("private_key", "key_file"),
];

/// The configuration text with its parsed spans (when the syntax is valid).
pub(super) struct Source<'a> {
    text: &'a str,
    doc: Option<ImDocument<&'a str>>,
}

impl<'a> Source<'a> {
    /// Parses `text` for spans; a syntax error leaves only line and column to report.
    pub(super) fn new(text: &'a str) -> Source<'a> {
        Source {
            text,
            doc: ImDocument::parse(text).ok(),
        }
    }

    /// 1-based line and column of byte offset `pos`.
    fn line_col(&self, pos: usize) -> (usize, usize) {
        let pos = pos.min(self.text.len());
        let before = self.text.get(..pos).unwrap_or_default();
        let line = before.matches('\n').count() + 1;
        let col = before
            .rsplit('\n')
            .next()
            .map(|l| l.chars().count() + 1)
            .unwrap_or(1);
        (line, col)
    }

    /// The line a dotted key is defined on (`devices.leaf-1.platform`), if it is in the file.
    pub(super) fn line_of(&self, key: &[&str]) -> Option<usize> {
        let span = self.span_of(key)?;
        Some(self.line_col(span.start).0)
    }

    /// The span of the value of a dotted key.
    fn span_of(&self, key: &[&str]) -> Option<Range<usize>> {
        let doc = self.doc.as_ref()?;
        let mut table = doc.as_table();
        let (last, parents) = key.split_last()?;
        for k in parents {
            table = table.get(k)?.as_table()?;
        }
        match table.get_key_value(last)? {
            (_, Item::Value(v)) => v.span(),
            (k, _) => k.span(),
        }
    }

    /// The text of a dotted key's value (for redaction), if it is in the file.
    pub(super) fn value_text(&self, key: &[&str]) -> Option<&'a str> {
        let span = self.span_of(key)?;
        self.text.get(span)
    }

    /// The dotted key whose key or value covers `pos`, and the span of its value.
    fn key_at(&self, pos: usize) -> Option<(String, Option<Range<usize>>)> {
        let doc = self.doc.as_ref()?;
        find_in_table(doc.as_table(), pos, "")
    }

    /// The message for a TOML error: position, key, what was expected; no value.
    pub(super) fn describe(&self, e: &toml::de::Error) -> String {
        let pos = e.span().map(|s| s.start);
        let found = pos.and_then(|p| self.key_at(p));
        let mut out = String::new();
        if let Some(p) = pos {
            let (line, col) = self.line_col(p);
            out.push_str(&format!("line {line}, column {col}: "));
        }
        let (key, value_span) = match &found {
            Some((k, v)) => (Some(k.as_str()), v.clone()),
            None => (None, None),
        };
        match key {
            Some(k) => out.push_str(&format!("{}: ", printable(k))),
            None if self.doc.is_none() => out.push_str("TOML syntax: "),
            None => {}
        }
        let what = reword(e.message());
        // The words of the offending value: its span when the key is known, else what the
        // error line holds after `=` (or the whole line: a stray secret on a line of its own).
        let value = match value_span.and_then(|s| self.text.get(s)) {
            Some(v) => v.to_string(),
            None => {
                let line = pos.map(|p| self.line_text(p)).unwrap_or_default();
                match line.split_once('=') {
                    Some((_, v)) => v.to_string(),
                    None => line.to_string(),
                }
            }
        };
        out.push_str(&redact(&what, &value));
        out
    }

    fn line_text(&self, pos: usize) -> &'a str {
        let pos = pos.min(self.text.len());
        let start = self
            .text
            .get(..pos)
            .and_then(|b| b.rfind('\n'))
            .map(|i| i + 1)
            .unwrap_or(0);
        let end = self
            .text
            .get(pos..)
            .and_then(|a| a.find('\n'))
            .map(|i| pos + i)
            .unwrap_or(self.text.len());
        self.text.get(start..end).unwrap_or_default()
    }
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

fn covers(span: &Option<Range<usize>>, pos: usize) -> bool {
    span.as_ref().is_some_and(|s| s.contains(&pos))
}

fn find_in_table(t: &Table, pos: usize, prefix: &str) -> Option<(String, Option<Range<usize>>)> {
    for (k, item) in t.iter() {
        let path = join(prefix, k);
        let key_span = t.key(k).and_then(|k| k.span());
        match item {
            Item::Value(v) => {
                if covers(&key_span, pos) {
                    return Some((path, v.span()));
                }
                if let Some(found) = find_in_value(v, pos, &path) {
                    return Some(found);
                }
            }
            Item::Table(sub) => {
                if covers(&key_span, pos) {
                    return Some((path, None));
                }
                if let Some(found) = find_in_table(sub, pos, &path) {
                    return Some(found);
                }
            }
            Item::ArrayOfTables(a) => {
                for (i, sub) in a.iter().enumerate() {
                    if let Some(found) = find_in_table(sub, pos, &format!("{path}[{i}]")) {
                        return Some(found);
                    }
                }
            }
            Item::None => {}
        }
    }
    None
}

fn find_in_value(v: &Value, pos: usize, path: &str) -> Option<(String, Option<Range<usize>>)> {
    let span = v.span();
    if !covers(&span, pos) {
        return None;
    }
    match v {
        Value::Array(a) => {
            for (i, item) in a.iter().enumerate() {
                if let Some(found) = find_in_value(item, pos, &format!("{path}[{i}]")) {
                    return Some(found);
                }
            }
        }
        Value::InlineTable(t) => {
            for (k, item) in t.iter() {
                let sub = join(path, k);
                let key_span = t.key(k).and_then(|k| k.span());
                if covers(&key_span, pos) {
                    return Some((sub, item.span()));
                }
                if let Some(found) = find_in_value(item, pos, &sub) {
                    return Some(found);
                }
            }
        }
        _ => {}
    }
    Some((path.to_string(), span))
}

/// The parser's message without the value it quotes: serde's `invalid type: string
/// "VALUE", expected X` becomes `wrong type, expected X`, and so on.
fn reword(message: &str) -> String {
    let message = message.trim();
    let expected = |m: &str| {
        m.rfind(", expected ")
            .map(|i| m[i + 2..].to_string())
            .unwrap_or_default()
    };
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let name = rest.split('`').next().unwrap_or_default();
        if let Some((_, file_key)) = INLINE_SECRET_KEYS.iter().find(|(k, _)| *k == name) {
            return format!(
                "unknown key: secrets are never written in mercury.toml; put the value in a file \
                 only the mercury user can read (chmod 600) and name that file with {file_key}"
            );
        }
        // The known keys are backquoted in serde's message: suggest the closest.
        let expected_keys = expected(message);
        let known: Vec<&str> = expected_keys.split('`').skip(1).step_by(2).collect();
        let hint = crate::util::suggest::did_you_mean(name, known.iter().copied());
        return match expected(message) {
            e if e.is_empty() => "unknown key".to_string(),
            e => format!("unknown key{hint} ({e})"),
        };
    }
    for (prefix, said) in [
        ("invalid type: ", "wrong type"),
        ("invalid value: ", "invalid value"),
        ("unknown variant ", "unknown value"),
        ("invalid length ", "wrong number of items"),
    ] {
        if message.starts_with(prefix) {
            return match expected(message) {
                e if e.is_empty() => said.to_string(),
                e => format!("{said}, {e}"),
            };
        }
    }
    // The parser's syntax messages and Mercury's own (VLAN ranges) are kept, on one line.
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Blanks, in `message`, every word (run of letters and digits, two or more) of `value`,
/// and the value itself: whatever the message says, it cannot repeat the value.
pub(super) fn redact(message: &str, value: &str) -> String {
    let mut words: Vec<&str> = value
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 2)
        .collect();
    let inner = value.trim().trim_matches(['"', '\'']);
    if inner.chars().count() >= 2 {
        words.push(inner);
    }
    words.sort_by_key(|w| std::cmp::Reverse(w.len()));
    let mut out = message.to_string();
    for w in words {
        out = out.replace(w, "…");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Dev {
        platform: Option<String>,
        port: Option<u16>,
        save_config: Option<bool>,
        aliases: Option<Vec<String>>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct File {
        #[serde(default)]
        devices: std::collections::BTreeMap<String, Dev>,
    }

    fn message(text: &str) -> String {
        let e = toml::from_str::<File>(text).unwrap_err();
        Source::new(text).describe(&e)
    }

    #[test]
    fn no_message_repeats_the_value() {
        for (text, want) in [
            (
                "[devices.a]\nplatform = \"x\"\npassword = \"hunter2\"\n",
                "line 3, column 1: devices.a.password: unknown key: secrets are never written",
            ),
            (
                "[devices.a]\nport = \"hunter2\"\n",
                "line 2, column 8: devices.a.port: wrong type, expected u16",
            ),
            (
                "[devices.a]\nsave_config = \"hunter2\"\n",
                "devices.a.save_config: wrong type, expected a boolean",
            ),
            (
                "[devices.a]\naliases = [\n  \"a\",\n  1234567,\n]\n",
                "line 4, column 3: devices.a.aliases[1]: wrong type, expected a string",
            ),
            ("[devices.a]\nhunter2\n", "line 2, column 8: TOML syntax: "),
            ("[devices.a]\nplatform = \"hunter2\n", "TOML syntax: "),
            (
                "[devices.a]\nport = 99999\n",
                "devices.a.port: invalid value, expected u16",
            ),
            (
                "[devices.a]\nplatform = { hunter2 = 1 }\n",
                "devices.a.platform: wrong type, expected a string",
            ),
        ] {
            let m = message(text);
            assert!(m.contains(want), "{text:?}: {m}");
            for secret in ["hunter2", "1234567", "99999"] {
                assert!(!m.contains(secret), "{text:?}: {m}");
            }
            assert!(!m.contains('\n'), "{m:?}");
        }
    }

    #[test]
    fn redaction_blanks_every_word_of_the_value() {
        assert_eq!(
            redact("VLAN 5000 is out of range", "[\"1-5000\"]"),
            "VLAN … is out of range"
        );
        assert_eq!(redact("bad \"hunter2!x\"", "\"hunter2!x\""), "bad \"…\"");
    }

    #[test]
    fn keys_have_lines() {
        let s = Source::new("[defaults]\nlock_dir = \"x\"\n[devices.a]\n\nplatform = \"p\"\n");
        assert_eq!(s.line_of(&["devices", "a", "platform"]), Some(5));
        assert_eq!(s.line_of(&["defaults", "lock_dir"]), Some(2));
        assert_eq!(s.line_of(&["devices", "b"]), None);
        assert_eq!(s.value_text(&["devices", "a", "platform"]), Some("\"p\""));
    }
}
