//! Juniper Junos (ELS EX/QFX style): operational mode `user@host> `,
//! configuration mode with `[edit]` banner lines, a candidate configuration
//! (shared = the state file's `pending`, or session-private for
//! `configure private|exclusive`), `set`/`delete` on the modelled hierarchies,
//! `commit` (applies to running and saved), `rollback`, and the uncommitted-
//! changes question on exit.

use crate::cli::{self, unmodelled, Cli, Env, Flow, Out};
use crate::grammar::{Grammar, Verdict};
use crate::model::{Config, DeviceState, Lag, Port, L2};
use crate::words::{keyword, parse_vlan, parse_vlan_list, tokenize, vlan_ranges, IfNaming};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Shared,
    Private,
    Exclusive,
}

#[derive(Debug, Clone, PartialEq)]
enum Mode {
    Op,
    Conf(Kind),
}

const ERR_KEY: &str = "junos_check_errors";

const LOCK_HOLDER: &str = "error: configuration database locked by:\n  root terminal p1 (pid 4242) on since 2024-05-01 10:00:00 UTC\n      exclusive [edit]";

/// One Junos CLI session.
pub struct Junos {
    host: String,
    user: String,
    faults: crate::faults::Faults,
    mode: Mode,
    path: Vec<String>,
    cand: Option<Config>,
    ask_exit: bool,
    paging: bool,
    op: Grammar,
    /// Exec mode has no prompt on the line, so carets are not offset by one.
    interactive: bool,
}

fn junos_if_ok(name: &str) -> bool {
    let prefixes = [
        "ge-", "xe-", "et-", "mge-", "ae", "irb", "lo0", "em0", "em1", "me0", "vme", "fxp0",
    ];
    prefixes.iter().any(|p| name.starts_with(p))
}

fn vlan_name(cfg: &Config, id: u16) -> String {
    match cfg.vlans.get(&id.to_string()) {
        Some(v) if !v.name.is_empty() => v.name.clone(),
        _ => format!("vlan{id}"),
    }
}

impl Junos {
    /// A session in operational mode.
    pub fn new(env: &Env) -> Junos {
        let op = Grammar::new(
            true,
            &[
                ("configure", "configure"),
                ("configure private|exclusive", "configure"),
                ("show configuration", "show-conf"),
                ("show configuration <rest>", "show-conf"),
                ("show vlans [<rest>]", "show-vlans"),
                ("show interfaces [<rest>]", "show-ifs"),
                ("show version", "show-version"),
                ("show system <rest>", "unmodelled"),
                ("show lldp neighbors", "unmodelled"),
                ("show ethernet-switching <rest>", "unmodelled"),
                ("show lacp interfaces [<rest>]", "unmodelled"),
                ("show chassis <rest>", "unmodelled"),
                ("set cli screen-length <num:0-100000>", "screen-length"),
                ("set cli screen-width <num:0-1024>", "screen-width"),
                ("set cli complete-on-space on|off", "complete-on-space"),
                ("set cli terminal <word>", "noop"),
                ("set cli timestamp [disable]", "noop"),
                ("set cli idle-timeout <num:0-100000>", "noop"),
                ("request <rest>", "unmodelled"),
                ("ping <rest>", "unmodelled"),
                ("traceroute <rest>", "unmodelled"),
                ("file <rest>", "unmodelled"),
                ("clear <rest>", "unmodelled"),
                ("start shell [<rest>]", "unmodelled"),
                ("exit", "exit"),
                ("quit", "exit"),
                ("logout", "exit"),
            ],
        );
        Junos {
            host: env.hostname.clone(),
            user: env.username.clone(),
            faults: env.faults.clone(),
            mode: Mode::Op,
            path: Vec::new(),
            cand: None,
            ask_exit: false,
            paging: true,
            op,
            interactive: env.interactive,
        }
    }

    fn base_prompt(&self) -> String {
        match self.mode {
            Mode::Op => format!("{}@{}> ", self.user, self.host),
            Mode::Conf(_) => format!("{}@{}# ", self.user, self.host),
        }
    }

    fn caret(&self, line: &str, at: usize, msg: &str, out: &mut Out) {
        let prompt = self.interactive.then(|| self.base_prompt());
        out.line(cli::caret(prompt.as_deref(), line, at));
        out.fail(msg);
    }

    /// The candidate being edited (shared: `pending`, private: session copy).
    fn cand<'a>(&'a mut self, st: &'a mut DeviceState) -> &'a mut Config {
        match self.mode {
            Mode::Conf(Kind::Private) => self.cand.get_or_insert_with(|| st.running.clone()),
            _ => st.pending_mut(),
        }
    }

    fn dirty(&self, st: &DeviceState) -> bool {
        match self.mode {
            Mode::Conf(Kind::Private) => self.cand.as_ref().is_some_and(|c| *c != st.running),
            Mode::Conf(_) => st.pending.as_ref().is_some_and(|c| *c != st.running),
            Mode::Op => false,
        }
    }

