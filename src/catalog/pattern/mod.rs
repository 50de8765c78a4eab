//! How the catalog's regular expressions are compiled: Rust `regex` syntax, with the Perl
//! classes `\w`, `\d`, `\s` (and `\W`, `\D`, `\S` outside a bracket class) meaning their
//! ASCII sets. Prompts, port names, failure lines and listings of network devices are
//! ASCII; Unicode `\w` (some 700 ranges) made every prompt pattern a large automaton — four
//! IOS prompts cost about 5 ms and 3 MiB to compile and first match, the ASCII forms
//! 0.4 ms and nothing measurable (docs/proof.md, "Close to the floor"). It also keeps a
//! port number `\d+` to the digits 0-9. Word boundaries (`\b`, …) are ASCII the same way,
//! and case-insensitive scopes `(?i)` are rewritten into ASCII classes (module `fold`), so
//! the regex crate is built without its Unicode tables (Cargo.toml): a pattern with a
//! Unicode class (`\p{L}`) is a syntax error.
//!
//! A [`Pattern`] is checked when the platform is compiled (its syntax, by `regex-syntax`,
//! which is cheap) and built only when it is first matched. Most of a platform's patterns
//! are never matched by a dry run, and a waiter that hands its request to the lock holder
//! matches none.
//!
//! Matching (`is_match`, `find`, `captures`) runs on the small matcher (module `small`: a
//! Pike VM over a subset of the syntax, with the regex crate's leftmost-first results)
//! whenever the pattern is within its subset — every built-in pattern is, so an attach
//! of a built-in platform builds no regex automaton — and on the regex crate otherwise
//! (a plugins.d pattern with, say, a word boundary or a Perl class in brackets). A regex
//! automaton costs a fresh 320 KB table inside `regex-automata` for every pattern with a
//! non-ASCII class (`.`, `[^…]`), its caches, and the pages of its code; together the
//! largest avoidable part of a real attach's resident set, and of a dry run's CPU
//! (docs/proof.md, "Close to the floor"). [`Match`] and [`Captures`] are Mercury's own, so
//! callers do not know which engine answered.

use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

use regex::Regex;

mod fold;
mod small;
use small::Small;

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
                if depth == 0 && matches!(n, 'b' | 'B' | '<' | '>') {
                    // A word boundary, on ASCII word characters like `\w`: Unicode's needs
                    // the tables this module does without.
                    out.push_str("(?-u:\\");
                    out.push(n);
                    if n == 'b' && chars.peek() == Some(&'{') {
                        for d in chars.by_ref() {
                            out.push(d);
                            if d == '}' {
                                break;
                            }
                        }
                    }
                    out.push(')');
                    continue;
                }
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
                    // A negated class inside a bracket class: a nested negated class.
                    (Some(s), true, true) => {
                        out.push_str("[^");
                        out.push_str(s);
                        out.push(']');
                    }
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

/// A catalog pattern: its syntax checked, its automaton built on first use (module docs).
#[derive(Clone)]
pub struct Pattern {
    /// The pattern with ASCII classes, its case-insensitive scopes not yet spelt out.
    source: String,
    /// `source` with its `(?i)` scopes spelt out as ASCII classes (module `fold`), which
    /// is what is compiled; `None` when that is `source` itself. A trusted pattern works
    /// it out on first use: folding a platform's five `(?i)` patterns (parsing, printing
    /// and dropping their syntax trees) was 13 % of a dry run's instructions, for
    /// patterns a dry run or a waiter never matches.
    folded: OnceLock<Option<String>>,
    /// `Err`: a pattern whose syntax is valid but whose automaton exceeds the regex crate's
    /// size limit (only a plugins.d file can have one; `mercury check` refuses it). It
    /// matches nothing.
    compiled: OnceLock<Result<Regex, String>>,
    /// The pattern's [`Small`] form, worked out on the first match (`None`: it uses syntax
    /// beyond the small matcher's; the regex crate answers).
    small: OnceLock<Option<Small>>,
}

