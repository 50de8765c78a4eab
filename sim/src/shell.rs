//! The Linux-shell family: Cumulus NVUE (`nv`), Cumulus NCLU (`net`), SONiC and
//! Dell Enterprise SONiC (`config` / `show`, optionally under `sudo`), and a
//! Linux host with Open vSwitch (`ovs-vsctl`, `ip link`). Each line is one shell
//! command: stdout / stderr / exit status like the real tool; a tiny set of
//! shell builtins (`exit`, `echo $?`, `true`, ...) so netmiko-style sessions work.

use crate::cli::{unmodelled, Cli, Env, Flow, Out};
use crate::model::{
    parse_vlan, parse_vlan_list, vlan_ranges, Config, DeviceState, Lag, OvsPort, Port, L2,
};
use crate::platform::Platform::{self, *};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
enum Ask {
    SonicSave,
    SonicReload,
}

/// One shell session.
pub struct Shell {
    p: Platform,
    host: String,
    user: String,
    faults: crate::faults::Faults,
    last: i32,
    ask: Option<Ask>,
}

/// Split a command line like a POSIX shell would for simple cases: whitespace,
/// single and double quotes, backslash escapes.
pub fn shell_words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut has = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                has = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    cur.push(c);
                }
            }
            '"' => {
                has = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => {
                            if let Some(n) = chars.next() {
                                cur.push(n);
                            }
                        }
                        _ => cur.push(c),
                    }
                }
            }
            '\\' => {
                has = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            c if c.is_whitespace() => {
                if has {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            c => {
                has = true;
                cur.push(c);
            }
        }
    }
    if has {
        out.push(cur);
    }
    out
}

/// Expand `swp1-4,swp6` / `Ethernet0` style lists.
fn expand_ifs(spec: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for part in spec.split(',') {
        let split = part.find(|c: char| c.is_ascii_digit())?;
        let (pre, num) = part.split_at(split);
        match num.split_once('-') {
            Some((a, b)) => {
                let b = b.strip_prefix(pre).unwrap_or(b);
                let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
                if a > b {
                    return None;
                }
                out.extend((a..=b).map(|i| format!("{pre}{i}")));
            }
            None => out.push(part.to_string()),
        }
    }
    Some(out)
}

/// Derive the port mode from what is configured (NVUE / NCLU semantics).
fn norm(l2: &mut L2) {
    if l2.access_vlan.is_some() {
        l2.set_mode(Some("access"));
        *l2.native_vlan = None;
    } else if !l2.allowed.is_empty() || l2.native_vlan.is_some() {
        l2.set_mode(Some("trunk"));
    } else {
        l2.set_mode(None);
    }
}

/// Extra default data for ovs_linux: the bridges.
pub fn ovs_default_extra(cfg: &mut Config) {
    cfg.extra
        .insert("ovs_bridges".into(), serde_json::json!(["br-int", "br0"]));
}

