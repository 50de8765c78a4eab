//! The vendor catalog: every platform described as data (`plugins.toml`).
//!
//! This module owns parsing the catalog (the built-in one, compiled into the binary, plus
//! extra files from the config's `plugins.d/`), compiling its patterns, and the lint that
//! proves a catalog that parses is also one that can work: modes reachable, variables known,
//! every operation present or explicitly unsupported, sample prompts matching their mode
//! only. It knows nothing of requests or sessions; `driver` renders templates and `session`
//! uses the modes and patterns.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

mod builtin;
mod lint;
pub mod options;
pub mod pattern;
pub mod ports;
mod prompt;
mod raw;
mod schema;
mod table;
mod template;

pub use pattern::Pattern;
use pattern::Syntax;
pub use prompt::Prompt;
pub use raw::{Kind, VlanListStyle};
use raw::{RawCatalog, RawPlatform};
use schema::compile;
pub use template::Template;

/// Where the built-in platforms come from, in messages.
const BUILTIN_SOURCE: &str = "built-in";

/// A catalog problem; exit 78.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// A catalog file could not be read.
    #[error("cannot read catalog {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A catalog file or directory that may not be trusted (see `config::trust`).
    #[error(transparent)]
    Untrusted(crate::config::ConfigError),
    /// TOML syntax or an unknown key.
    #[error("catalog {source_name}: {message}")]
    Parse {
        /// Which catalog (`built-in` or a path).
        source_name: String,
        /// The parser's message.
        message: String,
    },
    /// No platform has this name or alias.
    #[error("unknown platform {name:?}")]
    Unknown {
        /// The name asked for.
        name: String,
    },
    /// A value that parses but cannot work (bad regex, unknown variable, unknown mode).
    #[error("catalog {source_name}: platforms.{platform}: {message}")]
    Invalid {
        /// Which catalog.
        source_name: String,
        /// The platform.
        platform: String,
        /// What is wrong.
        message: String,
    },
}

/// A request the platform cannot carry out (exit 65): an action it has no template for, a
/// value its templates cannot take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unsupported(pub String);

/// What a session talks over: an interactive shell (prompts, modes) or one command per
/// exec channel (exit status). The transport opens one of these; the session drives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// An interactive byte stream (PTY shell, a child's stdin/stdout).
    Shell,
    /// One command per call.
    Exec,
}

/// The shell an exec platform's channels run their command line in (`exec_shell`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecShell {
    /// A POSIX shell (`sh -c LINE`, what OpenSSH's sshd runs an exec request in on Linux):
    /// lines can be joined into one script.
    Posix,
}

impl Kind {
    /// The channel a session of this kind talks over.
    pub fn channel(self) -> Channel {
        match self {
            Kind::Cli => Channel::Shell,
            Kind::Exec | Kind::Ovsdb => Channel::Exec,
        }
    }
}

/// Every template action the driver knows, with the variables each may use. Wherever
/// `port` is available, so are `port_type` and `port_number` (the name split before its
/// first digit: `TenGigabitEthernet1/5` → `TenGigabitEthernet` + `1/5`) and `noun` (the
/// platform's `nouns.lag` when the port is the request's LAG interface, else `nouns.port`). In `allowed_set`,
/// a template that uses `{vlan}` is rendered once per VLAN of the list (for platforms that
/// configure membership one VLAN at a time).
pub const ACTIONS: &[(&str, &[&str])] = &[
    ("network_add", &["vlan", "vlan_name"]),
    ("network_delete", &["vlan", "vlan_name"]),
    ("network_ensure", &["vlan"]),
    ("port_enter", &["port"]),
    ("port_exit", &["port"]),
    ("lag_enter", &["port", "lag", "lag_id"]),
    ("port_l2", &["port"]),
    ("access_set", &["port", "vlan"]),
    ("access_remove", &["port", "vlan"]),
    ("trunk_mode", &["port"]),
    ("native_set", &["port", "vlan"]),
    ("native_remove", &["port", "vlan"]),
    ("allowed_set", &["port", "vlans", "vlan"]),
    ("allowed_add", &["port", "vlan"]),
    ("allowed_remove", &["port", "vlan"]),
    ("hybrid_mode", &["port"]),
    ("hybrid_native_set", &["port", "vlan"]),
    ("hybrid_allowed_set", &["port", "vlans", "vlan"]),
    ("port_reset", &["port"]),
    ("park", &["port"]),
    ("detach_all", &["port"]),
    ("mode_clear", &["port"]),
    ("enable", &["port"]),
    ("disable", &["port"]),
    ("description", &["port", "description"]),
    ("description_clear", &["port"]),
    ("mtu", &["port", "mtu"]),
    ("lag_create", &["lag", "lag_id", "lacp_mode", "members"]),
    ("lag_delete", &["lag", "lag_id"]),
    ("lag_member_add", &["port", "lag", "lag_id", "lacp_mode"]),
    ("lag_member_remove", &["port", "lag", "lag_id"]),
    (
        "plug",
        &["port", "bridge", "vif_id", "mac", "node_uuid", "vlan"],
    ),
    ("unplug", &["port", "bridge"]),
];

/// Template variables whose values come from the catalog itself, never from a request
/// (`{lacp_mode}` may well be an option such as `--static`).
pub const CATALOG_VARS: &[&str] = &["lacp_mode", "noun"];

/// Actions a port-context template runs in (wrapped by `port_enter` / `port_exit`, unless
/// the platform lists them in `own_context`).
pub const PORT_ACTIONS: &[&str] = &[
    "port_l2",
    "access_set",
    "access_remove",
    "trunk_mode",
    "native_set",
    "native_remove",
    "allowed_set",
    "allowed_add",
    "allowed_remove",
    "hybrid_mode",
    "hybrid_native_set",
    "hybrid_allowed_set",
    "port_reset",
    "park",
    "detach_all",
    "mode_clear",
    "enable",
    "disable",
    "description",
    "description_clear",
    "mtu",
    "lag_member_add",
    "lag_member_remove",
];

/// A CLI mode.
#[derive(Debug, Clone)]
pub struct Mode {
    /// Name used by transitions and in messages.
    pub name: String,
    /// What the device shows in this mode.
    pub prompt: Prompt,
    /// The mode `exit` leads to.
    pub parent: Option<String>,
    /// Lines that enter this mode from its parent.
    pub enter: Vec<String>,
    /// Lines that leave this mode to its parent.
    pub exit: Vec<String>,
    /// Entering may ask for the enable secret.
    pub secret: bool,
    /// A configuration mode: template lines may be typed here.
    pub config: bool,
}

