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

mod ios;
mod junos;
mod nvue;
mod ovs_vsctl;
mod sonic;
mod srl;
mod vrp;

use std::collections::{BTreeMap, BTreeSet};

use serde::{Serialize, Serializer};
use serde_json::{json, Value};

use crate::catalog::{Platform, VerifySpec};
use crate::config::Device;
use crate::driver::Unsupported;
use crate::request::{Op, PortChange, PortMode, Request};

/// The port fields a parser reads (and `verify.unread` may name).
pub const FIELDS: &[&str] = &[
    "mode",
    "access_vlan",
    "native_vlan",
    "allowed_vlans",
    "admin_up",
    "description",
    "mtu",
    "lag",
];

/// Every VLAN (a trunk that carries all of them).
const ALL: std::ops::RangeInclusive<u16> = 1..=4094;

/// A port's effective layer-2 state, the same shape on every platform.
///
/// *Effective*: settings a mode ignores are not part of it (an access VLAN left on a trunk
/// port, a tagged list on an access port), except where the platform uses the access VLAN
/// as a trunk's native VLAN (`native_is_access`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PortState {
    /// `access`, `trunk`, `hybrid`, another word the device uses, or `null` (no L2 mode
    /// configured).
    pub mode: Option<String>,
    /// Untagged VLAN of an access port.
    pub access_vlan: Option<u16>,
    /// Untagged VLAN of a trunk / hybrid port.
    pub native_vlan: Option<u16>,
    /// Tagged VLANs of a trunk / hybrid port, as a compact list (`110,120-125`).
    #[serde(serialize_with = "ser_vlans")]
    pub allowed_vlans: BTreeSet<u16>,
    /// Administratively enabled.
    pub admin_up: Option<bool>,
    /// Description (`""`: none).
    pub description: Option<String>,
    /// Configured MTU (`null`: the platform default).
    pub mtu: Option<u32>,
    /// The LAG interface the port is a member of.
    pub lag: Option<String>,
    /// Fields this platform's output does not carry (left out of comparisons).
    #[serde(skip_serializing_if = "BTreeSet::is_empty")]
    pub unread: BTreeSet<&'static str>,
    /// The device has no such interface (a LAG interface before `update_lag` creates it).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub absent: bool,
}

fn ser_vlans<S: Serializer>(set: &BTreeSet<u16>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&vlan_list(set))
}

/// `1,3-5,7`.
pub fn vlan_list(set: &BTreeSet<u16>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut run: Option<(u16, u16)> = None;
    for &v in set {
        run = match run {
            Some((lo, hi)) if hi + 1 == v => Some((lo, v)),
            Some((lo, hi)) => {
                parts.push(range_text(lo, hi));
                Some((v, v))
            }
            None => Some((v, v)),
        };
    }
    if let Some((lo, hi)) = run {
        parts.push(range_text(lo, hi));
    }
    parts.join(",")
}

fn range_text(lo: u16, hi: u16) -> String {
    if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}-{hi}")
    }
}

/// What a parser found, before normalisation: the device's own words and settings,
/// whether or not the port's mode uses them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Raw {
    /// The mode word as the device writes it (`general`, `trunk`, ...).
    pub mode: Option<String>,
    pub access: Option<u16>,
    pub native: Option<u16>,
    /// `None`: no allowed-VLAN setting at all (the platform default applies).
    pub allowed: Option<BTreeSet<u16>>,
    pub admin_up: Option<bool>,
    pub description: Option<String>,
    pub mtu: Option<u32>,
    /// LAG as shown: a number (`channel-group 7`) or a name (`ae7`).
    pub lag: Option<String>,
    /// Fields this output did not carry.
    pub unread: BTreeSet<&'static str>,
}

/// Parses the outputs of the platform's show lines (in catalog order) for `port`. An error
/// means the output is not what the parser knows (exit 76).
pub fn parse(
    platform: &Platform,
    spec: &VerifySpec,
    port: &str,
    outputs: &[String],
) -> Result<PortState, String> {
    let raw = match spec.parser.as_str() {
        "ios" => ios::parse(port, outputs)?,
        "junos" => junos::parse(port, outputs)?,
        "vrp" => vrp::parse(port, outputs)?,
        "nvue" => nvue::parse(port, outputs)?,
        "sonic" => sonic::parse(port, outputs)?,
        "srl" => srl::parse(port, outputs)?,
        "ovs_vsctl" => ovs_vsctl::parse(port, outputs)?,
        other => return Err(format!("no parser {other:?} for show output")),
    };
    Ok(normalise(raw, platform, spec))
}

