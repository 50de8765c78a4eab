//! The small matcher's syntax: a catalog pattern read into a [`Node`] tree, or `None` when
//! it uses anything outside the subset (module `small`'s docs list it).
//!
//! The reading follows `regex-syntax`'s parser rule for rule wherever the subset reaches
//! (which escapes are literals, where `-` and `]` are literal in a class, how far a flag
//! reaches), so a pattern means here what it means to the regex crate; anything the
//! parser is not sure of — set operations in classes, nested classes, `{` outside a
//! repetition, stacked quantifiers, other flags — is `None`, and the regex crate answers.

/// A zero-width assertion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Look {
    /// `^` (or `\A`): the start of the text.
    StartText,
    /// `$` (or `\z`): the end of the text.
    EndText,
    /// `(?m)^`: the start of the text or just after a `\n`.
    StartLine,
    /// `(?m)$`: the end of the text or just before a `\n`.
    EndLine,
}

impl Look {
    /// Whether the assertion holds at byte offset `at` of `text`.
    pub(super) fn holds(self, text: &str, at: usize) -> bool {
        let b = text.as_bytes();
        match self {
            Look::StartText => at == 0,
            Look::EndText => at == b.len(),
            Look::StartLine => at == 0 || b.get(at - 1) == Some(&b'\n'),
            Look::EndLine => at == b.len() || b.get(at) == Some(&b'\n'),
        }
    }
}

/// A parsed pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Node {
    /// Matches the empty string (an empty branch, `()`, a flag group).
    Empty,
    /// One codepoint.
    Char(char),
    /// One codepoint in one of these ranges (sorted, disjoint; empty for a class that
    /// matches nothing).
    Class(Vec<(char, char)>),
    Look(Look),
    /// Capturing group `index` (1 for the first `(`).
    Capture(usize, Box<Node>),
    Concat(Vec<Node>),
    /// Branches in order of preference.
    Alt(Vec<Node>),
    Repeat {
        node: Box<Node>,
        min: u32,
        /// `None`: unbounded.
        max: Option<u32>,
        greedy: bool,
    },
}

impl Node {
    /// The fewest codepoints a match of the node consumes, `None` when it can match
    /// nothing at all (an empty class): `regex-syntax`'s `minimum_len`, as far as whether
    /// it is 0. The compiler shapes `x*` by it, as the regex crate's does.
    pub(super) fn min_len(&self) -> Option<u64> {
        match self {
            Node::Empty | Node::Look(_) => Some(0),
            Node::Char(_) => Some(1),
            Node::Class(r) => (!r.is_empty()).then_some(1),
            Node::Capture(_, n) => n.min_len(),
            Node::Concat(ns) => ns
                .iter()
                .try_fold(0u64, |acc, n| Some(acc.saturating_add(n.min_len()?))),
            Node::Alt(ns) => ns
                .iter()
                .map(Node::min_len)
                .try_fold(u64::MAX, |acc, l| Some(acc.min(l?))),
            Node::Repeat { node, min, .. } => {
                node.min_len().map(|l| l.saturating_mul(u64::from(*min)))
            }
        }
    }

    /// The most codepoints a match of the node consumes, `None` when unbounded or when it
    /// can match nothing: `regex-syntax`'s `maximum_len`, as far as whether it is 0.
    fn max_len(&self) -> Option<u64> {
        match self {
            Node::Empty | Node::Look(_) => Some(0),
            Node::Char(_) => Some(1),
            Node::Class(r) => (!r.is_empty()).then_some(1),
            Node::Capture(_, n) => n.max_len(),
            Node::Concat(ns) => ns
                .iter()
                .try_fold(0u64, |acc, n| acc.checked_add(n.max_len()?)),
            Node::Alt(ns) => ns
                .iter()
                .map(Node::max_len)
                .try_fold(0, |acc, l| Some(acc.max(l?))),
            Node::Repeat { node, max, .. } => node.max_len()?.checked_mul(u64::from((*max)?)),
        }
    }

    fn has_capture(&self) -> bool {
        match self {
            Node::Capture(..) => true,
            Node::Concat(ns) | Node::Alt(ns) => ns.iter().any(Node::has_capture),
            Node::Repeat { node, .. } => node.has_capture(),
            Node::Empty | Node::Char(_) | Node::Class(_) | Node::Look(_) => false,
        }
    }