    fn leave_config(&mut self, st: &mut DeviceState, out: &mut Out) {
        if self.mode == Mode::Conf(Kind::Private) {
            self.cand = None;
        }
        if self.mode == Mode::Conf(Kind::Exclusive) && self.dirty(st) {
            // Exclusive mode discards uncommitted changes on exit.
            st.pending = None;
        }
        self.mode = Mode::Op;
        self.path.clear();
        out.line("Exiting configuration mode");
    }

    fn run_op(&mut self, line: &str, st: &mut DeviceState, out: &mut Out) -> Flow {
        let (act, _args) = match self.op.parse(
            line,
            &IfNaming {
                types: vec![],
                sep: "",
                bare_numbers: false,
            },
        ) {
            Verdict::Ok(a, args) => (a, args),
            Verdict::Invalid(at) => {
                let msg = if at == 0 {
                    "unknown command."
                } else {
                    "syntax error, expecting <command>."
                };
                self.caret(line, at, msg, out);
                return Flow::Continue;
            }
            Verdict::Incomplete => {
                out.fail("error: command is not complete");
                return Flow::Continue;
            }
            Verdict::Ambiguous(at) => {
                self.caret(line, at, "syntax error, ambiguous command.", out);
                return Flow::Continue;
            }
        };
        let toks: Vec<String> = tokenize(line).into_iter().map(|t| t.text).collect();
        match act {
            "exit" => return Flow::Exit(0),
            "noop" => {}
            "screen-length" => {
                self.paging = toks.last().map(String::as_str) != Some("0");
                out.line(format!(
                    "Screen length set to {}",
                    toks.last().cloned().unwrap_or_default()
                ));
            }
            // Junos confirms every `set cli` setting (netmiko waits for these words).
            "screen-width" => out.line(format!(
                "Screen width set to {}",
                toks.last().cloned().unwrap_or_default()
            )),
            "complete-on-space" => out.line(if toks.last().map(String::as_str) == Some("off") {
                "Disabling complete-on-space"
            } else {
                "Enabling complete-on-space"
            }),
            "configure" => {
                let kind = match toks.get(1).map(|s| s.as_str()) {
                    Some(k) if "private".starts_with(k) => Kind::Private,
                    Some(k) if "exclusive".starts_with(k) => Kind::Exclusive,
                    _ => Kind::Shared,
                };
                if self.faults.db_locked && kind != Kind::Shared {
                    out.fail(LOCK_HOLDER);
                    return Flow::Continue;
                }
                if self.faults.db_locked {
                    out.line("Users currently editing the configuration:");
                    out.line("  root terminal p1 (pid 4242) on since 2024-05-01 10:00:00 UTC");
                    out.line("      exclusive [edit]");
                }
                if kind == Kind::Private {
                    if st.pending.as_ref().is_some_and(|p| *p != st.running) {
                        out.fail("error: shared configuration database modified");
                        out.line("Please use 'rollback' to discard changes or 'commit' them before using 'configure private'");
                        return Flow::Continue;
                    }
                    out.line("warning: uncommitted changes will be discarded on exit");
                    self.cand = Some(st.running.clone());
                }
                if kind == Kind::Exclusive {
                    out.line("warning: uncommitted changes will be discarded on exit");
                }
                out.line("Entering configuration mode");
                self.mode = Mode::Conf(kind);
                self.path.clear();
            }
            "show-conf" => {
                let rest: Vec<String> = toks[2..].to_vec();
                let cfg = st.running.clone();
                self.show_config(&cfg, &rest, out);
            }
            "show-vlans" => {
                out.line("Routing instance        VLAN name             Tag          Interfaces");
                for id in st.running.vlan_ids() {
                    let name = vlan_name(&st.running, id);
                    let members: Vec<String> = st
                        .running
                        .ports
                        .iter()
                        .filter(|(_, p)| p.access_vlan == Some(id) || p.allowed_vlans.contains(&id))
                        .map(|(n, _)| format!("{n}.0"))
                        .collect();
                    out.line(format!(
                        "default-switch          {:<21} {:<12} {}",
                        name,
                        id,
                        members.first().cloned().unwrap_or_default()
                    ));
                    for m in members.iter().skip(1) {
                        out.line(format!("{:<57}{m}", ""));
                    }
                }
            }
            "show-ifs" => {
                out.line(
                    "Interface               Admin Link Proto    Local                 Remote",
                );
                for (n, p) in &st.running.ports {
                    out.line(format!(
                        "{:<23} {:<5} {:<4}",
                        n,
                        if p.admin_up { "up" } else { "down" },
                        "up"
                    ));
                    if p.mode.is_some() {
                        out.line(format!(
                            "{:<23} {:<5} {:<4} eth-switch",
                            format!("{n}.0"),
                            "up",
                            "up"
                        ));
                    }
                }
            }
            "show-version" => {
                out.line(format!("Hostname: {}", self.host));
                out.line("Model: ex4300-48t");
                out.line("Junos: 21.4R3-S5 (simulated by mercury-sim)");
            }
            _ => unmodelled(st, "operational", line),
        }
        Flow::Continue
    }

