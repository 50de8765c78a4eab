//! A small command-grammar matcher shared by the keyword CLIs (IOS-like,
//! VRP-like, Junos): rules written as specs like
//! `switchport trunk allowed vlan add|remove <vlans>`, unique-prefix keyword
//! abbreviation where the vendor allows it, and the three classic verdicts —
//! invalid input at a token, incomplete command, ambiguous command — so typos
//! are caught the way the vendor catches them.

use crate::words::{
    abbreviated, keyword, parse_vlan, parse_vlan_list, tokenize, vlan_ranges, IfNaming, Keyword,
    Token,
};

/// Kinds of parameter a rule can take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Param {
    /// VLAN id 1-4094.
    Vlan,
    /// VLAN list `10,20-30` (single token).
    Vlans,
    /// Number within bounds.
    Num(u32, u32),
    /// Any single token.
    Word,
    /// The rest of the line (at least one token).
    Rest,
    /// An interface name (one token, or type + number as two tokens).
    If,
}

#[derive(Debug, Clone)]
enum Tok {
    Kw(Vec<&'static str>, bool),
    P(Param),
}

/// A captured value.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// Keyword chosen from alternatives, or a word.
    Word(String),
    /// A number / VLAN id.
    Num(u32),
    /// A VLAN list.
    Vlans(Vec<u16>),
    /// Interface name as typed (the caller canonicalises).
    If(String),
    /// Rest of the line, verbatim.
    Rest(String),
}

impl Arg {
    /// Text of the argument.
    pub fn text(&self) -> String {
        match self {
            Arg::Word(s) | Arg::If(s) | Arg::Rest(s) => s.clone(),
            Arg::Num(n) => n.to_string(),
            Arg::Vlans(v) => vlan_ranges(v, ",", "-"),
        }
    }
}

/// A grammar rule: a token sequence and an action name.
#[derive(Debug, Clone)]
pub struct Rule {
    toks: Vec<Tok>,
    /// The action the handler dispatches on.
    pub act: &'static str,
}

/// Verdict of matching a line.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Matched `act` with captured arguments.
    Ok(&'static str, Vec<Arg>),
    /// Nothing matched; byte offset of the offending token.
    Invalid(usize),
    /// All tokens matched but more are required.
    Incomplete,
    /// An abbreviation matched several keywords; byte offset.
    Ambiguous(usize),
}

/// A set of rules for one CLI mode.
#[derive(Debug, Clone)]
pub struct Grammar {
    rules: Vec<Rule>,
    /// Accept unique keyword prefixes.
    pub abbrev: bool,
}

fn parse_spec(spec: &'static str) -> Vec<Vec<Tok>> {
    let mut variants: Vec<Vec<Tok>> = vec![Vec::new()];
    for w in spec.split_whitespace() {
        let (opt, w) = if let Some(inner) = w.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
            (true, inner)
        } else {
            (false, w)
        };
        let tok = if let Some(p) = w.strip_prefix('<').and_then(|x| x.strip_suffix('>')) {
            Tok::P(match p {
                "vlan" => Param::Vlan,
                "vlans" => Param::Vlans,
                "word" => Param::Word,
                "rest" => Param::Rest,
                "if" => Param::If,
                other => {
                    let (a, b) = other
                        .strip_prefix("num:")
                        .and_then(|r| r.split_once('-'))
                        .unwrap_or(("0", "4294967295"));
                    Param::Num(a.parse().unwrap_or(0), b.parse().unwrap_or(u32::MAX))
                }
            })
        } else {
            let alts: Vec<&'static str> = w.split('|').collect();
            let capture = alts.len() > 1;
            Tok::Kw(alts, capture)
        };
        if opt {
            let mut more = variants.clone();
            for v in &mut more {
                v.push(tok.clone());
            }
            variants.extend(more);
        } else {
            for v in &mut variants {
                v.push(tok.clone());
            }
        }
    }
    variants
}

enum RuleMatch {
    Ok(Vec<Arg>),
    Incomplete,
    Fail(usize),
    Ambig(usize),
}