    /// `node` repeated, as `regex-syntax` builds a repetition (`Hir::repetition`): a node
    /// that only matches the empty string repeats at most once, `x{0}` is the empty
    /// pattern and `x{1}` is `x`. `None` for an `x{0}` with a group in it (the regex crate
    /// drops the group).
    fn repeat(node: Node, mut min: u32, mut max: Option<u32>, greedy: bool) -> Option<Node> {
        if node.max_len() == Some(0) {
            min = min.min(1);
            max = Some(max.map_or(1, |m| m.min(1)));
        }
        Some(match (min, max) {
            (0, Some(0)) if node.has_capture() => return None,
            (0, Some(0)) => Node::Empty,
            (1, Some(1)) => node,
            _ => Node::Repeat {
                node: Box::new(node),
                min,
                max,
                greedy,
            },
        })
    }
}

/// A parsed pattern and its groups.
#[derive(Debug, Clone)]
pub(super) struct Parsed {
    pub(super) node: Node,
    /// The name of each group, index 0 (the whole match) first.
    pub(super) names: Vec<Option<Box<str>>>,
}

/// Largest count in `{m,n}`.
pub(super) const MAX_COUNT: u32 = 32;
/// Deepest group nesting.
const MAX_DEPTH: usize = 16;
/// Most groups.
const MAX_GROUPS: usize = 32;

/// The flags in force: `m` (multi-line `^` / `$`) and `s` (`.` matches `\n`).
#[derive(Debug, Clone, Copy, Default)]
struct Flags {
    multi_line: bool,
    dot_nl: bool,
}

/// What a backslash sequence means.
enum Escape {
    Literal(char),
    Look(Look),
}

/// Reads `source` into its tree, or `None` (module docs).
pub(super) fn parse(source: &str) -> Option<Parsed> {
    let mut p = Parser {
        s: source,
        i: 0,
        names: vec![None],
    };
    let mut flags = Flags::default();
    let node = p.alternation(0, &mut flags)?;
    if p.i != p.s.len() {
        // An unopened `)`.
        return None;
    }
    Some(Parsed {
        node,
        names: p.names,
    })
}

