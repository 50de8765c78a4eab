//! The `ssh` transport (libssh2 through the `ssh2` crate).
//!
//! Not yet implemented in this build: opening an SSH device fails with a configuration error
//! that says so, before any connection is attempted. The SSH issue adds strict host-key
//! checking, the auth methods, PTY shell and exec channels here.

use std::time::Instant;

use super::{Connection, TransportError};
use crate::catalog::Kind;
use crate::config::Device;

/// Opens an SSH connection to the device.
pub fn open(
    device: &Device,
    _kind: Kind,
    _deadline: Instant,
) -> Result<Connection, TransportError> {
    Err(TransportError::Config(format!(
        "devices.{}: the ssh transport is not available in this build yet; use transport = \"command\" (e.g. argv = [\"ssh\", ...]) for now",
        device.name
    )))
}