/// Applies the platform's semantics to what the parser found: mode words, defaults, which
/// settings the mode uses.
pub(crate) fn normalise(raw: Raw, platform: &Platform, spec: &VerifySpec) -> PortState {
    // A port with VLAN settings but no mode line is in the platform's default mode (which
    // NX-OS, EOS and OS10 do not print); one with nothing configured stays unconfigured.
    let configured = raw.access.is_some() || raw.native.is_some() || raw.allowed.is_some();
    let mode = raw
        .mode
        .or_else(|| spec.mode_default.clone().filter(|_| configured))
        .map(|m| spec.modes.get(&m).cloned().unwrap_or(m));
    let mut s = PortState {
        admin_up: raw.admin_up.or(Some(spec.admin_default_up)),
        description: raw.description.or(Some(String::new())),
        mtu: raw.mtu,
        lag: raw.lag.map(|l| lag_name(platform, &l)),
        ..PortState::default()
    };
    match mode.as_deref() {
        Some("trunk") | Some("hybrid") => {
            s.native_vlan = raw.native.or(if platform.native_is_access {
                raw.access
            } else {
                None
            });
            s.allowed_vlans = raw.allowed.unwrap_or_else(|| {
                if spec.trunk_default_all {
                    ALL.collect()
                } else {
                    BTreeSet::new()
                }
            });
        }
        Some("access") => s.access_vlan = raw.access,
        _ => {
            s.access_vlan = raw.access;
            s.native_vlan = raw.native;
            s.allowed_vlans = raw.allowed.unwrap_or_default();
        }
    }
    s.mode = mode;
    s.unread = raw.unread;
    for f in &spec.unread {
        if let Some(name) = FIELDS.iter().find(|x| **x == f.as_str()) {
            s.unread.insert(name);
        }
    }
    for f in s.unread.clone() {
        match f {
            "admin_up" => s.admin_up = None,
            "description" => s.description = None,
            "mtu" => s.mtu = None,
            "lag" => s.lag = None,
            _ => {}
        }
    }
    s
}

/// The platform's name for a LAG given as a number or a name (`7`, `ae7`, `PortChannel0007`
/// → `ae7` on Junos): the number the platform's `lag_pattern` finds, rendered with its
/// `lag_interface`, so a device's spelling and a request's compare equal.
pub fn lag_name(platform: &Platform, shown: &str) -> String {
    let id = if shown.bytes().all(|b| b.is_ascii_digit()) {
        Some(shown.to_string())
    } else {
        platform
            .lag_pattern
            .as_ref()
            .and_then(|p| p.captures(shown))
            .and_then(|c| c.get(1))
            .map(|m| m.as_str().to_string())
    };
    let Some(id) = id.map(|i| {
        let t = i.trim_start_matches('0');
        if t.is_empty() {
            "0".to_string()
        } else {
            t.to_string()
        }
    }) else {
        return shown.to_string();
    };
    platform
        .lag_interface
        .as_ref()
        .and_then(|t| t.render(&|v| (v == "lag_id").then(|| id.clone())).ok())
        .unwrap_or(id)
}

/// The mode a port must (or must not) be in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModeRule {
    /// Exactly this mode.
    Is(&'static str),
    /// Not carrying tagged VLANs (neither trunk nor hybrid): a reset port.
    Untagged,
}

/// What a request implies about one port's state afterwards. Only what the request
/// determines is set: attaching a tagged VLAN says nothing about the native VLAN.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expect {
    /// Mode.
    pub mode: Option<ModeRule>,
    /// Access VLAN (access ports).
    pub access_vlan: Option<u16>,
    /// Native VLAN (trunk / hybrid ports).
    pub native_vlan: Option<u16>,
    /// VLANs that must not be untagged on the port (access nor native).
    pub untagged_not: BTreeSet<u16>,
    /// The tagged list, exactly.
    pub allowed_exactly: Option<BTreeSet<u16>>,
    /// VLANs that must be tagged.
    pub allowed_has: BTreeSet<u16>,
    /// VLANs that must not be tagged.
    pub allowed_lacks: BTreeSet<u16>,
    /// Admin state.
    pub admin_up: Option<bool>,
    /// Description.
    pub description: Option<String>,
    /// MTU.
    pub mtu: Option<u32>,
    /// LAG membership (`Some(None)`: in no LAG).
    pub lag: Option<Option<String>>,
}

