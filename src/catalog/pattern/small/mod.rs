//! A small matcher for the catalog's patterns, so that an attach builds no regex-crate
//! automaton: every pattern of the built-in platforms — prompts (pinned or not), failure
//! lines, questions, LAG and port names — is within the subset below (a test keeps it so)
//! and is answered here, with the regex crate's results.
//!
//! Why: compiling a pattern with a non-ASCII class (`.`, `[^…]`) makes `regex-automata`
//! allocate a 320 KB table; its caches and some 250 KiB of its code (meta strategy,
//! Thompson compiler, lazy DFA, backtracker, the syntax translator) were the largest
//! avoidable part of a real attach's resident set (issue 18, "Close to the floor"); and
//! building its automata for a port number cost 5 % of a dry run's CPU, to answer one
//! `is_match` on a dozen bytes (docs/proof.md).
//!
//! The subset (module `syntax`): any literal codepoint; escapes of punctuation, `\t \n \r
//! \f \v \a`, `\xHH`, `\x{H…}`, `\uHHHH`, `\UHHHHHHHH`; bracket classes with ranges,
//! negation and escapes (`[^\]\n]`, `[0-9A-Za-z_.\-]`); `.`; `^` `$` `\A` `\z` anywhere;
//! the flags `m` and `s` (`(?m)`, `(?-s:…)`; prompts are compiled under `(?m)`); `|`;
//! groups `(?:…)`, `(…)`, `(?P<name>…)`, `(?<name>…)`; greedy and lazy `?` `*` `+`
//! `{m}` `{m,}` `{m,n}` (counts up to 32). Anything else — other flags (`(?i)` is spelt
//! out into classes before a pattern gets here), Perl and Unicode classes, word
//! boundaries, nested classes and class set operations — gives `None`, and the pattern
//! uses the regex crate as before. So does a pattern whose program would exceed
//! [`nfa::MAX_PROG`] instructions (counted repetition is unrolled).
//!
//! A pattern is compiled into a Thompson NFA (module `nfa`) and run by a Pike VM (module
//! `pike`) over the text's codepoints: no backtracking, time linear in the text, and the
//! regex crate's leftmost-first semantics, group spans included. A pattern anchored at
//! the end of the text and not at its start (every prompt: `…[ \t]*\z`) also gets a
//! reversed program, run backwards from the end, so that a tail that is not a prompt is
//! refused after a character or two instead of a scan of the whole tail — the regex
//! crate does the same ("reverse anchored").
//!
//! The tests (module `tests`) check it against the regex crate: chosen patterns, every
//! built-in pattern, two thousand patterns drawn at random from the subset's grammar, and
//! random strings of syntax (whatever it accepts, the regex crate must read alike), on
//! texts that match, nearly match and are random, non-ASCII included.

mod nfa;
mod pike;
mod syntax;
#[cfg(test)]
mod tests;

use nfa::{Direction, Inst};
use pike::Search;
use syntax::{Look, Node};

/// A compiled small pattern.
#[derive(Debug, Clone)]
pub(crate) struct Small {
    prog: Vec<Inst>,
    /// The pattern reversed, when every match ends at the end of the text.
    reverse: Option<Vec<Inst>>,
    /// Every match starts at the start of the text.
    start_anchored: bool,
    /// The name of each group, group 0 (the whole match) first.
    names: Vec<Option<Box<str>>>,
}

impl Small {
    /// The small form of `source` (a pattern with ASCII classes already spelt out), or
    /// `None` when it uses anything beyond the module's subset.
    pub(crate) fn parse(source: &str) -> Option<Small> {
        let parsed = syntax::parse(source)?;
        let prog = nfa::compile(&parsed.node, Direction::Forward)?;
        let start_anchored = ends_at(&parsed.node, Look::StartText, true);
        // Anchored at both ends (a port number), a forward search stops as soon as the
        // start does not fit: no need for the reversed program.
        let reverse = match !start_anchored && ends_at(&parsed.node, Look::EndText, false) {
            true => Some(nfa::compile(&parsed.node, Direction::Reverse)?),
            false => None,
        };
        Some(Small {
            prog,
            reverse,
            start_anchored,
            names: parsed.names,
        })
    }

    /// Whether the pattern matches anywhere in `text`, as `Regex::is_match` answers.
    pub(crate) fn is_match(&self, text: &str) -> bool {
        match &self.reverse {
            Some(rev) => pike::reverse_start(rev, text).is_some(),
            None => self.forward(text, 0, 0, true).is_some(),
        }
    }

