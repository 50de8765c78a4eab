//! Pluribus Netvisor ONE CLI: `CLI (network-admin@host) > `, hyphenated
//! commands with keyword arguments (`vlan-create id 120 scope fabric ...`,
//! `vlan-port-add`, `vlan-port-remove`, `port-vlan-add`, `port-config-modify`,
//! `trunk-create`), changes take effect (and persist) immediately.

use crate::cli::{unmodelled, Cli, Env, Flow, Out};
use crate::model::{DeviceState, Lag};
use crate::words::{parse_vlan, parse_vlan_list, shell_words, vlan_ranges};
use std::collections::BTreeMap;

/// One Netvisor session.
pub struct Netvisor {
    host: String,
    user: String,
    paging: bool,
}

/// Commands and the argument keywords they accept (flags take no value).
fn spec(cmd: &str) -> Option<(&'static [&'static str], &'static [&'static str])> {
    Some(match cmd {
        "vlan-create" => (
            &[
                "id",
                "scope",
                "ports",
                "description",
                "name",
                "untagged-ports",
                "vxlan",
                "stats",
            ],
            &["auto-vxlan", "no-auto-vxlan"],
        ),
        "vlan-delete" => (&["id"], &[]),
        "vlan-modify" => (&["id", "description", "name"], &[]),
        "vlan-port-add" => (
            &["vlan-id", "ports", "tagged", "untagged"],
            &["tagged", "untagged"],
        ),
        "vlan-port-remove" => (&["vlan-id", "vlan-range", "ports"], &[]),
        "port-vlan-add" => (&["port", "untagged-vlan", "vlans"], &[]),
        "port-vlan-remove" => (&["port", "vlans", "untagged-vlan"], &[]),
        "port-config-modify" => (
            &["port", "description", "speed", "mtu"],
            &[
                "enable",
                "disable",
                "jumbo",
                "no-jumbo",
                "autoneg",
                "no-autoneg",
            ],
        ),
        "trunk-create" => (&["name", "ports", "lacp-mode"], &["enable", "disable"]),
        "trunk-modify" => (&["name", "ports", "lacp-mode"], &["enable", "disable"]),
        "trunk-delete" => (&["name"], &[]),
        "vlan-show" | "port-config-show" | "trunk-show" | "switch-setup-show" | "port-show"
        | "vlan-port-show" | "lldp-show" | "port-vlan-show" => (
            &["format", "id", "port", "ports", "layout", "parsable-delim"],
            &[],
        ),
        "pager" => (&[], &["on", "off"]),
        _ => return None,
    })
}

fn ports(s: &str) -> Option<Vec<String>> {
    let ids = parse_vlan_list(s, &[','], "-")?;
    Some(ids.into_iter().map(|i| i.to_string()).collect())
}

impl Netvisor {
    /// New session.
    pub fn new(env: &Env) -> Netvisor {
        Netvisor {
            host: env.hostname.clone(),
            user: env.username.clone(),
            paging: true,
        }
    }

