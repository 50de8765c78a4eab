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

use regex::Regex;
use serde::Deserialize;

/// The catalog compiled into the binary.
pub const BUILTIN: &str = include_str!("../plugins.toml");

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

/// How the platform is driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// An interactive shell, judged by prompts and failure indicators.
    Cli,
    /// One command per exec channel, judged by exit status (and failure indicators).
    Exec,
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
    ("enable", &["port"]),
    ("disable", &["port"]),
    ("description", &["port", "description"]),
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
    "enable",
    "disable",
    "description",
    "mtu",
    "lag_member_add",
    "lag_member_remove",
];

/// Actions every platform must either template or declare unsupported.
const REQUIRED_ACTIONS: &[&str] = &[
    "network_add",
    "network_delete",
    "access_set",
    "access_remove",
    "trunk_mode",
    "native_set",
    "native_remove",
    "allowed_set",
    "allowed_add",
    "allowed_remove",
    "port_reset",
    "enable",
    "disable",
    "description",
    "mtu",
    "lag_create",
    "lag_delete",
    "lag_member_add",
    "lag_member_remove",
    "plug",
    "unplug",
];

/// The supported-platforms table's columns: a heading and the actions it needs.
const TABLE_COLUMNS: &[(&str, &[&str])] = &[
    ("access", &["access_set", "access_remove"]),
    (
        "trunk + native",
        &["trunk_mode", "native_set", "allowed_set"],
    ),
    ("tagged add/remove", &["allowed_add", "allowed_remove"]),
    (
        "hybrid",
        &["hybrid_mode", "hybrid_native_set", "hybrid_allowed_set"],
    ),
    ("reset", &["port_reset"]),
    ("networks", &["network_add", "network_delete"]),
    ("enable/disable", &["enable", "disable"]),
    ("description", &["description"]),
    ("MTU", &["mtu"]),
    (
        "LAG",
        &[
            "lag_create",
            "lag_delete",
            "lag_member_add",
            "lag_member_remove",
        ],
    ),
    ("OVS plug", &["plug", "unplug"]),
    // Not an action: whether ports can be read back (`--verify`, `verify_port`).
    ("verify", &[]),
];

/// One template line split into literal text and `{variable}` slots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    source: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Var(String),
}

impl Template {
    fn parse(text: &str) -> Result<Template, String> {
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Text(rest[..open].to_string()));
            }
            let after = &rest[open + 1..];
            let close = after
                .find('}')
                .ok_or_else(|| format!("unclosed '{{' in {text:?}"))?;
            let name = &after[..close];
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
                return Err(format!("bad variable {{{name}}} in {text:?}"));
            }
            parts.push(Part::Var(name.to_string()));
            rest = &after[close + 1..];
        }
        if rest.contains('}') {
            return Err(format!("stray '}}' in {text:?}"));
        }
        if !rest.is_empty() {
            parts.push(Part::Text(rest.to_string()));
        }
        Ok(Template {
            source: text.to_string(),
            parts,
        })
    }

    /// The template split on whitespace, each token its own template: how exec platforms
    /// build an argument vector in which a value can never add an argument.
    pub fn source_tokens(&self) -> Vec<Template> {
        self.source
            .split_whitespace()
            .filter_map(|t| Template::parse(t).ok())
            .collect()
    }

    /// The variables this template uses.
    pub fn vars(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var(v) => Some(v.as_str()),
            Part::Text(_) => None,
        })
    }

    /// Renders with `lookup`; a variable it does not know yields `Err(name)`.
    pub fn render(&self, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                Part::Text(t) => out.push_str(t),
                Part::Var(v) => out.push_str(&lookup(v).ok_or_else(|| v.clone())?),
            }
        }
        Ok(out)
    }
}

/// A prompt pattern, matched at the very end of the received output.
#[derive(Debug, Clone)]
pub struct Prompt {
    /// The pattern as written in the catalog.
    pub source: String,
    /// The compiled end-anchored form.
    pub regex: Regex,
}

