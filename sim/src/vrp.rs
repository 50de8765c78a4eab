//! The VRP-like family: Huawei VRP v5, Huawei VRP v8 (CE, two-stage commit)
//! and HPE/H3C Comware. User view `<host>`, system view `[host]`, interface
//! and VLAN views `[host-GigabitEthernet0/0/1]`, `quit`/`return`, `undo`,
//! `Error: Unrecognized command found at '^' position.`, `save` with its
//! confirmation, and for v8 a session candidate with `commit`.

use crate::cli::{caret, unmodelled, Cli, Env, Flow, Out};
use crate::grammar::{Arg, Args, Grammar, Verdict};
use crate::model::{Config, DeviceState, Lag};
use crate::platform::Platform::{self, *};
use crate::words::{parse_vlan_words, vlan_ranges, word_at, IfNaming};

#[derive(Debug, Clone, PartialEq)]
enum Mode {
    User,
    System,
    If(String),
    Vlan(u16),
    Other(String),
}

#[derive(Debug, Clone, PartialEq)]
enum Ask {
    Save,
    /// v8: leaving system view with uncommitted changes (then: go to user view?).
    Uncommitted(bool),
}

/// One VRP / Comware session.
pub struct Vrp {
    p: Platform,
    host: String,
    mode: Mode,
    ask: Option<Ask>,
    faults: crate::faults::Faults,
    paging: bool,
    naming: IfNaming,
    cand: Option<Config>,
    interactive: bool,
    user_g: Grammar,
    sys_g: Grammar,
    if_g: Grammar,
    vlan_g: Grammar,
    other_g: Grammar,
}

fn lag_prefix(p: Platform) -> &'static str {
    if p == HpeComware {
        "Bridge-Aggregation"
    } else {
        "Eth-Trunk"
    }
}

