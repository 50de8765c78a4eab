//! Exit codes: the one enum callers script against, and the one mapping to numbers.
//!
//! The table in DESIGN §4 and `mercury(1)` is this file. Every error in every layer ends up
//! as exactly one [`ExitKind`]; nothing else in the code base chooses a process exit code.

use serde::Serialize;

/// Why a run ended. The numeric codes are a public contract (sysexits-style).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitKind {
    /// Done, or already in the requested state.
    Ok,
    /// The device rejected the change (failure indicator, commit failed, non-zero exec
    /// status), or, read back, a port is not in the requested state (`--verify`: accepted but
    /// not applied; `verify_port`: drift).
    DeviceRejected,
    /// Unknown flag or verb, forced-command grammar.
    Usage,
    /// Invalid request data: VLAN out of range, bad port name, unknown device, unsupported op.
    InvalidRequest,
    /// Device unreachable: connection refused or timed out, name resolution, connection lost.
    Unreachable,
    /// A bug in Mercury.
    Internal,
    /// Temporary: lock not acquired in time, device config database locked, deadline passed.
    Temporary,
    /// Unexpected prompt or mode, unparsable device reply.
    Protocol,
    /// Policy denied, caller not allowed, SSH authentication failed, host key mismatch.
    NotPermitted,
    /// Bad mercury.toml / plugins.toml, unknown platform, unsafe file modes.
    Config,
}

impl ExitKind {
    /// Every kind, in code order (for documentation and tests).
    pub const ALL: [ExitKind; 10] = [
        ExitKind::Ok,
        ExitKind::DeviceRejected,
        ExitKind::Usage,
        ExitKind::InvalidRequest,
        ExitKind::Unreachable,
        ExitKind::Internal,
        ExitKind::Temporary,
        ExitKind::Protocol,
        ExitKind::NotPermitted,
        ExitKind::Config,
    ];

    /// The kind of a process exit code (one relayed by a coalescing holder); an unknown code
    /// is an internal error.
    pub fn from_code(code: u8) -> ExitKind {
        ExitKind::ALL
            .into_iter()
            .find(|k| k.code() == code)
            .unwrap_or(ExitKind::Internal)
    }

    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            ExitKind::Ok => 0,
            ExitKind::DeviceRejected => 1,
            ExitKind::Usage => 64,
            ExitKind::InvalidRequest => 65,
            ExitKind::Unreachable => 69,
            ExitKind::Internal => 70,
            ExitKind::Temporary => 75,
            ExitKind::Protocol => 76,
            ExitKind::NotPermitted => 77,
            ExitKind::Config => 78,
        }
    }

    /// The `error_kind` string of the JSON result (`None` on success).
    pub fn name(self) -> Option<&'static str> {
        match self {
            ExitKind::Ok => None,
            ExitKind::DeviceRejected => Some("device_rejected"),
            ExitKind::Usage => Some("usage"),
            ExitKind::InvalidRequest => Some("invalid_request"),
            ExitKind::Unreachable => Some("unreachable"),
            ExitKind::Internal => Some("internal"),
            ExitKind::Temporary => Some("temporary"),
            ExitKind::Protocol => Some("protocol"),
            ExitKind::NotPermitted => Some("not_permitted"),
            ExitKind::Config => Some("config"),
        }
    }

    /// Whether a caller may retry the same request unchanged and expect a different outcome.
    pub fn retryable(self) -> bool {
        matches!(self, ExitKind::Unreachable | ExitKind::Temporary)
    }

    /// One line for `mercury(1)` and `--help`.
    pub fn meaning(self) -> &'static str {
        match self {
            ExitKind::Ok => "done, or already in the requested state",
            ExitKind::DeviceRejected => {
                "the device rejected the change (error marker, commit failed, non-zero exit status), or read back (--verify, verify-port) a port is not in the requested state"
            }
            ExitKind::Usage => "usage error (unknown flag or verb, forced-command grammar)",
            ExitKind::InvalidRequest => {
                "invalid request data (VLAN, port name, unknown device, unsupported operation)"
            }
            ExitKind::Unreachable => "device unreachable (refused, timed out, connection lost)",
            ExitKind::Internal => "internal error (a bug in mercury)",
            ExitKind::Temporary => {
                "temporary: lock not acquired in time, config database locked, deadline passed"
            }
            ExitKind::Protocol => "protocol: unexpected prompt or mode, unparsable reply",
            ExitKind::NotPermitted => {
                "not permitted: policy denied, caller not allowed, auth failed, host key mismatch"
            }
            ExitKind::Config => {
                "configuration error: bad mercury.toml or plugins.toml, unsafe file modes"
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_the_design_table() {
        let table: Vec<(u8, Option<&str>, bool)> = ExitKind::ALL
            .iter()
            .map(|k| (k.code(), k.name(), k.retryable()))
            .collect();
        assert_eq!(
            table,
            vec![
                (0, None, false),
                (1, Some("device_rejected"), false),
                (64, Some("usage"), false),
                (65, Some("invalid_request"), false),
                (69, Some("unreachable"), true),
                (70, Some("internal"), false),
                (75, Some("temporary"), true),
                (76, Some("protocol"), false),
                (77, Some("not_permitted"), false),
                (78, Some("config"), false),
            ]
        );
    }

    #[test]
    fn codes_are_distinct() {
        let mut codes: Vec<u8> = ExitKind::ALL.iter().map(|k| k.code()).collect();
        codes.dedup();
        assert_eq!(codes.len(), ExitKind::ALL.len());
    }
}
