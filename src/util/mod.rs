//! Small helpers with no knowledge of devices or requests: glob patterns, base64,
//! timestamps, random identifiers, near-miss suggestions.

pub mod b64;
pub mod glob;
pub mod random;
pub mod suggest;

/// Now, as an RFC 3339 UTC timestamp with milliseconds (`2026-11-29T22:04:05.123Z`): the
/// form of the audit record's `ts`, lock holder info and spool entries.
pub fn now_rfc3339() -> String {
    format!("{:.3}", jiff::Timestamp::now())
}

#[cfg(test)]
mod tests {
    #[test]
    fn timestamps_have_milliseconds_and_a_z() {
        let t = jiff::Timestamp::new(1_795_989_845, 123_456_789).unwrap();
        assert_eq!(format!("{t:.3}"), "2026-11-29T22:04:05.123Z");
        let now = super::now_rfc3339();
        assert_eq!(now.len(), "2026-11-29T22:04:05.123Z".len(), "{now}");
        assert!(now.ends_with('Z'));
    }
}
