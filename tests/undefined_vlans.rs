//! An attach to a VLAN the switch does not have, per vendor family, against the simulator:
//! what the device does (sim/STATUS.md, "Undefined VLANs, per vendor", names the source
//! for each) and what Mercury then reports. The result is truthful whichever it is: a
//! refusal is exit 1 with the device's own words in `msg`, the port as it was and
//! `changed: false`; a VLAN the device creates exists afterwards; a port the device accepts
//! into a VLAN it does not otherwise have reads back as configured.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{Lab, SimDevice};
use serde_json::Value;

/// A switch whose only VLANs are 1 and the idle VLAN 10 (`mercury-sim --vlans 10`), with
/// `manage_vlans` as given; its state file is created by a read (`verify-port`).
fn switch(platform: &str, port: &str, manage_vlans: bool) -> Lab {
    let lab = Lab::with_defaults(
        &[SimDevice {
            sim_args: &["--vlans", "10"],
            ..SimDevice::new("leaf", platform)
        }],
        &format!(
            "default_vlan = 10\nallowed_vlans = [\"10\", \"100-199\"]\nmanage_vlans = {manage_vlans}\n"
        ),
    );
    lab.mercury(["verify-port", "--device", "leaf", "--port", port])
        .run()
        .expect(0);
    assert!(
        !vlan_exists(&lab, 130),
        "{platform}: VLAN 130 exists before the test"
    );
    lab
}

fn vlan_exists(lab: &Lab, id: u16) -> bool {
    lab.state("leaf")["running"]["vlans"]
        .get(id.to_string())
        .is_some()
}

fn msg(v: &Value) -> &str {
    v["msg"].as_str().unwrap()
}

/// The platform's built-in catalog section without its `verify.vlan_table` line, as a site
/// catalog in the lab's `plugins.d` (mode 0600): Mercury no longer reads the VLAN table
/// first, so the attach reaches the device as it would from a site catalog that declares
/// no VLAN table, or after another client deleted the VLAN between Mercury's read and its
/// line. What the device then does is its own behaviour, which these tests assert.
fn without_vlan_table(lab: &Lab, platform: &str) {
    let head = format!("platforms.{platform}");
    let mut text = String::new();
    let mut inside = false;
    for line in include_str!("../plugins.toml").lines() {
        let t = line.trim_start_matches('[').trim_end_matches(']');
        if line.starts_with('[') {
            inside = t == head || t.starts_with(&format!("{head}."));
        }
        if inside && !line.starts_with("vlan_table") {
            text.push_str(line);
            text.push('\n');
        }
    }
    assert!(text.contains("[platforms."), "no platform {platform}");
    let dir = lab.path("plugins.d");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("site.toml"), text).unwrap();
    common::set_mode(&dir.join("site.toml"), 0o600);
}

/// A switch (as [`switch`], without `manage_vlans`) whose VLAN table Mercury does not read.
fn unread(platform: &str, port: &str) -> Lab {
    let lab = switch(platform, port, false);
    without_vlan_table(&lab, platform);
    lab
}

/// The device refused: exit 1, its words in `msg`, nothing changed on the port or saved.
fn refused(platform: &str, port: &str, words: &str) -> Value {
    refused_on(switch(platform, port, false), platform, port, words)
}

/// A port's state with no mode read as access, the default of the IOS-like platforms the
/// lenient checks below are for (an Onyx or OS10 port that was never given a mode is an
/// access port in VLAN 1; `switchport mode access` on it changes nothing the device does).
fn meaning(port: &Value) -> Value {
    let mut p = port.clone();
    if p["mode"].is_null() {
        p["mode"] = Value::from("access");
    }
    p
}

