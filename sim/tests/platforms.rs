//! Per-platform tests: drive the simulator with the vendor's real command
//! syntax (vendor docs / NGS templates) and assert the device state.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;
use serde_json::json;

#[test]
fn platforms_lists_all_23() {
    let r = run(&["platforms"], "", &[]);
    assert_eq!(r.code, 0);
    assert_eq!(r.stdout.lines().count(), 23);
    assert!(r.stdout.lines().any(|l| l == "cisco_ios"));
    assert!(r.stdout.lines().any(|l| l == "ovs_linux"));
}

#[test]
fn cisco_ios_access_trunk_save() {
    let t = Tmp::new("ios");
    let s = t.path("s.json");
    let r = session(
        "cisco_ios",
        &s,
        &[
            "terminal length 0",
            "conf t",
            "vlan 120",
            "name tenant-120",
            "exit",
            "interface GigabitEthernet1/0/5",
            "switchport mode access",
            "switchport access vlan 120",
            "no shutdown",
            "int gi1/0/6",
            "switchport mode trunk",
            "switchport trunk native vlan 120",
            "switchport trunk allowed vlan none",
            "switchport trunk allowed vlan add 120,130-131",
            "switchport trunk allowed vlan remove 131",
            "description uplink to node-6",
            "mtu 9000",
            "interface Port-channel10",
            "int range gi1/0/7 - 8",
            "channel-group 10 mode active",
            "end",
            "copy running-config startup-config",
            "",
            "exit",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.contains("Destination filename [startup-config]? "));
    assert!(r.stdout.contains("[OK]"));
    assert!(!r.stdout.contains("% Invalid"), "{}", r.stdout);
    let st = state(&s);
    assert_eq!(st["running"]["vlans"]["120"]["name"], "tenant-120");
    let p5 = port(&st, "GigabitEthernet1/0/5");
    assert_eq!(p5["mode"], "access");
    assert_eq!(p5["access_vlan"], 120);
    let p6 = port(&st, "GigabitEthernet1/0/6");
    assert_eq!(p6["mode"], "trunk");
    assert_eq!(p6["native_vlan"], 120);
    assert_eq!(p6["allowed_vlans"], json!([120, 130]));
    assert_eq!(p6["description"], "uplink to node-6");
    assert_eq!(p6["mtu"], 9000);
    assert_eq!(
        st["running"]["lags"]["Port-channel10"]["members"],
        json!(["GigabitEthernet1/0/7", "GigabitEthernet1/0/8"])
    );
    assert_eq!(st["running"]["lags"]["Port-channel10"]["mode"], "lacp");
    assert_eq!(port(&st, "GigabitEthernet1/0/7")["lag"], "Port-channel10");
    assert_eq!(st["saved"], st["running"]);
}

#[test]
fn cisco_ios_typos_are_errors_with_caret() {
    let t = Tmp::new("ios-typo");
    let s = t.path("s.json");
    let r = session(
        "cisco_ios",
        &s,
        &[
            "conifgure terminal",
            "conf t",
            "int gi1/0/5",
            "swithport mode access",
            "switchport mode",
            "s",
            "int gi9/0/1",
        ],
    );
    let out = r.stdout;
    assert!(
        out.contains("leaf1#conifgure terminal\n      ^\n% Invalid input detected at '^' marker."),
        "{out}"
    );
    assert!(out.contains("leaf1(config-if)#swithport mode access\n                 ^\n% Invalid input detected at '^' marker."), "{out}");
    assert!(out.contains("% Incomplete command."));
    assert!(out.contains("% Ambiguous command:  \"s\""));
    assert_eq!(out.matches("% Invalid input").count(), 3, "{out}");
    assert_eq!(
        port(&state(&s), "GigabitEthernet1/0/5")["mode"],
        json!(null)
    );
}

#[test]
fn cisco_ios_enable_secret() {
    let t = Tmp::new("ios-en");
    let s = t.path("s.json");
    let sp = s.to_str().unwrap();
    let r = run(
        &[
            "--platform",
            "cisco_ios",
            "--state",
            sp,
            "--enable-secret",
            "s3cret",
        ],
        "enable\nwrong\nwrong\nwrong\nenable\ns3cret\nshow privilege\n",
        &[],
    );
    assert!(r.stdout.starts_with("leaf1>"), "{}", r.stdout);
    assert!(r.stdout.contains("Password: "));
    assert!(r.stdout.contains("% Bad secrets"));
    assert!(r.stdout.contains("leaf1#show privilege"), "{}", r.stdout);
}

#[test]
fn cisco_ios_pages_until_terminal_length_0() {
    let t = Tmp::new("ios-page");
    let s = t.path("s.json");
    let r = session(
        "cisco_ios",
        &s,
        &["show running-config", " ", " ", " ", "q"],
    );
    assert!(r.stdout.contains(" --More-- "), "{}", r.stdout);
    let t2 = Tmp::new("ios-nopage");
    let s2 = t2.path("s.json");
    let r = session(
        "cisco_ios",
        &s2,
        &["terminal length 0", "show running-config"],
    );
    assert!(!r.stdout.contains("--More--"));
    assert!(r.stdout.contains("interface TenGigabitEthernet1/1/4"));
}

#[test]
fn cisco_ios_exec_mode() {
    let t = Tmp::new("ios-exec");
    let s = t.path("s.json");
    let r = exec("cisco_ios", &s, "show vlan brief");
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("1    default"), "{}", r.stdout);
    let r = exec("cisco_ios", &s, "shwo vlan");
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("% Invalid input"));
}

