//! Nokia SR Linux: two-line prompt `--{ running }--[  ]--` / `A:host# `,
//! `enter candidate [private]`, absolute `set / ...` / `delete / ...` paths kept
//! as flat statements (in the config's `extra.srl`), `commit now|stay|save`,
//! `discard now|stay`, `save startup`. Ports, VLANs (mac-vrf network-instances)
//! and LAGs of the generic model are derived from the statements.

use crate::cli::{unmodelled, Cli, Env, Flow, Out};
use crate::model::{Config, DeviceState, Lag};
use crate::words::{parse_vlan, shell_words};

/// One SR Linux session.
pub struct Srl {
    host: String,
    faults: crate::faults::Faults,
    cand: Option<Config>,
    private: bool,
}

const TOPS: &[&str] = &[
    "acl",
    "bfd",
    "interface",
    "network-instance",
    "platform",
    "qos",
    "routing-policy",
    "system",
    "tunnel-interface",
];

fn flat(cfg: &Config) -> Vec<Vec<String>> {
    cfg.extra
        .get("srl")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default()
}

/// Leaves whose last token is a value (a new `set` replaces the old value).
fn is_leaf(path: &[String]) -> bool {
    let leaf = [
        "admin-state",
        "description",
        "mtu",
        "vlan-tagging",
        "type",
        "vlan-id",
        "lag-type",
        "aggregate-id",
        "lacp-mode",
        "member-speed",
        "vni",
        "evi",
        "ecmp",
        "export-rt",
        "import-rt",
    ];
    path.len() >= 2 && leaf.contains(&path[path.len() - 2].as_str())
}

/// Rebuild the generic model from the flat statements.
fn derive(cfg: &mut Config, inventory: &[String]) {
    let st = flat(cfg);
    let get = |prefix: &[&str]| -> Vec<Vec<String>> {
        st.iter()
            .filter(|p| {
                p.len() > prefix.len()
                    && prefix
                        .iter()
                        .zip(p.iter())
                        .all(|(a, b)| *a == "*" || a == b)
            })
            .cloned()
            .collect()
    };
    cfg.vlans.clear();
    cfg.lags.clear();
    for n in inventory {
        if let Some(p) = cfg.ports.get_mut(n) {
            let keep = p.clone();
            *p = crate::model::Port::new(true);
            p.admin_up = keep.admin_up;
        }
    }
    // mac-vrf instances → VLANs
    let mut nis: Vec<(String, u16, String)> = Vec::new();
    for s in get(&["network-instance", "*", "type"]) {
        if s.get(3).map(String::as_str) == Some("mac-vrf") {
            let name = s[1].clone();
            let digits: String = name
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_digit())
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            let desc = st
                .iter()
                .find(|p| {
                    p.len() == 4
                        && p[0] == "network-instance"
                        && p[1] == name
                        && p[2] == "description"
                })
                .map(|p| p[3].clone())
                .unwrap_or_default();
            if let Some(id) = parse_vlan(&digits) {
                nis.push((name, id, desc));
            }
        }
    }
    for (name, id, desc) in &nis {
        cfg.vlan_mut(*id).name = if desc.is_empty() {
            name.clone()
        } else {
            desc.clone()
        };
    }
    // LAGs
    for s in get(&["interface", "*", "lag", "lag-type"]) {
        if s[1].starts_with("lag") {
            cfg.lags.insert(
                s[1].clone(),
                Lag::new(if s[4] == "lacp" { "lacp" } else { "static" }),
            );
        }
    }
    for s in st
        .iter()
        .filter(|p| p.len() == 2 && p[0] == "interface" && p[1].starts_with("lag"))
    {
        cfg.lags
            .entry(s[1].clone())
            .or_insert_with(|| Lag::new("static"));
    }
    for s in get(&["interface", "*", "ethernet", "aggregate-id"]) {
        let lag = s[4].clone();
        let mode = cfg.lag_mode(&lag, "static");
        cfg.join_lag(&s[1], &lag, &mode);
    }
    // per-interface leaves and membership
    let names = cfg.if_names();
    for n in names {
        let mine: Vec<&Vec<String>> = st
            .iter()
            .filter(|p| p.len() >= 3 && p[0] == "interface" && p[1] == n)
            .collect();
        let mut untagged = None;
        let mut tagged = Vec::new();
        for (ni, id, _) in &nis {
            for s in st.iter().filter(|p| {
                p.len() == 4 && p[0] == "network-instance" && &p[1] == ni && p[2] == "interface"
            }) {
                let Some((ifn, sub)) = s[3].rsplit_once('.') else {
                    continue;
                };
                if ifn != n {
                    continue;
                }
                let encap = mine
                    .iter()
                    .find(|p| {
                        p.len() >= 9
                            && p[2] == "subinterface"
                            && p[3] == sub
                            && p[4] == "vlan"
                            && p[5] == "encap"
                            && p[6] == "single-tagged"
                            && p[7] == "vlan-id"
                    })
                    .and_then(|p| parse_vlan(&p[8]));
                match encap {
                    Some(v) => tagged.push(v.max(*id).min(v)),
                    None => untagged = Some(*id),
                }
            }
        }
        let Some(mut l2) = cfg.l2(&n) else { continue };
        for s in &mine {
            match (s[2].as_str(), s.get(3).map(String::as_str)) {
                ("admin-state", Some(v)) => *l2.admin_up = v == "enable",
                ("description", Some(v)) => *l2.description = v.to_string(),
                ("mtu", Some(v)) => *l2.mtu = v.parse().ok(),
                _ => {}
            }
        }
        l2.set_membership(untagged, tagged);
    }
}