impl Vrp {
    /// A session in user view.
    pub fn new(env: &Env) -> Vrp {
        let p = env.platform;
        let types = match p {
            Huawei => vec![
                "GigabitEthernet",
                "XGigabitEthernet",
                "Eth-Trunk",
                "Vlanif",
                "LoopBack",
                "MEth",
                "NULL",
            ],
            HuaweiVrpv8 => vec!["GE", "Eth-Trunk", "Vlanif", "LoopBack", "MEth", "NULL"],
            _ => vec![
                "GigabitEthernet",
                "Ten-GigabitEthernet",
                "Bridge-Aggregation",
                "Vlan-interface",
                "LoopBack",
                "M-GigabitEthernet",
                "NULL",
            ],
        };
        let (save, paging_off): (&'static str, &'static str) = match p {
            HpeComware => ("save [force]", "screen-length disable"),
            _ => ("save", "screen-length 0 temporary"),
        };
        let user_g = Grammar::new(
            true,
            &[
                ("system-view", "system"),
                ("quit", "quit"),
                ("return", "noop"),
                (save, "save"),
                (paging_off, "paging-off"),
                ("screen-width <num:80-512>", "noop"),
                ("display current-configuration", "display-cur"),
                (
                    "display current-configuration interface <if>",
                    "display-cur",
                ),
                ("display saved-configuration", "display-saved"),
                ("display vlan [<rest>]", "display-vlan"),
                ("display interface brief", "display-brief"),
                ("display <rest>", "unmodelled"),
                ("ping <rest>", "unmodelled"),
                ("undo terminal monitor", "noop"),
                ("terminal monitor", "noop"),
            ],
        );
        let mut sys_g = Grammar::new(
            true,
            &[
                ("quit", "quit"),
                ("return", "return"),
                (save, "save"),
                ("sysname <word>", "sysname"),
                ("vlan <vlan>", "vlan"),
                ("undo vlan <vlan>", "undo-vlan"),
                ("interface <if>", "interface"),
                ("undo interface <if>", "undo-interface"),
                ("display <rest>", "display"),
                ("stp <rest>", "unmodelled"),
                ("undo stp <rest>", "unmodelled"),
                ("lldp <rest>", "unmodelled"),
                ("undo lldp <rest>", "unmodelled"),
                ("ntp-service <rest>", "unmodelled"),
                ("info-center <rest>", "unmodelled"),
                ("undo info-center <rest>", "unmodelled"),
                ("snmp-agent [<rest>]", "unmodelled"),
                ("ip <rest>", "unmodelled"),
                ("aaa", "submode"),
                ("user-interface <rest>", "submode"),
                ("line <rest>", "submode"),
                ("local-user <rest>", "submode"),
            ],
        );
        match p {
            HpeComware => sys_g.extend(&[
                ("vlan <vlan> to <vlan>", "vlan-range"),
                ("undo vlan <vlan> to <vlan>", "undo-vlan-range"),
            ]),
            _ => sys_g.extend(&[
                ("vlan batch <rest>", "vlan-batch"),
                ("undo vlan batch <rest>", "undo-vlan-batch"),
            ]),
        }
        if p == HuaweiVrpv8 {
            sys_g.extend(&[("commit [<rest>]", "commit"), ("abort", "abort")]);
        }
        let common_if: &[(&'static str, &'static str)] = &[
            ("quit", "quit"),
            ("return", "return"),
            ("shutdown", "shutdown"),
            ("undo shutdown", "undo-shutdown"),
            ("description <rest>", "description"),
            ("undo description", "undo-description"),
            ("port link-type access|trunk|hybrid", "link-type"),
            ("undo port link-type", "undo-link-type"),
            ("port trunk pvid vlan <vlan>", "pvid"),
            ("undo port trunk pvid vlan", "undo-pvid"),
            ("port hybrid pvid vlan <vlan>", "pvid"),
            ("undo port hybrid pvid vlan", "undo-pvid"),
            ("port hybrid tagged vlan <rest>", "hybrid-tagged"),
            ("port hybrid untagged vlan <rest>", "hybrid-untagged"),
            ("undo port hybrid vlan <rest>", "undo-hybrid"),
            ("stp <rest>", "unmodelled"),
            ("undo stp <rest>", "unmodelled"),
            ("lldp <rest>", "unmodelled"),
            ("undo lldp <rest>", "unmodelled"),
            ("speed <rest>", "unmodelled"),
            ("undo speed", "unmodelled"),
            ("negotiation auto", "unmodelled"),
            ("undo negotiation auto", "unmodelled"),
            ("display this", "display-this"),
            ("commit [<rest>]", "commit"),
        ];
        let mut if_g = Grammar::new(true, common_if);
        match p {
            HpeComware => if_g.extend(&[
                ("port access vlan <vlan>", "access"),
                ("undo port access vlan", "undo-access"),
                ("port trunk permit vlan all", "trunk-all"),
                ("port trunk permit vlan <rest>", "trunk-add"),
                ("undo port trunk permit vlan all", "trunk-none"),
                ("undo port trunk permit vlan <rest>", "trunk-remove"),
                ("port link-aggregation group <num:1-1024>", "lag-join"),
                ("undo port link-aggregation group", "lag-leave"),
                ("link-aggregation mode dynamic|static", "lag-mode"),
                ("undo link-aggregation mode", "lag-mode-static"),
                ("jumboframe enable [<num:1536-10000>]", "mtu"),
                ("undo jumboframe enable", "undo-mtu"),
                ("mtu <num:46-10000>", "mtu"),
                ("undo mtu", "undo-mtu"),
            ]),
            _ => if_g.extend(&[
                ("port default vlan <vlan>", "access"),
                ("undo port default vlan", "undo-access"),
                ("undo port default vlan <vlan>", "undo-access"),
                ("port trunk allow-pass vlan all", "trunk-all"),
                ("port trunk allow-pass vlan <rest>", "trunk-add"),
                ("undo port trunk allow-pass vlan all", "trunk-none"),
                ("undo port trunk allow-pass vlan <rest>", "trunk-remove"),
                ("eth-trunk <num:0-511>", "lag-join"),
                ("undo eth-trunk", "lag-leave"),
                ("mode lacp|lacp-static|manual", "lag-mode"),
                ("mode manual load-balance", "lag-mode-static"),
                ("undo mode", "lag-mode-static"),
                ("jumboframe enable [<num:1536-12288>]", "mtu"),
                ("undo jumboframe enable", "undo-mtu"),
                ("mtu <num:46-9600>", "mtu"),
                ("undo mtu", "undo-mtu"),
            ]),
        }
        let vlan_g = Grammar::new(
            true,
            &[
                ("quit", "quit"),
                ("return", "return"),
                ("description <rest>", "vlan-desc"),
                ("undo description", "vlan-undo-desc"),
                ("name <word>", "vlan-desc"),
                ("undo name", "vlan-undo-desc"),
                ("commit [<rest>]", "commit"),
            ],
        );
        let other_g = Grammar::new(
            true,
            &[
                ("quit", "quit"),
                ("return", "return"),
                ("commit", "commit"),
                ("undo <rest>", "unmodelled"),
                ("<rest>", "unmodelled"),
            ],
        );
        Vrp {
            p,
            host: env.hostname.clone(),
            mode: Mode::User,
            ask: None,
            faults: env.faults.clone(),
            paging: true,
            naming: IfNaming {
                types,
                sep: "",
                bare_numbers: false,
            },
            cand: None,
            interactive: env.interactive,
            user_g,
            sys_g,
            if_g,
            vlan_g,
            other_g,
        }
    }