fn ovs_bridges(cfg: &Config) -> Vec<String> {
    cfg.extra
        .get("ovs_bridges")
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn set_ovs_bridges(cfg: &mut Config, b: Vec<String>) {
    cfg.extra.insert("ovs_bridges".into(), serde_json::json!(b));
}

/// Recompute the generic model fields of an OVS port from its columns.
fn ovs_norm(p: &mut Port) {
    let Some(o) = &p.ovs else { return };
    let (tag, trunks) = (o.tag, o.trunks.clone());
    let (mode, acc, native, allowed) = match o.vlan_mode.as_deref() {
        Some("access") => (Some("access"), tag, None, Vec::new()),
        Some("trunk") => (Some("trunk"), None, None, trunks),
        Some(_) => (Some("trunk"), None, tag, trunks),
        None if tag.is_some() => (Some("access"), tag, None, Vec::new()),
        None if !trunks.is_empty() => (Some("trunk"), None, None, trunks),
        None => (None, None, None, Vec::new()),
    };
    p.mode = mode.map(str::to_string);
    p.access_vlan = acc;
    p.native_vlan = native;
    p.allowed_vlans = allowed;
}

impl Shell {
    /// A shell session.
    pub fn new(env: &Env) -> Shell {
        Shell {
            p: env.platform,
            host: env.hostname.clone(),
            user: env.username.clone(),
            faults: env.faults.clone(),
            last: 0,
            ask: None,
        }
    }

    fn not_found(&self, cmd: &str, out: &mut Out) {
        out.stderr(127, format!("-bash: {cmd}: command not found"));
    }

    fn pending(st: &mut DeviceState) -> &mut Config {
        if st.pending.is_none() {
            st.pending = Some(st.running.clone());
        }
        match st.pending.as_mut() {
            Some(c) => c,
            None => &mut st.running,
        }
    }

    fn run(&mut self, words: &[String], line: &str, st: &mut DeviceState, out: &mut Out) -> Flow {
        let Some(cmd) = words.first() else {
            return Flow::Continue;
        };
        let args = &words[1..];
        match cmd.as_str() {
            "sudo" => {
                let rest: Vec<String> = args
                    .iter()
                    .skip_while(|a| a.starts_with('-'))
                    .cloned()
                    .collect();
                return self.run(&rest, line, st, out);
            }
            "exit" | "logout" => {
                return Flow::Exit(args.first().and_then(|a| a.parse().ok()).unwrap_or(0));
            }
            "echo" => {
                let text: Vec<String> = args
                    .iter()
                    .map(|a| {
                        if a == "$?" {
                            self.last.to_string()
                        } else {
                            a.clone()
                        }
                    })
                    .collect();
                out.line(text.join(" "));
            }
            "true" | "cd" | "export" | "unset" | "stty" | "set" | "shopt" | "unalias"
            | "history" => {}
            "false" => out.status = 1,
            "hostname" => out.line(&self.host),
            "whoami" => out.line(&self.user),
            "nv" if self.p == CumulusNvue => self.nv(args, line, st, out),
            "net" if self.p == Cumulus => self.net(args, line, st, out),
            "config" if matches!(self.p, Sonic | DellEnterpriseSonic) => {
                self.sonic_config(args, line, st, out)
            }
            "show" if matches!(self.p, Sonic | DellEnterpriseSonic) => {
                self.sonic_show(args, line, st, out)
            }
            "ovs-vsctl" if self.p == OvsLinux => self.ovs(args, line, st, out),
            "ip" if self.p == OvsLinux => self.ip(args, line, st, out),
            "vtysh" | "ip" | "cat" | "ls" | "uname" | "ping" | "systemctl" | "bridge"
            | "acl-loader" | "rm" | "ethtool" => unmodelled(st, "shell", line),
            other => self.not_found(other, out),
        }
        Flow::Continue
    }

    // ---- NVUE -------------------------------------------------------------

    fn nv_err(out: &mut Out, msg: impl AsRef<str>) {
        out.stderr(1, format!("Error: {}", msg.as_ref()));
    }

    fn nv_nosuch(out: &mut Out, w: &str) {
        out.stderr(2, format!("Error: No such command '{w}'."));
    }

    fn nv(&mut self, args: &[String], line: &str, st: &mut DeviceState, out: &mut Out) {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        match a.as_slice() {
            ["set" | "unset", rest @ ..] => {
                let set = a[0] == "set";
                self.nv_edit(set, rest, line, st, out)
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
                        Self::nv_nosuch(out, bad);
                        return;
                    }
                }
                if self.faults.db_locked {
                    Self::nv_err(out, "Unable to apply: the configuration database is locked by another apply in progress (rev_id: 7). Try again later.");
                    return;
                }
                let Some(cand) = st.pending.clone() else {
                    out.line("Warning: There are no pending changes to apply.");
                    return;
                };
                if self.faults.commit_fail {
                    Self::nv_err(out, "Config invalid at system: apply failed; the configuration could not be applied (commit-fail)");
                    return;
                }
                if let Err(e) = nvue_validate(&cand) {
                    Self::nv_err(out, e);
                    return;
                }
                st.running = cand;
                st.pending = None;
                let rev = next_rev(st);
                out.line(format!("applied [rev_id: {rev}]"));
            }
            ["config", "save"] => {
                if self.faults.db_locked {
                    Self::nv_err(out, "Unable to save: the configuration database is locked by another apply in progress.");
                    return;
                }
                st.saved = st.running.clone();
                out.line("saved");
            }
            ["config", "detach"] => st.pending = None,
            ["config", "diff", ..] => {
                let cand = st.pending.clone().unwrap_or_else(|| st.running.clone());
                nv_diff(&st.running, &cand, out);
            }
            ["config", "show", ..] | ["config", "history", ..] | ["config", "revision", ..] => {
                unmodelled(st, "shell", line)
            }
            ["show", rest @ ..] => self.nv_show(rest, st, out),
            ["--version"] => out.line("nv 5.9.1"),
            [] => out.stderr(2, "Usage: nv [options] <command> [<args>] ..."),
            [w, ..] => Self::nv_nosuch(out, w),
        }
    }

    fn nv_edit(&mut self, set: bool, a: &[&str], line: &str, st: &mut DeviceState, out: &mut Out) {
        match a {
            ["interface", spec, attrs @ ..] => {
                let Some(names) = expand_ifs(spec) else {
                    Self::nv_err(
                        out,
                        format!("Invalid config: '{spec}' is not a valid interface name"),
                    );
                    return;
                };
                for n in &names {
                    let known = st.running.has_if(n) || Self::pending(st).has_if(n);
                    let is_bond = n.starts_with("bond");
                    let virtual_if = ["vlan", "lo", "eth", "peerlink"]
                        .iter()
                        .any(|x| n.starts_with(x));
                    if !(known || is_bond && set || virtual_if) {
                        Self::nv_err(out, format!("Config invalid at interface.{n}: '{n}' is not a valid interface on this platform"));
                        return;
                    }
                }
                // Validate the attribute path before touching anything.
                if let Err(w) = nv_attr_check(set, attrs) {
                    Self::nv_nosuch(out, w);
                    return;
                }
                let cand = Self::pending(st);
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
                    match nv_if_attr(cand, n, set, attrs) {
                        Ok(true) => {}
                        Ok(false) => unm = true,
                        Err(e) => {
                            Self::nv_err(out, e);
                            return;
                        }
                    }
                }
                if unm {
                    unmodelled(st, "shell", line);
                }
            }
            ["bridge", "domain", "br_default", "vlan", rest @ ..] => {
                let cand = Self::pending(st);
                match rest {
                    [] if !set => {
                        for id in cand.vlan_ids() {
                            cand.del_vlan(id);
                        }
                    }
                    [list] => {
                        let Some(ids) = parse_vlan_list(list, &[','], "-") else {
                            Self::nv_err(
                                out,
                                format!(
                                    "Invalid config: '{list}' is not a valid VLAN list (1-4094)"
                                ),
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
                            Self::nv_err(
                                out,
                                format!(
                                    "Invalid config: '{list}' is not a valid VLAN list (1-4094)"
                                ),
                            );
                            return;
                        }
                        unmodelled(st, "shell", line)
                    }
                    [_, w, ..] => Self::nv_nosuch(out, w),
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
                Self::nv_nosuch(out, w)
            }
            ["system" | "router" | "vrf" | "nve" | "evpn" | "qos" | "service" | "mlag" | "acl"
            | "bridge" | "platform" | "maintenance", ..] => unmodelled(st, "shell", line),
            [w, ..] => Self::nv_nosuch(out, w),
            [] => out.stderr(2, "Error: Missing command."),
        }
    }

    fn nv_show(&self, a: &[&str], st: &mut DeviceState, out: &mut Out) {
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
        let json =
            a.windows(2).any(|w| w[0] == "-o" && w[1] == "json") || a.contains(&"--output=json");
        let v = match words.as_slice() {
            ["interface"] => {
                let mut m = serde_json::Map::new();
                for n in cfg.ports.keys().chain(cfg.lags.keys()) {
                    m.insert(n.clone(), nv_if_json(&cfg, n));
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
                nv_if_json(&cfg, n)
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

    // ---- NCLU -------------------------------------------------------------

    fn nclu_err(out: &mut Out, line: &str) {
        out.fail("ERROR: Command not found.");
        out.line("");
        out.line(line.trim().trim_start_matches("sudo "));
        out.status = 1;
    }

    fn net(&mut self, args: &[String], line: &str, st: &mut DeviceState, out: &mut Out) {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        match a.as_slice() {
            ["add" | "del", rest @ ..] => {
                let add = a[0] == "add";
                self.net_edit(add, rest, line, st, out);
            }
            ["commit", ..] => {
                if self.faults.db_locked {
                    out.stderr(1, "ERROR: another user is currently committing a change (lock held); try again later");
                    return;
                }
                if self.faults.commit_fail {
                    out.stderr(1, "error: net commit failed: ifreload returned a non-zero exit status (commit-fail)");
                    return;
                }
                match st.pending.take() {
                    Some(c) => {
                        nv_diff(&st.running, &c, out);
                        st.running = c.clone();
                        st.saved = c;
                    }
                    None => out.line("There are no pending changes."),
                }
            }
            ["abort"] => st.pending = None,
            ["pending"] => {
                let cand = st.pending.clone().unwrap_or_else(|| st.running.clone());
                nv_diff(&st.running, &cand, out);
            }
            ["show", "interface", n, rest @ ..] => {
                if !st.running.has_if(n) {
                    out.stderr(
                        1,
                        format!("ERROR: {n} is not a physical interface on this switch"),
                    );
                    return;
                }
                let v = nv_if_json(&st.running, n);
                if rest.contains(&"json") {
                    out.line(serde_json::to_string_pretty(&v).unwrap_or_default());
                } else {
                    print_yamlish(&v, 0, out);
                }
            }
            ["show", ..] => unmodelled(st, "shell", line),
            _ => Self::nclu_err(out, line),
        }
    }

    fn net_edit(&mut self, add: bool, a: &[&str], line: &str, st: &mut DeviceState, out: &mut Out) {
        let cand = Self::pending(st);
        match a {
            ["interface" | "bond", spec, attrs @ ..] => {
                let Some(names) = expand_ifs(spec) else {
                    Self::nclu_err(out, line);
                    return;
                };
                let is_bond = a[0] == "bond";
                for n in &names {
                    if is_bond {
                        if !cand.lags.contains_key(n) {
                            if !add {
                                continue;
                            }
                            cand.lags.insert(n.clone(), Lag::new("lacp"));
                        }
                    } else if !cand.ports.contains_key(n) {
                        out.stderr(
                            1,
                            format!("ERROR: {n} is not a physical interface on this switch"),
                        );
                        return;
                    }
                    match attrs {
                        [] if !add && is_bond => {
                            cand.del_lag(n);
                        }
                        ["bond", "slaves", list] => {
                            let Some(members) = expand_ifs(list) else {
                                Self::nclu_err(out, line);
                                return;
                            };
                            for m in members {
                                if add {
                                    cand.join_lag(&m, n, "lacp");
                                } else {
                                    cand.leave_lag(&m);
                                }
                            }
                        }
                        ["bond", "mode", m @ ("802.3ad" | "balance-xor")] => {
                            if let Some(l) = cand.lags.get_mut(n) {
                                l.mode = if *m == "802.3ad" && add {
                                    "lacp".into()
                                } else {
                                    "static".into()
                                };
                            }
                        }
                        ["bond", "lacp-rate" | "lacp-bypass-allow" | "mode", ..]
                        | ["clag", ..]
                        | ["ip", ..]
                        | ["stp", ..] => {}
                        _ => {
                            let Some(mut l2) = cand.l2(n) else { continue };
                            match attrs {
                                ["bridge", "access", v] => match parse_vlan(v) {
                                    Some(v) => {
                                        if add {
                                            *l2.access_vlan = Some(v);
                                        } else {
                                            *l2.access_vlan = None;
                                        }
                                    }
                                    None => {
                                        Self::nclu_err(out, line);
                                        return;
                                    }
                                },
                                ["bridge", "access"] if !add => *l2.access_vlan = None,
                                ["bridge", "vids", list] => {
                                    match parse_vlan_list(list, &[','], "-") {
                                        Some(ids) => {
                                            if add {
                                                l2.allow_add(&ids)
                                            } else {
                                                l2.allow_remove(&ids)
                                            }
                                        }
                                        None => {
                                            Self::nclu_err(out, line);
                                            return;
                                        }
                                    }
                                }
                                ["bridge", "vids"] if !add => l2.allowed.clear(),
                                ["bridge", "pvid", v] => match parse_vlan(v) {
                                    Some(v) => *l2.native_vlan = if add { Some(v) } else { None },
                                    None => {
                                        Self::nclu_err(out, line);
                                        return;
                                    }
                                },
                                ["bridge", "pvid"] if !add => *l2.native_vlan = None,
                                ["link", "down"] => *l2.admin_up = !add,
                                ["link", "speed" | "autoneg" | "fec", ..] => {}
                                ["mtu", m] => {
                                    match m.parse::<u32>().ok().filter(|m| (552..=9216).contains(m))
                                    {
                                        Some(m) => *l2.mtu = if add { Some(m) } else { None },
                                        None => {
                                            Self::nclu_err(out, line);
                                            return;
                                        }
                                    }
                                }
                                ["mtu"] if !add => *l2.mtu = None,
                                ["alias", rest @ ..] if !rest.is_empty() || !add => {
                                    *l2.description =
                                        if add { rest.join(" ") } else { String::new() }
                                }
                                _ => {
                                    Self::nclu_err(out, line);
                                    return;
                                }
                            }
                            norm(&mut l2);
                        }
                    }
                }
            }
            ["vlan", v, rest @ ..] => {
                let Some(id) = parse_vlan(v) else {
                    Self::nclu_err(out, line);
                    return;
                };
                if rest.is_empty() {
                    if add {
                        cand.add_vlan(id);
                    } else {
                        cand.del_vlan(id);
                    }
                } else {
                    unmodelled(st, "shell", line);
                }
            }
            ["bridge", "bridge", "vids", list] => match parse_vlan_list(list, &[','], "-") {
                Some(ids) => {
                    for id in ids {
                        if add {
                            cand.add_vlan(id);
                        } else {
                            cand.del_vlan(id);
                        }
                    }
                }
                None => Self::nclu_err(out, line),
            },
            ["bridge", "bridge", ..]
            | ["hostname", ..]
            | ["time", ..]
            | ["dns", ..]
            | ["routing", ..]
            | ["bgp", ..]
            | ["loopback", ..]
            | ["syslog", ..]
            | ["snmp-server", ..]
            | ["vxlan", ..] => unmodelled(st, "shell", line),
            _ => Self::nclu_err(out, line),
        }
    }

    // ---- SONiC ------------------------------------------------------------

    fn click_fail(out: &mut Out, usage: &str, msg: impl AsRef<str>) {
        out.stderr(
            2,
            format!(
                "Usage: {usage}\nTry \"{} -h\" for help.\n\nError: {}",
                usage.split(" [").next().unwrap_or(usage),
                msg.as_ref()
            ),
        );
    }

    fn sonic_port_ok(cfg: &Config, n: &str) -> bool {
        cfg.ports.contains_key(n) || cfg.lags.contains_key(n)
    }

    fn sonic_config(&mut self, args: &[String], line: &str, st: &mut DeviceState, out: &mut Out) {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let cfg = &mut st.running;
        match a.as_slice() {
            ["vlan", op @ ("add" | "del"), v] => {
                let Some(id) = parse_vlan(v) else {
                    Self::click_fail(
                        out,
                        &format!("config vlan {op} [OPTIONS] <vid>"),
                        "Invalid Vlan Id , Valid Range : 1 to 4094",
                    );
                    return;
                };
                if *op == "add" {
                    if !cfg.add_vlan(id) {
                        Self::click_fail(
                            out,
                            "config vlan add [OPTIONS] <vid>",
                            format!("Vlan{id} already exists"),
                        );
                    } else {
                        cfg.vlan_mut(id).name = format!("Vlan{id}");
                    }
                } else {
                    if !cfg.has_vlan(id) {
                        Self::click_fail(
                            out,
                            "config vlan del [OPTIONS] <vid>",
                            format!("Vlan{id} does not exist"),
                        );
                        return;
                    }
                    let names: Vec<String> =
                        cfg.ports.keys().chain(cfg.lags.keys()).cloned().collect();
                    for n in names {
                        if let Some(l2) = cfg.l2(&n) {
                            let (u, t) = l2.membership();
                            if u == Some(id) || t.contains(&id) {
                                Self::click_fail(out, "config vlan del [OPTIONS] <vid>", format!("Vlan{id} can not be removed. First remove all members assigned to this Vlan."));
                                return;
                            }
                        }
                    }
                    cfg.del_vlan(id);
                }
            }
            ["vlan", "member", op @ ("add" | "del"), rest @ ..] => {
                let untagged = rest.iter().any(|x| *x == "-u" || *x == "--untagged");
                let pos: Vec<&str> = rest
                    .iter()
                    .copied()
                    .filter(|x| !x.starts_with('-'))
                    .collect();
                let usage = format!("config vlan member {op} [OPTIONS] <vid> <port>");
                let [v, port] = pos.as_slice() else {
                    Self::click_fail(out, &usage, "Missing argument \"<port>\".");
                    return;
                };
                let Some(id) = parse_vlan(v) else {
                    Self::click_fail(out, &usage, "Invalid Vlan Id , Valid Range : 1 to 4094");
                    return;
                };
                if !cfg.has_vlan(id) {
                    Self::click_fail(out, &usage, format!("Vlan{id} doesn't exist"));
                    return;
                }
                if !Self::sonic_port_ok(cfg, port) {
                    Self::click_fail(out, &usage, "Interface name is invalid!!");
                    return;
                }
                if cfg.ports.get(*port).is_some_and(|p| p.lag.is_some()) {
                    Self::click_fail(out, &usage, format!("{port} is a portchannel member port"));
                    return;
                }
                let Some(mut l2) = cfg.l2(port) else { return };
                let (mut u, mut t) = l2.membership();
                if *op == "add" {
                    if u == Some(id) || t.contains(&id) {
                        Self::click_fail(
                            out,
                            &usage,
                            format!("{port} is already a member of Vlan{id}"),
                        );
                        return;
                    }
                    if untagged {
                        if u.is_some() {
                            Self::click_fail(
                                out,
                                &usage,
                                format!("{port} is already untagged member!"),
                            );
                            return;
                        }
                        u = Some(id);
                    } else {
                        t.push(id);
                    }
                } else {
                    if u != Some(id) && !t.contains(&id) {
                        Self::click_fail(
                            out,
                            &usage,
                            format!("{port} is not a member of Vlan{id}"),
                        );
                        return;
                    }
                    if u == Some(id) {
                        u = None;
                    }
                    t.retain(|x| *x != id);
                }
                l2.set_membership(u, t);
            }
            ["interface", op @ ("startup" | "shutdown"), spec] => {
                let Some(names) = expand_ifs(spec) else {
                    Self::click_fail(
                        out,
                        &format!("config interface {op} [OPTIONS] <interface_name>"),
                        "Interface name is invalid!!",
                    );
                    return;
                };
                for n in names {
                    match cfg.l2(&n) {
                        Some(l2) => *l2.admin_up = *op == "startup",
                        None => {
                            Self::click_fail(
                                out,
                                &format!("config interface {op} [OPTIONS] <interface_name>"),
                                "Interface name is invalid!!",
                            );
                            return;
                        }
                    }
                }
            }
            ["interface", "mtu", n, m] => {
                let Some(l2) = cfg.l2(n) else {
                    Self::click_fail(
                        out,
                        "config interface mtu [OPTIONS] <interface_name> <interface_mtu>",
                        "Interface name is invalid!!",
                    );
                    return;
                };
                match m.parse::<u32>().ok().filter(|m| (68..=9216).contains(m)) {
                    Some(m) => *l2.mtu = Some(m),
                    None => Self::click_fail(
                        out,
                        "config interface mtu [OPTIONS] <interface_name> <interface_mtu>",
                        "Invalid value for \"<interface_mtu>\"",
                    ),
                }
            }
            ["interface", "description", n, rest @ ..] => {
                let Some(l2) = cfg.l2(n) else {
                    Self::click_fail(
                        out,
                        "config interface description [OPTIONS] <interface_name> <description>",
                        "Interface name is invalid!!",
                    );
                    return;
                };
                *l2.description = rest.join(" ");
            }
            ["interface", "speed" | "fec" | "autoneg" | "ip" | "breakout" | "advertised-speeds", ..] => {
                unmodelled(st, "shell", line)
            }
            ["portchannel", "add", name, ..] => {
                if !name.starts_with("PortChannel") {
                    Self::click_fail(out, "config portchannel add [OPTIONS] <portchannel_name>", format!("{name} is invalid!, name should have prefix 'PortChannel' and suffix '<0-9999>'"));
                    return;
                }
                if cfg.lags.contains_key(*name) {
                    Self::click_fail(
                        out,
                        "config portchannel add [OPTIONS] <portchannel_name>",
                        format!("{name} already exists!"),
                    );
                    return;
                }
                let static_ = a.contains(&"--static");
                cfg.lags.insert(
                    name.to_string(),
                    Lag::new(if static_ { "static" } else { "lacp" }),
                );
            }
            ["portchannel", "del", name] => {
                if !cfg.del_lag(name) {
                    Self::click_fail(
                        out,
                        "config portchannel del [OPTIONS] <portchannel_name>",
                        format!("{name} is not present."),
                    );
                }
            }
            ["portchannel", "member", op @ ("add" | "del"), pc, port] => {
                let usage = format!(
                    "config portchannel member {op} [OPTIONS] <portchannel_name> <port_name>"
                );
                if !cfg.lags.contains_key(*pc) {
                    Self::click_fail(out, &usage, format!("{pc} is not present."));
                    return;
                }
                if !cfg.ports.contains_key(*port) {
                    Self::click_fail(out, &usage, format!("{port} is invalid!"));
                    return;
                }
                if *op == "add" {
                    let mode = cfg
                        .lags
                        .get(*pc)
                        .map_or("lacp".to_string(), |l| l.mode.clone());
                    cfg.join_lag(port, pc, &mode);
                } else {
                    cfg.leave_lag(port);
                }
            }
            ["save", opts @ ..] => {
                if self.faults.db_locked {
                    out.stderr(1, "Error: config save failed: configuration database (CONFIG_DB) is locked by another process");
                    return;
                }
                if self.faults.commit_fail {
                    out.stderr(
                        1,
                        "Error: config save failed: cannot write /etc/sonic/config_db.json",
                    );
                    return;
                }
                if opts.contains(&"-y") || opts.contains(&"--yes") {
                    st.saved = st.running.clone();
                    out.line("Running command: /usr/local/bin/sonic-cfggen -d --print-data > /etc/sonic/config_db.json");
                } else {
                    self.ask = Some(Ask::SonicSave);
                }
            }
            ["reload", opts @ ..] => {
                if opts.contains(&"-y") || opts.contains(&"--yes") {
                    st.running = st.saved.clone();
                } else {
                    self.ask = Some(Ask::SonicReload);
                }
            }
            ["hostname", ..]
            | ["vxlan", ..]
            | ["acl", ..]
            | ["bgp", ..]
            | ["loopback", ..]
            | ["feature", ..]
            | ["ntp", ..]
            | ["syslog", ..] => unmodelled(st, "shell", line),
            [] => out.stderr(0, "Usage: config [OPTIONS] COMMAND [ARGS]..."),
            [w, ..] => {
                let known = ["vlan", "interface", "portchannel", "save", "reload"];
                let bad = if known.contains(w) {
                    a.get(1).copied().unwrap_or(w)
                } else {
                    w
                };
                out.stderr(2, format!("Usage: config [OPTIONS] COMMAND [ARGS]...\nTry \"config -h\" for help.\n\nError: No such command \"{bad}\"."));
            }
        }
    }

    fn sonic_show(&mut self, args: &[String], line: &str, st: &mut DeviceState, out: &mut Out) {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let cfg = &st.running;
        match a.as_slice() {
            ["vlan", "brief"] | ["vlan", "config"] => {
                out.line(
                    "+-----------+--------------+-----------------+----------------+-------------+",
                );
                out.line(
                    "|   VLAN ID | IP Address   | Ports           | Port Tagging   | Proxy ARP   |",
                );
                out.line(
                    "+===========+==============+=================+================+=============+",
                );
                for id in cfg.vlan_ids() {
                    let mut first = true;
                    let mut c = cfg.clone();
                    let names: Vec<String> =
                        cfg.ports.keys().chain(cfg.lags.keys()).cloned().collect();
                    let mut rows = Vec::new();
                    for n in names {
                        if let Some(l2) = c.l2(&n) {
                            let (u, t) = l2.membership();
                            if u == Some(id) {
                                rows.push((n.clone(), "untagged"));
                            } else if t.contains(&id) {
                                rows.push((n.clone(), "tagged"));
                            }
                        }
                    }
                    if rows.is_empty() {
                        out.line(format!("| {id:>9} |              |                 |                | disabled    |"));
                    }
                    for (n, tag) in rows {
                        let vid = if first { id.to_string() } else { String::new() };
                        first = false;
                        out.line(format!(
                            "| {vid:>9} |              | {n:<15} | {tag:<14} | disabled    |"
                        ));
                    }
                    out.line("+-----------+--------------+-----------------+----------------+-------------+");
                }
            }
            ["interfaces", "status", ..] => {
                out.line("  Interface            Lanes    Speed    MTU    FEC    Alias    Vlan    Oper    Admin    Type    Asym PFC");
                out.line("-----------  ---------------  -------  -----  -----  -------  ------  ------  -------  ------  ----------");
                for (n, p) in &cfg.ports {
                    let vlan = match (p.mode.as_deref(), &p.lag) {
                        (_, Some(l)) => l.clone(),
                        (Some("trunk"), _) => "trunk".into(),
                        (Some("access"), _) => "untagged".into(),
                        _ => "routed".into(),
                    };
                    out.line(format!(
                        "{n:>11}  {:>15}  {:>7}  {:>5}  {:>5}  {:>7}  {vlan:>6}  {:>6}  {:>7}  {:>6}  {:>10}",
                        "0,1,2,3",
                        "100G",
                        p.mtu.unwrap_or(9100),
                        "rs",
                        n.replace("Ethernet", "Eth"),
                        "up",
                        if p.admin_up { "up" } else { "down" },
                        "QSFP28",
                        "N/A"
                    ));
                }
            }
            ["runningconfiguration", ..] => {
                let v = serde_json::to_value(cfg).unwrap_or_default();
                out.line(serde_json::to_string_pretty(&v).unwrap_or_default());
            }
            ["version"] => {
                out.line("SONiC Software Version: SONiC.202311 (simulated by mercury-sim)")
            }
            _ => unmodelled(st, "shell", line),
        }
    }

    // ---- Open vSwitch -----------------------------------------------------

    fn ovs_fail(out: &mut Out, msg: impl AsRef<str>) {
        out.stderr(1, format!("ovs-vsctl: {}", msg.as_ref()));
    }

    fn ovs(&mut self, args: &[String], _line: &str, st: &mut DeviceState, out: &mut Out) {
        // Commands separated by `--`; options before the command name.
        let mut cmds: Vec<Vec<String>> = vec![Vec::new()];
        for a in args {
            if a == "--" {
                cmds.push(Vec::new());
            } else if let Some(c) = cmds.last_mut() {
                c.push(a.clone());
            }
        }
        // All-or-nothing like an OVSDB transaction.
        let mut cfg = st.running.clone();
        let mut printed = Out::default();
        for c in cmds {
            let mut may_exist = false;
            let mut if_exists = false;
            let mut rest: Vec<String> = Vec::new();
            let mut it = c.into_iter().peekable();
            while let Some(w) = it.peek() {
                if !w.starts_with('-') {
                    break;
                }
                let w = it.next().unwrap_or_default();
                match w.as_str() {
                    "--may-exist" => may_exist = true,
                    "--if-exists" => if_exists = true,
                    "-t" => {
                        it.next();
                    }
                    x if x.starts_with("--timeout")
                        || x.starts_with("--db")
                        || x == "--no-wait"
                        || x.starts_with("--format")
                        || x.starts_with("--columns")
                        || x == "--bare"
                        || x.starts_with("--data")
                        || x == "--oneline"
                        || x == "--no-headings"
                        || x == "--retry" => {}
                    x => {
                        Self::ovs_fail(out, format!("unrecognized option '{x}'"));
                        return;
                    }
                }
            }
            rest.extend(it);
            if rest.is_empty() {
                continue;
            }
            if let Err(e) = ovs_cmd(&mut cfg, &rest, may_exist, if_exists, &mut printed) {
                Self::ovs_fail(out, e);
                return;
            }
        }
        st.running = cfg.clone();
        st.saved = cfg;
        out.text.push_str(&printed.text);
    }

    fn ip(&mut self, args: &[String], line: &str, st: &mut DeviceState, out: &mut Out) {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let (name, rest): (&str, &[&str]) = match a.as_slice() {
            ["link", "set", "dev", n, rest @ ..] | ["link", "set", n, rest @ ..] => (n, rest),
            _ => {
                unmodelled(st, "shell", line);
                return;
            }
        };
        let Some(p) = st.running.ports.get_mut(name) else {
            out.stderr(1, format!("Cannot find device \"{name}\""));
            return;
        };
        match rest {
            ["up"] => p.admin_up = true,
            ["down"] => p.admin_up = false,
            ["mtu", m] => match m.parse() {
                Ok(m) => p.mtu = Some(m),
                Err(_) => out.stderr(
                    1,
                    format!("Error: argument \"{m}\" is wrong: Invalid \"mtu\" value"),
                ),
            },
            _ => unmodelled(st, "shell", line),
        }
        st.saved = st.running.clone();
    }
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
fn nv_attr_check<'a>(set: bool, attrs: &[&'a str]) -> Result<(), &'a str> {
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
fn nv_if_attr(cfg: &mut Config, n: &str, set: bool, attrs: &[&str]) -> Result<bool, String> {
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
                        let mode = cfg
                            .lags
                            .get(n)
                            .map_or("lacp".to_string(), |l| l.mode.clone());
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
        ["bridge", "domain", "br_default", "access", rest @ ..] => {
            match (set, rest) {
                (true, [v]) => *l2.access_vlan = Some(vlan(v)?),
                (false, _) => *l2.access_vlan = None,
                _ => return Err("Error: Missing argument '<value>'.".into()),
            }
            true
        }
        ["bridge", "domain", "br_default", "untagged", rest @ ..] => {
            match (set, rest) {
                (true, ["none"]) => *l2.native_vlan = None,
                (true, [v]) => *l2.native_vlan = Some(vlan(v)?),
                (false, _) => *l2.native_vlan = None,
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
fn nvue_validate(cfg: &Config) -> Result<(), String> {
    let mut c = cfg.clone();
    let names: Vec<String> = cfg.ports.keys().chain(cfg.lags.keys()).cloned().collect();
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

fn nv_if_json(cfg: &Config, n: &str) -> serde_json::Value {
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

fn print_yamlish(v: &serde_json::Value, indent: usize, out: &mut Out) {
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

fn nv_diff(old: &Config, new: &Config, out: &mut Out) {
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
        let a = nv_if_json(old, &n);
        let b = nv_if_json(new, &n);
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

fn ovs_table(t: &str) -> Option<&'static str> {
    match t.to_ascii_lowercase().as_str() {
        "port" => Some("Port"),
        "interface" => Some("Interface"),
        "bridge" => Some("Bridge"),
        "open_vswitch" => Some("Open_vSwitch"),
        _ => None,
    }
}

fn ovs_port<'a>(cfg: &'a mut Config, table: &str, rec: &str) -> Result<&'a mut Port, String> {
    match cfg.ports.get_mut(rec) {
        Some(p) if p.ovs.is_some() => Ok(p),
        _ => Err(format!("no row \"{rec}\" in table {table}")),
    }
}

fn parse_ovs_list(v: &str) -> Result<Vec<u16>, String> {
    let v = v.trim_matches(|c| c == '[' || c == ']' || c == '"');
    if v.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for x in v.split(',') {
        let n: u16 = x
            .trim()
            .parse()
            .map_err(|_| format!("\"{x}\" is not a valid integer"))?;
        if n > 4095 {
            return Err(format!(
                "constraint violation: {n} is not in the valid range 0 to 4095 (inclusive)"
            ));
        }
        out.push(n);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

fn ovs_set_col(p: &mut Port, table: &str, col: &str, val: &str) -> Result<(), String> {
    let o = p.ovs.get_or_insert_with(OvsPort::default);
    let val_clean = val.trim_matches('"').to_string();
    if let Some((map, key)) = col.split_once(':') {
        let key = key.trim_matches('"').to_string();
        match (table, map) {
            ("Port", "external_ids") => {
                o.external_ids.insert(key, val_clean);
            }
            ("Interface", "external_ids") => {
                o.iface_external_ids.insert(key, val_clean);
            }
            (_, "other_config" | "options") => {
                o.other.insert(format!("{table}.{col}"), val_clean);
            }
            _ => {
                return Err(format!(
                    "{table} does not contain a column whose name matches \"{map}\""
                ))
            }
        }
        return Ok(());
    }
    match (table, col) {
        ("Port", "tag") => {
            let t: u16 = val_clean
                .parse()
                .map_err(|_| format!("\"{val}\" is not a valid integer"))?;
            if t > 4095 {
                return Err(format!(
                    "constraint violation: {t} is not in the valid range 0 to 4095 (inclusive)"
                ));
            }
            o.tag = Some(t);
        }
        ("Port", "trunks") => o.trunks = parse_ovs_list(val)?,
        ("Port", "vlan_mode") => {
            if !matches!(
                val_clean.as_str(),
                "access" | "trunk" | "native-tagged" | "native-untagged" | "dot1q-tunnel"
            ) {
                return Err(format!("constraint violation: {val_clean} is not one of the allowed values ([access, dot1q-tunnel, native-tagged, native-untagged, trunk])"));
            }
            o.vlan_mode = Some(val_clean);
        }
        ("Interface", "mtu_request") => {
            p.mtu = Some(
                val_clean
                    .parse()
                    .map_err(|_| format!("\"{val}\" is not a valid integer"))?,
            );
        }
        ("Interface", "admin_state") => p.admin_up = val_clean == "up",
        (
            "Port" | "Interface",
            "external_ids" | "other_config" | "options" | "type" | "bond_mode" | "lacp" | "qos"
            | "name" | "ofport_request" | "mac",
        ) => {
            o.other.insert(format!("{table}.{col}"), val_clean);
        }
        _ => {
            return Err(format!(
                "{table} does not contain a column whose name matches \"{col}\""
            ))
        }
    }
    ovs_norm(p);
    Ok(())
}

fn ovs_cmd(
    cfg: &mut Config,
    c: &[String],
    may_exist: bool,
    if_exists: bool,
    out: &mut Out,
) -> Result<(), String> {
    let a: Vec<&str> = c.iter().map(String::as_str).collect();
    let bridges = ovs_bridges(cfg);
    match a.as_slice() {
        ["add-br", br, ..] => {
            if bridges.iter().any(|b| b == br) {
                if !may_exist {
                    return Err(format!("cannot create a bridge named {br} because a bridge named {br} already exists"));
                }
                return Ok(());
            }
            let mut b = bridges;
            b.push(br.to_string());
            set_ovs_bridges(cfg, b);
        }
        ["del-br", br] => {
            if !bridges.iter().any(|b| b == br) {
                if if_exists {
                    return Ok(());
                }
                return Err(format!("no bridge named {br}"));
            }
            cfg.ports
                .retain(|_, p| p.ovs.as_ref().is_none_or(|o| o.bridge != *br));
            set_ovs_bridges(cfg, bridges.into_iter().filter(|b| b != br).collect());
        }
        ["list-br"] => {
            for b in bridges {
                out.line(b);
            }
        }
        ["br-exists", br] => {
            if !bridges.iter().any(|b| b == br) {
                out.status = 2;
            }
        }
        ["add-port", br, port, cols @ ..] => {
            if !bridges.iter().any(|b| b == br) {
                return Err(format!("no bridge named {br}"));
            }
            if let Some(p) = cfg.ports.get(*port).and_then(|p| p.ovs.as_ref()) {
                if !may_exist {
                    return Err(format!("cannot create a port named {port} because a port named {port} already exists on bridge {}", p.bridge));
                }
                if p.bridge != *br {
                    return Err(format!("\"--may-exist add-port {br} {port}\" but {port} is actually attached to bridge {}", p.bridge));
                }
                return Ok(());
            }
            let mut p = Port::new(true);
            p.ovs = Some(OvsPort {
                bridge: br.to_string(),
                ..Default::default()
            });
            for kv in cols {
                let (k, v) = kv.split_once('=').ok_or_else(|| {
                    format!("{kv}: argument does not end in \"=\" followed by a value.")
                })?;
                ovs_set_col(&mut p, "Port", k, v)?;
            }
            cfg.ports.insert(port.to_string(), p);
        }
        ["del-port", rest @ ..] => {
            let port = match rest {
                [_, p] | [p] => *p,
                _ => return Err("'del-port' command requires at least 1 arguments".into()),
            };
            if cfg.ports.get(port).and_then(|p| p.ovs.as_ref()).is_none() {
                if if_exists {
                    return Ok(());
                }
                return Err(format!("no port named {port}"));
            }
            cfg.ports.remove(port);
        }
        ["list-ports", br] => {
            if !bridges.iter().any(|b| b == br) {
                return Err(format!("no bridge named {br}"));
            }
            for (n, p) in &cfg.ports {
                if p.ovs.as_ref().is_some_and(|o| o.bridge == *br) {
                    out.line(n);
                }
            }
        }
        ["port-to-br", port] => match cfg.ports.get(*port).and_then(|p| p.ovs.as_ref()) {
            Some(o) => out.line(&o.bridge),
            None => return Err(format!("no port named {port}")),
        },
        [verb @ ("set" | "clear" | "add" | "remove" | "get"), table, rec, rest @ ..] => {
            let Some(table) = ovs_table(table) else {
                return Err(format!("unknown table \"{table}\""));
            };
            if table == "Bridge" || table == "Open_vSwitch" {
                if table == "Bridge" && !bridges.iter().any(|b| b == rec) {
                    return Err(format!("no row \"{rec}\" in table Bridge"));
                }
                return Ok(());
            }
            let p = match ovs_port(cfg, table, rec) {
                Ok(p) => p,
                Err(_) if if_exists => return Ok(()),
                Err(e) => return Err(e),
            };
            match *verb {
                "set" => {
                    for kv in rest {
                        let (k, v) = kv.split_once('=').ok_or_else(|| {
                            format!("{kv}: argument does not end in \"=\" followed by a value.")
                        })?;
                        ovs_set_col(p, table, k, v)?;
                    }
                }
                "clear" => {
                    let o = p.ovs.get_or_insert_with(OvsPort::default);
                    for col in rest {
                        match (table, *col) {
                            ("Port", "tag") => o.tag = None,
                            ("Port", "trunks") => o.trunks.clear(),
                            ("Port", "vlan_mode") => o.vlan_mode = None,
                            ("Port", "external_ids") => o.external_ids.clear(),
                            ("Interface", "external_ids") => o.iface_external_ids.clear(),
                            ("Interface", "mtu_request") => p.mtu = None,
                            (_, "other_config" | "options" | "qos") => {}
                            (_, c) => {
                                return Err(format!(
                                    "{table} does not contain a column whose name matches \"{c}\""
                                ))
                            }
                        }
                    }
                    ovs_norm(p);
                }
                "add" | "remove" => {
                    let [col, vals @ ..] = rest else {
                        return Err(format!("'{verb}' command requires at least 4 arguments"));
                    };
                    let o = p.ovs.get_or_insert_with(OvsPort::default);
                    match (table, *col) {
                        ("Port", "trunks") => {
                            for v in vals {
                                let ids = parse_ovs_list(v)?;
                                if *verb == "add" {
                                    o.trunks.extend(ids);
                                    o.trunks.sort_unstable();
                                    o.trunks.dedup();
                                } else {
                                    o.trunks.retain(|x| !ids.contains(x));
                                }
                            }
                        }
                        (_, "external_ids") => {
                            let map = if table == "Port" {
                                &mut o.external_ids
                            } else {
                                &mut o.iface_external_ids
                            };
                            for v in vals {
                                match v.split_once('=') {
                                    Some((k, val)) if *verb == "add" => {
                                        map.entry(k.to_string())
                                            .or_insert_with(|| val.trim_matches('"').to_string());
                                    }
                                    _ if *verb == "remove" => {
                                        let k = v.split_once('=').map_or(*v, |x| x.0);
                                        map.remove(k);
                                    }
                                    _ => {
                                        return Err(format!(
                                        "{v}: argument does not end in \"=\" followed by a value."
                                    ))
                                    }
                                }
                            }
                        }
                        (_, c) => {
                            return Err(format!(
                                "{table} does not contain a column whose name matches \"{c}\""
                            ))
                        }
                    }
                    ovs_norm(p);
                }
                _ => {
                    // get
                    let o = p.ovs.clone().unwrap_or_default();
                    for col in rest {
                        let v = match (table, *col) {
                            ("Port", "tag") => o.tag.map_or("[]".to_string(), |t| t.to_string()),
                            ("Port", "trunks") => format!(
                                "[{}]",
                                o.trunks
                                    .iter()
                                    .map(|x| x.to_string())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                            ("Port", "vlan_mode") => {
                                o.vlan_mode.clone().unwrap_or_else(|| "[]".into())
                            }
                            ("Port", "external_ids") => fmt_map(&o.external_ids),
                            ("Interface", "external_ids") => fmt_map(&o.iface_external_ids),
                            ("Port" | "Interface", "name") => rec.to_string(),
                            (_, c) if c.contains(':') => {
                                let (m, k) = c.split_once(':').unwrap_or((c, ""));
                                let map = if table == "Port" {
                                    &o.external_ids
                                } else {
                                    &o.iface_external_ids
                                };
                                match (m, map.get(k)) {
                                    ("external_ids", Some(v)) => format!("\"{v}\""),
                                    _ => {
                                        return Err(format!(
                                            "no key \"{k}\" in {table} record \"{rec}\" column {m}"
                                        ))
                                    }
                                }
                            }
                            (_, c) => {
                                return Err(format!(
                                    "{table} does not contain a column whose name matches \"{c}\""
                                ))
                            }
                        };
                        out.line(v);
                    }
                }
            }
        }
        ["list", table, recs @ ..] => {
            let Some(table) = ovs_table(table) else {
                return Err(format!("unknown table \"{table}\""));
            };
            let names: Vec<String> = if recs.is_empty() {
                cfg.ports
                    .iter()
                    .filter(|(_, p)| p.ovs.is_some())
                    .map(|(n, _)| n.clone())
                    .collect()
            } else {
                recs.iter().map(|s| s.to_string()).collect()
            };
            for n in names {
                let p = ovs_port(cfg, table, &n)?;
                let o = p.ovs.clone().unwrap_or_default();
                out.line(format!("{:<17}: {n}", "name"));
                if table == "Port" {
                    out.line(format!(
                        "{:<17}: {}",
                        "tag",
                        o.tag.map_or("[]".into(), |t| t.to_string())
                    ));
                    out.line(format!(
                        "{:<17}: [{}]",
                        "trunks",
                        o.trunks
                            .iter()
                            .map(|x| x.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                    out.line(format!(
                        "{:<17}: {}",
                        "vlan_mode",
                        o.vlan_mode.clone().unwrap_or_else(|| "[]".into())
                    ));
                    out.line(format!(
                        "{:<17}: {}",
                        "external_ids",
                        fmt_map(&o.external_ids)
                    ));
                } else {
                    out.line(format!(
                        "{:<17}: {}",
                        "external_ids",
                        fmt_map(&o.iface_external_ids)
                    ));
                    out.line(format!(
                        "{:<17}: {}",
                        "mtu_request",
                        p.mtu.map_or("[]".into(), |m| m.to_string())
                    ));
                }
                out.line("");
            }
        }
        ["show"] => {
            out.line("6f1c1a9e-0d0b-4c5e-9a57-6d9f3c1f0a01");
            for b in &bridges {
                out.line(format!("    Bridge {b}"));
                for (n, p) in &cfg.ports {
                    if let Some(o) = p.ovs.as_ref().filter(|o| o.bridge == *b) {
                        out.line(format!("        Port {n}"));
                        if let Some(t) = o.tag {
                            out.line(format!("            tag: {t}"));
                        }
                        if !o.trunks.is_empty() {
                            out.line(format!(
                                "            trunks: [{}]",
                                o.trunks
                                    .iter()
                                    .map(|x| x.to_string())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ));
                        }
                        out.line(format!("            Interface {n}"));
                    }
                }
            }
            out.line("    ovs_version: \"3.1.0\"");
        }
        [w, ..] => return Err(format!("unknown command '{w}'; use --help for help")),
        [] => {}
    }
    Ok(())
}

fn fmt_map(m: &BTreeMap<String, String>) -> String {
    let parts: Vec<String> = m.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    format!("{{{}}}", parts.join(", "))
}

impl Cli for Shell {
    fn banner(&self) -> String {
        match self.p {
            Cumulus | CumulusNvue => "Linux leaf 5.10.0-cl-1-amd64 #1 SMP Debian 5.10.189-1+cl5.9.1u5 x86_64\n\nWelcome to NVIDIA Cumulus (R) Linux (R)\n\n".into(),
            Sonic | DellEnterpriseSonic => "Linux sonic 6.1.0-11-2-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.38-4 x86_64\nYou are on\n  ____   ___  _   _ _  ____\n / ___| / _ \\| \\ | (_)/ ___|\n \\___ \\| | | |  \\| | | |\n  ___) | |_| | |\\  | | |___\n |____/ \\___/|_| \\_|_|\\____|\n\n-- Software for Open Networking in the Cloud --\n\n".into(),
            _ => String::new(),
        }
    }

    fn prompt(&self) -> String {
        match self.ask {
            Some(Ask::SonicSave) => return "Existing files will be overwritten, continue? [y/N]: ".into(),
            Some(Ask::SonicReload) => return "Clear current config and reload config in config_db format from the default config file(s) ? [y/N]: ".into(),
            None => {}
        }
        match self.p {
            Cumulus | CumulusNvue => format!("{}@{}:mgmt:~$ ", self.user, self.host),
            OvsLinux if self.user == "root" => format!("root@{}:~# ", self.host),
            _ => format!("{}@{}:~$ ", self.user, self.host),
        }
    }

    fn mode(&self) -> String {
        if self.ask.is_some() {
            "question".into()
        } else {
            "shell".into()
        }
    }

    fn handle(&mut self, line: &str, st: &mut DeviceState, out: &mut Out) -> Flow {
        if let Some(ask) = self.ask.take() {
            let yes = matches!(line.trim(), "y" | "Y" | "yes");
            if yes {
                match ask {
                    Ask::SonicSave => {
                        st.saved = st.running.clone();
                        out.line("Running command: /usr/local/bin/sonic-cfggen -d --print-data > /etc/sonic/config_db.json");
                    }
                    Ask::SonicReload => st.running = st.saved.clone(),
                }
                self.last = 0;
            } else {
                out.stderr(1, "Aborted!");
                self.last = 1;
            }
            return Flow::Continue;
        }
        let words = shell_words(line);
        if words.is_empty() {
            return Flow::Continue;
        }
        let f = self.run(&words, line, st, out);
        self.last = out.status;
        f
    }

    fn reject(&mut self, line: &str, out: &mut Out) {
        let w = shell_words(line);
        let msg = match self.p {
            CumulusNvue => format!("Error: Invalid config: '{}' was refused", line.trim()),
            Cumulus => "ERROR: Command not found.".to_string(),
            OvsLinux => format!(
                "ovs-vsctl: unknown command '{}'; use --help for help",
                w.get(1).cloned().unwrap_or_default()
            ),
            _ => format!(
                "Error: No such command \"{}\".",
                w.get(1).cloned().unwrap_or_default()
            ),
        };
        out.stderr(
            if self.p == CumulusNvue || self.p == Cumulus || self.p == OvsLinux {
                1
            } else {
                2
            },
            msg,
        );
        self.last = out.status;
    }

    fn asking(&self) -> bool {
        self.ask.is_some()
    }

    fn is_shell(&self) -> bool {
        true
    }
}