/// Commit-time validation of the EVPN/VXLAN objects an L2 EVPN service is built from
/// (SR Linux data model, as the learn-srlinux L2 EVPN tutorial configures it): a mac-vrf's
/// `vxlan-interface tunnel.N` must exist as a bridged `tunnel-interface` vxlan-interface
/// with an ingress VNI, and the mac-vrf's `bgp-evpn` must name one of the mac-vrf's own
/// vxlan-interfaces and carry an `evi`. A bridged sub-interface must be held by a
/// network-instance of type `mac-vrf`: `set / network-instance X interface P.N` creates X
/// if it does not exist, of type `default` (the YANG default of
/// `srl_nokia-network-instance.yang`), and SR Linux enforces that bridged sub-interfaces
/// go into a mac-vrf (nokia/srlinux-yang-models issue #4) — so attaching a port to a
/// VLAN whose mac-vrf was never created is refused at commit. The wording of the errors is
/// this simulator's.
fn validate(cfg: &Config) -> Result<(), String> {
    let st = flat(cfg);
    let has = |want: &[&str]| {
        st.iter()
            .any(|p| p.len() >= want.len() && want.iter().zip(p).all(|(a, b)| *a == b))
    };
    let ni_type = |ni: &str| -> String {
        st.iter()
            .find(|p| p.len() == 4 && p[0] == "network-instance" && p[1] == ni && p[2] == "type")
            .map(|p| p[3].rsplit(':').next().unwrap_or_default().to_string())
            .unwrap_or_else(|| "default".to_string())
    };
    for p in &st {
        if let [ni, name, intf, sub] = p.as_slice() {
            if ni != "network-instance" || intf != "interface" {
                continue;
            }
            let Some((port, idx)) = sub.split_once('.') else {
                continue;
            };
            let bridged = has(&["interface", port, "subinterface", idx, "type", "bridged"]);
            let t = ni_type(name);
            if bridged && t != "mac-vrf" {
                return Err(format!("network-instance {name}: interface {sub}: a bridged subinterface can only be added to a network-instance of type mac-vrf, and {name} is of type {t}"));
            }
        }
    }
    for p in &st {
        if let [ni, name, vx, tunnel] = p.as_slice() {
            if ni == "network-instance" && vx == "vxlan-interface" {
                let Some((t, idx)) = tunnel.split_once('.') else {
                    return Err(format!(
                        "network-instance {name}: vxlan-interface {tunnel:?} is not TUNNEL.INDEX"
                    ));
                };
                let bridged = has(&[
                    "tunnel-interface",
                    t,
                    "vxlan-interface",
                    idx,
                    "type",
                    "bridged",
                ]);
                let vni = has(&[
                    "tunnel-interface",
                    t,
                    "vxlan-interface",
                    idx,
                    "ingress",
                    "vni",
                ]);
                if !bridged || !vni {
                    return Err(format!("network-instance {name}: vxlan-interface {tunnel} does not exist as a bridged tunnel-interface vxlan-interface with an ingress vni"));
                }
            }
        }
        if p.len() >= 8
            && p[0] == "network-instance"
            && p[2] == "protocols"
            && p[3] == "bgp-evpn"
            && p[4] == "bgp-instance"
            && p[6] == "vxlan-interface"
        {
            let (name, inst, vx) = (&p[1], &p[5], &p[7]);
            if !has(&["network-instance", name, "vxlan-interface", vx]) {
                return Err(format!("network-instance {name}: bgp-evpn bgp-instance {inst} names vxlan-interface {vx}, which is not one of its own"));
            }
            if !has(&[
                "network-instance",
                name,
                "protocols",
                "bgp-evpn",
                "bgp-instance",
                inst,
                "evi",
            ]) {
                return Err(format!(
                    "network-instance {name}: bgp-evpn bgp-instance {inst} has no evi"
                ));
            }
        }
    }
    Ok(())
}

