//! A Linux host with Open vSwitch: `ovs-vsctl [options] CMD [-- CMD]...` as one
//! all-or-nothing transaction over the bridges (kept in the config's
//! `extra.ovs_bridges`) and the Port / Interface columns of each port (the
//! model's `OvsPort`), and `ip link set`. Errors as ovs-vsctl prints them, with
//! exit status 1. Changes persist at once (running = saved). The generic L2
//! fields of a port are derived from its columns: `vlan_mode=access` or a tag
//! only → access; `trunk` → allowed = trunks; `native-*` → trunk with native =
//! tag.

use crate::cli::{unmodelled, Out};
use crate::model::{Config, DeviceState, OvsPort, Port};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The host as shipped: bridges `br-int` (empty) and `br0` holding every port.
pub fn as_shipped(cfg: &mut Config) {
    for p in cfg.ports.values_mut() {
        p.ovs = Some(OvsPort {
            bridge: "br0".into(),
            ..Default::default()
        });
    }
    cfg.extra
        .insert("ovs_bridges".into(), serde_json::json!(["br-int", "br0"]));
}

fn bridge_names(cfg: &Config) -> Vec<String> {
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

fn set_bridge_names(cfg: &mut Config, b: Vec<String>) {
    cfg.extra.insert("ovs_bridges".into(), serde_json::json!(b));
}

/// Recompute the generic model fields of an OVS port from its columns.
fn derive_l2(p: &mut Port) {
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

fn fail(out: &mut Out, msg: impl AsRef<str>) {
    out.stderr(1, format!("ovs-vsctl: {}", msg.as_ref()));
}

/// `ovs-vsctl ...`.
pub(super) fn vsctl(a: &[&str], st: &mut DeviceState, out: &mut Out) {
    // All-or-nothing like an OVSDB transaction: commands separated by `--`,
    // each with its options before the command name.
    let mut cfg = st.running.clone();
    let mut printed = Out::default();
    let mut json_format = false;
    for c in a.split(|w| *w == "--") {
        let mut may_exist = false;
        let mut if_exists = false;
        let mut columns: Option<Vec<String>> = None;
        let mut it = c.iter().copied().peekable();
        while let Some(w) = it.next_if(|w| w.starts_with('-')) {
            match w {
                "--may-exist" => may_exist = true,
                "--if-exists" => if_exists = true,
                "-t" => {
                    it.next();
                }
                "--format=json" => json_format = true,
                x if x.starts_with("--columns=") => {
                    columns = Some(
                        x.trim_start_matches("--columns=")
                            .split(',')
                            .map(str::to_string)
                            .collect(),
                    );
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
                    fail(out, format!("unrecognized option '{x}'"));
                    return;
                }
            }
        }
        let rest: Vec<&str> = it.collect();
        if rest.is_empty() {
            continue;
        }
        if json_format && matches!(rest.first(), Some(&"list") | Some(&"find")) {
            match json_table(&cfg, &rest, columns.as_deref()) {
                Ok(doc) => printed.line(doc.to_string()),
                Err(e) => {
                    fail(out, e);
                    return;
                }
            }
            continue;
        }
        if let Err(e) = command(&mut cfg, &rest, may_exist, if_exists, &mut printed) {
            fail(out, e);
            return;
        }
    }
    st.running = cfg.clone();
    st.saved = cfg;
    out.text.push_str(&printed.text);
}

/// `ip ...` (`ip link set` is modelled).
pub(super) fn ip(a: &[&str], line: &str, st: &mut DeviceState, out: &mut Out) {
    let (name, rest): (&str, &[&str]) = match a {
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

fn table_name(t: &str) -> Option<&'static str> {
    match t.to_ascii_lowercase().as_str() {
        "port" => Some("Port"),
        "interface" => Some("Interface"),
        "bridge" => Some("Bridge"),
        "open_vswitch" => Some("Open_vSwitch"),
        _ => None,
    }
}

/// A stable UUID for a row (`table`, `name`): FNV-1a over both, twice with different
/// offsets, printed 8-4-4-4-12.
pub fn row_uuid(table: &str, name: &str) -> String {
    let h = |seed: u64| {
        let mut x = seed;
        for b in table.bytes().chain([0]).chain(name.bytes()) {
            x ^= u64::from(b);
            x = x.wrapping_mul(0x0000_0100_0000_01b3);
        }
        x
    };
    let (a, b) = (h(0xcbf2_9ce4_8422_2325), h(0x8422_2325_cbf2_9ce4));
    let hex = format!("{a:016x}{b:016x}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

fn is_uuid(rec: &str) -> bool {
    rec.len() == 36 && rec.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
}

/// `list TABLE [REC...]` / `find TABLE name=VALUE` (the only condition modelled) with
/// `--format=json` and `--columns=...`: each table as ovs-vsctl prints it (`{"data": [...],
/// "headings": [...]}`, sets as `["set", [...]]` or the bare atom, maps as `["map", [[k, v]
/// ...]]`, references as `["uuid", U]`). Every Bridge, Port and Interface row has a stable
/// UUID derived from its table and name ([`row_uuid`]), and rows may be addressed by it.
fn json_table(cfg: &Config, a: &[&str], columns: Option<&[String]>) -> Result<Value, String> {
    let (verb, table, args) = match a {
        [verb, table, args @ ..] => (*verb, *table, args),
        _ => return Err(format!("'{}' command requires at least 1 arguments", a[0])),
    };
    let Some(table) = table_name(table) else {
        return Err(format!("unknown table \"{table}\""));
    };
    let defaults: &[&str] = match table {
        "Bridge" => &["_uuid", "name", "ports"],
        "Port" => &[
            "_uuid",
            "name",
            "tag",
            "trunks",
            "vlan_mode",
            "interfaces",
            "external_ids",
        ],
        _ => &[
            "_uuid",
            "name",
            "external_ids",
            "mtu_request",
            "error",
            "type",
        ],
    };
    let headings: Vec<String> = match columns {
        Some(c) => c.to_vec(),
        None => defaults.iter().map(|s| s.to_string()).collect(),
    };
    let bridges = bridge_names(cfg);
    let names: Vec<String> = if table == "Bridge" {
        bridges.clone()
    } else {
        cfg.ports
            .iter()
            .filter(|(_, p)| p.ovs.is_some())
            .map(|(n, _)| n.clone())
            .collect()
    };
    let by_uuid = |rec: &str| {
        names
            .iter()
            .find(|n| n.as_str() == rec || (is_uuid(rec) && row_uuid(table, n) == rec))
            .cloned()
    };
    let selected: Vec<String> = match (verb, args) {
        ("list", []) => names.clone(),
        ("list", recs) => {
            let mut out = Vec::new();
            for r in recs {
                out.push(by_uuid(r).ok_or_else(|| format!("no row \"{r}\" in table {table}"))?);
            }
            out
        }
        ("find", conds) => {
            let mut out = names.clone();
            for c in conds {
                let Some(("name", v)) = c.split_once('=') else {
                    return Err(format!(
                        "find: only name=VALUE conditions are modelled, not {c}"
                    ));
                };
                let v = v.trim_matches('"');
                out.retain(|n| n == v);
            }
            out
        }
        _ => return Err(format!("unknown command '{verb}'")),
    };
    let empty = || json!(["set", []]);
    let set = |v: Vec<Value>| match v.len() {
        1 => v.into_iter().next().unwrap_or(Value::Null),
        _ => json!(["set", v]),
    };
    let map = |m: &BTreeMap<String, String>| {
        json!([
            "map",
            m.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>()
        ])
    };
    let mut rows = Vec::new();
    for n in &selected {
        let mut row = Vec::new();
        for h in &headings {
            let v = if table == "Bridge" {
                match h.as_str() {
                    "_uuid" => json!(["uuid", row_uuid("Bridge", n)]),
                    "name" => json!(n),
                    "ports" => set(cfg
                        .ports
                        .iter()
                        .filter(|(_, p)| p.ovs.as_ref().is_some_and(|o| o.bridge == *n))
                        .map(|(pn, _)| json!(["uuid", row_uuid("Port", pn)]))
                        .collect()),
                    "datapath_type" => json!("netdev"),
                    c => return Err(no_column(table, c)),
                }
            } else {
                let p = cfg
                    .ports
                    .get(n)
                    .ok_or_else(|| format!("no row \"{n}\" in table {table}"))?;
                let o = p.ovs.clone().unwrap_or_default();
                match (table, h.as_str()) {
                    (_, "_uuid") => json!(["uuid", row_uuid(table, n)]),
                    (_, "name") => json!(n),
                    ("Port", "tag") => o.tag.map_or_else(empty, |t| json!(t)),
                    ("Port", "trunks") => set(o.trunks.iter().map(|t| json!(t)).collect()),
                    ("Port", "vlan_mode") => o.vlan_mode.clone().map_or_else(empty, |m| json!(m)),
                    ("Port", "interfaces") => json!(["uuid", row_uuid("Interface", n)]),
                    ("Port", "external_ids") => map(&o.external_ids),
                    ("Interface", "external_ids") => map(&o.iface_external_ids),
                    ("Interface", "mtu_request") => p.mtu.map_or_else(empty, |m| json!(m)),
                    ("Interface", "error") => empty(),
                    ("Interface", "type") => json!(""),
                    (_, c) => return Err(no_column(table, c)),
                }
            };
            row.push(v);
        }
        rows.push(Value::Array(row));
    }
    Ok(json!({"data": rows, "headings": headings}))
}

fn port_row<'a>(cfg: &'a mut Config, table: &str, rec: &str) -> Result<&'a mut Port, String> {
    let rec = if is_uuid(rec) {
        cfg.ports
            .iter()
            .filter(|(_, p)| p.ovs.is_some())
            .map(|(n, _)| n.clone())
            .find(|n| row_uuid(table, n) == rec)
            .unwrap_or_else(|| rec.to_string())
    } else {
        rec.to_string()
    };
    let rec = rec.as_str();
    match cfg.ports.get_mut(rec) {
        Some(p) if p.ovs.is_some() => Ok(p),
        _ => Err(format!("no row \"{rec}\" in table {table}")),
    }
}

fn parse_set(v: &str) -> Result<Vec<u16>, String> {
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

fn set_column(p: &mut Port, table: &str, col: &str, val: &str) -> Result<(), String> {
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
            _ => return Err(no_column(table, map)),
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
        ("Port", "trunks") => o.trunks = parse_set(val)?,
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
        _ => return Err(no_column(table, col)),
    }
    derive_l2(p);
    Ok(())
}

fn command(
    cfg: &mut Config,
    a: &[&str],
    may_exist: bool,
    if_exists: bool,
    out: &mut Out,
) -> Result<(), String> {
    let bridges = bridge_names(cfg);
    match a {
        ["add-br", br, ..] => {
            if bridges.iter().any(|b| b == br) {
                if !may_exist {
                    return Err(format!("cannot create a bridge named {br} because a bridge named {br} already exists"));
                }
                return Ok(());
            }
            let mut b = bridges;
            b.push(br.to_string());
            set_bridge_names(cfg, b);
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
            set_bridge_names(cfg, bridges.into_iter().filter(|b| b != br).collect());
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
                let (k, v) = key_value(kv)?;
                set_column(&mut p, "Port", k, v)?;
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
            let Some(table) = table_name(table) else {
                return Err(format!("unknown table \"{table}\""));
            };
            if table == "Bridge" || table == "Open_vSwitch" {
                if table == "Bridge" && !bridges.iter().any(|b| b == rec) {
                    return Err(format!("no row \"{rec}\" in table Bridge"));
                }
                return Ok(());
            }
            let p = match port_row(cfg, table, rec) {
                Ok(p) => p,
                Err(_) if if_exists => return Ok(()),
                Err(e) => return Err(e),
            };
            match *verb {
                "set" => {
                    for kv in rest {
                        let (k, v) = key_value(kv)?;
                        set_column(p, table, k, v)?;
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
                            (_, c) => return Err(no_column(table, c)),
                        }
                    }
                    derive_l2(p);
                }
                "add" | "remove" => {
                    let [col, vals @ ..] = rest else {
                        return Err(format!("'{verb}' command requires at least 4 arguments"));
                    };
                    let o = p.ovs.get_or_insert_with(OvsPort::default);
                    match (table, *col) {
                        ("Port", "trunks") => {
                            for v in vals {
                                let ids = parse_set(v)?;
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
                            let map = ids_mut(o, table);
                            for v in vals {
                                if *verb == "add" {
                                    let (k, val) = key_value(v)?;
                                    map.entry(k.to_string())
                                        .or_insert_with(|| val.trim_matches('"').to_string());
                                } else {
                                    map.remove(v.split_once('=').map_or(*v, |x| x.0));
                                }
                            }
                        }
                        (_, c) => return Err(no_column(table, c)),
                    }
                    derive_l2(p);
                }
                _ => {
                    // get
                    let o = p.ovs.clone().unwrap_or_default();
                    for col in rest {
                        let v = match (column(&o, table, col), *col) {
                            (Some(v), _) => v,
                            (None, "name") => rec.to_string(),
                            (None, c) if c.contains(':') => {
                                let (m, k) = c.split_once(':').unwrap_or((c, ""));
                                match (m, ids(&o, table).get(k)) {
                                    ("external_ids", Some(v)) => format!("\"{v}\""),
                                    _ => {
                                        return Err(format!(
                                            "no key \"{k}\" in {table} record \"{rec}\" column {m}"
                                        ))
                                    }
                                }
                            }
                            (None, c) => return Err(no_column(table, c)),
                        };
                        out.line(v);
                    }
                }
            }
        }
        ["list", table, recs @ ..] => {
            let Some(table) = table_name(table) else {
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
            let cols: &[&str] = if table == "Port" {
                &["tag", "trunks", "vlan_mode", "external_ids"]
            } else {
                &["external_ids"]
            };
            for n in names {
                let p = port_row(cfg, table, &n)?;
                let o = p.ovs.clone().unwrap_or_default();
                out.line(format!("{:<17}: {n}", "name"));
                for c in cols {
                    let v = column(&o, table, c).unwrap_or_default();
                    out.line(format!("{c:<17}: {v}"));
                }
                if table != "Port" {
                    let mtu = p.mtu.map_or("[]".into(), |m| m.to_string());
                    out.line(format!("{:<17}: {mtu}", "mtu_request"));
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
                            out.line(format!("            trunks: {}", fmt_set(&o.trunks)));
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

/// The `external_ids` column of the Port or the Interface record.
fn ids<'a>(o: &'a OvsPort, table: &str) -> &'a BTreeMap<String, String> {
    if table == "Port" {
        &o.external_ids
    } else {
        &o.iface_external_ids
    }
}

fn ids_mut<'a>(o: &'a mut OvsPort, table: &str) -> &'a mut BTreeMap<String, String> {
    if table == "Port" {
        &mut o.external_ids
    } else {
        &mut o.iface_external_ids
    }
}

/// A Port / Interface column as `get` and `list` print it (the modelled ones).
fn column(o: &OvsPort, table: &str, col: &str) -> Option<String> {
    Some(match (table, col) {
        ("Port", "tag") => o.tag.map_or("[]".to_string(), |t| t.to_string()),
        ("Port", "trunks") => fmt_set(&o.trunks),
        ("Port", "vlan_mode") => o.vlan_mode.clone().unwrap_or_else(|| "[]".into()),
        (_, "external_ids") => fmt_map(ids(o, table)),
        _ => return None,
    })
}

fn no_column(table: &str, col: &str) -> String {
    format!("{table} does not contain a column whose name matches \"{col}\"")
}

/// A `column=value` argument.
fn key_value(kv: &str) -> Result<(&str, &str), String> {
    kv.split_once('=')
        .ok_or_else(|| format!("{kv}: argument does not end in \"=\" followed by a value."))
}

/// A set of integers as ovs-vsctl prints it: `[10, 20]`.
fn fmt_set(v: &[u16]) -> String {
    let parts: Vec<String> = v.iter().map(u16::to_string).collect();
    format!("[{}]", parts.join(", "))
}

fn fmt_map(m: &BTreeMap<String, String>) -> String {
    let parts: Vec<String> = m.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    format!("{{{}}}", parts.join(", "))
}
