//! The small matcher against the regex crate: chosen patterns, every built-in pattern it
//! answers, and patterns drawn at random from its grammar, each on texts that match,
//! nearly match, or are random (non-ASCII included: `é`, the Kelvin sign, the long s, an
//! emoji). Any disagreement in `is_match`, `find`, a group's span or a group's name fails.

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

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.below(from.len())]
    }
}

/// Characters every text draws on besides the pattern's own: non-ASCII that a negated
/// class or `.` must consume whole (and that Unicode case folding would relate to `k` and
/// `s`), line ends and blanks around prompts.
const EXTRA: &[char] = &[
    '0', '7', 'a', 'k', 's', ' ', '/', '#', 'é', '\u{212A}', '\u{17F}', '🦀', '\n', '\r', '\t',
];

/// Checks `small` against the regex crate on `text`: `is_match`, `find`, every group's
/// span. Panics on a disagreement.
fn agree_on(source: &str, small: &Small, re: &Regex, text: &str) {
    let why = || format!("pattern {source:?} on {text:?}: small matcher and regex disagree");
    assert_eq!(
        small.is_match(text),
        re.is_match(text),
        "is_match: {}",
        why()
    );
    assert_eq!(
        small.find(text),
        re.find(text).map(|m| (m.start(), m.end())),
        "find: {}",
        why()
    );
    let ours = small.captures(text);
    let theirs = re.captures(text).map(|c| {
        c.iter()
            .flat_map(|m| match m {
                Some(m) => [Some(m.start()), Some(m.end())],
                None => [None, None],
            })
            .collect::<Vec<_>>()
    });
    assert_eq!(ours, theirs, "captures: {}", why());
}

/// Checks `small` against the regex crate (group names, and [`agree_on`] on texts built
/// around the pattern: samples of its own language, mutated, with junk around them, and
/// random texts over the characters it uses). Panics on the first disagreement.
pub(crate) fn agree(source: &str, small: &Small, rng: &mut Rng) {
    agree_n(source, small, rng, 200, 300);
}

fn agree_n(source: &str, small: &Small, rng: &mut Rng, samples: usize, randoms: usize) {
    let re = Regex::new(source).unwrap_or_else(|e| panic!("{source:?}: {e}"));
    let names: Vec<Option<&str>> = re.capture_names().collect();
    assert_eq!(
        small.names.iter().map(|n| n.as_deref()).collect::<Vec<_>>(),
        names,
        "{source:?}: group names"
    );
    for name in names.iter().flatten() {
        assert_eq!(
            small.group_index(name),
            names.iter().position(|n| *n == Some(*name))
        );
    }
    let mut alphabet: Vec<char> = source
        .chars()
        .filter(|c| c.is_ascii_graphic() || *c == ' ' || !c.is_ascii())
        .collect();
    alphabet.extend(EXTRA);
    let mut texts: Vec<String> = vec![String::new()];
    for _ in 0..samples {
        let s = small.sample(|n| rng.below(n));
        let mut chars: Vec<char> = s.chars().collect();
        texts.push(s.clone());
        for _ in 0..=rng.below(2) {
            match rng.below(4) {
                0 if !chars.is_empty() => {
                    let at = rng.below(chars.len());
                    chars.remove(at);
                }
                1 => {
                    let at = rng.below(chars.len() + 1);
                    chars.insert(at, rng.pick(&alphabet));
                }
                2 if !chars.is_empty() => {
                    let at = rng.below(chars.len());
                    chars[at] = rng.pick(&alphabet);
                }
                _ => {}
            }
        }
        texts.push(chars.iter().collect());
        texts.push(format!("x{s}"));
        texts.push(format!("{s}x"));
        texts.push(format!("é {s}\n{s} "));
        texts.push(format!("{s}\n{s}"));
    }
    for _ in 0..randoms {
        let len = rng.below(12);
        texts.push((0..len).map(|_| rng.pick(&alphabet)).collect());
    }
    for t in &texts {
        agree_on(source, small, &re, t);
    }
}

