//! Mercury: a one-shot executor that puts bare-metal server ports on the right layer-2
//! network — VLANs on switch ports, Open vSwitch ports on SmartNICs/DPUs.
//!
//! One folder per layer (DESIGN §3; `docs/architecture.md` draws them). From the top:
//! `intake` (argv, the forced-command grammar, JSON) and `serve` (the JSON-RPC front) hand
//! a raw request to `run`, which takes it through `request` (validated values), `config` +
//! `policy`, `lock`, a `driver` chosen by the `catalog`'s kind, a `session` over a
//! `transport`, `verify` (reading ports back), and ends in `report` (result, audit record,
//! exit code). `tls` holds the TLS material both the JSON-RPC front and the etcd lock
//! client use. A lower layer never imports a higher one (`tests/layers.rs`).

pub mod catalog;
pub mod config;
pub mod driver;
pub mod intake;
pub mod lock;
pub mod policy;
pub mod report;
pub mod request;
pub mod run;
pub mod serve;
pub mod session;
pub mod tls;
pub mod transport;
pub mod util;
pub mod verify;

pub use intake::dispatch;
pub use report::Outcome;
