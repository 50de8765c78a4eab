//! The IOS-like family: Cisco IOS / NX-OS / SG300, Arista EOS, Dell OS10 /
//! OS9 (Force10) / PowerConnect, Ruijie, Brocade FastIron, Mellanox Onyx,
//! Supermicro SMIS, Aruba AOS-CX. One engine (user / privileged / config /
//! interface / vlan modes, enable, paging, save with confirmations), with the
//! differences — prompts, interface names, keywords, error strings — per
//! platform in small `match`es.

use crate::cli::{caret, unmodelled, Cli, Env, Flow, Out};
use crate::grammar::{Arg, Args, Grammar, Verdict};
use crate::model::{Config, DeviceState, L2};
use crate::platform::Platform::{self, *};
use crate::words::{numbered, parse_vlan, vlan_ranges, word_at, IfNaming};

#[derive(Debug, Clone, PartialEq)]
enum Mode {
    User,
    Priv,
    Config,
    If(Vec<String>),
    Vlan(Vec<u16>),
    VlanDb,
    /// `interface vlan N` (Dell OS10 / OS9).
    VlanIf(u16),
    /// A valid but unmodelled sub-mode (router bgp, line vty, ...): prompt suffix.
    Other(String),
}

#[derive(Debug, Clone, PartialEq)]
enum Ask {
    EnablePassword(u8),
    CopyDest,
    Confirm(&'static str),
}

/// One IOS-like CLI session.
pub struct Ios {
    p: Platform,
    host: String,
    mode: Mode,
    ask: Option<Ask>,
    secret: Option<String>,
    faults: crate::faults::Faults,
    page_len: usize,
    interactive: bool,
    naming: IfNaming,
    /// An ISL-capable Catalyst (`--model c3560|c3750|c4500|c6500`): trunk encapsulation
    /// defaults to negotiate, and `switchport mode trunk` is refused until it is set.
    isl: bool,
    /// An informational message a command printed (IOS creating a missing access VLAN).
    notice: std::cell::RefCell<Option<String>>,
    exec_g: Grammar,
    conf_g: Grammar,
    if_g: Grammar,
    vlan_g: Grammar,
    vlanif_g: Grammar,
    /// EOS `configure session`: its name and candidate configuration. Configuration
    /// commands change the candidate; `commit` makes it the running configuration, `abort`
    /// drops it; `end` leaves it pending (re-entered by name).
    session: Option<(String, Config)>,
    other_g: Grammar,
}

fn naming(p: Platform) -> IfNaming {
    let (types, sep, bare): (Vec<&'static str>, &'static str, bool) = match p {
        CiscoIos => (
            vec![
                "GigabitEthernet",
                "TenGigabitEthernet",
                "FastEthernet",
                "TwentyFiveGigE",
                "FortyGigabitEthernet",
                "HundredGigE",
                "Port-channel",
                "Vlan",
                "Loopback",
            ],
            "",
            false,
        ),
        CiscoS300 => (
            vec![
                "GigabitEthernet",
                "TenGigabitEthernet",
                "Port-channel",
                "vlan",
            ],
            "",
            false,
        ),
        CiscoNxos => (
            vec![
                "Ethernet",
                "port-channel",
                "Vlan",
                "loopback",
                "mgmt",
                "nve",
            ],
            "",
            false,
        ),
        AristaEos => (
            vec![
                "Ethernet",
                "Port-Channel",
                "Vlan",
                "Loopback",
                "Management",
                "Vxlan",
            ],
            "",
            false,
        ),
        DellOs10 => (
            vec!["ethernet", "port-channel", "vlan", "loopback", "mgmt"],
            "",
            false,
        ),
        DellForce10 => (
            vec![
                "TenGigabitEthernet",
                "GigabitEthernet",
                "fortyGigE",
                "Port-channel",
                "Vlan",
                "Loopback",
                "ManagementEthernet",
            ],
            "",
            false,
        ),
        DellPowerconnect => (vec!["Gi", "Te", "Po", "vlan"], "", false),
        Ruijie => (
            vec![
                "GigabitEthernet",
                "TenGigabitEthernet",
                "AggregatePort",
                "VLAN",
                "Loopback",
            ],
            "",
            false,
        ),
        BrocadeFastiron => (vec!["ethernet", "ve", "loopback", "lag"], "", false),
        MellanoxMlnxos => (vec!["Eth", "Po", "vlan", "mlag-port-channel"], "", true),
        SupermicroSmis => (vec!["Gi", "Ex", "port-channel", "vlan"], "", false),
        _ => (vec!["1/", "lag", "vlan", "loopback", "mgmt"], "", true),
    };
    IfNaming {
        types,
        sep,
        bare_numbers: bare,
    }
}

/// Canonical LAG name prefix.
fn lag_prefix(p: Platform) -> &'static str {
    match p {
        CiscoNxos | DellOs10 | SupermicroSmis => "port-channel",
        AristaEos => "Port-Channel",
        DellPowerconnect | MellanoxMlnxos => "Po",
        Ruijie => "AggregatePort",
        ArubaAoscx | BrocadeFastiron => "lag",
        _ => "Port-channel",
    }
}

fn has_user_mode(p: Platform) -> bool {
    !matches!(p, CiscoNxos | DellOs10 | ArubaAoscx)
}

impl Ios {
    /// A session in the login mode.
    pub fn new(env: &Env) -> Ios {
        let p = env.platform;
        let mode = if env.enable_secret.is_some() && has_user_mode(p) {
            Mode::User
        } else {
            Mode::Priv
        };
        let abbrev = true;
        Ios {
            p,
            host: env.hostname.clone(),
            mode,
            ask: None,
            secret: env.enable_secret.clone(),
            faults: env.faults.clone(),
            page_len: 24,
            interactive: env.interactive,
            naming: naming(p),
            notice: std::cell::RefCell::new(None),
            isl: p == CiscoIos
                && env
                    .model
                    .as_deref()
                    .is_some_and(|m| matches!(m, "c3560" | "c3750" | "c4500" | "c6500")),
            exec_g: exec_grammar(p, abbrev),
            conf_g: conf_grammar(p, abbrev),
            if_g: if_grammar(p, abbrev),
            vlan_g: vlan_grammar(p, abbrev),
            vlanif_g: vlanif_grammar(p, abbrev),
            session: None,
            other_g: {
                let mut g = Grammar::new(abbrev, SUBMODE);
                g.extend(&[("no <rest>", "other"), ("<rest>", "other")]);
                g
            },
        }
    }

    fn canon_if(&self, typed: &str) -> Option<String> {
        let c = self.naming.canon(typed)?;
        // Aruba "1/1/5" canonicalises through the bare-number rule to "1/1/1/5"; undo.
        Some(match self.p {
            ArubaAoscx => c.strip_prefix("1/").map(str::to_string).unwrap_or(c),
            _ => c,
        })
    }

    fn is_lag_name(&self, name: &str) -> bool {
        name.starts_with(lag_prefix(self.p))
    }

    fn mode_suffix(&self) -> String {
        let p = self.p;
        match &self.mode {
            Mode::User | Mode::Priv => String::new(),
            Mode::Config => match p {
                DellForce10 => "(conf)".into(),
                MellanoxMlnxos => " (config)".into(),
                _ => "(config)".into(),
            },
            Mode::If(names) => {
                let n = names.first().cloned().unwrap_or_default();
                let range = names.len() > 1;
                match p {
                    AristaEos => {
                        let short = n.replace("Ethernet", "Et").replace("Port-Channel", "Po");
                        format!("(config-if-{short})")
                    }
                    DellOs10 => {
                        let short = n.replace("ethernet", "eth").replace("port-channel", "po");
                        if range {
                            "(conf-range-eth)".into()
                        } else {
                            format!("(conf-if-{short})")
                        }
                    }
                    DellForce10 => {
                        let short = n
                            .replace("TenGigabitEthernet", "te-")
                            .replace("GigabitEthernet", "gi-")
                            .replace("Port-channel", "po-");
                        format!("(conf-if-{short})")
                    }
                    DellPowerconnect => format!("(config-if-{n})"),
                    Ruijie => format!("(config-if-{})", n.replacen("Ethernet", "Ethernet ", 1)),
                    BrocadeFastiron => {
                        format!("(config-if-e10000-{})", n.trim_start_matches("ethernet"))
                    }
                    MellanoxMlnxos => format!(
                        " (config interface ethernet {})",
                        n.trim_start_matches("Eth")
                    ),
                    ArubaAoscx if self.is_lag_name(&n) => "(config-lag-if)".into(),
                    _ if range => "(config-if-range)".into(),
                    _ => "(config-if)".into(),
                }
            }
            Mode::Vlan(v) => {
                let id = v.first().copied().unwrap_or(1);
                match p {
                    AristaEos | ArubaAoscx => format!("(config-vlan-{id})"),
                    BrocadeFastiron => format!("(config-vlan-{id})"),
                    MellanoxMlnxos => format!(" (config vlan {id})"),
                    _ => "(config-vlan)".into(),
                }
            }
            Mode::VlanDb => "(config-vlan)".into(),
            Mode::VlanIf(id) => match p {
                DellOs10 => format!("(conf-if-vl-{id})"),
                _ => format!("(conf-if-vl-{id})"),
            },
            Mode::Other(s) => format!("({s})"),
        }
    }

    /// The mode's prompt suffix; inside an EOS configuration session `config` becomes
    /// `config-s-NAME` with the name cut to six characters, as EOS prints it
    /// (`leaf1(config-s-sess-1)#`, `leaf1(config-s-sess-1-if-Lo77)#`).
    fn suffix(&self) -> String {
        let plain = self.mode_suffix();
        match &self.session {
            Some((name, _)) if !matches!(self.mode, Mode::User | Mode::Priv) => {
                let short: String = name.chars().take(6).collect();
                plain.replacen("(config", &format!("(config-s-{short}"), 1)
            }
            _ => plain,
        }
    }

    fn prompt_text(&self) -> String {
        let host = match self.p {
            BrocadeFastiron => format!("SSH@{}", self.host),
            MellanoxMlnxos => format!("{} [standalone: master]", self.host),
            _ => self.host.clone(),
        };
        let sep = if self.p == MellanoxMlnxos { " " } else { "" };
        let mark = if self.mode == Mode::User { ">" } else { "#" };
        let tail = if matches!(self.p, MellanoxMlnxos | DellOs10) {
            " "
        } else {
            ""
        };
        format!("{host}{}{sep}{mark}{tail}", self.suffix())
    }

    // ---- error markers -------------------------------------------------

    fn invalid(&self, line: &str, at: usize, out: &mut Out) {
        let caret = caret(
            self.interactive.then(|| self.prompt_text()).as_deref(),
            line,
            at,
        );
        let tok = word_at(line, at);
        match self.p {
            CiscoNxos => {
                out.line(caret);
                out.fail("% Invalid command at '^' marker.");
            }
            AristaEos => {
                let idx = line[..at.min(line.len())].split_whitespace().count();
                out.fail(format!("% Invalid input (at token {idx}: '{tok}')"));
            }
            DellOs10 => out.fail("% Error: Unrecognized command."),
            DellForce10 => {
                out.line(caret);
                out.fail("% Error: Invalid input at \"^\" marker.");
            }
            CiscoS300 => {
                out.line(caret);
                out.fail("% Unrecognized command");
            }
            BrocadeFastiron => {
                out.fail(format!(
                    "Invalid input -> {}",
                    line[at.min(line.len())..].trim()
                ));
                out.line("Type ? for a list");
            }
            MellanoxMlnxos => {
                out.fail(format!("% Unrecognized command \"{tok}\"."));
                out.line("Type \"?\" for help.");
            }
            ArubaAoscx => out.fail(format!("Invalid input: {tok}")),
            SupermicroSmis => out.fail("% Invalid Command"),
            _ => {
                out.line(caret);
                out.fail("% Invalid input detected at '^' marker.");
            }
        }
    }

