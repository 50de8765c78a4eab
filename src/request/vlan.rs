//! VLAN ids and VLAN sets: the only place a VLAN number is parsed or range-checked.
//!
//! A [`Vlan`] is always 1–4094. A [`VlanSet`] is parsed from the forms people and Ironic
//! write (`120`, `"100-199"`, `"100,200-210"`, `[100, "300-310"]`) and is rendered back
//! compactly for messages and for device lines.

use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Lowest and highest usable 802.1Q VLAN ids (0 and 4095 are reserved).
pub const MIN: u16 = 1;
/// See [`MIN`].
pub const MAX: u16 = 4094;

/// A validated 802.1Q VLAN id, 1–4094.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Vlan(u16);

/// Why a VLAN or VLAN list was refused; the message is shown to the caller as is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct VlanError(String);

impl Vlan {
    /// Checks the range; the message says what was wrong with which value.
    pub fn new(id: i64) -> Result<Vlan, VlanError> {
        if (MIN as i64..=MAX as i64).contains(&id) {
            Ok(Vlan(id as u16))
        } else {
            Err(VlanError(format!(
                "VLAN {id} is out of range: VLAN ids are {MIN}-{MAX} (0 and 4095 are reserved)"
            )))
        }
    }

    /// Parses a decimal VLAN id, optionally written `vlan-120` / `vlan120` / `VLAN 120`
    /// (the forms Ironic VIF ids use). Nothing else is accepted: no signs, no spaces.
    pub fn parse(text: &str) -> Result<Vlan, VlanError> {
        let lower = text.to_ascii_lowercase();
        let digits = lower
            .strip_prefix("vlan-")
            .or_else(|| lower.strip_prefix("vlan"))
            .unwrap_or(&lower);
        if digits.is_empty() || digits.len() > 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(VlanError(format!(
                "invalid VLAN {:?}: expected a number {MIN}-{MAX}",
                crate::request::validate::printable(text)
            )));
        }
        let id: i64 = digits
            .parse()
            .map_err(|_| VlanError(format!("invalid VLAN {digits:?}")))?;
        Vlan::new(id)
    }

    /// The numeric id.
    pub fn get(self) -> u16 {
        self.0
    }
}

impl fmt::Display for Vlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for Vlan {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u16(self.0)
    }
}

/// A VLAN given as a JSON/TOML number or string; validated on deserialisation.
impl<'de> Deserialize<'de> for Vlan {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Vlan, D::Error> {
        match NumOrText::deserialize(d)? {
            NumOrText::Int(n) => Vlan::new(n),
            NumOrText::Float(x) => Err(VlanError(format!(
                "invalid VLAN {x}: expected a whole number {MIN}-{MAX}"
            ))),
            NumOrText::Text(t) => Vlan::parse(&t),
        }
        .map_err(serde::de::Error::custom)
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum NumOrText {
    Int(i64),
    Float(f64),
    Text(String),
}

/// A set of VLAN ids, kept sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VlanSet(BTreeSet<Vlan>);

impl VlanSet {
    /// The empty set.
    pub fn new() -> VlanSet {
        VlanSet::default()
    }

    /// Parses `"100,200-210"`: items (ids or `lo-hi` ranges) separated by a comma, with or
    /// without spaces around it, or by spaces. Strict, because a list is policy input: an
    /// empty item (`1,,2`, `1, ,2`) or a separator at either end (`100,`, `,100`, `100 `) is
    /// refused, not normalised. The empty string is the empty set.
    pub fn parse(text: &str) -> Result<VlanSet, VlanError> {
        let mut set = VlanSet::new();
        if text.is_empty() {
            return Ok(set);
        }
        let shown = crate::request::validate::printable(text);
        if text.starts_with([',', ' ']) || text.ends_with([',', ' ']) {
            return Err(VlanError(format!(
                "invalid VLAN list \"{shown}\": it starts or ends with a separator"
            )));
        }
        for group in text.split(',') {
            let group = group.trim_matches(' ');
            if group.is_empty() {
                return Err(VlanError(format!(
                    "invalid VLAN list \"{shown}\": empty item between commas"
                )));
            }
            for item in group.split(' ').filter(|s| !s.is_empty()) {
                set.add_item(item)?;
            }
        }
        Ok(set)
    }

    fn add_item(&mut self, item: &str) -> Result<(), VlanError> {
        match item.split_once('-') {
            Some((lo, hi)) if !lo.is_empty() && !hi.is_empty() => {
                let (lo, hi) = (Vlan::parse(lo)?, Vlan::parse(hi)?);
                if lo > hi {
                    return Err(VlanError(format!(
                        "invalid VLAN range {item:?}: {lo} is above {hi}"
                    )));
                }
                self.0.extend((lo.0..=hi.0).map(Vlan));
                Ok(())
            }
            _ => {
                self.0.insert(Vlan::parse(item)?);
                Ok(())
            }
        }
    }

    /// Adds one VLAN.
    pub fn insert(&mut self, vlan: Vlan) {
        self.0.insert(vlan);
    }

    /// Whether `vlan` is in the set.
    pub fn contains(&self, vlan: Vlan) -> bool {
        self.0.contains(&vlan)
    }

    /// Whether the set has no VLANs.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Number of VLANs.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The VLANs in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = Vlan> + '_ {
        self.0.iter().copied()
    }

