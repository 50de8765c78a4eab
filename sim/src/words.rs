//! The words every vendor CLI shares, in one place: splitting a line into words
//! (grammar tokens with offsets, POSIX-shell words), keyword abbreviation
//! (exact keyword, else the one keyword a prefix names), VLAN ids and VLAN
//! lists in each spelling (`10,20-30`, `10 20 to 30`) and their compact
//! rendering, interface-name canonicalisation (`gi1/0/5` → `GigabitEthernet1/0/5`)
//! and numbered interface lists (`swp1-4,swp6`). Parsing only: nothing here
//! touches the device state or knows which vendor is asking.

/// A token of the input line with its byte offset.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// Text (quotes removed).
    pub text: String,
    /// Byte offset in the line.
    pub at: usize,
}

/// Split a line on whitespace; double-quoted strings are one token.
pub fn tokenize(line: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut chars = line.char_indices().peekable();
    while let Some(&(i, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let mut text = String::new();
        if c == '"' {
            chars.next();
            for (_, c) in chars.by_ref() {
                if c == '"' {
                    break;
                }
                text.push(c);
            }
        } else {
            while let Some(&(_, c)) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                text.push(c);
                chars.next();
            }
        }
        out.push(Token { text, at: i });
    }
    out
}

/// The word that starts at byte offset `at` of `line` ("" past the end).
pub fn word_at(line: &str, at: usize) -> &str {
    line[at.min(line.len())..]
        .split_whitespace()
        .next()
        .unwrap_or("")
}

/// Split a command line like a POSIX shell would for simple cases: whitespace,
/// single and double quotes, backslash escapes.
pub fn shell_words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut has = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                has = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    cur.push(c);
                }
            }
            '"' => {
                has = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => {
                            if let Some(n) = chars.next() {
                                cur.push(n);
                            }
                        }
                        _ => cur.push(c),
                    }
                }
            }
            '\\' => {
                has = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            c if c.is_whitespace() => {
                if has {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            c => {
                has = true;
                cur.push(c);
            }
        }
    }
    if has {
        out.push(cur);
    }
    out
}

// ---- keyword abbreviation ---------------------------------------------------

/// How a typed word matches a list of keywords.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Keyword<'a> {
    /// The word is a keyword (the first one, if several are equal).
    Exact(&'a str),
    /// The word abbreviates exactly one keyword.
    Prefix(&'a str),
    /// The word abbreviates this many keywords.
    Ambiguous(usize),
    /// The word names no keyword.
    Unknown,
}

impl<'a> Keyword<'a> {
    /// The keyword named, exactly or by a unique abbreviation.
    pub fn found(self) -> Option<&'a str> {
        match self {
            Keyword::Exact(k) | Keyword::Prefix(k) => Some(k),
            Keyword::Ambiguous(_) | Keyword::Unknown => None,
        }
    }
}

fn same(a: &str, b: &str, fold_case: bool) -> bool {
    if fold_case {
        a.eq_ignore_ascii_case(b)
    } else {
        a == b
    }
}

/// The keywords `typed` abbreviates (is a prefix of), in list order.
pub fn abbreviated<'a>(keywords: &[&'a str], typed: &str, fold_case: bool) -> Vec<&'a str> {
    let typed_low = typed.to_ascii_lowercase();
    keywords
        .iter()
        .copied()
        .filter(|k| {
            if fold_case {
                k.to_ascii_lowercase().starts_with(&typed_low)
            } else {
                k.starts_with(typed)
            }
        })
        .collect()
}

/// Match `typed` against `keywords`: an exact keyword wins, else the one
/// keyword it abbreviates. `fold_case` ignores ASCII case (most CLIs; Junos
/// does not).
pub fn keyword<'a>(keywords: &[&'a str], typed: &str, fold_case: bool) -> Keyword<'a> {
    if let Some(k) = keywords.iter().find(|k| same(k, typed, fold_case)) {
        return Keyword::Exact(k);
    }
    match abbreviated(keywords, typed, fold_case).as_slice() {
        [] => Keyword::Unknown,
        [k] => Keyword::Prefix(k),
        many => Keyword::Ambiguous(many.len()),
    }
}

// ---- VLANs --------------------------------------------------------------------

/// Parse a VLAN id 1..=4094.
pub fn parse_vlan(s: &str) -> Option<u16> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || s.len() > 4 {
        return None;
    }
    let v: u16 = s.parse().ok()?;
    (1..=4094).contains(&v).then_some(v)
}

