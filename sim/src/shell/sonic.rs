//! SONiC and Dell Enterprise SONiC: the Click-based `config` tool (VLANs, VLAN
//! membership, interface admin state / MTU / description, port channels,
//! `save` / `reload` with their confirmation) and the `show` commands. Changes
//! go to running at once; `config save` copies running to saved. Errors are
//! Click's: usage + `Error: ...` on stderr, exit 2. Membership maps onto the
//! model as: only untagged → access; tagged → trunk with untagged as native.

use crate::cli::{unmodelled, Out};
use crate::faults::Faults;
use crate::model::{Config, DeviceState, Lag};
use crate::words::{expand_ifs, parse_vlan};

/// A question `config save` / `config reload` asks without `-y`.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Ask {
    Save,
    Reload,
}

/// The question's prompt.
pub(super) fn question(ask: &Ask) -> &'static str {
    match ask {
        Ask::Save => "Existing files will be overwritten, continue? [y/N]: ",
        Ask::Reload => "Clear current config and reload config in config_db format from the default config file(s) ? [y/N]: ",
    }
}

/// Act on the answer to a question.
pub(super) fn answer(ask: &Ask, yes: bool, st: &mut DeviceState, out: &mut Out) {
    if !yes {
        out.stderr(1, "Aborted!");
        return;
    }
    match ask {
        Ask::Save => {
            st.saved = st.running.clone();
            out.line("Running command: /usr/local/bin/sonic-cfggen -d --print-data > /etc/sonic/config_db.json");
        }
        Ask::Reload => st.running = st.saved.clone(),
    }
}

const BAD_VLAN: &str = "Invalid Vlan Id , Valid Range : 1 to 4094";
const BAD_IF: &str = "Interface name is invalid!!";

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

fn port_ok(cfg: &Config, n: &str) -> bool {
    cfg.ports.contains_key(n) || cfg.lags.contains_key(n)
}

/// click's option handling, as sonic-utilities' `config` gets it (`CONTEXT_SETTINGS =
/// dict(help_option_names=['-h', '--help', '-?'])`, config/main.py): a help option before
/// `--` prints the command's usage and exits 0 without doing anything; `--` ends the
/// options and is dropped. `None` when help was printed.
fn click_args<'a>(usage: &str, a: &[&'a str], out: &mut Out) -> Option<Vec<&'a str>> {
    let end = a.iter().position(|x| *x == "--").unwrap_or(a.len());
    if a[..end]
        .iter()
        .any(|x| matches!(*x, "-h" | "--help" | "-?"))
    {
        out.line(format!("Usage: {usage} [OPTIONS] COMMAND [ARGS]..."));
        out.line("");
        out.line("Options:");
        out.line("  -?, -h, --help  Show this message and exit.");
        return None;
    }
    let mut v: Vec<&str> = a[..end].to_vec();
    v.extend(a.get(end + 1..).unwrap_or(&[]));
    Some(v)
}