    fn render_if(cfg: &Config, name: &str) -> Vec<String> {
        let mut v = Vec::new();
        let mut c = cfg.clone();
        let lag = cfg.ports.get(name).and_then(|p| p.lag.clone());
        let Some(l2) = c.l2(name) else {
            return v;
        };
        if !l2.description.is_empty() {
            v.push(format!("description \"{}\";", l2.description));
        }
        if !*l2.admin_up {
            v.push("disable;".into());
        }
        if let Some(m) = *l2.mtu {
            v.push(format!("mtu {m};"));
        }
        if let Some(n) = *l2.native_vlan {
            v.push(format!("native-vlan-id {n};"));
        }
        if let Some(l) = lag {
            v.push("ether-options {".into());
            v.push(format!("    802.3ad {l};"));
            v.push("}".into());
        }
        if let Some(l) = cfg.lags.get(name) {
            v.push("aggregated-ether-options {".into());
            if l.mode == "lacp" {
                v.push("    lacp {".into());
                v.push("        active;".into());
                v.push("    }".into());
            }
            v.push("}".into());
        }
        if let Some(m) = l2.mode.as_deref() {
            let members = members(&l2);
            v.push("unit 0 {".into());
            v.push("    family ethernet-switching {".into());
            v.push(format!("        interface-mode {m};"));
            if !members.is_empty() {
                v.push("        vlan {".into());
                if members.len() == 1 {
                    v.push(format!("            members {};", members[0]));
                } else {
                    let list = vlan_ranges(&members, " ", "-");
                    v.push(format!("            members [ {list} ];"));
                }
                v.push("        }".into());
            }
            v.push("    }".into());
            v.push("}".into());
        }
        v
    }

    fn is_default_if(cfg: &Config, name: &str) -> bool {
        match cfg.ports.get(name) {
            Some(p) => *p == Port::new(true),
            None => !cfg.lags.contains_key(name),
        }
    }

    fn render_vlans(cfg: &Config) -> Vec<String> {
        let mut v = Vec::new();
        for id in cfg.vlan_ids() {
            v.push(format!("{} {{", vlan_name(cfg, id)));
            v.push(format!("    vlan-id {id};"));
            v.push("}".into());
        }
        v
    }

    fn render_all(cfg: &Config) -> Vec<String> {
        let mut v = Vec::new();
        v.push("interfaces {".into());
        let names = cfg.if_names_lags_first();
        for n in names {
            if Self::is_default_if(cfg, &n) {
                continue;
            }
            v.push(format!("    {n} {{"));
            for l in Self::render_if(cfg, &n) {
                v.push(format!("        {l}"));
            }
            v.push("    }".into());
        }
        v.push("}".into());
        v.push("vlans {".into());
        for l in Self::render_vlans(cfg) {
            v.push(format!("    {l}"));
        }
        v.push("}".into());
        v
    }

    fn set_lines(cfg: &Config) -> Vec<String> {
        let mut v = Vec::new();
        let names = cfg.if_names_lags_first();
        for n in names {
            if Self::is_default_if(cfg, &n) {
                continue;
            }
            let mut c = cfg.clone();
            let lag = cfg.ports.get(&n).and_then(|p| p.lag.clone());
            let Some(l2) = c.l2(&n) else { continue };
            if !l2.description.is_empty() {
                v.push(format!(
                    "set interfaces {n} description \"{}\"",
                    l2.description
                ));
            }
            if !*l2.admin_up {
                v.push(format!("set interfaces {n} disable"));
            }
            if let Some(m) = *l2.mtu {
                v.push(format!("set interfaces {n} mtu {m}"));
            }
            if let Some(x) = *l2.native_vlan {
                v.push(format!("set interfaces {n} native-vlan-id {x}"));
            }
            if let Some(l) = lag {
                v.push(format!("set interfaces {n} ether-options 802.3ad {l}"));
            }
            if let Some(m) = l2.mode.as_deref() {
                v.push(format!(
                    "set interfaces {n} unit 0 family ethernet-switching interface-mode {m}"
                ));
                for mm in members(&l2) {
                    v.push(format!(
                        "set interfaces {n} unit 0 family ethernet-switching vlan members {mm}"
                    ));
                }
            }
            if cfg.lags.get(&n).is_some_and(|l| l.mode == "lacp") {
                v.push(format!(
                    "set interfaces {n} aggregated-ether-options lacp active"
                ));
            }
        }
        for id in cfg.vlan_ids() {
            v.push(format!("set vlans {} vlan-id {id}", vlan_name(cfg, id)));
        }
        v
    }