/// The device refused, and the result is true to what the lines before the refusal left:
/// exit 1, its words in `msg`, no VLAN created, nothing saved, the port not in VLAN 130;
/// `changed: false` (result and audit record) only when the port means what it did, and
/// `changed: true` only with "PARTLY APPLIED" in `msg`.
fn refused_truthfully(lab: &Lab, platform: &str, port: &str, words: &str) -> Value {
    let before = lab.state("leaf");
    let v = lab.attach("leaf", port, "130").run().expect(1);
    assert_eq!(v["error_kind"], "device_rejected", "{platform}: {v}");
    assert!(msg(&v).contains(words), "{platform}: {v}");
    let after = lab.state("leaf");
    let (was, is) = (
        &before["running"]["ports"][port],
        &after["running"]["ports"][port],
    );
    assert_ne!(is["access_vlan"], 130, "{platform}: {is}");
    if v["changed"] == false {
        assert_eq!(meaning(is), meaning(was), "{platform}: unchanged, said {v}");
    } else {
        assert!(msg(&v).contains("PARTLY APPLIED"), "{platform}: {v}");
        assert_eq!(v["partial"]["took_effect"], true, "{platform}: {v}");
    }
    assert_eq!(after["saved"], before["saved"], "{platform}: nothing saved");
    assert!(!vlan_exists(lab, 130), "{platform}");
    let last = lab.audit().pop().unwrap();
    assert_eq!(last["how"]["changed"], v["changed"], "{platform}: {last}");
    v
}

/// [`refused`] on a lab already made.
fn refused_on(lab: Lab, platform: &str, port: &str, words: &str) -> Value {
    let before = lab.state("leaf");
    let v = lab.attach("leaf", port, "130").run().expect(1);
    assert_eq!(v["error_kind"], "device_rejected", "{platform}: {v}");
    assert!(msg(&v).contains(words), "{platform}: {v}");
    assert_eq!(v["changed"], false, "{platform}: {v}");
    let after = lab.state("leaf");
    assert_eq!(
        after["running"]["ports"][port], before["running"]["ports"][port],
        "{platform}: the port is as it was"
    );
    assert_eq!(after["saved"], before["saved"], "{platform}: nothing saved");
    assert!(!vlan_exists(&lab, 130), "{platform}");
    let last = lab.audit().pop().unwrap();
    assert_eq!(last["how"]["changed"], false, "{platform}: {last}");
    v
}

/// IOS-like switches that Mercury does not read a VLAN table on (Sx300, RGOS, SMIS) create a
/// missing *access* VLAN themselves, as IOS does (`% Access VLAN does not exist. Creating
/// vlan N`); Dell OS9 and FastIron configure membership inside the VLAN (`interface vlan
/// N` / `vlan N by port`), which creates it. The attach succeeds and the VLAN exists after.
#[test]
fn switches_that_create_the_vlan_themselves_succeed_and_the_vlan_exists_after() {
    for (platform, port, state_port) in [
        ("cisco_s300", "GigabitEthernet1/0/5", "GigabitEthernet1/0/5"),
        ("ruijie", "GigabitEthernet0/5", "GigabitEthernet0/5"),
        ("supermicro_smis", "Gi0/5", "Gi0/5"),
        (
            "dell_force10",
            "TenGigabitEthernet1/5",
            "TenGigabitEthernet1/5",
        ),
        ("brocade_fastiron", "ethernet1/1/5", "ethernet1/1/5"),
    ] {
        let lab = switch(platform, port, false);
        let v = lab.attach("leaf", port, "130").run().expect(0);
        assert_eq!(v["changed"], true, "{platform}: {v}");
        assert!(vlan_exists(&lab, 130), "{platform}: VLAN 130 exists after");
        let p = lab.port("leaf", state_port);
        assert_eq!(p["access_vlan"], 130, "{platform}: {p}");
    }
}