/// One port to read back, and what the request expects of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// The port (or LAG interface) name as the request gave it.
    pub port: String,
    /// The expectations (empty: just report the state).
    pub expect: Expect,
    /// The interface may not exist yet (the LAG interface `update_lag` creates): a show
    /// the device refuses, or whose output lacks it, reads as [`PortState::absent`].
    pub may_be_absent: bool,
}

impl Check {
    fn new(port: &str, expect: Expect) -> Check {
        Check {
            port: port.to_string(),
            expect,
            may_be_absent: false,
        }
    }
}

impl PortState {
    /// A port the device does not have.
    pub fn absent() -> PortState {
        PortState {
            absent: true,
            ..PortState::default()
        }
    }
}

/// One difference between expectation and state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Drift {
    /// The field.
    pub field: &'static str,
    /// What was expected, in words (`120`, `contains 131`, `not trunk or hybrid`).
    pub expected: String,
    /// What the device shows.
    pub actual: Value,
}

/// The comparison of one port's state with its expectations.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// Expectations the state does not meet.
    pub drift: Vec<Drift>,
    /// Expected fields the platform does not show (neither verified nor drift).
    pub unverified: Vec<&'static str>,
}

impl Verdict {
    /// Every expectation was read and met.
    pub fn holds(&self) -> bool {
        self.drift.is_empty() && self.unverified.is_empty()
    }

