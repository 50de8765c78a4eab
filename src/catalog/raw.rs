//! The catalog as written: the `Raw*` shapes of `plugins.toml` (`deny_unknown_fields`), and
//! the two enums a platform keeps as written ([`Kind`], [`VlanListStyle`]).
//!
//! Only `serde` and `std` are used here: `build.rs` compiles this file too, to parse the
//! built-in catalog at build time and write it out as Rust (see `catalog::builtin`).

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

/// How the platform is driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// An interactive shell, judged by prompts and failure indicators.
    Cli,
    /// One command per exec channel, judged by exit status (and failure indicators).
    Exec,
    /// Open vSwitch: OVSDB read, then one `ovs-vsctl` transaction per request over an exec
    /// channel (the `ovsdb` driver); the platform lists the `actions` it carries out
    /// instead of templates.
    Ovsdb,
}

/// How a VLAN list is written on this platform.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VlanListStyle {
    /// Between items (`,` or ` `).
    pub separator: String,
    /// Between the ends of a run (`-`, ` to `), or absent to list every VLAN.
    pub range: Option<String>,
}

impl Default for VlanListStyle {
    fn default() -> Self {
        VlanListStyle {
            separator: ",".into(),
            range: Some("-".into()),
        }
    }
}

/// A catalog file: its platforms by name.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCatalog {
    #[serde(default)]
    pub(super) platforms: BTreeMap<String, RawPlatform>,
}

/// One `[platforms.NAME]` table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPlatform {
    pub(super) description: String,
    #[serde(default)]
    pub(super) aliases: Vec<String>,
    pub(super) kind: Kind,
    pub(super) network_types: Vec<String>,
    pub(super) port_pattern: Option<String>,
    pub(super) port_names: Option<RawPortNames>,
    pub(super) lag_interface: Option<String>,
    pub(super) lag_pattern: Option<String>,
    #[serde(default)]
    pub(super) lag_modes: BTreeMap<String, String>,
    pub(super) echo: Option<bool>,
    #[serde(default)]
    pub(super) modes: Vec<RawMode>,
    pub(super) login_mode: Option<String>,
    pub(super) config_mode: Option<String>,
    pub(super) save_mode: Option<String>,
    pub(super) secret_prompt: Option<String>,
    #[serde(default)]
    pub(super) responses: Vec<RawResponse>,
    #[serde(default)]
    pub(super) failures: Vec<String>,
    #[serde(default)]
    pub(super) temporary_failures: Vec<String>,
    #[serde(default)]
    pub(super) on_open: Vec<String>,
    pub(super) on_open_mode: Option<String>,
    #[serde(default)]
    pub(super) commit: Vec<String>,
    #[serde(default)]
    pub(super) abort: Vec<String>,
    pub(super) commit_leaves_to: Option<String>,
    #[serde(default)]
    pub(super) save: Vec<String>,
    #[serde(default)]
    pub(super) close: Vec<String>,
    #[serde(default)]
    pub(super) vlan_list: VlanListStyle,
    #[serde(default)]
    pub(super) templates: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub(super) actions: BTreeSet<String>,
    #[serde(default)]
    pub(super) unsupported: BTreeMap<String, String>,
    #[serde(default)]
    pub(super) samples: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub(super) own_context: BTreeSet<String>,
    pub(super) native_in_allowed: Option<bool>,
    #[serde(default)]
    pub(super) allowed_set_adds: bool,
    #[serde(default)]
    pub(super) native_is_access: bool,
    #[serde(default)]
    pub(super) idempotent: Vec<RawIdempotent>,
    #[serde(default)]
    pub(super) nouns: BTreeMap<String, String>,
    pub(super) end_of_options: Option<String>,
    pub(super) exec_shell: Option<String>,
    #[serde(default)]
    pub(super) options: BTreeMap<String, RawOption>,
    #[serde(default)]
    pub(super) lag_delete_resets_members: bool,
    #[serde(default)]
    pub(super) notes: Vec<String>,
    pub(super) verify: Option<RawVerify>,
    pub(super) check: Option<RawCheck>,
}

/// `[platforms.X.check]`: how `mercury check --connect` reads whether a VLAN exists.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCheck {
    /// The line that lists the device's VLANs (read-only).
    pub(super) vlans: String,
    /// A regex, with `{vlan}` for the id, that matches a line of that listing when the VLAN
    /// exists.
    pub(super) vlan_present: String,
}

/// A platform's `[verify]` table as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawVerify {
    #[serde(default)]
    pub(super) show: Vec<String>,
    pub(super) parser: Option<String>,
    pub(super) mode: Option<String>,
    pub(super) admin_default: Option<String>,
    pub(super) trunk_default: Option<String>,
    #[serde(default)]
    pub(super) modes: BTreeMap<String, String>,
    pub(super) mode_default: Option<String>,
    #[serde(default)]
    pub(super) unread: BTreeSet<String>,
    pub(super) vlan_table: Option<String>,
    pub(super) unsupported: Option<String>,
}

/// One `[[platforms.NAME.modes]]` entry as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMode {
    pub(super) name: String,
    pub(super) prompt: String,
    pub(super) parent: Option<String>,
    #[serde(default)]
    pub(super) enter: Vec<String>,
    #[serde(default)]
    pub(super) exit: Vec<String>,
    #[serde(default)]
    pub(super) secret: bool,
    #[serde(default)]
    pub(super) config: bool,
}

/// One `[[platforms.NAME.responses]]` entry as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawResponse {
    pub(super) prompt: String,
    #[serde(default)]
    pub(super) answer: String,
    #[serde(default = "yes")]
    pub(super) newline: bool,
}

fn yes() -> bool {
    true
}

/// An idempotent pattern: output alone, or output after a line matching `line` (the same
/// message can mean "already done" for one command and "refused" for another).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum RawIdempotent {
    /// Output that means "already done" after any line.
    Output(String),
    /// Output that means "already done" only after a line matching `line`.
    After {
        /// The output pattern.
        output: String,
        /// The line pattern.
        line: String,
    },
}

/// `[platforms.X.options.NAME]` as written (see `catalog::options`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOption {
    pub(super) about: String,
    pub(super) default: String,
    #[serde(default)]
    pub(super) values: Vec<String>,
    pub(super) pattern: Option<String>,
    #[serde(default)]
    pub(super) templates: BTreeMap<String, BTreeMap<String, Vec<String>>>,
}

/// Whether the CLI puts a space between the interface type and its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Spacing {
    /// No space (`GigabitEthernet1/0/5`); a name with a space is refused.
    #[default]
    None,
    /// One ASCII space in the canonical name (`TenGigabitEthernet 1/5` on OS9); a name
    /// typed without it is accepted too.
    One,
    /// No space in the canonical name, but one is accepted when typed (`ethernet 1/5` for
    /// Onyx's `Eth1/5`).
    Either,
}

/// `[platforms.X.port_names]` as written (see `catalog::ports`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPortNames {
    #[serde(default)]
    pub(super) space: Spacing,
    pub(super) number: String,
    pub(super) types: Vec<RawPortType>,
    #[serde(default)]
    pub(super) samples: BTreeMap<String, String>,
    #[serde(default)]
    pub(super) refused: Vec<String>,
}

/// One interface type of a port-name table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPortType {
    pub(super) name: String,
    #[serde(default)]
    pub(super) abbrev: Vec<String>,
    pub(super) number: Option<String>,
    pub(super) space: Option<Spacing>,
}