#[test]
fn cisco_nxos_ngs_sequences() {
    let t = Tmp::new("nxos");
    let s = t.path("s.json");
    let r = session(
        "cisco_nxos",
        &s,
        &[
            "terminal length 0",
            "configure terminal",
            "vlan 120",
            "name net-120",
            "exit",
            "interface Ethernet1/5",
            "switchport mode trunk",
            "switchport trunk allowed vlan add 120",
            "no shutdown",
            "exit",
            "interface ethernet1/6",
            "swichport mode access",
            "end",
            "copy running-config startup-config",
        ],
    );
    assert!(r.stdout.contains("leaf1(config-if)#"));
    assert!(r.stdout.contains("% Invalid command at '^' marker."));
    assert!(r.stdout.contains("Copy complete."));
    let st = state(&s);
    // NGS's trunk sequence on NX-OS: `add` to the default list (every VLAN) leaves every
    // VLAN allowed — the empty list without `allowed_none`.
    assert_eq!(port(&st, "Ethernet1/5")["allowed_vlans"], json!([]));
    assert!(port(&st, "Ethernet1/5").get("allowed_none").is_none());
    assert_eq!(port(&st, "Ethernet1/5")["admin_up"], true);
    assert_eq!(st["saved"], st["running"]);
}

#[test]
fn arista_eos_native_and_save() {
    let t = Tmp::new("eos");
    let s = t.path("s.json");
    let r = session(
        "arista_eos",
        &s,
        &[
            "terminal length 0",
            "configure",
            "vlan 120",
            "name tenant",
            "interface Ethernet5",
            "switchport mode trunk",
            "switchport trunk native vlan 120",
            "switchport trunk allowed vlan add 120",
            "switchprot mode access",
            "end",
            "write memory",
        ],
    );
    assert!(r.stdout.contains("leaf1(config-vlan-120)#"), "{}", r.stdout);
    assert!(r.stdout.contains("leaf1(config-if-Et5)#"));
    assert!(
        r.stdout
            .contains("% Invalid input (at token 0: 'switchprot')"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("Copy completed successfully."));
    let st = state(&s);
    assert_eq!(port(&st, "Ethernet5")["native_vlan"], 120);
    assert_eq!(st["saved"], st["running"]);
}

/// EOS creates a missing access VLAN (`! Access VLAN does not exist. Creating vlan N`) but
/// not a trunk's native or allowed VLAN.
#[test]
fn arista_eos_creates_a_missing_access_vlan_only() {
    let t = Tmp::new("eos-missing");
    let s = t.path("s.json");
    let r = session(
        "arista_eos",
        &s,
        &[
            "configure terminal",
            "interface Ethernet5",
            "switchport access vlan 130",
            "interface Ethernet6",
            "switchport mode trunk",
            "switchport trunk native vlan 140",
            "switchport trunk allowed vlan 150",
            "end",
        ],
    );
    assert!(
        r.stdout
            .contains("\n! Access VLAN does not exist. Creating vlan 130\n"),
        "{}",
        r.stdout
    );
    let st = state(&s);
    assert!(st["running"]["vlans"]["130"].is_object());
    for v in ["140", "150"] {
        assert!(st["running"]["vlans"][v].is_null(), "VLAN {v} not created");
    }
    assert_eq!(port(&st, "Ethernet5")["access_vlan"], 130);
    assert_eq!(port(&st, "Ethernet6")["native_vlan"], 140);
}

#[test]
fn dell_os10_vlan_interface_and_trunk() {
    let t = Tmp::new("os10");
    let s = t.path("s.json");
    let r = session(
        "dell_os10",
        &s,
        &[
            "configure terminal",
            "interface vlan 120",
            "description net-120",
            "exit",
            "interface ethernet1/1/5",
            "switchport mode trunk",
            "switchport trunk allowed vlan 120",
            "switchport access vlan 120",
            "exit",
            "interface ethernet1/1/6",
            "switchport access vlan 130",
            "exit",
            "exit",
            "write memory",
        ],
    );
    assert!(r.stdout.contains("leaf1(conf-if-vl-120)# "), "{}", r.stdout);
    assert!(r.stdout.contains("leaf1(conf-if-eth1/1/5)# "));
    assert!(
        r.stdout.contains("% Error: vlan130 does not exist."),
        "{}",
        r.stdout
    );
    let st = state(&s);
    assert_eq!(st["running"]["vlans"]["120"]["name"], "net-120");
    let p = port(&st, "ethernet1/1/5");
    assert_eq!(p["allowed_vlans"], json!([120]));
    assert_eq!(p["native_vlan"], 120);
    assert_eq!(st["saved"], st["running"]);
}

#[test]
fn dell_force10_tagged_untagged() {
    let t = Tmp::new("os9");
    let s = t.path("s.json");
    session(
        "dell_force10",
        &s,
        &[
            "configure",
            "interface vlan 120",
            "untagged TenGigabitEthernet 1/5",
            "exit",
            "interface vlan 130",
            "tagged TenGigabitEthernet 1/6",
            "exit",
        ],
    );
    let st = state(&s);
    assert_eq!(port(&st, "TenGigabitEthernet1/5")["access_vlan"], 120);
    assert_eq!(
        port(&st, "TenGigabitEthernet1/6")["allowed_vlans"],
        json!([130])
    );
}

/// OS9 lists every switchport that is in no other VLAN under the default VLAN (as the real
/// table does, `fx:dell_force10/show_vlan_1.raw`).
#[test]
fn dell_force10_default_vlan_lists_the_other_switchports() {
    let t = Tmp::new("os9d");
    let s = t.path("s.json");
    let r = session(
        "dell_force10",
        &s,
        &[
            "configure",
            "interface TenGigabitEthernet 1/7",
            "switchport",
            "exit",
            "interface TenGigabitEthernet 1/8",
            "switchport",
            "exit",
            "interface vlan 120",
            "untagged TenGigabitEthernet 1/5",
            "exit",
            "end",
            "show vlan",
        ],
    );
    let row = r
        .stdout
        .lines()
        .find(|l| l.starts_with("*   1 "))
        .unwrap_or_default()
        .to_string();
    assert!(row.ends_with("U Te 1/7-8"), "{}", r.stdout);
    let row = r
        .stdout
        .lines()
        .find(|l| l.starts_with("    120 "))
        .unwrap_or_default()
        .to_string();
    assert!(row.ends_with("U Te 1/5"), "{}", r.stdout);
}

#[test]
fn dell_powerconnect_general_and_confirmed_save() {
    let t = Tmp::new("pc");
    let s = t.path("s.json");
    let r = session(
        "dell_powerconnect",
        &s,
        &[
            "configure",
            "vlan database",
            "vlan 120",
            "exit",
            "interface Gi1/0/5",
            "switchport mode general",
            "switchport general allowed vlan add 120 tagged",
            "switchport general pvid 120",
            "exit",
            "exit",
            "copy running-config startup-config",
            "y",
        ],
    );
    assert!(r.stdout.contains("Are you sure you want to save? (y/n) "));
    assert!(r.stdout.contains("Configuration Saved!"));
    let st = state(&s);
    assert_eq!(port(&st, "Gi1/0/5")["allowed_vlans"], json!([120]));
    assert_eq!(port(&st, "Gi1/0/5")["native_vlan"], 120);
}

#[test]
fn cisco_s300_ruijie_smis_ios_like_access() {
    for (p, iface, key) in [
        ("cisco_s300", "gi1/0/5", "GigabitEthernet1/0/5"),
        ("ruijie", "GigabitEthernet 0/5", "GigabitEthernet0/5"),
        ("supermicro_smis", "Gi 0/5", "Gi0/5"),
    ] {
        let t = Tmp::new(p);
        let s = t.path("s.json");
        let iface_cmd = format!("interface {iface}");
        let r = session(
            p,
            &s,
            &[
                "configure terminal",
                "vlan 120",
                "name net",
                "exit",
                &iface_cmd,
                "switchport mode access",
                "switchport access vlan 120",
                "end",
            ],
        );
        let st = state(&s);
        assert_eq!(port(&st, key)["access_vlan"], 120, "{p}: {}", r.stdout);
        assert_eq!(port(&st, key)["mode"], "access", "{p}");
    }
}

#[test]
fn brocade_fastiron_vlan_untagged() {
    let t = Tmp::new("fi");
    let s = t.path("s.json");
    let r = session(
        "brocade_fastiron",
        &s,
        &[
            "skip-page-display",
            "configure terminal",
            "vlan 120 by port",
            "name net-120",
            "untagged ether 1/1/5",
            "tagged ethe 1/1/6 to 1/1/7",
            "exit",
            "write memory",
        ],
    );
    assert!(
        r.stdout.contains("SSH@leaf1(config-vlan-120)#"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("Write startup-config done."));
    let st = state(&s);
    assert_eq!(port(&st, "ethernet1/1/5")["access_vlan"], 120);
    assert_eq!(port(&st, "ethernet1/1/7")["allowed_vlans"], json!([120]));
}

#[test]
fn mellanox_onyx_ethernet_access() {
    let t = Tmp::new("onyx");
    let s = t.path("s.json");
    let r = session(
        "mellanox_mlnxos",
        &s,
        &[
            "no cli session paging enable",
            "configure terminal",
            "vlan 120",
            "name 4f8b",
            "exit",
            "interface ethernet 1/5",
            "switchport mode access",
            "switchport access vlan 120",
            "exit",
            "write memory",
        ],
    );
    assert!(
        r.stdout
            .contains("leaf1 [standalone: master] (config interface ethernet 1/5) # "),
        "{}",
        r.stdout
    );
    let st = state(&s);
    assert_eq!(port(&st, "Eth1/5")["access_vlan"], 120);
    assert_eq!(st["saved"], st["running"]);
}

#[test]
fn aruba_aoscx_vlan_access_trunk() {
    let t = Tmp::new("aruba");
    let s = t.path("s.json");
    let r = session(
        "aruba_aoscx",
        &s,
        &[
            "no page",
            "configure terminal",
            "vlan 120",
            "name net",
            "exit",
            "interface 1/1/5",
            "no routing",
            "vlan access 120",
            "no shutdown",
            "interface 1/1/6",
            "no routing",
            "vlan trunk allowed 120",
            "vlan trunk native 1",
            "vlan acess 120",
            "end",
            "write memory",
        ],
    );
    assert!(r.stdout.contains("Invalid input: acess"), "{}", r.stdout);
    let st = state(&s);
    assert_eq!(port(&st, "1/1/5")["access_vlan"], 120);
    assert_eq!(port(&st, "1/1/5")["admin_up"], true);
    assert_eq!(port(&st, "1/1/6")["allowed_vlans"], json!([120]));
    assert_eq!(port(&st, "1/1/6")["mode"], "trunk");
}

#[test]
fn juniper_private_commit_and_discard() {
    let t = Tmp::new("junos");
    let s = t.path("s.json");
    let r = run(
        &["--platform", "juniper", "--state", s.to_str().unwrap(), "--username", "user"],
        "set cli screen-length 0\nconfigure private\nset vlans tenant-120 vlan-id 120\nset interfaces ge-0/0/5 unit 0 family ethernet-switching interface-mode access\nset interfaces ge-0/0/5 unit 0 family ethernet-switching vlan members tenant-120\nset interfaces ge-0/0/5 description \"node 5\"\ncommit\nset interfaces ge-0/0/6 disable\nexit configuration-mode\nyes\nexit\n",
        &[],
    );
    assert!(r.stdout.contains("user@leaf1> "), "{}", r.stdout);
    assert!(r.stdout.contains("[edit]\nuser@leaf1# "));
    assert!(r.stdout.contains("commit complete"));
    assert!(r
        .stdout
        .contains("Exit with uncommitted changes? [yes,no] (yes) "));
    let st = state(&s);
    let p = port(&st, "ge-0/0/5");
    assert_eq!(p["mode"], "access");
    assert_eq!(p["access_vlan"], 120);
    assert_eq!(p["description"], "node 5");
    // The uncommitted `disable` was discarded with the private candidate.
    assert_eq!(port(&st, "ge-0/0/6")["admin_up"], true);
    assert_eq!(st["saved"], st["running"]);
    assert_eq!(st["pending"], json!(null));
}

#[test]
fn juniper_ngs_trunk_and_commit_errors() {
    let t = Tmp::new("junos2");
    let s = t.path("s.json");
    let r = session(
        "juniper",
        &s,
        &[
            "configure",
            "set vlans net-130 vlan-id 130",
            "set interfaces ge-0/0/7 unit 0 family ethernet-switching interface-mode trunk",
            "set interfaces ge-0/0/7 unit 0 family ethernet-switching vlan members 130",
            "set interfaces ge-0/0/7 unit 0 family ethernet-switching vlan members 999",
            "commit",
            "delete interfaces ge-0/0/7 unit 0 family ethernet-switching vlan members 999",
            "set interfaces ge-0/0/7 native-vlan-id 130",
            "set intefaces ge-0/0/7 mtu 9000",
            "commit and-quit",
        ],
    );
    assert!(
        r.stdout.contains("error: configuration check-out failed"),
        "{}",
        r.stdout
    );
    // The words netman's Junos adapter matches in the device's commit error.
    assert!(
        r.stdout
            .contains("No vlan matches vlan tag 999 for interface ge-0/0/7.0"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("syntax error."));
    assert!(r.stdout.contains("Exiting configuration mode"));
    let st = state(&s);
    let p = port(&st, "ge-0/0/7");
    assert_eq!(p["allowed_vlans"], json!([130]));
    assert_eq!(p["native_vlan"], 130);
}

/// A `native-vlan-id` no VLAN carries fails the check-out as a member does (netman's
/// set_interface_native_vlan and fake-switches check it alike); nothing is committed.
#[test]
fn juniper_native_vlan_must_exist() {
    let t = Tmp::new("junos-native");
    let s = t.path("s.json");
    let r = session(
        "juniper",
        &s,
        &[
            "configure",
            "set vlans net-130 vlan-id 130",
            "set interfaces ge-0/0/7 unit 0 family ethernet-switching interface-mode trunk",
            "set interfaces ge-0/0/7 unit 0 family ethernet-switching vlan members 130",
            "set interfaces ge-0/0/7 native-vlan-id 140",
            "commit",
        ],
    );
    assert!(
        r.stdout.contains(
            "[edit interfaces ge-0/0/7]\n  'native-vlan-id 140'\n    No vlan matches vlan tag 140 for interface ge-0/0/7.0\nerror: configuration check-out failed"
        ),
        "{}",
        r.stdout
    );
    let st = state(&s);
    assert!(st["running"]["vlans"]["130"].is_null(), "nothing committed");
}

#[test]
fn juniper_shared_candidate_persists_and_rollback() {
    let t = Tmp::new("junos3");
    let s = t.path("s.json");
    session(
        "juniper",
        &s,
        &[
            "configure",
            "set interfaces ge-0/0/3 disable",
            "exit",
            "yes",
        ],
    );
    let st = state(&s);
    assert_eq!(st["pending"]["ports"]["ge-0/0/3"]["admin_up"], false);
    assert_eq!(port(&st, "ge-0/0/3")["admin_up"], true);
    let r = session(
        "juniper",
        &s,
        &["configure", "show | compare", "rollback 0", "exit"],
    );
    assert!(
        r.stdout.contains("+ interfaces ge-0/0/3 disable"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("load complete"));
    assert_eq!(state(&s)["pending"], json!(null));
}

#[test]
fn cumulus_nvue_pending_apply_save() {
    let t = Tmp::new("nvue");
    let s = t.path("s.json");
    let e = |c: &str| exec("cumulus_nvue", &s, c);
    assert_eq!(e("nv set bridge domain br_default vlan 120").code, 0);
    assert_eq!(
        e("nv unset interface swp5 bridge domain br_default untagged").code,
        0
    );
    assert_eq!(
        e("nv set interface swp5 bridge domain br_default access 120").code,
        0
    );
    assert_eq!(
        e("nv set interface swp6 bridge domain br_default untagged 120").code,
        0
    );
    assert_eq!(
        e("nv set interface swp6 bridge domain br_default vlan 120").code,
        0
    );
    assert_eq!(e("nv set interface swp5 link state up").code, 0);
    let st = state(&s);
    assert_eq!(st["pending"]["ports"]["swp5"]["access_vlan"], 120);
    assert_eq!(port(&st, "swp5")["access_vlan"], json!(null));
    let r = e("nv config apply -y");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("applied [rev_id:"));
    let st = state(&s);
    assert_eq!(port(&st, "swp5")["mode"], "access");
    assert_eq!(port(&st, "swp5")["admin_up"], true);
    assert_eq!(port(&st, "swp6")["native_vlan"], 120);
    assert_eq!(port(&st, "swp6")["allowed_vlans"], json!([120]));
    assert_eq!(st["pending"], json!(null));
    assert_ne!(st["saved"], st["running"]);
    assert_eq!(e("nv config save").code, 0);
    let st = state(&s);
    assert_eq!(st["saved"], st["running"]);
    let r = e("nv show interface swp5 -o json");
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["bridge"]["domain"]["br_default"]["access"], 120);
}

#[test]
fn cumulus_nvue_errors_and_detach() {
    let t = Tmp::new("nvue2");
    let s = t.path("s.json");
    let r = exec(
        "cumulus_nvue",
        &s,
        "nv set interface swp5 bridge domain br_default acess 120",
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("Error"));
    let r = exec("cumulus_nvue", &s, "nv set interface swp99 link state up");
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("Config invalid at"));
    assert_eq!(
        exec(
            "cumulus_nvue",
            &s,
            "nv set interface swp5 bridge domain br_default access 130"
        )
        .code,
        0
    );
    let r = exec("cumulus_nvue", &s, "nv config apply -y");
    assert_eq!(r.code, 1);
    // NVUE's form for a refused revision: the heading, then the indented reason.
    assert!(
        r.stderr.starts_with("Invalid config [rev_id: ")
            && r.stderr.contains(
                "]\n  Config invalid at interface.swp5.bridge.domain.br_default.access: VLAN 130"
            ),
        "{}",
        r.stderr
    );
    assert_eq!(exec("cumulus_nvue", &s, "nv config detach").code, 0);
    assert_eq!(state(&s)["pending"], json!(null));
    assert_eq!(exec("cumulus_nvue", &s, "nvv show").code, 127);
}

#[test]
fn cumulus_nclu_add_commit_abort() {
    let t = Tmp::new("nclu");
    let s = t.path("s.json");
    let e = |c: &str| exec("cumulus", &s, c);
    assert_eq!(e("net add vlan 120").code, 0);
    assert_eq!(e("net add interface swp5 bridge access 120").code, 0);
    assert_eq!(e("net add bond bond1 bond slaves swp7-8").code, 0);
    assert_eq!(e("net add bond bond1 bridge vids 120").code, 0);
    let r = e("net add interface swp5 brdge access 120");
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("ERROR: Command not found."));
    assert_eq!(e("net add interface swp99 link down").code, 1);
    assert_eq!(port(&state(&s), "swp5")["access_vlan"], json!(null));
    assert_eq!(e("net commit").code, 0);
    let st = state(&s);
    assert_eq!(port(&st, "swp5")["access_vlan"], 120);
    assert_eq!(
        st["running"]["lags"]["bond1"]["members"],
        json!(["swp7", "swp8"])
    );
    assert_eq!(
        st["running"]["lags"]["bond1"]["allowed_vlans"],
        json!([120])
    );
    assert_eq!(st["saved"], st["running"]);
    assert_eq!(e("net add interface swp6 link down").code, 0);
    assert_eq!(e("net abort").code, 0);
    assert_eq!(state(&s)["pending"], json!(null));
}