    fn incomplete(&self, out: &mut Out) {
        out.fail(match self.p {
            CiscoNxos => "% Incomplete command at '^' marker.",
            AristaEos | MellanoxMlnxos => "% Incomplete command",
            DellOs10 | DellForce10 => "% Error: Incomplete command.",
            ArubaAoscx => "% Command incomplete.",
            BrocadeFastiron => "Incomplete command.",
            CiscoS300 => "% missing mandatory parameter",
            SupermicroSmis => "% Incomplete Command",
            _ => "% Incomplete command.",
        });
    }

    fn ambiguous(&self, line: &str, out: &mut Out) {
        match self.p {
            CiscoNxos => out.fail("% Ambiguous command at '^' marker."),
            AristaEos => out.fail("% Ambiguous command"),
            DellOs10 | DellForce10 => out.fail("% Error: Ambiguous command."),
            _ => out.fail(format!("% Ambiguous command:  \"{}\"", line.trim())),
        }
    }

    fn no_such_if(&self, line: &str, typed: &str, out: &mut Out) {
        match self.p {
            DellOs10 => out.fail(format!("% Error: Interface {typed} does not exist.")),
            DellForce10 => out.fail(format!("% Error: No such interface {typed}.")),
            CiscoNxos => out.fail("% Invalid interface format"),
            AristaEos => out.fail(format!("% Interface {typed} does not exist")),
            ArubaAoscx => out.fail(format!("Invalid input: {typed}")),
            DellPowerconnect => out.fail("% Interface does not exist"),
            _ => {
                let at = line
                    .find(typed.split_whitespace().next().unwrap_or(typed))
                    .unwrap_or(0);
                self.invalid(line, at, out)
            }
        }
    }

