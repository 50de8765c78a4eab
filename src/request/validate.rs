//! Validation of every string value that may be rendered into a device line, a lock file
//! name or a message. Injection into a switch CLI is the worst bug Mercury can have, so the
//! rules here are allow-lists, not deny-lists.
//!
//! This module must not know about platforms: the platform's port pattern is checked by the
//! request layer on top of [`port_name`], never instead of it.

use std::fmt;

/// A value that failed validation; the message names the field and shows the value escaped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

fn invalid(field: &str, value: &str, why: &str) -> Invalid {
    Invalid(format!("invalid {field} {}: {why}", Escaped(value)))
}

/// Longest accepted port / interface name.
pub const MAX_PORT_LEN: usize = 64;
/// Longest accepted description after sanitising.
pub const MAX_DESCRIPTION_LEN: usize = 64;
/// Longest accepted free-text `reason`.
pub const MAX_REASON_LEN: usize = 512;

/// A port or interface name: ASCII letters, digits and `/ . : - _`, starting with a letter
/// or digit, and at most one ASCII space, only between an interface type's letters and the
/// digit its number starts with (`TenGigabitEthernet 1/1`, as OS9, Ruijie and SMIS print
/// their names and advertise them over LLDP). Whether this platform takes that space is the
/// platform's port table's to say (`catalog::Platform::canonical_port`). No other
/// whitespace, control characters, quotes or command separators can pass.
pub fn port_name(field: &str, value: &str) -> Result<(), Invalid> {
    if value.is_empty() {
        return Err(invalid(field, value, "must not be empty"));
    }
    if value.len() > MAX_PORT_LEN {
        return Err(invalid(field, value, "too long"));
    }
    let bytes = value.as_bytes();
    if !bytes[0].is_ascii_alphanumeric() {
        return Err(invalid(field, value, "must start with a letter or digit"));
    }
    let mut spaces = 0;
    for (i, c) in value.char_indices() {
        if c == ' ' {
            spaces += 1;
            let between = i > 0
                && bytes[i - 1].is_ascii_alphabetic()
                && bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
            if spaces > 1 || !between {
                return Err(invalid(
                    field,
                    value,
                    "a space is allowed only once, between the interface type and its number",
                ));
            }
            continue;
        }
        if !(c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | ':' | '-' | '_')) {
            return Err(invalid(
                field,
                value,
                &format!("character {} is not allowed", Escaped(&c.to_string())),
            ));
        }
    }
    Ok(())
}

/// A name Mercury renders or uses as a file name: device names, VLAN names, LAG names,
/// bridge names, caller names. ASCII letters, digits, `. _ -`, at most `max` bytes, first
/// character a letter or digit (so never `..` or an option-looking `-x`).
pub fn simple_name(field: &str, value: &str, max: usize) -> Result<(), Invalid> {
    if value.is_empty() {
        return Err(invalid(field, value, "must not be empty"));
    }
    if value.len() > max {
        return Err(invalid(
            field,
            value,
            &format!("longer than {max} characters"),
        ));
    }
    if !value.as_bytes()[0].is_ascii_alphanumeric() {
        return Err(invalid(field, value, "must start with a letter or digit"));
    }
    if !value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        return Err(invalid(
            field,
            value,
            "only letters, digits, '.', '_' and '-' are allowed",
        ));
    }
    Ok(())
}

/// A MAC address in colon, dash or dot notation; returns it as lowercase `aa:bb:cc:dd:ee:ff`.
pub fn mac(field: &str, value: &str) -> Result<String, Invalid> {
    let hex: String = value
        .chars()
        .filter(|c| !matches!(c, ':' | '-' | '.'))
        .collect();
    let seps_ok = value
        .chars()
        .all(|c| c.is_ascii_hexdigit() || matches!(c, ':' | '-' | '.'));
    if !seps_ok || hex.len() != 12 || value.len() > 17 {
        return Err(invalid(
            field,
            value,
            "expected a MAC address like aa:bb:cc:dd:ee:ff",
        ));
    }
    let lower = hex.to_ascii_lowercase();
    let pairs: Vec<&str> = (0..6).map(|i| &lower[i * 2..i * 2 + 2]).collect();
    Ok(pairs.join(":"))
}

/// A UUID in its canonical 8-4-4-4-12 hex form (case-insensitive); returned lowercase.
pub fn uuid(field: &str, value: &str) -> Result<String, Invalid> {
    let groups: Vec<&str> = value.split('-').collect();
    let lens_ok = groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.chars().all(|c| c.is_ascii_hexdigit()));
    if !lens_ok {
        return Err(invalid(
            field,
            value,
            "expected a UUID like 1be26c0b-03f2-4d2e-ae87-c02d7f33c123",
        ));
    }
    Ok(value.to_ascii_lowercase())
}

/// An identifier from Ironic or the caller that may reach a device (`iface-id` on OVS) or
/// the audit log: VIF ids, request ids, port uuids. Letters, digits and `. _ - : @`.
pub fn identifier(field: &str, value: &str) -> Result<(), Invalid> {
    if value.is_empty() || value.len() > 128 {
        return Err(invalid(field, value, "must be 1-128 characters"));
    }
    if !value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ':' | '@'))
    {
        return Err(invalid(
            field,
            value,
            "only letters, digits, '.', '_', '-', ':' and '@' are allowed",
        ));
    }
    Ok(())
}

