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

/// The device refused: exit 1, its words in `msg`, nothing changed on the port or saved.
fn refused(platform: &str, port: &str, words: &str) -> Value {
    let lab = switch(platform, port, false);
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