#[test]
fn the_subset_parses_and_everything_else_is_left_to_the_regex_crate() {
    for s in [
        r"^(?:[0-9]+(?:/[0-9]+){0,3})$",
        r"^% ?Invalid input",
        r"a{2}b{1,}c*\.\-",
        r"",
        r"^$",
        r"^(?P<host>[0-9A-Za-z_.\-]+)#",
        r"(?m)(?:^(?P<host>[0-9A-Za-z_.\-]+)\(config-[0-9A-Za-z_.\-]+\)#)[ \t]*\z",
        r"Destination filename \[[^\]\n]*\]\?",
        r"(?:Port-channel|Po)([0-9]+)",
        r"a|b",
        r"^% Invalid .*$",
        r"[0-9a-f]+",
        r"(a)(?<b>c)",
        r"a+?b??c*?d{2,3}?",
        r"a$b",
        r"a^",
        r"é\x{1F980}\u00e9\U0001F980\x41",
        r"\\w \[[\t\n\x0B\x0C\r ]\]",
        r"\A(?s:.)\z",
        r"\#\&\~\ \%",
    ] {
        assert!(Small::parse(s).is_some(), "{s}");
    }
    for s in [
        r"(?i)^command rejected",
        r"(?x)a b",
        r"(?-u:\b)x",
        r"\bword",
        r"\d+",
        r"\pL",
        r"[\W]",
        r"[[:alpha:]]",
        r"[a[b]]",
        r"[a&&b]",
        r"[a--b]",
        r"[a~~b]",
        r"a**",
        r"a{2}{3}",
        r"*a",
        r"a|*",
        r"^*",
        r"(?m)*",
        r"a{3,2}",
        r"a{99}",
        r"a{,3}",
        r"a{",
        r"a}",
        r"]",
        r"\e",
        r"\1",
        r"\<",
        r"\x4",
        r"\x{}",
        r"\x{D800}",
        r"(?P<a>x)(?P<a>y)",
        r"(a",
        r"a)",
        r"[a",
        r"[z-a]",
        r"(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:a)))))))))))))))))",
    ] {
        assert!(Small::parse(s).is_none(), "{s}");
    }
}

#[test]
fn chosen_patterns_match_as_the_regex_crate_does() {
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
        // Alternation, leftmost-first: `a` wins over `ab` when it comes first.
        r"a|ab",
        r"(a|ab)(c|bcd)(d*)",
        r"(?:Port-channel|Po)([0-9]+)",
        r"^% ?(?:[iI][nN][vV][aA][lL][iI][dD]|[eE][rR][rR][oO][rR])",
        // Groups in loops keep their last iteration; unmatched ones are `None`.
        r"(?:(a)|(b))+",
        r"(a*)+",
        r"(a*)*",
        r"(a?)*?b",
        r"(?:(a)|b)*c",
        r"()",
        r"(|a)+",
        // Lazy quantifiers.
        r"a+?",
        r"<(.+?)>",
        r"(a{1,3}?)(a*)",
        // Negated classes and `.` consume whole codepoints.
        r"[^a]",
        r"^.$",
        r"x[^\]\n]*y",
        r"(?s:.)+",
        // Anchors anywhere, multi-line or not.
        r"(?m)^a$",
        r"(?m)$",
        r"(?m)^",
        r"a$|^b",
        r"(?m:^k)s$",
        // The shapes of the prompts and questions an attach waits for.
        r"(?m)(?:^(?P<host>[0-9A-Za-z_.\-]+)#)[ \t]*\z",
        r"(?m)(?:^(?P<host>sw\-01)\(config\)#)[ \t]*\z",
        r"(?m)(?:Destination filename \[[^\]\n]*\]\?)[ \t]*\z",
        r"(?m)(?: ?--More-- ?)[ \t]*\z",
        r"(?m)(?:^--\{[^}\n]*running[^}\n]*\}--\[[^\]\n]*\]--\n(?P<host>[0-9A-Za-z_.\-]+:[0-9A-Za-z_.\-]+)#)[ \t]*\z",
    ] {
        let small = Small::parse(s).unwrap_or_else(|| panic!("{s} is not small"));
        agree(s, &small, &mut rng);
    }
}

