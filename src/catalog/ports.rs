//! Port names as each platform spells them (`[platforms.X.port_names]`): the interface type
//! keywords its CLI accepts, their full names and the exact abbreviations it takes, whether
//! the CLI (and LLDP) put one space between type and number, and the number's shape. From
//! this table a request's port name becomes the platform's **canonical** name — the full
//! type as the device prints it in its configuration, ASCII case folded, the platform's
//! spacing — before policy, lock, audit and rendering see it, so `Et48`, `ethernet48` and
//! `Ethernet48` are one port to `denied_ports`.
//!
//! Abbreviations are exact spellings, never "any prefix": on IOS `Tw` (2.5G) is a prefix of
//! `TwentyFiveGigE` too, whose abbreviation is `Twe`. The lint proves no spelling names two
//! types and checks the table's own samples. This module only names ports; which ports a
//! device lets a caller use is `policy`.

use super::pattern::{Pattern, Syntax};
use super::raw::RawPortNames;
pub use super::raw::Spacing;

/// One interface type.
#[derive(Debug, Clone)]
pub struct PortType {
    /// The canonical (full) type name, as the device prints it (`TenGigabitEthernet`); empty
    /// for bare numbers (AOS-CX `1/1/5`).
    pub name: String,
    /// Every accepted spelling, lower-cased: the name and its abbreviations.
    pub spellings: Vec<String>,
    /// The number after the type (anchored).
    pub number: Pattern,
    /// Spacing between type and number.
    pub space: Spacing,
}

/// A platform's port-name table, compiled.
#[derive(Debug, Clone)]
pub struct PortNames {
    /// The interface types.
    pub types: Vec<PortType>,
    /// Input → canonical name pairs the lint checks (from captures and vendor docs).
    pub samples: Vec<(String, String)>,
    /// Names the lint checks are refused.
    pub refused: Vec<String>,
}

/// Why a name is not a port of this platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameError {
    /// No type of the table spells it.
    NoType,
    /// The type is known, but a space separates it where the CLI has none.
    Space(String),
    /// Two types read it differently (a lint error in the table).
    Ambiguous(Vec<String>),
}

impl RawPortNames {
    /// A regex matching exactly the canonical names of the table (for messages and for a
    /// platform that gives no `port_pattern` of its own).
    pub(super) fn canonical_pattern(&self) -> String {
        self.types
            .iter()
            .map(|t| {
                let space = match t.space.unwrap_or(self.space) {
                    Spacing::One if !t.name.is_empty() => " ",
                    _ => "",
                };
                let number = t.number.as_deref().unwrap_or(&self.number);
                format!("{}{space}(?:{number})", regex::escape(&t.name))
            })
            .collect::<Vec<_>>()
            .join("|")
    }
}

impl PortNames {
    pub(super) fn compile(r: &RawPortNames, syntax: Syntax) -> Result<PortNames, String> {
        let number = |s: &str| {
            super::pattern::compile(&format!("^(?:{s})$"), syntax)
                .map_err(|e| format!("port_names.number {s:?}: {e}"))
        };
        let default = number(&r.number)?;
        let mut types = Vec::new();
        for t in &r.types {
            let mut spellings = vec![t.name.to_ascii_lowercase()];
            for a in &t.abbrev {
                let a = a.to_ascii_lowercase();
                if !spellings.contains(&a) {
                    spellings.push(a);
                }
            }
            types.push(PortType {
                name: t.name.clone(),
                spellings,
                number: match &t.number {
                    Some(n) => number(n)?,
                    None => default.clone(),
                },
                space: t.space.unwrap_or(r.space),
            });
        }
        Ok(PortNames {
            types,
            samples: r
                .samples
                .iter()
                .map(|(a, b)| (a.clone(), b.clone()))
                .collect(),
            refused: r.refused.clone(),
        })
    }

    /// Every reading of `typed` as (type, number): a spelling it starts with (ASCII case
    /// folded), at most one ASCII space where the type allows one, and a number the type
    /// takes. Numbers are lower-cased: interface numbers are digits and separators, and the
    /// few letters some vendors use (`1/xg1`) are case-insensitive on those CLIs.
    fn readings(&self, typed: &str) -> (Vec<(&PortType, String)>, Option<&PortType>) {
        let lower = typed.to_ascii_lowercase();
        let mut out: Vec<(&PortType, String)> = Vec::new();
        let mut spaced_only: Option<&PortType> = None;
        for t in &self.types {
            for s in &t.spellings {
                let Some(rest) = lower.strip_prefix(s.as_str()) else {
                    continue;
                };
                let (spaced, number) = match rest.strip_prefix(' ') {
                    Some(n) if !s.is_empty() => (true, n),
                    _ => (false, rest),
                };
                if !t.number.is_match(number) {
                    continue;
                }
                if spaced && t.space == Spacing::None {
                    spaced_only.get_or_insert(t);
                    continue;
                }
                if !out.iter().any(|(o, n)| o.name == t.name && n == number) {
                    out.push((t, number.to_string()));
                }
            }
        }
        (out, spaced_only)
    }