/// Free text that is never rendered into a device line (`reason`): any printable text,
/// no control, line/paragraph separator or invisible format character ([`is_dangerous`]),
/// bounded length.
pub fn free_text(field: &str, value: &str) -> Result<(), Invalid> {
    if value.trim().is_empty() {
        return Err(invalid(field, value, "must not be empty"));
    }
    if value.len() > MAX_REASON_LEN {
        return Err(invalid(
            field,
            value,
            &format!("longer than {MAX_REASON_LEN} bytes"),
        ));
    }
    if let Some(c) = value.chars().find(|c| is_dangerous(*c)) {
        return Err(invalid(field, value, &refused_char(c)));
    }
    Ok(())
}

/// A port description. Control and separator characters are refused outright (they can
/// only be an injection attempt); characters outside a conservative printable set are
/// replaced by `_`, and the second value says whether anything was replaced.
pub fn description(value: &str) -> Result<(String, bool), Invalid> {
    if let Some(c) = value.chars().find(|c| is_dangerous(*c)) {
        return Err(invalid("description", value, &refused_char(c)));
    }
    let mut changed = false;
    let mut out = String::with_capacity(value.len());
    for c in value.trim().chars() {
        if c.is_ascii_alphanumeric()
            || matches!(
                c,
                ' ' | '.' | '_' | '-' | ':' | '/' | '@' | ',' | '+' | '=' | '(' | ')'
            )
        {
            // Collapse runs of spaces: some CLIs treat two spaces as a token break.
            if c == ' ' && out.ends_with(' ') {
                changed = true;
                continue;
            }
            out.push(c);
        } else {
            changed = true;
            out.push('_');
        }
    }
    if out.len() > MAX_DESCRIPTION_LEN {
        return Err(invalid(
            "description",
            value,
            &format!("longer than {MAX_DESCRIPTION_LEN} characters"),
        ));
    }
    Ok((out, changed))
}

/// Why a character [`is_dangerous`] is refused, for a message.
fn refused_char(c: char) -> String {
    let kind = match c {
        c if c.is_control() => "control",
        '\u{2028}' | '\u{2029}' => "line or paragraph separator",
        _ => "invisible (format)",
    };
    format!(
        "{kind} character {} is not allowed",
        Escaped(&c.to_string())
    )
}

/// Characters that must never reach a device or a log line: C0/C1 controls (newline, CR,
/// ESC, NUL, DEL), the Unicode line and paragraph separators, every format character
/// (general category Cf: bidi overrides and isolates, zero-width spaces and joiners, the
/// soft hyphen, the Arabic letter mark, the Mongolian vowel separator, tags, ...), and the
/// Hangul fillers, which render as nothing. They are how text is made to look like other
/// text, in a terminal, a log viewer or a change ticket.
pub fn is_dangerous(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}')
        || is_format(c)
        || matches!(c, '\u{115f}' | '\u{1160}' | '\u{3164}' | '\u{ffa0}')
}

/// Unicode general category Cf (format), as listed in the Unicode Character Database's
/// `extracted/DerivedGeneralCategory.txt` (Unicode 15.1). Rust's standard
/// library has no general-category lookup, and the list is short and stable.
const FORMAT: &[(u32, u32)] = &[
    (0x00ad, 0x00ad),
    (0x0600, 0x0605),
    (0x061c, 0x061c),
    (0x06dd, 0x06dd),
    (0x070f, 0x070f),
    (0x0890, 0x0891),
    (0x08e2, 0x08e2),
    (0x180e, 0x180e),
    (0x200b, 0x200f),
    (0x202a, 0x202e),
    (0x2060, 0x2064),
    (0x2066, 0x206f),
    (0xfeff, 0xfeff),
    (0xfff9, 0xfffb),
    (0x110bd, 0x110bd),
    (0x110cd, 0x110cd),
    (0x13430, 0x1343f),
    (0x1bca0, 0x1bca3),
    (0x1d173, 0x1d17a),
    (0xe0001, 0xe0001),
    (0xe0020, 0xe007f),
];

/// Whether `c` is a Unicode format character (general category Cf).
pub fn is_format(c: char) -> bool {
    let c = c as u32;
    FORMAT.iter().any(|&(lo, hi)| (lo..=hi).contains(&c))
}

/// Shows a value in a message with anything non-printable escaped and a length bound, so
/// an error message can never carry an escape sequence or a newline to a terminal or log.
pub struct Escaped<'a>(pub &'a str);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\"", printable(self.0))
    }
}

