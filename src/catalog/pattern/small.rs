//! A small matcher for the simplest catalog patterns: ASCII literals, the digit class
//! `[0-9]`, non-capturing groups `(?:…)`, greedy `?` `*` `+` `{m}` `{m,}` `{m,n}`, and `^`
//! / `$` at the very ends. Port numbers (`^(?:[0-9]+(?:/[0-9]+){0,3})$`) and most failure
//! lines (`^% ?Invalid input`) are of this shape. Building the regex crate's automata for
//! one of them (forward and reverse NFA, one-pass DFA, lazy-DFA cache) cost about 5 % of a
//! dry run's CPU, to answer one `is_match` on a dozen bytes (docs/proof.md, issue 18).
//!
//! A pattern of this shape is compiled into a Thompson NFA and answered by simulating it
//! over the bytes (no backtracking: time is linear in the text for a given pattern). Any
//! other syntax — alternation, other classes, flags, captures, `.`, escapes of letters,
//! lazy quantifiers, non-ASCII — gives `None`, and the pattern uses the regex crate as
//! before. Only [`super::Pattern::is_match`] uses it; `find` and `captures` always use the
//! regex. The unit tests below check it against the regex crate, on chosen patterns and on
//! every built-in pattern it answers (`small_patterns_agree_with_the_regex_crate`).

/// One NFA instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inst {
    /// Consume this byte.
    Byte(u8),
    /// Consume an ASCII digit.
    Digit,
    /// Continue at both.
    Split(usize, usize),
    /// Continue at.
    Jmp(usize),
    /// The pattern matched.
    Match,
}

/// What the parser reads before compiling.
#[derive(Debug, Clone)]
enum Node {
    Byte(u8),
    Digit,
    Group(Vec<Item>),
}

/// A node and how often it repeats (`max: None` = unbounded).
#[derive(Debug, Clone)]
struct Item {
    node: Node,
    min: u32,
    max: Option<u32>,
}

/// Most instructions a small pattern may compile to (counted repetition is unrolled).
const MAX_PROG: usize = 512;
/// Largest count in `{m,n}`.
const MAX_COUNT: u32 = 32;
/// Deepest group nesting.
const MAX_DEPTH: usize = 8;

/// A compiled small pattern.
#[derive(Debug, Clone)]
pub(crate) struct Small {
    prog: Vec<Inst>,
    /// `^`: a match starts at the start of the text only.
    start: bool,
    /// `$`: a match ends at the end of the text only.
    end: bool,
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn eat_str(&mut self, s: &str) -> bool {
        if self.b[self.i..].starts_with(s.as_bytes()) {
            self.i += s.len();
            true
        } else {
            false
        }
    }

    /// Items up to a `)` (not consumed), a final `$` (not consumed) or the end.
    fn seq(&mut self, depth: usize) -> Option<Vec<Item>> {
        let mut items = Vec::new();
        loop {
            let node = match self.peek() {
                None | Some(b')') => return Some(items),
                Some(b'$') if self.i + 1 == self.b.len() => return Some(items),
                Some(b'[') => {
                    if !self.eat_str("[0-9]") {
                        return None;
                    }
                    Node::Digit
                }
                Some(b'(') => {
                    if depth >= MAX_DEPTH || !self.eat_str("(?:") {
                        return None;
                    }
                    let inner = self.seq(depth + 1)?;
                    if !self.eat(b')') {
                        return None;
                    }
                    Node::Group(inner)
                }
                Some(b'\\') => {
                    self.i += 1;
                    let c = self.peek()?;
                    if !c.is_ascii_punctuation() {
                        return None;
                    }
                    self.i += 1;
                    Node::Byte(c)
                }
                Some(c) if (b' '..=b'~').contains(&c) && !b"^$|.*+?{}[]".contains(&c) => {
                    self.i += 1;
                    Node::Byte(c)
                }
                Some(_) => return None,
            };
            let (min, max) = self.quantifier()?;
            items.push(Item { node, min, max });
        }
    }