/// Every built-in pattern, of every platform, and every prompt pinned to a host name, is
/// within the subset (so no attach of a built-in platform builds a regex-crate automaton),
/// and agrees with the regex crate.
#[test]
fn every_builtin_pattern_is_small_and_agrees_with_the_regex_crate() {
    let catalog = crate::catalog::Catalog::builtin().unwrap();
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for name in catalog.names() {
        let platform = catalog.get(name).unwrap();
        // A host name as a switch would print it, and one made of every character
        // `regex::escape` escapes (and some it does not).
        let pinned: Vec<_> = ["sw-01.lab", r"a.b(c)[d]{e}|f^g$h*i+j?k\l#m&n-o~p q:é🦀"]
            .iter()
            .flat_map(|host| platform.modes.iter().filter_map(|m| m.prompt.pinned(host)))
            .collect();
        let mut patterns = platform.patterns();
        patterns.extend(pinned.iter().map(|p| ("pinned prompt".to_string(), p)));
        for (what, p) in patterns {
            let s = Small::parse(p.as_str()).unwrap_or_else(|| {
                panic!("{name} {what} {:?} is beyond the small matcher", p.as_str())
            });
            agree_n(p.as_str(), &s, &mut rng, 40, 80);
        }
    }
}

/// Patterns drawn from the subset's grammar (module `syntax`).
struct Gen<'r> {
    rng: &'r mut Rng,
    groups: usize,
}

impl Gen<'_> {
    fn alternation(&mut self, depth: usize, out: &mut String) {
        let branches = match self.rng.below(6) {
            0 => 2,
            1 => 3,
            _ => 1,
        };
        for b in 0..branches {
            if b > 0 {
                out.push('|');
            }
            self.concat(depth, out);
        }
    }

    fn concat(&mut self, depth: usize, out: &mut String) {
        for _ in 0..self.rng.below(5) {
            self.item(depth, out);
        }
    }

    fn item(&mut self, depth: usize, out: &mut String) {
        // Whether the item may be repeated, and zero times (`(a){0}` drops its group in
        // the regex crate, and is left to it).
        let (repeatable, zero) = match self.rng.below(if depth < 3 { 12 } else { 8 }) {
            0..=2 => {
                let lit = self.rng.pick(&[
                    "a",
                    "b",
                    "c",
                    "k",
                    "s",
                    "-",
                    " ",
                    "é",
                    "🦀",
                    r"\n",
                    r"\.",
                    r"\(",
                    r"\[",
                    r"\]",
                    r"\-",
                    r"\\",
                    r"\x{1F980}",
                    r"\xe9",
                    "#",
                    "~",
                ]);
                out.push_str(lit);
                (true, true)
            }
            3 => {
                self.class(out);
                (true, true)
            }
            4 => {
                out.push('.');
                (true, true)
            }
            5 => {
                out.push_str(self.rng.pick(&["^", "$", r"\A", r"\z"]));
                (false, false)
            }
            6 => {
                out.push_str(self.rng.pick(&["(?m)", "(?s)", "(?-m)", "(?ms)", "(?m-s)"]));
                (false, false)
            }
            7 => {
                out.push_str(self.rng.pick(&["a", "b", "é"]));
                (true, true)
            }
            _ => {
                let open = match self.rng.below(6) {
                    0 | 1 => "(?:".to_string(),
                    2 => "(".to_string(),
                    3 => {
                        self.groups += 1;
                        format!("(?P<g{}>", self.groups)
                    }
                    4 => {
                        self.groups += 1;
                        format!("(?<g{}>", self.groups)
                    }
                    _ => self.rng.pick(&["(?m:", "(?s:", "(?-s:"]).to_string(),
                };
                out.push_str(&open);
                self.alternation(depth + 1, out);
                out.push(')');
                // A group may hold a capturing one.
                (true, false)
            }
        };
        if repeatable {
            let q = self.rng.pick(&[
                "", "", "", "", "?", "*", "+", "{2}", "{0,2}", "{1,}", "{0}", "{1,3}",
            ]);
            let q = if q == "{0}" && !zero { "{1}" } else { q };
            out.push_str(q);
            if !q.is_empty() && self.rng.below(3) == 0 {
                out.push('?');
            }
        }
    }

    fn class(&mut self, out: &mut String) {
        out.push('[');
        if self.rng.below(2) == 0 {
            out.push('^');
        }
        for i in 0..=self.rng.below(3) {
            if i == 0 && out.ends_with('[') {
                // A `^` first would negate the class instead.
                out.push('a');
            }
            out.push_str(self.rng.pick(&[
                "a",
                "b-d",
                "k",
                r"\]",
                r"\n",
                r"\-",
                "é",
                r"\x{1F980}",
                " ",
                r"\t",
                "0-9",
                r"\\",
                ".",
                "^",
                "s-z",
                r"\x{212A}",
            ]));
        }
        out.push(']');
    }
}