/// Parse a VLAN list like `10,20-25,30` (separators given by the vendor);
/// sorted, unique.
pub fn parse_vlan_list(s: &str, seps: &[char], range: &str) -> Option<Vec<u16>> {
    let mut out = Vec::new();
    for part in s.split(|c| seps.contains(&c)) {
        if part.is_empty() {
            return None;
        }
        if let Some((a, b)) = part.split_once(range) {
            let (a, b) = (parse_vlan(a)?, parse_vlan(b)?);
            if a > b {
                return None;
            }
            out.extend(a..=b);
        } else {
            out.push(parse_vlan(part)?);
        }
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

/// Parse a VRP / Comware VLAN list like `10 20 to 30` (words, `to` for a
/// range); sorted, unique, not empty.
pub fn parse_vlan_words(s: &str) -> Option<Vec<u16>> {
    let toks: Vec<&str> = s.split_whitespace().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let a = parse_vlan(toks[i])?;
        if toks.get(i + 1) == Some(&"to") {
            let b = parse_vlan(toks.get(i + 2)?)?;
            if b < a {
                return None;
            }
            out.extend(a..=b);
            i += 3;
        } else {
            out.push(a);
            i += 1;
        }
    }
    if out.is_empty() {
        return None;
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

/// Render sorted VLANs compactly as `1,10-20,30` (separator and range mark
/// given by the vendor: `,` `-`, or ` ` ` to `).
pub fn vlan_ranges(v: &[u16], sep: &str, dash: &str) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let start = v[i];
        let mut end = start;
        while i + 1 < v.len() && v[i + 1] == end + 1 {
            i += 1;
            end = v[i];
        }
        if start == end {
            parts.push(start.to_string());
        } else {
            parts.push(format!("{start}{dash}{end}"));
        }
        i += 1;
    }
    parts.join(sep)
}

// ---- interface names ---------------------------------------------------------

/// How a vendor spells interface names: known types and what counts as the
/// number part. Canonical name = full type name + number (with a separator).
#[derive(Debug, Clone)]
pub struct IfNaming {
    /// Full type names, e.g. "GigabitEthernet".
    pub types: Vec<&'static str>,
    /// Separator put between type and number in the canonical name.
    pub sep: &'static str,
    /// Also accept a bare number ("1/1/5") as a name of the first type.
    pub bare_numbers: bool,
}

impl IfNaming {
    /// Canonicalise a name typed as one string ("gi1/0/5", "Gi 1/0/5").
    pub fn canon(&self, typed: &str) -> Option<String> {
        let typed = typed.trim();
        let split = typed.find(|c: char| c.is_ascii_digit())?;
        let (ty, num) = typed.split_at(split);
        let ty = ty.trim();
        if !num
            .chars()
            .all(|c| c.is_ascii_digit() || c == '/' || c == '.' || c == ':')
        {
            return None;
        }
        if ty.is_empty() {
            return if self.bare_numbers {
                Some(format!("{}{}{num}", self.types.first()?, self.sep))
            } else {
                None
            };
        }
        let full = keyword(&self.types, ty, true).found()?;
        Some(format!("{full}{}{num}", self.sep))
    }

    /// Whether `s` (letters and dashes only) begins some interface type name.
    pub fn is_type_prefix(&self, s: &str) -> bool {
        !s.is_empty()
            && s.chars().all(|c| c.is_ascii_alphabetic() || c == '-')
            && !abbreviated(&self.types, s, true).is_empty()
    }
}

/// `prefix` + each number from `first` to `last`; None when `first > last`.
pub fn numbered(prefix: &str, first: u32, last: u32) -> Option<Vec<String>> {
    (first <= last).then(|| (first..=last).map(|i| format!("{prefix}{i}")).collect())
}

/// Expand a Linux-style interface list: `swp1-4,swp6`, `swp1-swp4`, `Ethernet0`.
pub fn expand_ifs(spec: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for part in spec.split(',') {
        let split = part.find(|c: char| c.is_ascii_digit())?;
        let (pre, num) = part.split_at(split);
        match num.split_once('-') {
            Some((a, b)) => {
                let b = b.strip_prefix(pre).unwrap_or(b);
                out.extend(numbered(pre, a.parse().ok()?, b.parse().ok()?)?);
            }
            None => out.push(part.to_string()),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vlan_lists_expand_and_render() {
        assert_eq!(
            parse_vlan_list("10,12-14", &[','], "-"),
            Some(vec![10, 12, 13, 14])
        );
        assert_eq!(parse_vlan_list("10,,1", &[','], "-"), None);
        assert_eq!(parse_vlan_list("5000", &[','], "-"), None);
        assert_eq!(vlan_ranges(&[1, 2, 3, 5, 7, 8], ",", "-"), "1-3,5,7-8");
        assert_eq!(parse_vlan_words("30 10 to 12"), Some(vec![10, 11, 12, 30]));
        assert_eq!(parse_vlan_words("10 to"), None);
        assert_eq!(parse_vlan_words(""), None);
        assert_eq!(vlan_ranges(&[10, 11, 12, 30], " ", " to "), "10 to 12 30");
    }

    #[test]
    fn keywords_exact_then_unique_prefix() {
        let k = ["set", "show", "shutdown"];
        assert_eq!(keyword(&k, "set", false), Keyword::Exact("set"));
        assert_eq!(keyword(&k, "se", false), Keyword::Prefix("set"));
        assert_eq!(keyword(&k, "sh", false), Keyword::Ambiguous(2));
        assert_eq!(keyword(&k, "SET", false), Keyword::Unknown);
        assert_eq!(keyword(&k, "SHO", true), Keyword::Prefix("show"));
    }

    #[test]
    fn interface_lists() {
        assert_eq!(
            expand_ifs("swp1-3,swp6"),
            Some(vec![
                "swp1".into(),
                "swp2".into(),
                "swp3".into(),
                "swp6".into()
            ])
        );
        assert_eq!(
            expand_ifs("swp1-swp2"),
            Some(vec!["swp1".into(), "swp2".into()])
        );
        assert_eq!(expand_ifs("swp4-1"), None);
        assert_eq!(expand_ifs("bond"), None);
        assert_eq!(
            shell_words(r#"nv set "a b" 'c d' e\ f"#),
            vec!["nv", "set", "a b", "c d", "e f"]
        );
    }
}