    /// The quantifier after an atom, if any: `(1, Some(1))` for none.
    fn quantifier(&mut self) -> Option<(u32, Option<u32>)> {
        let q = match self.peek() {
            Some(b'?') => {
                self.i += 1;
                (0, Some(1))
            }
            Some(b'*') => {
                self.i += 1;
                (0, None)
            }
            Some(b'+') => {
                self.i += 1;
                (1, None)
            }
            Some(b'{') => {
                self.i += 1;
                let min = self.number()?;
                let max = if self.eat(b',') {
                    if self.peek() == Some(b'}') {
                        None
                    } else {
                        Some(self.number()?)
                    }
                } else {
                    Some(min)
                };
                if !self.eat(b'}') || max.is_some_and(|m| m < min) {
                    return None;
                }
                (min, max)
            }
            _ => return Some((1, Some(1))),
        };
        // A lazy (`??`, `+?`) or a second quantifier: left to the regex crate.
        if matches!(self.peek(), Some(b'?' | b'*' | b'+' | b'{')) {
            return None;
        }
        Some(q)
    }

    fn number(&mut self) -> Option<u32> {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        let n: u32 = std::str::from_utf8(&self.b[start..self.i])
            .ok()?
            .parse()
            .ok()?;
        (n <= MAX_COUNT).then_some(n)
    }
}

/// Emits the instructions of `items`; `None` when the program would be too long.
fn emit(prog: &mut Vec<Inst>, items: &[Item]) -> Option<()> {
    for item in items {
        for _ in 0..item.min {
            emit_node(prog, &item.node)?;
        }
        match item.max {
            Some(max) => {
                for _ in item.min..max {
                    let split = prog.len();
                    prog.push(Inst::Split(0, 0));
                    emit_node(prog, &item.node)?;
                    prog[split] = Inst::Split(split + 1, prog.len());
                }
            }
            None => {
                let split = prog.len();
                prog.push(Inst::Split(0, 0));
                emit_node(prog, &item.node)?;
                prog.push(Inst::Jmp(split));
                prog[split] = Inst::Split(split + 1, prog.len());
            }
        }
        if prog.len() > MAX_PROG {
            return None;
        }
    }
    Some(())
}

fn emit_node(prog: &mut Vec<Inst>, node: &Node) -> Option<()> {
    match node {
        Node::Byte(c) => prog.push(Inst::Byte(*c)),
        Node::Digit => prog.push(Inst::Digit),
        Node::Group(items) => emit(prog, items)?,
    }
    (prog.len() <= MAX_PROG).then_some(())
}

impl Small {
    /// The small form of `source` (a pattern with ASCII classes already spelt out), or
    /// `None` when it uses anything beyond the module's subset.
    pub(crate) fn parse(source: &str) -> Option<Small> {
        let mut p = Parser {
            b: source.as_bytes(),
            i: 0,
        };
        let start = p.eat(b'^');
        let items = p.seq(0)?;
        let end = p.eat(b'$');
        if p.i != p.b.len() {
            return None;
        }
        let mut prog = Vec::new();
        emit(&mut prog, &items)?;
        prog.push(Inst::Match);
        Some(Small { prog, start, end })
    }

    /// Whether the pattern matches anywhere in `text` (within the anchors), as
    /// `Regex::is_match` answers for the same pattern.
    pub(crate) fn is_match(&self, text: &str) -> bool {
        let bytes = text.as_bytes();
        let n = self.prog.len();
        let mut current: Vec<usize> = Vec::with_capacity(n);
        let mut next: Vec<usize> = Vec::with_capacity(n);
        // The step (position + 1) at which a pc was last added, to add it once per step.
        let mut seen = vec![0usize; n];
        let mut stack = Vec::new();
        // Whether `current` holds `Match` (the pattern has matched up to `pos`).
        let mut at_match = false;
        for pos in 0..=bytes.len() {
            let step = pos + 1;
            if pos == 0 || !self.start {
                at_match |= self.close(0, step, &mut seen, &mut stack, &mut current);
            }
            if at_match && (!self.end || pos == bytes.len()) {
                return true;
            }
            let Some(&b) = bytes.get(pos) else {
                break;
            };
            if current.is_empty() && self.start {
                return false;
            }
            next.clear();
            at_match = false;
            for &pc in &current {
                let ok = match self.prog[pc] {
                    Inst::Byte(c) => c == b,
                    Inst::Digit => b.is_ascii_digit(),
                    _ => false,
                };
                if ok {
                    at_match |= self.close(pc + 1, step + 1, &mut seen, &mut stack, &mut next);
                }
            }
            std::mem::swap(&mut current, &mut next);
        }
        false
    }

