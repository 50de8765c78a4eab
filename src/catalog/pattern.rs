//! How the catalog's regular expressions are compiled: Rust `regex` syntax, with the Perl
//! classes `\w`, `\d`, `\s` (and `\W`, `\D`, `\S` outside a bracket class) meaning their
//! ASCII sets. Prompts, port names, failure lines and listings of network devices are
//! ASCII; Unicode `\w` (some 700 ranges) made every prompt pattern a large automaton — four
//! IOS prompts cost about 5 ms and 3 MiB to compile and first match, the ASCII forms
//! 0.4 ms and nothing measurable (docs/proof.md, "Close to the floor"). It also keeps a
//! port number `\d+` to the digits 0-9.

use regex::Regex;

const WORD: &str = "0-9A-Za-z_";
const DIGIT: &str = "0-9";
const SPACE: &str = r"\t\n\x0B\x0C\r ";

/// `source` with its Perl classes spelt as ASCII bracket classes (escapes, other classes,
/// flags and everything else unchanged).
pub(crate) fn ascii_classes(source: &str) -> String {
    let mut out = String::with_capacity(source.len() + 16);
    // Depth of bracket classes, and whether we are right after `[` or `[^` (where `]` is a
    // literal).
    let mut depth = 0usize;
    let mut class_start = false;
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        let was_start = class_start;
        class_start = false;
        match c {
            '\\' => {
                let Some(n) = chars.next() else {
                    out.push('\\');
                    break;
                };
                let set = match n {
                    'w' | 'W' => Some(WORD),
                    'd' | 'D' => Some(DIGIT),
                    's' | 'S' => Some(SPACE),
                    _ => None,
                };
                match (set, depth > 0, n.is_ascii_uppercase()) {
                    (Some(s), true, false) => out.push_str(s),
                    (Some(s), false, false) => {
                        out.push('[');
                        out.push_str(s);
                        out.push(']');
                    }
                    (Some(s), false, true) => {
                        out.push_str("[^");
                        out.push_str(s);
                        out.push(']');
                    }
                    // A negated class inside a bracket class stays as written.
                    _ => {
                        out.push('\\');
                        out.push(n);
                    }
                }
            }
            '[' if depth > 0 && chars.peek() == Some(&':') => {
                // `[:alpha:]` inside a class: copied through to its `:]`.
                out.push('[');
                for d in chars.by_ref() {
                    out.push(d);
                    if d == ']' {
                        break;
                    }
                }
            }
            '[' => {
                depth += 1;
                out.push('[');
                if chars.peek() == Some(&'^') {
                    chars.next();
                    out.push('^');
                }
                class_start = true;
            }
            ']' if depth > 0 && !was_start => {
                depth -= 1;
                out.push(']');
            }
            _ => out.push(c),
        }
    }
    out
}

/// Compiles a catalog pattern (see the module docs).
pub(crate) fn compile(source: &str) -> Result<Regex, regex::Error> {
    Regex::new(&ascii_classes(source))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perl_classes_become_ascii_sets() {
        for (from, to) in [
            (r"^(?P<host>[\w.\-]+)#", r"^(?P<host>[0-9A-Za-z_.\-]+)#"),
            (r"\d+/\d+", "[0-9]+/[0-9]+"),
            (
                r"^\s*\S+\W",
                r"^[\t\n\x0B\x0C\r ]*[^\t\n\x0B\x0C\r ]+[^0-9A-Za-z_]",
            ),
            (r"[^\]\w]+", r"[^\]0-9A-Za-z_]+"),
            (r"[]\d]", "[]0-9]"),
            (r"[[:alpha:]\d]x\w", "[[:alpha:]0-9]x[0-9A-Za-z_]"),
            (r"\\w \[\w\]", r"\\w \[[0-9A-Za-z_]\]"),
            (r"[\W]", r"[\W]"),
            (r"\x{41}\p{L}", r"\x{41}\p{L}"),
        ] {
            assert_eq!(ascii_classes(from), to, "{from}");
            assert!(Regex::new(to).is_ok(), "{to}");
        }
    }

    #[test]
    fn ascii_word_and_digit_only() {
        let r = compile(r"^\w+ \d+$").unwrap();
        assert!(r.is_match("leaf_1 42"));
        assert!(!r.is_match("lëaf 42"));
        assert!(
            !r.is_match("leaf ٤٢"),
            "Arabic-Indic digits are not a port number"
        );
    }
}