    /// `show configuration [path] [| display set]` (operational) and `show` (config).
    fn show_config(&self, cfg: &Config, rest: &[String], out: &mut Out) {
        let (path, pipe): (Vec<&String>, Vec<&String>) = {
            let i = rest.iter().position(|t| t == "|").unwrap_or(rest.len());
            (rest[..i].iter().collect(), rest[i..].iter().collect())
        };
        if pipe.iter().any(|t| t.as_str() == "set") {
            let prefix = path
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            for l in Self::set_lines(cfg) {
                if prefix.is_empty() || l.starts_with(&format!("set {prefix}")) {
                    out.line(l);
                }
            }
            return;
        }
        let lines = match path.as_slice() {
            [] => Self::render_all(cfg),
            [i] if i.as_str() == "interfaces" => {
                let all = Self::render_all(cfg);
                let end = all.iter().position(|l| l == "vlans {").unwrap_or(all.len());
                all[1..end.saturating_sub(1)]
                    .iter()
                    .map(|l| l.strip_prefix("    ").unwrap_or(l).to_string())
                    .collect()
            }
            [i, n, ..] if i.as_str() == "interfaces" => Self::render_if(cfg, n),
            [v] if v.as_str() == "vlans" => Self::render_vlans(cfg),
            [v, n, ..] if v.as_str() == "vlans" => match cfg
                .vlan_by_name(n)
                .or_else(|| parse_vlan(n).filter(|i| cfg.has_vlan(*i)))
            {
                Some(id) => vec![format!("vlan-id {id};")],
                None => Vec::new(),
            },
            _ => Vec::new(),
        };
        for l in lines {
            out.line(l);
        }
    }

    fn run_conf(&mut self, line: &str, st: &mut DeviceState, out: &mut Out) -> Flow {
        let toks = tokenize(line);
        let words: Vec<String> = toks.iter().map(|t| t.text.clone()).collect();
        let first = words.first().cloned().unwrap_or_default();
        let cmds = [
            "set",
            "delete",
            "commit",
            "rollback",
            "show",
            "exit",
            "quit",
            "top",
            "up",
            "edit",
            "run",
            "status",
            "load",
            "annotate",
            "activate",
            "deactivate",
            "insert",
            "rename",
            "copy",
            "help",
            "save",
            "wildcard",
        ];
        // Junos completes unique prefixes of configuration-mode commands (case matters).
        let Some(cmd) = keyword(&cmds, &first, false).found() else {
            self.caret(line, 0, "unknown command.", out);
            return Flow::Continue;
        };
        match cmd {
            "set" | "delete" => {
                let mut path: Vec<String> = self.path.clone();
                path.extend(words[1..].iter().cloned());
                let offset = toks.get(1).map_or(line.len(), |t| t.at);
                let offs: Vec<usize> = {
                    let mut v = vec![offset; self.path.len()];
                    v.extend(toks[1..].iter().map(|t| t.at));
                    v
                };
                let del = cmd == "delete";
                let mode = self.mode_name();
                let cand = self.cand(st);
                match statement(cand, &path, del) {
                    Ok(Effect::Done) => {}
                    Ok(Effect::Unmodelled) => unmodelled(st, &mode, line),
                    Ok(Effect::NotFound) => out.line("warning: statement not found"),
                    Err((i, msg)) => {
                        let at = offs.get(i).copied().unwrap_or(line.len());
                        self.caret(line, at, msg, out);
                    }
                }
            }
            "commit" => {
                let sub = words.get(1).cloned().unwrap_or_default();
                let quit = sub == "and-quit";
                if sub == "check" {
                    let cand = self.cand(st).clone();
                    match check(&cand) {
                        Ok(()) => out.line("configuration check succeeds"),
                        Err(e) => {
                            out.fail(e);
                            out.line("error: configuration check-out failed");
                        }
                    }
                    return Flow::Continue;
                }
                if self.faults.db_locked
                    && self.mode != Mode::Conf(Kind::Exclusive)
                    && self.mode != Mode::Conf(Kind::Private)
                {
                    out.fail(LOCK_HOLDER);
                    return Flow::Continue;
                }
                if self.faults.commit_fail {
                    out.fail("error: commit failed: (statements constraint check failed)");
                    return Flow::Continue;
                }
                let cand = self.cand(st).clone();
                if let Err(e) = check(&cand) {
                    out.fail(e);
                    out.line("error: configuration check-out failed");
                    return Flow::Continue;
                }
                if sub == "confirmed" {
                    let m = words.get(2).cloned().unwrap_or_else(|| "10".into());
                    out.line(format!("commit confirmed will be automatically rolled back in {m} minutes unless confirmed"));
                }
                if sub == "synchronize" {
                    out.line("configuration check succeeds");
                }
                st.running = cand.clone();
                st.saved = cand;
                match self.mode {
                    Mode::Conf(Kind::Private) => self.cand = Some(st.running.clone()),
                    _ => st.pending = None,
                }
                out.line("commit complete");
                if quit {
                    self.leave_config(st, out);
                }
            }
            "rollback" => {
                let n = words.get(1).cloned().unwrap_or_else(|| "0".into());
                if n.parse::<u32>().map_or(true, |x| x > 49) {
                    self.caret(line, toks.get(1).map_or(0, |t| t.at), "syntax error.", out);
                    return Flow::Continue;
                }
                match self.mode {
                    Mode::Conf(Kind::Private) => self.cand = Some(st.running.clone()),
                    _ => st.pending = None,
                }
                out.line("load complete");
            }
            "show" => {
                let cand = self.cand(st).clone();
                if words.iter().any(|w| w == "compare") {
                    let old = Self::set_lines(&st.running);
                    let new = Self::set_lines(&cand);
                    for l in &old {
                        if !new.contains(l) {
                            out.line(format!("- {}", l.trim_start_matches("set ")));
                        }
                    }
                    for l in &new {
                        if !old.contains(l) {
                            out.line(format!("+ {}", l.trim_start_matches("set ")));
                        }
                    }
                    return Flow::Continue;
                }
                let mut rest = self.path.clone();
                rest.extend(words[1..].iter().cloned());
                self.show_config(&cand, &rest, out);
            }
            "exit" | "quit" => {
                let full = words
                    .get(1)
                    .is_some_and(|w| "configuration-mode".starts_with(w.as_str()));
                if !self.path.is_empty() && !full {
                    self.path.clear();
                    return Flow::Continue;
                }
                if self.dirty(st) {
                    out.line("The configuration has been changed but not committed");
                    self.ask_exit = true;
                    return Flow::Continue;
                }
                self.leave_config(st, out);
            }
            "top" => self.path.clear(),
            "up" => {
                self.path.pop();
            }
            "edit" => {
                if words.len() < 2 {
                    self.path.clear();
                } else {
                    self.path.extend(words[1..].iter().cloned());
                }
            }
            "run" => {
                let rest = line
                    .trim_start()
                    .split_once(char::is_whitespace)
                    .map(|x| x.1)
                    .unwrap_or("")
                    .to_string();
                let saved = std::mem::replace(&mut self.mode, Mode::Op);
                let f = self.run_op(&rest, st, out);
                if self.mode == Mode::Op {
                    self.mode = saved;
                }
                if let Flow::Exit(_) = f {
                    return Flow::Continue;
                }
            }
            "status" => {
                out.line("Users currently editing the configuration:");
                out.line(format!(
                    "  {} terminal pts/0 (pid {}) on since 2024-05-01 10:00:00 UTC",
                    self.user,
                    std::process::id()
                ));
                out.line("      [edit]");
            }
            _ => unmodelled(st, &self.mode_name(), line),
        }
        Flow::Continue
    }
}