    /// Adds `pc` and every pc reachable from it without consuming a byte to `list` (once per
    /// `step`); whether `Match` is among them.
    fn close(
        &self,
        pc: usize,
        step: usize,
        seen: &mut [usize],
        stack: &mut Vec<usize>,
        list: &mut Vec<usize>,
    ) -> bool {
        let mut matched = false;
        stack.push(pc);
        while let Some(pc) = stack.pop() {
            if seen[pc] == step {
                continue;
            }
            seen[pc] = step;
            match self.prog[pc] {
                Inst::Split(a, b) => {
                    stack.push(b);
                    stack.push(a);
                }
                Inst::Jmp(a) => stack.push(a),
                Inst::Match => {
                    matched = true;
                    list.push(pc);
                }
                Inst::Byte(_) | Inst::Digit => list.push(pc),
            }
        }
        matched
    }

    /// A text the pattern matches, chosen by `pick` at every branch (tests use it to reach
    /// matching texts a random string would almost never be).
    #[cfg(test)]
    pub(crate) fn sample(&self, mut pick: impl FnMut(usize) -> usize) -> String {
        let mut out = String::new();
        let mut pc = 0;
        for _ in 0..4 * MAX_PROG {
            match self.prog[pc] {
                Inst::Byte(c) => {
                    out.push(c as char);
                    pc += 1;
                }
                Inst::Digit => {
                    out.push((b'0' + pick(10) as u8) as char);
                    pc += 1;
                }
                Inst::Split(a, b) => pc = if pick(2) == 0 { a } else { b },
                Inst::Jmp(a) => pc = a,
                Inst::Match => return out,
            }
        }
        // A walk that kept looping: take the exits from here on.
        while self.prog[pc] != Inst::Match {
            pc = match self.prog[pc] {
                Inst::Byte(c) => {
                    out.push(c as char);
                    pc + 1
                }
                Inst::Digit => {
                    out.push('0');
                    pc + 1
                }
                Inst::Split(_, b) => b,
                // A loop's jump back: leave through its split's exit instead.
                Inst::Jmp(a) => match self.prog[a] {
                    Inst::Split(_, b) => b,
                    _ => a,
                },
                Inst::Match => pc,
            };
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::Regex;

    /// A small deterministic generator (no dependency): xorshift64*.
    pub(crate) struct Rng(pub u64);
    impl Rng {
        pub(crate) fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n.max(1)
        }
    }

    /// Checks `Small` against the regex crate on texts built around the pattern: samples
    /// of its own language, mutated, with junk around them, and random texts over the
    /// bytes it uses. Panics on the first disagreement.
    pub(crate) fn agree(source: &str, small: &Small, rng: &mut Rng) {
        let re = Regex::new(source).unwrap();
        let mut alphabet: Vec<char> = source
            .chars()
            .filter(|c| c.is_ascii_graphic() || *c == ' ')
            .collect();
        alphabet.extend(['0', '7', 'a', ' ', '/', 'é', '\n']);
        let mut texts: Vec<String> = vec![String::new()];
        for _ in 0..200 {
            let s = small.sample(|n| rng.below(n));
            let mut chars: Vec<char> = s.chars().collect();
            texts.push(s.clone());
            match rng.below(4) {
                0 if !chars.is_empty() => {
                    let at = rng.below(chars.len());
                    chars.remove(at);
                }
                1 => {
                    let at = rng.below(chars.len() + 1);
                    chars.insert(at, alphabet[rng.below(alphabet.len())]);
                }
                2 if !chars.is_empty() => {
                    let at = rng.below(chars.len());
                    chars[at] = alphabet[rng.below(alphabet.len())];
                }
                _ => {}
            }
            texts.push(chars.iter().collect());
            texts.push(format!("x{s}"));
            texts.push(format!("{s}x"));
            texts.push(format!("é {s}\n"));
        }
        for _ in 0..300 {
            let len = rng.below(12);
            texts.push(
                (0..len)
                    .map(|_| alphabet[rng.below(alphabet.len())])
                    .collect(),
            );
        }
        for t in &texts {
            assert_eq!(
                small.is_match(t),
                re.is_match(t),
                "pattern {source:?} on {t:?}: small matcher and regex disagree"
            );
        }
    }

    #[test]
    fn the_subset_parses_and_everything_else_is_left_to_the_regex_crate() {
        for s in [
            r"^(?:[0-9]+(?:/[0-9]+){0,3})$",
            r"^% ?Invalid input",
            r"^(?:[0-9]+/x?g[0-9]+)$",
            r"a{2}b{1,}c*\.\-",
            r"",
            r"^$",
        ] {
            assert!(Small::parse(s).is_some(), "{s}");
        }
        for s in [
            r"(?i)^command rejected",
            r"^(?P<host>[0-9A-Za-z_.\-]+)#",
            r"a|b",
            r"^% Invalid .*$",
            r"[0-9a-f]+",
            r"(a)",
            r"\d+",
            r"a+?",
            r"a**",
            r"a$b",
            r"a^",
            r"é",
            r"a{3,2}",
            r"a{99}",
            r"\bword",
            r"(?:(?:(?:(?:(?:(?:(?:(?:(?:a)))))))))",
        ] {
            assert!(Small::parse(s).is_none(), "{s}");
        }
    }

    #[test]
    fn port_numbers_and_failure_lines_match_as_the_regex_crate_does() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for s in [
            r"^(?:[0-9]+(?:/[0-9]+){0,3})$",
            r"^(?:[0-9]+(?:/[0-9]+){0,2}(?::[0-9]+)?)$",
            r"^(?:[0-9]+(?:s[0-9]+)?)$",
            r"^(?:[0-9]+/x?g[0-9]+)$",
            r"^% ?Invalid input",
            r"Error: Vlan",
            r"does not exist$",
            r"(?:ab?)*c",
            r"(?:a*)*b",
            r"(?:)*x",
            r"x?",
            r"",
            r"^$",
            r"a{2,4}(?:b{0,2}c)+$",
        ] {
            let small = Small::parse(s).unwrap_or_else(|| panic!("{s} is not small"));
            agree(s, &small, &mut rng);
        }
    }