    fn pager_prompt(&self) -> &'static str {
        match self.p {
            CiscoNxos | SupermicroSmis => "--More--",
            DellOs10 => "--more--",
            DellPowerconnect => "--More-- or (q)uit",
            CiscoS300 => "More: <space>,  Quit: q or CTRL+Z, One line: <return> ",
            BrocadeFastiron => "--More--, next page: Space, next line: Return key, quit: Control-c",
            ArubaAoscx => "-- MORE --, next page: Space, next line: Enter, quit: q",
            MellanoxMlnxos => "lines 1-24 ",
            _ => " --More-- ",
        }
    }

    // ---- dispatch --------------------------------------------------------

    fn run_exec(&mut self, line: &str, st: &mut DeviceState, out: &mut Out) -> Flow {
        let v = self.exec_g.parse(line, &self.naming);
        let (act, a) = match v {
            Verdict::Ok(act, a) => (act, a),
            Verdict::Invalid(at) => {
                self.invalid(line, at, out);
                return Flow::Continue;
            }
            Verdict::Incomplete => {
                self.incomplete(out);
                return Flow::Continue;
            }
            Verdict::Ambiguous(_) => {
                self.ambiguous(line, out);
                return Flow::Continue;
            }
        };
        let user = self.mode == Mode::User;
        match act {
            "exit" => return Flow::Exit(0),
            "enable" => {
                if !user {
                    return Flow::Continue;
                }
                match &self.secret {
                    Some(_) => self.ask = Some(Ask::EnablePassword(1)),
                    None => self.mode = Mode::Priv,
                }
            }
            "disable" => {
                if has_user_mode(self.p) {
                    self.mode = Mode::User;
                }
            }
            "conf-session" => {
                if user {
                    self.invalid(line, 0, out);
                    return Flow::Continue;
                }
                // A named session that is pending is re-entered; otherwise a new one starts
                // from a snapshot of the running configuration (unnamed: a system name).
                let name = match a.len() {
                    0 => format!("sess-{}-0", std::process::id()),
                    _ => a.s(0),
                };
                if self.session.as_ref().is_none_or(|(n, _)| *n != name) {
                    self.session = Some((name, st.running.clone()));
                }
                self.mode = Mode::Config;
            }
            "conf" => {
                if user {
                    self.invalid(line, 0, out);
                    return Flow::Continue;
                }
                // `configure terminal` works on the running configuration.
                self.session = None;
                if matches!(self.p, CiscoIos | CiscoNxos | Ruijie | CiscoS300) {
                    out.line("Enter configuration commands, one per line.  End with CNTL/Z.");
                }
                self.mode = Mode::Config;
            }
            "paging-off" => self.page_len = 0,
            "paging-len" => {
                self.page_len = a.num(0) as usize;
                // EOS confirms both settings (netmiko waits for these exact words).
                if self.p == AristaEos {
                    match self.page_len {
                        0 => out.line("Pagination disabled."),
                        n => out.line(format!("Pagination set to {n} lines.")),
                    }
                }
            }
            "width" => {
                if self.p == AristaEos {
                    out.line(format!("Width set to {} columns.", a.num(0)));
                }
            }
            "paging-on" => self.page_len = 24,
            "noop" => {}
            "save" => {
                if user {
                    self.invalid(line, 0, out);
                    return Flow::Continue;
                }
                self.save_start(st, out);
            }
            "copy-save" => {
                if user {
                    self.invalid(line, 0, out);
                    return Flow::Continue;
                }
                match self.p {
                    CiscoIos | Ruijie => self.ask = Some(Ask::CopyDest),
                    _ => self.save_start(st, out),
                }
            }
            "show" => self.show(line, &a, st, out),
            "unmodelled" => unmodelled(st, &self.mode_name(), line),
            _ => unmodelled(st, &self.mode_name(), line),
        }
        Flow::Continue
    }

    /// Begin a save: ask where the vendor asks, else save now.
    fn save_start(&mut self, st: &mut DeviceState, out: &mut Out) {
        match self.p {
            DellPowerconnect => {
                out.line("This operation may take a few minutes.");
                out.line("Management interfaces will not be available during this time.");
                out.line("");
                self.ask = Some(Ask::Confirm("Are you sure you want to save? (y/n) "));
            }
            CiscoS300 => {
                self.ask = Some(Ask::Confirm(
                    "Overwrite file [startup-config].... (Y/N)[N] ?",
                ))
            }
            DellForce10 => {
                out.line("File with same name already exist.");
                self.ask = Some(Ask::Confirm("Proceed to copy the file [confirm yes/no]: "));
            }
            _ => self.save_now(st, out),
        }
    }

    fn save_now(&mut self, st: &mut DeviceState, out: &mut Out) {
        if self.faults.db_locked {
            out.fail(match self.p {
                DellPowerconnect => {
                    "Configuration Database locked by another application - try later"
                }
                DellOs10 | DellForce10 => {
                    "% Error: Configuration database is locked by another session."
                }
                _ => "% Configuration is locked by another session (config lock held). Try later.",
            });
            return;
        }
        if self.faults.commit_fail {
            out.fail(match self.p {
                DellOs10 | DellForce10 => "% Error: Failed to save the configuration.",
                _ => "%Error opening nvram:/startup-config (Device or resource busy)",
            });
            return;
        }
        st.saved = st.running.clone();
        match self.p {
            CiscoIos | Ruijie => {
                out.line("Building configuration...");
                out.line("[OK]");
            }
            CiscoNxos => {
                out.line("[########################################] 100%");
                out.line("Copy complete, now saving to disk (please wait)...");
                out.line("Copy complete.");
            }
            AristaEos => out.line("Copy completed successfully."),
            DellForce10 => {
                out.line("!");
                out.line("5530 bytes successfully copied");
            }
            DellPowerconnect => {
                out.line("");
                out.line("Configuration Saved!");
            }
            CiscoS300 => out.line("Copy succeeded"),
            BrocadeFastiron => {
                out.line("Flash Memory Write (8192 bytes per dot) .");
                out.line("Write startup-config done.");
            }
            SupermicroSmis => {
                out.line("Building configuration, Please wait. May take a few minutes ...");
                out.line("[OK]");
            }
            ArubaAoscx => out.line("Copying configuration: [Success]"),
            _ => {}
        }
    }

    fn answer(&mut self, ask: Ask, line: &str, st: &mut DeviceState, out: &mut Out) {
        match ask {
            Ask::EnablePassword(n) => {
                if Some(line) == self.secret.as_deref() {
                    self.mode = Mode::Priv;
                } else if n < 3 && self.p == CiscoIos {
                    self.ask = Some(Ask::EnablePassword(n + 1));
                } else {
                    out.fail(match self.p {
                        CiscoIos | Ruijie => "% Bad secrets",
                        _ => "% Access denied",
                    });
                }
            }
            Ask::CopyDest => {
                let l = line.trim();
                if l.is_empty() || l == "startup-config" {
                    self.save_now(st, out);
                } else {
                    out.fail(format!("%Error opening flash:{l} (Permission denied)"));
                }
            }
            Ask::Confirm(_) => {
                let l = line.trim().to_ascii_lowercase();
                if l == "y" || l == "yes" {
                    self.save_now(st, out);
                } else {
                    out.line("Copy operation aborted.");
                }
            }
        }
    }

    fn show(&mut self, line: &str, a: &[Arg], st: &mut DeviceState, out: &mut Out) {
        let toks: Vec<String> = line
            .split_whitespace()
            .map(str::to_ascii_lowercase)
            .collect();
        let what = toks.get(1).cloned().unwrap_or_default();
        let _ = a;
        if "running-config".starts_with(&what)
            || "startup-config".starts_with(&what)
            || what == "running-configuration"
            || what == "startup-configuration"
        {
            let cfg = if what.starts_with('s') {
                &st.saved
            } else {
                &st.running
            };
            if self.p == MellanoxMlnxos {
                show_running_onyx(&self.host, cfg, out);
                return;
            }
            if self.p == BrocadeFastiron && toks.get(2).map(String::as_str) == Some("vlan") {
                show_vlans_fastiron(cfg, out);
                return;
            }
            // `show running-config interface X`
            if toks.len() >= 4 && "interface".starts_with(toks[2].as_str()) {
                let typed = toks[3..].join("");
                let Some(name) = self.canon_if(&typed).filter(|n| cfg.has_if(n)) else {
                    self.no_such_if(line, &toks[3], out);
                    return;
                };
                out.line("Building configuration...");
                out.line("");
                let body = self.render_if(cfg, &name);
                out.line(format!("Current configuration : {} bytes", body.len() + 20));
                out.line("!");
                out.raw(body);
                out.line("end");
                return;
            }
            out.line("Building configuration...");
            out.line("");
            out.line("Current configuration : 4096 bytes");
            out.line("!");
            out.line(format!("hostname {}", self.host));
            out.line("!");
            for id in cfg.vlan_ids() {
                out.line(format!("vlan {id}"));
                let n = &cfg.vlans[&id.to_string()].name;
                if !n.is_empty() {
                    out.line(format!(" name {n}"));
                }
                out.line("!");
            }
            let mut names: Vec<&String> = cfg.lags.keys().chain(cfg.ports.keys()).collect();
            names.dedup();
            for n in names {
                out.raw(self.render_if(cfg, n));
                out.line("!");
            }
            out.line("end");
        } else if what.starts_with("vl") && self.p == DellForce10 {
            show_vlan_os9(&st.running, out);
        } else if what.starts_with("vl") {
            self.show_vlan(&st.running, out);
        } else if what.starts_with("int")
            && toks.len() >= 3
            && toks.last().map(String::as_str) == Some("switchport")
        {
            let typed = toks[2..toks.len() - 1].join("");
            let Some(name) = self.canon_if(&typed).filter(|n| st.running.has_if(n)) else {
                self.no_such_if(line, &toks[2], out);
                return;
            };
            let mut cfg = st.running.clone();
            if let Some(l2) = cfg.l2(&name) {
                out.line(format!("Name: {name}"));
                out.line("Switchport: Enabled");
                out.line(format!(
                    "Administrative Mode: {}",
                    match l2.mode.as_deref() {
                        Some("trunk") => "trunk",
                        Some("access") => "static access",
                        Some(m) => m,
                        None => "dynamic auto",
                    }
                ));
                out.line(format!(
                    "Access Mode VLAN: {}",
                    l2.access_vlan
                        .map_or("1 (default)".to_string(), |v| v.to_string())
                ));
                out.line(format!(
                    "Trunking Native Mode VLAN: {}",
                    l2.native_vlan
                        .map_or("1 (default)".to_string(), |v| v.to_string())
                ));
                out.line(format!(
                    "Trunking VLANs Enabled: {}",
                    if l2.allowed.is_empty() && (*l2.allowed_none || !default_all(self.p)) {
                        "NONE".to_string()
                    } else if l2.allowed.is_empty() {
                        "ALL".to_string()
                    } else {
                        vlan_ranges(l2.allowed, ",", "-")
                    }
                ));
            }
        } else if what.starts_with("int") {
            out.line("Port      Name               Status       Vlan       Duplex  Speed Type");
            for (n, p) in &st.running.ports {
                let vlan = match p.mode.as_deref() {
                    Some("trunk") => "trunk".to_string(),
                    _ => p.access_vlan.unwrap_or(1).to_string(),
                };
                out.line(format!(
                    "{:<9} {:<18} {:<12} {:<10} {:>6} {:>5} {}",
                    n,
                    p.description.chars().take(18).collect::<String>(),
                    if p.admin_up { "connected" } else { "disabled" },
                    vlan,
                    "a-full",
                    "a-1000",
                    "10/100/1000BaseTX"
                ));
            }
        } else if what.starts_with("ver") {
            out.line(format!(
                "{} software, simulated by mercury-sim",
                self.p.name()
            ));
            out.line(format!("{} uptime is 1 day, 2 hours, 3 minutes", self.host));
        } else {
            // Valid but unmodelled show: prints nothing.
            unmodelled(st, &self.mode_name(), line);
        }
    }

    fn show_vlan(&self, cfg: &Config, out: &mut Out) {
        out.line("");
        out.line("VLAN Name                             Status    Ports");
        out.line("---- -------------------------------- --------- -------------------------------");
        for id in cfg.vlan_ids() {
            let name = &cfg.vlans[&id.to_string()].name;
            let name = if name.is_empty() {
                format!("VLAN{id:04}")
            } else {
                name.clone()
            };
            let ports: Vec<String> = cfg
                .ports
                .iter()
                .filter(|(_, p)| {
                    p.mode.as_deref() != Some("trunk")
                        && (p.access_vlan == Some(id) || (p.access_vlan.is_none() && id == 1))
                })
                .map(|(n, _)| short_if(n))
                .collect();
            let mut chunks = ports.chunks(4);
            let first = chunks.next().map(|c| c.join(", ")).unwrap_or_default();
            out.line(format!("{id:<4} {name:<32} active    {first}"));
            for c in chunks {
                out.line(format!("{:<48}{}", "", c.join(", ")));
            }
        }
    }

    fn render_if(&self, cfg: &Config, name: &str) -> String {
        let mut s = String::new();
        let mut c = cfg.clone();
        let lag = cfg.ports.get(name).and_then(|p| p.lag.clone());
        let Some(l2) = c.l2(name) else {
            return s;
        };
        if self.p == DellForce10 {
            return render_if_os9(name, &l2);
        }
        if self.p == BrocadeFastiron {
            return render_if_fastiron(name, &l2);
        }
        s.push_str(&format!("interface {name}\n"));
        if !l2.description.is_empty() {
            s.push_str(&format!(" description {}\n", l2.description));
        }
        if let Some(m) = l2.mtu {
            s.push_str(&format!(" mtu {m}\n"));
        }
        if self.p == ArubaAoscx {
            if l2.mode.is_some() {
                s.push_str(" no routing\n");
            }
            if let Some(v) = l2.access_vlan {
                s.push_str(&format!(" vlan access {v}\n"));
            }
            if let Some(v) = l2.native_vlan {
                s.push_str(&format!(" vlan trunk native {v}\n"));
            }
            if !l2.allowed.is_empty() {
                s.push_str(&format!(
                    " vlan trunk allowed {}\n",
                    vlan_ranges(l2.allowed, ",", "-")
                ));
            }
        } else if self.p == DellPowerconnect && l2.mode.as_deref() == Some("hybrid") {
            // A general-mode port, as PowerConnect writes it: the PVID, then its untagged
            // and tagged memberships.
            s.push_str(" switchport mode general\n");
            if let Some(v) = l2.native_vlan {
                s.push_str(&format!(" switchport general pvid {v}\n"));
                s.push_str(&format!(
                    " switchport general allowed vlan add {v} untagged\n"
                ));
            }
            let tagged: Vec<u16> = l2
                .allowed
                .iter()
                .copied()
                .filter(|v| Some(*v) != *l2.native_vlan)
                .collect();
            if !tagged.is_empty() {
                s.push_str(&format!(
                    " switchport general allowed vlan add {} tagged\n",
                    vlan_ranges(&tagged, ",", "-")
                ));
            }
        } else {
            if let Some(v) = l2.access_vlan {
                s.push_str(&format!(" switchport access vlan {v}\n"));
            }
            if let Some(v) = l2.native_vlan {
                s.push_str(&format!(" switchport trunk native vlan {v}\n"));
            }
            if !l2.allowed.is_empty() {
                s.push_str(&format!(
                    " switchport trunk allowed vlan {}\n",
                    vlan_ranges(l2.allowed, ",", "-")
                ));
            } else if *l2.allowed_none && default_all(self.p) {
                s.push_str(" switchport trunk allowed vlan none\n");
            }
            let ios = |key: &str| {
                cfg.extra
                    .get("ios")
                    .and_then(|x| x.get(key))
                    .and_then(|x| x.get(name))
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            };
            if let Some(e) = ios("encapsulation") {
                s.push_str(&format!(" switchport trunk encapsulation {e}\n"));
            }
            if let Some(m) = l2.mode.as_deref() {
                s.push_str(&format!(" switchport mode {m}\n"));
            }
            if ios("nonegotiate").is_some() {
                s.push_str(" switchport nonegotiate\n");
            }
        }
        if let Some(l) = lag {
            let n = l.trim_start_matches(lag_prefix(self.p));
            let mode = cfg.lags.get(&l).map(|x| x.mode.as_str()).unwrap_or("lacp");
            if self.p == ArubaAoscx {
                s.push_str(&format!(" lag {n}\n"));
            } else {
                let m = if mode == "lacp" { "active" } else { "on" };
                s.push_str(&format!(" channel-group {n} mode {m}\n"));
            }
        }
        if !*l2.admin_up {
            s.push_str(" shutdown\n");
        } else if self.p == ArubaAoscx {
            s.push_str(" no shutdown\n");
        }
        s
    }

    fn run_config(&mut self, line: &str, st: &mut DeviceState, out: &mut Out) -> Flow {
        let g = match &self.mode {
            Mode::Config => &self.conf_g,
            Mode::If(_) => &self.if_g,
            Mode::Vlan(_) | Mode::VlanDb => &self.vlan_g,
            Mode::VlanIf(_) => &self.vlanif_g,
            _ => &self.other_g,
        };
        let v = g.parse(line, &self.naming);
        let (act, a) = match v {
            Verdict::Ok(act, a) => (act, a),
            Verdict::Invalid(at) => {
                // Sub-mode commands fall back to the config-mode grammar, as IOS does.
                if !matches!(self.mode, Mode::Config) {
                    if let Verdict::Ok(act, a) = self.conf_g.parse(line, &self.naming) {
                        if act != "exit" {
                            return self.config_act(act, a, line, st, out);
                        }
                    }
                }
                self.invalid(line, at, out);
                return Flow::Continue;
            }
            Verdict::Incomplete => {
                self.incomplete(out);
                return Flow::Continue;
            }
            Verdict::Ambiguous(_) => {
                self.ambiguous(line, out);
                return Flow::Continue;
            }
        };
        self.config_act(act, a, line, st, out)
    }

    fn targets(&self) -> Vec<String> {
        match &self.mode {
            Mode::If(v) => v.clone(),
            _ => Vec::new(),
        }
    }

    fn config_act(
        &mut self,
        act: &'static str,
        a: Vec<Arg>,
        line: &str,
        st: &mut DeviceState,
        out: &mut Out,
    ) -> Flow {
        if matches!(act, "commit" | "abort") {
            match self.session.take() {
                Some((_, candidate)) => {
                    if act == "commit" {
                        st.running = candidate;
                    }
                    self.mode = Mode::Priv;
                }
                None => self.invalid(line, 0, out),
            }
            return Flow::Continue;
        }
        let mut taken = self.session.take();
        let flow = self.config_act_in(act, a, line, st, out, taken.as_mut().map(|(_, c)| c));
        if self.session.is_none() {
            self.session = taken;
        }
        flow
    }

    /// A configuration command on the session's candidate, or on the running configuration.
    fn config_act_in(
        &mut self,
        act: &'static str,
        a: Vec<Arg>,
        line: &str,
        st: &mut DeviceState,
        out: &mut Out,
        candidate: Option<&mut Config>,
    ) -> Flow {
        let mode_name = self.mode_name();
        let cfg = match candidate {
            Some(c) => c,
            None => &mut st.running,
        };
        match act {
            "exit" => {
                self.mode = match self.mode {
                    Mode::Config => Mode::Priv,
                    _ => Mode::Config,
                };
            }
            "end" => self.mode = Mode::Priv,
            "do" => {
                let rest = a.s(0);
                let saved = std::mem::replace(&mut self.mode, Mode::Priv);
                let f = self.run_exec(&rest, st, out);
                if self.mode == Mode::Priv {
                    self.mode = saved;
                }
                if f != Flow::Continue {
                    self.mode = Mode::Priv;
                }
            }
            "paging-off" => self.page_len = 0,
            "paging-on" => self.page_len = 24,
            "unmodelled" => unmodelled(st, &mode_name, line),
            "submode" => {
                unmodelled(st, &mode_name, line);
                let first = line
                    .split_whitespace()
                    .next()
                    .unwrap_or("sub")
                    .to_ascii_lowercase();
                self.mode = Mode::Other(format!("config-{first}"));
            }
            "save" => self.save_start(st, out),
            "hostname" => {
                self.host = a.s(0);
                st.hostname = self.host.clone();
            }
            "vlan" => {
                let ids = a.vlans(0);
                for id in &ids {
                    cfg.add_vlan(*id);
                }
                if self.mode != Mode::VlanDb {
                    self.mode = Mode::Vlan(ids);
                }
            }
            "vlan-name" => {
                // FastIron: `vlan 120 name foo by port`.
                let id = a.vlan(0);
                cfg.vlan_mut(id).name = a.s(1);
                self.mode = Mode::Vlan(vec![id]);
            }
            "no-vlan" => {
                for id in a.vlans(0) {
                    if id == 1 {
                        out.fail(match self.p {
                            CiscoNxos => "ERROR: vlan 1 cannot be deleted",
                            DellOs10 | DellForce10 => "% Error: Default VLAN cannot be deleted.",
                            _ => "%Default VLAN 1 may not be deleted.",
                        });
                        continue;
                    }
                    cfg.del_vlan(id);
                }
            }
            "vlan-db" => self.mode = Mode::VlanDb,
            "name" => {
                let ids = match &self.mode {
                    Mode::Vlan(v) => v.clone(),
                    Mode::VlanIf(id) => vec![*id],
                    _ => Vec::new(),
                };
                for id in ids {
                    cfg.vlan_mut(id).name = a.s(0);
                }
            }
            "no-name" => {
                if let Mode::Vlan(ids) = &self.mode {
                    for id in ids {
                        cfg.vlan_mut(*id).name.clear();
                    }
                }
            }
            "interface" => {
                let typed = a.s(0);
                let Some(name) = self.canon_if(&typed) else {
                    self.no_such_if(line, &typed, out);
                    return Flow::Continue;
                };
                if let Some(id) = vlan_if_id(&name) {
                    if matches!(self.p, DellOs10 | DellForce10) {
                        cfg.add_vlan(id);
                        self.mode = Mode::VlanIf(id);
                    } else {
                        unmodelled(st, &mode_name, line);
                        self.mode = Mode::Other("config-if".into());
                    }
                    return Flow::Continue;
                }
                if !cfg.has_if(&name) {
                    if self.is_lag_name(&name) {
                        cfg.lags
                            .insert(name.clone(), crate::model::Lag::new("static"));
                    } else if name.contains("oopback")
                        || name.starts_with("mgmt")
                        || name.starts_with("Management")
                        || name.starts_with("nve")
                        || name.starts_with("Vxlan")
                    {
                        unmodelled(st, &mode_name, line);
                        self.mode = Mode::Other("config-if".into());
                        return Flow::Continue;
                    } else {
                        self.no_such_if(line, &typed, out);
                        return Flow::Continue;
                    }
                }
                self.mode = Mode::If(vec![name]);
            }
            "interface-onyx" => {
                // `interface ethernet 1/5` / `interface port-channel 10`
                let kind = a.s(0);
                let num = a.s(1);
                let name = if kind == "ethernet" {
                    format!("Eth{num}")
                } else if kind == "port-channel" {
                    format!("Po{num}")
                } else {
                    unmodelled(st, &mode_name, line);
                    self.mode = Mode::Other("config-if".into());
                    return Flow::Continue;
                };
                if !cfg.has_if(&name) {
                    if kind == "port-channel" {
                        cfg.lags
                            .insert(name.clone(), crate::model::Lag::new("static"));
                    } else {
                        out.fail(format!("% Interface ethernet {num} does not exist"));
                        return Flow::Continue;
                    }
                }
                if kind == "vlan" {
                    return Flow::Continue;
                }
                self.mode = Mode::If(vec![name]);
            }
            "interface-lag" => {
                // Aruba `interface lag 10`.
                let name = format!("{}{}", lag_prefix(self.p), a.num(0));
                cfg.lags
                    .entry(name.clone())
                    .or_insert_with(|| crate::model::Lag::new("static"));
                self.mode = Mode::If(vec![name]);
            }
            "interface-range" => {
                let Some(names) = self.expand_range(&a.s(0)) else {
                    self.invalid(line, line.find("range").map_or(0, |i| i + 6), out);
                    return Flow::Continue;
                };
                if let Some(bad) = names.iter().find(|n| !cfg.has_if(n)) {
                    self.no_such_if(line, bad, out);
                    return Flow::Continue;
                }
                self.mode = Mode::If(names);
            }
            "no-interface" => {
                let typed = a.s(0);
                match self.canon_if(&typed) {
                    Some(n) if cfg.lags.contains_key(&n) => {
                        if self.p == CiscoIos {
                            let members = cfg.lags.get(&n).map(|l| l.members.clone());
                            for m in members.unwrap_or_default() {
                                cfg.leave_lag_keeping_l2(&m);
                            }
                        }
                        cfg.del_lag(&n);
                    }
                    Some(n) if vlan_if_id(&n).is_some() => {
                        if let Some(id) = vlan_if_id(&n) {
                            if matches!(self.p, DellOs10 | DellForce10) {
                                cfg.del_vlan(id);
                            } else {
                                unmodelled(st, &mode_name, line);
                            }
                        }
                    }
                    Some(n) if self.is_lag_name(&n) => {}
                    _ => self.no_such_if(line, &typed, out),
                }
            }
            "no-interface-lag" => {
                cfg.del_lag(&format!("{}{}", lag_prefix(self.p), a.num(0)));
            }
            "tagged" | "untagged" | "no-tagged" | "no-untagged" => {
                let id = match &self.mode {
                    Mode::VlanIf(id) => *id,
                    Mode::Vlan(v) => v.first().copied().unwrap_or(1),
                    _ => 1,
                };
                let spec = a.s(0);
                let Some(names) = self.expand_range(&spec) else {
                    self.invalid(line, line.find(&spec).unwrap_or(0), out);
                    return Flow::Continue;
                };
                if let Some(bad) = names.iter().find(|n| !cfg.has_if(n)) {
                    self.no_such_if(line, bad, out);
                    return Flow::Continue;
                }
                for n in names {
                    if let Some(mut l2) = cfg.l2(&n) {
                        let (mut u, mut t) = l2.membership();
                        match act {
                            "tagged" => t.push(id),
                            "untagged" => u = Some(id),
                            "no-tagged" => t.retain(|x| *x != id),
                            _ => {
                                if u == Some(id) {
                                    u = None
                                }
                            }
                        }
                        l2.set_membership(u, t);
                    }
                }
            }
            _ => {
                let targets = self.targets();
                if targets.is_empty() {
                    unmodelled(st, &mode_name, line);
                    return Flow::Continue;
                }
                for t in &targets {
                    if let Err(msg) = self.if_act(act, &a, t, cfg) {
                        out.fail(msg);
                        return Flow::Continue;
                    }
                    if let Some(n) = self.notice.take() {
                        out.line(n);
                    }
                }
                if act == "unmodelled-if" {
                    unmodelled(st, &mode_name, line);
                }
            }
        }
        Flow::Continue
    }

    fn expand_range(&self, spec: &str) -> Option<Vec<String>> {
        let mut out = Vec::new();
        // FastIron style "ethe 1/1/5 to 1/1/8" and "ethernet 1/1/5".
        let norm = spec
            .replace(" to ", "-")
            .replace(" - ", "-")
            .replace(" -", "-")
            .replace("- ", "-");
        let mut kind: Option<String> = None;
        for part in norm.split(',') {
            let mut words: Vec<&str> = part.split_whitespace().collect();
            if words.is_empty() {
                return None;
            }
            // "ethe 1/1/5" -> type + number; a lone number reuses the previous type.
            let joined = if words.len() >= 2 && !words[0].starts_with(|c: char| c.is_ascii_digit())
            {
                kind = Some(words[0].to_string());
                let t = words.remove(0);
                format!("{t}{}", words.join(""))
            } else if let Some(k) = &kind {
                format!("{k}{}", words.join(""))
            } else {
                words.join("")
            };
            let (base, end) = match joined.rsplit_once('-') {
                Some((b, e)) if e.chars().all(|c| c.is_ascii_digit()) && !e.is_empty() => {
                    (b.to_string(), e.parse::<u32>().ok())
                }
                Some((b, e)) => {
                    // "gi1/0/1-gi1/0/4": take the trailing number of the end.
                    let n = e.rsplit(['/', 't', 'e']).next()?.parse::<u32>().ok();
                    (b.to_string(), n)
                }
                None => (joined.clone(), None),
            };
            let canon = self.canon_if(&base)?;
            if kind.is_none() {
                kind = Some(
                    base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '/')
                        .to_string(),
                );
            }
            match end {
                None => out.push(canon),
                Some(e) => {
                    let split = canon.rfind(|c: char| !c.is_ascii_digit())? + 1;
                    let (pre, start) = canon.split_at(split);
                    out.extend(numbered(pre, start.parse().ok()?, e)?);
                }
            }
        }
        Some(out)
    }

    fn if_act(&self, act: &str, a: &[Arg], target: &str, cfg: &mut Config) -> Result<(), String> {
        let a = a.to_vec();
        let lagp = lag_prefix(self.p);
        if act == "channel-group" || act == "no-channel-group" {
            if cfg.lags.contains_key(target) {
                return Err("% Error: cannot add a port-channel to a port-channel".into());
            }
            if act == "no-channel-group" {
                if self.p == CiscoIos {
                    cfg.leave_lag_keeping_l2(target);
                } else {
                    cfg.leave_lag(target);
                }
            } else {
                let lag = format!("{lagp}{}", a.num(0));
                let mode = match a.s(1).as_str() {
                    "active" | "passive" => "lacp",
                    "" if self.p == ArubaAoscx => cfg.lag_lacp_or_static(&lag),
                    _ => "static",
                };
                cfg.join_lag(target, &lag, mode);
            }
            return Ok(());
        }
        if act == "lacp-mode" {
            if let Some(l) = cfg.lags.get_mut(target) {
                l.mode = "lacp".into();
            }
            return Ok(());
        }
        if act == "no-lacp-mode" {
            if let Some(l) = cfg.lags.get_mut(target) {
                l.mode = "static".into();
            }
            return Ok(());
        }
        // Per-port IOS settings the common model does not carry (`extra.ios`): trunk
        // encapsulation and DTP negotiation.
        let setting = |cfg: &Config, key: &str| -> Option<String> {
            cfg.extra
                .get("ios")
                .and_then(|x| x.get(key))
                .and_then(|x| x.get(target))
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        let set = |cfg: &mut Config, key: &str, value: Option<&str>| {
            let ios = cfg
                .extra
                .entry("ios".to_string())
                .or_insert(serde_json::json!({}));
            if let Some(map) = ios.as_object_mut() {
                let entry = map.entry(key.to_string()).or_insert(serde_json::json!({}));
                if let Some(m) = entry.as_object_mut() {
                    match value {
                        Some(v) => {
                            m.insert(target.to_string(), serde_json::json!(v));
                        }
                        None => {
                            m.remove(target);
                        }
                    }
                }
            }
        };
        match act {
            "encapsulation" => {
                set(cfg, "encapsulation", Some(&a.s(0)));
                return Ok(());
            }
            "no-encapsulation" => {
                set(cfg, "encapsulation", None);
                return Ok(());
            }
            "nonegotiate" | "no-nonegotiate" => {
                let dynamic = cfg.ports.get(target).is_some_and(|p| p.mode.is_none());
                if act == "nonegotiate" && dynamic {
                    // A port still in `dynamic` mode negotiates; IOS refuses to stop it.
                    return Err(
                        "Command rejected: Conflict between 'nonegotiate' and 'dynamic' status."
                            .into(),
                    );
                }
                set(cfg, "nonegotiate", (act == "nonegotiate").then_some("true"));
                return Ok(());
            }
            "mode" if self.isl && a.s(0) == "trunk" => {
                let enc = setting(cfg, "encapsulation");
                if !matches!(enc.as_deref(), Some("dot1q") | Some("isl")) {
                    return Err("Command rejected: An interface whose trunk encapsulation is \"Auto\" can not be configured to \"trunk\" mode.".into());
                }
            }
            _ => {}
        }
        let p = self.p;
        let vlan_exists = |cfg: &Config, v: u16| cfg.has_vlan(v);
        let missing_vlan_err = |v: u16| -> String {
            match p {
                DellOs10 => format!("% Error: vlan{v} does not exist."),
                ArubaAoscx => format!("VLAN {v} does not exist."),
                DellPowerconnect => "VLAN was not created by user".to_string(),
                MellanoxMlnxos => format!("% VLAN {v} does not exist"),
                _ => String::new(),
            }
        };
        // Vendors that refuse a VLAN that doesn't exist (others create it).
        let strict_vlans = matches!(p, DellOs10 | ArubaAoscx | DellPowerconnect | MellanoxMlnxos);
        let check = |cfg: &mut Config, vs: &[u16], access: bool| -> Result<(), String> {
            for v in vs {
                if !vlan_exists(cfg, *v) {
                    if strict_vlans && p == DellPowerconnect && !access {
                        // A tagged/general VLAN list with a missing VLAN: PowerConnect's
                        // failure table, the error not at the start of its line (netman's
                        // replayed 62xx answers and its fake switch).
                        let missing: Vec<u16> = vs
                            .iter()
                            .copied()
                            .filter(|x| !vlan_exists(cfg, *x))
                            .collect();
                        let mut m = String::from("Warning: The use of large numbers of VLANs or interfaces may cause significant\ndelays in applying the configuration.\n\n\n          Failure Information\n---------------------------------------\n");
                        m.push_str(&format!(
                            "   VLANs failed to be configured : {}\n",
                            missing.len()
                        ));
                        m.push_str("---------------------------------------\n   VLAN             Error\n---------------------------------------");
                        for x in missing {
                            m.push_str(&format!(
                                "\nVLAN      {x: >4} ERROR: This VLAN does not exist."
                            ));
                        }
                        return Err(m);
                    }
                    if strict_vlans {
                        return Err(missing_vlan_err(*v));
                    }
                    if access
                        && matches!(
                            p,
                            CiscoIos | AristaEos | Ruijie | SupermicroSmis | CiscoS300
                        )
                    {
                        // IOS creates a missing *access* VLAN and says so (`% Access VLAN
                        // does not exist. Creating vlan 30`), EOS too with its `!` prefix
                        // (`! Access VLAN does not exist. Creating vlan 20`); captures in
                        // sim/STATUS.md. A trunk's native or allowed VLANs need not exist
                        // and are not made (on EOS an SVI stays lowerlayerdown until the
                        // VLAN is defined: netlab PR #272).
                        cfg.add_vlan(*v);
                        match p {
                            CiscoIos => {
                                cfg.vlan_mut(*v).name = format!("VLAN{v:04}");
                                self.notice.replace(Some(format!(
                                    "% Access VLAN does not exist. Creating vlan {v}"
                                )));
                            }
                            AristaEos => {
                                self.notice.replace(Some(format!(
                                    "! Access VLAN does not exist. Creating vlan {v}"
                                )));
                            }
                            _ => {}
                        }
                    }
                }
            }
            Ok(())
        };
        match act {
            "access-vlan" => check(cfg, &[a.vlan(0)], true)?,
            "trunk-allowed" | "trunk-allowed-add" | "general-add" | "hybrid-add" => {
                check(cfg, &a.vlans(0), false)?
            }
            "native" | "general-pvid" => check(cfg, &[a.vlan(0)], false)?,
            _ => {}
        }
        let Some(mut l2) = cfg.l2(target) else {
            return Ok(());
        };
        let l2: &mut L2 = &mut l2;
        if default_all(p) && trunk_list_act(act, &a.vlans(0), l2) {
            return Ok(());
        }
        match act {
            "switchport" | "no-routing" if l2.mode.is_none() => l2.set_mode(Some("access")),
            "no-switchport" => {
                l2.set_mode(None);
                *l2.access_vlan = None;
                *l2.native_vlan = None;
                l2.allowed.clear();
                *l2.allowed_none = false;
            }
            "mode" => {
                let m = a.s(0);
                let m = match m.as_str() {
                    "general" => "hybrid",
                    "dot1q-tunnel" | "private-vlan" => "access",
                    x => x,
                }
                .to_string();
                l2.set_mode(Some(&m));
            }
            "no-mode" => l2.set_mode(None),
            "access-vlan" => {
                *l2.access_vlan = Some(a.vlan(0));
                if p == ArubaAoscx || p == DellOs10 && l2.mode.is_none() {
                    l2.set_mode(Some("access"));
                }
                if p == DellOs10 && l2.mode.as_deref() == Some("trunk") {
                    // OS10: access VLAN on a trunk port is its untagged (native) VLAN.
                    *l2.native_vlan = Some(a.vlan(0));
                    *l2.access_vlan = None;
                }
            }
            "no-access-vlan" => {
                if let Some(v) = a.first() {
                    let v = Args::vlan(&vec![v.clone()], 0);
                    if *l2.access_vlan != Some(v) && p == ArubaAoscx {
                        return Err(format!("VLAN {v} is not the access VLAN of the interface."));
                    }
                }
                *l2.access_vlan = None;
                if p == DellOs10 {
                    *l2.native_vlan = None;
                }
            }
            "access-none" => *l2.access_vlan = None,
            "native" => {
                *l2.native_vlan = Some(a.vlan(0));
                if p == ArubaAoscx && l2.mode.as_deref() != Some("trunk") {
                    l2.set_mode(Some("trunk"));
                }
            }
            "no-native" => *l2.native_vlan = None,
            "trunk-allowed" => {
                if p == DellOs10 || p == ArubaAoscx {
                    // OS10 / AOS-CX: `... allowed vlan N` adds.
                    l2.allow_add(&a.vlans(0));
                    if p == ArubaAoscx {
                        l2.set_mode(Some("trunk"));
                    }
                } else {
                    l2.allow_set(&a.vlans(0));
                }
            }
            "trunk-allowed-add" | "hybrid-add" => l2.allow_add(&a.vlans(0)),
            "trunk-allowed-remove" | "hybrid-remove" | "no-trunk-allowed" => {
                l2.allow_remove(&a.vlans(0))
            }
            "trunk-allowed-except" => {
                let ex = a.vlans(0);
                let all: Vec<u16> = (1..=4094).filter(|v| !ex.contains(v)).collect();
                l2.allow_set(&all);
            }
            "trunk-allowed-all" => {
                let all: Vec<u16> = (1..=4094).collect();
                l2.allow_set(&all);
                if p == ArubaAoscx {
                    l2.set_mode(Some("trunk"));
                }
            }
            "trunk-allowed-none" | "no-trunk-allowed-all" => l2.allow_set(&[]),
            "general-add" => {
                let vs = a.vlans(0);
                if a.s(1) == "untagged" {
                    for v in &vs {
                        if *l2.native_vlan == Some(*v) || l2.native_vlan.is_none() {
                            *l2.native_vlan = Some(*v);
                        }
                    }
                    l2.allow_remove(&vs);
                } else {
                    l2.allow_add(&vs);
                }
                if l2.mode.is_none() {
                    l2.set_mode(Some("hybrid"));
                }
            }
            "general-remove" => {
                let vs = a.vlans(0);
                l2.allow_remove(&vs);
                if l2.native_vlan.is_some_and(|n| vs.contains(&n)) {
                    *l2.native_vlan = None;
                }
            }
            "general-pvid" => *l2.native_vlan = Some(a.vlan(0)),
            "no-general-pvid" => *l2.native_vlan = None,
            "shutdown" => *l2.admin_up = false,
            "no-shutdown" => *l2.admin_up = true,
            "description" => *l2.description = a.s(0),
            "no-description" => l2.description.clear(),
            "mtu" => *l2.mtu = Some(a.num(0)),
            "no-mtu" => *l2.mtu = None,
            "routing" => {
                l2.set_mode(None);
                *l2.access_vlan = None;
                *l2.native_vlan = None;
                l2.allowed.clear();
                *l2.allowed_none = false;
            }
            _ => {}
        }
        Ok(())
    }
}