/// Where Mercury reads the VLAN table first (IOS, NX-OS, EOS, OS10, AOS-CX, Junos, VRP,
/// VRPv8, Comware), the device's own behaviour is never reached: with `manage_vlans` Mercury
/// creates the VLAN in the same session and says so (without it the request is refused
/// before anything is sent: `tests/platforms.rs`).
#[test]
fn switches_with_a_vlan_table_get_the_vlan_created_first() {
    for (platform, port) in [
        ("cisco_ios", "GigabitEthernet1/0/5"),
        ("cisco_nxos", "Ethernet1/5"),
        ("arista_eos", "Ethernet5"),
        ("dell_os10", "ethernet1/1/5"),
        ("aruba_aoscx", "1/1/5"),
        ("juniper", "ge-0/0/5"),
        ("huawei", "GigabitEthernet0/0/5"),
        ("huawei_vrpv8", "GE1/0/5"),
        ("hpe_comware", "GigabitEthernet1/0/5"),
    ] {
        let lab = switch(platform, port, true);
        let v = lab.attach("leaf", port, "130").run().expect(0);
        assert!(
            v["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|w| w.as_str().unwrap().contains("VLAN 130 did not exist")),
            "{platform}: {v}"
        );
        assert!(vlan_exists(&lab, 130), "{platform}");
        assert_eq!(lab.port("leaf", port)["access_vlan"], 130, "{platform}");
    }
}

/// Comware applies each line as it goes: when it refuses `port access vlan 130` (here an
/// injected rejection, as for a VLAN another client deleted after Mercury read the VLAN
/// table) after `port link-type access` took effect on a port with no link type, Mercury
/// puts the port back (`undo port link-type`). Before, it could not, and said "PARTLY
/// APPLIED ... putting the ports back failed" with `changed: true`.
#[test]
fn comware_refusal_after_the_link_type_took_effect_is_undone() {
    let port = "GigabitEthernet1/0/5";
    let lab = Lab::new(&[SimDevice {
        sim_args: &[
            "--vlans",
            "10,130",
            "--fault",
            "reject=port access vlan 130",
        ],
        ..SimDevice::new("leaf", "hpe_comware")
    }]);
    lab.mercury(["verify-port", "--device", "leaf", "--port", port])
        .run()
        .expect(0);
    let before = lab.port("leaf", port);
    let v = lab.attach("leaf", port, "130").run().expect(1);
    assert_eq!(v["partial"]["took_effect"], true, "{v}");
    assert_eq!(v["partial"]["restored"], true, "{v}");
    assert_eq!(v["changed"], false, "{v}");
    assert_eq!(lab.port("leaf", port), before, "the port is as it was");
}

/// NVUE refuses at `nv config apply`: nothing of the pending revision took effect.
#[test]
fn nvue_refuses_at_apply_and_nothing_took_effect() {
    let v = refused(
        "cumulus_nvue",
        "swp5",
        "VLAN 130 is not in bridge domain br_default's vlan list",
    );
    assert_eq!(v["partial"]["took_effect"], false, "{v}");
}

/// SR Linux: `set / network-instance mac-vrf-130 interface ethernet-1/5.130` creates a
/// network-instance of type `default` (the YANG default), which cannot hold a bridged
/// sub-interface: the commit is refused, the private candidate discarded, and nothing took
/// effect. (Before, the simulator committed it and Mercury reported the port in VLAN 130.)
#[test]
fn srl_refuses_at_commit_when_the_mac_vrf_does_not_exist() {
    let v = refused("nokia_srl", "ethernet-1/5", "of type mac-vrf");
    assert_eq!(v["partial"]["took_effect"], false, "{v}");
    let sent: Vec<&str> = v["commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["input"].as_str())
        .collect();
    assert!(sent.contains(&"discard now"), "{sent:?}");
}

/// Netvisor refuses `port-vlan-add` for a VLAN it does not have; the memberships Mercury
/// cleared first were none, so the port reads back as it was.
#[test]
fn netvisor_refuses_the_vlan_and_the_port_reads_as_before() {
    let v = refused("pluribus", "5", "vlan 130 not found");
    assert_eq!(v["partial"]["restored"], true, "{v}");
}

/// NCLU puts the port in VLAN 130 although the bridge's VIDs do not list it; Mercury's
/// reader (`bridge -c vlan show`) reads the port in VLAN 130 and reports success. Whether
/// Cumulus adds the VLAN to the bridge itself is unconfirmed (sim/STATUS.md).
#[test]
fn nclu_accepts_an_access_vlan_outside_the_bridge_vids() {
    let lab = switch("cumulus", "swp5", false);
    let v = lab.attach("leaf", "swp5", "130").run().expect(0);
    assert_eq!(v["changed"], true, "{v}");
    assert_eq!(v["data"]["verified"], true, "{v}");
    assert_eq!(lab.port("leaf", "swp5")["access_vlan"], 130);
    assert!(!vlan_exists(&lab, 130), "not in the bridge's VIDs");
}

/// Junos refuses the commit (ELS, the private candidate Mercury commits): `No vlan matches
/// vlan tag 130 for interface ge-0/0/5.0` then `error: configuration check-out failed`
/// (netman's Junos adapter matches these words in the device's commit error; Internap's
/// fake-switches raises them). `msg` carries the device's reason, not only the summary;
/// the candidate is discarded and nothing took effect.
#[test]
fn junos_refuses_at_commit_with_no_vlan_matches_vlan_tag() {
    let v = refused_on(
        unread("juniper", "ge-0/0/5"),
        "juniper",
        "ge-0/0/5",
        "No vlan matches vlan tag 130 for interface ge-0/0/5.0",
    );
    assert!(
        msg(&v).contains("configuration check-out failed"),
        "the summary follows the reason: {v}"
    );
    assert_eq!(v["partial"]["took_effect"], false, "{v}");
}

/// VRP refuses `port default vlan 130` on the line with `Error: The VLAN does not exist.`,
/// naming no VLAN (an eNSP session and a Huawei tool's note of a real device,
/// sim/STATUS.md); VRPv8 alike, in its candidate. On a port with no link type, VRP's
/// `port link-type access` before it has taken effect and the catalog declares no way to
/// clear a link type (`mode_clear`), so the result says PARTLY APPLIED with `changed:
/// true`; VRPv8 discards its candidate and nothing took effect.
#[test]
fn vrp_refuses_the_line_with_the_vlan_does_not_exist() {
    for (platform, port) in [
        ("huawei", "GigabitEthernet0/0/5"),
        ("huawei_vrpv8", "GE1/0/5"),
    ] {
        let lab = unread(platform, port);
        let v = refused_truthfully(&lab, platform, port, "Error: The VLAN does not exist.");
        assert!(
            !msg(&v).contains("130 does"),
            "{platform}: VRP names no VLAN: {v}"
        );
    }
}

/// Comware refuses an *access* VLAN that does not exist (H3C: "You can use a nonexistent
/// VLAN as the PVID for a hybrid or trunk port, but not for an access port"); the wording
/// is the simulator's. The port reads as before.
#[test]
fn comware_refuses_an_access_vlan_that_does_not_exist() {
    let port = "GigabitEthernet1/0/5";
    refused_on(
        unread("hpe_comware", port),
        "hpe_comware",
        port,
        "VLAN 130 does not exist.",
    );
}

/// OS10, AOS-CX and Onyx refuse the line (wordings unconfirmed, sim/STATUS.md; Onyx has no
/// VLAN table in the catalog, so Mercury always reaches it). The mode line before it
/// (`switchport mode access`, `no routing`) took effect on a port that had none: Onyx and
/// AOS-CX read the port as before (access is the default), OS10 reads the printed mode
/// line as a change it cannot clear (no `mode_clear` in the catalog) and says PARTLY
/// APPLIED, `changed: true`.
#[test]
fn os10_aoscx_and_onyx_refuse_the_line() {
    for (platform, port, words) in [
        (
            "dell_os10",
            "ethernet1/1/5",
            "% Error: vlan130 does not exist.",
        ),
        ("aruba_aoscx", "1/1/5", "VLAN 130 does not exist."),
        ("mellanox_mlnxos", "Eth1/5", "% VLAN 130 does not exist"),
    ] {
        let lab = unread(platform, port);
        refused_truthfully(&lab, platform, port, words);
    }
}

/// AOS-CX: `no routing` (the `port_l2` line) turns a routed port into a switchport before
/// `vlan access 130` is refused, and no reader shows a port's routing, so the restore cannot
/// undo or check it: the result must say the change is partly applied, name the line, and
/// never claim the port was restored (it said `changed: false` before).
#[test]
fn aoscx_no_routing_before_a_refusal_is_reported_as_in_effect() {
    let (platform, port) = ("aruba_aoscx", "1/1/5");
    let lab = unread(platform, port);
    let was = lab.state("leaf")["running"]["ports"][port].clone();
    assert!(was["mode"].is_null(), "a routed port to start: {was}");
    let v = lab.attach("leaf", port, "130").run().expect(1);
    assert_eq!(v["error_kind"], "device_rejected", "{v}");
    assert_eq!(v["changed"], true, "{v}");
    assert_eq!(v["partial"]["restored"], false, "{v}");
    assert_eq!(
        v["partial"]["unrestorable"],
        serde_json::json!(["no routing"]),
        "{v}"
    );
    assert!(msg(&v).contains("PARTLY APPLIED"), "{v}");
    assert!(
        msg(&v).contains("\"no routing\" cannot be read back"),
        "{v}"
    );
    // What the result says is what the switch did: the port is a switchport now.
    let is = &lab.state("leaf")["running"]["ports"][port];
    assert!(!is["mode"].is_null(), "no routing took effect: {is}");
    let last = lab.audit().pop().unwrap();
    assert_eq!(last["how"]["changed"], true, "{last}");
}

/// NX-OS accepts an access VLAN it does not have without creating it (`Access Mode VLAN: 3
/// (Vlan not created)`, captures in sim/STATUS.md): the attach succeeds, the port reads
/// back in VLAN 130, and VLAN 130 still does not exist. The result is true to the device
/// (the port is configured; it forwards nothing until the VLAN exists).
#[test]
fn nxos_accepts_the_port_into_a_vlan_it_does_not_create() {
    let (platform, port) = ("cisco_nxos", "Ethernet1/5");
    let lab = unread(platform, port);
    let v = lab.attach("leaf", port, "130").run().expect(0);
    assert_eq!(v["changed"], true, "{v}");
    assert_eq!(lab.port("leaf", port)["access_vlan"], 130);
    assert!(!vlan_exists(&lab, 130), "VLAN 130 was not created");
    let last = lab.audit().pop().unwrap();
    assert_eq!(last["how"]["changed"], true, "{last}");
}

/// EOS creates a missing *access* VLAN and says so, `! Access VLAN does not exist.
/// Creating vlan 130` (an EOS lab session, and Arista automation libraries that match the
/// line; sim/STATUS.md): not a failure on EOS, so the attach succeeds, the port reads back
/// in VLAN 130 and VLAN 130 exists after.
#[test]
fn eos_creates_a_missing_access_vlan_and_says_so() {
    let (platform, port) = ("arista_eos", "Ethernet5");
    let lab = unread(platform, port);
    let v = lab.attach("leaf", port, "130").run().expect(0);
    assert_eq!(v["changed"], true, "{v}");
    let said = v["commands"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["output"] == "! Access VLAN does not exist. Creating vlan 130");
    assert!(said, "{v}");
    assert_eq!(lab.port("leaf", port)["access_vlan"], 130);
    assert!(vlan_exists(&lab, 130), "EOS created VLAN 130");
}