#[test]
fn sonic_config_vlan_members_and_save() {
    for p in ["sonic", "dell_enterprise_sonic"] {
        let t = Tmp::new(p);
        let s = t.path("s.json");
        let e = |c: &str| exec(p, &s, c);
        // sonic-utilities' `config` needs root (config/main.py).
        let r = e("config vlan add 120");
        assert_eq!(r.code, 1);
        assert!(r.stderr.contains("Root privileges are required"));
        assert_eq!(e("sudo config vlan add 120").code, 0);
        assert_eq!(e("sudo config vlan member add -u 120 Ethernet4").code, 0);
        assert_eq!(e("sudo config vlan member add 120 Ethernet8").code, 0);
        // config/vlan.py's messages.
        let r = e("sudo config vlan member add 130 Ethernet8");
        assert_eq!(r.code, 2);
        assert!(
            r.stderr.contains("Error: Vlan130 does not exist"),
            "{}",
            r.stderr
        );
        assert!(e("sudo config vlan member add -u 1 Ethernet12")
            .stderr
            .contains("Vlan1 is default VLAN"));
        assert!(e("sudo config vlan member add 120 Ethernet999")
            .stderr
            .contains("Ethernet999 does not exist"));
        assert!(e("sudo config vlna add 5")
            .stderr
            .contains("No such command"));
        assert_eq!(e("sudo config interface startup Ethernet4").code, 0);
        assert_eq!(e("sudo config save -y").code, 0);
        let st = state(&s);
        assert_eq!(port(&st, "Ethernet4")["access_vlan"], 120);
        assert_eq!(port(&st, "Ethernet8")["allowed_vlans"], json!([120]));
        assert_eq!(st["saved"], st["running"]);
        assert_eq!(e("sudo config vlan member del 120 Ethernet4").code, 0);
        assert_eq!(port(&state(&s), "Ethernet4")["mode"], json!(null));
    }
}

