//! Cumulus Linux NVUE: `nv set|unset` on interfaces and the bridge's VLANs
//! into the persistent pending revision, `nv config apply|save|detach|diff`
//! (apply validates that interface VLANs are in the bridge), and `nv show`
//! (JSON or YAML-ish). Also what NCLU reuses of the Cumulus view of an
//! interface: the mode derived from what is set (`norm`: access set → access;
//! untagged or a VLAN list → trunk), its JSON (`if_json`), `diff` and
//! `print_yamlish`.

use crate::cli::{unmodelled, Out};
use crate::faults::Faults;
use crate::model::{Config, DeviceState, Lag, Port, L2};
use crate::words::{expand_ifs, parse_vlan, parse_vlan_list, vlan_ranges};
use std::collections::BTreeMap;

/// Derive the port mode from what is configured (NVUE / NCLU semantics).
pub(super) fn norm(l2: &mut L2) {
    if l2.access_vlan.is_some() {
        l2.set_mode(Some("access"));
        *l2.native_vlan = None;
    } else if !l2.allowed.is_empty() || l2.native_vlan.is_some() {
        l2.set_mode(Some("trunk"));
    } else {
        l2.set_mode(None);
    }
}

fn err(out: &mut Out, msg: impl AsRef<str>) {
    out.stderr(1, format!("Error: {}", msg.as_ref()));
}

fn no_such(out: &mut Out, w: &str) {
    out.stderr(2, format!("Error: No such command '{w}'."));
}

/// `nv ...`.
pub(super) fn nv(faults: &Faults, a: &[&str], line: &str, st: &mut DeviceState, out: &mut Out) {
    // `-h` / `--help` anywhere on the line prints the command's help and exits 0, changing
    // nothing (NVUE's CLI, like most): a value that looks like an option is one.
    if a.iter().any(|x| matches!(*x, "-h" | "--help")) {
        let cmd: Vec<&str> = a
            .iter()
            .copied()
            .take_while(|x| !x.starts_with('-'))
            .collect();
        out.line(format!("Usage:\n  nv {} [options]\n", cmd.join(" ")));
        out.line("General Options:\n  -h, --help  Show help.");
        return;
    }
    match a {
        ["set" | "unset", rest @ ..] => {
            let set = a[0] == "set";
            edit(set, rest, line, st, out)
        }
        ["config", "apply", opts @ ..] => {
            if let Some(bad) = opts.iter().find(|o| {
                !matches!(
                    **o,
                    "-y" | "--assume-yes"
                        | "--assume-no"
                        | "--confirm"
                        | "--confirm-yes"
                        | "startup"
                        | "empty"
                        | "pending"
                )
            }) {
                if !bad.chars().all(|c| c.is_ascii_digit()) {
                    no_such(out, bad);
                    return;
                }
            }
            if faults.db_locked {
                err(out, "Unable to apply: the configuration database is locked by another apply in progress (rev_id: 7). Try again later.");
                return;
            }
            let Some(cand) = st.pending.clone() else {
                out.line("Warning: There are no pending changes to apply.");
                return;
            };
            if faults.commit_fail {
                err(out, "Config invalid at system: apply failed; the configuration could not be applied (commit-fail)");
                return;
            }
            if let Err(e) = validate(&cand) {
                // NVUE's form for a revision its validation refuses (NVIDIA's knowledge
                // base, "NVUE Fails to Apply Configuration After Upgrade": `Invalid config
                // [rev_id: 4]`, then the `Config invalid at PATH: ...` line indented); the
                // VLAN wording after the path is the simulator's (sim/STATUS.md).
                out.stderr(
                    1,
                    format!("Invalid config [rev_id: {}]\n  {e}", peek_rev(st)),
                );
                return;
            }
            st.running = cand;
            st.pending = None;
            let rev = next_rev(st);
            out.line(format!("applied [rev_id: {rev}]"));
        }
        ["config", "save"] => {
            if faults.db_locked {
                err(out, "Unable to save: the configuration database is locked by another apply in progress.");
                return;
            }
            st.saved = st.running.clone();
            out.line("saved");
        }
        ["config", "detach"] => st.pending = None,
        ["config", "diff", ..] => {
            let cand = st.pending.clone().unwrap_or_else(|| st.running.clone());
            diff(&st.running, &cand, out);
        }
        ["config", "show", ..] | ["config", "history", ..] | ["config", "revision", ..] => {
            unmodelled(st, "shell", line)
        }
        ["show", rest @ ..] => show(rest, st, out),
        ["--version"] => out.line("nv 5.9.1"),
        [] => out.stderr(2, "Usage: nv [options] <command> [<args>] ..."),
        [w, ..] => no_such(out, w),
    }
}