    fn dirty(&self, st: &DeviceState) -> bool {
        self.cand.as_ref().is_some_and(|c| *c != st.running)
    }

    fn view_prompt(&self) -> String {
        let mark = if self.p == HuaweiVrpv8 {
            if self.cand.is_some() {
                "*"
            } else {
                "~"
            }
        } else {
            ""
        };
        match &self.mode {
            Mode::User => format!("<{}>", self.host),
            Mode::System => format!("[{mark}{}]", self.host),
            Mode::If(n) => format!("[{mark}{}-{n}]", self.host),
            Mode::Vlan(v) => format!("[{mark}{}-vlan{v}]", self.host),
            Mode::Other(s) => format!("[{mark}{}-{s}]", self.host),
        }
    }

    /// A parser error in this platform's spelling: VRP's `Error: X found at '^'
    /// position.`, Comware's ` % X found at '^' position.` (one leading space).
    fn spell(&self, msg: &str) -> String {
        match (self.p, msg.strip_prefix("Error: ")) {
            (HpeComware, Some(rest)) if rest.ends_with("found at '^' position.") => {
                format!(" % {rest}")
            }
            _ => msg.to_string(),
        }
    }

    fn err_caret(&self, line: &str, at: usize, what: &str, out: &mut Out) {
        let prompt = self.interactive.then(|| self.view_prompt());
        out.line(caret(prompt.as_deref(), line, at));
        if self.p == HpeComware {
            // Comware indents its error by one space under the caret line (HPE's pyhpecw7
            // test_vxlan.py:37-38; docs/evidence.md S2).
            out.fail(format!(" % {what} found at '^' position."));
        } else {
            out.fail(format!("Error: {what} found at '^' position."));
        }
    }

    fn save_now(&self, st: &mut DeviceState, out: &mut Out) {
        if self.faults.db_locked {
            out.fail(match self.p {
                HpeComware => "The configuration file is being saved by another user. Please try again later.",
                _ => "Error: The system is busy in saving configuration (locked by another user). Please try again later.",
            });
            return;
        }
        if self.faults.commit_fail {
            out.fail("Error: Failed to save the configuration file.");
            return;
        }
        st.saved = st.running.clone();
        match self.p {
            HpeComware => {
                out.line("Validating file. Please wait...");
                out.line("Saved the current configuration to mainboard device successfully.");
            }
            HuaweiVrpv8 => {
                out.line("Now saving the current configuration to the slot 1");
                out.line("Info: Save the configuration successfully.");
            }
            _ => {
                out.line("  Now saving the current configuration to the slot 0.");
                out.line("  Save the configuration successfully.");
            }
        }
    }

    fn commit(&mut self, st: &mut DeviceState, out: &mut Out) {
        if self.p != HuaweiVrpv8 {
            return;
        }
        if self.faults.db_locked {
            out.fail("Error: The configuration database is locked by another user. Please try again later.");
            return;
        }
        if self.faults.commit_fail {
            out.fail("Error: The configuration failed to be committed.");
            return;
        }
        if let Some(c) = self.cand.take() {
            st.running = c;
        }
    }

