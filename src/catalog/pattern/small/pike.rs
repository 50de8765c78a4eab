//! The Pike VM that runs a small program (Russ Cox, "Regular Expression Matching: the
//! Virtual Machine Approach"): every thread of the NFA advances in lock step, one codepoint
//! at a time, kept in priority order, so the first to reach `Match` is the match a
//! backtracking engine would find first — the regex crate's leftmost-first semantics —
//! in time linear in the text.
//!
//! The rules that make it agree with the regex crate's own Pike VM (`regex-automata`'s
//! `nfa::thompson::pikevm`), which they follow: an instruction joins a step's thread list
//! at most once, the first (highest-priority) thread to reach it winning; a thread that
//! reaches `Match` cuts off every thread of lower priority; a new thread starts at each
//! position, at the lowest priority, until a match has been found; capture slots are set
//! while following the empty transitions and put back when the exploration backtracks.
//!
//! A program runs over the text's codepoints, so a class or `.` always consumes one whole
//! codepoint, as in the regex crate's Unicode mode, and every position is a char boundary.

use super::nfa::Inst;

/// No position recorded in a capture slot.
const NONE: usize = usize::MAX;

/// The instructions of one step, in priority order, each once.
struct Threads {
    dense: Vec<usize>,
    /// Where each instruction is in `dense` (valid only if `dense` agrees).
    sparse: Vec<usize>,
    /// The capture slots of each instruction's thread, `slots` per instruction.
    slots: Vec<usize>,
}

impl Threads {
    fn new(n: usize, slots: usize) -> Threads {
        Threads {
            dense: Vec::with_capacity(n),
            sparse: vec![0; n],
            slots: vec![NONE; n * slots],
        }
    }

    /// Adds `pc`; `false` if it was already there.
    fn insert(&mut self, pc: usize) -> bool {
        let i = self.sparse[pc];
        if self.dense.get(i) == Some(&pc) {
            return false;
        }
        self.sparse[pc] = self.dense.len();
        self.dense.push(pc);
        true
    }

    fn clear(&mut self) {
        self.dense.clear();
    }
}

/// A step of the empty-transition exploration still to do.
enum Frame {
    Explore(usize),
    /// Put capture slot `.0` back to `.1`.
    Restore(usize, usize),
}

/// The scratch space of one search.
struct Vm<'p, 't> {
    prog: &'p [Inst],
    text: &'t str,
    nslots: usize,
    stack: Vec<Frame>,
    /// The capture slots of the thread being followed.
    scratch: Vec<usize>,
}

impl Vm<'_, '_> {
    /// Adds to `list` every instruction reachable from `pc` at byte offset `at` without
    /// consuming (each once), in priority order, recording `self.scratch` as the slots of
    /// those that consume or match.
    fn close(&mut self, list: &mut Threads, at: usize, pc: usize) {
        self.stack.push(Frame::Explore(pc));
        while let Some(frame) = self.stack.pop() {
            let mut pc = match frame {
                Frame::Restore(slot, old) => {
                    self.scratch[slot] = old;
                    continue;
                }
                Frame::Explore(pc) => pc,
            };
            loop {
                if !list.insert(pc) {
                    break;
                }
                match self.prog[pc] {
                    Inst::Char(_) | Inst::Class(_) | Inst::Match => {
                        let n = self.nslots;
                        list.slots[pc * n..(pc + 1) * n].copy_from_slice(&self.scratch);
                        break;
                    }
                    Inst::Look(look) => {
                        if !look.holds(self.text, at) {
                            break;
                        }
                        pc += 1;
                    }
                    Inst::Split(a, b) => {
                        self.stack.push(Frame::Explore(b));
                        pc = a;
                    }
                    Inst::Jmp(a) => pc = a,
                    Inst::Save(slot) => {
                        if slot < self.nslots {
                            self.stack.push(Frame::Restore(slot, self.scratch[slot]));
                            self.scratch[slot] = at;
                        }
                        pc += 1;
                    }
                }
            }
        }
    }
}

/// How a forward search runs.
#[derive(Debug, Clone, Copy)]
pub(super) struct Search {
    /// Byte offset where matches may start (a char boundary of the text).
    pub(super) from: usize,
    /// Only a match starting at `from`.
    pub(super) anchored: bool,
    /// Capture slots to record (0 for none, 2 for the match, 2 per group for all).
    pub(super) nslots: usize,
    /// Stop at the first match found, whichever it is (enough for `is_match`).
    pub(super) earliest: bool,
}

/// The leftmost-first match of a forward program in `text`: its first `nslots` capture
/// slots (`Some(vec![])` for `nslots` 0).
pub(super) fn forward(prog: &[Inst], text: &str, s: Search) -> Option<Vec<Option<usize>>> {
    let n = prog.len();
    let mut vm = Vm {
        prog,
        text,
        nslots: s.nslots,
        stack: Vec::new(),
        scratch: vec![NONE; s.nslots],
    };
    let mut curr = Threads::new(n, s.nslots);
    let mut next = Threads::new(n, s.nslots);
    let mut found: Option<Vec<usize>> = None;
    let mut at = s.from;
    loop {
        if curr.dense.is_empty() && (found.is_some() || (s.anchored && at > s.from)) {
            break;
        }
        if found.is_none() && (!s.anchored || at == s.from) {
            vm.scratch.fill(NONE);
            vm.close(&mut curr, at, 0);
        }
        let c = text.get(at..).and_then(|t| t.chars().next());
        let after = at + c.map_or(0, char::len_utf8);
        for i in 0..curr.dense.len() {
            let pc = curr.dense[i];
            let slots = &curr.slots[pc * s.nslots..(pc + 1) * s.nslots];
            match &prog[pc] {
                Inst::Match => {
                    found = Some(slots.to_vec());
                    if s.earliest {
                        return found.map(into_options);
                    }
                    // Every thread after this one has a lower priority.
                    break;
                }
                inst => {
                    if c.is_some_and(|c| inst.accepts(c)) {
                        vm.scratch.copy_from_slice(slots);
                        vm.close(&mut next, after, pc + 1);
                    }
                }
            }
        }
        if c.is_none() {
            break;
        }
        at = after;
        std::mem::swap(&mut curr, &mut next);
        next.clear();
    }
    found.map(into_options)
}

/// Where the leftmost match of a reverse program starts, among the matches that end at
/// the end of `text` (a reverse program run anchored at the end, backwards).
pub(super) fn reverse_start(prog: &[Inst], text: &str) -> Option<usize> {
    let n = prog.len();
    let mut vm = Vm {
        prog,
        text,
        nslots: 0,
        stack: Vec::new(),
        scratch: Vec::new(),
    };
    let mut curr = Threads::new(n, 0);
    let mut next = Threads::new(n, 0);
    let mut start = None;
    let mut at = text.len();
    vm.close(&mut curr, at, 0);
    while !curr.dense.is_empty() {
        let c = text[..at].chars().next_back();
        let before = at - c.map_or(0, char::len_utf8);
        for i in 0..curr.dense.len() {
            let pc = curr.dense[i];
            match &prog[pc] {
                Inst::Match => start = Some(at),
                inst => {
                    if c.is_some_and(|c| inst.accepts(c)) {
                        vm.close(&mut next, before, pc + 1);
                    }
                }
            }
        }
        if c.is_none() {
            break;
        }
        at = before;
        std::mem::swap(&mut curr, &mut next);
        next.clear();
    }
    start
}

fn into_options(slots: Vec<usize>) -> Vec<Option<usize>> {
    slots
        .into_iter()
        .map(|s| (s != NONE).then_some(s))
        .collect()
}
