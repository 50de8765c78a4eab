//! The top-level error: one variant per layer, and the one mapping to [`ExitKind`].

use crate::lock::spool::SpoolError;
use crate::lock::LockError;
use crate::report::exit::ExitKind;
use crate::session::SessionError;
use crate::transport::TransportError;

/// Anything that ends a run unsuccessfully.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Usage: unknown flag or verb, forced-command grammar.
    #[error("{0}")]
    Usage(String),
    /// Invalid request data.
    #[error(transparent)]
    Request(#[from] crate::request::RequestError),
    /// The platform cannot do what was asked.
    #[error(transparent)]
    Unsupported(#[from] crate::catalog::Unsupported),
    /// mercury.toml problem.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// plugins.toml problem.
    #[error(transparent)]
    Catalog(#[from] crate::catalog::CatalogError),
    /// Policy denial.
    #[error(transparent)]
    Denied(#[from] crate::policy::Denied),
    /// Device lock.
    #[error(transparent)]
    Lock(#[from] crate::lock::LockError),
    /// Request coalescing (a relayed result, or a holder that went away).
    #[error(transparent)]
    Spool(#[from] crate::lock::spool::SpoolError),
    /// Audit log.
    #[error(transparent)]
    Audit(#[from] crate::report::audit::AuditError),
    /// Conversation with the device.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// A configuration problem found outside config parsing (unknown platform, transport
    /// not fit for the platform, unsafe plugin file).
    #[error("{0}")]
    ConfigMessage(String),
    /// Read back, a port is not in the state the request asked for (`--verify`: the device
    /// accepted the change but does not show it; `verify_port`: the port drifted). Exit 1.
    #[error("{0}")]
    Drift(String),
    /// `mercury check --connect`: a device check failed; the kind is that device's.
    #[error("{1}")]
    Check(ExitKind, String),
    /// A bug.
    #[error("internal error: {0}")]
    Internal(String),
    /// A request over several devices (the DPU path): the exit kind of the step that
    /// failed, with a message that says what each device was left with.
    #[error("{1}")]
    Decided(ExitKind, String),
}

impl From<crate::driver::Failure> for Error {
    fn from(f: crate::driver::Failure) -> Self {
        match f {
            crate::driver::Failure::Session(s) => Error::Session(s),
            crate::driver::Failure::Denied(d) => Error::Denied(d),
            crate::driver::Failure::Unsupported(u) => Error::Unsupported(u),
        }
    }
}

impl From<TransportError> for Error {
    fn from(e: TransportError) -> Self {
        Error::Session(SessionError::Transport(e))
    }
}

impl Error {
    /// The exit kind; the one place errors meet exit codes.
    pub fn kind(&self) -> ExitKind {
        match self {
            Error::Usage(_) => ExitKind::Usage,
            Error::Request(_) | Error::Unsupported(_) => ExitKind::InvalidRequest,
            Error::Config(_) | Error::Catalog(_) | Error::Audit(_) | Error::ConfigMessage(_) => {
                ExitKind::Config
            }
            Error::Denied(_) => ExitKind::NotPermitted,
            // A busy device is temporary (75), an unusable lock directory configuration (78).
            Error::Lock(l) => match l {
                LockError::Timeout { .. } | LockError::Backend(_) => ExitKind::Temporary,
                LockError::Io { .. } | LockError::Config(_) | LockError::Untrusted(_) => {
                    ExitKind::Config
                }
                LockError::Denied(_) => ExitKind::NotPermitted,
            },
            Error::Spool(s) => match s {
                SpoolError::Io { .. } => ExitKind::Config,
                SpoolError::Abandoned(_) => ExitKind::Temporary,
                SpoolError::Relayed { rc, .. } => ExitKind::from_code(*rc),
            },
            Error::Session(s) => session_kind(s),
            Error::Internal(_) => ExitKind::Internal,
            Error::Check(kind, _) => *kind,
            Error::Drift(_) => ExitKind::DeviceRejected,
            Error::Decided(kind, _) => *kind,
        }
    }
}

/// The exit kind of a session failure (also used to relay a coalesced request's result).
pub fn session_kind(e: &SessionError) -> ExitKind {
    match e {
        SessionError::Rejected { .. } => ExitKind::DeviceRejected,
        SessionError::Busy { .. } | SessionError::Timeout { .. } => ExitKind::Temporary,
        SessionError::Closed { .. } => ExitKind::Unreachable,
        SessionError::UnexpectedMode { .. } | SessionError::Unparsable { .. } => ExitKind::Protocol,
        SessionError::NoSecret { .. } => ExitKind::Config,
        SessionError::SecretRefused => ExitKind::NotPermitted,
        SessionError::Transport(t) => match t {
            TransportError::Unreachable { .. } | TransportError::Lost(_) => ExitKind::Unreachable,
            TransportError::Denied { .. } => ExitKind::NotPermitted,
            TransportError::Timeout { .. } => ExitKind::Temporary,
            TransportError::Config(_) => ExitKind::Config,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn every_layer_maps_to_its_documented_code() {
        let t = |e: TransportError| Error::from(e).kind().code();
        assert_eq!(Error::Usage("x".into()).kind().code(), 64);
        assert_eq!(
            Error::Request(crate::request::RequestError("x".into()))
                .kind()
                .code(),
            65
        );
        assert_eq!(
            Error::Unsupported(crate::catalog::Unsupported("x".into()))
                .kind()
                .code(),
            65
        );
        assert_eq!(Error::Internal("x".into()).kind().code(), 70);
        assert_eq!(
            Error::Denied(crate::policy::Denied {
                rule: "r".into(),
                message: "m".into()
            })
            .kind()
            .code(),
            77
        );
        assert_eq!(
            Error::Lock(crate::lock::LockError::Timeout {
                device: "d".into(),
                waited: Duration::ZERO,
                holders: String::new()
            })
            .kind()
            .code(),
            75
        );
        let s = |e: SessionError| Error::Session(e).kind().code();
        assert_eq!(
            s(SessionError::Rejected {
                line: "l".into(),
                indicator: "i".into()
            }),
            1
        );
        assert_eq!(
            s(SessionError::Busy {
                line: "l".into(),
                indicator: "i".into()
            }),
            75
        );
        assert_eq!(
            s(SessionError::Timeout {
                awaited: "a".into(),
                waited: Duration::ZERO,
                tail: String::new()
            }),
            75
        );
        assert_eq!(
            s(SessionError::Closed {
                awaited: "a".into(),
                tail: String::new()
            }),
            69
        );
        assert_eq!(
            s(SessionError::UnexpectedMode {
                line: "l".into(),
                expected: "e".into(),
                actual: "a".into()
            }),
            76
        );
        assert_eq!(s(SessionError::SecretRefused), 77);
        assert_eq!(
            t(TransportError::Unreachable {
                stage: "tcp".into(),
                message: "refused".into()
            }),
            69
        );
        assert_eq!(
            t(TransportError::Denied {
                stage: "auth".into(),
                message: "no".into()
            }),
            77
        );
        assert_eq!(t(TransportError::Lost("x".into())), 69);
        assert_eq!(t(TransportError::Config("x".into())), 78);
        assert_eq!(Error::ConfigMessage("x".into()).kind().code(), 78);
    }
}