/// Platforms whose trunks carry every VLAN until their list is set, printing no `allowed
/// vlan` line for that default and an explicit `switchport trunk allowed vlan none` for the
/// empty list: IOS / IOS-XE ("The default for all VLAN lists is to include all VLANs", "none
/// means an empty list", Catalyst command references), NX-OS (cisco.nxos
/// `nxos_l2_interfaces`: a trunk without the line allows 1-4094, `none` is printed), EOS,
/// RGOS and SMIS (the same CLI; sim/STATUS.md records what is confirmed).
fn default_all(p: Platform) -> bool {
    matches!(
        p,
        CiscoIos | CiscoNxos | AristaEos | Ruijie | SupermicroSmis
    )
}

/// The trunk-list commands of a [`default_all`] platform, on its model: an empty list
/// without `allowed_none` is every VLAN; `vlans` is the command's list. Returns false for
/// any other command.
fn trunk_list_act(act: &str, vlans: &[u16], l2: &mut L2) -> bool {
    let every = |l2: &L2| l2.allowed.is_empty() && !*l2.allowed_none;
    let settle = |l2: &mut L2| {
        // Every VLAN listed is the default again (IOS prints no line for it); nothing
        // listed is `none`.
        if l2.allowed.len() >= 4094 {
            l2.allowed.clear();
            *l2.allowed_none = false;
        } else if l2.allowed.is_empty() {
            *l2.allowed_none = true;
        }
    };
    match act {
        "trunk-allowed" => {
            l2.allow_set(vlans);
            settle(l2);
        }
        "trunk-allowed-add" => {
            if !every(l2) {
                l2.allow_add(vlans);
                settle(l2);
            }
        }
        "trunk-allowed-remove" => {
            if every(l2) {
                *l2.allowed = (1..=4094).collect();
            }
            l2.allow_remove(vlans);
            settle(l2);
        }
        "trunk-allowed-except" => {
            let ex = vlans;
            *l2.allowed = (1..=4094).filter(|v| !ex.contains(v)).collect();
            settle(l2);
        }
        "trunk-allowed-all" | "no-trunk-allowed-all" => {
            l2.allowed.clear();
            *l2.allowed_none = false;
        }
        "trunk-allowed-none" => {
            l2.allowed.clear();
            *l2.allowed_none = true;
        }
        _ => return false,
    }
    true
}