impl Pattern {
    /// The pattern as compiled (ASCII classes and case-insensitive scopes spelt out).
    pub fn as_str(&self) -> &str {
        self.folded
            .get_or_init(|| match fold::ascii_case(&self.source) {
                Ok(Cow::Owned(s)) => Some(s),
                Ok(Cow::Borrowed(_)) => None,
                // A trusted pattern the lint has read: cannot happen. Compiled as written,
                // the regex crate refuses it, and the pattern matches nothing (logged).
                Err(e) => {
                    log::error!("catalog pattern {:?} cannot be folded: {e}", self.source);
                    None
                }
            })
            .as_deref()
            .unwrap_or(&self.source)
    }

    /// Whether the automaton has been built (the regex crate's, or the small matcher's).
    pub fn is_built(&self) -> bool {
        self.compiled.get().is_some() || self.small.get().is_some_and(Option::is_some)
    }

    /// Whether the regex crate's automaton has been built (tests check that an attach
    /// never needs one).
    #[cfg(test)]
    pub(crate) fn built_by_the_regex_crate(&self) -> bool {
        self.compiled.get().is_some()
    }

    fn small(&self) -> Option<&Small> {
        self.small
            .get_or_init(|| Small::parse(self.as_str()))
            .as_ref()
    }

    /// Builds the automaton now (the lint and `mercury check` do, for every pattern).
    pub fn build(&self) -> Result<&Regex, String> {
        self.compiled
            .get_or_init(|| Regex::new(self.as_str()).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(Clone::clone)
    }

    fn regex(&self) -> Option<&Regex> {
        match self.build() {
            Ok(r) => Some(r),
            Err(e) => {
                log::error!("catalog pattern {:?} cannot be built: {e}", self.as_str());
                None
            }
        }
    }

    /// [`Regex::is_match`]; answered without the regex crate when the pattern is small
    /// (module `small`).
    pub fn is_match(&self, text: &str) -> bool {
        match self.small() {
            Some(s) => s.is_match(text),
            None => self.regex().is_some_and(|r| r.is_match(text)),
        }
    }

    /// The first match in `text`, as [`Regex::find`] finds it; without the regex crate when
    /// the pattern is small.
    pub fn find<'t>(&self, text: &'t str) -> Option<Match<'t>> {
        let (start, end) = match self.small() {
            Some(s) => s.find(text)?,
            None => {
                let m = self.regex()?.find(text)?;
                (m.start(), m.end())
            }
        };
        Some(Match { text, start, end })
    }

    /// The groups of the first match in `text`, as [`Regex::captures`] finds them; without
    /// the regex crate when the pattern is small.
    pub fn captures<'t>(&self, text: &'t str) -> Option<Captures<'_, 't>> {
        let slots = match self.small() {
            Some(s) => s.captures(text)?,
            None => self
                .regex()?
                .captures(text)?
                .iter()
                .flat_map(|m| match m {
                    Some(m) => [Some(m.start()), Some(m.end())],
                    None => [None, None],
                })
                .collect(),
        };
        Some(Captures {
            pattern: self,
            text,
            slots,
        })
    }

    /// The index of the group called `name` (the engine that matched knows its groups).
    fn group_index(&self, name: &str) -> Option<usize> {
        match self.small() {
            Some(s) => s.group_index(name),
            None => self.regex()?.capture_names().position(|n| n == Some(name)),
        }
    }
}

/// Where a pattern matched in a text (the small matcher's or the regex crate's match).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Match<'t> {
    text: &'t str,
    start: usize,
    end: usize,
}

impl<'t> Match<'t> {
    /// The byte offset where the match starts.
    pub fn start(&self) -> usize {
        self.start
    }

    /// The byte offset just after the match.
    pub fn end(&self) -> usize {
        self.end
    }

    /// `start..end`.
    pub fn range(&self) -> std::ops::Range<usize> {
        self.start..self.end
    }

    /// The matched text.
    pub fn as_str(&self) -> &'t str {
        &self.text[self.start..self.end]
    }
}

/// The groups of a match: group 0 is the whole match, a group that took no part in it is
/// `None`.
#[derive(Debug, Clone)]
pub struct Captures<'p, 't> {
    pattern: &'p Pattern,
    text: &'t str,
    /// Start and end of each group, group 0 first.
    slots: Vec<Option<usize>>,
}

