//! Small helpers with no knowledge of devices or requests: glob patterns, base64, RFC 3339
//! timestamps.

pub mod b64;
pub mod glob;
pub mod timefmt;