/// An interactive question the device may ask, and Mercury's answer.
#[derive(Debug, Clone)]
pub struct Response {
    /// The question, matched at the end of the output.
    pub prompt: Prompt,
    /// What to send back.
    pub answer: String,
    /// Send a newline after the answer (false for pagers that take one key).
    pub newline: bool,
}

/// Output meaning the intended state already holds, optionally only after certain lines:
/// SONiC's `Error: Vlan130 does not exist` is "already done" for `config vlan del 130`, but
/// a refusal for `config vlan member add 130 Ethernet20`.
#[derive(Debug, Clone)]
pub struct Idempotent {
    /// An output line that says so.
    pub output: Pattern,
    /// The lines it applies to (`None`: every line).
    pub line: Option<Pattern>,
}

/// A platform, compiled and linted.
#[derive(Debug, Clone)]
pub struct Platform {
    /// Catalog name.
    pub name: String,
    /// Human description.
    pub description: String,
    /// Other names (NGS device types).
    pub aliases: Vec<String>,
    /// CLI or exec.
    pub kind: Kind,
    /// What `get_allowed_network_types` answers.
    pub network_types: Vec<String>,
    /// Canonical port / interface names of this platform (from `port_names` when the
    /// platform has a table, else `port_pattern` as written).
    pub port_pattern: Pattern,
    /// The platform's interface types, abbreviations and spacing (`[port_names]`), from
    /// which [`Platform::canonical_port`] works; `None` where names are taken as they are
    /// (Linux interfaces, OVS ports).
    pub port_names: Option<ports::PortNames>,
    /// How the LAG interface is named (`Port-channel{lag_id}`).
    pub lag_interface: Option<Template>,
    /// Recognises a LAG interface name and captures its number.
    pub lag_pattern: Option<Pattern>,
    /// LAG aggregation mode keywords (`lacp` → `active`, `static` → `on`).
    pub lag_modes: BTreeMap<String, String>,
    /// The device echoes each line (a prompt before the echo is stale).
    pub echo: bool,
    /// The CLI takes lines typed ahead and echoes each when its parser reads it, after the
    /// previous line's output and prompt: reads and navigation may be sent in one batch
    /// and their outputs split at each prompt followed by the next line's echo.
    pub type_ahead: bool,
    /// Modes (CLI).
    pub modes: Vec<Mode>,
    /// Mode assumed right after login (dry-run plans start here).
    pub login_mode: String,
    /// Mode the templates run in.
    pub config_mode: String,
    /// Mode the save lines run in.
    pub save_mode: String,
    /// The enable-secret question.
    pub secret_prompt: Option<Prompt>,
    /// Questions answered automatically (confirmations, pagers).
    pub responses: Vec<Response>,
    /// Output lines that mean the device rejected a line.
    pub failures: Vec<Pattern>,
    /// Output lines that mean "try again later" (config database locked).
    pub temporary_failures: Vec<Pattern>,
    /// Lines sent right after login (paging, width).
    pub on_open: Vec<String>,
    /// The mode `on_open` is typed in, when not the login mode (SMIS turns paging off in
    /// configuration mode).
    pub on_open_mode: Option<String>,
    /// Lines that apply the change (Junos commit, NVUE apply); always run.
    pub commit: Vec<String>,
    /// Lines that discard a failed change.
    pub abort: Vec<String>,
    /// The mode `commit` and `abort` leave the device in when they end configuration mode
    /// (EOS sessions: privileged); `None`: they stay where they were (Junos). A live
    /// session learns it from the prompt; a dry run takes it from here.
    pub commit_leaves_to: Option<String>,
    /// Lines that persist the configuration (only when `save_config`).
    pub save: Vec<String>,
    /// Lines sent before closing.
    pub close: Vec<String>,
    /// VLAN list style.
    pub vlan_list: VlanListStyle,
    /// Action → lines.
    pub templates: BTreeMap<String, Vec<Template>>,
    /// Actions a driver carries out without templates (`kind = "ovsdb"`).
    pub actions: BTreeSet<String>,
    /// Action → why it is not supported.
    pub unsupported: BTreeMap<String, String>,
    /// Mode → prompts a real device shows in it (for the lint).
    pub samples: BTreeMap<String, Vec<String>>,
    /// Port actions whose templates enter their own context (VLAN-centric CLIs such as
    /// `interface vlan N` / `untagged PORT`): rendered outside the port's block.
    pub own_context: BTreeSet<String>,
    /// Whether the native VLAN must also be in a trunk's tagged list (most CLIs); false on
    /// platforms where a VLAN is either untagged or tagged on a port, never both.
    pub native_in_allowed: bool,
    /// `allowed_set` adds to the port's tagged VLANs rather than replacing them (the
    /// platform has no replace form); the plan carries a warning.
    pub allowed_set_adds: bool,
    /// A port has one untagged VLAN, which is both the access VLAN and a trunk's native
    /// VLAN (OS10, Onyx hybrid ports): removing "the access VLAN" would also remove a
    /// trunk's native VLAN, so adding a tagged VLAN leaves it alone.
    pub native_is_access: bool,
    /// Output lines that mean the intended state already holds (`is already a member`):
    /// a line whose failure carries one of these counts as done.
    pub idempotent: Vec<Idempotent>,
    /// Remarks for people, shown in the supported-platforms table.
    pub notes: Vec<String>,
    /// `{noun}` for a physical port (`port`) and for a LAG interface (`lag`), on platforms
    /// whose commands name the object kind (NCLU `net add interface X` / `net add bond X`).
    pub nouns: BTreeMap<String, String>,
    /// Exec platforms: the argument that ends option parsing for the platform's tool (`--`
    /// for click's `config`). A value rendered as an argument that starts with `-` is taken
    /// only after it; without it (or before it) such a value is refused (exit 65), so a
    /// description `--help` can never reach a tool as an option.
    pub end_of_options: Option<String>,
    /// Exec platforms: the shell every exec channel runs its command line in (`posix`: all
    /// of them are Linux, behind `sh -c`). With one, several read lines go down one channel
    /// as one script, each line's output and exit status recovered between markers; without
    /// it every line has its own channel.
    pub exec_shell: Option<ExecShell>,
    /// Ports leaving a deleted LAG keep the L2 settings the LAG gave them (IOS): delete_lag
    /// resets each ex-member as reset_port would (and restores the idle VLAN).
    pub lag_delete_resets_members: bool,
    /// Per-device choices (`[options.NAME]`): default, values, templates per value.
    pub options: BTreeMap<String, options::DeviceOption>,
    /// The value of every option (defaults, or a device's after
    /// [`Platform::with_options`]): the template variables `{NAME}`.
    pub option_values: BTreeMap<String, String>,
    /// How a port's live configuration is read back (`--verify`, `verify_port`), or why it
    /// cannot be.
    pub verify: Verify,
    /// How `mercury check --connect` reads whether the idle VLAN exists (`None`: it cannot).
    pub vlan_check: Option<VlanCheck>,
}