impl<'t> Captures<'_, 't> {
    /// Group `i`, if it took part in the match.
    pub fn get(&self, i: usize) -> Option<Match<'t>> {
        let start = (*self.slots.get(2 * i)?)?;
        let end = (*self.slots.get(2 * i + 1)?)?;
        Some(Match {
            text: self.text,
            start,
            end,
        })
    }

    /// The group called `name`, if the pattern has one and it took part in the match.
    pub fn name(&self, name: &str) -> Option<Match<'t>> {
        self.get(self.pattern.group_index(name)?)
    }
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Pattern").field(&self.as_str()).finish()
    }
}

/// Whether [`compile`] checks a pattern's syntax at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Syntax {
    /// Checked now (a plugins.d file, a test, anything typed by a person).
    Check,
    /// Left to the first match: the built-in catalog, whose every pattern the lint builds
    /// in the unit tests (`builtin_catalog_passes_the_lint`), and patterns derived from
    /// checked ones by escaping (a prompt pinned to its host). Parsing a platform's ~40
    /// patterns was 7 % of a dry run's CPU (docs/proof.md, issue 18).
    Trusted,
}

/// Compiles a catalog pattern (see the module docs): checks its syntax now (if asked),
/// builds it on first use.
pub(crate) fn compile(source: &str, syntax: Syntax) -> Result<Pattern, String> {
    let source = ascii_classes(source);
    let folded = OnceLock::new();
    if syntax == Syntax::Check {
        let f = match fold::ascii_case(&source)? {
            Cow::Owned(s) => Some(s),
            Cow::Borrowed(_) => None,
        };
        regex_syntax::ParserBuilder::new()
            .build()
            .parse(f.as_deref().unwrap_or(&source))
            .map_err(|e| e.to_string())?;
        let _ = folded.set(f);
    }
    Ok(Pattern {
        source,
        folded,
        compiled: OnceLock::new(),
        small: OnceLock::new(),
    })
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
            (r"[\W]", r"[[^0-9A-Za-z_]]"),
            (r"[^\Sx]", r"[^[^\t\n\x0B\x0C\r ]x]"),
            (r"\x{41}\p{L}", r"\x{41}\p{L}"),
            (r"\bx\B", r"(?-u:\b)x(?-u:\B)"),
            (r"\b{start}x\>", r"(?-u:\b{start})x(?-u:\>)"),
        ] {
            assert_eq!(ascii_classes(from), to, "{from}");
            assert!(to.contains(r"\p{L}") || Regex::new(to).is_ok(), "{to}");
        }
    }

    #[test]
    fn a_pattern_is_checked_at_once_and_built_on_first_use() {
        let p = compile(r"^% Invalid .*$", Syntax::Check).unwrap();
        assert!(!p.is_built());
        assert!(p.is_match("% Invalid input detected"));
        assert!(p.is_built());
        // Syntax errors are still the catalog's errors, when the platform is compiled.
        let e = compile(r"^(unclosed", Syntax::Check).unwrap_err();
        assert!(e.contains("unclosed"), "{e}");
        assert!(compile(r"\p{NoSuchClass}", Syntax::Check).is_err());
    }

    #[test]
    fn a_pattern_over_the_size_limit_matches_nothing_and_says_why() {
        // Valid syntax, an automaton far over the regex crate's default size limit.
        let p = compile(r"(?:[^a]{100}){1000}x", Syntax::Check).unwrap();
        assert!(p.build().is_err());
        assert!(!p.is_match(&"a".repeat(10_001)));
    }

    /// Issue 18: every pattern a cisco_ios attach matches — prompts (pinned to the host
    /// or not), questions, failure and temporary-failure lines, the LAG and port names —
    /// is answered by the small matcher, through `is_match`, `find` and `captures`, and no
    /// regex-crate automaton is built.
    #[test]
    fn every_cisco_ios_pattern_is_small() {
        let catalog = crate::catalog::Catalog::builtin().unwrap();
        let p = catalog.get("cisco_ios").unwrap();
        let pinned: Vec<Pattern> = p
            .modes
            .iter()
            .filter_map(|m| m.prompt.pinned("sw-01.lab"))
            .collect();
        assert_eq!(pinned.len(), p.modes.len());
        let mut patterns = p.patterns();
        patterns.extend(pinned.iter().map(|r| ("pinned prompt".to_string(), r)));
        for (what, r) in patterns {
            assert!(
                Small::parse(r.as_str()).is_some(),
                "cisco_ios {what} {:?} is beyond the small matcher",
                r.as_str()
            );
            for text in [
                "sw-01.lab(config-if)#",
                "% Invalid input",
                "Port-channel7",
                "",
            ] {
                r.is_match(text);
                r.find(text);
                r.captures(text);
            }
            assert!(!r.built_by_the_regex_crate(), "cisco_ios {what}");
        }
    }

    #[test]
    fn matches_and_groups_are_reported_alike_by_both_engines() {
        // The same pattern, once small and once beyond the subset (a class intersection,
        // which the small matcher leaves to the regex crate).
        let small = compile(r"^(?P<host>[a-z]+)(-[0-9])?#", Syntax::Check).unwrap();
        let regex = compile(r"^(?P<host>[a-z&&[^=]]+)(-[0-9])?#", Syntax::Check).unwrap();
        assert!(Small::parse(small.as_str()).is_some());
        assert!(Small::parse(regex.as_str()).is_none());
        for r in [&small, &regex] {
            let m = r.find("leaf# x").unwrap();
            assert_eq!(
                (m.start(), m.end(), m.range(), m.as_str()),
                (0, 5, 0..5, "leaf#")
            );
            let c = r.captures("leaf#").unwrap();
            assert_eq!(c.get(0).map(|m| m.as_str()), Some("leaf#"));
            assert_eq!(c.name("host").map(|m| m.range()), Some(0..4));
            assert_eq!(c.get(1).map(|m| m.as_str()), Some("leaf"));
            assert!(c.get(2).is_none(), "a group that took no part");
            assert!(c.get(3).is_none() && c.name("nope").is_none());
            assert_eq!(
                r.captures("sw-1#")
                    .and_then(|c| c.get(2))
                    .map(|m| m.as_str()),
                Some("-1")
            );
            assert!(r.find("LEAF#").is_none() && r.captures("LEAF#").is_none());
        }
        assert!(!small.built_by_the_regex_crate());
        assert!(regex.built_by_the_regex_crate());
    }

    #[test]
    fn a_trusted_pattern_is_folded_on_first_use_only() {
        // A dry run compiles its platform and matches none of its `(?i)` patterns.
        let catalog = crate::catalog::Catalog::builtin().unwrap();
        let ios = catalog.get("cisco_ios").unwrap();
        let unfolded = ios
            .patterns()
            .iter()
            .filter(|(_, p)| p.source.contains("(?i)") && p.folded.get().is_none())
            .count();
        assert!(
            unfolded >= 4,
            "{unfolded} (?i) patterns left to their first use"
        );

        let p = compile("(?i)^% ?error", Syntax::Trusted).unwrap();
        assert!(p.folded.get().is_none(), "folded when compiled");
        assert!(p.is_match("% ERROR") && !p.is_match("error"));
        assert_eq!(p.as_str(), "^% ?[eE][rR][rR][oO][rR]");
        // Checked patterns are folded at once, so that their errors are the caller's.
        let c = compile("(?i)^% ?error", Syntax::Check).unwrap();
        assert!(c.folded.get().is_some());
        assert!(compile("(?i)(unclosed", Syntax::Check).is_err());
    }

    #[test]
    fn ascii_word_and_digit_only() {
        let b = compile(r"\bfoo\b", Syntax::Check).unwrap();
        assert!(b.is_match("a foo b") && b.is_match("(foo)"));
        assert!(!b.is_match("afoob") && !b.is_match("_foo"));
        let not_space = compile(r"^[^\Sx]$", Syntax::Check).unwrap();
        assert!(not_space.is_match("\t") && !not_space.is_match("y") && !not_space.is_match("x"));
        let r = compile(r"^\w+ \d+$", Syntax::Check).unwrap();
        assert!(r.is_match("leaf_1 42"));
        assert!(!r.is_match("lëaf 42"));
        assert!(
            !r.is_match("leaf ٤٢"),
            "Arabic-Indic digits are not a port number"
        );
    }
}