    fn render_if(&self, cfg: &Config, n: &str) -> Vec<String> {
        let mut v = vec![format!("interface {n}")];
        let mut c = cfg.clone();
        let lag = cfg.ports.get(n).and_then(|p| p.lag.clone());
        let Some(l2) = c.l2(n) else { return v };
        if !l2.description.is_empty() {
            v.push(format!(" description {}", l2.description));
        }
        if let Some(m) = l2.mode.as_deref() {
            v.push(format!(" port link-type {m}"));
        }
        // Comware spells the access, trunk and LAG commands its own way.
        let (access, trunk, lag_member) = if self.p == HpeComware {
            (
                "port access vlan",
                "port trunk permit vlan",
                "port link-aggregation group",
            )
        } else {
            (
                "port default vlan",
                "port trunk allow-pass vlan",
                "eth-trunk",
            )
        };
        if let Some(a) = *l2.access_vlan {
            v.push(format!(" {access} {a}"));
        }
        if let Some(nv) = *l2.native_vlan {
            v.push(format!(" port trunk pvid vlan {nv}"));
        }
        if !l2.allowed.is_empty() {
            v.push(format!(" {trunk} {}", vlan_ranges(l2.allowed, " ", " to ")));
        }
        if let Some(m) = *l2.mtu {
            v.push(format!(" jumboframe enable {m}"));
        }
        if let Some(l) = lag {
            let num = l.trim_start_matches(lag_prefix(self.p));
            v.push(format!(" {lag_member} {num}"));
        }
        if !*l2.admin_up {
            v.push(" shutdown".into());
        }
        v
    }

    fn display_cur(&self, cfg: &Config, iface: Option<String>, out: &mut Out) {
        if let Some(n) = iface {
            out.line("#");
            for l in self.render_if(cfg, &n) {
                out.line(l);
            }
            out.line("#");
            out.line("return");
            return;
        }
        out.line("#");
        out.line(format!(" sysname {}", self.host));
        out.line("#");
        let ids: Vec<u16> = cfg.vlan_ids().into_iter().filter(|v| *v != 1).collect();
        if !ids.is_empty() {
            out.line(format!("vlan batch {}", vlan_ranges(&ids, " ", " to ")));
            out.line("#");
        }
        for id in ids {
            let name = &cfg.vlans[&id.to_string()].name;
            if !name.is_empty() {
                out.line(format!("vlan {id}"));
                out.line(format!(" description {name}"));
                out.line("#");
            }
        }
        let names = cfg.if_names_lags_first();
        for n in names {
            for l in self.render_if(cfg, &n) {
                out.line(l);
            }
            out.line("#");
        }
        out.line("return");
    }