/// `[platforms.X.check]`, compiled: a read-only listing of the device's VLANs and the line
/// that shows one exists.
#[derive(Debug, Clone)]
pub struct VlanCheck {
    /// The show line.
    pub show: String,
    /// Regex source with `{vlan}` for the id.
    pub present: String,
}

impl VlanCheck {
    /// Whether `output` of [`VlanCheck::show`] lists VLAN `vlan`.
    pub fn lists(&self, output: &str, vlan: u16) -> bool {
        // Checked with a VLAN id in it when the platform was compiled.
        pattern::compile(
            &format!("(?m){}", self.present.replace("{vlan}", &vlan.to_string())),
            Syntax::Trusted,
        )
        .map(|r| r.is_match(output))
        .unwrap_or(false)
    }
}

/// The parsers `[platforms.X.verify] parser` may name: one per family of show output
/// (`src/verify/`). `ovsdb` is the `ovs` platform's own OVSDB read (`src/ovs.rs`).
pub const VERIFY_PARSERS: &[&str] = &[
    "ios",
    "os9_vlan",
    "fastiron_vlan",
    "onyx_flat",
    "bridge_vlan",
    "netvisor_parsable",
    "junos_set",
    "vrp",
    "nvue",
    "sonic_tables",
    "srl",
    "ovs_vsctl",
    "ovsdb",
];

/// The port fields a parser reads (and `verify.unread` may name).
pub const VERIFY_FIELDS: &[&str] = &[
    "mode",
    "access_vlan",
    "native_vlan",
    "allowed_vlans",
    "admin_up",
    "description",
    "mtu",
    "lag",
];

/// The L2 modes a parsed port state can be normalised to.
pub const VERIFY_MODES: &[&str] = &["access", "trunk", "hybrid"];

/// Reading a port back: the show commands and the parser for their output.
#[derive(Debug, Clone)]
pub struct VerifySpec {
    /// Show lines, rendered with `{port}` (and `{port_type}`, `{port_number}`); run in
    /// `mode` (CLI), each on its own channel (exec).
    pub show: Vec<Template>,
    /// One of [`VERIFY_PARSERS`].
    pub parser: String,
    /// The CLI mode the show lines are typed in (default: `save_mode`).
    pub mode: Option<String>,
    /// A port whose configuration says nothing about its administrative state is up
    /// (IOS, Junos) or down (AOS-CX, whose ports ship disabled and show `no shutdown`).
    pub admin_default_up: bool,
    /// A trunk without an allowed-VLAN line carries every VLAN (IOS: `all`) rather than
    /// none (OS10, Junos).
    pub trunk_default_all: bool,
    /// Device mode words mapped to Mercury's (`general` → `trunk` on PowerConnect, whose
    /// trunks are general-mode ports).
    pub modes: BTreeMap<String, String>,
    /// The mode of a switch port whose configuration shows no mode line: the platform's
    /// default, which it does not print (`access` on NX-OS, EOS and OS10).
    pub mode_default: Option<String>,
    /// Fields the show output never carries (`description` on SONiC without a description
    /// column): an expectation on one is reported as not verified, never as verified.
    pub unread: BTreeSet<String>,
    /// The show line listing the device's VLANs by name and id, on platforms that key VLANs
    /// by name (Junos `set vlans NAME vlan-id N`): read before a VLAN is created or deleted,
    /// so that the id a request names is what selects the VLAN.
    pub vlan_table: Option<String>,
}

/// Whether and how a platform's ports can be read back.
#[derive(Debug, Clone)]
pub enum Verify {
    /// Show commands and a parser.
    Show(VerifySpec),
    /// Why the platform's show output cannot be parsed reliably (requests with `--verify`
    /// and `verify_port` are refused with this reason, exit 65).
    Unsupported(String),
    /// The catalog says nothing (a lint error; refused like `Unsupported`).
    Undeclared,
}

impl Verify {
    /// The spec, or why there is none.
    pub fn spec(&self, platform: &str) -> Result<&VerifySpec, String> {
        match self {
            Verify::Show(s) => Ok(s),
            Verify::Unsupported(why) => {
                Err(format!("verify is not supported on {platform}: {why}"))
            }
            Verify::Undeclared => Err(format!(
                "verify is not supported on {platform}: its catalog entry declares no show commands"
            )),
        }
    }
}

impl Platform {
    /// The mode called `name`.
    pub fn mode(&self, name: &str) -> Option<&Mode> {
        self.modes.iter().find(|m| m.name == name)
    }

    /// The template for an action, or why there is none.
    pub fn template(&self, action: &str) -> Result<&[Template], String> {
        if let Some(t) = self.templates.get(action) {
            return Ok(t);
        }
        Err(self.why_not(action))
    }

    /// Whether the platform's access ports are made in its trunk mode: its `access_set`
    /// starts with the lines of its `trunk_mode` (PowerConnect with `plug_mode = general`:
    /// a general-mode port whose PVID is the VLAN). Such a port with only its untagged VLAN
    /// is that platform's access port.
    pub fn access_is_trunk(&self) -> bool {
        match (
            self.templates.get("access_set"),
            self.templates.get("trunk_mode"),
        ) {
            (Some(access), Some(trunk)) => !trunk.is_empty() && access.starts_with(trunk),
            _ => false,
        }
    }

    /// Whether the platform keys VLANs by name (its `network_delete` template names the
    /// VLAN by `{vlan_name}`): a request's name could then select another VLAN than its id.
    pub fn vlans_by_name(&self) -> bool {
        self.templates
            .get("network_delete")
            .is_some_and(|t| t.iter().any(|t| t.vars().any(|v| v == "vlan_name")))
    }

    /// Whether the show lines of one read cost one round trip together: typed ahead on a
    /// `type_ahead` CLI, one joined script on an `exec_shell` exec platform (a transport
    /// without a shell still runs them one by one).
    pub fn batches_reads(&self) -> bool {
        self.type_ahead || self.exec_shell.is_some()
    }

