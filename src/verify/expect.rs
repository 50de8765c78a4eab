//! What a request implies about each port it changes ([`Expect`]), and the comparison of a
//! port read back with it ([`Verdict`], [`PortReport`], Ansible's `diff`).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{json, Value};

use super::parse::lag_name;
use super::state::{vlan_list, PortState};
use crate::catalog::{Platform, Unsupported};
use crate::config::Device;
use crate::request::{Op, PortChange, PortMode, Request};

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

fn ids(set: Option<&crate::request::vlan::VlanSet>) -> BTreeSet<u16> {
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

/// The VLANs a port carries (access, native, tagged), for policy's removal rights. A trunk
/// that carries every VLAN (the vendor default of IOS-like CLIs when no list is set) counts
/// as carrying none in particular: closing it takes nothing the network team put there.
pub fn carried(s: &PortState) -> BTreeSet<u16> {
    let mut out: BTreeSet<u16> = s.access_vlan.into_iter().chain(s.native_vlan).collect();
    if s.allowed_vlans.len() < crate::verify::state::ALL.count() {
        out.extend(&s.allowed_vlans);
    }
    out
}

/// The expectations once the ports were read (read before write): a detach takes its VLAN
/// off wherever the port carried it (untagged: the idle VLAN returns; tagged: it leaves the
/// list), and a port that becomes a trunk on a platform whose trunks carry every VLAN by
/// default carries exactly the VLAN attached. Other expectations are as before.
pub fn refine(
    checks: &[Check],
    req: &Request,
    device: &Device,
    platform: &Platform,
    before: &[PortState],
) -> Vec<Check> {
    let default_all = match &platform.verify {
        crate::catalog::Verify::Show(s) => s.trunk_default_all,
        _ => false,
    };
    checks
        .iter()
        .zip(before)
        .map(|(c, s)| {
            let Some(change) = req.ports.iter().find(|p| p.port == c.port) else {
                return c.clone();
            };
            let vlan = change.vlan.map(|v| v.get());
            let mut e = c.expect.clone();
            match req.op {
                Op::DetachPort => {
                    let Some(v) = vlan else { return c.clone() };
                    let carried = s.native_vlan == Some(v)
                        || (s.allowed_vlans.contains(&v) && s.mode.as_deref() != Some("access"));
                    // `detach_all` (the driver's rule) takes every membership.
                    let wholesale = carried && platform.supports("detach_all");
                    let untagged =
                        wholesale || s.access_vlan == Some(v) && s.mode.as_deref() != Some("trunk");
                    let mut detached = if untagged {
                        let as_access = PortChange {
                            mode: None,
                            ..change.clone()
                        };
                        expect_port(Op::DetachPort, &as_access, device, platform)
                    } else {
                        Expect::default()
                    };
                    detached.allowed_lacks.insert(v);
                    if wholesale {
                        detached.allowed_exactly = Some(BTreeSet::new());
                    }
                    if s.native_vlan == Some(v) || untagged {
                        let idle = change.default_vlan.or(device.default_vlan).map(|x| x.get());
                        if idle != Some(v) {
                            detached.untagged_not.insert(v);
                        }
                    }
                    e = detached;
                }
                // A LAG member leaves its LAG when it is declared on its own or reset.
                Op::UpdatePort | Op::ResetPort if s.lag.is_some() => e.lag = Some(None),
                Op::AttachPort
                    if change.mode == Some(PortMode::Trunk)
                        && default_all
                        && s.mode.as_deref() != Some("trunk") =>
                {
                    e.allowed_exactly = Some(vlan.into_iter().collect());
                }
                _ => {}
            }
            Check {
                expect: e,
                ..c.clone()
            }
        })
        .collect()
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
            if platform.supports("description_clear") {
                e.description = Some(String::new());
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

/// `data.ports` entries and the verdicts, by port.
pub type Reports = BTreeMap<String, PortReport>;

#[cfg(test)]
mod tests {
    use super::*;

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