/// The escaped, length-bounded form of `value` (see [`Escaped`]), without quotes.
pub fn printable(value: &str) -> String {
    const MAX: usize = 80;
    let mut out = String::new();
    for (i, c) in value.chars().enumerate() {
        if i >= MAX {
            out.push_str("...");
            break;
        }
        if is_dangerous(c) || c == '"' || c == '\\' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Checks an `ovs_db` value: `unix:PATH`, `tcp:HOST:PORT` or `ssl:HOST:PORT` (several,
/// comma-separated, for a clustered database), with no whitespace, quotes or shell
/// characters.
pub fn ovs_db(value: &str) -> Result<(), String> {
    let ok_chars = value.chars().all(|c| {
        c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | ':' | '[' | ']' | ',')
    });
    let ok_kinds = value.split(',').all(|r| {
        ["unix:", "tcp:", "ssl:"]
            .iter()
            .any(|k| r.len() > k.len() && r.starts_with(k))
    });
    if value.is_empty() || value.len() > 256 || !ok_chars || !ok_kinds {
        return Err(format!(
            "invalid ovs_db {}: expected unix:PATH, tcp:HOST:PORT or ssl:HOST:PORT",
            Escaped(value)
        ));
    }
    Ok(())
}

/// Checks an `ovs_vsctl` prefix: a program and options, each non-empty and free of control
/// characters (it is executed directly, and shell-quoted for a remote shell).
pub fn ovs_vsctl(argv: &[String]) -> Result<(), String> {
    if argv.is_empty() {
        return Err(
            "ovs_vsctl is empty: expected e.g. [\"ovs-vsctl\"] or [\"sudo\", \"ovs-vsctl\"]".into(),
        );
    }
    for a in argv {
        if a.is_empty() || a.len() > 1024 || a.chars().any(is_dangerous) {
            return Err(format!("invalid ovs_vsctl element {}", Escaped(a)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_names() {
        for ok in [
            "Ethernet1/5",
            "Gi1/0/1",
            "ge-0/0/5",
            "swp5",
            "ae0.0",
            "pf0vf3",
            "eth1:2",
            "TenGigabitEthernet 1/1",
            "Gi 0/22",
            "port-channel 10",
        ] {
            assert!(port_name("port", ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "Eth  1",
            "Eth 1 2",
            "Gi 0/22 ",
            "Gi0/22 x",
            "1 2",
            "Eth\t1",
            "Eth\u{a0}1",
            "Gi /1",
            "Eth1;reload",
            "Eth1\nreload",
            "Eth1|x",
            "Eth1&&x",
            "`x`",
            "$(x)",
            "-x",
            "Eth1\r",
            "Eth1\u{1b}[2J",
            "Eth\u{2028}1",
            "Eth1\0",
            "../etc",
            "a\"b",
        ] {
            assert!(port_name("port", bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn descriptions_are_sanitised_but_controls_refused() {
        assert_eq!(
            description("node 1 (rack 4)").unwrap(),
            ("node 1 (rack 4)".into(), false)
        );
        assert_eq!(description("a;b|c").unwrap(), ("a_b_c".into(), true));
        assert_eq!(description("a  b").unwrap(), ("a b".into(), true));
        assert!(description("a\nb").is_err());
        assert!(description("a\u{1b}b").is_err());
        assert!(description("a\u{2028}b").is_err());
        assert!(description(&"x".repeat(65)).is_err());
    }

    #[test]
    fn macs_and_uuids() {
        assert_eq!(
            mac("mac", "AA-BB-CC-DD-EE-FF").unwrap(),
            "aa:bb:cc:dd:ee:ff"
        );
        assert_eq!(mac("mac", "aabb.ccdd.eeff").unwrap(), "aa:bb:cc:dd:ee:ff");
        assert!(mac("mac", "aa:bb:cc:dd:ee").is_err());
        assert!(mac("mac", "aa:bb:cc:dd:ee:fg").is_err());
        assert!(uuid("u", "1BE26C0B-03F2-4D2E-AE87-C02D7F33C123").is_ok());
        assert!(uuid("u", "1be26c0b03f24d2eae87c02d7f33c123").is_err());
    }

    #[test]
    fn invisible_format_characters_are_refused_in_free_text() {
        for c in [
            '\u{061c}',
            '\u{2060}',
            '\u{00ad}',
            '\u{180e}',
            '\u{200b}',
            '\u{200d}',
            '\u{202e}',
            '\u{2066}',
            '\u{feff}',
            '\u{fff9}',
            '\u{e0041}',
            '\u{1d173}',
            '\u{13439}',
            '\u{3164}',
        ] {
            let text = format!("CHG-1{c}2");
            assert!(free_text("reason", &text).is_err(), "{:?}", c);
            assert!(description(&text).is_err(), "{:?}", c);
            let msg = free_text("reason", &text).unwrap_err().to_string();
            assert!(!msg.contains(c), "{msg:?}");
        }
        // Printable non-ASCII text is still free text.
        assert!(free_text("reason", "déploiement nœud 7 — 机架 4").is_ok());
        assert!(!is_format('é') && !is_format(' ') && !is_format('\u{00a0}'));
    }

    #[test]
    fn messages_never_carry_controls() {
        let msg = port_name("port", "x\u{1b}[31m\nrm")
            .unwrap_err()
            .to_string();
        assert!(!msg.contains('\u{1b}') && !msg.contains('\n'), "{msg}");
    }
}