fn edit(set: bool, a: &[&str], line: &str, st: &mut DeviceState, out: &mut Out) {
    match a {
        ["interface", spec, attrs @ ..] => {
            let Some(names) = expand_ifs(spec) else {
                err(
                    out,
                    format!("Invalid config: '{spec}' is not a valid interface name"),
                );
                return;
            };
            for n in &names {
                let known = st.running.has_if(n) || st.pending_mut().has_if(n);
                let is_bond = n.starts_with("bond");
                let virtual_if = ["vlan", "lo", "eth", "peerlink"]
                    .iter()
                    .any(|x| n.starts_with(x));
                if !(known || is_bond && set || virtual_if) {
                    err(out, format!("Config invalid at interface.{n}: '{n}' is not a valid interface on this platform"));
                    return;
                }
            }
            // Validate the attribute path before touching anything.
            if let Err(w) = attr_check(set, attrs) {
                no_such(out, w);
                return;
            }
            let cand = st.pending_mut();
            let mut unm = false;
            for n in &names {
                if n.starts_with("vlan")
                    || n.starts_with("lo")
                    || n.starts_with("eth")
                    || n.starts_with("peerlink")
                {
                    unm = true;
                    continue;
                }
                if n.starts_with("bond") && !cand.lags.contains_key(n) {
                    if !set {
                        continue;
                    }
                    cand.lags.insert(n.clone(), Lag::new("lacp"));
                }
                match if_attr(cand, n, set, attrs) {
                    Ok(true) => {}
                    Ok(false) => unm = true,
                    Err(e) => {
                        err(out, e);
                        return;
                    }
                }
            }
            if unm {
                unmodelled(st, "shell", line);
            }
        }
        ["bridge", "domain", "br_default", "vlan", rest @ ..] => {
            let cand = st.pending_mut();
            match rest {
                [] if !set => {
                    for id in cand.vlan_ids() {
                        cand.del_vlan(id);
                    }
                }
                [list] => {
                    let Some(ids) = parse_vlan_list(list, &[','], "-") else {
                        err(
                            out,
                            format!("Invalid config: '{list}' is not a valid VLAN list (1-4094)"),
                        );
                        return;
                    };
                    for id in ids {
                        if set {
                            cand.add_vlan(id);
                        } else {
                            cand.del_vlan(id);
                        }
                    }
                }
                [list, "vni", ..]
                | [list, "flooding", ..]
                | [list, "ptp", ..]
                | [list, "multicast", ..] => {
                    if parse_vlan_list(list, &[','], "-").is_none() {
                        err(
                            out,
                            format!("Invalid config: '{list}' is not a valid VLAN list (1-4094)"),
                        );
                        return;
                    }
                    unmodelled(st, "shell", line)
                }
                [_, w, ..] => no_such(out, w),
                [] => out.stderr(2, "Error: Missing argument '<vid>'."),
            }
        }
        ["bridge", "domain", d, ..] if *d != "br_default" => {
            unmodelled(st, "shell", line);
        }
        ["bridge", "domain", "br_default", w, ..]
            if !matches!(
                *w,
                "stp"
                    | "type"
                    | "untagged"
                    | "encap"
                    | "mac-address"
                    | "vlan-vni-offset"
                    | "multicast"
            ) =>
        {
            no_such(out, w)
        }
        ["system" | "router" | "vrf" | "nve" | "evpn" | "qos" | "service" | "mlag" | "acl"
        | "bridge" | "platform" | "maintenance", ..] => unmodelled(st, "shell", line),
        [w, ..] => no_such(out, w),
        [] => out.stderr(2, "Error: Missing command."),
    }
}