    /// Every built-in pattern the small matcher answers agrees with the regex crate.
    #[test]
    fn small_patterns_agree_with_the_regex_crate() {
        let catalog = crate::catalog::Catalog::builtin().unwrap();
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let mut small = 0;
        let mut all = 0;
        for name in catalog.names() {
            let platform = catalog.get(name).unwrap();
            for (what, p) in platform.patterns() {
                all += 1;
                match Small::parse(p.as_str()) {
                    Some(s) => {
                        small += 1;
                        agree(p.as_str(), &s, &mut rng);
                    }
                    // Resolving a port (every run, and every waiter of a burst) must not
                    // build a regex automaton: the port numbers are all small.
                    None => assert!(
                        !what.starts_with("port_names."),
                        "{name} {what} {:?} is beyond the small matcher",
                        p.as_str()
                    ),
                }
            }
        }
        // Every platform's port numbers at least; most failure lines.
        assert!(small > all / 4, "{small} of {all} patterns small");
    }

    #[test]
    fn nested_loops_stay_linear() {
        // A backtracking matcher takes exponential time here; the NFA simulation does not.
        let s = Small::parse(r"^(?:(?:[0-9]*)*)*x$").unwrap();
        assert!(!s.is_match(&"1".repeat(100_000)));
        assert!(s.is_match(&format!("{}x", "1".repeat(100_000))));
    }
}
