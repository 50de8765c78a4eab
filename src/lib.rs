//! Mercury: a one-shot executor that puts bare-metal server ports on the right layer-2
//! network — VLANs on switch ports, Open vSwitch ports on SmartNICs/DPUs.
//!
//! The path of every request (DESIGN §3): `cli`/`forced` (intake) → `request` (validation)
//! → `config` + `policy` → `lock` → `driver` (lines from the `catalog`) → `session` over a
//! `transport` → `audit` + `report` + `exit`. `run` strings them together.

pub mod audit;
pub mod b64;
pub mod catalog;
pub mod cli;
pub mod config;
pub mod driver;
pub mod error;
pub mod exit;
pub mod forced;
pub mod glob;
pub mod htpasswd;
pub mod http;
pub mod jsonrpc;
pub mod lock;
pub mod ovs;
pub mod policy;
pub mod report;
pub mod request;
pub mod run;
pub mod session;
pub mod spool;
pub mod timefmt;
pub mod transport;
pub mod validate;
pub mod verify;
pub mod vlan;

pub use run::{run, Outcome};