impl Srl {
    /// A session in running mode.
    pub fn new(env: &Env) -> Srl {
        Srl {
            host: env.hostname.clone(),
            faults: env.faults.clone(),
            cand: None,
            private: false,
        }
    }

    fn err(out: &mut Out, msg: impl AsRef<str>) {
        out.fail(format!("Error: {}", msg.as_ref()));
    }

    fn edit(
        &mut self,
        del: bool,
        path: &[String],
        line: &str,
        st: &mut DeviceState,
        out: &mut Out,
    ) {
        let Some(cand) = self.cand.as_mut() else {
            Self::err(
                out,
                "Cannot execute 'set' or 'delete' in running mode. Use 'enter candidate' first.",
            );
            return;
        };
        let Some(top) = path.first() else {
            Self::err(out, "Incomplete command");
            return;
        };
        if !TOPS.contains(&top.as_str()) {
            out.fail(format!(
                "Parsing error: Unknown token '{top}'. Options are [{}]",
                TOPS.join(", ")
            ));
            return;
        }
        if top == "interface" {
            let Some(n) = path.get(1) else {
                Self::err(out, "Incomplete command");
                return;
            };
            let ok_name = st.running.ports.contains_key(n)
                || n.starts_with("lag")
                || n == "mgmt0"
                || n == "system0"
                || n.starts_with("irb");
            if !ok_name {
                Self::err(out, format!("Invalid value '{n}' for key 'name' of list 'interface': interface does not exist on this platform"));
                return;
            }
            if let Some(k) = path.get(2) {
                let known = [
                    "admin-state",
                    "description",
                    "mtu",
                    "vlan-tagging",
                    "subinterface",
                    "ethernet",
                    "lag",
                    "tpid",
                    "loopback-mode",
                ];
                if !known.contains(&k.as_str()) {
                    out.fail(format!(
                        "Parsing error: Unknown token '{k}'. Options are [{}]",
                        known.join(", ")
                    ));
                    return;
                }
            }
        }
        let mut statements = flat(cand);
        if del {
            statements.retain(|s| !(s.len() >= path.len() && s[..path.len()] == *path));
        } else {
            if is_leaf(path) {
                let key = &path[..path.len() - 1];
                statements.retain(|s| !(s.len() == path.len() && s[..key.len()] == *key));
            }
            statements.retain(|s| !(s.len() < path.len() && path[..s.len()] == s[..]));
            if !statements
                .iter()
                .any(|s| s.len() >= path.len() && s[..path.len()] == *path)
            {
                statements.push(path.to_vec());
            }
        }
        cand.extra
            .insert("srl".into(), serde_json::json!(statements));
        let inv: Vec<String> = st.running.ports.keys().cloned().collect();
        derive(cand, &inv);
        if !matches!(
            top.as_str(),
            "interface" | "network-instance" | "tunnel-interface"
        ) {
            unmodelled(st, "candidate", line);
        }
    }
}

impl Cli for Srl {
    fn prompt(&self) -> String {
        let m = match (&self.cand, self.private) {
            (None, _) => "running".to_string(),
            (Some(_), true) => "candidate private private-admin".to_string(),
            (Some(_), false) => "candidate shared default".to_string(),
        };
        format!("--{{ {m} }}--[  ]--\nA:{}# ", self.host)
    }

    fn mode_name(&self) -> String {
        if self.cand.is_some() {
            "candidate".into()
        } else {
            "running".into()
        }
    }