struct Parser<'a> {
    s: &'a str,
    /// Byte offset of the next char.
    i: usize,
    names: Vec<Option<Box<str>>>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.s[self.i..].chars().next()
    }

    /// The char after the next one.
    fn peek2(&self) -> Option<char> {
        let mut it = self.s[self.i..].chars();
        it.next();
        it.next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.i += c.len_utf8();
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.i += c.len_utf8();
            true
        } else {
            false
        }
    }

    /// Branches up to a `)` (not consumed) or the end. A flag group changes `flags` for the
    /// rest of the enclosing group, across `|`, as in the regex crate.
    fn alternation(&mut self, depth: usize, flags: &mut Flags) -> Option<Node> {
        let mut branches = vec![self.concat(depth, flags)?];
        while self.eat('|') {
            branches.push(self.concat(depth, flags)?);
        }
        Some(if branches.len() == 1 {
            branches.pop()?
        } else {
            Node::Alt(branches)
        })
    }

    /// Items up to a `|` or `)` (not consumed) or the end.
    fn concat(&mut self, depth: usize, flags: &mut Flags) -> Option<Node> {
        let mut items = Vec::new();
        loop {
            let atom = match self.peek() {
                None | Some('|' | ')') => break,
                Some('(') => {
                    self.bump();
                    match self.group(depth, flags)? {
                        Some(node) => node,
                        // A flag group `(?m)`: nothing to repeat.
                        None => {
                            if matches!(self.peek(), Some('?' | '*' | '+' | '{')) {
                                return None;
                            }
                            continue;
                        }
                    }
                }
                Some('[') => {
                    self.bump();
                    Node::Class(self.class()?)
                }
                Some('.') => {
                    self.bump();
                    Node::Class(if flags.dot_nl {
                        vec![('\0', char::MAX)]
                    } else {
                        vec![('\0', '\u{9}'), ('\u{B}', char::MAX)]
                    })
                }
                Some('^') => {
                    self.bump();
                    items.push(Node::Look(if flags.multi_line {
                        Look::StartLine
                    } else {
                        Look::StartText
                    }));
                    continue;
                }
                Some('$') => {
                    self.bump();
                    items.push(Node::Look(if flags.multi_line {
                        Look::EndLine
                    } else {
                        Look::EndText
                    }));
                    continue;
                }
                Some('\\') => {
                    self.bump();
                    match self.escape()? {
                        Escape::Literal(c) => Node::Char(c),
                        Escape::Look(l) => {
                            items.push(Node::Look(l));
                            continue;
                        }
                    }
                }
                // A quantifier with nothing to repeat (a syntax error), and braces and
                // brackets outside their constructs: left to the regex crate.
                Some('?' | '*' | '+' | '{' | '}' | ']') => return None,
                Some(c) => {
                    self.bump();
                    Node::Char(c)
                }
            };
            items.push(self.quantified(atom)?);
        }
        Some(match items.len() {
            0 => Node::Empty,
            1 => items.pop()?,
            _ => Node::Concat(items),
        })
    }

    /// After a `(`: the group, or `None` inside `Some` for a flag group that only sets
    /// `flags`.
    fn group(&mut self, depth: usize, flags: &mut Flags) -> Option<Option<Node>> {
        if depth >= MAX_DEPTH {
            return None;
        }
        let mut inner = *flags;
        let mut capture = None;
        if self.eat('?') {
            if self.eat('P') {
                if !self.eat('<') {
                    return None;
                }
                capture = Some(Some(self.group_name()?));
            } else if self.eat('<') {
                capture = Some(Some(self.group_name()?));
            } else if !self.eat(':') {
                // Flags: `(?m)`, `(?s-m)`, `(?m:…)`.
                let set = self.flags(&mut inner)?;
                if set == ')' {
                    *flags = inner;
                    return Some(None);
                }
            }
        } else {
            capture = Some(None);
        }
        let index = match capture {
            Some(name) => {
                if self.names.len() > MAX_GROUPS {
                    return None;
                }
                self.names.push(name);
                Some(self.names.len() - 1)
            }
            None => None,
        };
        let node = self.alternation(depth + 1, &mut inner)?;
        if !self.eat(')') {
            return None;
        }
        Some(Some(match index {
            Some(i) => Node::Capture(i, Box::new(node)),
            None => node,
        }))
    }

    /// A group name up to and including its `>`: the regex crate's rule (a letter or `_`,
    /// then letters, digits, `_`, `.`, `[`, `]`), unique in the pattern.
    fn group_name(&mut self) -> Option<Box<str>> {
        let start = self.i;
        loop {
            let c = self.bump()?;
            if c == '>' {
                break;
            }
            let ok = if self.i - c.len_utf8() == start {
                c == '_' || c.is_alphabetic()
            } else {
                c == '_' || c == '.' || c == '[' || c == ']' || c.is_alphanumeric()
            };
            if !ok {
                return None;
            }
        }
        let name = &self.s[start..self.i - 1];
        if name.is_empty() || self.names.iter().flatten().any(|n| &**n == name) {
            return None;
        }
        Some(name.into())
    }

    /// The flags of a `(?…` group into `flags`, through the `)` or `:` that ends them,
    /// which is returned. Only `m` and `s`, each at most once, with at most one `-`.
    fn flags(&mut self, flags: &mut Flags) -> Option<char> {
        let mut negate = false;
        let mut seen = (false, false);
        let mut last_was_negation = false;
        loop {
            let c = self.bump()?;
            match c {
                ')' | ':' => {
                    // `(?)`, `(?-)` and `(?m-)` are syntax errors.
                    if (!seen.0 && !seen.1) || last_was_negation {
                        return None;
                    }
                    return Some(c);
                }
                '-' if !negate => {
                    negate = true;
                    last_was_negation = true;
                    continue;
                }
                'm' if !seen.0 => {
                    seen.0 = true;
                    flags.multi_line = !negate;
                }
                's' if !seen.1 => {
                    seen.1 = true;
                    flags.dot_nl = !negate;
                }
                _ => return None,
            }
            last_was_negation = false;
        }
    }

    /// After a `\` outside a class.
    fn escape(&mut self) -> Option<Escape> {
        let c = self.bump()?;
        Some(match c {
            'A' => Escape::Look(Look::StartText),
            'z' => Escape::Look(Look::EndText),
            _ => Escape::Literal(self.literal_escape(c)?),
        })
    }

    /// The char a backslash and `c` stand for, when they stand for one (the regex
    /// crate's `is_escapeable_character`, its special letters and its hex forms).
    fn literal_escape(&mut self, c: char) -> Option<char> {
        Some(match c {
            'a' => '\x07',
            'f' => '\x0C',
            't' => '\t',
            'n' => '\n',
            'r' => '\r',
            'v' => '\x0B',
            'x' => self.hex(2)?,
            'u' => self.hex(4)?,
            'U' => self.hex(8)?,
            '<' | '>' => return None,
            c if c.is_ascii() && !c.is_ascii_alphanumeric() => c,
            _ => return None,
        })
    }

    /// The codepoint of `digits` hex digits, or of `{…}` (1 to 8 digits).
    fn hex(&mut self, digits: usize) -> Option<char> {
        let start = self.i;
        let (hex, next) = if self.peek() == Some('{') {
            let close = self.s[start..].find('}')?;
            (&self.s[start + 1..start + close], start + close + 1)
        } else {
            let end = start.checked_add(digits)?;
            (self.s.get(start..end)?, end)
        };
        if hex.is_empty() || hex.len() > 8 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let c = char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
        self.i = next;
        Some(c)
    }

    /// A bracket class after its `[`, through its `]`: sorted disjoint ranges, negated if
    /// it starts with `^`. The regex crate's rules: `-` is literal first and last, `]`
    /// first; nested classes, `[:alpha:]` and the set operations `&&` `--` `~~` are left
    /// to the regex crate.
    fn class(&mut self) -> Option<Vec<(char, char)>> {
        let negated = self.eat('^');
        let mut ranges = Vec::new();
        while self.eat('-') {
            ranges.push(('-', '-'));
        }
        if ranges.is_empty() && self.eat(']') {
            ranges.push((']', ']'));
        }
        loop {
            match (self.peek()?, self.peek2()) {
                ('[', _) => return None,
                (']', _) => {
                    self.bump();
                    break;
                }
                ('&', Some('&')) | ('-', Some('-')) | ('~', Some('~')) => return None,
                _ => {}
            }
            let lo = self.class_char()?;
            if self.peek() == Some('-') && !matches!(self.peek2(), Some(']' | '-')) {
                self.bump();
                if self.peek() == Some('[') {
                    return None;
                }
                let hi = self.class_char()?;
                if hi < lo {
                    return None;
                }
                ranges.push((lo, hi));
            } else {
                ranges.push((lo, lo));
            }
        }
        let ranges = canonical(ranges);
        Some(if negated { negate(&ranges) } else { ranges })
    }

    /// One char of a class: verbatim, or a literal escape.
    fn class_char(&mut self) -> Option<char> {
        match self.bump()? {
            '\\' => {
                let c = self.bump()?;
                self.literal_escape(c)
            }
            c => Some(c),
        }
    }

    /// `atom` with the quantifier that follows it, if any: `?` `*` `+` `{m}` `{m,}`
    /// `{m,n}`, each lazy with a `?` after it.
    fn quantified(&mut self, atom: Node) -> Option<Node> {
        let (min, max) = match self.peek() {
            Some('?') => (0, Some(1)),
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('{') => {
                self.bump();
                let min = self.number()?;
                let max = if self.eat(',') {
                    if self.peek() == Some('}') {
                        None
                    } else {
                        Some(self.number()?)
                    }
                } else {
                    Some(min)
                };
                if self.peek() != Some('}') || max.is_some_and(|m| m < min) {
                    return None;
                }
                (min, max)
            }
            _ => return Some(atom),
        };
        self.bump();
        let greedy = !self.eat('?');
        // A second quantifier (`a**`, `a{2}+`): left to the regex crate.
        if matches!(self.peek(), Some('?' | '*' | '+' | '{')) {
            return None;
        }
        Node::repeat(atom, min, max, greedy)
    }

    fn number(&mut self) -> Option<u32> {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        let n: u32 = self.s[start..self.i].parse().ok()?;
        (n <= MAX_COUNT).then_some(n)
    }
}