    /// Whether the platform carries out `action` (a template, or a driver action).
    pub fn supports(&self, action: &str) -> bool {
        self.templates.contains_key(action) || self.actions.contains(action)
    }

    /// Every pattern of the platform with where it comes from (the lint builds each one:
    /// a run builds only those it matches, see [`pattern`]).
    pub fn patterns(&self) -> Vec<(String, &Pattern)> {
        let mut out = vec![("port_pattern".to_string(), &self.port_pattern)];
        out.extend(self.lag_pattern.iter().map(|r| ("lag_pattern".into(), r)));
        for m in &self.modes {
            out.push((format!("modes.{}.prompt", m.name), &m.prompt.regex));
        }
        out.extend(
            self.secret_prompt
                .iter()
                .map(|p| ("secret_prompt".into(), &p.regex)),
        );
        for (i, r) in self.responses.iter().enumerate() {
            out.push((format!("responses[{i}].prompt"), &r.prompt.regex));
        }
        for (i, r) in self.failures.iter().enumerate() {
            out.push((format!("failures[{i}]"), r));
        }
        for (i, r) in self.temporary_failures.iter().enumerate() {
            out.push((format!("temporary_failures[{i}]"), r));
        }
        for (i, x) in self.idempotent.iter().enumerate() {
            out.push((format!("idempotent[{i}].output"), &x.output));
            out.extend(x.line.iter().map(|l| (format!("idempotent[{i}].line"), l)));
        }
        for t in self.port_names.iter().flat_map(|n| &n.types) {
            out.push((format!("port_names.{}.number", t.name), &t.number));
        }
        for (name, o) in &self.options {
            out.extend(
                o.pattern
                    .iter()
                    .map(|r| (format!("options.{name}.pattern"), r)),
            );
        }
        out
    }

    /// The patterns of `idempotent` that apply after `line` (those without a `line`
    /// condition and those whose condition the line matches). Borrowed: a pattern's
    /// automaton, built on first match, stays with the platform for the next line.
    pub fn idempotent_for(&self, line: &str) -> Vec<&Pattern> {
        self.idempotent
            .iter()
            .filter(|i| i.line.as_ref().is_none_or(|l| l.is_match(line)))
            .map(|i| &i.output)
            .collect()
    }

    /// The platform's canonical name for a port or interface as a caller (or Ironic's LLDP
    /// data) wrote it: the full type name the device prints, ASCII case folded, the
    /// platform's spacing (`Et48` → `Ethernet48` on EOS, `Te 0/33` → `TenGigabitEthernet
    /// 0/33` on OS9). Everything after resolution (policy, lock, audit, rendering) sees only
    /// this name. A name the platform does not know is refused (exit 65).
    pub fn canonical_port(&self, typed: &str) -> Result<String, Unsupported> {
        use ports::NameError;
        let like = || self.port_examples();
        let canonical = match &self.port_names {
            None => typed.to_string(),
            Some(t) => t.canonical(typed).map_err(|e| {
                Unsupported(match e {
                    NameError::NoType => format!(
                        "invalid port {} for platform {}: expected {}",
                        crate::request::validate::Escaped(typed),
                        self.name,
                        like()
                    ),
                    NameError::Space(ty) => format!(
                        "invalid port {} for platform {}: {ty} takes no space before its number",
                        crate::request::validate::Escaped(typed),
                        self.name
                    ),
                    NameError::Ambiguous(all) => format!(
                        "ambiguous port {} for platform {}: it reads as {}",
                        crate::request::validate::Escaped(typed),
                        self.name,
                        all.join(" or ")
                    ),
                })
            })?,
        };
        if !self.port_pattern.is_match(&canonical) {
            return Err(Unsupported(format!(
                "invalid port {} for platform {}: expected {}",
                crate::request::validate::Escaped(typed),
                self.name,
                like()
            )));
        }
        Ok(canonical)
    }

    /// A configured port glob in the platform's canonical spelling (see
    /// [`ports::PortNames::canonical_glob`]); unchanged on platforms without a table.
    pub fn canonical_glob(&self, pattern: &str) -> String {
        match &self.port_names {
            Some(t) => t.canonical_glob(pattern),
            None => pattern.to_string(),
        }
    }

    /// What a port name of this platform looks like, for messages.
    fn port_examples(&self) -> String {
        match &self.port_names {
            Some(t) => format!(
                "an interface type ({}) and its number",
                t.type_names().join(", ")
            ),
            None => format!(
                "a name like {}",
                self.port_pattern
                    .as_str()
                    .trim_start_matches("^(?:")
                    .trim_end_matches(")$")
            ),
        }
    }

    /// A canonical port name split into type and number (`{port_type}`, `{port_number}`):
    /// by the platform's table, else before the first digit.
    pub fn split_port(&self, port: &str) -> (String, String) {
        if let Some((t, n)) = self.port_names.as_ref().and_then(|t| t.split(port)) {
            return (t, n);
        }
        let at = port
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(port.len());
        let (t, n) = port.split_at(at);
        (t.trim_end().to_string(), n.to_string())
    }

    /// `Ok` when the platform carries out `action`, else why not (exit 65).
    pub fn require(&self, action: &str) -> Result<(), Unsupported> {
        if self.supports(action) {
            Ok(())
        } else {
            Err(Unsupported(self.why_not(action)))
        }
    }

    fn why_not(&self, action: &str) -> String {
        match self.unsupported.get(action) {
            Some(why) => format!("{action} is not supported on {}: {why}", self.name),
            None => format!("{action} is not supported on {}", self.name),
        }
    }

