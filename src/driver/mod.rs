//! Drivers: turn a validated request into what a session sends, for one platform.
//!
//! Two kinds, chosen by the catalog's `kind`: `templates` renders the catalog's per-action
//! templates in the composition rules' order (CLI and exec platforms); `ovsdb` reads OVSDB
//! and writes one `ovs-vsctl` transaction (the `ovs` platform).

pub mod ovsdb;
pub mod templates;

pub use templates::{plan, show_lines};

/// A request the platform cannot carry out (exit 65).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unsupported(pub String);
