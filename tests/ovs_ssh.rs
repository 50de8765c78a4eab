//! The `ovs` platform over SSH: Mercury on a management host reaches the card's OVS with
//! an SSH exec channel per line. Until the ssh2 transport lands this goes through the
//! `command` transport wrapping the system `ssh` client (the `ssh -J bastion card` setup),
//! against a real sshd on 127.0.0.1 and a real ovsdb-server/ovs-vswitchd; the OVSDB state
//! is asserted after each step.

mod common;
#[path = "common/ovs.rs"]
mod ovs_harness;
#[path = "common/ovs_sshd.rs"]
mod ovs_sshd;

use common::{Lab, Ran};
use ovs_harness::Ovs;
use ovs_sshd::Sshd;

const NODE: &str = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123";

macro_rules! or_skip {
    ($e:expr) => {
        match $e {
            Some(x) => x,
            None => return,
        }
    };
}

fn lab_over_ssh(ovs: &Ovs, sshd: &Sshd, known_hosts: Option<&std::path::Path>, extra: &str) -> Lab {
    let argv = serde_json::Value::from(sshd.ssh_argv(known_hosts)).to_string();
    ovs_harness::lab(
        ovs,
        &format!("transport = \"command\"\nargv = {argv}\n{extra}"),
    )
}

fn run(lab: &Lab, json: &str) -> Ran {
    lab.mercury(["--format", "json", "run"]).stdin(json).run()
}

#[test]
fn plug_attach_and_unplug_over_ssh_exec() {
    let ovs = or_skip!(ovs_harness::start());
    let sshd = or_skip!(ovs_sshd::start());
    let wrapper = ovs.wrapper("vsctl", false);
    let lab = lab_over_ssh(
        &ovs,
        &sshd,
        None,
        &format!("ovs_vsctl = [\"{}\"]", wrapper.display()),
    );

    let v = run(
        &lab,
        &format!(
            r#"{{"op":"plug_port","local_link_connection":{{"hostname":"dpu-7","port_id":"pf0vf3"}},
                "vif_id":"vif-1@tenant:a","mac":"aa:bb:cc:dd:ee:01","node_uuid":"{NODE}","vlan":120,
                "reason":"deploy node {NODE}"}}"#
        ),
    )
    .expect(0);
    assert_eq!(v["changed"], true, "{v}");
    assert_eq!(ovs.bridge_of("pf0vf3"), "br-int");
    assert_eq!(
        ovs.iface_id("pf0vf3", "iface-id").as_deref(),
        Some("vif-1@tenant:a")
    );
    assert_eq!(ovs.iface_id("pf0vf3", "node-uuid").as_deref(), Some(NODE));
    assert_eq!(
        ovs.vlans("pf0vf3"),
        ("120".into(), "[]".into(), "access".into())
    );
    // Each line went through sshd as one exec: a read, one transaction, the read back.
    assert_eq!(ovs.wrapper_log("vsctl").len(), 3, "read, write, read back");

    // Idempotent re-plug: only the read crosses the wire.
    let v = run(
        &lab,
        &format!(
            r#"{{"op":"plug_port","device":"dpu-7","port":"pf0vf3","vif_id":"vif-1@tenant:a",
                "mac":"aa:bb:cc:dd:ee:01","node_uuid":"{NODE}","vlan":120,"reason":"again"}}"#
        ),
    )
    .expect(0);
    assert_eq!(v["changed"], false, "{v}");
    assert_eq!(ovs.wrapper_log("vsctl").len(), 4);

    run(
        &lab,
        r#"{"op":"update_port","device":"dpu-7","port":"pf0vf3","mode":"trunk","native_vlan":110,
            "allowed_vlans":"120,130","reason":"r"}"#,
    )
    .expect(0);
    assert_eq!(
        ovs.vlans("pf0vf3"),
        (
            "110".into(),
            "[110, 120, 130]".into(),
            "native-untagged".into()
        )
    );

    // A refused value never reaches the card.
    let before = ovs.dump();
    run(
        &lab,
        r#"{"op":"plug_port","device":"dpu-7","port":"pf0vf3;reboot","vif_id":"v","reason":"r"}"#,
    )
    .expect(65);
    // plug 3 (read, write, read back) + idempotent re-plug 1 + update 3: nothing more.
    assert_eq!(ovs.wrapper_log("vsctl").len(), 7);
    assert_eq!(ovs.dump(), before);

    run(
        &lab,
        r#"{"op":"unplug_port","device":"dpu-7","port":"pf0vf3","reason":"r"}"#,
    )
    .expect(0);
    assert!(!ovs.has_port("pf0vf3"));
    let v = run(
        &lab,
        r#"{"op":"unplug_port","device":"dpu-7","port":"pf0vf3","reason":"r"}"#,
    )
    .expect(0);
    assert_eq!(v["changed"], false, "{v}");
    assert_eq!(v["data"]["ports"][0]["absent"], true, "{v}");
}

#[test]
fn a_wrong_host_key_is_exit_77_and_nothing_runs() {
    let ovs = or_skip!(ovs_harness::start());
    let sshd = or_skip!(ovs_sshd::start());
    let other = sshd.dir.path().join("other_known_hosts");
    let key = std::fs::read_to_string(sshd.dir.path().join("client.pub")).unwrap();
    // Someone else's key (the client's) pinned for this host: a mismatch.
    std::fs::write(&other, format!("[127.0.0.1]:{} {key}", sshd.port)).unwrap();
    let wrapper = ovs.wrapper("vsctl", false);
    let lab = lab_over_ssh(
        &ovs,
        &sshd,
        Some(&other),
        &format!("ovs_vsctl = [\"{}\"]", wrapper.display()),
    );
    let v = run(
        &lab,
        r#"{"op":"plug_port","device":"dpu-7","port":"pf0vf3","vif_id":"v","reason":"r"}"#,
    )
    .expect(77);
    assert!(v["msg"].as_str().unwrap().contains("Host key"), "{v}");
    assert!(ovs.wrapper_log("vsctl").is_empty());
    assert!(!ovs.has_port("pf0vf3"));
}
