//! The small matcher's programs: a [`Node`] tree compiled into a Thompson NFA, as a list of
//! instructions a Pike VM (module `pike`) runs.
//!
//! Repetitions are shaped as the regex crate's compiler (`regex-automata`'s Thompson
//! compiler) shapes them — `x{2,4}` as `xx(?:x(?:x)?)?`, `x*` as `(?:x+)?` when `x` can
//! match the empty string, `x{n,}` as `x{n-1}x+` — because with leftmost-first matching
//! the shape decides which of two equal-length paths through an empty loop wins, and so
//! which span a group reports. Counted repetition is unrolled; [`MAX_PROG`] bounds the
//! result.

use super::syntax::{Look, Node};

/// One instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Inst {
    /// Consume this codepoint.
    Char(char),
    /// Consume a codepoint in one of these sorted, disjoint ranges.
    Class(Box<[(char, char)]>),
    /// Continue at both, the first preferred.
    Split(usize, usize),
    /// Continue at.
    Jmp(usize),
    /// Record the position in capture slot `n` (group `n / 2`, its start if even).
    Save(usize),
    /// Continue only if the assertion holds here.
    Look(Look),
    /// The pattern matched.
    Match,
}

impl Inst {
    /// Whether this consuming instruction accepts `c` (`false` for the others).
    pub(super) fn accepts(&self, c: char) -> bool {
        match self {
            Inst::Char(x) => *x == c,
            Inst::Class(ranges) => ranges
                .binary_search_by(|&(lo, hi)| {
                    if hi < c {
                        std::cmp::Ordering::Less
                    } else if lo > c {
                        std::cmp::Ordering::Greater
                    } else {
                        std::cmp::Ordering::Equal
                    }
                })
                .is_ok(),
            _ => false,
        }
    }
}

/// Most instructions a small pattern may compile to.
pub(super) const MAX_PROG: usize = 1024;

/// Which way a program reads the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Direction {
    /// Start to end, recording capture slots.
    Forward,
    /// End to start, without captures: where matches that end at the end of the text
    /// start.
    Reverse,
}

/// A compiled program: `Save(0)`, the pattern, `Save(1)`, `Match` (forward), or the pattern
/// reversed and `Match` (reverse). `None` when it exceeds [`MAX_PROG`].
pub(super) fn compile(node: &Node, direction: Direction) -> Option<Vec<Inst>> {
    let mut c = Compiler {
        prog: Vec::new(),
        direction,
    };
    if direction == Direction::Forward {
        c.push(Inst::Save(0))?;
    }
    c.node(node)?;
    if direction == Direction::Forward {
        c.push(Inst::Save(1))?;
    }
    c.push(Inst::Match)?;
    Some(c.prog)
}

struct Compiler {
    prog: Vec<Inst>,
    direction: Direction,
}

impl Compiler {
    fn push(&mut self, inst: Inst) -> Option<usize> {
        if self.prog.len() >= MAX_PROG {
            return None;
        }
        self.prog.push(inst);
        Some(self.prog.len() - 1)
    }

    /// A split whose targets are set later.
    fn hole(&mut self) -> Option<usize> {
        self.push(Inst::Split(usize::MAX, usize::MAX))
    }

    /// Fills the split at `at`: `take` is the repetition's way in, `skip` its way out;
    /// greedy prefers `take`.
    fn fill(&mut self, at: usize, take: usize, skip: usize, greedy: bool) {
        self.prog[at] = if greedy {
            Inst::Split(take, skip)
        } else {
            Inst::Split(skip, take)
        };
    }

    fn node(&mut self, node: &Node) -> Option<()> {
        match node {
            Node::Empty => {}
            Node::Char(c) => {
                self.push(Inst::Char(*c))?;
            }
            Node::Class(ranges) => {
                self.push(Inst::Class(ranges.clone().into_boxed_slice()))?;
            }
            Node::Look(l) => {
                self.push(Inst::Look(*l))?;
            }
            Node::Capture(i, inner) => {
                if self.direction == Direction::Forward {
                    self.push(Inst::Save(2 * i))?;
                    self.node(inner)?;
                    self.push(Inst::Save(2 * i + 1))?;
                } else {
                    self.node(inner)?;
                }
            }
            Node::Concat(items) => match self.direction {
                Direction::Forward => items.iter().try_for_each(|n| self.node(n))?,
                Direction::Reverse => items.iter().rev().try_for_each(|n| self.node(n))?,
            },
            Node::Alt(branches) => {
                let mut jumps = Vec::with_capacity(branches.len());
                for (k, b) in branches.iter().enumerate() {
                    if k + 1 == branches.len() {
                        self.node(b)?;
                    } else {
                        let split = self.hole()?;
                        self.node(b)?;
                        jumps.push(self.push(Inst::Jmp(usize::MAX))?);
                        self.prog[split] = Inst::Split(split + 1, self.prog.len());
                    }
                }
                let end = self.prog.len();
                for j in jumps {
                    self.prog[j] = Inst::Jmp(end);
                }
            }
            Node::Repeat {
                node,
                min,
                max,
                greedy,
            } => self.repeat(node, *min, *max, *greedy)?,
        }
        Some(())
    }

    fn repeat(&mut self, node: &Node, min: u32, max: Option<u32>, greedy: bool) -> Option<()> {
        match max {
            None if min == 0 => {
                if node.min_len().is_some_and(|l| l > 0) {
                    // One split that the body loops back to.
                    let split = self.hole()?;
                    self.node(node)?;
                    self.push(Inst::Jmp(split))?;
                    self.fill(split, split + 1, self.prog.len(), greedy);
                } else {
                    // `(?:x+)?`: an empty iteration cannot outrank leaving the loop.
                    let question = self.hole()?;
                    let body = self.prog.len();
                    self.node(node)?;
                    let plus = self.hole()?;
                    let end = self.prog.len();
                    self.fill(plus, body, end, greedy);
                    self.fill(question, body, end, greedy);
                }
            }
            None => {
                for _ in 1..min {
                    self.node(node)?;
                }
                let body = self.prog.len();
                self.node(node)?;
                let plus = self.hole()?;
                self.fill(plus, body, plus + 1, greedy);
            }
            Some(max) => {
                for _ in 0..min {
                    self.node(node)?;
                }
                // Each optional copy's way out goes to the end of them all.
                let mut splits = Vec::new();
                for _ in min..max {
                    splits.push(self.hole()?);
                    self.node(node)?;
                }
                let end = self.prog.len();
                for s in splits {
                    self.fill(s, s + 1, end, greedy);
                }
            }
        }
        Some(())
    }
}
