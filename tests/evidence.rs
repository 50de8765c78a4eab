//! Where the simulator used to disagree with what real devices print (docs/evidence.md,
//! "Simulator vs evidence"), it now follows the evidence, and these tests hold Mercury to
//! the consequence: a rejection the real device prints is a failure (exit 1) with the
//! device's own words, and the simulated switch's state is unchanged.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{Lab, SimDevice};

fn lab(platform: &str, vlans: &[&str]) -> Lab {
    let lab = Lab::new(&[SimDevice::new("leaf", platform)]);
    for v in vlans {
        lab.mercury([
            "add-network",
            "--device",
            "leaf",
            "--vlan",
            v,
            "--reason",
            "setup",
        ])
        .run()
        .expect(0);
    }
    lab
}

/// S2: Comware indents its errors by one space (` % Wrong parameter found at '^'
/// position.`, HPE's pyhpecw7 tests); the old failure patterns, anchored at column 0, took
/// the rejected line for success.
#[test]
fn comware_errors_indented_by_one_space_fail_the_request() {
    let lab = lab("hpe_comware", &["10", "120"]);
    let before = lab.state("leaf")["running"].clone();
    let v = lab
        .attach("leaf", "GigabitEthernet1/0/99", "120")
        .run()
        .expect(1);
    assert_eq!(v["error_kind"], "device_rejected", "{v}");
    assert!(
        v["msg"].as_str().unwrap().contains("Wrong parameter"),
        "{v}"
    );
    assert_eq!(lab.state("leaf")["running"], before);
}

/// S3: current sonic-utilities answers an attach to a VLAN that does not exist with
/// `Error: Vlan130 does not exist` (config/vlan.py) — which Mercury listed as "already
/// done", reporting success for a port left in no VLAN.
#[test]
fn sonic_attach_to_a_missing_vlan_fails() {
    for platform in ["sonic", "dell_enterprise_sonic"] {
        let lab = lab(platform, &["10"]);
        let v = lab.attach("leaf", "Ethernet20", "130").run().expect(1);
        assert!(
            v["msg"]
                .as_str()
                .unwrap()
                .contains("Vlan130 does not exist"),
            "{platform}: {v}"
        );
        let port = lab.port("leaf", "Ethernet20");
        assert_ne!(port["access_vlan"], 130, "{platform}: {port}");
        // Deleting a VLAN that is already gone is still done.
        lab.mercury([
            "delete-network",
            "--device",
            "leaf",
            "--vlan",
            "130",
            "--reason",
            "r",
        ])
        .run()
        .expect(0);
    }
}

/// PowerConnect answers a tagged VLAN it does not have with a failure table whose error is
/// not at the start of its line (`VLAN      1000 ERROR: This VLAN does not exist.`, netman's
/// replayed 62xx answers); Mercury's failure patterns did not know it, so the trunk was
/// reported as done with the VLAN missing.
#[test]
fn powerconnect_tagged_vlan_that_does_not_exist_fails_the_request() {
    let lab = lab("dell_powerconnect", &["10", "110"]);
    let before = lab.state("leaf")["running"].clone();
    let v = lab
        .mercury([
            "update-port",
            "--device",
            "leaf",
            "--port",
            "Gi1/0/5",
            "--mode",
            "trunk",
            "--native-vlan",
            "110",
            "--allowed-vlans",
            "130",
            "--reason",
            "r",
        ])
        .run()
        .expect(1);
    assert_eq!(v["error_kind"], "device_rejected", "{v}");
    assert!(
        v["msg"]
            .as_str()
            .unwrap()
            .contains("rejected \"switchport general allowed vlan add 130 tagged\": VLANs failed to be configured"),
        "{v}"
    );
    let after = lab.port("leaf", "GigabitEthernet1/0/5");
    assert!(
        !after["allowed_vlans"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x == 130)),
        "{after}"
    );
    // The table itself is in the transcript of the rejected line.
    let line = v["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["input"] == "switchport general allowed vlan add 130 tagged")
        .unwrap();
    assert!(
        line["output"]
            .as_str()
            .unwrap()
            .contains("VLAN       130 ERROR: This VLAN does not exist."),
        "{line}"
    );
    let _ = before;
}