    fn run(&mut self, line: &str, st: &mut DeviceState, out: &mut Out) -> Flow {
        let g = match self.mode {
            Mode::User => &self.user_g,
            Mode::System => &self.sys_g,
            Mode::If(_) => &self.if_g,
            Mode::Vlan(_) => &self.vlan_g,
            Mode::Other(_) => &self.other_g,
        };
        let mut verdict = g.parse(line, &self.naming);
        // Like VRP, system-view commands also work from interface / VLAN views.
        if matches!(verdict, Verdict::Invalid(_))
            && matches!(self.mode, Mode::If(_) | Mode::Vlan(_))
        {
            if let Verdict::Ok(a, args) = self.sys_g.parse(line, &self.naming) {
                if a != "quit" && a != "return" {
                    verdict = Verdict::Ok(a, args);
                }
            }
        }
        let (act, a) = match verdict {
            Verdict::Ok(act, a) => (act, a),
            Verdict::Invalid(at) => {
                let tok = word_at(line, at);
                let what = if at > 0 && tok.starts_with(|c: char| c.is_ascii_digit()) {
                    "Wrong parameter"
                } else {
                    "Unrecognized command"
                };
                self.err_caret(line, at, what, out);
                return Flow::Continue;
            }
            Verdict::Incomplete => {
                self.err_caret(line, line.trim_end().len(), "Incomplete command", out);
                return Flow::Continue;
            }
            Verdict::Ambiguous(at) => {
                self.err_caret(line, at, "Ambiguous command", out);
                return Flow::Continue;
            }
        };
        let mode_name = self.mode_name();
        match act {
            "quit" => match self.mode {
                Mode::User => return Flow::Exit(0),
                Mode::System => {
                    if self.p == HuaweiVrpv8 && self.dirty(st) {
                        self.ask = Some(Ask::Uncommitted(true));
                    } else {
                        self.cand = None;
                        self.mode = Mode::User;
                    }
                }
                _ => self.mode = Mode::System,
            },
            "return" => {
                if self.p == HuaweiVrpv8 && self.dirty(st) {
                    self.ask = Some(Ask::Uncommitted(true));
                } else {
                    self.cand = None;
                    self.mode = Mode::User;
                }
            }
            "system" => {
                if self.p != HpeComware {
                    out.line("Enter system view, return user view with Ctrl+Z.");
                } else {
                    out.line("System View: return to User View with Ctrl+Z.");
                }
                self.mode = Mode::System;
            }
            "noop" => {}
            "paging-off" => {
                self.paging = false;
                if self.p != HpeComware {
                    out.line("Info: The configuration takes effect on the current user terminal interface only.");
                }
            }
            "save" => {
                if line.contains("force") {
                    self.save_now(st, out);
                } else {
                    match self.p {
                        HuaweiVrpv8 => out.line("Warning: The current configuration will be written to the device. Continue? [Y/N]:"),
                        HpeComware => out.line("The current configuration will be written to the device. Are you sure? [Y/N]:"),
                        _ => out.line("  The current configuration will be written to the device."),
                    }
                    self.ask = Some(Ask::Save);
                }
            }
            "display-cur" | "display-saved" => {
                let cfg = if act == "display-saved" {
                    st.saved.clone()
                } else {
                    st.running.clone()
                };
                let iface = match a.first() {
                    Some(x) => match self.naming.canon(&x.text()).filter(|n| cfg.has_if(n)) {
                        Some(n) => Some(n),
                        None => {
                            out.fail(self.spell("Error: Wrong parameter found at '^' position."));
                            return Flow::Continue;
                        }
                    },
                    None => None,
                };
                self.display_cur(&cfg, iface, out);
            }
            "display-this" => {
                if let Mode::If(n) = &self.mode {
                    let cfg = self.cand.clone().unwrap_or_else(|| st.running.clone());
                    out.line("#");
                    for l in self.render_if(&cfg, n) {
                        out.line(l);
                    }
                    out.line("#");
                    out.line("return");
                }
            }
            "display-vlan"
                if self.p == HpeComware && line.split_whitespace().nth(2) == Some("brief") =>
            {
                // Comware's brief table (ntc-templates
                // `hp_comware_display_vlan_brief.raw`): a preamble, `VLAN ID   Name   Port`,
                // abbreviated member names three to a row, continuation rows indented to
                // the Port column.
                let cfg = &st.running;
                out.line("Brief information about all VLANs:");
                out.line("Supported Minimum VLAN ID: 1");
                out.line("Supported Maximum VLAN ID: 4094");
                out.line("Default VLAN ID: 1");
                out.line(format!("{:<10}{:<33}Port", "VLAN ID", "Name"));
                for id in cfg.vlan_ids() {
                    let name = match cfg.vlans.get(&id.to_string()) {
                        Some(v) if !v.name.is_empty() => v.name.clone(),
                        _ => format!("VLAN {id:04}"),
                    };
                    let ports: Vec<String> = cfg
                        .ports
                        .iter()
                        .filter(|(_, p)| {
                            p.access_vlan == Some(id)
                                || p.allowed_vlans.contains(&id)
                                || p.native_vlan == Some(id)
                        })
                        .map(|(n, _)| comware_short(n))
                        .collect();
                    let mut rows = ports.chunks(3).map(|c| c.join("  "));
                    let first = rows.next().unwrap_or_default();
                    out.line(format!("{:<10}{:<33}{first}", id, name).trim_end());
                    for r in rows {
                        out.line(format!("{:<43}{r}", ""));
                    }
                }
            }
            "display-vlan" => {
                out.line("VID  Type    Ports");
                out.line("--------------------------------------------------------------------------------");
                let cfg = &st.running;
                for id in cfg.vlan_ids() {
                    let ports: Vec<String> = cfg
                        .ports
                        .iter()
                        .filter(|(_, p)| {
                            p.access_vlan == Some(id)
                                || p.allowed_vlans.contains(&id)
                                || p.native_vlan == Some(id)
                        })
                        .map(|(n, p)| {
                            format!(
                                "{}:{n}",
                                if p.allowed_vlans.contains(&id) {
                                    "TG"
                                } else {
                                    "UT"
                                }
                            )
                        })
                        .collect();
                    out.line(format!("{id:<4} common  {}", ports.join(" ")));
                }
            }
            "display-brief" | "display" | "unmodelled" => unmodelled(st, &mode_name, line),
            "submode" => {
                unmodelled(st, &mode_name, line);
                let first = line.split_whitespace().next().unwrap_or("sub").to_string();
                self.mode = Mode::Other(first);
            }
            "commit" => self.commit(st, out),
            "abort" => self.cand = None,
            _ => {
                // Configuration changes: on v8 into the session candidate.
                let v8 = self.p == HuaweiVrpv8;
                if v8 && self.cand.is_none() {
                    self.cand = Some(st.running.clone());
                }
                let mut tmp = Config::default();
                let cfg: &mut Config = if v8 {
                    self.cand.as_mut().unwrap_or(&mut tmp)
                } else {
                    &mut st.running
                };
                let mode = self.mode.clone();
                match config_act(self.p, &self.naming, act, &a, line, &mode, cfg) {
                    Ok(Some(m)) => self.mode = m,
                    Ok(None) => {}
                    Err(e) => out.fail(self.spell(&e)),
                }
                if act == "unmodelled-if" {
                    unmodelled(st, &mode_name, line);
                }
                if act == "sysname" {
                    self.host = a.s(0);
                    st.hostname = self.host.clone();
                }
            }
        }
        Flow::Continue
    }
}