impl Prompt {
    fn compile(source: &str) -> Result<Prompt, String> {
        // Multi-line so `^` anchors a line start; the match must reach the end of the
        // buffer (trailing blanks allowed) so a prompt-like line in output never counts.
        let anchored = format!(r"(?m)(?:{source})[ \t]*\z");
        let regex = Regex::new(&anchored).map_err(|e| format!("prompt {source:?}: {e}"))?;
        Ok(Prompt {
            source: source.to_string(),
            regex,
        })
    }

    /// This prompt with its `host` group replaced by the literal `host` pinned at login, or
    /// `None` when the pattern has no `host` group. A pattern like `[\w.-]+-[^\]]+` cannot
    /// tell where a dashed host name ends (`[leaf-1-Eth-Trunk7]`); the literal can.
    pub fn pinned(&self, host: &str) -> Option<Regex> {
        let start = self.source.find("(?P<host>")?;
        let end = group_end(&self.source, start)?;
        let source = format!(
            "{}(?P<host>{}){}",
            &self.source[..start],
            regex::escape(host),
            &self.source[end + 1..]
        );
        Prompt::compile(&source).ok().map(|p| p.regex)
    }

    /// Whether the tail of `text` is this prompt; returns the `host` capture if any.
    pub fn matches<'t>(&self, text: &'t str) -> Option<Option<&'t str>> {
        self.regex
            .captures(text)
            .map(|c| c.name("host").map(|m| m.as_str()))
    }
}

/// The index of the `)` closing the group that opens at `start` in a regex source,
/// skipping escapes and character classes.
fn group_end(source: &str, start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut class = false;
    let mut chars = source[start..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '[' if !class => class = true,
            ']' if class => class = false,
            '(' if !class => depth += 1,
            ')' if !class => {
                depth -= 1;
                if depth == 0 {
                    return Some(start + i);
                }
            }
            _ => {}
        }
    }
    None
}

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
    /// Port / interface names this platform accepts.
    pub port_pattern: Regex,
    /// How the LAG interface is named (`Port-channel{lag_id}`).
    pub lag_interface: Option<Template>,
    /// Recognises a LAG interface name and captures its number.
    pub lag_pattern: Option<Regex>,
    /// LAG aggregation mode keywords (`lacp` → `active`, `static` → `on`).
    pub lag_modes: BTreeMap<String, String>,
    /// The device echoes each line (a prompt before the echo is stale).
    pub echo: bool,
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
    pub failures: Vec<Regex>,
    /// Output lines that mean "try again later" (config database locked).
    pub temporary_failures: Vec<Regex>,
    /// Lines sent right after login (paging, width).
    pub on_open: Vec<String>,
    /// Lines that apply the change (Junos commit, NVUE apply); always run.
    pub commit: Vec<String>,
    /// Lines that discard a failed change.
    pub abort: Vec<String>,
    /// Lines that persist the configuration (only when `save_config`).
    pub save: Vec<String>,
    /// Lines sent before closing.
    pub close: Vec<String>,
    /// VLAN list style.
    pub vlan_list: VlanListStyle,
    /// Action → lines.
    pub templates: BTreeMap<String, Vec<Template>>,
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
    pub idempotent: Vec<Regex>,
    /// Remarks for people, shown in the supported-platforms table.
    pub notes: Vec<String>,
    /// `{noun}` for a physical port (`port`) and for a LAG interface (`lag`), on platforms
    /// whose commands name the object kind (NCLU `net add interface X` / `net add bond X`).
    pub nouns: BTreeMap<String, String>,
    /// How a port's live configuration is read back (`--verify`, `verify_port`), or why it
    /// cannot be.
    pub verify: Verify,
}