    fn handle(&mut self, line: &str, st: &mut DeviceState, out: &mut Out) -> Flow {
        let w = shell_words(line);
        let a: Vec<&str> = w.iter().map(String::as_str).collect();
        match a.as_slice() {
            [] => {}
            ["quit"] | ["exit", "all"] | ["logout"] => return Flow::Exit(0),
            ["exit"] if self.cand.is_none() => return Flow::Exit(0),
            ["exit"] => {}
            ["environment", ..] | ["bash", ..] | ["ping", ..] | ["show", ..] | ["tools", ..] if !line.contains("configuration save") => unmodelled(st, &self.mode_name(), line),
            ["enter", "candidate", rest @ ..] => {
                if self.faults.db_locked && (rest.contains(&"exclusive") || rest.contains(&"private")) {
                    Self::err(out, "Exclusive candidate is locked by another session (user admin, session 4)");
                    return Flow::Continue;
                }
                self.private = rest.contains(&"private");
                self.cand = Some(st.running.clone());
            }
            ["enter", "running"] => self.cand = None,
            ["set" | "delete", rest @ ..] => {
                let del = a[0] == "delete";
                let path: Vec<String> = rest.iter().skip_while(|x| **x == "/").map(|s| s.to_string()).collect();
                self.edit(del, &path, line, st, out);
            }
            ["commit", how @ ..] => {
                let Some(c) = self.cand.clone() else {
                    Self::err(out, "Cannot commit in running mode");
                    return Flow::Continue;
                };
                if self.faults.db_locked {
                    Self::err(out, "Commit failed: the configuration is locked by an exclusive session (user admin)");
                    return Flow::Continue;
                }
                if self.faults.commit_fail {
                    Self::err(out, "Failed to commit: validation failed in mgmt_server (commit-fail)");
                    return Flow::Continue;
                }
                let how = how.first().copied().unwrap_or("now");
                if !matches!(how, "now" | "stay" | "save" | "validate" | "checkpoint") {
                    out.fail(format!("Parsing error: Unknown token '{how}'. Options are [checkpoint, now, save, stay, validate]"));
                    return Flow::Continue;
                }
                if let Err(e) = validate(&c) {
                    Self::err(out, format!("Validation failed: {e}"));
                    return Flow::Continue;
                }
                if how == "validate" {
                    out.line("Validated configuration");
                    return Flow::Continue;
                }
                st.running = c;
                match how {
                    "stay" => {
                        out.line("All changes have been committed. Starting new transaction.");
                        self.cand = Some(st.running.clone());
                    }
                    "save" => {
                        st.saved = st.running.clone();
                        out.line("All changes have been committed. Leaving candidate mode.");
                        out.line("/system:");
                        out.line("    Saved current running configuration as initial (startup) configuration '/etc/opt/srlinux/config.json'");
                        self.cand = None;
                    }
                    _ => {
                        out.line("All changes have been committed. Leaving candidate mode.");
                        self.cand = None;
                    }
                }
            }
            ["discard", how @ ..] => {
                if self.cand.is_none() {
                    Self::err(out, "Cannot discard in running mode");
                    return Flow::Continue;
                }
                if how.first() == Some(&"stay") {
                    self.cand = Some(st.running.clone());
                } else {
                    self.cand = None;
                }
            }
            ["save", "startup"] | ["tools", "system", "configuration", "save"] => {
                if self.faults.db_locked {
                    Self::err(out, "Save failed: configuration is locked by another session");
                    return Flow::Continue;
                }
                st.saved = st.running.clone();
                out.line("/system:");
                out.line("    Saved current running configuration as initial (startup) configuration '/etc/opt/srlinux/config.json'");
            }
            ["info", rest @ ..] => {
                let from_running = rest.contains(&"running") || self.cand.is_none();
                let cfg = if from_running { st.running.clone() } else { self.cand.clone().unwrap_or_default() };
                let filt: Vec<&str> = rest.iter().copied().filter(|x| !matches!(*x, "from" | "running" | "flat" | "/" | "candidate")).collect();
                for s in flat(&cfg) {
                    let joined = s.join(" ");
                    if filt.is_empty() || joined.starts_with(&filt.join(" ")) {
                        out.line(format!("set / {joined}"));
                    }
                }
            }
            [w, ..] => out.fail(format!("Parsing error: Unknown token '{w}'. Options are [commit, delete, diff, discard, enter, info, quit, save, set, tools]")),
        }
        Flow::Continue
    }

    fn reject(&mut self, line: &str, out: &mut Out) {
        let w = shell_words(line);
        out.fail(format!(
            "Parsing error: Unknown token '{}'.",
            w.last().cloned().unwrap_or_default()
        ));
    }
}