fn vlan_if_id(name: &str) -> Option<u16> {
    let low = name.to_ascii_lowercase();
    let n = low.strip_prefix("vlan")?;
    parse_vlan(n.trim())
}

/// An OS9 interface name as OS9 prints it: type, one space, number
/// (`TenGigabitEthernet 1/5`).
fn os9_name(n: &str) -> String {
    match n.find(|c: char| c.is_ascii_digit()) {
        Some(i) if i > 0 => format!("{} {}", &n[..i], &n[i..]),
        _ => n.to_string(),
    }
}

/// An OS9 port stanza (the Ansible dellemc.os9 `show running-config` fixture: `no ip
/// address`, `switchport`, explicit `shutdown` / `no shutdown`); membership is in the VLANs.
fn render_if_os9(name: &str, l2: &crate::model::L2<'_>) -> String {
    let mut s = format!("interface {}\n", os9_name(name));
    if !l2.description.is_empty() {
        s.push_str(&format!(" description {}\n", l2.description));
    }
    s.push_str(" no ip address\n");
    if let Some(m) = *l2.mtu {
        s.push_str(&format!(" mtu {m}\n"));
    }
    if l2.mode.is_some() {
        s.push_str(" switchport\n");
    }
    s.push_str(if *l2.admin_up {
        " no shutdown\n"
    } else {
        " shutdown\n"
    });
    s
}