#[test]
fn random_patterns_of_the_subset_match_as_the_regex_crate_does() {
    let mut rng = Rng(0x5DEE_CE66_D1CE_B00C);
    let mut too_long = 0;
    for _ in 0..2000 {
        let mut source = String::new();
        let mut g = Gen {
            rng: &mut rng,
            groups: 0,
        };
        g.alternation(0, &mut source);
        let Some(small) = Small::parse(&source) else {
            // Only a program over the size limit may be refused.
            assert!(syntax::parse(&source).is_some(), "{source:?} is not small");
            too_long += 1;
            continue;
        };
        agree_n(&source, &small, &mut rng, 6, 12);
    }
    assert!(too_long < 20, "{too_long} patterns over the size limit");
}

/// Strings of the pattern syntax's own characters, most of them invalid or beyond the
/// subset: whatever the small matcher accepts, the regex crate must accept and match
/// alike (it never reads a pattern more loosely than the regex crate).
#[test]
fn the_subset_never_accepts_what_the_regex_crate_reads_otherwise() {
    let mut rng = Rng(0x0123_4567_89AB_CDEF);
    let pieces = [
        "a", "b", "é", "(", ")", "[", "]", "^", "$", "-", "|", "?", "*", "+", "{", "}", ",", "1",
        "2", ".", "\\", "\\n", "\\x", "\\x{", "(?", "(?:", "(?P<", "<", ">", "n", "m", "s", "i",
        ":", "&", "~", "&&", "--", "\\z", "\\A", "\\b", "\\]",
    ];
    let mut accepted = 0;
    for _ in 0..12_000 {
        let source: String = (0..=rng.below(8)).map(|_| rng.pick(&pieces)).collect();
        if let Some(small) = Small::parse(&source) {
            accepted += 1;
            assert!(
                Regex::new(&source).is_ok(),
                "{source:?}: small accepts what the regex crate refuses"
            );
            agree_n(&source, &small, &mut rng, 4, 8);
        }
    }
    assert!(accepted > 600, "only {accepted} accepted");
}

#[test]
fn nested_loops_stay_linear() {
    // A backtracking matcher takes exponential time here; the NFA simulation does not.
    let s = Small::parse(r"^(?:(?:[0-9]*)*)*x$").unwrap();
    let ones = "1".repeat(100_000);
    assert!(!s.is_match(&ones));
    assert!(s.is_match(&format!("{ones}x")));
    let source = r"(?:(a*)*)*b";
    let (s, re) = (Small::parse(source).unwrap(), Regex::new(source).unwrap());
    let a = "a".repeat(20_000);
    agree_on(source, &s, &re, &a);
    agree_on(source, &s, &re, &format!("{a}b"));
}

#[test]
fn a_prompt_is_refused_from_the_end_of_the_text() {
    // Anchored at the end: run backwards, a tail that is not a prompt costs a step or two,
    // however long the text before it.
    let s = Small::parse(r"(?m)(?:^(?P<host>[0-9A-Za-z_.\-]+)#)[ \t]*\z").unwrap();
    assert!(s.reverse.is_some());
    let long = format!("{}\nsw1#", "sw1# x ".repeat(50_000));
    assert_eq!(s.find(&long), Some((long.len() - 4, long.len())));
    assert_eq!(
        s.captures(&long),
        Some(vec![
            Some(long.len() - 4),
            Some(long.len()),
            Some(long.len() - 4),
            Some(long.len() - 1)
        ])
    );
    assert!(!s.is_match(&format!("{long} x")));
    assert!(Small::parse(r"^(?P<host>[0-9A-Za-z_.\-]+)#")
        .unwrap()
        .reverse
        .is_none());
    assert!(Small::parse(r"a\z|b").unwrap().reverse.is_none());
    assert!(Small::parse(r"^(?:[0-9]+)$").unwrap().reverse.is_none());
}
