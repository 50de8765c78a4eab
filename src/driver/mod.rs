//! Drivers: turn a validated request into what a session sends, for one platform, and run
//! it in the session.
//!
//! Two kinds, chosen by the catalog's `kind` (never by a platform's name):
//! - [`templates`] (`kind = "cli"` / `"exec"`): renders the catalog's per-action templates in
//!   the composition rules' order, and with `--verify` reads the ports through the
//!   platform's show lines before and after;
//! - [`ovsdb`] (`kind = "ovsdb"`): reads OVSDB, plans against what it read, writes one
//!   `ovs-vsctl` transaction.
//!
//! Preparing ([`Driver::prepare`]) checks everything without device contact; applying
//! ([`Prepared::apply`]) runs in a [`Session`] — a real one, or a dry one that records
//! what would be sent (`--dry-run` runs the same code). Several prepared requests of the
//! `templates` kind can also be applied as one batch ([`apply_batch`], request coalescing). Drivers decide what is sent and what
//! the device's answers mean for the result; they never lock, audit or pick exit codes.

pub mod ovsdb;
pub mod readback;
pub mod templates;

pub use templates::batch::{apply_batch, batch_ports, Part};
pub use templates::{plan, show_lines};

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use serde_json::Value;

pub use crate::catalog::Unsupported;
use crate::catalog::{Kind, Platform};
use crate::config::Device;
use crate::policy::Denied;
pub use crate::policy::Removal;
use crate::request::Request;
use crate::session::{Progress, Session, SessionError, Transcript};

/// A way of driving a platform.
pub trait Driver: Sync {
    /// Checks `req` against the platform and the device and prepares it. Nothing is sent;
    /// every value that will reach the device is validated here or was by the request layer.
    fn prepare<'p>(
        &self,
        req: &Request,
        device: &'p Device,
        platform: &'p Platform,
    ) -> Result<Box<dyn Prepared + 'p>, Unsupported>;
}

/// The driver the catalog's `kind` selects for `platform`.
pub fn for_platform(platform: &Platform) -> &'static dyn Driver {
    match platform.kind {
        Kind::Cli | Kind::Exec => &templates::Templates,
        Kind::Ovsdb => &ovsdb::Ovsdb,
    }
}

/// A request ready to run in a session.
pub trait Prepared {
    /// Notes for the caller from preparing (a description sanitised, a device setting
    /// without effect on this platform).
    fn warnings(&self) -> Vec<String>;

    /// Runs in an open session: reads what it needs, sends the change (nothing when the
    /// device already is as requested), reads back when verifying. In a dry session it
    /// records what it would send to a device whose ports need the change. Before sending,
    /// it hands `guard` what the change would take off each port (policy's removal rights):
    /// a refusal sends nothing.
    fn apply(&self, session: &mut Session, deadline: Instant, guard: Guard) -> Applied;

    /// Whether the request changes the device (false for `verify_port`): a read-only
    /// request is never coalesced and never saves.
    fn mutates(&self) -> bool {
        true
    }

    /// The `templates` kind's plan, so that several requests can be applied as one
    /// ([`apply_batch`]); `None` for other kinds.
    fn as_templates(&self) -> Option<&templates::TemplatePlan<'_>> {
        None
    }

    /// The ports Mercury plugged on this device and the VLANs each carries, read from the
    /// device in the open session (the `ovsdb` kind: a DPU's card, for the two-hop path's
    /// "does another port still use this VLAN"). `None`: this kind plugs no ports. A dry
    /// session reads nothing and answers an empty map.
    fn plugged(&self, _session: &mut Session, _deadline: Instant) -> Option<PluggedRead> {
        None
    }

    /// Reads the device in the open session and plans the change against it, sending
    /// nothing: a request the device's state refuses (the `ovsdb` kind: bridge missing,
    /// port on another bridge or not Mercury's, representor plugged for another node) fails
    /// here, before anything else is touched (the two-hop path reads the card before the
    /// switch). `None`: this kind has no such read.
    fn preflight(
        &self,
        _session: &mut Session,
        _deadline: Instant,
        _guard: Guard,
    ) -> Option<Applied> {
        None
    }
}

/// What each port Mercury plugged carries: its VLANs, or `None` when it carries every VLAN
/// of its bridge (plugged flat, or a trunk of every VLAN).
pub type Plugged = BTreeMap<String, Option<BTreeSet<u16>>>;

/// [`Prepared::plugged`]'s answer: the lines sent, and the ports (or why they could not be
/// read).
pub type PluggedRead = (Transcript, Result<Plugged, Failure>);

/// Policy's say on a change's removals, asked by the driver before anything is sent.
pub type Guard<'g> = &'g dyn Fn(&[Removal]) -> Result<(), Denied>;

/// Why a prepared request did not run to the end.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The conversation failed or the device refused.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// Policy refused what the change would remove, once the ports were read.
    #[error(transparent)]
    Denied(#[from] Denied),
    /// What the ports hold makes the request impossible on this platform.
    #[error(transparent)]
    Unsupported(#[from] Unsupported),
}

/// What [`Prepared::apply`] did: the lines sent (also on failure) and the outcome.
#[derive(Debug)]
pub struct Applied {
    /// Every line sent, with its output.
    pub transcript: Transcript,
    /// How it ended.
    pub result: Result<Done, Failure>,
    /// How far the change got (what may be in effect when it failed).
    pub progress: Progress,
}

/// A request that ran to the end.
#[derive(Debug, Clone, Default)]
pub struct Done {
    /// The device's configuration was changed.
    pub changed: bool,
    /// How the result's message reads.
    pub summary: Summary,
    /// The operation's answer for the result's `data` (`Null`: none).
    pub data: Value,
    /// Ansible's `diff` (per-port before / after), when the ports were read.
    pub diff: Option<Value>,
    /// Notes for the caller.
    pub warnings: Vec<String>,
    /// Read back, a port is not in the requested state (the device accepted the change but
    /// does not show it, or `verify_port` found drift): the request fails with exit 1.
    pub drift: Option<String>,
    /// The ports as read before and after the change (read before write; empty when not
    /// read): what a compensating step (the DPU path's restore) starts from.
    pub read: Vec<crate::verify::PortReport>,
}

/// The sentence a result's `msg` starts with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Summary {
    /// The lines were applied (`run` says how many, and in how many round trips).
    #[default]
    Applied,
    /// Applied and read back as requested (`changed`: the ports read back differently).
    Verified,
    /// Read first: already in the requested state, nothing sent.
    Skipped,
    /// The driver's own sentence.
    Said(String),
}