/// `config ...`; sets `ask` when the command asks a question. Like sonic-utilities, the
/// `config` group refuses to run without root (`sys.exit("Root privileges are required for
/// this operation")`, config/main.py), before any subcommand parses its arguments.
pub(super) fn config(
    faults: &Faults,
    ask: &mut Option<Ask>,
    root: bool,
    a: &[&str],
    line: &str,
    st: &mut DeviceState,
    out: &mut Out,
) {
    if !root {
        out.stderr(1, "Root privileges are required for this operation");
        return;
    }
    let Some(args) = click_args(&format!("config {}", a.first().unwrap_or(&"")), a, out) else {
        return;
    };
    let a = args.as_slice();
    let cfg = &mut st.running;
    match a {
        ["vlan", op @ ("add" | "del"), v] => {
            let usage = format!("config vlan {op} [OPTIONS] <vid>");
            let Some(id) = parse_vlan(v) else {
                click_fail(out, &usage, BAD_VLAN);
                return;
            };
            if *op == "add" {
                if !cfg.add_vlan(id) {
                    click_fail(out, &usage, format!("Vlan{id} already exists"));
                } else {
                    cfg.vlan_mut(id).name = format!("Vlan{id}");
                }
            } else {
                if !cfg.has_vlan(id) {
                    click_fail(out, &usage, format!("Vlan{id} does not exist"));
                    return;
                }
                let names = cfg.if_names();
                for n in names {
                    if let Some(l2) = cfg.l2(&n) {
                        let (u, t) = l2.membership();
                        if u == Some(id) || t.contains(&id) {
                            click_fail(out, &usage, format!("Vlan{id} can not be removed. First remove all members assigned to this Vlan."));
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
                click_fail(out, &usage, "Missing argument \"<port>\".");
                return;
            };
            let Some(id) = parse_vlan(v) else {
                click_fail(out, &usage, BAD_VLAN);
                return;
            };
            // The checks and messages of sonic-utilities' config/vlan.py, in its order.
            if *op == "add" && id == 1 {
                click_fail(out, &usage, "Vlan1 is default VLAN");
                return;
            }
            if !cfg.has_vlan(id) {
                click_fail(out, &usage, format!("Vlan{id} does not exist"));
                return;
            }
            if !port_ok(cfg, port) {
                click_fail(out, &usage, format!("{port} does not exist"));
                return;
            }
            if cfg.ports.get(*port).is_some_and(|p| p.lag.is_some()) {
                click_fail(out, &usage, format!("{port} is a portchannel member port"));
                return;
            }
            let Some(mut l2) = cfg.l2(port) else { return };
            let (mut u, mut t) = l2.membership();
            if *op == "add" {
                if u == Some(id) || t.contains(&id) {
                    click_fail(
                        out,
                        &usage,
                        format!("{port} is already a member of Vlan{id}"),
                    );
                    return;
                }
                if untagged {
                    if u.is_some() {
                        click_fail(out, &usage, format!("{port} is already untagged member!"));
                        return;
                    }
                    u = Some(id);
                } else {
                    t.push(id);
                }
            } else {
                if u != Some(id) && !t.contains(&id) {
                    click_fail(out, &usage, format!("{port} is not a member of Vlan{id}"));
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
            let usage = format!("config interface {op} [OPTIONS] <interface_name>");
            let Some(names) = expand_ifs(spec) else {
                click_fail(out, &usage, BAD_IF);
                return;
            };
            for n in names {
                let Some(l2) = cfg.l2(&n) else {
                    click_fail(out, &usage, BAD_IF);
                    return;
                };
                *l2.admin_up = *op == "startup";
            }
        }
        ["interface", "mtu", n, m] => {
            let usage = "config interface mtu [OPTIONS] <interface_name> <interface_mtu>";
            let Some(l2) = cfg.l2(n) else {
                click_fail(out, usage, BAD_IF);
                return;
            };
            match m.parse::<u32>().ok().filter(|m| (68..=9216).contains(m)) {
                Some(m) => *l2.mtu = Some(m),
                None => click_fail(out, usage, "Invalid value for \"<interface_mtu>\""),
            }
        }
        // sonic-utilities has no `config interface description` (config/main.py @691b1bbc4);
        // descriptions live in CONFIG_DB (`sonic-db-cli`, below).
        ["interface", "speed" | "fec" | "autoneg" | "ip" | "breakout" | "advertised-speeds", ..] => {
            unmodelled(st, "shell", line)
        }
        ["portchannel", "add", name, ..] => {
            if !name.starts_with("PortChannel") {
                click_fail(out, "config portchannel add [OPTIONS] <portchannel_name>", format!("{name} is invalid!, name should have prefix 'PortChannel' and suffix '<0-9999>'"));
                return;
            }
            if cfg.lags.contains_key(*name) {
                click_fail(
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
                click_fail(
                    out,
                    "config portchannel del [OPTIONS] <portchannel_name>",
                    format!("{name} is not present."),
                );
            }
        }
        ["portchannel", "member", op @ ("add" | "del"), pc, port] => {
            let usage =
                format!("config portchannel member {op} [OPTIONS] <portchannel_name> <port_name>");
            if !cfg.lags.contains_key(*pc) {
                click_fail(out, &usage, format!("{pc} is not present."));
                return;
            }
            if !cfg.ports.contains_key(*port) {
                click_fail(out, &usage, format!("{port} is invalid!"));
                return;
            }
            if *op == "add" {
                let mode = cfg.lag_mode(pc, "lacp");
                cfg.join_lag(port, pc, &mode);
            } else {
                cfg.leave_lag(port);
            }
        }
        ["save", opts @ ..] => {
            if faults.db_locked {
                out.stderr(1, "Error: config save failed: configuration database (CONFIG_DB) is locked by another process");
                return;
            }
            if faults.commit_fail {
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
                *ask = Some(Ask::Save);
            }
        }
        ["reload", opts @ ..] => {
            if opts.contains(&"-y") || opts.contains(&"--yes") {
                st.running = st.saved.clone();
            } else {
                *ask = Some(Ask::Reload);
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

/// `show ...`.
/// `sonic-db-cli [-h] [--] DB COMMAND ...`: the Redis client SONiC ships. Modelled: `hset`
/// / `hget` / `hdel` of the `description` field of `PORT|X` and `PORTCHANNEL|X` in
/// CONFIG_DB (which `show interfaces description` reads back). `hset` answers the number
/// of fields it added, as Redis does; a key that names no port is stored nowhere (Redis
/// would create an orphan row that nothing reads).
pub(super) fn db_cli(a: &[&str], st: &mut DeviceState, out: &mut Out) {
    let end = a.iter().position(|x| *x == "--").unwrap_or(a.len());
    if a[..end].iter().any(|x| matches!(*x, "-h" | "--help")) {
        out.line("usage: sonic-db-cli [-h] [-s] [-n NAMESPACE] db_or_op [cmd ...]");
        out.line("");
        out.line("SONiC DB CLI");
        return;
    }
    let mut v: Vec<&str> = a[..end].to_vec();
    v.extend(a.get(end + 1..).unwrap_or(&[]));
    let key_port = |k: &str| {
        k.strip_prefix("PORT|")
            .or_else(|| k.strip_prefix("PORTCHANNEL|"))
            .map(str::to_string)
    };
    match v.as_slice() {
        ["CONFIG_DB", cmd, key, "description", rest @ ..] => {
            let Some(port) = key_port(key) else {
                unmodelled(st, "shell", &v.join(" "));
                return;
            };
            let cfg = &mut st.running;
            let had = cfg
                .l2(&port)
                .map(|l2| !l2.description.is_empty())
                .unwrap_or(false);
            match (cmd.to_ascii_lowercase().as_str(), rest) {
                ("hset", [value]) => {
                    if let Some(l2) = cfg.l2(&port) {
                        *l2.description = value.to_string();
                    }
                    out.line(if had { "0" } else { "1" });
                }
                ("hget", []) => match cfg.l2(&port) {
                    Some(l2) if !l2.description.is_empty() => out.line(l2.description.clone()),
                    _ => out.line(""),
                },
                ("hdel", []) => {
                    if let Some(l2) = cfg.l2(&port) {
                        l2.description.clear();
                    }
                    out.line(if had { "1" } else { "0" });
                }
                _ => out.stderr(1, "(error) ERR wrong number of arguments"),
            }
            // Redis writes are live and persist only with `config save`.
        }
        [db, ..] if db.ends_with("_DB") => unmodelled(st, "shell", &v.join(" ")),
        _ => out.stderr(
            1,
            "usage: sonic-db-cli [-h] [-s] [-n NAMESPACE] db_or_op [cmd ...]",
        ),
    }
}

pub(super) fn show(a: &[&str], line: &str, st: &mut DeviceState, out: &mut Out) {
    let cfg = &st.running;
    match a {
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
                let names = cfg.if_names();
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
                out.line(
                    "+-----------+--------------+-----------------+----------------+-------------+",
                );
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
        ["version"] => out.line("SONiC Software Version: SONiC.202311 (simulated by mercury-sim)"),
        _ => unmodelled(st, "shell", line),
    }
}
