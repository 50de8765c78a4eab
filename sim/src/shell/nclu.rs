//! Cumulus Linux NCLU: `net add|del` on interfaces, bonds, VLANs and the
//! bridge's VLANs into the persistent pending change, `net commit` (applies to
//! running and saved), `net abort`, `net pending`, `net show interface`; the kernel's
//! `bridge [-c] vlan show` of what the bridge ports carry.
//! Errors as NCLU prints them (`ERROR: Command not found.` + the line).

use super::nvue::{diff, if_json, norm, print_yamlish};
use crate::cli::{unmodelled, Out};
use crate::faults::Faults;
use crate::model::{DeviceState, Lag};
use crate::words::{expand_ifs, parse_vlan, parse_vlan_list};

fn err(out: &mut Out, line: &str) {
    out.fail("ERROR: Command not found.");
    out.line("");
    out.line(line.trim().trim_start_matches("sudo "));
    out.status = 1;
}

/// `net ...`.
pub(super) fn net(faults: &Faults, a: &[&str], line: &str, st: &mut DeviceState, out: &mut Out) {
    match a {
        ["add" | "del", rest @ ..] => {
            let add = a[0] == "add";
            edit(add, rest, line, st, out);
        }
        ["commit", ..] => {
            if faults.db_locked {
                out.stderr(1, "ERROR: another user is currently committing a change (lock held); try again later");
                return;
            }
            if faults.commit_fail {
                out.stderr(1, "error: net commit failed: ifreload returned a non-zero exit status (commit-fail)");
                return;
            }
            match st.pending.take() {
                Some(c) => {
                    diff(&st.running, &c, out);
                    st.running = c.clone();
                    st.saved = c;
                }
                None => out.line("There are no pending changes."),
            }
        }
        ["abort"] => st.pending = None,
        ["pending"] => {
            let cand = st.pending.clone().unwrap_or_else(|| st.running.clone());
            diff(&st.running, &cand, out);
        }
        ["show", "interface", n, rest @ ..] => {
            if !st.running.has_if(n) {
                out.stderr(
                    1,
                    format!("ERROR: {n} is not a physical interface on this switch"),
                );
                return;
            }
            let v = if_json(&st.running, n);
            if rest.contains(&"json") {
                out.line(serde_json::to_string_pretty(&v).unwrap_or_default());
            } else {
                print_yamlish(&v, 0, out);
            }
        }
        ["show", ..] => unmodelled(st, "shell", line),
        _ => err(out, line),
    }
}

fn edit(add: bool, a: &[&str], line: &str, st: &mut DeviceState, out: &mut Out) {
    let cand = st.pending_mut();
    match a {
        ["interface" | "bond", spec, attrs @ ..] => {
            let Some(names) = expand_ifs(spec) else {
                err(out, line);
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
                            err(out, line);
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
                                    err(out, line);
                                    return;
                                }
                            },
                            ["bridge", "access"] if !add => *l2.access_vlan = None,
                            ["bridge", "vids", list] => match parse_vlan_list(list, &[','], "-") {
                                Some(ids) => {
                                    if add {
                                        l2.allow_add(&ids)
                                    } else {
                                        l2.allow_remove(&ids)
                                    }
                                }
                                None => {
                                    err(out, line);
                                    return;
                                }
                            },
                            ["bridge", "vids"] if !add => l2.allowed.clear(),
                            ["bridge", "pvid", v] => match parse_vlan(v) {
                                Some(v) => *l2.native_vlan = if add { Some(v) } else { None },
                                None => {
                                    err(out, line);
                                    return;
                                }
                            },
                            ["bridge", "pvid"] if !add => *l2.native_vlan = None,
                            ["link", "down"] => *l2.admin_up = !add,
                            ["link", "speed" | "autoneg" | "fec", ..] => {}
                            ["mtu", m] => {
                                match m.parse::<u32>().ok().filter(|m| (552..=9216).contains(m)) {
                                    Some(m) => *l2.mtu = if add { Some(m) } else { None },
                                    None => {
                                        err(out, line);
                                        return;
                                    }
                                }
                            }
                            ["mtu"] if !add => *l2.mtu = None,
                            ["alias", rest @ ..] if !rest.is_empty() || !add => {
                                *l2.description = if add { rest.join(" ") } else { String::new() }
                            }
                            _ => {
                                err(out, line);
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
                err(out, line);
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
            None => err(out, line),
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
        _ => err(out, line),
    }
}

/// `bridge [-c] vlan show [dev IF]`: iproute2's table of what each bridge port carries, in
/// the layout NVIDIA's documentation shows (`port vlan ids` heading, the PVID flagged
/// `PVID Egress Untagged`, further VLANs on indented lines, a blank line between ports, the
/// bridge itself last). A trunk without a `pvid` gets the bridge's PVID 1 untagged, as
/// ifupdown2 does; a port Mercury never configured is not listed (not a bridge port).
pub(super) fn bridge(a: &[&str], line: &str, st: &mut DeviceState, out: &mut Out) {
    let a: Vec<&str> = a
        .iter()
        .copied()
        .filter(|w| *w != "-c" && *w != "-compressvlans")
        .collect();
    let dev = match a.as_slice() {
        ["vlan", "show"] | ["vlan"] => None,
        ["vlan", "show", "dev", d] => Some(d.to_string()),
        _ => {
            unmodelled(st, "shell", line);
            return;
        }
    };
    out.line("port    vlan ids");
    let cfg = st.running.clone();
    let mut c = cfg.clone();
    // Ports and bonds alike are bridge ports; a bond member is not (its bond is).
    let names: Vec<String> = cfg
        .ports
        .iter()
        .filter(|(_, p)| p.lag.is_none())
        .map(|(n, _)| n.clone())
        .chain(cfg.lags.keys().cloned())
        .collect();
    for name in &names {
        if dev.as_ref().is_some_and(|d| d != name) {
            continue;
        }
        let Some(l2) = c.l2(name) else { continue };
        let (access, native, allowed) = (*l2.access_vlan, *l2.native_vlan, l2.allowed.clone());
        let (untagged, tagged): (Option<u16>, Vec<u16>) = match (access, allowed.is_empty()) {
            (Some(v), true) => (Some(v), Vec::new()),
            (_, false) => (Some(native.unwrap_or(1)), allowed),
            (None, true) => continue,
        };
        let mut first = true;
        let mut row = |text: String, out: &mut Out| {
            if first {
                out.line(format!("{name:<8}{text}"));
                first = false;
            } else {
                out.line(format!("{:<8}{text}", ""));
            }
        };
        if let Some(u) = untagged {
            row(format!(" {u} PVID Egress Untagged"), out);
        }
        for v in tagged.iter().filter(|v| Some(**v) != untagged) {
            row(format!(" {v}"), out);
        }
        out.line("");
    }
    if dev.is_none() {
        out.line(format!("{:<8} 1 PVID Egress Untagged", "bridge"));
        out.line("");
    }
}