/// The `vlan members` of an interface: its access VLAN, else its tagged VLANs.
fn members(l2: &L2) -> Vec<u16> {
    match *l2.access_vlan {
        Some(a) => vec![a],
        None => l2.allowed.clone(),
    }
}

enum Effect {
    Done,
    Unmodelled,
    NotFound,
}

fn push_err(cfg: &mut Config, msg: String) {
    let e = cfg
        .extra
        .entry(ERR_KEY.to_string())
        .or_insert_with(|| serde_json::json!([]));
    if let Some(a) = e.as_array_mut() {
        a.push(serde_json::Value::String(msg));
    }
}

/// Commit-time checks: references to VLANs that don't exist, recorded errors.
fn check(cfg: &Config) -> Result<(), String> {
    if let Some(errs) = cfg.extra.get(ERR_KEY).and_then(|e| e.as_array()) {
        if let Some(e) = errs.first().and_then(|e| e.as_str()) {
            return Err(e.to_string());
        }
    }
    // An aggregated-ethernet member may have no logical unit of its own (dcd: "logical
    // unit is not allowed on aggregated links"; Junos rpc-error captures, sim/STATUS.md).
    for (n, p) in &cfg.ports {
        let has_unit = p.mode.is_some() || p.access_vlan.is_some() || !p.allowed_vlans.is_empty();
        if p.lag.is_some() && has_unit {
            return Err(format!(
                "[edit interfaces {n}]\n  'unit 0'\n    logical unit is not allowed on aggregated links"
            ));
        }
    }
    // A VLAN id no `vlans` entry carries, in `vlan members` or `native-vlan-id`: the
    // check-out refuses the commit with `No vlan matches vlan tag N for interface P.0`, the
    // words netman's Junos adapter matches in the device's commit error (set_access_vlan,
    // set_interface_native_vlan) and Internap's fake-switches raises for members and the
    // native VLAN alike; `error: configuration check-out failed` closes a check-out
    // refusal (EX2200 and MX80 captures; fake-switches' QFX model). The `[edit ...]` and
    // quoted-statement lines are the simulator's (sim/STATUS.md, "Undefined VLANs").
    let mut c = cfg.clone();
    let names = cfg.if_names();
    for n in names {
        let Some(l2) = c.l2(&n) else { continue };
        let mut refs: Vec<(u16, bool)> = l2.allowed.iter().map(|v| (*v, false)).collect();
        refs.extend(l2.access_vlan.map(|v| (v, false)));
        refs.extend(l2.native_vlan.map(|v| (v, true)));
        for (v, native) in refs {
            if !cfg.has_vlan(v) {
                let (path, statement) = if native {
                    (String::new(), format!("native-vlan-id {v}"))
                } else {
                    (
                        " unit 0 family ethernet-switching vlan".to_string(),
                        format!("members {v}"),
                    )
                };
                return Err(format!(
                    "[edit interfaces {n}{path}]\n  '{statement}'\n    No vlan matches vlan tag {v} for interface {n}.0\nerror: configuration check-out failed"
                ));
            }
        }
    }
    Ok(())
}

fn resolve_member(cfg: &Config, m: &str) -> Option<Vec<u16>> {
    if let Some(v) = parse_vlan_list(m, &[], "-") {
        return Some(v);
    }
    if m == "all" {
        return Some(cfg.vlan_ids());
    }
    cfg.vlan_by_name(m).map(|v| vec![v])
}