    /// Lines that take the session from mode `from` to mode `to`, with the mode reached
    /// after each line; `None` when no path exists. Breadth-first over enter/exit edges.
    pub fn path(&self, from: &str, to: &str) -> Option<Vec<(String, String, bool)>> {
        let mut prev: BTreeMap<&str, (&str, bool)> = BTreeMap::new();
        let mut queue = VecDeque::from([from]);
        let mut seen = BTreeSet::from([from]);
        while let Some(cur) = queue.pop_front() {
            if cur == to {
                let mut chain = Vec::new();
                let mut at = to;
                while at != from {
                    let (p, entering) = prev[at];
                    chain.push((p, at, entering));
                    at = p;
                }
                chain.reverse();
                let mut out = Vec::new();
                for (p, next, entering) in chain {
                    let (lines, secret) = if entering {
                        let m = self.mode(next)?;
                        (&m.enter, m.secret)
                    } else {
                        (&self.mode(p)?.exit, false)
                    };
                    for (i, l) in lines.iter().enumerate() {
                        // Only the last line of a transition lands in the new mode.
                        let lands = if i + 1 == lines.len() { next } else { p };
                        out.push((l.clone(), lands.to_string(), secret && i == 0));
                    }
                }
                return Some(out);
            }
            for m in &self.modes {
                // enter: parent -> child, when the child can be entered.
                if m.parent.as_deref() == Some(cur) && !m.enter.is_empty() && seen.insert(&m.name) {
                    prev.insert(&m.name, (cur, true));
                    queue.push_back(&m.name);
                }
            }
            if let Some(m) = self.mode(cur) {
                if let Some(p) = m.parent.as_deref() {
                    if !m.exit.is_empty() && seen.insert(p) {
                        prev.insert(p, (cur, false));
                        queue.push_back(p);
                    }
                }
            }
        }
        None
    }
}

/// A platform as written: parsed from a `plugins.d` file, or built-in (built on first use
/// from the data `build.rs` generated).
#[derive(Debug)]
enum Source {
    Parsed(Box<RawPlatform>),
    Builtin(fn() -> RawPlatform),
}

/// One platform as loaded; it is built (built-in) and its patterns compiled on first use.
#[derive(Debug)]
struct Entry {
    /// Which catalog it came from (`built-in` or a path), for messages.
    source_name: String,
    /// Its other names (for lookups that must not build the platform).
    aliases: Vec<String>,
    source: Source,
    compiled: OnceLock<Result<Platform, String>>,
}