fn show(a: &[&str], st: &mut DeviceState, out: &mut Out) {
    let pending = a.iter().any(|x| *x == "--pending" || *x == "--rev=pending");
    let cfg = if pending {
        st.pending.clone().unwrap_or_else(|| st.running.clone())
    } else {
        st.running.clone()
    };
    let words: Vec<&str> = a
        .iter()
        .copied()
        .filter(|w| !w.starts_with('-') && *w != "json" && *w != "yaml" && *w != "auto")
        .collect();
    let json = a.windows(2).any(|w| w[0] == "-o" && w[1] == "json") || a.contains(&"--output=json");
    let v = match words.as_slice() {
        ["interface"] => {
            let mut m = serde_json::Map::new();
            for n in cfg.ports.keys().chain(cfg.lags.keys()) {
                m.insert(n.clone(), if_json(&cfg, n));
            }
            serde_json::Value::Object(m)
        }
        ["interface", n, ..] => {
            if !cfg.has_if(n) {
                out.stderr(
                    1,
                    format!("Error: The requested item does not exist: interface {n}"),
                );
                return;
            }
            if_json(&cfg, n)
        }
        ["bridge", "domain", "br_default", "vlan", ..] | ["bridge", "domain", "br_default"] => {
            let mut m = serde_json::Map::new();
            for id in cfg.vlan_ids() {
                m.insert(id.to_string(), serde_json::json!({}));
            }
            if words.len() == 3 {
                serde_json::json!({"vlan": m})
            } else {
                serde_json::Value::Object(m)
            }
        }
        _ => serde_json::json!({}),
    };
    if json {
        out.line(serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        print_yamlish(&v, 0, out);
    }
}

/// The id the pending revision is applied as (what [`next_rev`] will return), without
/// taking it.
fn peek_rev(st: &DeviceState) -> u64 {
    st.running
        .extra
        .get("nvue_rev")
        .and_then(|v| v.as_u64())
        .unwrap_or(1)
        + 1
}

fn next_rev(st: &mut DeviceState) -> u64 {
    let rev = st
        .running
        .extra
        .get("nvue_rev")
        .and_then(|v| v.as_u64())
        .unwrap_or(1)
        + 1;
    st.running
        .extra
        .insert("nvue_rev".into(), serde_json::json!(rev));
    rev
}

/// Check an NVUE attribute path after the interface name; returns the bad word.
fn attr_check<'a>(set: bool, attrs: &[&'a str]) -> Result<(), &'a str> {
    match attrs {
        [] if !set => Ok(()),
        [] => Err("<attribute>"),
        ["link", rest @ ..] => match rest {
            ["state", ..]
            | ["mtu", ..]
            | ["speed", ..]
            | ["auto-negotiate", ..]
            | ["fec", ..]
            | ["duplex", ..]
            | ["breakout", ..] => Ok(()),
            [] if !set => Ok(()),
            [w, ..] => Err(w),
            [] => Err("<attribute>"),
        },
        ["bridge", "domain", "br_default", rest @ ..] => match rest {
            [] => Ok(()),
            ["access" | "untagged" | "vlan" | "stp" | "learning", ..] => Ok(()),
            [w, ..] => Err(w),
        },
        ["bridge", "domain", _, ..] => Ok(()),
        ["bridge", w, ..] => Err(w),
        ["description", ..]
        | ["bond", ..]
        | ["ip", ..]
        | ["type", ..]
        | ["evpn", ..]
        | ["router", ..]
        | ["qos", ..]
        | ["lldp", ..]
        | ["acl", ..]
        | ["ptp", ..] => Ok(()),
        [w, ..] => Err(w),
    }
}