/// OS9 `show vlan`, laid out as the real table (ntc-templates' dell_force10 captures): the
/// code legend, `NUM Status Description Q Ports` columns, `*` on the default VLAN, one row
/// per membership code and port type (`U Te 0/40-41,44`), further rows without the id;
/// switchports in no other VLAN listed under the default VLAN.
fn show_vlan_os9(cfg: &Config, out: &mut Out) {
    out.line("");
    out.line("Codes: * - Default VLAN, G - GVRP VLANs, R - Remote Port Mirroring VLANs, P - Primary, C - Community, I - Isolated");
    out.line("       O - Openflow");
    out.line("Q: U - Untagged, T - Tagged");
    out.line("   x - Dot1x untagged, X - Dot1x tagged");
    out.line("   o - OpenFlow untagged, O - OpenFlow tagged");
    out.line("   G - GVRP tagged, M - Vlan-stack, H - VSN tagged");
    out.line("   i - Internal untagged, I - Internal tagged, v - VLT untagged, V - VLT tagged");
    out.line("");
    out.line("    NUM    Status    Description                     Q Ports");
    let abbrev = |n: &str| -> Option<(&'static str, String)> {
        for (long, short) in [
            ("TenGigabitEthernet", "Te"),
            ("GigabitEthernet", "Gi"),
            ("twentyFiveGigE", "Tf"),
            ("fortyGigE", "Fo"),
            ("hundredGigE", "Hu"),
            ("Port-channel", "Po"),
        ] {
            if let Some(rest) = n.strip_prefix(long) {
                return Some((short, rest.to_string()));
            }
        }
        None
    };
    for id in cfg.vlan_ids() {
        let desc: String = cfg.vlans[&id.to_string()].name.chars().take(31).collect();
        // (code, type) -> numbers, in port order.
        let mut groups: Vec<((char, &'static str), Vec<String>)> = Vec::new();
        let mut active = false;
        let mut c = cfg.clone();
        let names: Vec<String> = cfg.lags.keys().chain(cfg.ports.keys()).cloned().collect();
        let mut sorted: Vec<(String, String, String)> = names
            .iter()
            .filter_map(|n| abbrev(n).map(|(t, num)| (t.to_string(), num, n.clone())))
            .collect();
        sorted.sort_by_key(|(t, num, _)| {
            let key: Vec<u32> = num.split('/').filter_map(|x| x.parse().ok()).collect();
            (t.clone(), key)
        });
        for (t, num, n) in sorted {
            let in_lag = cfg.ports.get(&n).is_some_and(|p| p.lag.is_some());
            let Some(l2) = c.l2(&n) else { continue };
            let (u, tagged) = l2.membership();
            // A switchport in no VLAN is an untagged member of the default VLAN (real OS9
            // tables list every such port under `*   1`, `fx:dell_force10/show_vlan_1.raw`);
            // a port-channel member is listed as its port-channel.
            let idle = id == 1 && l2.mode.is_some() && u.is_none() && tagged.is_empty() && !in_lag;
            let code = if u == Some(id) || idle {
                'U'
            } else if tagged.contains(&id) {
                'T'
            } else {
                continue;
            };
            active |= *l2.admin_up;
            let t: &'static str = match t.as_str() {
                "Te" => "Te",
                "Gi" => "Gi",
                "Tf" => "Tf",
                "Fo" => "Fo",
                "Hu" => "Hu",
                _ => "Po",
            };
            match groups.iter_mut().find(|(k, _)| *k == (code, t)) {
                Some((_, v)) => v.push(num),
                None => groups.push(((code, t), vec![num])),
            }
        }
        groups.sort_by_key(|((code, _), _)| if *code == 'T' { 0 } else { 1 });
        let rows: Vec<String> = groups
            .iter()
            .map(|((code, t), nums)| format!("{code} {t} {}", os9_list(nums)))
            .collect();
        let marker = if id == 1 { "*" } else { "" };
        let status = if active { "Active" } else { "Inactive" };
        let first = rows.first().cloned().unwrap_or_default();
        out.line(format!("{marker:<4}{id:<7}{status:<10}{desc:<32}{first}").trim_end());
        for r in rows.iter().skip(1) {
            out.line(format!("{:<53}{r}", ""));
        }
    }
}

/// Onyx `show running-config`, flat as the real one (the Ansible mellanox.onyx fixture):
/// `##` section banners, every setting one three-blank-indented `interface ethernet N
/// SETTING` line, and a setting shared by consecutive ports written once for the range
/// (`interface ethernet 1/7-1/8 channel-group 1 mode active`). VLAN membership lines sit in
/// the VLAN section after the `vlan N` lines, as Onyx orders them.
fn show_running_onyx(host: &str, cfg: &Config, out: &mut Out) {
    let banner = |out: &mut Out, title: &str| {
        out.line("##");
        out.line(format!("## {title}"));
        out.line("##");
    };
    banner(out, "Running database \"initial\"");
    out.line(format!("## Hostname: {host}"));
    out.line("##");
    out.line("");
    let mut c = cfg.clone();
    let mut names: Vec<String> = cfg.ports.keys().cloned().collect();
    let key = |n: &String| -> Vec<u32> {
        n.trim_start_matches("Eth")
            .split('/')
            .filter_map(|x| x.parse().ok())
            .collect()
    };
    names.sort_by_key(key);
    // (port number, setting) in port order, per section.
    // (port number, setting) pairs.
    type Settings = Vec<(String, String)>;
    let (mut ifs, mut vlans): (Settings, Settings) = (Vec::new(), Vec::new());
    for n in &names {
        let lag = cfg.ports.get(n).and_then(|p| p.lag.clone());
        let Some(l2) = c.l2(n) else { continue };
        let num = n.trim_start_matches("Eth").to_string();
        let push = |v: &mut Vec<(String, String)>, s: String| v.push((num.clone(), s));
        if !l2.description.is_empty() {
            push(&mut ifs, format!("description {}", l2.description));
        }
        if let Some(m) = *l2.mtu {
            push(&mut ifs, format!("mtu {m} force"));
        }
        if let Some(l) = lag {
            let id = l.trim_start_matches("Po");
            let mode = cfg.lags.get(&l).map(|x| x.mode.as_str()).unwrap_or("lacp");
            let m = if mode == "lacp" { "active" } else { "on" };
            push(&mut ifs, format!("channel-group {id} mode {m}"));
        }
        match l2.mode.as_deref() {
            Some("access") | None => {}
            Some(m) => push(&mut ifs, format!("switchport mode {m}")),
        }
        if !*l2.admin_up {
            push(&mut ifs, "shutdown".into());
        }
        if let Some(v) = *l2.access_vlan {
            push(&mut vlans, format!("switchport access vlan {v}"));
        }
        if !l2.allowed.is_empty() {
            let word = if l2.mode.as_deref() == Some("trunk") {
                "trunk"
            } else {
                "hybrid"
            };
            push(
                &mut vlans,
                format!(
                    "switchport {word} allowed-vlan add {}",
                    vlan_ranges(l2.allowed, ",", "-")
                ),
            );
        }
    }
    // One line per setting and run of consecutive ports of one slot.
    let ranged = |items: &[(String, String)]| -> Vec<String> {
        let mut settings: Vec<&String> = Vec::new();
        for (_, s) in items {
            if !settings.contains(&s) {
                settings.push(s);
            }
        }
        let mut lines: Vec<(Vec<u32>, String)> = Vec::new();
        for s in settings {
            let ports: Vec<&String> = items
                .iter()
                .filter(|(_, x)| x == s)
                .map(|(p, _)| p)
                .collect();
            let mut i = 0;
            while i < ports.len() {
                let (pre, n) = match ports[i].rsplit_once('/') {
                    Some((a, b)) => (a.to_string(), b.parse::<u32>().unwrap_or(0)),
                    None => (String::new(), 0),
                };
                let mut j = i;
                while j + 1 < ports.len()
                    && *ports[j + 1] == format!("{pre}/{}", n + (j + 1 - i) as u32)
                {
                    j += 1;
                }
                let spec = if j > i {
                    format!("{}-{}", ports[i], ports[j])
                } else {
                    ports[i].clone()
                };
                let k: Vec<u32> = ports[i].split('/').filter_map(|x| x.parse().ok()).collect();
                lines.push((k, format!("   interface ethernet {spec} {s}")));
                i = j + 1;
            }
        }
        lines.sort_by(|a, b| a.0.cmp(&b.0));
        lines.into_iter().map(|(_, l)| l).collect()
    };
    // Port-channels: the creating line, then their own settings (never ranged here).
    let mut lag_ifs: Vec<String> = Vec::new();
    let mut lag_vlans: Vec<String> = Vec::new();
    for name in cfg.lags.keys() {
        let id = name.trim_start_matches("Po");
        let pre = format!("   interface port-channel {id}");
        lag_ifs.push(pre.clone());
        let Some(l2) = c.l2(name) else { continue };
        if let Some(m) = l2.mode.as_deref().filter(|m| *m != "access") {
            lag_ifs.push(format!("{pre} switchport mode {m}"));
        }
        if !*l2.admin_up {
            lag_ifs.push(format!("{pre} shutdown"));
        }
        if let Some(v) = *l2.access_vlan {
            lag_vlans.push(format!("{pre} switchport access vlan {v}"));
        }
        if !l2.allowed.is_empty() {
            lag_vlans.push(format!(
                "{pre} switchport hybrid allowed-vlan add {}",
                vlan_ranges(l2.allowed, ",", "-")
            ));
        }
    }
    banner(out, "Interface Ethernet configuration");
    for l in lag_ifs
        .iter()
        .filter(|l| !l.contains(" switchport ") && !l.ends_with(" shutdown"))
    {
        out.line(l.clone());
    }
    for l in ranged(&ifs) {
        out.line(l);
    }
    for l in lag_ifs
        .iter()
        .filter(|l| l.contains(" switchport ") || l.ends_with(" shutdown"))
    {
        out.line(l.clone());
    }
    out.line("   ");
    banner(out, "VLAN configuration");
    for id in cfg.vlan_ids().into_iter().filter(|v| *v != 1) {
        out.line(format!("   vlan {id}"));
        let n = &cfg.vlans[&id.to_string()].name;
        if !n.is_empty() {
            out.line(format!("   vlan {id} name \"{n}\""));
        }
    }
    for l in ranged(&vlans) {
        out.line(l);
    }
    for l in lag_vlans {
        out.line(l);
    }
    out.line("   ");
}

/// A FastIron port stanza: only what differs from the defaults (`port-name`, `disable`);
/// membership is in the VLANs, and a port with nothing set prints nothing.
fn render_if_fastiron(name: &str, l2: &crate::model::L2<'_>) -> String {
    let mut body = String::new();
    if !l2.description.is_empty() {
        body.push_str(&format!(" port-name {}\n", l2.description));
    }
    if !*l2.admin_up {
        body.push_str(" disable\n");
    }
    if body.is_empty() {
        return body;
    }
    format!("interface {}\n{body}!\n", os9_name(name))
}

/// FastIron `show running-config vlan`, as the ntc-templates captures print it: `vlan N
/// name NAME by port` (`vlan N by port` without a name), the tagged then the untagged
/// ports as `ethe A to B ethe C ` (with FastIron's trailing space), `!` between VLANs.
fn show_vlans_fastiron(cfg: &Config, out: &mut Out) {
    for id in cfg.vlan_ids() {
        let name = &cfg.vlans[&id.to_string()].name;
        let name = if id == 1 && name.is_empty() {
            "DEFAULT-VLAN".to_string()
        } else {
            name.clone()
        };
        if name.is_empty() {
            out.line(format!("vlan {id} by port"));
        } else {
            out.line(format!("vlan {id} name {name} by port"));
        }
        let mut c = cfg.clone();
        let mut ports: Vec<String> = cfg.ports.keys().cloned().collect();
        ports.sort_by_key(|n| {
            n.trim_start_matches("ethernet")
                .split('/')
                .filter_map(|x| x.parse::<u32>().ok())
                .collect::<Vec<u32>>()
        });
        let (mut t, mut u): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
        for n in &ports {
            let Some(l2) = c.l2(n) else { continue };
            let (un, tg) = l2.membership();
            let num = n.trim_start_matches("ethernet").to_string();
            if tg.contains(&id) {
                t.push(num);
            } else if un == Some(id) && id != 1 {
                u.push(num);
            }
        }
        for (word, list) in [("tagged", &t), ("untagged", &u)] {
            if !list.is_empty() {
                out.line(format!(" {word} {}", fastiron_list(list)));
            }
        }
        out.line("!");
    }
}

/// `1/1/3`, `1/1/4`, `1/1/5`, `1/1/7` as FastIron lists them:
/// `ethe 1/1/3 to 1/1/5 ethe 1/1/7 `.
fn fastiron_list(nums: &[String]) -> String {
    let mut s = String::new();
    let mut i = 0;
    while i < nums.len() {
        let (pre, n) = match nums[i].rsplit_once('/') {
            Some((a, b)) => (format!("{a}/"), b.parse::<u32>().unwrap_or(0)),
            None => (String::new(), nums[i].parse::<u32>().unwrap_or(0)),
        };
        let mut j = i;
        while j + 1 < nums.len() && nums[j + 1] == format!("{pre}{}", n + (j + 1 - i) as u32) {
            j += 1;
        }
        if j > i {
            s.push_str(&format!("ethe {} to {} ", nums[i], nums[j]));
        } else {
            s.push_str(&format!("ethe {} ", nums[i]));
        }
        i = j + 1;
    }
    s
}

/// `0/40`, `0/41`, `0/44` as OS9 lists them: `0/40-41,44` (the slot written once per run
/// of the same slot).
fn os9_list(nums: &[String]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    let mut last_slot: Option<String> = None;
    while i < nums.len() {
        let (slot, n) = match nums[i].rsplit_once('/') {
            Some((a, b)) => (format!("{a}/"), b.parse::<u32>().unwrap_or(0)),
            None => (String::new(), nums[i].parse::<u32>().unwrap_or(0)),
        };
        let mut j = i;
        while j + 1 < nums.len() && nums[j + 1] == format!("{slot}{}", n + (j + 1 - i) as u32) {
            j += 1;
        }
        let end = n + (j - i) as u32;
        let pre = if last_slot.as_deref() == Some(slot.as_str()) {
            String::new()
        } else {
            slot.clone()
        };
        parts.push(if j > i {
            format!("{pre}{n}-{end}")
        } else {
            format!("{pre}{n}")
        });
        last_slot = Some(slot);
        i = j + 1;
    }
    parts.join(",")
}

fn short_if(n: &str) -> String {
    for (long, short) in [
        ("TenGigabitEthernet", "Te"),
        ("GigabitEthernet", "Gi"),
        ("FastEthernet", "Fa"),
        ("Port-channel", "Po"),
        ("Ethernet", "Et"),
        ("ethernet", "Eth "),
    ] {
        if let Some(rest) = n.strip_prefix(long) {
            return format!("{short}{rest}");
        }
    }
    n.to_string()
}

// ---- grammars -------------------------------------------------------------

/// What every configuration mode accepts first: up one level, out of
/// configuration, an exec command from inside it.
const SUBMODE: &[(&str, &str)] = &[("exit", "exit"), ("end", "end"), ("do <rest>", "do")];

/// A VLAN's port membership lines (FastIron `vlan N`, OS9 `interface vlan N`).
const MEMBERS: &[(&str, &str)] = &[
    ("tagged <rest>", "tagged"),
    ("untagged <rest>", "untagged"),
    ("no tagged <rest>", "no-tagged"),
    ("no untagged <rest>", "no-untagged"),
];

fn exec_grammar(p: Platform, abbrev: bool) -> Grammar {
    let mut g = Grammar::new(
        abbrev,
        &[
            ("exit", "exit"),
            ("logout", "exit"),
            ("quit", "exit"),
            ("enable", "enable"),
            ("enable <num:0-15>", "enable"),
            ("disable", "disable"),
            ("configure terminal", "conf"),
            ("configure", "conf"),
            ("show running-config", "show"),
            ("show running-config interface <if>", "show"),
            ("show startup-config", "show"),
            ("show vlan", "show"),
            ("show vlan brief", "show"),
            ("show vlan id <vlan>", "show"),
            ("show interfaces status", "show"),
            ("show interfaces <if> switchport", "show"),
            ("show interface status", "show"),
            ("show version", "show"),
            ("show clock", "show"),
            ("show users", "show"),
            ("show privilege", "show"),
            ("show inventory", "show"),
            ("show lldp neighbors [detail]", "show"),
            ("show mac address-table <rest>", "show"),
            ("show mac address-table", "show"),
            ("show ip interface brief", "show"),
            ("show interfaces [<rest>]", "show"),
            ("show etherchannel summary", "show"),
            ("show port-channel summary", "show"),
            ("show spanning-tree [<rest>]", "show"),
            ("show logging", "show"),
            ("terminal width <num:0-512>", "width"),
            ("terminal no monitor", "noop"),
            ("terminal monitor", "noop"),
            ("ping <rest>", "unmodelled"),
            ("traceroute <rest>", "unmodelled"),
            ("clear counters [<rest>]", "unmodelled"),
        ],
    );
    match p {
        CiscoNxos => g.extend(&[
            ("terminal length <num:0-511>", "paging-len"),
            ("copy running-config startup-config", "copy-save"),
            ("show running-config interface <if> [all]", "show"),
            ("terminal session-timeout <num:0-525600>", "noop"),
        ]),
        AristaEos => g.extend(&[
            ("terminal length <num:0-32767>", "paging-len"),
            // Configuration sessions (EOS manual, "Configure Session").
            ("configure session", "conf-session"),
            ("configure session <word>", "conf-session"),
            ("write memory", "save"),
            ("write", "save"),
            ("copy running-config startup-config", "copy-save"),
            ("show running-config interfaces <if>", "show"),
        ]),
        DellOs10 => g.extend(&[
            ("terminal length <num:0-32767>", "paging-len"),
            ("write memory", "save"),
            (
                "copy running-configuration startup-configuration",
                "copy-save",
            ),
            ("show running-configuration", "show"),
            ("show running-configuration interface <if>", "show"),
            ("show startup-configuration", "show"),
        ]),
        DellForce10 => g.extend(&[
            ("terminal length <num:0-512>", "paging-len"),
            ("write memory", "save"),
            ("copy running-config startup-config", "copy-save"),
        ]),
        DellPowerconnect => g.extend(&[
            ("terminal length <num:0-512>", "paging-len"),
            ("terminal datadump", "paging-off"),
            ("copy running-config startup-config", "copy-save"),
            ("write memory", "save"),
            ("write", "save"),
        ]),
        CiscoS300 => g.extend(&[
            ("terminal datadump", "paging-off"),
            ("terminal no datadump", "paging-on"),
            ("terminal length <num:0-512>", "paging-len"),
            ("write memory", "save"),
            ("write", "save"),
            ("copy running-config startup-config", "copy-save"),
        ]),
        BrocadeFastiron => g.extend(&[
            ("skip-page-display", "paging-off"),
            ("page-display", "paging-on"),
            ("terminal length <num:0-512>", "paging-len"),
            ("write memory", "save"),
            ("show vlan <vlan>", "show"),
            ("show running-config vlan", "show"),
        ]),
        MellanoxMlnxos => g.extend(&[
            ("terminal length <num:0-999>", "paging-len"),
            ("no cli session paging enable", "paging-off"),
            ("cli session paging enable", "paging-on"),
            ("write memory", "save"),
            ("configuration write", "save"),
        ]),
        // SMIS turns paging off in configuration mode (netmiko's smci_smis.py does
        // `config_mode()`, `set cli pagination off`, `exit_config_mode()`).
        SupermicroSmis => g.extend(&[
            ("terminal length <num:0-512>", "paging-len"),
            ("write startup-config", "save"),
            ("copy running-config startup-config", "copy-save"),
        ]),
        ArubaAoscx => g.extend(&[
            ("no page", "paging-off"),
            ("page", "paging-on"),
            ("terminal length <num:0-512>", "paging-len"),
            ("write memory", "save"),
            ("copy running-config startup-config", "copy-save"),
        ]),
        _ => g.extend(&[
            ("terminal length <num:0-512>", "paging-len"),
            ("write memory", "save"),
            ("write", "save"),
            ("copy running-config startup-config", "copy-save"),
        ]),
    }
    g
}

const CONF_UNMODELLED: &[&str] = &[
    "spanning-tree",
    "ip",
    "ipv6",
    "logging",
    "ntp",
    "snmp-server",
    "username",
    "aaa",
    "service",
    "clock",
    "banner",
    "lldp",
    "cdp",
    "errdisable",
    "port-channel",
    "lacp",
    "mac",
    "vtp",
    "udld",
    "radius-server",
    "tacacs-server",
    "errdisable",
];

fn conf_grammar(p: Platform, abbrev: bool) -> Grammar {
    let mut g = Grammar::new(abbrev, SUBMODE);
    g.extend(&[
        ("hostname <word>", "hostname"),
        ("no vlan <vlans>", "no-vlan"),
        ("interface <if>", "interface"),
        ("interface range <rest>", "interface-range"),
        ("no interface <if>", "no-interface"),
        ("router <rest>", "submode"),
        ("line <rest>", "submode"),
        ("ip access-list <rest>", "submode"),
    ]);
    for kw in CONF_UNMODELLED {
        let s1: &'static str = Box::leak(format!("{kw} <rest>").into_boxed_str());
        let s2: &'static str = Box::leak(format!("no {kw} <rest>").into_boxed_str());
        g.extend(&[(s1, "unmodelled"), (s2, "unmodelled")]);
    }
    if p == AristaEos {
        // Inside a configuration session (outside one EOS refuses them).
        g.extend(&[("commit", "commit"), ("abort", "abort")]);
    }
    match p {
        BrocadeFastiron => g.extend(&[
            ("vlan <vlan>", "vlan"),
            ("vlan <vlan> by port", "vlan"),
            ("vlan <vlan> name <word> by port", "vlan-name"),
            ("vlan <vlan> name <word>", "vlan-name"),
            ("write memory", "save"),
            ("skip-page-display", "paging-off"),
        ]),
        DellOs10 | DellForce10 => {}
        DellPowerconnect | CiscoS300 => {
            g.extend(&[("vlan database", "vlan-db"), ("vlan <vlans>", "vlan")])
        }
        MellanoxMlnxos => {
            g.extend(&[
                ("vlan <vlans>", "vlan"),
                (
                    "interface ethernet|port-channel|vlan|mlag-port-channel <word>",
                    "interface-onyx",
                ),
                ("no interface port-channel <num:1-4096>", "no-interface-lag"),
                ("no cli session paging enable", "paging-off"),
                ("configuration write", "save"),
                ("write memory", "save"),
                ("lacp", "unmodelled"),
                ("no lacp", "unmodelled"),
            ]);
        }
        SupermicroSmis => g.extend(&[
            ("vlan <vlans>", "vlan"),
            ("set cli pagination off", "paging-off"),
            ("set cli pagination on", "paging-on"),
        ]),
        ArubaAoscx => g.extend(&[
            ("vlan <vlans>", "vlan"),
            ("interface lag <num:1-256>", "interface-lag"),
            ("no interface lag <num:1-256>", "no-interface-lag"),
            ("write memory", "save"),
        ]),
        CiscoNxos => g.extend(&[
            ("vlan <vlans>", "vlan"),
            ("feature <word>", "unmodelled"),
            ("no feature <word>", "unmodelled"),
            ("evpn", "submode"),
            ("vrf context <word>", "submode"),
            ("copy running-config startup-config", "save"),
        ]),
        _ => g.extend(&[("vlan <vlans>", "vlan")]),
    }
    g
}

fn if_grammar(p: Platform, abbrev: bool) -> Grammar {
    let mut g = Grammar::new(abbrev, SUBMODE);
    g.extend(&[
        ("shutdown", "shutdown"),
        ("no shutdown", "no-shutdown"),
        ("description <rest>", "description"),
        ("no description", "no-description"),
        ("speed <rest>", "unmodelled-if"),
        ("no speed [<rest>]", "unmodelled-if"),
        ("duplex <rest>", "unmodelled-if"),
        ("spanning-tree <rest>", "unmodelled-if"),
        ("no spanning-tree <rest>", "unmodelled-if"),
        ("lldp <rest>", "unmodelled-if"),
        ("no lldp <rest>", "unmodelled-if"),
        ("storm-control <rest>", "unmodelled-if"),
        ("no storm-control <rest>", "unmodelled-if"),
        ("ip <rest>", "unmodelled-if"),
        ("no ip <rest>", "unmodelled-if"),
        ("flowcontrol <rest>", "unmodelled-if"),
        ("load-interval <num:30-600>", "unmodelled-if"),
        ("interface <if>", "interface"),
    ]);
    let switchport: &[(&'static str, &'static str)] = &[
        ("switchport", "switchport"),
        ("no switchport", "no-switchport"),
        ("switchport mode access|trunk", "mode"),
        ("no switchport mode", "no-mode"),
        ("no switchport mode access|trunk", "no-mode"),
        ("switchport access vlan <vlan>", "access-vlan"),
        ("no switchport access vlan", "no-access-vlan"),
        ("no switchport access vlan <vlan>", "no-access-vlan"),
        ("switchport trunk native vlan <vlan>", "native"),
        ("no switchport trunk native vlan", "no-native"),
        ("no switchport trunk native vlan <vlan>", "no-native"),
        ("switchport trunk allowed vlan <vlans>", "trunk-allowed"),
        (
            "switchport trunk allowed vlan add <vlans>",
            "trunk-allowed-add",
        ),
        (
            "switchport trunk allowed vlan remove <vlans>",
            "trunk-allowed-remove",
        ),
        ("switchport trunk allowed vlan all", "trunk-allowed-all"),
        ("switchport trunk allowed vlan none", "trunk-allowed-none"),
        ("no switchport trunk allowed vlan", "no-trunk-allowed-all"),
    ];
    let mtu_hi: &'static str = match p {
        CiscoNxos | AristaEos | DellOs10 => "mtu <num:576-9416>",
        _ => "mtu <num:576-9216>",
    };
    match p {
        ArubaAoscx => g.extend(&[
            ("routing", "routing"),
            ("no routing", "no-routing"),
            ("vlan access <vlan>", "access-vlan"),
            ("no vlan access", "no-access-vlan"),
            ("no vlan access <vlan>", "no-access-vlan"),
            ("vlan trunk native <vlan>", "native"),
            ("no vlan trunk native", "no-native"),
            ("no vlan trunk native <vlan>", "no-native"),
            ("vlan trunk allowed <vlans>", "trunk-allowed"),
            ("vlan trunk allowed all", "trunk-allowed-all"),
            ("no vlan trunk allowed <vlans>", "trunk-allowed-remove"),
            ("no vlan trunk allowed", "no-trunk-allowed-all"),
            ("lag <num:1-256>", "channel-group"),
            ("no lag <num:1-256>", "no-channel-group"),
            ("lacp mode active|passive", "lacp-mode"),
            ("no lacp mode [active|passive]", "no-lacp-mode"),
            (mtu_hi, "mtu"),
            ("no mtu", "no-mtu"),
        ]),
        BrocadeFastiron => g.extend(&[
            ("disable", "shutdown"),
            ("enable", "no-shutdown"),
            ("port-name <rest>", "description"),
            ("no port-name", "no-description"),
        ]),
        MellanoxMlnxos => {
            g.extend(&[
                ("switchport mode access|trunk|hybrid", "mode"),
                ("no switchport mode", "no-mode"),
                ("switchport access vlan <vlan>", "access-vlan"),
                ("no switchport access vlan", "no-access-vlan"),
                ("switchport trunk allowed-vlan <vlans>", "trunk-allowed"),
                (
                    "switchport trunk allowed-vlan add <vlans>",
                    "trunk-allowed-add",
                ),
                (
                    "switchport trunk allowed-vlan remove <vlans>",
                    "trunk-allowed-remove",
                ),
                ("switchport trunk allowed-vlan all", "trunk-allowed-all"),
                ("switchport trunk allowed-vlan none", "trunk-allowed-none"),
                ("switchport hybrid allowed-vlan <vlans>", "trunk-allowed"),
                ("switchport hybrid allowed-vlan add <vlans>", "hybrid-add"),
                (
                    "switchport hybrid allowed-vlan remove <vlans>",
                    "hybrid-remove",
                ),
                (
                    "channel-group <num:1-4096> mode active|passive|on",
                    "channel-group",
                ),
                ("no channel-group", "no-channel-group"),
                ("mtu <num:1500-9216> [force]", "mtu"),
                ("no mtu", "no-mtu"),
            ]);
        }
        DellPowerconnect => {
            g.extend(&[
                ("switchport mode access|trunk|general", "mode"),
                ("no switchport mode", "no-mode"),
                ("switchport access vlan <vlan>", "access-vlan"),
                ("switchport access vlan none", "access-none"),
                ("no switchport access vlan", "no-access-vlan"),
                (
                    "switchport trunk allowed vlan add <vlans>",
                    "trunk-allowed-add",
                ),
                (
                    "switchport trunk allowed vlan remove <vlans>",
                    "trunk-allowed-remove",
                ),
                (
                    "switchport general allowed vlan add <vlans> [tagged|untagged]",
                    "general-add",
                ),
                (
                    "switchport general allowed vlan remove <vlans>",
                    "general-remove",
                ),
                ("switchport general pvid <vlan>", "general-pvid"),
                ("no switchport general pvid", "no-general-pvid"),
                ("channel-group <num:1-128> mode auto|on", "channel-group"),
                ("no channel-group", "no-channel-group"),
                (mtu_hi, "mtu"),
                ("no mtu", "no-mtu"),
            ]);
        }
        DellForce10 => g.extend(&[
            ("switchport", "switchport"),
            ("no switchport", "no-switchport"),
            (mtu_hi, "mtu"),
            ("no mtu", "no-mtu"),
            ("port-channel-protocol lacp", "submode"),
            ("portmode hybrid", "unmodelled-if"),
        ]),
        _ => {
            g.extend(switchport);
            g.extend(&[
                (mtu_hi, "mtu"),
                ("no mtu", "no-mtu"),
                (
                    "channel-group <num:1-4096> mode active|passive|on",
                    "channel-group",
                ),
                ("channel-group <num:1-4096>", "channel-group"),
                ("no channel-group", "no-channel-group"),
                ("no channel-group <num:1-4096>", "no-channel-group"),
            ]);
            match p {
                CiscoIos | Ruijie | SupermicroSmis | CiscoS300 => g.extend(&[
                    ("switchport mode dot1q-tunnel|private-vlan", "mode"),
                    ("switchport nonegotiate", "nonegotiate"),
                    ("no switchport nonegotiate", "no-nonegotiate"),
                    (
                        "switchport trunk encapsulation dot1q|isl|negotiate",
                        "encapsulation",
                    ),
                    ("no switchport trunk encapsulation", "no-encapsulation"),
                    (
                        "switchport trunk allowed vlan except <vlans>",
                        "trunk-allowed-except",
                    ),
                    (
                        "switchport trunk allowed vlan remove all",
                        "trunk-allowed-none",
                    ),
                    ("negotiation auto", "unmodelled-if"),
                    ("no negotiation auto", "unmodelled-if"),
                    ("cdp enable", "unmodelled-if"),
                    ("no cdp enable", "unmodelled-if"),
                ]),
                CiscoNxos => g.extend(&[
                    (
                        "switchport trunk allowed vlan except <vlans>",
                        "trunk-allowed-except",
                    ),
                    ("ip port access-group <word> in|out", "unmodelled-if"),
                    ("no ip port access-group <word> in|out", "unmodelled-if"),
                    ("vpc <rest>", "unmodelled-if"),
                ]),
                // OS10 removes tagged VLANs with the no form ("no switchport trunk
                // allowed vlan vlan-id-list", Dell EMC SmartFabric OS10 User Guide,
                // Interfaces > Trunk mode).
                DellOs10 => g.extend(&[(
                    "no switchport trunk allowed vlan <vlans>",
                    "no-trunk-allowed",
                )]),
                AristaEos => g.extend(&[
                    (
                        "switchport trunk allowed vlan except <vlans>",
                        "trunk-allowed-except",
                    ),
                    ("vxlan <rest>", "unmodelled-if"),
                    ("no vxlan <rest>", "unmodelled-if"),
                    ("mlag <num:1-2000>", "unmodelled-if"),
                ]),
                _ => {}
            }
        }
    }
    g
}