const TOP_UNMODELLED: &[&str] = &[
    "system",
    "protocols",
    "chassis",
    "routing-options",
    "snmp",
    "firewall",
    "policy-options",
    "class-of-service",
    "forwarding-options",
    "routing-instances",
    "switch-options",
    "groups",
    "apply-groups",
    "security",
    "services",
    "access",
    "poe",
    "virtual-chassis",
    "ethernet-switching-options",
    "event-options",
    "multi-chassis",
    "version",
];

const IF_UNMODELLED: &[&str] = &[
    "speed",
    "link-mode",
    "gigether-options",
    "flexible-vlan-tagging",
    "encapsulation",
    "vlan-tagging",
    "hold-time",
    "esi",
    "traceoptions",
    "apply-groups",
    "damping",
];

/// Apply a `set`/`delete` statement to the candidate. Errors carry the index of
/// the offending token within `path`.
fn statement(
    cfg: &mut Config,
    path: &[String],
    del: bool,
) -> Result<Effect, (usize, &'static str)> {
    let Some(top) = path.first() else {
        return Err((0, "syntax error."));
    };
    match top.as_str() {
        "vlans" => {
            let Some(name) = path.get(1) else {
                if del {
                    let ids: Vec<u16> = cfg.vlan_ids();
                    for id in ids {
                        cfg.del_vlan(id);
                    }
                    return Ok(Effect::Done);
                }
                return Err((1, "syntax error."));
            };
            let existing = cfg.vlan_by_name(name);
            match path.get(2).map(String::as_str) {
                None => {
                    if del {
                        return match existing {
                            Some(id) => {
                                cfg.del_vlan(id);
                                Ok(Effect::Done)
                            }
                            None => Ok(Effect::NotFound),
                        };
                    }
                    Ok(Effect::Unmodelled)
                }
                Some("vlan-id") => {
                    if del {
                        if let Some(id) = existing {
                            cfg.del_vlan(id);
                        }
                        return Ok(Effect::Done);
                    }
                    let Some(id) = path.get(3).and_then(|s| parse_vlan(s)) else {
                        return Err((3, "syntax error."));
                    };
                    if path.len() > 4 {
                        return Err((4, "syntax error."));
                    }
                    if let Some(old) = existing {
                        cfg.del_vlan(old);
                    }
                    cfg.vlan_mut(id).name = name.clone();
                    Ok(Effect::Done)
                }
                Some(
                    "description" | "vxlan" | "l3-interface" | "vrf-target" | "interface"
                    | "switch-options" | "forwarding-options" | "no-local-switching",
                ) => Ok(Effect::Unmodelled),
                Some(_) => Err((2, "syntax error.")),
            }
        }
        "interfaces" => {
            let Some(ifn) = path.get(1) else {
                return Err((1, "syntax error."));
            };
            if !junos_if_ok(ifn) {
                return Err((1, "syntax error."));
            }
            let is_ae = ifn.starts_with("ae") && ifn[2..].parse::<u32>().is_ok();
            if !cfg.has_if(ifn) {
                if is_ae && !del {
                    cfg.lags.insert(ifn.clone(), Lag::new("static"));
                } else if is_ae
                    || ifn.starts_with("irb")
                    || ifn.starts_with("lo0")
                    || ifn.starts_with("em")
                    || ifn.starts_with("me0")
                    || ifn.starts_with("vme")
                    || ifn.starts_with("fxp")
                {
                    return Ok(if del {
                        Effect::NotFound
                    } else {
                        Effect::Unmodelled
                    });
                } else {
                    push_err(
                        cfg,
                        format!("[edit interfaces]\n  '{ifn}'\n    Interface {ifn} does not exist on this platform\nerror: configuration check-out failed"),
                    );
                    return Ok(Effect::Unmodelled);
                }
            }
            if_statement(cfg, ifn, &path[2..], del).map_err(|(i, m)| (i + 2, m))
        }
        t if TOP_UNMODELLED.contains(&t) => {
            if path.len() < 2 && !del {
                return Err((1, "syntax error."));
            }
            Ok(Effect::Unmodelled)
        }
        _ => Err((0, "syntax error.")),
    }
}

/// `native-vlan-id N` (`set`) or `native-vlan-id` (`delete`); `at` is the
/// value's index in the statement, for the syntax error.
fn native_vlan(
    l2: &mut L2,
    del: bool,
    value: Option<&String>,
    at: usize,
) -> Result<Effect, (usize, &'static str)> {
    if del {
        *l2.native_vlan = None;
        return Ok(Effect::Done);
    }
    let v = value
        .and_then(|s| parse_vlan(s))
        .ok_or((at, "syntax error."))?;
    *l2.native_vlan = Some(v);
    Ok(Effect::Done)
}