/// Apply one NVUE interface attribute. Ok(true) = modelled.
fn if_attr(cfg: &mut Config, n: &str, set: bool, attrs: &[&str]) -> Result<bool, String> {
    if attrs.is_empty() {
        // `nv unset interface X`
        if cfg.lags.contains_key(n) {
            cfg.del_lag(n);
        } else if let Some(p) = cfg.ports.get_mut(n) {
            *p = Port::new(false);
            cfg.leave_lag(n);
        }
        return Ok(true);
    }
    if let ["bond", rest @ ..] = attrs {
        match rest {
            ["member", list] => {
                let members = expand_ifs(list).ok_or_else(|| {
                    format!("Invalid config: '{list}' is not a valid interface list")
                })?;
                for m in members {
                    if !cfg.ports.contains_key(&m) {
                        return Err(format!("Config invalid at interface.{n}.bond.member.{m}: '{m}' is not a valid interface"));
                    }
                    if set {
                        let mode = cfg.lag_mode(n, "lacp");
                        cfg.join_lag(&m, n, &mode);
                    } else {
                        cfg.leave_lag(&m);
                    }
                }
                return Ok(true);
            }
            ["member"] if !set => {
                let members = cfg
                    .lags
                    .get(n)
                    .map(|l| l.members.clone())
                    .unwrap_or_default();
                for m in members {
                    cfg.leave_lag(&m);
                }
                return Ok(true);
            }
            ["mode", m @ ("lacp" | "static")] => {
                if let Some(l) = cfg.lags.get_mut(n) {
                    l.mode = if set { (*m).to_string() } else { "lacp".into() };
                }
                return Ok(true);
            }
            _ => return Ok(false),
        }
    }
    let Some(mut l2) = cfg.l2(n) else {
        return Ok(false);
    };
    let vlan = |s: &str| {
        parse_vlan(s)
            .ok_or_else(|| format!("Invalid config: '{s}' is not a valid VLAN id (1-4094)"))
    };
    let modelled = match attrs {
        ["link", "state", s @ ("up" | "down")] if set => {
            *l2.admin_up = *s == "up";
            true
        }
        ["link", "state", ..] if !set => {
            *l2.admin_up = true;
            true
        }
        ["link", "state", ..] => {
            return Err("Invalid config: link state must be 'up' or 'down'".into())
        }
        ["link", "mtu", m] if set => {
            let m: u32 = m
                .parse()
                .ok()
                .filter(|m| (552..=9216).contains(m))
                .ok_or("Invalid config: mtu must be 552-9216")?;
            *l2.mtu = Some(m);
            true
        }
        ["link", "mtu", ..] if !set => {
            *l2.mtu = None;
            true
        }
        ["description", rest @ ..] => {
            *l2.description = if set { rest.join(" ") } else { String::new() };
            true
        }
        ["bridge", "domain", "br_default"] => {
            if !set {
                *l2.access_vlan = None;
                *l2.native_vlan = None;
                l2.allowed.clear();
            }
            true
        }
        ["bridge", "domain", "br_default", which @ ("access" | "untagged"), rest @ ..] => {
            let untagged = *which == "untagged";
            let slot = if untagged {
                &mut *l2.native_vlan
            } else {
                &mut *l2.access_vlan
            };
            match (set, rest) {
                (true, ["none"]) if untagged => *slot = None,
                (true, [v]) => *slot = Some(vlan(v)?),
                (false, _) => *slot = None,
                _ => return Err("Error: Missing argument '<value>'.".into()),
            }
            true
        }
        ["bridge", "domain", "br_default", "vlan", rest @ ..] => {
            match (set, rest) {
                (true, ["all"]) => l2.allow_set(&(1..=4094).collect::<Vec<u16>>()),
                (_, [list]) => {
                    let ids = parse_vlan_list(list, &[','], "-").ok_or_else(|| {
                        format!("Invalid config: '{list}' is not a valid VLAN list")
                    })?;
                    if set {
                        l2.allow_add(&ids)
                    } else {
                        l2.allow_remove(&ids)
                    }
                }
                (false, []) => l2.allowed.clear(),
                _ => return Err("Error: Missing argument '<vid>'.".into()),
            }
            true
        }
        _ => false,
    };
    norm(&mut l2);
    Ok(modelled)
}

