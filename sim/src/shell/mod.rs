//! The Linux-shell family: one shell session (prompt, banner, the few builtins
//! netmiko-style sessions need: `exit`, `echo $?`, `true`, `sudo`, ...) that hands
//! each command line to the device's own tool. One file per tool:
//! `nvue.rs` (Cumulus NVUE `nv`), `nclu.rs` (Cumulus NCLU `net`), `sonic.rs`
//! (SONiC `config` / `show`), `ovs.rs` (Open vSwitch `ovs-vsctl`, `ip link`).
//! Every line is one shell command with stdout / stderr / exit status like the
//! real tool. This module owns the session and the dispatch; it knows no tool's
//! syntax.

mod nclu;
mod nvue;
pub mod ovs;
mod sonic;

use crate::cli::{unmodelled, Cli, Env, Flow, Out};
use crate::model::DeviceState;
use crate::words::shell_words;

/// The configuration tool a shell platform has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// Cumulus Linux NVUE: `nv`.
    Nvue,
    /// Cumulus Linux NCLU: `net`.
    Nclu,
    /// SONiC: `config` / `show`.
    Sonic,
    /// Linux with Open vSwitch: `ovs-vsctl`, `ip link`.
    Ovs,
}

/// One shell session.
pub struct Shell {
    tool: Tool,
    host: String,
    user: String,
    faults: crate::faults::Faults,
    last: i32,
    ask: Option<sonic::Ask>,
}

impl Shell {
    /// A shell session with `tool` as the device's configuration tool.
    pub fn new(env: &Env, tool: Tool) -> Shell {
        Shell {
            tool,
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

    fn run(&mut self, words: &[&str], line: &str, st: &mut DeviceState, out: &mut Out) -> Flow {
        let root = self.user == "root";
        self.run_as(words, line, root, st, out)
    }

    /// Runs `words` as root (after `sudo`) or as the login user.
    fn run_as(
        &mut self,
        words: &[&str],
        line: &str,
        root: bool,
        st: &mut DeviceState,
        out: &mut Out,
    ) -> Flow {
        let Some((cmd, args)) = words.split_first() else {
            return Flow::Continue;
        };
        let faults = &self.faults;
        match (*cmd, self.tool) {
            ("sudo", _) => {
                let rest: Vec<&str> = args
                    .iter()
                    .copied()
                    .skip_while(|a| a.starts_with('-'))
                    .collect();
                return self.run_as(&rest, line, true, st, out);
            }
            ("exit" | "logout", _) => {
                return Flow::Exit(args.first().and_then(|a| a.parse().ok()).unwrap_or(0));
            }
            ("echo", _) => {
                let text: Vec<String> = args
                    .iter()
                    .map(|a| {
                        if *a == "$?" {
                            self.last.to_string()
                        } else {
                            a.to_string()
                        }
                    })
                    .collect();
                out.line(text.join(" "));
            }
            (
                "true" | "cd" | "export" | "unset" | "stty" | "set" | "shopt" | "unalias"
                | "history",
                _,
            ) => {}
            ("false", _) => out.status = 1,
            ("hostname", _) => out.line(&self.host),
            ("whoami", _) => out.line(&self.user),
            ("nv", Tool::Nvue) => nvue::nv(faults, args, line, st, out),
            ("net", Tool::Nclu) => nclu::net(faults, args, line, st, out),
            ("bridge", Tool::Nclu) => nclu::bridge(args, line, st, out),
            ("config", Tool::Sonic) => {
                sonic::config(faults, &mut self.ask, root, args, line, st, out)
            }
            ("sonic-db-cli", Tool::Sonic) => sonic::db_cli(args, st, out),
            ("show", Tool::Sonic) => sonic::show(args, line, st, out),
            ("ovs-vsctl", Tool::Ovs) => ovs::vsctl(args, st, out),
            ("ip", Tool::Ovs) => ovs::ip(args, line, st, out),
            (
                "vtysh" | "ip" | "cat" | "ls" | "uname" | "ping" | "systemctl" | "bridge"
                | "acl-loader" | "rm" | "ethtool",
                _,
            ) => unmodelled(st, "shell", line),
            (other, _) => self.not_found(other, out),
        }
        Flow::Continue
    }
}

impl Cli for Shell {
    fn banner(&self) -> String {
        match self.tool {
            Tool::Nvue | Tool::Nclu => "Linux leaf 5.10.0-cl-1-amd64 #1 SMP Debian 5.10.189-1+cl5.9.1u5 x86_64\n\nWelcome to NVIDIA Cumulus (R) Linux (R)\n\n".into(),
            Tool::Sonic => "Linux sonic 6.1.0-11-2-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.38-4 x86_64\nYou are on\n  ____   ___  _   _ _  ____\n / ___| / _ \\| \\ | (_)/ ___|\n \\___ \\| | | |  \\| | | |\n  ___) | |_| | |\\  | | |___\n |____/ \\___/|_| \\_|_|\\____|\n\n-- Software for Open Networking in the Cloud --\n\n".into(),
            Tool::Ovs => String::new(),
        }
    }

    fn prompt(&self) -> String {
        if let Some(ask) = &self.ask {
            return sonic::question(ask).into();
        }
        match self.tool {
            Tool::Nvue | Tool::Nclu => format!("{}@{}:mgmt:~$ ", self.user, self.host),
            Tool::Ovs if self.user == "root" => format!("root@{}:~# ", self.host),
            _ => format!("{}@{}:~$ ", self.user, self.host),
        }
    }

    fn mode_name(&self) -> String {
        "shell".into()
    }

    fn handle(&mut self, line: &str, st: &mut DeviceState, out: &mut Out) -> Flow {
        if let Some(ask) = self.ask.take() {
            let yes = matches!(line.trim(), "y" | "Y" | "yes");
            sonic::answer(&ask, yes, st, out);
            self.last = i32::from(!yes);
            return Flow::Continue;
        }
        let words = shell_words(line);
        if words.is_empty() {
            return Flow::Continue;
        }
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let f = self.run(&words, line, st, out);
        self.last = out.status;
        f
    }

    fn reject(&mut self, line: &str, out: &mut Out) {
        let w = shell_words(line);
        let second = || w.get(1).cloned().unwrap_or_default();
        match self.tool {
            Tool::Nvue => out.stderr(
                1,
                format!("Error: Invalid config: '{}' was refused", line.trim()),
            ),
            Tool::Nclu => out.stderr(1, "ERROR: Command not found."),
            Tool::Ovs => out.stderr(
                1,
                format!(
                    "ovs-vsctl: unknown command '{}'; use --help for help",
                    second()
                ),
            ),
            Tool::Sonic => out.stderr(2, format!("Error: No such command \"{}\".", second())),
        }
        self.last = out.status;
    }

    fn asking(&self) -> bool {
        self.ask.is_some()
    }

    fn is_shell(&self) -> bool {
        true
    }
}