    /// Consecutive runs as `(first, last)` pairs.
    pub fn runs(&self) -> Vec<(Vlan, Vlan)> {
        let mut runs: Vec<(Vlan, Vlan)> = Vec::new();
        for v in self.iter() {
            match runs.last_mut() {
                Some((_, last)) if last.0 + 1 == v.0 => *last = v,
                _ => runs.push((v, v)),
            }
        }
        runs
    }

    /// Renders the set with a separator between items and, if `range` is given, runs of
    /// three or more compressed as `first{range}last` (e.g. `100-105,200`).
    pub fn render(&self, separator: &str, range: Option<&str>) -> String {
        let mut parts: Vec<String> = Vec::new();
        for (lo, hi) in self.runs() {
            match range {
                Some(r) if hi.0 >= lo.0 + 2 => parts.push(format!("{lo}{r}{hi}")),
                _ => parts.extend((lo.0..=hi.0).map(|v| v.to_string())),
            }
        }
        parts.join(separator)
    }
}

impl fmt::Display for VlanSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(",", Some("-")))
    }
}

impl FromIterator<Vlan> for VlanSet {
    fn from_iter<I: IntoIterator<Item = Vlan>>(iter: I) -> VlanSet {
        VlanSet(iter.into_iter().collect())
    }
}

impl Serialize for VlanSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter().map(|v| v.0))
    }
}

/// Accepts a string (`"100,200-210"`), a number, or a list of numbers and strings.
impl<'de> Deserialize<'de> for VlanSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<VlanSet, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            One(NumOrText),
            Many(Vec<NumOrText>),
        }
        let (items, listed) = match Form::deserialize(d)? {
            Form::One(x) => (vec![x], false),
            Form::Many(xs) => (xs, true),
        };
        let mut set = VlanSet::new();
        for item in items {
            let r = match item {
                // `[100, "", 200]`: an empty element is refused, like `100,,200`.
                NumOrText::Text(t) if listed && t.is_empty() => Err(VlanError(
                    "invalid VLAN list: an empty string is not a VLAN".to_string(),
                )),
                NumOrText::Int(n) => Vlan::new(n).map(|v| set.insert(v)),
                NumOrText::Float(x) => Err(VlanError(format!(
                    "invalid VLAN {x}: expected a whole number {MIN}-{MAX}"
                ))),
                NumOrText::Text(t) => VlanSet::parse(&t).map(|s| set.0.extend(s.0)),
            };
            r.map_err(serde::de::Error::custom)?;
        }
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vlan_bounds() {
        assert!(Vlan::new(0).is_err());
        assert!(Vlan::new(4095).is_err());
        assert!(Vlan::new(-1).is_err());
        assert_eq!(Vlan::new(1).map(Vlan::get), Ok(1));
        assert_eq!(Vlan::new(4094).map(Vlan::get), Ok(4094));
    }

    #[test]
    fn vlan_text_forms() {
        assert_eq!(Vlan::parse("120").map(Vlan::get), Ok(120));
        assert_eq!(Vlan::parse("vlan-120").map(Vlan::get), Ok(120));
        assert_eq!(Vlan::parse("VLAN120").map(Vlan::get), Ok(120));
        for bad in [
            "", "1;reload", "+5", "-1", " 12", "12 ", "0x10", "99999", "1.5", "0",
        ] {
            assert!(Vlan::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn sets_parse_and_render() {
        let s = VlanSet::parse("100,200-203, 5").unwrap();
        assert_eq!(s.len(), 6);
        assert_eq!(s.to_string(), "5,100,200-203");
        assert_eq!(s.render(" ", None), "5 100 200 201 202 203");
        let two = VlanSet::parse("7-8").unwrap();
        assert_eq!(two.to_string(), "7,8");
        assert!(VlanSet::parse("10-5").is_err());
        assert_eq!(VlanSet::parse("100 , 200").unwrap().len(), 2);
        assert!(VlanSet::parse("").unwrap().is_empty());
        for bad in [
            "1,,2", "100,", ",100", "100 ", " 100", "1, ,2", ",", " ", "1,2,", "100-", "-100",
            "1--2", "1-2-3",
        ] {
            assert!(VlanSet::parse(bad).is_err(), "{bad:?} accepted");
        }
        assert!(VlanSet::parse("1-4095").is_err());
        assert!(VlanSet::parse("1;2").is_err());
    }

    #[test]
    fn sets_deserialize_from_json_forms() {
        let a: VlanSet = serde_json::from_str(r#""100-102""#).unwrap();
        let b: VlanSet = serde_json::from_str(r#"[100, "101-102"]"#).unwrap();
        let c: VlanSet = serde_json::from_str("100").unwrap();
        assert_eq!(a, b);
        assert_eq!(c.len(), 1);
        assert!(serde_json::from_str::<VlanSet>("[1.5]").is_err());
        assert!(serde_json::from_str::<VlanSet>(r#"[100, "", 200]"#).is_err());
        assert!(serde_json::from_str::<VlanSet>(r#""100,""#).is_err());
        assert!(serde_json::from_str::<VlanSet>(r#"["1,,2"]"#).is_err());
        assert!(serde_json::from_str::<VlanSet>("[0]").is_err());
        assert!(serde_json::from_str::<Vlan>("4095").is_err());
        assert!(serde_json::from_str::<Vlan>("1e3").is_err());
    }
}