/// Apply a configuration action; Ok(Some(mode)) enters a view.
fn config_act(
    p: Platform,
    naming: &IfNaming,
    act: &str,
    a: &Vec<Arg>,
    _line: &str,
    mode: &Mode,
    cfg: &mut Config,
) -> Result<Option<Mode>, String> {
    let lagp = lag_prefix(p);
    // VRP names no VLAN: `Error: The VLAN does not exist.` (an eNSP session's
    // `interface Vlanif 10`; a Huawei automation tool's note of a real `port default vlan
    // 45` on a VLAN not created; sim/STATUS.md, "Undefined VLANs"). Comware's wording is
    // the simulator's; that an access port refuses a VLAN that does not exist (a trunk or
    // hybrid port's PVID need not exist) is H3C's configuration guide.
    let not_exist = |v: u16| -> String {
        if p == HpeComware {
            format!("VLAN {v} does not exist.")
        } else {
            "Error: The VLAN does not exist.".to_string()
        }
    };
    match act {
        "sysname" => return Ok(None),
        "vlan" => {
            let id = a.vlan(0);
            cfg.add_vlan(id);
            return Ok(Some(Mode::Vlan(id)));
        }
        "undo-vlan" => {
            let id = a.vlan(0);
            if id == 1 {
                return Err("Error: The default VLAN cannot be deleted.".into());
            }
            if !cfg.del_vlan(id) {
                return Err(not_exist(id));
            }
            return Ok(None);
        }
        "vlan-batch" | "undo-vlan-batch" | "vlan-range" | "undo-vlan-range" => {
            let ids: Vec<u16> = if act.ends_with("batch") {
                parse_vlan_words(&a.s(0)).ok_or("Error: Wrong parameter found at '^' position.")?
            } else {
                (a.vlan(0)..=a.vlan(1)).collect()
            };
            for id in ids {
                if !act.starts_with("undo") {
                    cfg.add_vlan(id);
                } else if id != 1 {
                    cfg.del_vlan(id);
                }
            }
            return Ok(None);
        }
        "vlan-desc" | "vlan-undo-desc" => {
            if let Mode::Vlan(id) = mode {
                cfg.vlan_mut(*id).name = if act == "vlan-desc" {
                    a.s(0)
                } else {
                    String::new()
                };
            }
            return Ok(None);
        }
        "interface" => {
            let typed = a.s(0);
            let n = naming
                .canon(&typed)
                .ok_or("Error: Wrong parameter found at '^' position.")?;
            if !cfg.has_if(&n) {
                if n.starts_with(lagp) {
                    cfg.lags.insert(n.clone(), Lag::new("static"));
                } else if n.starts_with("Vlan")
                    || n.starts_with("LoopBack")
                    || n.starts_with("MEth")
                    || n.starts_with("M-Gig")
                    || n.starts_with("NULL")
                {
                    return Ok(Some(Mode::Other(n)));
                } else {
                    return Err("Error: Wrong parameter found at '^' position.".into());
                }
            }
            return Ok(Some(Mode::If(n)));
        }
        "undo-interface" => {
            let n = naming
                .canon(&a.s(0))
                .ok_or("Error: Wrong parameter found at '^' position.")?;
            if cfg.lags.contains_key(&n) {
                cfg.del_lag(&n);
                return Ok(None);
            }
            return Err("Error: The interface does not exist or cannot be deleted.".into());
        }
        _ => {}
    }
    let Mode::If(n) = mode else {
        return Ok(None);
    };
    let n = n.clone();
    match act {
        "lag-join" => {
            if cfg.lags.contains_key(&n) {
                return Err("Error: The interface is an Eth-Trunk.".into());
            }
            let lag = format!("{lagp}{}", a.num(0));
            if p != HpeComware && !cfg.lags.contains_key(&lag) {
                return Err(format!("Error: The {lag} does not exist."));
            }
            let m = cfg.lag_mode(&lag, "static");
            cfg.join_lag(&n, &lag, &m);
            return Ok(None);
        }
        "lag-leave" => {
            cfg.leave_lag(&n);
            return Ok(None);
        }
        "lag-mode" | "lag-mode-static" => {
            let Some(l) = cfg.lags.get_mut(&n) else {
                return Err("Error: Unrecognized command found at '^' position.".into());
            };
            let m = a.s(0);
            l.mode = if act == "lag-mode" && (m == "lacp" || m == "lacp-static" || m == "dynamic") {
                "lacp".into()
            } else {
                "static".into()
            };
            return Ok(None);
        }
        _ => {}
    }
    let comware = p == HpeComware;
    let vlans_exist = |cfg: &Config, ids: &[u16]| ids.iter().find(|v| !cfg.has_vlan(**v)).copied();
    let needs = |want: &str, cur: Option<&str>| -> Result<(), String> {
        // A Comware port with no link type configured is an access port (its default,
        // HPE pyhpecw7 `Switchport.get_default`): `port access vlan N` needs no
        // `port link-type access` first, and none is printed after.
        if cur == Some(want) || (comware && want == "access" && cur.is_none()) {
            Ok(())
        } else if comware {
            Err(format!(
                "Please set the link type of the port to {want} first."
            ))
        } else {
            Err("Error: Please renew the default configurations.".into())
        }
    };
    let snapshot = cfg.clone();
    let Some(mut l2) = cfg.l2(&n) else {
        return Ok(None);
    };
    match act {
        "shutdown" => *l2.admin_up = false,
        "undo-shutdown" => *l2.admin_up = true,
        "description" => *l2.description = a.s(0),
        "undo-description" => l2.description.clear(),
        "mtu" => *l2.mtu = Some(if a.is_empty() { 9216 } else { a.num(0) }),
        "undo-mtu" => *l2.mtu = None,
        "link-type" => {
            let t = a.s(0);
            let cur = l2.mode.clone();
            if cur.is_some()
                && cur.as_deref() != Some(&t)
                && (l2.access_vlan.is_some() || !l2.allowed.is_empty())
                && !comware
            {
                return Err("Error: Please renew the default configurations.".into());
            }
            l2.set_mode(Some(&t));
        }
        "undo-link-type" => {
            l2.set_mode(None);
            *l2.access_vlan = None;
            *l2.native_vlan = None;
            l2.allowed.clear();
        }
        "access" => {
            needs("access", l2.mode.as_deref())?;
            let v = a.vlan(0);
            if let Some(m) = vlans_exist(&snapshot, &[v]) {
                return Err(not_exist(m));
            }
            *l2.access_vlan = Some(v);
        }
        "undo-access" => *l2.access_vlan = None,
        "trunk-add" | "trunk-remove" => {
            if act == "trunk-add" {
                needs("trunk", l2.mode.as_deref()).or_else(|e| {
                    if l2.mode.as_deref() == Some("hybrid") {
                        Ok(())
                    } else {
                        Err(e)
                    }
                })?;
            }
            let ids = parse_vlan_words(&a.s(0)).ok_or_else(|| {
                if comware {
                    " % Wrong parameter found at '^' position.".to_string()
                } else {
                    "Error: Wrong parameter found at '^' position.".to_string()
                }
            })?;
            if act == "trunk-add" {
                l2.allow_add(&ids);
            } else {
                l2.allow_remove(&ids);
            }
        }
        "trunk-all" => {
            needs("trunk", l2.mode.as_deref())?;
            l2.allow_set(&(1..=4094).collect::<Vec<u16>>());
        }
        "trunk-none" => l2.allow_set(&[]),
        "pvid" => *l2.native_vlan = Some(a.vlan(0)),
        "undo-pvid" => *l2.native_vlan = None,
        "hybrid-tagged" | "hybrid-untagged" | "undo-hybrid" => {
            needs("hybrid", l2.mode.as_deref())?;
            let ids =
                parse_vlan_words(&a.s(0)).ok_or("Error: Wrong parameter found at '^' position.")?;
            match act {
                "hybrid-tagged" => l2.allow_add(&ids),
                "hybrid-untagged" => {
                    if let Some(first) = ids.first() {
                        *l2.native_vlan = Some(*first);
                    }
                }
                _ => {
                    l2.allow_remove(&ids);
                    if l2.native_vlan.is_some_and(|v| ids.contains(&v)) {
                        *l2.native_vlan = None;
                    }
                }
            }
        }
        _ => {}
    }
    Ok(None)
}