    /// `mode: expected trunk, device shows "access"; ...`
    pub fn describe(&self) -> String {
        self.drift
            .iter()
            .map(|d| {
                format!(
                    "{} expected {}, device shows {}",
                    d.field, d.expected, d.actual
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

impl Expect {
    /// Whether nothing is expected.
    pub fn is_empty(&self) -> bool {
        *self == Expect::default()
    }

    /// Compares `state` with the expectations.
    pub fn check(&self, s: &PortState) -> Verdict {
        if s.absent {
            return Verdict {
                drift: vec![Drift {
                    field: "port",
                    expected: "present".into(),
                    actual: json!("absent"),
                }],
                unverified: Vec::new(),
            };
        }
        let mut found: Vec<Drift> = Vec::new();
        let mut drift = |field: &'static str, expected: String, actual: Value| {
            found.push(Drift {
                field,
                expected,
                actual,
            })
        };
        let mut unverified: Vec<&'static str> = Vec::new();
        let mut read = |field: &'static str| {
            if s.unread.contains(field) {
                if !unverified.contains(&field) {
                    unverified.push(field);
                }
                false
            } else {
                true
            }
        };
        match &self.mode {
            Some(ModeRule::Is(m)) if read("mode") && s.mode.as_deref() != Some(*m) => {
                drift("mode", (*m).to_string(), json!(s.mode))
            }
            Some(ModeRule::Untagged)
                if read("mode") && matches!(s.mode.as_deref(), Some("trunk" | "hybrid")) =>
            {
                drift("mode", "neither trunk nor hybrid".into(), json!(s.mode))
            }
            _ => {}
        }
        if let Some(a) = self.access_vlan {
            if read("access_vlan") && s.access_vlan != Some(a) {
                drift("access_vlan", a.to_string(), json!(s.access_vlan));
            }
        }
        if let Some(n) = self.native_vlan {
            if read("native_vlan") && s.native_vlan != Some(n) {
                drift("native_vlan", n.to_string(), json!(s.native_vlan));
            }
        }
        for u in &self.untagged_not {
            if s.access_vlan == Some(*u) && read("access_vlan") {
                drift("access_vlan", format!("not {u}"), json!(s.access_vlan));
            }
            if s.native_vlan == Some(*u) && read("native_vlan") {
                drift("native_vlan", format!("not {u}"), json!(s.native_vlan));
            }
        }
        let tagged = || json!(vlan_list(&s.allowed_vlans));
        if let Some(want) = &self.allowed_exactly {
            if read("allowed_vlans") && *want != s.allowed_vlans {
                drift("allowed_vlans", vlan_list(want), tagged());
            }
        }
        let missing: BTreeSet<u16> = self
            .allowed_has
            .difference(&s.allowed_vlans)
            .copied()
            .collect();
        if !missing.is_empty() && read("allowed_vlans") {
            drift(
                "allowed_vlans",
                format!("contains {}", vlan_list(&self.allowed_has)),
                tagged(),
            );
        }
        let extra: BTreeSet<u16> = self
            .allowed_lacks
            .intersection(&s.allowed_vlans)
            .copied()
            .collect();
        if !extra.is_empty() && read("allowed_vlans") {
            drift(
                "allowed_vlans",
                format!("without {}", vlan_list(&self.allowed_lacks)),
                tagged(),
            );
        }
        if let Some(up) = self.admin_up {
            if read("admin_up") && s.admin_up != Some(up) {
                drift("admin_up", up.to_string(), json!(s.admin_up));
            }
        }
        if let Some(d) = &self.description {
            if read("description") && s.description.as_deref() != Some(d.as_str()) {
                drift("description", format!("{d:?}"), json!(s.description));
            }
        }
        if let Some(m) = self.mtu {
            if read("mtu") && s.mtu != Some(m) {
                drift("mtu", m.to_string(), json!(s.mtu));
            }
        }
        if let Some(l) = &self.lag {
            if read("lag") && !same_lag(s.lag.as_deref(), l.as_deref()) {
                drift(
                    "lag",
                    l.clone().unwrap_or_else(|| "none".into()),
                    json!(s.lag),
                );
            }
        }
        Verdict {
            drift: found,
            unverified,
        }
    }

    /// `state` as the request wants it: what `diff.after` shows for a port that drifted.
    pub fn desired(&self, s: &PortState) -> PortState {
        let mut d = s.clone();
        match &self.mode {
            Some(ModeRule::Is(m)) => d.mode = Some((*m).to_string()),
            Some(ModeRule::Untagged) if matches!(d.mode.as_deref(), Some("trunk" | "hybrid")) => {
                d.mode = Some("access".into())
            }
            _ => {}
        }
        match d.mode.as_deref() {
            Some("access") => {
                d.native_vlan = None;
                d.allowed_vlans.clear();
            }
            Some("trunk") | Some("hybrid") => d.access_vlan = None,
            _ => {}
        }
        if self.access_vlan.is_some() {
            d.access_vlan = self.access_vlan;
        }
        if self.native_vlan.is_some() {
            d.native_vlan = self.native_vlan;
        }
        for u in &self.untagged_not {
            if d.access_vlan == Some(*u) {
                d.access_vlan = None;
            }
            if d.native_vlan == Some(*u) {
                d.native_vlan = None;
            }
        }
        if let Some(a) = &self.allowed_exactly {
            d.allowed_vlans = a.clone();
        }
        d.allowed_vlans.extend(&self.allowed_has);
        d.allowed_vlans.retain(|v| !self.allowed_lacks.contains(v));
        if self.admin_up.is_some() {
            d.admin_up = self.admin_up;
        }
        if self.description.is_some() {
            d.description = self.description.clone();
        }
        if self.mtu.is_some() {
            d.mtu = self.mtu;
        }
        if let Some(l) = &self.lag {
            d.lag = l.clone();
        }
        d
    }
}

fn same_lag(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.eq_ignore_ascii_case(b),
        (None, None) => true,
        _ => false,
    }
}

fn ids(set: Option<&crate::vlan::VlanSet>) -> BTreeSet<u16> {
    set.map(|s| s.iter().map(|v| v.get()).collect())
        .unwrap_or_default()
}

/// The ports a request changes and what each must look like afterwards (`--verify`), or
/// what `verify_port` asks about. Operations that change no port cannot be verified (65).
pub fn checks(
    req: &Request,
    device: &Device,
    platform: &Platform,
) -> Result<Vec<Check>, Unsupported> {
    let mut out = Vec::new();
    match req.op {
        Op::AttachPort | Op::DetachPort | Op::UpdatePort | Op::ResetPort | Op::VerifyPort => {
            for c in &req.ports {
                out.push(Check::new(
                    &c.port,
                    expect_port(req.op, c, device, platform),
                ));
            }
        }
        Op::UpdateLag | Op::DeleteLag => {
            let lag = req
                .lag
                .as_ref()
                .ok_or_else(|| Unsupported("no lag".into()))?;
            let name = lag_name(platform, &lag.name);
            let member_of = (req.op == Op::UpdateLag).then(|| name.clone());
            for m in &lag.members {
                out.push(Check::new(
                    m,
                    Expect {
                        lag: Some(member_of.clone()),
                        ..Expect::default()
                    },
                ));
            }
            if let Some(l2) = lag.l2.as_ref().filter(|_| req.op == Op::UpdateLag) {
                out.push(Check {
                    may_be_absent: true,
                    ..Check::new(&name, expect_port(Op::UpdatePort, l2, device, platform))
                });
            }
        }
        Op::PlugPort | Op::UnplugPort => {
            // OVS representors are verified by `ovs` against its own OVSDB read.
            for c in &req.ports {
                out.push(Check::new(&c.port, Expect::default()));
            }
        }
        Op::AddNetwork
        | Op::DeleteNetwork
        | Op::GetAllowedNetworkTypes
        | Op::IsLinkValid
        | Op::IsPortSupported
        | Op::GetSwitches => {
            return Err(Unsupported(format!(
                "--verify reads ports back; {} changes no port",
                req.op.name()
            )))
        }
    }
    Ok(out)
}

/// The tagged list a trunk declaration leaves on the port (the driver's rule: the native
/// VLAN is added where the platform tags it too, left out where it is untagged only).
fn trunk_list(c: &PortChange, platform: &Platform) -> Option<BTreeSet<u16>> {
    let mut allowed = ids(c.allowed_vlans.as_ref());
    if let Some(n) = c.native_vlan.map(|v| v.get()) {
        if platform.native_in_allowed {
            allowed.insert(n);
        } else {
            allowed.remove(&n);
        }
    }
    // No allowed_set is sent then (driver): the list is whatever it was.
    (!allowed.is_empty() || platform.native_in_allowed).then_some(allowed)
}

fn expect_port(op: Op, c: &PortChange, device: &Device, platform: &Platform) -> Expect {
    let mut e = Expect::default();
    let idle = c.default_vlan.or(device.default_vlan).map(|v| v.get());
    let shut = device.shut_unused_ports;
    let vlan = c.vlan.map(|v| v.get());
    let native = c.native_vlan.map(|v| v.get());
    match op {
        Op::AttachPort => {
            if c.mode == Some(PortMode::Trunk) {
                e.mode = Some(ModeRule::Is("trunk"));
                e.allowed_has.extend(vlan);
            } else {
                e.mode = Some(ModeRule::Is("access"));
                e.access_vlan = vlan;
            }
            if shut {
                e.admin_up = Some(true);
            }
        }
        Op::DetachPort => {
            if c.mode == Some(PortMode::Trunk) {
                e.allowed_lacks.extend(vlan);
            } else {
                if let Some(v) = vlan.filter(|v| Some(*v) != idle) {
                    e.untagged_not.insert(v);
                }
                if let Some(i) = idle {
                    e.mode = Some(ModeRule::Is("access"));
                    e.access_vlan = Some(i);
                }
                if shut {
                    e.admin_up = Some(false);
                }
            }
        }
        Op::UpdatePort | Op::VerifyPort => {
            let verifying = op == Op::VerifyPort;
            match c.mode {
                Some(PortMode::Access) => {
                    e.mode = Some(ModeRule::Is("access"));
                    e.access_vlan = native;
                }
                Some(PortMode::Trunk) => {
                    e.mode = Some(ModeRule::Is("trunk"));
                    e.native_vlan = native;
                    if let Some(list) = trunk_list(c, platform) {
                        // Where the platform can only add to a tagged list, the request
                        // guarantees its VLANs are there, not that others are gone.
                        if platform.allowed_set_adds && !verifying {
                            e.allowed_has = list;
                        } else {
                            e.allowed_exactly = Some(list);
                        }
                    }
                }
                Some(PortMode::Hybrid) => {
                    e.mode = Some(ModeRule::Is("hybrid"));
                    e.native_vlan = native;
                    let mut tagged = ids(c.allowed_vlans.as_ref());
                    if let Some(n) = native {
                        tagged.remove(&n);
                    }
                    if verifying {
                        e.allowed_exactly = Some(tagged);
                    } else {
                        e.allowed_has = tagged;
                    }
                }
                None => {}
            }
            e.description = c.description.clone();
            e.mtu = c.mtu;
            if shut && !verifying {
                e.admin_up = Some(true);
            }
        }
        Op::ResetPort => {
            e.allowed_lacks = ids(c.allowed_vlans.as_ref());
            e.untagged_not.extend(native.filter(|n| Some(*n) != idle));
            match idle {
                Some(i) => {
                    e.mode = Some(ModeRule::Is("access"));
                    e.access_vlan = Some(i);
                }
                // A platform that clears a port wholesale leaves no tagged VLANs; one that
                // removes named VLANs leaves the others.
                None if platform.supports("port_reset") => e.mode = Some(ModeRule::Untagged),
                None => {}
            }
            if shut {
                e.admin_up = Some(false);
            }
        }
        _ => {}
    }
    e
}

/// One port's read-back, for the result's `data.ports` and `diff`.
#[derive(Debug, Clone, Serialize)]
pub struct PortReport {
    /// The port.
    pub port: String,
    /// State read before the change (`--verify`) or now (`verify_port`).
    pub before: Option<PortState>,
    /// State read after the change (`--verify`); for `verify_port`, the state the
    /// expectations describe.
    pub after: Option<PortState>,
    /// The state changed (before ≠ after, on the fields read).
    pub changed: bool,
    /// Expectations not met (after the change, or now).
    pub drift: Vec<Drift>,
    /// Expected fields the platform does not show.
    pub unverified: Vec<&'static str>,
}

/// Ansible's `diff` list: one `before`/`after` pair per port, with headers.
pub fn diff(ports: &[PortReport]) -> Value {
    Value::Array(
        ports
            .iter()
            .map(|p| {
                json!({
                    "before_header": format!("{} (before)", p.port),
                    "after_header": format!("{} (after)", p.port),
                    "before": p.before,
                    "after": p.after,
                })
            })
            .collect(),
    )
}

/// Splits a line into words, keeping `"double quoted"` text as one word (quotes removed).
pub(crate) fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    for ch in line.chars() {
        match ch {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

/// Parses a VLAN list written with `seps` between items and `-` (or ` to `, as separate
/// words) for ranges; `all` is every VLAN.
pub(crate) fn parse_vlans(text: &str) -> Result<BTreeSet<u16>, String> {
    let mut out = BTreeSet::new();
    let items: Vec<&str> = text.split([',', ' ']).filter(|s| !s.is_empty()).collect();
    let mut i = 0;
    let num = |s: &str| -> Result<u16, String> {
        s.parse::<u16>()
            .ok()
            .filter(|v| ALL.contains(v))
            .ok_or_else(|| format!("{s:?} is not a VLAN id"))
    };
    while i < items.len() {
        let item = items[i];
        if item.eq_ignore_ascii_case("all") {
            out.extend(ALL);
        } else if item.eq_ignore_ascii_case("none") {
        } else if items.get(i + 1) == Some(&"to") {
            let (lo, hi) = (
                num(item)?,
                num(items.get(i + 2).copied().unwrap_or_default())?,
            );
            out.extend(lo..=hi);
            i += 2;
        } else if let Some((lo, hi)) = item.split_once('-') {
            out.extend(num(lo)?..=num(hi)?);
        } else {
            out.insert(num(item)?);
        }
        i += 1;
    }
    Ok(out)
}

/// Whether the interface name `shown` is the port `asked` (case, spaces and abbreviated
/// type names aside: `GigabitEthernet1/0/5` is `Gi1/0/5`, `ethernet 1/1/5` is
/// `ethernet1/1/5`).
pub(crate) fn same_port(shown: &str, asked: &str) -> bool {
    let norm = |s: &str| s.replace(' ', "").to_ascii_lowercase();
    let (a, b) = (norm(shown), norm(asked));
    if a == b {
        return true;
    }
    let split = |s: &str| -> (String, String) {
        let at = s.find(|c: char| c.is_ascii_digit()).unwrap_or(s.len());
        (s[..at].to_string(), s[at..].to_string())
    };
    let ((ta, na), (tb, nb)) = (split(&a), split(&b));
    !ta.is_empty() && !tb.is_empty() && na == nb && (ta.starts_with(&tb) || tb.starts_with(&ta))
}

/// `data.ports` entries and the verdicts, by port.
pub type Reports = BTreeMap<String, PortReport>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vlan_lists_round_trip() {
        let s = parse_vlans("10,20-22 30 to 32 all").unwrap();
        assert_eq!(s.len(), 4094);
        let s = parse_vlans("10,20-22 30 to 32").unwrap();
        assert_eq!(vlan_list(&s), "10,20-22,30-32");
        assert!(parse_vlans("5000").is_err());
        assert!(parse_vlans("none").unwrap().is_empty());
    }

    #[test]
    fn port_names_match_across_abbreviations() {
        assert!(same_port("GigabitEthernet1/0/5", "Gi1/0/5"));
        assert!(same_port("ethernet 1/1/5", "ethernet1/1/5"));
        assert!(!same_port("GigabitEthernet1/0/50", "Gi1/0/5"));
        assert!(!same_port("TenGigabitEthernet1/0/5", "Gi1/0/5"));
    }

    #[test]
    fn words_keep_quoted_text() {
        assert_eq!(
            words(r#"set interfaces ge-0/0/5 description "node 7""#),
            vec!["set", "interfaces", "ge-0/0/5", "description", "node 7"]
        );
    }

    fn read(platform: &str, port: &str, text: &str) -> PortState {
        let cat = crate::catalog::Catalog::builtin().unwrap();
        let p = cat.get(platform).unwrap();
        let spec = p.verify.spec(platform).unwrap();
        parse(p, spec, port, &[text.to_string()]).unwrap()
    }

    /// NX-OS and EOS do not print the default `switchport mode access`; OS10's access VLAN
    /// on a trunk is its native VLAN; an IOS trunk without an allowed line carries all.
    #[test]
    fn platform_semantics_from_the_catalog() {
        let s = read(
            "cisco_nxos",
            "Ethernet1/5",
            "interface Ethernet1/5\n  switchport access vlan 120\n  no shutdown\n",
        );
        assert_eq!(
            (s.mode.as_deref(), s.access_vlan),
            (Some("access"), Some(120))
        );
        let s = read("cisco_nxos", "Ethernet1/5", "interface Ethernet1/5\n");
        assert_eq!(s.mode, None, "nothing configured: no mode");
        let s = read(
            "dell_os10",
            "ethernet1/1/5",
            "interface ethernet1/1/5\n switchport mode trunk\n switchport access vlan 110\n switchport trunk allowed vlan 120\n",
        );
        assert_eq!((s.native_vlan, s.access_vlan), (Some(110), None));
        let s = read(
            "cisco_ios",
            "Gi1/0/5",
            "interface GigabitEthernet1/0/5\n switchport access vlan 99\n switchport mode trunk\n",
        );
        assert_eq!(s.allowed_vlans.len(), 4094);
        assert_eq!(s.access_vlan, None, "inactive on a trunk");
        let s = read(
            "dell_powerconnect",
            "Gi1/0/5",
            "interface Gi1/0/5\n switchport mode general\n switchport general pvid 110\n switchport general allowed vlan add 120 tagged\n",
        );
        assert_eq!(s.mode.as_deref(), Some("trunk"));
        let s = read(
            "aruba_aoscx",
            "1/1/5",
            "interface 1/1/5\n    vlan access 120\n",
        );
        assert_eq!(s.admin_up, Some(false), "AOS-CX ports ship disabled");
        let s = read(
            "juniper",
            "ge-0/0/5",
            "set interfaces ge-0/0/5 ether-options 802.3ad ae7\n",
        );
        assert_eq!(s.lag.as_deref(), Some("ae7"));
        let s = read(
            "huawei",
            "GigabitEthernet0/0/5",
            "interface GigabitEthernet0/0/5\n eth-trunk 7\n#\n",
        );
        assert_eq!(s.lag.as_deref(), Some("Eth-Trunk7"));
    }

    #[test]
    fn expectations_find_drift_and_unread_fields() {
        let e = Expect {
            mode: Some(ModeRule::Is("access")),
            access_vlan: Some(120),
            description: Some("x".into()),
            ..Expect::default()
        };
        let mut s = PortState {
            mode: Some("access".into()),
            access_vlan: Some(130),
            ..PortState::default()
        };
        s.unread.insert("description");
        let v = e.check(&s);
        assert_eq!(v.drift.len(), 1, "{v:?}");
        assert_eq!(v.drift[0].field, "access_vlan");
        assert_eq!(v.unverified, vec!["description"]);
        assert!(!v.holds());
        assert_eq!(e.desired(&s).access_vlan, Some(120));
    }
}