thread_local! {
    /// Catalog texts parsed on this thread (a regression guard: the built-in catalog is
    /// never among them).
    static PARSED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// All platforms known to this run.
///
/// The built-in platforms are compiled into the binary as data at build time (`build.rs`):
/// loading them parses nothing. Every `plugins.d` file is parsed when loaded (so a TOML
/// mistake anywhere is caught at once). A platform's regexes are compiled only when it is
/// first used: one run needs one platform, and compiling every platform's Unicode-aware
/// patterns would cost more than the rest of a run. [`Catalog::lint`] compiles everything.
#[derive(Debug, Default)]
pub struct Catalog {
    entries: BTreeMap<String, Entry>,
}

impl Catalog {
    /// The built-in catalog alone.
    pub fn builtin() -> Result<Catalog, CatalogError> {
        let mut c = Catalog::default();
        for (name, aliases, build) in builtin::PLATFORMS {
            c.entries.insert(
                (*name).to_string(),
                Entry {
                    source_name: BUILTIN_SOURCE.to_string(),
                    aliases: aliases.iter().map(|a| (*a).to_string()).collect(),
                    source: Source::Builtin(*build),
                    compiled: OnceLock::new(),
                },
            );
        }
        Ok(c)
    }

    /// The built-in catalog plus every `*.toml` in `dir` (sorted; a later platform of the
    /// same name replaces an earlier one). A missing directory is not an error.
    pub fn load(dir: &Path) -> Result<Catalog, CatalogError> {
        let mut c = Catalog::builtin()?;
        // A catalog file writes the lines sent to switches: its directory and each file are
        // trusted like the configuration (owner root or the running user, nobody else can
        // write them or any directory above them).
        match crate::config::trust::check_read_dir(dir, crate::config::Role::Plugins) {
            Err(crate::config::ConfigError::Read { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                return Ok(c)
            }
            Err(e) => return Err(CatalogError::Untrusted(e)),
            Ok(()) => {}
        }
        let entries = match fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(c),
            Err(source) => {
                return Err(CatalogError::Read {
                    path: dir.to_path_buf(),
                    source,
                })
            }
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        for path in files {
            crate::config::trust::check_file(&path, crate::config::Role::Plugins)
                .map_err(CatalogError::Untrusted)?;
            let text = fs::read_to_string(&path).map_err(|source| CatalogError::Read {
                path: path.clone(),
                source,
            })?;
            c.add_text(&path.display().to_string(), &text)?;
        }
        Ok(c)
    }

    /// Parses catalog text, adding its platforms (compiled later, on first use).
    pub fn add_text(&mut self, source_name: &str, text: &str) -> Result<(), CatalogError> {
        PARSED.with(|n| n.set(n.get() + 1));
        let raw: RawCatalog = toml::from_str(text).map_err(|e| CatalogError::Parse {
            source_name: source_name.to_string(),
            message: e.to_string().trim_end().to_string(),
        })?;
        for (name, raw) in raw.platforms {
            self.entries.insert(
                name,
                Entry {
                    source_name: source_name.to_string(),
                    aliases: raw.aliases.clone(),
                    source: Source::Parsed(Box::new(raw)),
                    compiled: OnceLock::new(),
                },
            );
        }
        Ok(())
    }

    /// The catalog name of a platform given by name or alias; `netmiko_X` (an NGS device
    /// type) finds `X`. Compiles nothing.
    pub fn lookup(&self, name: &str) -> Option<&str> {
        if let Some((k, _)) = self.entries.get_key_value(name) {
            return Some(k);
        }
        if let Some((k, _)) = self
            .entries
            .iter()
            .find(|(_, e)| e.aliases.iter().any(|a| a == name))
        {
            return Some(k);
        }
        name.strip_prefix("netmiko_").and_then(|n| self.lookup(n))
    }

    /// `"; did you mean X?"` for the platform name or alias closest to `name`, or empty.
    pub fn did_you_mean(&self, name: &str) -> String {
        let names = self.entries.iter().flat_map(|(k, e)| {
            std::iter::once(k.as_str()).chain(e.aliases.iter().map(String::as_str))
        });
        crate::util::suggest::did_you_mean(name, names)
    }

    /// The platform called `name` (or an alias of it), compiled on first use. An unknown
    /// name is [`CatalogError::Unknown`]; a platform whose patterns do not compile is
    /// [`CatalogError::Invalid`].
    pub fn get(&self, name: &str) -> Result<&Platform, CatalogError> {
        let key = self.lookup(name).ok_or_else(|| CatalogError::Unknown {
            name: name.to_string(),
        })?;
        let entry = self.entries.get(key).ok_or_else(|| CatalogError::Unknown {
            name: name.to_string(),
        })?;
        entry
            .compiled
            .get_or_init(|| match &entry.source {
                Source::Parsed(raw) => compile(key, raw, Syntax::Check),
                Source::Builtin(build) => compile(key, &build(), Syntax::Trusted),
            })
            .as_ref()
            .map_err(|message| CatalogError::Invalid {
                source_name: entry.source_name.clone(),
                platform: key.to_string(),
                message: message.clone(),
            })
    }

    /// Every platform's catalog name, sorted. Compiles nothing.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// Every platform, compiled; the first platform that does not compile is the error.
    pub fn platforms(&self) -> Result<Vec<&Platform>, CatalogError> {
        self.names().map(|n| self.get(n)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_catalog_passes_the_lint() {
        let c = Catalog::builtin().unwrap();
        let problems = c.lint();
        assert!(problems.is_empty(), "{problems:#?}");
        assert!(c.get("cisco_ios").is_ok());
        assert_eq!(
            c.get("netmiko_cisco_ios").map(|p| p.name.as_str()).ok(),
            Some("cisco_ios")
        );
        assert!(matches!(
            c.get("no_such_platform"),
            Err(CatalogError::Unknown { .. })
        ));
    }

    #[test]
    fn templates_parse_and_render() {
        let t = Template::parse("switchport access vlan {vlan}").unwrap();
        assert_eq!(t.vars().collect::<Vec<_>>(), vec!["vlan"]);
        let out = t
            .render(&|v| (v == "vlan").then(|| "120".to_string()))
            .unwrap();
        assert_eq!(out, "switchport access vlan 120");
        assert_eq!(t.render(&|_| None), Err("vlan".to_string()));
        assert!(Template::parse("x {vlan").is_err());
        assert!(Template::parse("x {Vlan}").is_err());
        assert!(Template::parse("x }").is_err());
    }

    const MINI: &str = r#"
        [platforms.mini]
        description = "test"
        kind = "cli"
        network_types = ["vlan"]
        port_pattern = 'Eth\d+'
        login_mode = "exec"
        config_mode = "config"
        save_mode = "exec"
        [[platforms.mini.modes]]
        name = "exec"
        prompt = '^(?P<host>\w+)#'
        [[platforms.mini.modes]]
        name = "config"
        prompt = '^(?P<host>\w+)\(config\)#'
        parent = "exec"
        enter = ["conf t"]
        exit = ["end"]
        config = true
        [platforms.mini.samples]
        exec = ["sw1#"]
        config = ["sw1(config)#"]
        [platforms.mini.templates]
        access_set = ["interface {port}", "switchport access vlan {vlan}"]
        enable = ["no shutdown {vlan}"]
        [platforms.mini.unsupported]
        network_add = "n/a"
    "#;

    #[test]
    fn lint_catches_bad_variables_and_missing_actions() {
        let mut c = Catalog::default();
        c.add_text("test", MINI).unwrap();
        let problems = c.lint().join("\n");
        assert!(
            problems.contains("templates.enable: variable {vlan}"),
            "{problems}"
        );
        assert!(
            problems.contains("access_remove: neither templated"),
            "{problems}"
        );
        assert!(!problems.contains("network_add: neither"), "{problems}");
    }

    #[test]
    fn lint_requires_verify_to_be_declared_either_way() {
        let mut c = Catalog::default();
        c.add_text("test", MINI).unwrap();
        let problems = c.lint().join("\n");
        assert!(
            problems.contains("verify: neither show lines with a parser nor verify.unsupported"),
            "{problems}"
        );
        let bad = format!(
            "{MINI}\n[platforms.mini.verify]\nshow = [\"show run int {{port}} {{vlan}}\"]\nparser = \"textfsm\"\nmode = \"config\"\nmodes = {{ general = \"tagged\" }}\nunread = [\"colour\"]\n"
        );
        let mut c = Catalog::default();
        c.add_text("test", &bad).unwrap();
        let problems = c.lint().join("\n");
        for want in [
            "verify.parser \"textfsm\" is not one of",
            "verify.show: variable {vlan}",
            "verify.mode \"config\" is a configuration mode",
            "verify.modes.general",
            "verify.unread: \"colour\"",
        ] {
            assert!(problems.contains(want), "{want}: {problems}");
        }
        let declared = format!("{MINI}\n[platforms.mini.verify]\nunsupported = \"no show\"\n");
        let mut c = Catalog::default();
        c.add_text("test", &declared).unwrap();
        assert!(!c.lint().join("\n").contains("verify"));
        assert!(c
            .get("mini")
            .unwrap()
            .verify
            .spec("mini")
            .unwrap_err()
            .contains("no show"));
    }

    #[test]
    fn lint_catches_escape_hatch_misuse() {
        let text = MINI
            .replace(
                "save_mode = \"exec\"",
                "save_mode = \"exec\"\nown_context = [\"network_add\"]\non_open = [\"terminal length {vlan}\"]",
            )
            .replace(
                "[platforms.mini.templates]",
                "[platforms.mini.templates]\ndisable = [\"net add {noun} {port} link down\"]",
            )
            .replace("enable = [\"no shutdown {vlan}\"]", "enable = [\"no shutdown\"]");
        let mut c = Catalog::default();
        c.add_text("test", &text).unwrap();
        let problems = c.lint().join("\n");
        for want in [
            "own_context.network_add: not a port action",
            "on_open: \"terminal length {vlan}\" has a template variable",
            "templates use {noun} but nouns lacks",
        ] {
            assert!(problems.contains(want), "{want}: {problems}");
        }
    }

    /// `exec_shell` is for exec platforms, and only `posix` is known.
    #[test]
    fn exec_shell_is_linted_to_exec_platforms_and_checked_at_load() {
        let text = MINI.replace(
            "save_mode = \"exec\"",
            "save_mode = \"exec\"\nexec_shell = \"posix\"",
        );
        let mut c = Catalog::default();
        c.add_text("test", &text).unwrap();
        let problems = c.lint().join("\n");
        assert!(
            problems.contains("exec_shell: only exec platforms run their lines in a shell"),
            "{problems}"
        );
        let mut c = Catalog::default();
        c.add_text(
            "test",
            &MINI.replace(
                "save_mode = \"exec\"",
                "save_mode = \"exec\"\nexec_shell = \"bash\"",
            ),
        )
        .unwrap();
        assert!(
            c.lint().join("\n").contains("exec_shell \"bash\""),
            "{:?}",
            c.lint()
        );
        let builtin = Catalog::builtin().unwrap();
        for p in builtin.platforms().unwrap() {
            assert_eq!(
                p.exec_shell.is_some(),
                p.kind == Kind::Exec,
                "{}: every built-in exec platform runs on Linux behind sh -c",
                p.name
            );
        }
    }

    /// Lines typed ahead are told apart by their echoes: a CLI that does not echo cannot
    /// take them, and parsing keeps the flag.
    #[test]
    fn lint_refuses_type_ahead_without_echo() {
        let with = |extra: &str| {
            let text = MINI.replace(
                "save_mode = \"exec\"",
                &format!("save_mode = \"exec\"\n{extra}"),
            );
            let mut c = Catalog::default();
            c.add_text("test", &text).unwrap();
            let typed = c.get("mini").unwrap().type_ahead;
            (typed, c.lint().join("\n"))
        };
        let (typed, problems) = with("type_ahead = true\necho = false");
        assert!(typed);
        assert!(problems.contains("type_ahead needs"), "{problems}");
        let (typed, problems) = with("type_ahead = true");
        assert!(typed);
        assert!(!problems.contains("type_ahead"), "{problems}");
        assert!(!with("").0, "off unless declared");
    }

    /// What each vendor prints when a port is put in a VLAN it does not have (sim/STATUS.md,
    /// "Undefined VLANs, per vendor", names the sources) is a failure on that platform, as
    /// the session judges a line (trimmed): a refusal these missed would be a half-applied
    /// change reported as success. NVUE's lines carry no `Error:` and are caught whatever
    /// the exit status.
    #[test]
    fn undefined_vlan_refusals_are_failure_indicators() {
        let c = Catalog::builtin().unwrap();
        for (platform, line) in [
            ("juniper", "error: configuration check-out failed"),
            (
                "juniper",
                "error: commit failed: (statements constraint check failed)",
            ),
            ("huawei", "Error: The VLAN does not exist."),
            ("huawei_vrpv8", "Error: The VLAN does not exist."),
            ("hpe_comware", "VLAN 130 does not exist."),
            ("cumulus_nvue", "Invalid config [rev_id: 4]"),
            (
                "cumulus_nvue",
                "  Config invalid at interface.swp1.link.breakout: '4x10G' is not of type 'object'",
            ),
            ("cumulus_nvue", "Failure during apply. Ignore? [y/N] N"),
            ("cumulus_nvue", "apply_fail [rev_id: 5]"),
            ("dell_os10", "% Error: vlan130 does not exist."),
            ("aruba_aoscx", "VLAN 130 does not exist."),
            ("mellanox_mlnxos", "% VLAN 130 does not exist"),
            ("dell_powerconnect", "VLAN was not created by user"),
            ("pluribus", "vlan-port-add: vlan 130 not found"),
            ("sonic", "Error: Vlan130 does not exist"),
        ] {
            let p = c.get(platform).unwrap();
            let line = line.trim();
            assert!(
                p.failures.iter().any(|r| r.is_match(line)),
                "{platform}: {line:?} is not a failure"
            );
        }
        // The words IOS prints when it creates the VLAN itself are not a refusal.
        let ios = c.get("cisco_ios").unwrap();
        let created = "% Access VLAN does not exist. Creating vlan 130";
        assert!(!ios.failures.iter().any(|r| r.is_match(created)));
    }

    #[test]
    fn builtin_platforms_all_have_failure_indicators_and_samples() {
        let c = Catalog::builtin().unwrap();
        for p in c.platforms().unwrap() {
            if p.kind == Kind::Cli {
                assert!(!p.failures.is_empty(), "{}: no failure indicators", p.name);
                assert!(!p.samples.is_empty(), "{}: no sample prompts", p.name);
            }
        }
    }

    #[test]
    fn lint_catches_unreachable_modes_and_ambiguous_samples() {
        let text = MINI.replace("enter = [\"conf t\"]", "").replace(
            "config = [\"sw1(config)#\"]",
            "config = [\"sw1(config)#\", \"sw1#\"]",
        );
        let mut c = Catalog::default();
        c.add_text("test", &text).unwrap();
        let problems = c.lint().join("\n");
        assert!(problems.contains("\"sw1#\" does not match"), "{problems}");
    }

    #[test]
    fn prompts_match_only_at_the_end() {
        let p = Prompt::compile(r"^(?P<host>[\w.-]+)#", Syntax::Check).unwrap();
        assert_eq!(p.matches("foo\r\nleaf1# "), Some(Some("leaf1")));
        assert_eq!(p.matches("leaf1#\nmore output"), None);
        assert_eq!(p.matches("text leaf1#"), None);
    }

    #[test]
    fn pinned_prompts_know_where_a_dashed_host_ends() {
        let p = Prompt::compile(r"^\[[~*]?(?P<host>[\w.\-]+)-[^\]\n]+\]", Syntax::Check).unwrap();
        // Unpinned, the greedy host swallows part of the interface name.
        assert_eq!(p.matches("[leaf1-Eth-Trunk7]"), Some(Some("leaf1-Eth")));
        let pinned = p.pinned("leaf1").unwrap();
        let host = |r: &Pattern, t: &str| {
            r.captures(t)
                .and_then(|c| c.name("host").map(|m| m.as_str().to_string()))
        };
        assert_eq!(
            host(&pinned, "[leaf1-Eth-Trunk7]").as_deref(),
            Some("leaf1")
        );
        let dashed = p.pinned("sw-01").unwrap();
        assert_eq!(host(&dashed, "[~sw-01-GE1/0/5]").as_deref(), Some("sw-01"));
        assert!(dashed.captures("[sw-02-GE1/0/5]").is_none());
        // A host full of regex metacharacters is taken literally.
        let odd = Prompt::compile(r"^(?P<host>[^#\n]+)#", Syntax::Check)
            .unwrap()
            .pinned("a.b(c)")
            .unwrap();
        assert!(odd.is_match("a.b(c)#"));
        assert!(!odd.is_match("aXb(c)#"));
        assert!(Prompt::compile(r"^\w+#", Syntax::Check)
            .unwrap()
            .pinned("x")
            .is_none());
    }

    #[test]
    fn paths_follow_enter_and_exit_edges() {
        let mut c = Catalog::default();
        c.add_text("test", MINI).unwrap();
        let p = c.get("mini").unwrap();
        assert_eq!(
            p.path("exec", "config").unwrap(),
            vec![("conf t".to_string(), "config".to_string(), false)]
        );
        assert_eq!(
            p.path("config", "exec").unwrap(),
            vec![("end".to_string(), "exec".to_string(), false)]
        );
        assert!(p.path("exec", "exec").unwrap().is_empty());
        assert!(p.path("exec", "nowhere").is_none());
    }

    #[test]
    fn bad_regex_is_a_catalog_error_when_used_and_in_the_lint() {
        let mut c = Catalog::default();
        // Parsing succeeds: patterns are compiled on first use only.
        c.add_text("test", &MINI.replace(r"'Eth\d+'", "'Eth(['"))
            .unwrap();
        let e = c.get("mini").unwrap_err();
        assert!(
            e.to_string().contains("platforms.mini: port_pattern"),
            "{e}"
        );
        let problems = c.lint().join("\n");
        assert!(problems.contains("port_pattern"), "{problems}");
    }

    #[test]
    fn toml_mistakes_are_caught_when_loading() {
        let mut c = Catalog::default();
        let e = c
            .add_text(
                "test",
                &MINI.replace("kind = \"cli\"", "kind = \"cli\"\nkinds = 1"),
            )
            .unwrap_err();
        assert!(e.to_string().contains("kinds"), "{e}");
    }

    /// The regression guard of issue 18: loading the built-in catalog and using its
    /// platforms parses no catalog text at run time (it was a 78 KB TOML parse per run).
    #[test]
    fn the_builtin_catalog_is_never_parsed_at_run_time() {
        let before = PARSED.with(|n| n.get());
        let c = Catalog::load(Path::new("/nonexistent/plugins.d")).unwrap();
        c.get("cisco_ios").unwrap();
        c.get("netmiko_juniper").unwrap();
        assert!(c.lint().is_empty());
        let _ = c.table().unwrap();
        assert_eq!(PARSED.with(|n| n.get()), before, "catalog text was parsed");
        // The counter does count: a plugins.d text is parsed.
        let mut c = Catalog::builtin().unwrap();
        c.add_text("test", MINI).unwrap();
        assert_eq!(PARSED.with(|n| n.get()), before + 1);
    }

    /// What `build.rs` baked is what `plugins.toml` says, platform by platform, field by
    /// field.
    #[test]
    fn the_baked_catalog_is_plugins_toml() {
        let parsed: RawCatalog = toml::from_str(include_str!("../../plugins.toml")).unwrap();
        let names: Vec<&str> = builtin::PLATFORMS.iter().map(|(n, _, _)| *n).collect();
        let want: Vec<&str> = parsed.platforms.keys().map(String::as_str).collect();
        assert_eq!(names, want);
        for (name, aliases, build) in builtin::PLATFORMS {
            let raw = &parsed.platforms[*name];
            assert_eq!(format!("{:?}", build()), format!("{raw:?}"), "{name}");
            assert_eq!(*aliases, raw.aliases.as_slice(), "{name}");
        }
    }

    /// Issue 18: a platform's patterns are built on first match, so resolving a port and
    /// planning (what a dry run and a spooling waiter do) builds no prompt, question or
    /// failure automaton.
    #[test]
    fn canonical_names_build_no_prompt_or_failure_pattern() {
        let c = Catalog::builtin().unwrap();
        let p = c.get("cisco_ios").unwrap();
        assert_eq!(p.canonical_port("gi1/0/5").unwrap(), "GigabitEthernet1/0/5");
        let built: Vec<String> = p
            .patterns()
            .into_iter()
            .filter(|(_, r)| r.is_built())
            .map(|(w, _)| w)
            .collect();
        assert!(
            built.iter().all(|w| w.starts_with("port_")),
            "built beyond the port names: {built:?}"
        );
        assert!(!p.failures.is_empty() && !p.modes.is_empty());
        // The lint builds every one.
        assert!(c.lint().is_empty());
        assert!(p.patterns().iter().all(|(_, r)| r.is_built()));
    }

    /// The idempotent patterns a session matches after each line are the platform's own,
    /// so an automaton built after one line is not built again after the next.
    #[test]
    fn idempotent_patterns_are_built_once_for_the_platform() {
        let c = Catalog::builtin().unwrap();
        let p = c.get("sonic").unwrap();
        let line = "config vlan del 130";
        let after = p.idempotent_for(line);
        assert!(!after.is_empty());
        assert!(after.iter().all(|r| !r.is_built()));
        for r in &after {
            r.is_match("Error: Vlan130 does not exist");
        }
        assert!(
            p.idempotent_for(line).iter().all(|r| r.is_built()),
            "built again for every line"
        );
    }

    /// A plugins.d platform's patterns are syntax-checked when it is compiled; the
    /// built-in catalog's are not (the lint above builds every one of them).
    #[test]
    fn only_plugin_patterns_are_syntax_checked_when_compiled() {
        let mut c = Catalog::builtin().unwrap();
        c.add_text(
            "test",
            &MINI.replace(
                "network_types = [\"vlan\"]",
                "network_types = [\"vlan\"]\nfailures = ['^(unclosed']",
            ),
        )
        .unwrap();
        let e = c.get("mini").unwrap_err().to_string();
        assert!(e.contains("unclosed"), "{e}");
        assert!(pattern::compile("^(unclosed", Syntax::Trusted).is_ok());
        assert!(pattern::compile("^(unclosed", Syntax::Check).is_err());
        let raw = (builtin::PLATFORMS
            .iter()
            .find(|b| b.0 == "cisco_ios")
            .unwrap()
            .2)();
        assert!(schema::compile("cisco_ios", &raw, Syntax::Trusted).is_ok());
    }

    #[test]
    fn a_pattern_that_cannot_be_built_is_a_lint_error() {
        let mut c = Catalog::builtin().unwrap();
        c.add_text(
            "test",
            &MINI.replace(
                "network_types = [\"vlan\"]",
                "network_types = [\"vlan\"]\nfailures = ['(?:[^a]{100}){1000}x']",
            ),
        )
        .unwrap();
        let problems = c.lint();
        assert!(
            problems
                .iter()
                .any(|m| m.starts_with("mini: failures[0]") && m.contains("size limit")),
            "{problems:?}"
        );
    }

    #[test]
    fn loading_compiles_nothing_until_a_platform_is_used() {
        let c = Catalog::builtin().unwrap();
        assert!(c.entries.values().all(|e| e.compiled.get().is_none()));
        c.get("cisco_ios").unwrap();
        let compiled: Vec<&str> = c
            .entries
            .iter()
            .filter(|(_, e)| e.compiled.get().is_some())
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(compiled, vec!["cisco_ios"]);
    }
}