/// `ranges` sorted, with overlapping and touching ranges merged.
fn canonical(mut ranges: Vec<(char, char)>) -> Vec<(char, char)> {
    ranges.sort_unstable();
    let mut out: Vec<(char, char)> = Vec::with_capacity(ranges.len());
    for (lo, hi) in ranges {
        match out.last_mut() {
            Some(last) if u32::from(lo) <= u32::from(last.1).saturating_add(1) => {
                last.1 = last.1.max(hi);
            }
            _ => out.push((lo, hi)),
        }
    }
    out
}

/// Every codepoint not in `ranges` (sorted, disjoint), as ranges: what a negated class
/// matches in the regex crate's Unicode mode.
fn negate(ranges: &[(char, char)]) -> Vec<(char, char)> {
    let mut out = Vec::with_capacity(ranges.len() + 1);
    // The next codepoint not yet covered (`None` once past the last).
    let mut next = Some('\0');
    for &(lo, hi) in ranges {
        if let Some(n) = next {
            if n < lo {
                if let Some(before) = prev_char(lo) {
                    out.push((n, before));
                }
            }
        }
        next = next_char(hi);
    }
    if let Some(n) = next {
        out.push((n, char::MAX));
    }
    out
}

fn next_char(c: char) -> Option<char> {
    match c {
        '\u{D7FF}' => Some('\u{E000}'),
        _ => char::from_u32(u32::from(c) + 1),
    }
}