fn vlan_grammar(p: Platform, abbrev: bool) -> Grammar {
    let mut g = Grammar::new(abbrev, SUBMODE);
    g.extend(&[
        ("name <rest>", "name"),
        ("no name", "no-name"),
        ("state active|suspend", "unmodelled"),
        ("shutdown", "unmodelled"),
        ("no shutdown", "unmodelled"),
    ]);
    match p {
        CiscoNxos => g.extend(&[
            ("vn-segment <num:1-16777214>", "unmodelled"),
            ("no vn-segment", "unmodelled"),
        ]),
        BrocadeFastiron => {
            g.extend(MEMBERS);
            g.extend(&[
                ("router-interface ve <num:1-4095>", "unmodelled"),
                ("spanning-tree [<rest>]", "unmodelled"),
            ]);
        }
        DellPowerconnect | CiscoS300 => {
            g.extend(&[("vlan <vlans>", "vlan"), ("no vlan <vlans>", "no-vlan")])
        }
        ArubaAoscx => g.extend(&[
            ("description <rest>", "unmodelled"),
            ("vsx-sync", "unmodelled"),
        ]),
        _ => {}
    }
    g
}

fn vlanif_grammar(p: Platform, abbrev: bool) -> Grammar {
    let mut g = Grammar::new(abbrev, SUBMODE);
    g.extend(&[
        ("description <rest>", "name"),
        ("no description", "no-name"),
        ("shutdown", "unmodelled"),
        ("no shutdown", "unmodelled"),
        ("ip <rest>", "unmodelled"),
        ("no ip <rest>", "unmodelled"),
        ("mtu <num:576-9416>", "unmodelled"),
    ]);
    if p == DellForce10 {
        g.extend(&[("name <word>", "name")]);
        g.extend(MEMBERS);
    }
    g
}