#[test]
fn sonic_save_confirmation_interactive() {
    let t = Tmp::new("sonic-i");
    let s = t.path("s.json");
    let r = session(
        "sonic",
        &s,
        &["sudo config vlan add 120", "sudo config save", "y", "exit"],
    );
    assert!(r.stdout.contains("admin@sonic:~$ "));
    assert!(r
        .stdout
        .contains("Existing files will be overwritten, continue? [y/N]: "));
    let st = state(&s);
    assert_eq!(st["saved"], st["running"]);
}

#[test]
fn ovs_linux_ngs_and_plug() {
    let t = Tmp::new("ovs");
    let s = t.path("s.json");
    let e = |c: &str| exec("ovs_linux", &s, c);
    assert_eq!(e("ovs-vsctl set port eth1 vlan_mode=access").code, 0);
    assert_eq!(e("ovs-vsctl set port eth1 tag=120").code, 0);
    assert_eq!(
        e("ovs-vsctl set port eth2 vlan_mode=native-untagged").code,
        0
    );
    assert_eq!(e("ovs-vsctl set port eth2 tag=10").code, 0);
    assert_eq!(e("ovs-vsctl add port eth2 trunks 120").code, 0);
    assert_eq!(e("ovs-vsctl add port eth2 trunks 130").code, 0);
    assert_eq!(e("ovs-vsctl remove port eth2 trunks 130").code, 0);
    let r = e("ovs-vsctl set port eth99 tag=1");
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("no row \"eth99\" in table Port"));
    assert!(e("ovs-vsctl sett port eth1 tag=1")
        .stderr
        .contains("unknown command 'sett'"));
    let r = e("ovs-vsctl --may-exist add-port br-int pf0vf3 -- set Interface pf0vf3 external_ids:iface-id=vif-1 external_ids:attached-mac=52:54:00:00:00:01");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let st = state(&s);
    assert_eq!(port(&st, "eth1")["access_vlan"], 120);
    assert_eq!(port(&st, "eth2")["native_vlan"], 10);
    assert_eq!(port(&st, "eth2")["allowed_vlans"], json!([120]));
    assert_eq!(
        port(&st, "pf0vf3")["ovs"]["iface_external_ids"]["iface-id"],
        "vif-1"
    );
    assert_eq!(port(&st, "pf0vf3")["ovs"]["bridge"], "br-int");
    assert_eq!(e("ovs-vsctl get port eth1 tag").stdout.trim(), "120");
    assert_eq!(e("ovs-vsctl clear port eth1 tag").code, 0);
    assert_eq!(e("ovs-vsctl del-port br-int pf0vf3").code, 0);
    let st = state(&s);
    assert_eq!(port(&st, "eth1")["access_vlan"], json!(null));
    assert!(st["running"]["ports"].get("pf0vf3").is_none());
}