    /// The canonical name of `typed`, or why it has none.
    pub fn canonical(&self, typed: &str) -> Result<String, NameError> {
        let (found, spaced) = self.readings(typed);
        match found.as_slice() {
            [(t, number)] => Ok(t.join(number)),
            [] => Err(match spaced {
                Some(t) => NameError::Space(t.name.clone()),
                None => NameError::NoType,
            }),
            many => Err(NameError::Ambiguous(
                many.iter().map(|(t, n)| t.join(n)).collect(),
            )),
        }
    }

    /// A canonical name split into its type and number (`TenGigabitEthernet 1/5` →
    /// `TenGigabitEthernet`, `1/5`), for the `{port_type}` / `{port_number}` variables.
    pub fn split(&self, canonical: &str) -> Option<(String, String)> {
        let (found, _) = self.readings(canonical);
        match found.as_slice() {
            [(t, number)] => Some((t.name.clone(), number.clone())),
            _ => None,
        }
    }

    /// A port glob from the configuration (`denied_ports = ["Gi1/0/4*"]`) in canonical
    /// spelling (`GigabitEthernet1/0/4*`), so that a rule written with an abbreviation, in
    /// another case or with LLDP's spacing still covers the canonical names requests are
    /// turned into. The type is the pattern's leading letters (up to a digit, a wildcard or
    /// one space); a pattern whose type the table does not spell is returned as written, and
    /// one starting with a digit gets the bare-number type's name (`1/1/48` →
    /// `ethernet 1/1/48` on FastIron).
    pub fn canonical_glob(&self, pattern: &str) -> String {
        let end = pattern
            .find(|c: char| c.is_ascii_digit() || matches!(c, '*' | '?' | '[' | ' '))
            .unwrap_or(pattern.len());
        let (ty, rest) = pattern.split_at(end);
        let lower = ty.to_ascii_lowercase();
        let spaced = rest.strip_prefix(' ');
        let number = spaced.unwrap_or(rest);
        for t in &self.types {
            if !t.spellings.contains(&lower) {
                continue;
            }
            if ty.is_empty() && !number.starts_with(|c: char| c.is_ascii_digit()) {
                break;
            }
            if spaced.is_some() && (ty.is_empty() || t.space == Spacing::None) {
                break;
            }
            return t.join(number);
        }
        pattern.to_string()
    }

    /// The full type names, for messages (`Gi`-style abbreviations are in the catalog).
    pub fn type_names(&self) -> Vec<&str> {
        self.types
            .iter()
            .map(|t| {
                if t.name.is_empty() {
                    "(bare number)"
                } else {
                    t.name.as_str()
                }
            })
            .collect()
    }

    /// Lint: no spelling names two types with the same number shape, samples read as
    /// declared, refused names are refused.
    pub(super) fn lint(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (i, a) in self.types.iter().enumerate() {
            for b in &self.types[i + 1..] {
                for s in a.spellings.iter().filter(|s| b.spellings.contains(s)) {
                    out.push(format!(
                        "port_names: spelling {s:?} names both {:?} and {:?}",
                        a.name, b.name
                    ));
                }
            }
            if a.name.chars().any(|c| c.is_whitespace()) {
                out.push(format!("port_names: type {:?} contains a space", a.name));
            }
        }
        for (typed, want) in &self.samples {
            match self.canonical(typed) {
                Ok(got) if &got == want => {}
                Ok(got) => out.push(format!(
                    "port_names.samples: {typed:?} canonicalises to {got:?}, not {want:?}"
                )),
                Err(e) => out.push(format!(
                    "port_names.samples: {typed:?} is refused ({e:?}), expected {want:?}"
                )),
            }
            if let Ok(again) = self.canonical(want) {
                if &again != want {
                    out.push(format!(
                        "port_names.samples: canonical {want:?} is not stable (reads as {again:?})"
                    ));
                }
            }
        }
        for typed in &self.refused {
            if let Ok(got) = self.canonical(typed) {
                out.push(format!(
                    "port_names.refused: {typed:?} is accepted as {got:?}"
                ));
            }
        }
        out
    }
}