/// The parsers `[platforms.X.verify] parser` may name: one per family of show output
/// (`src/verify/`). `ovsdb` is the `ovs` platform's own OVSDB read (`src/ovs.rs`).
pub const VERIFY_PARSERS: &[&str] = &[
    "ios",
    "junos",
    "vrp",
    "nvue",
    "sonic",
    "srl",
    "ovs_vsctl",
    "ovsdb",
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
        Err(match self.unsupported.get(action) {
            Some(why) => format!("{action} is not supported on {}: {why}", self.name),
            None => format!("{action} is not supported on {}", self.name),
        })
    }

    /// Whether the platform has a template for `action`.
    pub fn supports(&self, action: &str) -> bool {
        self.templates.contains_key(action)
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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCatalog {
    #[serde(default)]
    platforms: BTreeMap<String, RawPlatform>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlatform {
    description: String,
    #[serde(default)]
    aliases: Vec<String>,
    kind: Kind,
    network_types: Vec<String>,
    port_pattern: String,
    lag_interface: Option<String>,
    lag_pattern: Option<String>,
    #[serde(default)]
    lag_modes: BTreeMap<String, String>,
    echo: Option<bool>,
    #[serde(default)]
    modes: Vec<RawMode>,
    login_mode: Option<String>,
    config_mode: Option<String>,
    save_mode: Option<String>,
    secret_prompt: Option<String>,
    #[serde(default)]
    responses: Vec<RawResponse>,
    #[serde(default)]
    failures: Vec<String>,
    #[serde(default)]
    temporary_failures: Vec<String>,
    #[serde(default)]
    on_open: Vec<String>,
    #[serde(default)]
    commit: Vec<String>,
    #[serde(default)]
    abort: Vec<String>,
    #[serde(default)]
    save: Vec<String>,
    #[serde(default)]
    close: Vec<String>,
    #[serde(default)]
    vlan_list: VlanListStyle,
    #[serde(default)]
    templates: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    unsupported: BTreeMap<String, String>,
    #[serde(default)]
    samples: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    own_context: BTreeSet<String>,
    native_in_allowed: Option<bool>,
    #[serde(default)]
    allowed_set_adds: bool,
    #[serde(default)]
    native_is_access: bool,
    #[serde(default)]
    idempotent: Vec<String>,
    #[serde(default)]
    nouns: BTreeMap<String, String>,
    #[serde(default)]
    notes: Vec<String>,
    verify: Option<RawVerify>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVerify {
    #[serde(default)]
    show: Vec<String>,
    parser: Option<String>,
    mode: Option<String>,
    admin_default: Option<String>,
    trunk_default: Option<String>,
    #[serde(default)]
    modes: BTreeMap<String, String>,
    mode_default: Option<String>,
    #[serde(default)]
    unread: BTreeSet<String>,
    unsupported: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMode {
    name: String,
    prompt: String,
    parent: Option<String>,
    #[serde(default)]
    enter: Vec<String>,
    #[serde(default)]
    exit: Vec<String>,
    #[serde(default)]
    secret: bool,
    #[serde(default)]
    config: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawResponse {
    prompt: String,
    #[serde(default)]
    answer: String,
    #[serde(default = "yes")]
    newline: bool,
}

fn yes() -> bool {
    true
}

/// One platform as parsed; its patterns are compiled on first use.
#[derive(Debug)]
struct Entry {
    /// Which catalog it came from (`built-in` or a path), for messages.
    source_name: String,
    raw: RawPlatform,
    compiled: OnceLock<Result<Platform, String>>,
}

/// All platforms known to this run.
///
/// Every catalog file is parsed when loaded (so a TOML mistake anywhere is caught at once),
/// but a platform's regexes are compiled only when it is first used: one run needs one
/// platform, and compiling every platform's Unicode-aware patterns would cost more than the
/// rest of a run. [`Catalog::lint`] compiles everything.
#[derive(Debug, Default)]
pub struct Catalog {
    entries: BTreeMap<String, Entry>,
}

impl Catalog {
    /// The built-in catalog alone.
    pub fn builtin() -> Result<Catalog, CatalogError> {
        let mut c = Catalog::default();
        c.add_text("built-in", BUILTIN)?;
        Ok(c)
    }

    /// The built-in catalog plus every `*.toml` in `dir` (sorted; a later platform of the
    /// same name replaces an earlier one). A missing directory is not an error.
    pub fn load(dir: &Path) -> Result<Catalog, CatalogError> {
        let mut c = Catalog::builtin()?;
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
            crate::config::check_config_mode(&path).map_err(|e| CatalogError::Parse {
                source_name: path.display().to_string(),
                message: e.to_string(),
            })?;
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
        let raw: RawCatalog = toml::from_str(text).map_err(|e| CatalogError::Parse {
            source_name: source_name.to_string(),
            message: e.to_string().trim_end().to_string(),
        })?;
        for (name, raw) in raw.platforms {
            self.entries.insert(
                name,
                Entry {
                    source_name: source_name.to_string(),
                    raw,
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
            .find(|(_, e)| e.raw.aliases.iter().any(|a| a == name))
        {
            return Some(k);
        }
        name.strip_prefix("netmiko_").and_then(|n| self.lookup(n))
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
            .get_or_init(|| compile(key, &entry.raw))
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

    /// The supported-platforms table (Markdown): operations × platforms, then each
    /// platform's declared limits. Generated from the catalog so the documentation cannot
    /// drift (`mercury check --catalog --table`; `docs/platforms.md` embeds it and a test
    /// keeps it current).
    pub fn table(&self) -> Result<String, CatalogError> {
        let platforms = self.platforms()?;
        let mut out = String::from("| platform | NGS name (alias) | kind |");
        for (name, _) in TABLE_COLUMNS {
            out.push_str(&format!(" {name} |"));
        }
        out.push_str("\n|---|---|---|");
        out.push_str(&"---|".repeat(TABLE_COLUMNS.len()));
        out.push('\n');
        for p in &platforms {
            let kind = match p.kind {
                Kind::Cli => "cli",
                Kind::Exec => "exec",
            };
            out.push_str(&format!("| `{}` | `netmiko_{}` | {kind} |", p.name, p.name));
            for (heading, actions) in TABLE_COLUMNS {
                if *heading == "verify" {
                    out.push_str(match p.verify {
                        Verify::Show(_) => " yes |",
                        Verify::Unsupported(_) | Verify::Undeclared => " no |",
                    });
                    continue;
                }
                let n = actions.iter().filter(|a| p.supports(a)).count();
                let by_vlan = *heading == "reset"
                    && p.supports("native_remove")
                    && p.supports("allowed_remove");
                out.push_str(if n == actions.len() {
                    " yes |"
                } else if n == 0 && by_vlan {
                    " named VLANs |"
                } else if n > 0 {
                    " partial |"
                } else {
                    " no |"
                });
            }
            out.push('\n');
        }
        out.push_str("\nLimits and notes, from the catalog:\n\n");
        for p in &platforms {
            let mut notes: Vec<String> = Vec::new();
            let names: Vec<String> = p
                .aliases
                .iter()
                .filter(|a| !a.starts_with("netmiko_"))
                .map(|a| format!("`{a}`"))
                .collect();
            if !names.is_empty() {
                notes.push(format!("also named {}", names.join(", ")));
            }
            notes.extend(p.notes.iter().cloned());
            if !p.commit.is_empty() {
                notes.push(format!(
                    "changes are applied with `{}` on every request, saved or not",
                    p.commit.join("; ")
                ));
            }
            if p.allowed_set_adds {
                notes.push(
                    "a declared tagged list is added to the port's tagged VLANs (no replace form)"
                        .into(),
                );
            }
            if !p.native_in_allowed {
                notes.push("the native VLAN is untagged only, never also tagged".into());
            }
            if p.native_is_access {
                notes.push("access and native VLAN are one setting: adding a tagged VLAN leaves it as it is".into());
            }
            let mut reasons: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
            for (action, why) in &p.unsupported {
                if matches!(action.as_str(), "plug" | "unplug") {
                    continue;
                }
                reasons
                    .entry(why.as_str())
                    .or_default()
                    .push(action.as_str());
            }
            for (why, actions) in reasons {
                notes.push(format!("{}: {why}", actions.join(", ")));
            }
            match &p.verify {
                Verify::Unsupported(why) => notes.push(format!("verify: {why}")),
                Verify::Show(s) if !s.unread.is_empty() => notes.push(format!(
                    "verify does not read {}",
                    s.unread.iter().cloned().collect::<Vec<_>>().join(", ")
                )),
                Verify::Show(_) | Verify::Undeclared => {}
            }
            if !notes.is_empty() {
                out.push_str(&format!("- `{}`: {}.\n", p.name, notes.join("; ")));
            }
        }
        Ok(out)
    }

    /// Compiles and lints every platform; an empty list means the catalog is sound.
    pub fn lint(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let mut names: BTreeMap<&str, &str> = BTreeMap::new();
        for (key, entry) in &self.entries {
            for a in std::iter::once(key).chain(&entry.raw.aliases) {
                if let Some(other) = names.insert(a, key) {
                    if other != key {
                        problems.push(format!("{key}: name or alias {a:?} also names {other}"));
                    }
                }
            }
            match self.get(key) {
                Ok(p) => {
                    problems.extend(lint_platform(p).into_iter().map(|m| format!("{key}: {m}")))
                }
                Err(e) => problems.push(e.to_string()),
            }
        }
        problems
    }
}

fn compile(name: &str, r: &RawPlatform) -> Result<Platform, String> {
    let regex = |what: &str, s: &str| Regex::new(s).map_err(|e| format!("{what} {s:?}: {e}"));
    let mut modes = Vec::new();
    for m in &r.modes {
        modes.push(Mode {
            prompt: Prompt::compile(&m.prompt)?,
            name: m.name.clone(),
            parent: m.parent.clone(),
            enter: m.enter.clone(),
            exit: m.exit.clone(),
            secret: m.secret,
            config: m.config,
        });
    }
    let mut templates = BTreeMap::new();
    for (action, lines) in &r.templates {
        let t: Vec<Template> = lines
            .iter()
            .map(|l| Template::parse(l))
            .collect::<Result<_, _>>()
            .map_err(|e| format!("templates.{action}: {e}"))?;
        templates.insert(action.clone(), t);
    }
    let first_mode = modes.first().map(|m| m.name.clone()).unwrap_or_default();
    let login_mode = r.login_mode.clone().unwrap_or_else(|| first_mode.clone());
    let config_mode = r.config_mode.clone().unwrap_or_else(|| login_mode.clone());
    let save_mode = r.save_mode.clone().unwrap_or_else(|| login_mode.clone());
    Ok(Platform {
        name: name.to_string(),
        description: r.description.clone(),
        aliases: r.aliases.clone(),
        kind: r.kind,
        network_types: r.network_types.clone(),
        port_pattern: regex("port_pattern", &format!("^(?:{})$", r.port_pattern))?,
        lag_interface: r
            .lag_interface
            .as_deref()
            .map(Template::parse)
            .transpose()
            .map_err(|e| format!("lag_interface: {e}"))?,
        lag_pattern: r
            .lag_pattern
            .as_deref()
            .map(|s| regex("lag_pattern", &format!("^(?:{s})$")))
            .transpose()?,
        lag_modes: r.lag_modes.clone(),
        echo: r.echo.unwrap_or(true),
        modes,
        login_mode,
        config_mode,
        save_mode,
        secret_prompt: r
            .secret_prompt
            .as_deref()
            .map(Prompt::compile)
            .transpose()?,
        responses: r
            .responses
            .iter()
            .map(|x| {
                Ok(Response {
                    prompt: Prompt::compile(&x.prompt)?,
                    answer: x.answer.clone(),
                    newline: x.newline,
                })
            })
            .collect::<Result<_, String>>()?,
        failures: r
            .failures
            .iter()
            .map(|s| regex("failure", s))
            .collect::<Result<_, _>>()?,
        temporary_failures: r
            .temporary_failures
            .iter()
            .map(|s| regex("temporary_failure", s))
            .collect::<Result<_, _>>()?,
        on_open: r.on_open.clone(),
        commit: r.commit.clone(),
        abort: r.abort.clone(),
        save: r.save.clone(),
        close: r.close.clone(),
        vlan_list: r.vlan_list.clone(),
        templates,
        unsupported: r.unsupported.clone(),
        samples: r.samples.clone(),
        own_context: r.own_context.clone(),
        native_in_allowed: r.native_in_allowed.unwrap_or(true),
        allowed_set_adds: r.allowed_set_adds,
        native_is_access: r.native_is_access,
        idempotent: r
            .idempotent
            .iter()
            .map(|s| regex("idempotent", s))
            .collect::<Result<_, _>>()?,
        nouns: r.nouns.clone(),
        notes: r.notes.clone(),
        verify: compile_verify(r.verify.as_ref())?,
    })
}

fn compile_verify(r: Option<&RawVerify>) -> Result<Verify, String> {
    let Some(r) = r else {
        return Ok(Verify::Undeclared);
    };
    if let Some(why) = &r.unsupported {
        return Ok(Verify::Unsupported(why.clone()));
    }
    let show = r
        .show
        .iter()
        .map(|l| Template::parse(l))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("verify.show: {e}"))?;
    let flag =
        |what: &str, v: &Option<String>, yes: &str, no: &str, default: bool| match v.as_deref() {
            None => Ok(default),
            Some(x) if x == yes => Ok(true),
            Some(x) if x == no => Ok(false),
            Some(x) => Err(format!(
                "verify.{what}: {x:?} is neither {yes:?} nor {no:?}"
            )),
        };
    Ok(Verify::Show(VerifySpec {
        show,
        parser: r.parser.clone().unwrap_or_default(),
        mode: r.mode.clone(),
        admin_default_up: flag("admin_default", &r.admin_default, "up", "down", true)?,
        trunk_default_all: flag("trunk_default", &r.trunk_default, "all", "none", false)?,
        modes: r.modes.clone(),
        mode_default: r.mode_default.clone(),
        unread: r.unread.clone(),
    }))
}

fn lint_platform(p: &Platform) -> Vec<String> {
    let mut out = Vec::new();
    // Actions: known, variables allowed, required ones present or declared unsupported.
    for (action, lines) in &p.templates {
        let Some((_, allowed)) = ACTIONS.iter().find(|(a, _)| a == action) else {
            out.push(format!("templates.{action}: unknown action"));
            continue;
        };
        for t in lines {
            for v in t.vars() {
                let derived =
                    matches!(v, "port_type" | "port_number" | "noun") && allowed.contains(&"port");
                if !allowed.contains(&v) && !derived {
                    out.push(format!(
                        "templates.{action}: variable {{{v}}} is not available here (known: {})",
                        allowed.join(", ")
                    ));
                }
            }
        }
        if p.unsupported.contains_key(action) {
            out.push(format!("{action}: both templated and declared unsupported"));
        }
    }
    for action in p.unsupported.keys() {
        if !ACTIONS.iter().any(|(a, _)| a == action) {
            out.push(format!("unsupported.{action}: unknown action"));
        }
    }
    for action in REQUIRED_ACTIONS {
        if !p.templates.contains_key(*action) && !p.unsupported.contains_key(*action) {
            out.push(format!(
                "{action}: neither templated nor declared unsupported"
            ));
        }
    }
    if p.templates.contains_key("port_exit") && !p.templates.contains_key("port_enter") {
        out.push("port_exit without port_enter".into());
    }
    if p.templates.contains_key("lag_enter") && !p.templates.contains_key("port_enter") {
        out.push("lag_enter without port_enter".into());
    }
    for action in &p.own_context {
        if !PORT_ACTIONS.contains(&action.as_str()) {
            out.push(format!("own_context.{action}: not a port action"));
        }
    }
    if p.kind == Kind::Exec && p.templates.contains_key("port_enter") {
        out.push("exec platforms have no port context (port_enter)".into());
    }
    // Session lines are sent as written: a {variable} there would be typed literally.
    for (what, lines) in [
        ("on_open", &p.on_open),
        ("commit", &p.commit),
        ("abort", &p.abort),
        ("save", &p.save),
        ("close", &p.close),
    ] {
        for l in lines.iter() {
            if l.contains('{') || l.contains('}') {
                out.push(format!(
                    "{what}: {l:?} has a template variable; only templates are rendered"
                ));
            }
        }
    }
    for m in &p.modes {
        for l in m.enter.iter().chain(&m.exit) {
            if l.contains('{') || l.contains('}') {
                out.push(format!("mode {}: {l:?} has a template variable", m.name));
            }
        }
    }
    let lags = [
        "lag_create",
        "lag_delete",
        "lag_member_add",
        "lag_member_remove",
    ];
    if lags.iter().any(|a| p.supports(a)) && (p.lag_interface.is_none() || p.lag_pattern.is_none())
    {
        out.push("LAG templates need lag_interface and lag_pattern".into());
    }
    for keyword in ["lacp", "static"] {
        let uses_mode = p
            .templates
            .values()
            .flatten()
            .any(|t| t.vars().any(|v| v == "lacp_mode"));
        if uses_mode && !p.lag_modes.contains_key(keyword) {
            out.push(format!(
                "templates use {{lacp_mode}} but lag_modes has no {keyword:?}"
            ));
        }
    }
    let uses_noun = p
        .templates
        .values()
        .flatten()
        .any(|t| t.vars().any(|v| v == "noun"));
    if uses_noun && !(p.nouns.contains_key("port") && p.nouns.contains_key("lag")) {
        out.push("templates use {noun} but nouns lacks \"port\" or \"lag\"".into());
    }
    if p.network_types.is_empty() {
        out.push("network_types is empty".into());
    }
    out.extend(lint_verify(p));

    match p.kind {
        Kind::Exec => {
            if !p.modes.is_empty() {
                out.push("exec platforms have no modes".into());
            }
        }
        Kind::Cli => out.extend(lint_modes(p)),
    }
    out
}

/// Every platform either reads ports back (show templates and a known parser) or says why
/// it cannot (`verify.unsupported`): never silently "verified".
fn lint_verify(p: &Platform) -> Vec<String> {
    let mut out = Vec::new();
    let spec = match &p.verify {
        Verify::Undeclared => {
            out.push(
                "verify: neither show lines with a parser nor verify.unsupported with a reason"
                    .into(),
            );
            return out;
        }
        Verify::Unsupported(why) => {
            if why.trim().is_empty() {
                out.push("verify.unsupported: give the reason".into());
            }
            return out;
        }
        Verify::Show(s) => s,
    };
    if !VERIFY_PARSERS.contains(&spec.parser.as_str()) {
        out.push(format!(
            "verify.parser {:?} is not one of {}",
            spec.parser,
            VERIFY_PARSERS.join(", ")
        ));
    }
    // The ovs platform reads OVSDB itself; everyone else needs show lines.
    let ovsdb = spec.parser == "ovsdb";
    if ovsdb != (p.name == "ovs") {
        out.push("verify.parser ovsdb is the ovs platform's own OVSDB read".into());
    }
    if spec.show.is_empty() && !ovsdb {
        out.push("verify: no show lines (declare verify.unsupported with a reason instead)".into());
    }
    for t in &spec.show {
        for v in t.vars() {
            if !matches!(v, "port" | "port_type" | "port_number") {
                out.push(format!(
                    "verify.show: variable {{{v}}} is not available here (known: port, port_type, port_number)"
                ));
            }
        }
    }
    if let Some(m) = &spec.mode {
        match p.mode(m) {
            None => out.push(format!("verify.mode {m:?} is not a mode")),
            Some(mode) if mode.config => {
                out.push(format!("verify.mode {m:?} is a configuration mode"))
            }
            Some(_) => {}
        }
    }
    for (word, to) in &spec.modes {
        if !VERIFY_MODES.contains(&to.as_str()) {
            out.push(format!(
                "verify.modes.{word}: {to:?} is not one of {}",
                VERIFY_MODES.join(", ")
            ));
        }
    }
    if let Some(m) = spec.mode_default.as_deref() {
        if !VERIFY_MODES.contains(&m) {
            out.push(format!(
                "verify.mode_default {m:?} is not one of {}",
                VERIFY_MODES.join(", ")
            ));
        }
    }
    for f in &spec.unread {
        if !crate::verify::FIELDS.contains(&f.as_str()) {
            out.push(format!(
                "verify.unread: {f:?} is not a port field ({})",
                crate::verify::FIELDS.join(", ")
            ));
        }
    }
    out
}

fn lint_modes(p: &Platform) -> Vec<String> {
    let mut out = Vec::new();
    let mut names = BTreeSet::new();
    for m in &p.modes {
        if !names.insert(m.name.as_str()) {
            out.push(format!("mode {} defined twice", m.name));
        }
        if let Some(parent) = &m.parent {
            if p.mode(parent).is_none() {
                out.push(format!("mode {}: unknown parent {parent}", m.name));
            }
        }
        if m.parent.is_none() && (!m.enter.is_empty() || !m.exit.is_empty()) {
            out.push(format!("mode {}: enter/exit lines need a parent", m.name));
        }
    }
    for (what, mode) in [
        ("login_mode", &p.login_mode),
        ("config_mode", &p.config_mode),
        ("save_mode", &p.save_mode),
    ] {
        if p.mode(mode).is_none() {
            out.push(format!("{what} {mode:?} is not a mode"));
        }
    }
    if p.mode(&p.config_mode).is_some_and(|m| !m.config) {
        out.push(format!(
            "config_mode {} is not marked config = true",
            p.config_mode
        ));
    }
    // Every mode must be reachable from the login mode, and the login mode from every mode
    // (so a session can always get back to save and close).
    for m in &p.modes {
        if p.path(&p.login_mode, &m.name).is_none() && m.enter.is_empty() && m.config {
            // Submodes entered by template lines (config-if) need only a way out.
            if p.path(&m.name, &p.save_mode).is_none() {
                out.push(format!("mode {}: no way back to {}", m.name, p.save_mode));
            }
            continue;
        }
        if p.path(&p.login_mode, &m.name).is_none() {
            out.push(format!(
                "mode {} is not reachable from login mode {}",
                m.name, p.login_mode
            ));
        }
        if p.path(&m.name, &p.save_mode).is_none() {
            out.push(format!("mode {}: no way back to {}", m.name, p.save_mode));
        }
    }
    // Sample prompts: each matches its own mode and no other. As in a session, the host
    // name the sample shows is pinned before the other modes are tried.
    for (mode, samples) in &p.samples {
        let Some(own) = p.mode(mode) else {
            out.push(format!("samples.{mode}: not a mode"));
            continue;
        };
        for s in samples {
            let host = own.prompt.matches(s);
            if host.is_none() {
                out.push(format!(
                    "samples.{mode}: {s:?} does not match {:?}",
                    own.prompt.source
                ));
            }
            for other in p.modes.iter().filter(|o| o.name != *mode) {
                let pinned = host.flatten().and_then(|h| other.prompt.pinned(h));
                let hit = match &pinned {
                    Some(r) => r.is_match(s),
                    None => other.prompt.matches(s).is_some(),
                };
                if hit {
                    out.push(format!(
                        "samples.{mode}: {s:?} also matches mode {}",
                        other.name
                    ));
                }
            }
        }
    }
    for m in &p.modes {
        if !p.samples.contains_key(&m.name) {
            out.push(format!("mode {} has no sample prompts", m.name));
        }
    }
    out
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
        let p = Prompt::compile(r"^(?P<host>[\w.-]+)#").unwrap();
        assert_eq!(p.matches("foo\r\nleaf1# "), Some(Some("leaf1")));
        assert_eq!(p.matches("leaf1#\nmore output"), None);
        assert_eq!(p.matches("text leaf1#"), None);
    }

    #[test]
    fn pinned_prompts_know_where_a_dashed_host_ends() {
        let p = Prompt::compile(r"^\[[~*]?(?P<host>[\w.\-]+)-[^\]\n]+\]").unwrap();
        // Unpinned, the greedy host swallows part of the interface name.
        assert_eq!(p.matches("[leaf1-Eth-Trunk7]"), Some(Some("leaf1-Eth")));
        let pinned = p.pinned("leaf1").unwrap();
        let host = |r: &Regex, t: &str| {
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
        let odd = Prompt::compile(r"^(?P<host>[^#\n]+)#")
            .unwrap()
            .pinned("a.b(c)")
            .unwrap();
        assert!(odd.is_match("a.b(c)#"));
        assert!(!odd.is_match("aXb(c)#"));
        assert!(Prompt::compile(r"^\w+#").unwrap().pinned("x").is_none());
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
