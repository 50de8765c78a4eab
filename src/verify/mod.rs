//! Verify: read a port's live configuration back, normalise it, and compare it with what a
//! request asked for.
//!
//! This module owns the normalised [`PortState`] (mode, access VLAN, native VLAN, allowed
//! VLANs, admin state, description, MTU, LAG membership), the per-family parsers that turn
//! a platform's show output into one (`verify/*.rs`: one parser per output *family*, named by
//! the catalog's `[platforms.X.verify] parser`), and the [`Expect`]ations a request implies
//! (the composition rules of `driver`, restated as conditions on the resulting state).
//!
//! It never contacts a device and never decides exit codes: `run` reads the ports through
//! the session (`Session::read`) with the catalog's show lines, and reports what this
//! module finds. A field the platform's output does not carry is *unread*: an expectation on
//! it is reported as not verified, never as verified.

pub mod expect;
pub mod parse;
pub mod state;

pub use expect::{
    carried, checks, diff, refine, Check, Drift, Expect, ModeRule, PortReport, Reports, Verdict,
};
pub use parse::{lag_name, parse};
pub use state::{vlan_list, PortState};