impl PortType {
    fn join(&self, number: &str) -> String {
        match self.space {
            Spacing::One if !self.name.is_empty() => format!("{} {number}", self.name),
            _ => format!("{}{number}", self.name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> PortNames {
        let raw: RawPortNames = toml::from_str(text).unwrap();
        PortNames::compile(&raw, Syntax::Check).unwrap()
    }

    const IOS: &str = r#"
        number = '\d+(?:/\d+){0,3}'
        types = [
            { name = "GigabitEthernet", abbrev = ["Gi", "Gig"] },
            { name = "TwoGigabitEthernet", abbrev = ["Tw"] },
            { name = "TwentyFiveGigE", abbrev = ["Twe"] },
            { name = "Port-channel", abbrev = ["Po"], number = '\d+' },
        ]
    "#;

    #[test]
    fn exact_abbreviations_not_prefixes() {
        let t = table(IOS);
        assert_eq!(t.canonical("gi1/0/5").unwrap(), "GigabitEthernet1/0/5");
        assert_eq!(t.canonical("Tw1/0/1").unwrap(), "TwoGigabitEthernet1/0/1");
        assert_eq!(t.canonical("TWE1/0/1").unwrap(), "TwentyFiveGigE1/0/1");
        assert_eq!(t.canonical("po7").unwrap(), "Port-channel7");
        // `Giga` is a prefix of GigabitEthernet but not a spelling the table lists.
        assert_eq!(t.canonical("Giga1/0/5"), Err(NameError::NoType));
        assert_eq!(t.canonical("Po7/1"), Err(NameError::NoType));
        assert_eq!(
            t.canonical("Gi 1/0/5"),
            Err(NameError::Space("GigabitEthernet".into()))
        );
        assert_eq!(
            t.split("TwentyFiveGigE1/0/1"),
            Some(("TwentyFiveGigE".into(), "1/0/1".into()))
        );
    }

    #[test]
    fn spacing_one_and_either() {
        let t = table(
            r#"
            space = "one"
            number = '\d+/\d+'
            types = [
                { name = "TenGigabitEthernet", abbrev = ["Te"] },
                { name = "Eth", abbrev = ["ethernet"], space = "either" },
                { name = "", number = '\d+/\d+/\d+' },
            ]
        "#,
        );
        assert_eq!(t.canonical("Te 0/33").unwrap(), "TenGigabitEthernet 0/33");
        assert_eq!(t.canonical("te0/33").unwrap(), "TenGigabitEthernet 0/33");
        assert_eq!(
            t.canonical("tengigabitethernet 0/33").unwrap(),
            "TenGigabitEthernet 0/33"
        );
        assert_eq!(t.canonical("ethernet 1/5").unwrap(), "Eth1/5");
        assert_eq!(t.canonical("Eth1/5").unwrap(), "Eth1/5");
        assert_eq!(t.canonical("1/1/5").unwrap(), "1/1/5");
        assert_eq!(t.canonical("Te  0/33"), Err(NameError::NoType));
        assert_eq!(
            t.split("TenGigabitEthernet 0/33"),
            Some(("TenGigabitEthernet".into(), "0/33".into()))
        );
    }

    #[test]
    fn globs_are_spelled_canonically() {
        let t = table(IOS);
        assert_eq!(t.canonical_glob("Gi1/0/4*"), "GigabitEthernet1/0/4*");
        assert_eq!(t.canonical_glob("gi*"), "GigabitEthernet*");
        assert_eq!(t.canonical_glob("*/48"), "*/48");
        assert_eq!(t.canonical_glob("Giga1/0/4*"), "Giga1/0/4*");
        let bare = table(
            r#"
            space = "one"
            number = '\d+(?:/\d+){0,2}'
            types = [{ name = "ethernet", abbrev = ["ethe", ""] }]
        "#,
        );
        assert_eq!(bare.canonical_glob("1/1/48"), "ethernet 1/1/48");
        assert_eq!(bare.canonical_glob("ethe 1/1/4?"), "ethernet 1/1/4?");
        assert_eq!(bare.canonical_glob("*/48"), "*/48");
    }

    #[test]
    fn lint_finds_shared_spellings_and_wrong_samples() {
        let mut t = table(
            r#"
            number = '\d+'
            types = [
                { name = "Ethernet", abbrev = ["Et"] },
                { name = "Eth-Trunk", abbrev = ["et"] },
            ]
            samples = { "Et1" = "Ethernet1", "x1" = "Ethernet1" }
            refused = ["Ethernet2"]
        "#,
        );
        let problems = t.lint().join("\n");
        assert!(
            problems.contains("spelling \"et\" names both"),
            "{problems}"
        );
        assert!(problems.contains("\"x1\" is refused"), "{problems}");
        assert!(problems.contains("\"Ethernet2\" is accepted"), "{problems}");
        t.types.pop();
        assert!(!t.lint().join("\n").contains("names both"));
    }
}