impl Cli for Ios {
    fn prompt(&self) -> String {
        match &self.ask {
            Some(Ask::EnablePassword(_)) => "Password: ".into(),
            Some(Ask::CopyDest) => "Destination filename [startup-config]? ".into(),
            Some(Ask::Confirm(q)) => (*q).into(),
            None => self.prompt_text(),
        }
    }

    fn mode_name(&self) -> String {
        match &self.mode {
            Mode::User => "user".into(),
            Mode::Priv => "privileged".into(),
            Mode::Config => "config".into(),
            Mode::If(_) => "config-if".into(),
            Mode::Vlan(_) | Mode::VlanDb => "config-vlan".into(),
            Mode::VlanIf(_) => "config-if-vlan".into(),
            Mode::Other(s) => s.clone(),
        }
    }

    fn handle(&mut self, line: &str, st: &mut DeviceState, out: &mut Out) -> Flow {
        if let Some(ask) = self.ask.take() {
            self.answer(ask, line, st, out);
            return Flow::Continue;
        }
        if line.trim().is_empty() {
            return Flow::Continue;
        }
        // Ctrl-Z ends configuration mode.
        if line.trim() == "\u{1a}" {
            if !matches!(self.mode, Mode::User | Mode::Priv) {
                self.mode = Mode::Priv;
            }
            return Flow::Continue;
        }
        match self.mode {
            Mode::User | Mode::Priv => self.run_exec(line, st, out),
            _ => self.run_config(line, st, out),
        }
    }

    fn reject(&mut self, line: &str, out: &mut Out) {
        self.invalid(line, 0, out);
    }

    fn pager(&self) -> Option<(usize, &'static str)> {
        (self.page_len > 0).then_some((self.page_len, self.pager_prompt()))
    }

    fn asking(&self) -> bool {
        self.ask.is_some()
    }

    fn exec_context(&mut self) {
        self.mode = Mode::Priv;
        self.page_len = 0;
    }
}