fn prev_char(c: char) -> Option<char> {
    match c {
        '\u{E000}' => Some('\u{D7FF}'),
        _ => char::from_u32(u32::from(c).checked_sub(1)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(s: &str) -> Node {
        parse(s).unwrap_or_else(|| panic!("{s} is not small")).node
    }

    #[test]
    fn classes_read_as_the_regex_crate_reads_them() {
        for (class, ranges) in [
            (
                r"[0-9A-Za-z_.\-]",
                vec![('-', '.'), ('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')],
            ),
            (r"[\t\n\x0B\x0C\r ]", vec![('\t', '\r'), (' ', ' ')]),
            (r"[]a]", vec![(']', ']'), ('a', 'a')]),
            (r"[-a-]", vec![('-', '-'), ('a', 'a')]),
            (r"[a-c-e]", vec![('-', '-'), ('a', 'c'), ('e', 'e')]),
            (r"[\x{1F980}é]", vec![('é', 'é'), ('🦀', '🦀')]),
            (r"[\u00e9]", vec![('é', 'é')]),
            (
                r"[^\]\n]",
                vec![('\0', '\t'), ('\u{B}', '\\'), ('^', char::MAX)],
            ),
            (
                r"[^\x{D7FF}\x{E000}]",
                vec![('\0', '\u{D7FE}'), ('\u{E001}', char::MAX)],
            ),
            (r"[^\x00-\x{10FFFF}]", vec![]),
        ] {
            assert_eq!(node(class), Node::Class(ranges), "{class}");
        }
    }

    #[test]
    fn flags_hold_to_the_end_of_their_group_across_branches() {
        let n = node(r"(?:(?m)a|^)^");
        let Node::Concat(items) = n else {
            panic!("{n:?}")
        };
        assert_eq!(
            items[0],
            Node::Alt(vec![Node::Char('a'), Node::Look(Look::StartLine)])
        );
        assert_eq!(items[1], Node::Look(Look::StartText));
        assert_eq!(node(r"(?s:.)"), Node::Class(vec![('\0', char::MAX)]));
        assert_eq!(node(r"(?s)(?-s)."), node("."));
        for bad in [
            r"(?)", r"(?-)", r"(?m-)", r"(?mm)", r"(?i)a", r"(?x)a", r"(?m)*",
        ] {
            assert!(parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn repetitions_are_built_as_regex_syntax_builds_them() {
        // Only empty matches: repeated at most once (so `{32}` of it costs one copy).
        assert_eq!(node(r"(?:^|$){5}"), node(r"(?:^|$)"));
        assert_eq!(node(r"(?:^){2,}"), node(r"^"));
        assert_eq!(
            node(r"(?:$)*?"),
            Node::Repeat {
                node: Box::new(Node::Look(Look::EndText)),
                min: 0,
                max: Some(1),
                greedy: false
            }
        );
        assert_eq!(node(r"(?:)+"), Node::Empty);
        // `{0}` is the empty pattern, `{1}` the node itself.
        assert_eq!(
            node(r"a{0}b"),
            Node::Concat(vec![Node::Empty, Node::Char('b')])
        );
        assert_eq!(node(r"a{1}?"), Node::Char('a'));
        // The regex crate drops a group repeated zero times: left to it.
        assert!(parse(r"(a){0}b").is_none());
        assert!(parse(r"(?:x(a)){0}").is_none());
    }

    #[test]
    fn groups_are_numbered_and_named_in_order() {
        let p = parse(r"(a)(?P<host>b)(?:c)(?<x>d)").unwrap();
        assert_eq!(
            p.names,
            vec![None, None, Some("host".into()), Some("x".into())]
        );
        for dup in [r"(?P<a>x)(?P<a>y)", r"(?P<>x)", r"(?P<1a>x)", r"(?P<a-b>x)"] {
            assert!(parse(dup).is_none(), "{dup}");
        }
    }
}