impl Cli for Vrp {
    fn prompt(&self) -> String {
        match self.ask {
            Some(Ask::Save) => match self.p {
                HuaweiVrpv8 | HpeComware => String::new(),
                _ => "  Are you sure to continue?[Y/N]:".into(),
            },
            Some(Ask::Uncommitted(_)) => {
                "Warning: Uncommitted configurations found. Are you sure to commit them before exiting? [Y(yes)/N(no)/C(cancel)]:".into()
            }
            None => self.view_prompt(),
        }
    }

    fn mode_name(&self) -> String {
        match &self.mode {
            Mode::User => "user-view".into(),
            Mode::System => "system-view".into(),
            Mode::If(_) => "interface-view".into(),
            Mode::Vlan(_) => "vlan-view".into(),
            Mode::Other(s) => s.clone(),
        }
    }

    fn handle(&mut self, line: &str, st: &mut DeviceState, out: &mut Out) -> Flow {
        if let Some(ask) = self.ask.take() {
            let ans = line.trim().to_ascii_lowercase();
            match ask {
                Ask::Save => {
                    if ans == "y" || ans == "yes" {
                        self.save_now(st, out);
                    } else {
                        out.line("Info: Save canceled.");
                    }
                }
                Ask::Uncommitted(_) => match ans.as_str() {
                    "y" | "yes" => {
                        self.commit(st, out);
                        if !out.failed {
                            self.mode = Mode::User;
                        }
                    }
                    "n" | "no" => {
                        self.cand = None;
                        self.mode = Mode::User;
                    }
                    _ => {}
                },
            }
            return Flow::Continue;
        }
        if line.trim().is_empty() {
            return Flow::Continue;
        }
        self.run(line, st, out)
    }

    fn reject(&mut self, line: &str, out: &mut Out) {
        self.err_caret(line, 0, "Unrecognized command", out);
    }

    fn pager(&self) -> Option<(usize, &'static str)> {
        self.paging.then_some((24, "  ---- More ----"))
    }

    fn asking(&self) -> bool {
        self.ask.is_some()
    }

    fn exec_context(&mut self) {
        self.paging = false;
    }
}

/// Comware's short interface names in tables (`GE1/0/1`, `XGE1/0/49`, `FGE1/0/1`,
/// `BAGG7`), as `display vlan brief` prints them.
fn comware_short(name: &str) -> String {
    for (long, short) in [
        ("Ten-GigabitEthernet", "XGE"),
        ("FortyGigE", "FGE"),
        ("HundredGigE", "HGE"),
        ("GigabitEthernet", "GE"),
        ("Bridge-Aggregation", "BAGG"),
    ] {
        if let Some(rest) = name.strip_prefix(long) {
            return format!("{short}{rest}");
        }
    }
    name.to_string()
}