fn if_statement(
    cfg: &mut Config,
    ifn: &str,
    rest: &[String],
    del: bool,
) -> Result<Effect, (usize, &'static str)> {
    let lagname_for_eo = |s: &str| s.starts_with("ae") && s[2..].parse::<u32>().is_ok();
    if rest.is_empty() {
        if !del {
            return Ok(Effect::Unmodelled);
        }
        if cfg.lags.contains_key(ifn) {
            cfg.del_lag(ifn);
        } else if let Some(p) = cfg.ports.get_mut(ifn) {
            let lag = p.lag.clone();
            *p = Port::new(true);
            p.lag = lag;
            cfg.leave_lag(ifn);
        }
        return Ok(Effect::Done);
    }
    let kw = rest[0].as_str();
    if kw == "ether-options" || kw == "gigether-options" {
        match rest.get(1).map(String::as_str) {
            Some("802.3ad") => {
                if del {
                    cfg.leave_lag(ifn);
                    return Ok(Effect::Done);
                }
                let Some(ae) = rest.get(2).filter(|a| lagname_for_eo(a)) else {
                    return Err((2, "syntax error."));
                };
                let mode = cfg.lag_mode(ae, "static");
                cfg.join_lag(ifn, ae, &mode);
                return Ok(Effect::Done);
            }
            Some(
                "auto-negotiation"
                | "no-auto-negotiation"
                | "speed"
                | "link-mode"
                | "flow-control"
                | "no-flow-control",
            ) => return Ok(Effect::Unmodelled),
            _ => return Err((1, "syntax error.")),
        }
    }
    if kw == "aggregated-ether-options" {
        match (
            rest.get(1).map(String::as_str),
            rest.get(2).map(String::as_str),
        ) {
            (Some("lacp"), Some("active" | "passive")) | (Some("lacp"), None) => {
                if let Some(l) = cfg.lags.get_mut(ifn) {
                    l.mode = if del { "static".into() } else { "lacp".into() };
                }
                return Ok(Effect::Done);
            }
            (Some("lacp"), Some("periodic" | "system-id" | "admin-key")) => {
                return Ok(Effect::Unmodelled)
            }
            (Some("minimum-links" | "link-speed"), _) => return Ok(Effect::Unmodelled),
            _ => return Err((1, "syntax error.")),
        }
    }
    if IF_UNMODELLED.contains(&kw) {
        return Ok(Effect::Unmodelled);
    }
    let Some(mut l2) = cfg.l2(ifn) else {
        return Ok(Effect::NotFound);
    };
    match kw {
        "disable" => {
            if rest.len() > 1 {
                return Err((1, "syntax error."));
            }
            *l2.admin_up = del;
            Ok(Effect::Done)
        }
        "description" => {
            if del {
                l2.description.clear();
            } else {
                if rest.len() < 2 {
                    return Err((1, "syntax error."));
                }
                *l2.description = rest[1..].join(" ");
            }
            Ok(Effect::Done)
        }
        "mtu" => {
            if del {
                *l2.mtu = None;
                return Ok(Effect::Done);
            }
            match rest
                .get(1)
                .and_then(|s| s.parse::<u32>().ok())
                .filter(|m| (256..=9216).contains(m))
            {
                Some(m) => {
                    *l2.mtu = Some(m);
                    Ok(Effect::Done)
                }
                None => Err((1, "syntax error.")),
            }
        }
        "native-vlan-id" => native_vlan(&mut l2, del, rest.get(1), 1),
        "unit" => {
            let Some(unit) = rest.get(1) else {
                return Err((1, "syntax error."));
            };
            if unit.parse::<u32>().is_err() {
                return Err((1, "syntax error."));
            }
            if unit != "0" {
                return Ok(Effect::Unmodelled);
            }
            let clear = |l2: &mut L2| {
                l2.set_mode(None);
                *l2.access_vlan = None;
                l2.allowed.clear();
            };
            match rest.get(2).map(String::as_str) {
                None => {
                    if del {
                        clear(&mut l2);
                        return Ok(Effect::Done);
                    }
                    return Ok(Effect::Unmodelled);
                }
                Some("family") => match rest.get(3).map(String::as_str) {
                    Some("ethernet-switching") => {}
                    Some("inet" | "inet6" | "iso" | "mpls") => return Ok(Effect::Unmodelled),
                    _ => return Err((3, "syntax error.")),
                },
                Some("description" | "vlan-id" | "enable" | "disable") => {
                    return Ok(Effect::Unmodelled)
                }
                Some(_) => return Err((2, "syntax error.")),
            }
            // unit 0 family ethernet-switching ...
            let es = &rest[4..];
            match es.first().map(String::as_str) {
                None => {
                    if del {
                        clear(&mut l2);
                    } else if l2.mode.is_none() {
                        l2.set_mode(Some("access"));
                    }
                    Ok(Effect::Done)
                }
                Some("interface-mode" | "port-mode") => {
                    if del {
                        // Default is access; keep a single member as access VLAN.
                        let members: Vec<u16> = l2.allowed.clone();
                        l2.set_mode(Some("access"));
                        if l2.access_vlan.is_none() && members.len() == 1 {
                            *l2.access_vlan = Some(members[0]);
                            l2.allowed.clear();
                        }
                        return Ok(Effect::Done);
                    }
                    match es.get(1).map(String::as_str) {
                        Some("access") => {
                            l2.set_mode(Some("access"));
                            if l2.access_vlan.is_none() && l2.allowed.len() == 1 {
                                *l2.access_vlan = Some(l2.allowed[0]);
                                l2.allowed.clear();
                            }
                            Ok(Effect::Done)
                        }
                        Some("trunk") => {
                            l2.set_mode(Some("trunk"));
                            if let Some(a) = l2.access_vlan.take() {
                                l2.allow_add(&[a]);
                            }
                            Ok(Effect::Done)
                        }
                        _ => Err((5, "syntax error.")),
                    }
                }
                Some("native-vlan-id") => native_vlan(&mut l2, del, es.get(1), 5),
                Some("vlan") => {
                    if es.get(1).map(String::as_str) != Some("members") {
                        return Err((5, "syntax error."));
                    }
                    let raw: Vec<&String> =
                        es[2..].iter().filter(|t| *t != "[" && *t != "]").collect();
                    if raw.is_empty() {
                        if del {
                            *l2.access_vlan = None;
                            l2.allowed.clear();
                            return Ok(Effect::Done);
                        }
                        return Err((6, "syntax error."));
                    }
                    let _ = l2;
                    let mut ids = Vec::new();
                    for m in &raw {
                        match resolve_member(cfg, m) {
                            Some(v) => ids.extend(v),
                            None if del => {}
                            None => {
                                push_err(cfg, format!("[edit interfaces {ifn} unit 0 family ethernet-switching vlan]\n  'members {m}'\n    Referenced vlan {m} is not defined\nerror: configuration check-out failed"));
                                return Ok(Effect::Unmodelled);
                            }
                        }
                    }
                    let Some(mut l2) = cfg.l2(ifn) else {
                        return Ok(Effect::NotFound);
                    };
                    if del {
                        if l2.access_vlan.is_some_and(|a| ids.contains(&a)) {
                            *l2.access_vlan = None;
                        }
                        l2.allow_remove(&ids);
                        return Ok(Effect::Done);
                    }
                    if l2.mode.as_deref() == Some("trunk") {
                        l2.allow_add(&ids);
                    } else {
                        l2.set_mode(Some("access"));
                        match (*l2.access_vlan, ids.as_slice()) {
                            (None, [one]) => *l2.access_vlan = Some(*one),
                            (Some(a), [one]) if a == *one => {}
                            _ => {
                                // More than one member on an access port: fails at commit.
                                let mut all = ids.clone();
                                all.extend(*l2.access_vlan);
                                *l2.access_vlan = None;
                                l2.allow_add(&all);
                                push_err(cfg, format!("[edit interfaces {ifn} unit 0 family ethernet-switching]\n  'interface-mode access'\n    Access interface {ifn}.0 is not allowed to have more than one vlan member\nerror: configuration check-out failed"));
                            }
                        }
                    }
                    Ok(Effect::Done)
                }
                Some("storm-control" | "filter" | "recovery-timeout") => Ok(Effect::Unmodelled),
                Some(_) => Err((4, "syntax error.")),
            }
        }
        _ => Err((0, "syntax error.")),
    }
}