    /// The span of the first match, as `Regex::find` finds it.
    pub(crate) fn find(&self, text: &str) -> Option<(usize, usize)> {
        if let Some(rev) = &self.reverse {
            // The leftmost start of a match that must end at the end: that is the match.
            return pike::reverse_start(rev, text).map(|s| (s, text.len()));
        }
        let slots = self.forward(text, 0, 2, false)?;
        Some((slots.first().copied()??, slots.get(1).copied()??))
    }

    /// The capture slots of the first match (start and end of each group, group 0 first;
    /// `None` for a group that did not take part), as `Regex::captures` finds them.
    pub(crate) fn captures(&self, text: &str) -> Option<Vec<Option<usize>>> {
        let nslots = 2 * self.names.len();
        match &self.reverse {
            Some(rev) => {
                // The match starts where the reversed search says; its groups are those of
                // the preferred path from there.
                let start = pike::reverse_start(rev, text)?;
                self.forward(text, start, nslots, false)
            }
            None => self.forward(text, 0, nslots, false),
        }
    }

    /// The index of the group called `name`.
    pub(crate) fn group_index(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n.as_deref() == Some(name))
    }

    /// A forward search from `from` (anchored there unless it is 0 and the pattern is not
    /// anchored at the start).
    fn forward(
        &self,
        text: &str,
        from: usize,
        nslots: usize,
        earliest: bool,
    ) -> Option<Vec<Option<usize>>> {
        let search = Search {
            from,
            anchored: from > 0 || self.start_anchored,
            nslots,
            earliest,
        };
        pike::forward(&self.prog, text, search)
    }

    /// A text the pattern's program accepts on the path chosen by `pick` at every
    /// branch, assertions aside (tests use it to reach matching texts a random string
    /// would almost never be).
    #[cfg(test)]
    pub(crate) fn sample(&self, mut pick: impl FnMut(usize) -> usize) -> String {
        let mut out = String::new();
        let mut pc = 0;
        let mut budget = 4 * nfa::MAX_PROG;
        let class_char = |ranges: &[(char, char)], pick: &mut dyn FnMut(usize) -> usize| {
            let (lo, hi) = ranges[pick(ranges.len())];
            let (lo, hi) = (u32::from(lo), u32::from(hi));
            // Near the range's ends mostly (a wide negated class is mostly unused planes).
            let off = pick(8) as u32;
            let c = if pick(2) == 0 {
                lo.saturating_add(off).min(hi)
            } else {
                hi.saturating_sub(off).max(lo)
            };
            char::from_u32(c).unwrap_or(char::from_u32(lo).unwrap_or('x'))
        };
        loop {
            budget = budget.saturating_sub(1);
            pc = match &self.prog[pc] {
                Inst::Char(c) => {
                    out.push(*c);
                    pc + 1
                }
                Inst::Class(ranges) if ranges.is_empty() => return out,
                Inst::Class(ranges) => {
                    out.push(class_char(ranges, &mut pick));
                    pc + 1
                }
                // Out of budget: take a loop's way out (the later target of its split).
                Inst::Split(a, b) if budget == 0 => (*a).max(*b),
                Inst::Split(a, b) => {
                    if pick(2) == 0 {
                        *a
                    } else {
                        *b
                    }
                }
                Inst::Jmp(a) if budget == 0 => match self.prog[*a] {
                    Inst::Split(x, y) => x.max(y),
                    _ => *a,
                },
                Inst::Jmp(a) => *a,
                Inst::Look(Look::StartLine) => {
                    if !out.is_empty() && !out.ends_with('\n') {
                        out.push('\n');
                    }
                    pc + 1
                }
                Inst::Save(_) | Inst::Look(_) => pc + 1,
                Inst::Match => return out,
            };
        }
    }
}

/// Whether every match of `node` starts (`first`) or ends (`!first`) with the assertion
/// `look`: the node is `look`, or a concatenation whose first (last) item other than
/// empty ones is.
fn ends_at(node: &Node, look: Look, first: bool) -> bool {
    match node {
        Node::Look(l) => *l == look,
        Node::Concat(items) => {
            let mut it = items.iter().filter(|n| **n != Node::Empty);
            let edge = if first { it.next() } else { it.next_back() };
            edge.is_some_and(|n| ends_at(n, look, first))
        }
        _ => false,
    }
}