/// NVUE apply-time validation: VLANs used by interfaces must be in the bridge.
fn validate(cfg: &Config) -> Result<(), String> {
    let mut c = cfg.clone();
    let names = cfg.if_names();
    for n in names {
        let Some(l2) = c.l2(&n) else { continue };
        let checks = [("access", *l2.access_vlan), ("untagged", *l2.native_vlan)];
        for (what, v) in checks {
            if let Some(v) = v {
                if !cfg.has_vlan(v) {
                    return Err(format!("Config invalid at interface.{n}.bridge.domain.br_default.{what}: VLAN {v} is not in bridge domain br_default's vlan list"));
                }
            }
        }
        if let Some(v) = l2.allowed.iter().find(|v| !cfg.has_vlan(**v)) {
            if l2.allowed.len() < 4094 {
                return Err(format!("Config invalid at interface.{n}.bridge.domain.br_default.vlan: VLAN {v} is not in bridge domain br_default's vlan list"));
            }
        }
    }
    Ok(())
}

pub(super) fn if_json(cfg: &Config, n: &str) -> serde_json::Value {
    let mut c = cfg.clone();
    let lag_of = cfg.ports.get(n).and_then(|p| p.lag.clone());
    let members = cfg.lags.get(n).map(|l| (l.members.clone(), l.mode.clone()));
    let Some(l2) = c.l2(n) else {
        return serde_json::json!({});
    };
    let mut dom = serde_json::Map::new();
    if let Some(a) = *l2.access_vlan {
        dom.insert("access".into(), serde_json::json!(a));
    }
    if let Some(u) = *l2.native_vlan {
        dom.insert("untagged".into(), serde_json::json!(u));
    }
    if !l2.allowed.is_empty() {
        let mut m = BTreeMap::new();
        m.insert(vlan_ranges(l2.allowed, ",", "-"), serde_json::json!({}));
        dom.insert("vlan".into(), serde_json::json!(m));
    }
    let mut v = serde_json::json!({
        "link": {
            "state": { (if *l2.admin_up { "up" } else { "down" }): {} },
            "mtu": l2.mtu.unwrap_or(9216),
        },
        "type": if n.starts_with("bond") { "bond" } else { "swp" },
    });
    if !l2.description.is_empty() {
        v["description"] = serde_json::json!(l2.description.clone());
    }
    if l2.mode.is_some() {
        v["bridge"] = serde_json::json!({"domain": {"br_default": dom}});
    }
    if let Some((m, mode)) = members {
        let mm: BTreeMap<String, serde_json::Value> =
            m.into_iter().map(|x| (x, serde_json::json!({}))).collect();
        v["bond"] = serde_json::json!({"member": mm, "mode": mode});
    }
    if let Some(l) = lag_of {
        v["parent"] = serde_json::json!({ l: {} });
    }
    v
}

pub(super) fn print_yamlish(v: &serde_json::Value, indent: usize, out: &mut Out) {
    if let Some(m) = v.as_object() {
        for (k, x) in m {
            if x.is_object() {
                out.line(format!("{}{k}:", "  ".repeat(indent)));
                print_yamlish(x, indent + 1, out);
            } else {
                out.line(format!("{}{k}: {x}", "  ".repeat(indent)));
            }
        }
    }
}

pub(super) fn diff(old: &Config, new: &Config, out: &mut Out) {
    let names: Vec<String> = new
        .ports
        .keys()
        .chain(new.lags.keys())
        .chain(old.lags.keys())
        .cloned()
        .collect();
    let mut seen = Vec::new();
    for n in names {
        if seen.contains(&n) {
            continue;
        }
        seen.push(n.clone());
        let a = if_json(old, &n);
        let b = if_json(new, &n);
        if a != b {
            out.line(format!("- interface {n}: {a}"));
            out.line(format!("+ interface {n}: {b}"));
        }
    }
    if old.vlans != new.vlans {
        out.line(format!(
            "- bridge domain br_default vlan: {}",
            vlan_ranges(&old.vlan_ids(), ",", "-")
        ));
        out.line(format!(
            "+ bridge domain br_default vlan: {}",
            vlan_ranges(&new.vlan_ids(), ",", "-")
        ));
    }
}