    fn run(&mut self, words: &[String], line: &str, st: &mut DeviceState, out: &mut Out) -> Flow {
        let mut w: Vec<&str> = words.iter().map(String::as_str).collect();
        while matches!(w.first(), Some(&"switch-local"))
            || (w.first() == Some(&"switch") && w.len() > 2)
        {
            w.drain(..if w[0] == "switch" { 2 } else { 1 });
        }
        if w.first() == Some(&"cli") {
            // `cli --quiet -e <command>` / `cli --quiet <command>`
            w.retain(|x| !x.starts_with('-'));
            w.remove(0);
        }
        let Some(cmd) = w.first().copied() else {
            return Flow::Continue;
        };
        if matches!(cmd, "exit" | "quit") {
            return Flow::Exit(0);
        }
        let Some((kws, flags)) = spec(cmd) else {
            out.fail(format!("{cmd}: command not found"));
            return Flow::Continue;
        };
        let mut args: BTreeMap<&str, String> = BTreeMap::new();
        let mut fl: Vec<&str> = Vec::new();
        let mut i = 1;
        while i < w.len() {
            let k = w[i];
            if flags.contains(&k)
                && !(kws.contains(&k)
                    && w.get(i + 1)
                        .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit() || c == ',')))
            {
                fl.push(k);
                i += 1;
            } else if kws.contains(&k) {
                let Some(v) = w.get(i + 1) else {
                    out.fail(format!("{cmd}: argument '{k}' requires a value"));
                    return Flow::Continue;
                };
                args.insert(k, v.to_string());
                i += 2;
            } else {
                out.fail(format!("{cmd}: unknown argument '{k}'"));
                return Flow::Continue;
            }
        }
        let need = |k: &str, out: &mut Out| -> Option<String> {
            let v = args.get(k).cloned();
            if v.is_none() {
                out.fail(format!("{cmd}: argument '{k}' is required"));
            }
            v
        };
        // A required port list argument (`ports 1,5-8`).
        let need_ports = |k: &str, out: &mut Out| -> Option<Vec<String>> {
            let p = need(k, out)?;
            let names = ports(&p);
            if names.is_none() {
                out.fail(format!("{cmd}: invalid port list '{p}'"));
            }
            names
        };
        let cfg = &mut st.running;
        match cmd {
            "pager" => self.paging = !fl.contains(&"off"),
            "vlan-create" => {
                let Some(id) = need("id", out) else {
                    return Flow::Continue;
                };
                let Some(id) = parse_vlan(&id) else {
                    out.fail(format!("vlan-create: id: invalid value '{id}' (1..4094)"));
                    return Flow::Continue;
                };
                if need("scope", out).is_none() {
                    return Flow::Continue;
                }
                if !cfg.add_vlan(id) {
                    out.fail(format!("vlan-create: vlan {id} already exists"));
                    return Flow::Continue;
                }
                cfg.vlan_mut(id).name = args
                    .get("description")
                    .or(args.get("name"))
                    .cloned()
                    .unwrap_or_default();
                // Without `ports`, the VLAN is created on every port — why NGS (and
                // Pluribus's own tooling) always pass `ports none`.
                let every: Vec<String> = cfg.ports.keys().cloned().collect();
                let members = match args.get("ports").map(String::as_str) {
                    None => Some(every),
                    Some("none") => None,
                    Some(p) => ports(p),
                };
                let scope = args.get("scope").cloned().unwrap_or_default();
                let vxlan = fl.contains(&"auto-vxlan");
                let nv = cfg
                    .extra
                    .entry("netvisor".to_string())
                    .or_insert_with(|| serde_json::json!({}));
                nv[id.to_string()] = serde_json::json!({"scope": scope, "auto_vxlan": vxlan});
                if let Some(list) = members {
                    for n in list {
                        if let Some(mut l2) = cfg.l2(&n) {
                            let (u, mut t) = l2.membership();
                            t.push(id);
                            l2.set_membership(u, t);
                        }
                    }
                }
                out.line(format!("Vlans created: {id}"));
            }
            "vlan-delete" => {
                let Some(id) = need("id", out) else {
                    return Flow::Continue;
                };
                match parse_vlan(&id) {
                    Some(v) if cfg.del_vlan(v) => {}
                    _ => out.fail(format!("vlan-delete: vlan {id} not found")),
                }
            }
            "vlan-modify" => {
                let Some(id) = need("id", out).and_then(|i| parse_vlan(&i)) else {
                    return Flow::Continue;
                };
                if let Some(d) = args.get("description").or(args.get("name")) {
                    cfg.vlan_mut(id).name = d.clone();
                }
            }
            "vlan-port-add" | "vlan-port-remove" | "port-vlan-add" | "port-vlan-remove" => {
                let pkey = if cmd.starts_with("vlan") {
                    "ports"
                } else {
                    "port"
                };
                let Some(names) = need_ports(pkey, out) else {
                    return Flow::Continue;
                };
                if let Some(bad) = names.iter().find(|n| !cfg.has_if(n)) {
                    out.fail(format!("{cmd}: port {bad} not found"));
                    return Flow::Continue;
                }
                let vlans: Vec<u16> = match cmd {
                    "vlan-port-add" => {
                        let Some(v) = need("vlan-id", out).and_then(|v| parse_vlan(&v)) else {
                            return Flow::Continue;
                        };
                        vec![v]
                    }
                    "vlan-port-remove" => match (args.get("vlan-id"), args.get("vlan-range")) {
                        (Some(v), _) => parse_vlan(v).into_iter().collect(),
                        (None, Some(r)) if r == "all" => (1..=4094).collect(),
                        (None, Some(r)) => parse_vlan_list(r, &[','], "-").unwrap_or_default(),
                        _ => {
                            out.fail(format!(
                                "{cmd}: argument 'vlan-id' or 'vlan-range' is required"
                            ));
                            return Flow::Continue;
                        }
                    },
                    _ => args
                        .get("vlans")
                        .and_then(|v| parse_vlan_list(v, &[','], "-"))
                        .unwrap_or_default(),
                };
                let untagged_vlan = args.get("untagged-vlan").and_then(|v| parse_vlan(v));
                for v in vlans.iter().chain(untagged_vlan.iter()) {
                    if matches!(cmd, "vlan-port-add" | "port-vlan-add") && !cfg.has_vlan(*v) {
                        out.fail(format!("{cmd}: vlan {v} not found"));
                        return Flow::Continue;
                    }
                }
                for n in names {
                    let Some(mut l2) = cfg.l2(&n) else { continue };
                    let (mut u, mut t) = l2.membership();
                    match cmd {
                        "vlan-port-add" => {
                            if fl.contains(&"untagged") || args.contains_key("untagged") {
                                u = vlans.first().copied();
                            } else {
                                t.extend(vlans.iter().copied());
                            }
                        }
                        "port-vlan-add" => {
                            if let Some(x) = untagged_vlan {
                                u = Some(x);
                            }
                            t.extend(vlans.iter().copied());
                        }
                        _ => {
                            t.retain(|x| !vlans.contains(x));
                            if u.is_some_and(|x| vlans.contains(&x))
                                || untagged_vlan.is_some_and(|x| Some(x) == u)
                            {
                                u = None;
                            }
                        }
                    }
                    l2.set_membership(u, t);
                }
            }
            "port-config-modify" => {
                let Some(names) = need_ports("port", out) else {
                    return Flow::Continue;
                };
                for n in names {
                    let Some(l2) = cfg.l2(&n) else {
                        out.fail(format!("{cmd}: port {n} not found"));
                        return Flow::Continue;
                    };
                    if fl.contains(&"enable") {
                        *l2.admin_up = true;
                    }
                    if fl.contains(&"disable") {
                        *l2.admin_up = false;
                    }
                    if let Some(d) = args.get("description") {
                        *l2.description = d.clone();
                    }
                    if fl.contains(&"jumbo") {
                        *l2.mtu = Some(9216);
                    }
                    if fl.contains(&"no-jumbo") {
                        *l2.mtu = None;
                    }
                }
            }
            "trunk-create" | "trunk-modify" => {
                let Some(name) = need("name", out) else {
                    return Flow::Continue;
                };
                if cmd == "trunk-create" && cfg.lags.contains_key(&name) {
                    out.fail(format!("trunk-create: trunk {name} already exists"));
                    return Flow::Continue;
                }
                if cmd == "trunk-modify" && !cfg.lags.contains_key(&name) {
                    out.fail(format!("trunk-modify: trunk {name} not found"));
                    return Flow::Continue;
                }
                let mode = match args.get("lacp-mode").map(String::as_str) {
                    Some("active" | "passive") => "lacp",
                    Some(_) => "static",
                    None => cfg.lag_lacp_or_static(&name),
                }
                .to_string();
                cfg.lags
                    .entry(name.clone())
                    .or_insert_with(|| Lag::new(&mode))
                    .mode = mode.clone();
                if let Some(p) = args.get("ports") {
                    let old = cfg
                        .lags
                        .get(&name)
                        .map(|l| l.members.clone())
                        .unwrap_or_default();
                    for m in old {
                        cfg.leave_lag(&m);
                    }
                    for m in ports(p).unwrap_or_default() {
                        cfg.join_lag(&m, &name, &mode);
                    }
                }
            }
            "trunk-delete" => {
                let Some(name) = need("name", out) else {
                    return Flow::Continue;
                };
                if !cfg.del_lag(&name) {
                    out.fail(format!("trunk-delete: trunk {name} not found"));
                }
            }
            "port-vlan-show" => {
                // The fields asked for (`format a,b,...`) of each port, one row each;
                // `parsable-delim D`: no heading, fields joined by D (how Pluribus's own
                // tooling and third-party drivers read it).
                let fields: Vec<String> = args
                    .get("format")
                    .map(|f| f.split(',').map(str::to_string).collect())
                    .unwrap_or_else(|| vec!["switch".into(), "port".into(), "vlans".into()]);
                let want = match args.get("ports").or(args.get("port")) {
                    Some(p) => match ports(p) {
                        Some(v) => Some(v),
                        None => {
                            out.fail(format!("port-vlan-show: invalid port list '{p}'"));
                            return Flow::Continue;
                        }
                    },
                    None => None,
                };
                let delim = args.get("parsable-delim").cloned();
                if delim.is_none() {
                    out.line(fields.join("  "));
                }
                let mut c = cfg.clone();
                let names: Vec<String> = cfg.ports.keys().cloned().collect();
                for n in names {
                    if want.as_ref().is_some_and(|w| !w.contains(&n)) {
                        continue;
                    }
                    let Some(l2) = c.l2(&n) else { continue };
                    let (u, mut tagged) = l2.membership();
                    tagged.extend(u);
                    tagged.sort_unstable();
                    tagged.dedup();
                    let list = if tagged.is_empty() {
                        "none".to_string()
                    } else {
                        vlan_ranges(&tagged, ",", "-")
                    };
                    let row: Vec<String> = fields
                        .iter()
                        .map(|f| match f.as_str() {
                            "switch" => self.host.clone(),
                            "port" => n.clone(),
                            "vlans" => list.clone(),
                            "untagged-vlan" => u.map_or("none".into(), |v| v.to_string()),
                            _ => String::new(),
                        })
                        .collect();
                    out.line(row.join(delim.as_deref().unwrap_or("  ")));
                }
            }
            "vlan-show" => {
                out.line("switch  id   type  vxlan scope  name  active  ports");
                for id in cfg.vlan_ids() {
                    let name = cfg.vlans[&id.to_string()].name.clone();
                    out.line(format!(
                        "{:<7} {id:<4} public 0   fabric {name:<5} yes    none",
                        self.host
                    ));
                }
            }
            _ => unmodelled(st, "cli", line),
        }
        Flow::Continue
    }
}

impl Cli for Netvisor {
    fn prompt(&self) -> String {
        format!("CLI ({}@{}) > ", self.user, self.host)
    }

    fn mode_name(&self) -> String {
        "cli".into()
    }

    fn handle(&mut self, line: &str, st: &mut DeviceState, out: &mut Out) -> Flow {
        let w = shell_words(line);
        let f = self.run(&w, line, st, out);
        // Netvisor persists every change itself: there is no separate save.
        st.saved = st.running.clone();
        f
    }

    fn reject(&mut self, line: &str, out: &mut Out) {
        let w = shell_words(line);
        out.fail(format!(
            "{}: unknown argument '{}'",
            w.first().cloned().unwrap_or_default(),
            w.last().cloned().unwrap_or_default()
        ));
    }

    fn pager(&self) -> Option<(usize, &'static str)> {
        self.paging.then_some((24, "--More--"))
    }

    fn exec_context(&mut self) {
        self.paging = false;
    }
}