impl Cli for Junos {
    fn banner(&self) -> String {
        "--- JUNOS 21.4R3-S5 Kernel 64-bit  JNPR-12.1-20230810.3b3d2a0_buil\n".into()
    }

    fn prompt(&self) -> String {
        if self.ask_exit {
            return "Exit with uncommitted changes? [yes,no] (yes) ".into();
        }
        match self.mode {
            Mode::Op => format!("\n{}", self.base_prompt()),
            Mode::Conf(_) => {
                let p = if self.path.is_empty() {
                    "[edit]".to_string()
                } else {
                    format!("[edit {}]", self.path.join(" "))
                };
                format!("\n{p}\n{}", self.base_prompt())
            }
        }
    }

    fn mode_name(&self) -> String {
        match self.mode {
            Mode::Op => "operational".into(),
            Mode::Conf(Kind::Shared) => "configure".into(),
            Mode::Conf(Kind::Private) => "configure-private".into(),
            Mode::Conf(Kind::Exclusive) => "configure-exclusive".into(),
        }
    }

    fn handle(&mut self, line: &str, st: &mut DeviceState, out: &mut Out) -> Flow {
        if self.ask_exit {
            self.ask_exit = false;
            let a = line.trim().to_ascii_lowercase();
            if a.is_empty() || a == "yes" || a == "y" {
                if self.mode == Mode::Conf(Kind::Private) {
                    out.line("warning: uncommitted changes will be discarded on exit");
                }
                self.leave_config(st, out);
            }
            return Flow::Continue;
        }
        if line.trim().is_empty() {
            return Flow::Continue;
        }
        match self.mode {
            Mode::Op => self.run_op(line, st, out),
            Mode::Conf(_) => self.run_conf(line, st, out),
        }
    }

    fn reject(&mut self, line: &str, out: &mut Out) {
        let at = tokenize(line).get(1).map_or(0, |t| t.at);
        self.caret(line, at, "syntax error.", out);
    }

    fn pager(&self) -> Option<(usize, &'static str)> {
        self.paging.then_some((24, "---(more)---"))
    }

    fn asking(&self) -> bool {
        self.ask_exit
    }

    fn exec_context(&mut self) {
        self.paging = false;
    }
}
