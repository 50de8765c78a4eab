//! The man pages' hand-written sections — EXIT STATUS, FILES, ENVIRONMENT, EXAMPLES, SEE
//! ALSO — as roff, for `tests/man.rs`, which renders the rest from the clap definitions and
//! keeps `man/` current. The exit-status table comes from [`ExitKind`], so it cannot drift.

use crate::report::exit::ExitKind;

/// Escapes text for roff: backslashes, leading dots and apostrophes, and hyphens (so that
/// `--device` is typed as two ASCII hyphens when copied from the page).
pub fn roff(text: &str) -> String {
    text.lines()
        .map(|l| {
            let l = l.replace('\\', "\\e").replace('-', "\\-");
            if l.starts_with('.') || l.starts_with('\'') {
                format!("\\&{l}")
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn tp(items: &[(&str, &str)]) -> String {
    items
        .iter()
        .map(|(k, v)| format!(".TP\n\\fB{}\\fR\n{}\n", roff(k), roff(v)))
        .collect()
}

fn example(lines: &[(&str, &str)]) -> String {
    lines
        .iter()
        .map(|(what, cmd)| {
            format!(
                ".PP\n{}\n.PP\n.RS 4\n.nf\n{}\n.fi\n.RE\n",
                roff(what),
                roff(cmd)
            )
        })
        .collect()
}

/// EXIT STATUS: every code, its meaning and whether a retry can help.
pub fn exit_status() -> String {
    let mut s = String::from(
        "Every run prints one result and exits with one of these codes (also the result's \\fBrc\\fR):\n",
    );
    for k in ExitKind::ALL {
        let retry = if k.retryable() {
            " Retrying may help."
        } else {
            ""
        };
        s.push_str(&format!(
            ".TP\n\\fB{}\\fR{}\n{}.{}\n",
            k.code(),
            k.name()
                .map(|n| format!(" ({})", roff(n)))
                .unwrap_or_default(),
            roff(k.meaning()),
            retry
        ));
    }
    s
}

/// The sections after OPTIONS / SUBCOMMANDS for page `name` (`mercury`,
/// `mercury-attach-port`, ...), in order.
pub fn sections(name: &str) -> Vec<(&'static str, String)> {
    let sub = name.strip_prefix("mercury-");
    let mut out = vec![(
        "EXIT STATUS",
        match sub {
            None => exit_status(),
            Some(_) => format!(
                "{}\n.PP\nThe table with retry advice is in \\fBmercury\\fR(1).\n",
                exit_status()
            ),
        },
    )];
    if sub.is_none() {
        out.push((
            "FILES",
            tp(&[
                ("/etc/mercury/mercury.toml", "The configuration: devices, credentials as file paths, policy, callers (--config, MERCURY_CONFIG). Refused when group or others can write it."),
                ("/etc/mercury/plugins.d/*.toml", "Extra or overriding platform definitions (plugins_dir)."),
                ("/etc/mercury/known_hosts", "Device host keys, when a device names it with known_hosts."),
                ("/etc/mercury/secrets/", "One file per password, passphrase or enable secret (password_file, passphrase_file, enable_secret_file), mode 0600."),
                ("/run/mercury/locks/", "One lock file per device and session slot (lock_dir), created by systemd-tmpfiles (mercury.conf)."),
                ("/var/log/mercury/audit.log", "The audit log: one JSON line per record (audit_log); with audit_syslog = true also sent to syslog/journald."),
                ("/etc/logrotate.d/mercury", "Rotation of the audit log."),
            ]),
        ));
        out.push((
            "ENVIRONMENT",
            tp(&[
                ("MERCURY_CONFIG", "The configuration file, when --config is not given."),
                ("SSH_ORIGINAL_COMMAND", "serve-ssh: the request, as the SSH client sent it (set by sshd for a forced command)."),
                ("SSH_CONNECTION", "The SSH client's address, recorded in the audit log."),
                ("REMOTE_ADDR", "serve-jsonrpc: the client's address, set by systemd socket activation."),
                ("RUST_LOG", "Diagnostics on stderr, as with -v (e.g. RUST_LOG=debug)."),
            ]),
        ));
    }
    let examples: Vec<(&str, &str)> = match sub {
        None => vec![
            ("Put a port on VLAN 120, reading it back before and after:", "mercury --verify attach-port --device leaf-1 --port Ethernet1/5 --vlan 120 --reason CHG-1234"),
            ("See what would be sent, without connecting:", "mercury --dry-run update-port --device leaf-1 --port Ethernet1/5 --mode trunk --native-vlan 10 --allowed-vlans 100,200-210 --reason CHG-1235"),
            ("The same request as JSON on stdin:", "echo '{\"op\":\"attach_port\",\"device\":\"leaf-1\",\"port\":\"Ethernet1/5\",\"vlan\":120,\"reason\":\"CHG-1\"}' | mercury run"),
            ("From an Ironic conductor, over the restricted SSH key (quote the whole remote command once):", "ssh mercury@executor \"attach-port --device leaf-1 --port Ethernet1/5 --vlan 120 --reason 'deploy node 7'\""),
            ("Check the configuration, then every device:", "mercury check && mercury --format text check --connect"),
        ],
        Some("attach-port") => vec![
            ("Access port in VLAN 120:", "mercury attach-port --device leaf-1 --port Ethernet1/5 --vlan 120 --reason CHG-1"),
            ("Add VLAN 130 to a trunk, by Ironic's switch_id:", "mercury attach-port --switch-id 00:53:00:00:00:01 --port Ethernet1/6 --vlan 130 --mode trunk --reason CHG-2"),
        ],
        Some("detach-port") => vec![("Take VLAN 120 off a port (an access port gets the idle VLAN back):", "mercury detach-port --device leaf-1 --port Ethernet1/5 --vlan 120 --reason CHG-3")],
        Some("update-port") => vec![("Declare a trunk:", "mercury update-port --device leaf-1 --port Ethernet1/5 --mode trunk --native-vlan 10 --allowed-vlans 100-105 --reason CHG-4")],
        Some("reset-port") => vec![("Back to the idle VLAN:", "mercury reset-port --device leaf-1 --port Ethernet1/5 --reason 'node 7 cleaned'")],
        Some("add-network") => vec![("Create VLAN 120 named tenant-a (needs manage_vlans):", "mercury add-network --device leaf-1 --vlan 120 --name tenant-a --reason CHG-5")],
        Some("delete-network") => vec![("Delete VLAN 120:", "mercury delete-network --device leaf-1 --vlan 120 --reason CHG-6")],
        Some("update-lag") => vec![("An LACP port-channel of two ports:", "mercury update-lag --device leaf-1 --lag 10 --member Ethernet1/7 --member Ethernet1/8 --mode access --native-vlan 120 --reason CHG-7")],
        Some("delete-lag") => vec![("Delete it, releasing the members:", "mercury delete-lag --device leaf-1 --lag 10 --member Ethernet1/7 --member Ethernet1/8 --reason CHG-8")],
        Some("plug-port") => vec![("Plug a representor into br-int on a DPU:", "mercury plug-port --device dpu-7 --port pf0vf3 --vif-id 5f1c... --mac fa:16:3e:00:00:01 --node-uuid 1be26c0b-... --vlan 120 --reason 'deploy node 7'")],
        Some("unplug-port") => vec![("Unplug it:", "mercury unplug-port --device dpu-7 --port pf0vf3 --reason 'undeploy node 7'")],
        Some("get-switches") => vec![("The inventory as a table:", "mercury --format text get-switches")],
        Some("get-allowed-network-types") => vec![("What a device provides:", "mercury get-allowed-network-types --device dpu-7")],
        Some("is-link-valid") => vec![("Would Mercury take this port?", "mercury is-link-valid --switch-id 00:53:00:00:00:01 --port Ethernet1/5")],
        Some("is-port-supported") => vec![("A SmartNIC port:", "mercury is-port-supported --device dpu-7 --vnic-type smart-nic --is-smartnic")],
        Some("verify-port") => vec![("Is the port still an access port in VLAN 120?", "mercury --format text verify-port --device leaf-1 --port Ethernet1/5 --mode access --native-vlan 120")],
        Some("check") => vec![
            ("Configuration, catalog and file permissions, offline:", "mercury check"),
            ("Log in to one device and read its idle VLAN, configuring nothing:", "mercury --format text check --connect --device leaf-1"),
            ("The platforms table:", "mercury check --catalog --table"),
        ],
        Some("run") => vec![("A request from a file:", "mercury run --request change.json")],
        Some("serve-ssh") => vec![("The authorized_keys line of a conductor's key:", "restrict,command=\"/usr/bin/mercury serve-ssh --caller conductor-a\" ssh-ed25519 AAAA... ironic@conductor-a")],
        Some("serve-jsonrpc") => vec![("Started by mercury-jsonrpc.socket (Accept=yes), one process per connection:", "systemctl enable --now mercury-jsonrpc.socket")],
        Some("completions") => vec![("Install bash completion (--device completes from the configured devices):", "mercury completions bash > /etc/bash_completion.d/mercury")],
        Some("import-ngs") => vec![("Migrate from networking-generic-switch:", "mercury import-ngs /etc/neutron/plugins/ml2/ml2_conf_genericswitch.ini --out-dir /etc/mercury")],
        Some(_) => vec![],
    };
    if !examples.is_empty() {
        out.push(("EXAMPLES", example(&examples)));
    }
    let mut see = vec!["\\fBmercury\\fR(1)".to_string()];
    if sub.is_none() {
        see = [
            "mercury-attach-port",
            "mercury-check",
            "mercury-run",
            "mercury-serve-ssh",
            "mercury-serve-jsonrpc",
            "mercury-import-ngs",
        ]
        .iter()
        .map(|p| format!("\\fB{}\\fR(1)", roff(p)))
        .collect();
        see.extend(
            [
                "\\fBsshd\\fR(8)",
                "\\fBauthorized_keys\\fR(5)",
                "\\fBsystemd.socket\\fR(5)",
            ]
            .map(String::from),
        );
    } else if sub == Some("serve-ssh") {
        see.extend(["\\fBsshd\\fR(8)", "\\fBauthorized_keys\\fR(5)"].map(String::from));
    } else if sub == Some("serve-jsonrpc") {
        see.push("\\fBsystemd.socket\\fR(5)".into());
    }
    out.push((
        "SEE ALSO",
        format!(
            "{}\n.PP\nThe docs/ directory of the source (installed in /usr/share/doc/mercury/).\n",
            see.join(", ")
        ),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_exit_code_is_in_exit_status() {
        let s = exit_status();
        for k in ExitKind::ALL {
            assert!(s.contains(&format!("\\fB{}\\fR", k.code())), "{s}");
        }
        assert!(roff("--device").starts_with("\\-\\-"));
        assert_eq!(roff(".x"), "\\&.x");
    }
}