/// What Mercury's ovsdb driver reads: `--format=json` tables with `--columns`, `find
/// name=`, and rows addressed by the `_uuid` the read gave.
#[test]
fn ovs_linux_json_tables_and_rows_by_uuid() {
    let t = Tmp::new("ovs-json");
    let s = t.path("s.json");
    let e = |c: &str| exec("ovs_linux", &s, c);
    let r = e("ovs-vsctl --may-exist add-port br-int pf0vf1 -- set Interface pf0vf1 external_ids:iface-id=vif-1 -- set Port pf0vf1 tag=120 vlan_mode=access");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = e("ovs-vsctl --timeout=9 --format=json -- --columns=name,ports list Bridge -- --columns=_uuid,name,tag,trunks,vlan_mode,interfaces find Port name=pf0vf1 -- --columns=_uuid,name,external_ids,mtu_request,error find Interface name=pf0vf1");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let docs: Vec<serde_json::Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(docs.len(), 3, "{}", r.stdout);
    assert_eq!(docs[0]["headings"], json!(["name", "ports"]));
    let br_int = docs[0]["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row[0] == "br-int")
        .unwrap();
    let port_row = &docs[1]["data"][0];
    // The bridge's one port is a bare uuid reference, the same as the Port row's _uuid.
    assert_eq!(br_int[1], port_row[0], "{}", r.stdout);
    assert_eq!(port_row[1], "pf0vf1");
    assert_eq!(port_row[2], 120);
    assert_eq!(port_row[3], json!(["set", []]));
    assert_eq!(port_row[4], "access");
    let iface_row = &docs[2]["data"][0];
    assert_eq!(port_row[5], iface_row[0]);
    assert_eq!(iface_row[2], json!(["map", [["iface-id", "vif-1"]]]));
    // A row addressed by its uuid.
    let uuid = port_row[0][1].as_str().unwrap();
    assert_eq!(e(&format!("ovs-vsctl set Port {uuid} tag=130")).code, 0);
    assert_eq!(e("ovs-vsctl get port pf0vf1 tag").stdout.trim(), "130");
    // find with no match: an empty table.
    let r = e("ovs-vsctl --format=json -- --columns=name find Port name=nope");
    assert_eq!(r.stdout.trim(), r#"{"data":[],"headings":["name"]}"#);
}

#[test]
fn huawei_vrp5_access_trunk_save() {
    let t = Tmp::new("vrp5");
    let s = t.path("s.json");
    let r = session(
        "huawei",
        &s,
        &[
            "screen-length 0 temporary",
            "system-view",
            "vlan 120",
            "description net-120",
            "quit",
            "vlan batch 130 to 132",
            "interface GigabitEthernet0/0/5",
            "port link-type access",
            "port default vlan 120",
            "port default vlan 999",
            "prot link-type access",
            "interface GigabitEthernet0/0/6",
            "port link-type trunk",
            "port trunk allow-pass vlan 130 to 131",
            "port trunk pvid vlan 130",
            "return",
            "save",
            "y",
        ],
    );
    assert!(r.stdout.contains("<leaf1>"), "{}", r.stdout);
    assert!(r.stdout.contains("[leaf1-GigabitEthernet0/0/5]"));
    assert!(r
        .stdout
        .contains("Error: Unrecognized command found at '^' position."));
    assert!(r.stdout.contains("Are you sure to continue?[Y/N]:"));
    // VRP names no VLAN when it refuses one it does not have.
    assert!(
        r.stdout.contains("\nError: The VLAN does not exist.\n"),
        "{}",
        r.stdout
    );
    let st = state(&s);
    assert_eq!(st["running"]["vlans"]["120"]["name"], "net-120");
    assert!(st["running"]["vlans"]["132"].is_object());
    assert_eq!(port(&st, "GigabitEthernet0/0/5")["access_vlan"], 120);
    assert_eq!(
        port(&st, "GigabitEthernet0/0/6")["allowed_vlans"],
        json!([130, 131])
    );
    assert_eq!(port(&st, "GigabitEthernet0/0/6")["native_vlan"], 130);
    assert_eq!(st["saved"], st["running"]);
}

#[test]
fn huawei_vrpv8_commit() {
    let t = Tmp::new("vrp8");
    let s = t.path("s.json");
    let r = session(
        "huawei_vrpv8",
        &s,
        &[
            "system-view",
            "vlan 120",
            "commit",
            "interface GE1/0/5",
            "port link-type access",
            "port default vlan 120",
            "quit",
            "return",
            "n",
        ],
    );
    assert!(r.stdout.contains("[~leaf1]"), "{}", r.stdout);
    assert!(r.stdout.contains("[*leaf1-GE1/0/5]"));
    let st = state(&s);
    assert!(st["running"]["vlans"]["120"].is_object());
    // The uncommitted port change was discarded (answered N).
    assert_eq!(port(&st, "GE1/0/5")["access_vlan"], json!(null));
}

#[test]
fn hpe_comware_access_and_save_force() {
    let t = Tmp::new("comware");
    let s = t.path("s.json");
    let r = session(
        "hpe_comware",
        &s,
        &[
            "screen-length disable",
            "system-view",
            "vlan 120",
            "quit",
            "interface GigabitEthernet1/0/5",
            "port link-type access",
            "port access vlan 120",
            "port acess vlan 120",
            "return",
            "save force",
        ],
    );
    assert!(
        r.stdout
            .contains("% Unrecognized command found at '^' position."),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("Saved the current configuration"));
    let st = state(&s);
    assert_eq!(port(&st, "GigabitEthernet1/0/5")["access_vlan"], 120);
    assert_eq!(st["saved"], st["running"]);
}

#[test]
fn nokia_srl_evpn_objects_must_reference_each_other() {
    let t = Tmp::new("srl-evpn");
    let s = t.path("s.json");
    let r = session(
        "nokia_srl",
        &s,
        &[
            "enter candidate private",
            "set / network-instance mac-vrf-120 type mac-vrf",
            "set / network-instance mac-vrf-120 vxlan-interface vxlan0.120",
            "commit now",
            "set / tunnel-interface vxlan0 vxlan-interface 120 type bridged",
            "set / tunnel-interface vxlan0 vxlan-interface 120 ingress vni 120",
            "set / network-instance mac-vrf-120 protocols bgp-evpn bgp-instance 1 vxlan-interface vxlan0.120",
            "commit now",
            "set / network-instance mac-vrf-120 protocols bgp-evpn bgp-instance 1 evi 120",
            "commit now",
        ],
    );
    assert!(
        r.stdout
            .contains("vxlan-interface vxlan0.120 does not exist"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("has no evi"), "{}", r.stdout);
    assert!(r.stdout.contains("All changes have been committed."));
    let st = state(&s);
    assert_eq!(st["running"]["vlans"]["120"]["name"], "mac-vrf-120");
}

#[test]
fn nokia_srl_candidate_commit() {
    let t = Tmp::new("srl");
    let s = t.path("s.json");
    let r = session(
        "nokia_srl",
        &s,
        &[
            "enter candidate private",
            "set / network-instance mac-vrf-120 type mac-vrf",
            "set / network-instance mac-vrf-120 description OS-Network-ID-net",
            "set / interface ethernet-1/5 subinterface 120 type bridged",
            "set / network-instance mac-vrf-120 interface ethernet-1/5.120",
            "set / intrface ethernet-1/6 admin-state disable",
            "commit now",
            "save startup",
        ],
    );
    assert!(
        r.stdout.contains("--{ running }--[  ]--\nA:leaf1# "),
        "{}",
        r.stdout
    );
    assert!(r
        .stdout
        .contains("--{ candidate private private-admin }--[  ]--"));
    assert!(r.stdout.contains("Parsing error: Unknown token 'intrface'"));
    assert!(r.stdout.contains("All changes have been committed."));
    let st = state(&s);
    assert_eq!(st["running"]["vlans"]["120"]["name"], "OS-Network-ID-net");
    assert_eq!(port(&st, "ethernet-1/5")["access_vlan"], 120);
    assert_eq!(st["saved"], st["running"]);
}

#[test]
fn pluribus_vlan_port_add() {
    let t = Tmp::new("pn");
    let s = t.path("s.json");
    let r = session(
        "pluribus",
        &s,
        &[
            "pager off",
            "vlan-create id 120 scope fabric ports none description net-120 auto-vxlan",
            "vlan-port-remove vlan-range all ports 5",
            "port-vlan-add port 5 untagged-vlan 120",
            "vlan-creat id 5",
            "port-config-modify port 5 enable",
        ],
    );
    assert!(
        r.stdout.contains("CLI (network-admin@leaf1) > "),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("vlan-creat: command not found"));
    let st = state(&s);
    assert_eq!(st["running"]["vlans"]["120"]["name"], "net-120");
    assert_eq!(port(&st, "5")["access_vlan"], 120);
}

/// netmiko waits for these confirmations after its session-preparation commands; without
/// them it timed out against the simulator (found by tests/netmiko.rs in the mercury crate).
#[test]
fn eos_and_junos_confirm_width_and_paging_settings_as_netmiko_expects() {
    let t = Tmp::new("confirm");
    let r = session(
        "arista_eos",
        &t.path("eos.json"),
        &["terminal width 511", "terminal length 0", "exit"],
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout.contains("Width set to 511 columns."),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("Pagination disabled."), "{}", r.stdout);
    let r = session(
        "juniper",
        &t.path("junos.json"),
        &[
            "set cli screen-width 511",
            "set cli complete-on-space off",
            "set cli screen-length 0",
            "exit",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
    for want in [
        "Screen width set to 511",
        "Disabling complete-on-space",
        "Screen length set to 0",
    ] {
        assert!(r.stdout.contains(want), "{want}: {}", r.stdout);
    }
}

/// EOS configuration sessions (EOS manual, "Configure Session"): changes go into a
/// snapshot of running-config, `commit` applies them at once and returns to exec mode,
/// `abort` drops them; the prompt names the session cut to six characters.
#[test]
fn arista_eos_configuration_session_commit_and_abort() {
    let t = Tmp::new("eos-session");
    let st = t.path("eos.json");
    let r = session(
        "arista_eos",
        &st,
        &[
            "configure terminal",
            "vlan 120",
            "end",
            "configure session",
            "interface Ethernet5",
            "switchport access vlan 120",
            "abort",
            "exit",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.contains("(config-s-sess-"), "{}", r.stdout);
    let port = |st: &std::path::Path| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mercury-sim"))
            .args(["show", "--state"])
            .arg(st)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["running"]["ports"]["Ethernet5"]["access_vlan"].clone()
    };
    assert!(port(&st).is_null(), "abort left the change");
    let r = session(
        "arista_eos",
        &st,
        &[
            "configure session",
            "interface Et5",
            "switchport access vlan 120",
            "commit",
            "show running-config",
            "exit",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(port(&st), 120, "commit did not apply: {}", r.stdout);
    // `commit` outside a session is refused.
    let r = session(
        "arista_eos",
        &st,
        &["configure terminal", "commit", "end", "exit"],
    );
    assert!(r.stdout.contains("% Invalid input"), "{}", r.stdout);
}

/// IOS-like trunk lists: the default (no line) is every VLAN, `none` is printed and means
/// none, `no switchport trunk allowed vlan` returns to every VLAN, removing from the default
/// leaves every other VLAN, removing the last VLAN leaves `none`.
#[test]
fn ios_like_trunk_lists_tell_all_from_none() {
    for (platform, port_name, typed) in [
        (
            "cisco_ios",
            "GigabitEthernet1/0/5",
            "interface GigabitEthernet1/0/5",
        ),
        ("cisco_nxos", "Ethernet1/5", "interface Ethernet1/5"),
        ("arista_eos", "Ethernet5", "interface Ethernet5"),
        (
            "ruijie",
            "GigabitEthernet0/5",
            "interface GigabitEthernet 0/5",
        ),
        ("supermicro_smis", "Gi0/5", "interface Gi 0/5"),
    ] {
        let t = Tmp::new(platform);
        let s = t.path("s.json");
        let step = |lines: &[&str]| {
            let mut all = vec!["configure terminal", typed];
            all.extend_from_slice(lines);
            all.push("end");
            let r = session(platform, &s, &all);
            assert!(!r.stdout.contains('%'), "{platform}: {}", r.stdout);
            let st = state(&s);
            port(&st, port_name).clone()
        };
        let shown = |needle: &str| {
            let show = format!("show running-config {typed}");
            let r = session(platform, &s, &[&show]);
            r.stdout.contains(needle)
        };
        let p = step(&[
            "switchport mode trunk",
            "switchport trunk allowed vlan add 120",
        ]);
        assert_eq!(p["allowed_vlans"], json!([]), "{platform}: every VLAN: {p}");
        assert!(p.get("allowed_none").is_none(), "{platform}: {p}");
        assert!(
            !shown("allowed vlan"),
            "{platform}: the default prints no line"
        );
        let p = step(&["switchport trunk allowed vlan none"]);
        assert_eq!(p["allowed_vlans"], json!([]), "{platform}: {p}");
        assert_eq!(p["allowed_none"], true, "{platform}: {p}");
        assert!(shown("switchport trunk allowed vlan none"), "{platform}");
        let p = step(&["switchport trunk allowed vlan add 120"]);
        assert_eq!(p["allowed_vlans"], json!([120]), "{platform}: {p}");
        let p = step(&["switchport trunk allowed vlan remove 120"]);
        assert_eq!(p["allowed_none"], true, "{platform}: last VLAN gone: {p}");
        let p = step(&["no switchport trunk allowed vlan"]);
        assert_eq!(p["allowed_vlans"], json!([]), "{platform}: {p}");
        assert!(
            p.get("allowed_none").is_none(),
            "{platform}: every VLAN again: {p}"
        );
        let p = step(&["switchport trunk allowed vlan remove 5"]);
        let left = p["allowed_vlans"].as_array().map_or(0, Vec::len);
        assert_eq!(left, 4093, "{platform}: every VLAN but 5");
        let p = step(&["switchport trunk allowed vlan all"]);
        assert_eq!(p["allowed_vlans"], json!([]), "{platform}: {p}");
        assert!(p.get("allowed_none").is_none(), "{platform}: {p}");
    }
}