impl Grammar {
    /// Build from `(spec, action)` pairs; `[x]` marks an optional token.
    pub fn new(abbrev: bool, specs: &[(&'static str, &'static str)]) -> Grammar {
        let mut rules = Vec::new();
        for (spec, act) in specs {
            for toks in parse_spec(spec) {
                rules.push(Rule { toks, act });
            }
        }
        Grammar { rules, abbrev }
    }

    /// Add more rules.
    pub fn extend(&mut self, specs: &[(&'static str, &'static str)]) {
        for (spec, act) in specs {
            for toks in parse_spec(spec) {
                self.rules.push(Rule { toks, act });
            }
        }
    }

    fn kw_match(&self, alts: &[&'static str], t: &str) -> Option<&'static str> {
        match keyword(alts, t, true) {
            Keyword::Exact(k) => Some(k),
            Keyword::Prefix(k) if self.abbrev => Some(k),
            Keyword::Prefix(_) | Keyword::Ambiguous(_) | Keyword::Unknown => None,
        }
    }

    /// Keywords that rules sharing `prefix` offer at position `j`.
    fn siblings(&self, prefix: &[&'static str], j: usize) -> Vec<&'static str> {
        let mut out = Vec::new();
        for r in &self.rules {
            if r.toks.len() <= j {
                continue;
            }
            let same = (0..j).all(|k| match &r.toks[k] {
                Tok::Kw(alts, _) => alts.contains(&prefix[k]),
                Tok::P(_) => false,
            });
            if !same {
                continue;
            }
            if let Tok::Kw(alts, _) = &r.toks[j] {
                for a in alts {
                    if !out.contains(a) {
                        out.push(*a);
                    }
                }
            }
        }
        out
    }

    fn match_rule(&self, r: &Rule, toks: &[Token], line: &str, names: &IfNaming) -> RuleMatch {
        let mut args = Vec::new();
        let mut i = 0;
        let mut kws: Vec<&'static str> = Vec::new();
        let mut all_kw = true;
        for (j, t) in r.toks.iter().enumerate() {
            let Some(tok) = toks.get(i) else {
                return RuleMatch::Incomplete;
            };
            match t {
                Tok::Kw(alts, capture) => {
                    let Some(kw) = self.kw_match(alts, &tok.text) else {
                        return RuleMatch::Fail(i);
                    };
                    if all_kw && !kw.eq_ignore_ascii_case(&tok.text) {
                        let sib = self.siblings(&kws, j);
                        let n = abbreviated(&sib, &tok.text, true).len();
                        if n > 1 {
                            return RuleMatch::Ambig(i);
                        }
                    }
                    kws.push(kw);
                    if *capture {
                        args.push(Arg::Word(kw.to_string()));
                    }
                    i += 1;
                }
                Tok::P(p) => {
                    all_kw = false;
                    let s = tok.text.as_str();
                    let a = match p {
                        Param::Vlan => parse_vlan(s).map(|v| Arg::Num(v as u32)),
                        Param::Vlans => parse_vlan_list(s, &[','], "-").map(Arg::Vlans),
                        Param::Num(lo, hi) => s
                            .parse::<u32>()
                            .ok()
                            .filter(|n| n >= lo && n <= hi && s.bytes().all(|b| b.is_ascii_digit()))
                            .map(Arg::Num),
                        Param::Word => Some(Arg::Word(s.to_string())),
                        Param::Rest => {
                            let rest = line.get(tok.at..).unwrap_or("").trim_end().to_string();
                            args.push(Arg::Rest(rest));
                            return RuleMatch::Ok(args);
                        }
                        Param::If => {
                            if names.is_type_prefix(s)
                                && toks.get(i + 1).is_some_and(|n| {
                                    n.text.starts_with(|c: char| c.is_ascii_digit())
                                })
                            {
                                let joined = format!("{s}{}", toks[i + 1].text);
                                i += 1;
                                Some(Arg::If(joined))
                            } else if s.contains(|c: char| c.is_ascii_digit()) {
                                Some(Arg::If(s.to_string()))
                            } else if names.is_type_prefix(s) {
                                return RuleMatch::Incomplete;
                            } else {
                                None
                            }
                        }
                    };
                    let Some(a) = a else {
                        return RuleMatch::Fail(i);
                    };
                    args.push(a);
                    i += 1;
                }
            }
        }
        if i < toks.len() {
            return RuleMatch::Fail(i);
        }
        RuleMatch::Ok(args)
    }

    /// Match a line against every rule.
    pub fn parse(&self, line: &str, names: &IfNaming) -> Verdict {
        let toks = tokenize(line);
        if toks.is_empty() {
            return Verdict::Incomplete;
        }
        let mut furthest_fail: Option<usize> = None;
        let mut incomplete = false;
        let mut ambig: Option<usize> = None;
        for r in &self.rules {
            match self.match_rule(r, &toks, line, names) {
                RuleMatch::Ok(args) => return Verdict::Ok(r.act, args),
                RuleMatch::Incomplete => incomplete = true,
                RuleMatch::Fail(i) => {
                    furthest_fail = Some(furthest_fail.map_or(i, |f: usize| f.max(i)));
                }
                RuleMatch::Ambig(i) => ambig = Some(i),
            }
        }
        if let Some(i) = ambig {
            return Verdict::Ambiguous(toks[i].at);
        }
        if incomplete {
            return Verdict::Incomplete;
        }
        let at = furthest_fail
            .and_then(|i| toks.get(i))
            .map(|t| t.at)
            .unwrap_or(0);
        Verdict::Invalid(at)
    }
}

/// Argument helpers for handlers.
pub trait Args {
    /// Number at index.
    fn num(&self, i: usize) -> u32;
    /// VLAN id at index.
    fn vlan(&self, i: usize) -> u16;
    /// VLAN list at index (a single VLAN becomes a list of one).
    fn vlans(&self, i: usize) -> Vec<u16>;
    /// Text at index.
    fn s(&self, i: usize) -> String;
}

impl Args for Vec<Arg> {
    fn num(&self, i: usize) -> u32 {
        match self.get(i) {
            Some(Arg::Num(n)) => *n,
            Some(a) => a.text().parse().unwrap_or(0),
            None => 0,
        }
    }
    fn vlan(&self, i: usize) -> u16 {
        self.num(i) as u16
    }
    fn vlans(&self, i: usize) -> Vec<u16> {
        match self.get(i) {
            Some(Arg::Vlans(v)) => v.clone(),
            Some(Arg::Num(n)) => vec![*n as u16],
            _ => Vec::new(),
        }
    }
    fn s(&self, i: usize) -> String {
        self.get(i).map(Arg::text).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naming() -> IfNaming {
        IfNaming {
            types: vec![
                "GigabitEthernet",
                "TenGigabitEthernet",
                "Port-channel",
                "Vlan",
            ],
            sep: "",
            bare_numbers: false,
        }
    }

    fn g() -> Grammar {
        Grammar::new(
            true,
            &[
                ("switchport mode access|trunk", "mode"),
                ("switchport access vlan <vlan>", "access"),
                ("shutdown", "shut"),
                ("spanning-tree portfast", "stp"),
                ("description <rest>", "desc"),
                ("interface <if>", "intf"),
            ],
        )
    }

    #[test]
    fn abbreviations_typos_and_incomplete() {
        let n = naming();
        assert_eq!(
            g().parse("sw mo acc", &n),
            Verdict::Ok("mode", vec![Arg::Word("access".into())])
        );
        assert_eq!(g().parse("swithport mode access", &n), Verdict::Invalid(0));
        assert_eq!(g().parse("switchport mode acess", &n), Verdict::Invalid(16));
        assert_eq!(g().parse("switchport mode", &n), Verdict::Incomplete);
        assert_eq!(g().parse("s", &n), Verdict::Ambiguous(0));
        assert_eq!(
            g().parse("int gi 1/0/5", &n),
            Verdict::Ok("intf", vec![Arg::If("gi1/0/5".into())])
        );
        assert_eq!(
            g().parse("description uplink to  x", &n),
            Verdict::Ok("desc", vec![Arg::Rest("uplink to  x".into())])
        );
        assert_eq!(n.canon("gi1/0/5").as_deref(), Some("GigabitEthernet1/0/5"));
        assert_eq!(n.canon("po10").as_deref(), Some("Port-channel10"));
    }
}
