//! The DPU path end to end (docs/ovs.md, "Two hops"): a card (`dpu-1`, the `ovs` platform on
//! a real ovsdb-server + ovs-vswitchd, see `common/ovs.rs`) whose `uplink` is a port of a
//! simulated Cisco IOS switch (`leaf`, `mercury-sim`). Every step asserts both devices'
//! state — the simulator's state file and OVSDB read with the harness's own ovs-vsctl — not
//! only exit codes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
#[path = "common/ovs.rs"]
mod ovs_harness;

use common::{Lab, Ran, SimDevice};
use serde_json::Value;

const UPLINK: &str = "GigabitEthernet1/0/5";
const NODE_A: &str = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123";
const NODE_B: &str = "2ce37d1c-14a3-4e3f-bf98-d13e8a44d234";

macro_rules! ovs_or_skip {
    () => {
        match ovs_harness::start() {
            Some(o) => o,
            None => return,
        }
    };
}

/// The switch `leaf` (VLANs 120 and 130 created) and the card `dpu-1` behind its
/// `GigabitEthernet1/0/5`. `card_extra` goes into the card's table, `callers` at the end.
fn lab(ovs: &ovs_harness::Ovs, card_extra: &str, callers: &str) -> Lab {
    lab_with(ovs, &[], card_extra, callers)
}

fn lab_with(ovs: &ovs_harness::Ovs, sim_args: &[&str], card_extra: &str, callers: &str) -> Lab {
    let lab = Lab::new(&[SimDevice {
        name: "leaf",
        platform: "cisco_ios",
        sim_args,
        extra: "",
    }]);
    lab.append_config(&format!(
        "\n[devices.dpu-1]\nplatform = \"ovs\"\ntransport = \"local\"\novs_db = \"{}\"\n\
         uplink = {{ device = \"leaf\", port = \"{UPLINK}\" }}\n{card_extra}\n{callers}\n",
        ovs.db()
    ));
    for vlan in ["120", "130"] {
        lab.mercury([
            "add-network",
            "--device",
            "leaf",
            "--vlan",
            vlan,
            "--reason",
            "test",
        ])
        .run()
        .expect(0);
    }
    lab
}

fn plug(lab: &Lab, port: &str, vif: &str, vlan: u16, node: &str) -> Ran {
    lab.mercury(["--format", "json", "run"])
        .stdin(&format!(
            r#"{{"op":"plug_port","device":"dpu-1","port":"{port}","vif_id":"{vif}","mac":"52:54:00:12:34:56","node_uuid":"{node}","vlan":{vlan},"reason":"test"}}"#
        ))
        .run()
}

fn unplug(lab: &Lab, port: &str) -> Ran {
    unplug_with(lab, &[], port)
}

/// `unplug-port` of `port` on the card, after the global flags `pre` (`--check`, ...).
fn unplug_with(lab: &Lab, pre: &[&str], port: &str) -> Ran {
    let mut argv = pre.to_vec();
    argv.extend([
        "unplug-port",
        "--device",
        "dpu-1",
        "--port",
        port,
        "--reason",
        "test",
    ]);
    lab.mercury(argv).run()
}

/// `plug-port pf0vf1` (VIF `vif-a`, VLAN 120) on the card from the command line, after the
/// global flag `pre` (`--dry-run`, `--check`).
fn plug_flagged(lab: &Lab, pre: &str) -> Ran {
    lab.mercury([
        pre,
        "plug-port",
        "--device",
        "dpu-1",
        "--port",
        "pf0vf1",
        "--vif-id",
        "vif-a",
        "--vlan",
        "120",
        "--reason",
        "test",
    ])
    .run()
}

/// Whether a list of lines (a hop's `lines`) has one containing `needle`.
fn lists(list: &Value, needle: &str) -> bool {
    list.as_array()
        .unwrap()
        .iter()
        .any(|l| l.as_str().unwrap().contains(needle))
}

/// The uplink as the simulator keeps it: (mode, allowed VLANs).
fn uplink(lab: &Lab) -> (String, Vec<u64>) {
    let p = lab.port("leaf", UPLINK);
    (
        p["mode"].as_str().unwrap_or_default().to_string(),
        p["allowed_vlans"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default(),
    )
}

/// Makes the uplink a trunk carrying `vlans` (what another host behind the card uses).
fn trunk(lab: &Lab, vlans: &str) {
    lab.mercury([
        "update-port",
        "--device",
        "leaf",
        "--port",
        UPLINK,
        "--mode",
        "trunk",
        "--allowed-vlans",
        vlans,
        "--reason",
        "test",
    ])
    .run()
    .expect(0);
}

fn hop<'v>(v: &'v Value, name: &str) -> &'v Value {
    v["data"]["hops"]
        .as_array()
        .and_then(|h| h.iter().find(|h| h["hop"] == name))
        .unwrap_or_else(|| panic!("no {name} hop: {v}"))
}

#[test]
fn two_servers_behind_one_card_share_the_uplink_vlan_until_the_last_unplug() {
    let ovs = ovs_or_skip!();
    let lab = lab(&ovs, "", "");
    // The uplink is a trunk another host behind the card uses (VLAN 110).
    trunk(&lab, "110");
    let v = plug(&lab, "pf0vf1", "vif-a", 120, NODE_A).expect(0);
    assert_eq!(v["changed"], true, "{v}");
    assert_eq!(v["device"], "dpu-1", "{v}");
    assert_eq!(uplink(&lab), ("trunk".into(), vec![110, 120]), "{v}");
    assert_eq!(ovs.bridge_of("pf0vf1"), "br-int");
    assert_eq!(ovs.get("Port", "pf0vf1", "tag"), "120");
    assert_eq!(ovs.iface_id("pf0vf1", "iface-id").as_deref(), Some("vif-a"));
    assert_eq!(hop(&v, "uplink")["changed"], true, "{v}");
    assert_eq!(hop(&v, "card")["changed"], true, "{v}");
    // The card read first (nothing written), then the switch lines, then the card's write.
    let inputs: Vec<&str> = v["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["input"].as_str().unwrap())
        .collect();
    let is_card = |c: &&str| c.contains("ovs-vsctl");
    assert!(
        is_card(&inputs[0]) && inputs[0].contains("--format=json"),
        "{v}"
    );
    let card_write = inputs
        .iter()
        .position(|c| is_card(c) && c.contains("add-port"))
        .unwrap();
    let switch_add = inputs
        .iter()
        .position(|c| *c == "switchport trunk allowed vlan add 120")
        .unwrap();
    assert!(switch_add < card_write, "{v}");
    // One audit pair per device.
    let audit = lab.audit();
    let mine: Vec<&Value> = audit
        .iter()
        .filter(|r| r["request_id"] == v["request_id"])
        .collect();
    let count = |event: &str, device: &str| {
        mine.iter()
            .filter(|r| r["event"] == event && r["what"]["device"] == device)
            .count()
    };
    assert_eq!(count("started", "leaf"), 1, "{mine:?}");
    assert_eq!(count("started", "dpu-1"), 1, "{mine:?}");
    assert_eq!(count("finished", "leaf"), 1, "{mine:?}");
    assert_eq!(count("finished", "dpu-1"), 1, "{mine:?}");
    assert_eq!(mine.len(), 4, "{mine:?}");

    // Server B behind the same card, same VLAN: the uplink already carries it.
    let v = plug(&lab, "pf0vf2", "vif-b", 120, NODE_B).expect(0);
    assert_eq!(hop(&v, "uplink")["changed"], false, "{v}");
    assert_eq!(hop(&v, "card")["changed"], true, "{v}");
    assert_eq!(uplink(&lab), ("trunk".into(), vec![110, 120]));
    assert_eq!(ovs.get("Port", "pf0vf2", "tag"), "120");

    // A unplugged: B still uses VLAN 120, so the uplink keeps it.
    let v = unplug(&lab, "pf0vf1").expect(0);
    assert!(!ovs.has_port("pf0vf1"), "{v}");
    assert!(ovs.has_port("pf0vf2"));
    assert_eq!(uplink(&lab), ("trunk".into(), vec![110, 120]), "{v}");
    let up = hop(&v, "uplink");
    assert!(
        up["skipped"].as_str().unwrap().contains("still used"),
        "{v}"
    );
    assert!(
        !lab.audit()
            .iter()
            .any(|r| r["request_id"] == v["request_id"] && r["what"]["device"] == "leaf"),
        "the switch was not contacted, so it has no audit record"
    );

    // B unplugged: nobody uses VLAN 120 any more, so it comes off the uplink.
    let v = unplug(&lab, "pf0vf2").expect(0);
    assert!(!ovs.has_port("pf0vf2"));
    assert_eq!(uplink(&lab), ("trunk".into(), vec![110]), "{v}");
    assert_eq!(hop(&v, "uplink")["changed"], true, "{v}");
    assert_eq!(hop(&v, "uplink")["vlans"], serde_json::json!([120]), "{v}");
}

#[test]
fn an_access_uplink_becomes_a_trunk_of_exactly_the_vlan_plugged() {
    let ovs = ovs_or_skip!();
    let lab = lab(&ovs, "", "");
    let v = plug(&lab, "pf0vf1", "vif-a", 120, NODE_A).expect(0);
    assert_eq!(
        uplink(&lab),
        ("trunk".into(), vec![120]),
        "never every VLAN: {v}"
    );
    assert_eq!(ovs.get("Port", "pf0vf1", "tag"), "120");
}

#[test]
fn a_second_server_on_another_vlan_adds_it_beside_the_vlans_others_use() {
    let ovs = ovs_or_skip!();
    let lab = lab(&ovs, "", "");
    // Another host behind the card already uses VLAN 110 on the uplink.
    trunk(&lab, "110");
    plug(&lab, "pf0vf1", "vif-a", 120, NODE_A).expect(0);
    assert_eq!(uplink(&lab), ("trunk".into(), vec![110, 120]));
    plug(&lab, "pf0vf2", "vif-b", 130, NODE_B).expect(0);
    assert_eq!(uplink(&lab), ("trunk".into(), vec![110, 120, 130]));
    assert_eq!(ovs.get("Port", "pf0vf2", "tag"), "130");
    // Unplugging A takes off only its own VLAN.
    unplug(&lab, "pf0vf1").expect(0);
    assert_eq!(uplink(&lab), ("trunk".into(), vec![110, 130]));
    unplug(&lab, "pf0vf2").expect(0);
    assert_eq!(uplink(&lab), ("trunk".into(), vec![110]));
    assert!(!ovs.has_port("pf0vf1") && !ovs.has_port("pf0vf2"));
}

#[test]
fn a_replug_with_another_vlan_moves_the_uplink_to_it_unless_another_port_keeps_the_old_one() {
    let ovs = ovs_or_skip!();
    let lab = lab(&ovs, "", "");
    trunk(&lab, "110");
    // Provisioning network, then the tenant network: a re-plug, no unplug between.
    plug(&lab, "pf0vf1", "vif-a", 120, NODE_A).expect(0);
    assert_eq!(uplink(&lab), ("trunk".into(), vec![110, 120]));
    let v = plug(&lab, "pf0vf1", "vif-a", 130, NODE_A).expect(0);
    assert_eq!(ovs.get("Port", "pf0vf1", "tag"), "130");
    assert_eq!(uplink(&lab), ("trunk".into(), vec![110, 130]), "{v}");
    assert_eq!(
        hop(&v, "uplink")["released"],
        serde_json::json!([120]),
        "{v}"
    );
    // With B on 130 too, A moving back to 120 leaves 130 where B needs it.
    plug(&lab, "pf0vf2", "vif-b", 130, NODE_B).expect(0);
    let v = plug(&lab, "pf0vf1", "vif-a", 120, NODE_A).expect(0);
    assert_eq!(uplink(&lab), ("trunk".into(), vec![110, 120, 130]), "{v}");
    assert_eq!(hop(&v, "uplink")["released"], serde_json::json!([]), "{v}");
}

#[test]
fn a_bridge_the_policy_refuses_is_refused_before_either_device_is_contacted() {
    let ovs = ovs_or_skip!();
    let lab = lab(&ovs, "", "");
    let before_switch = lab.state("leaf");
    let before_card = ovs.dump();
    let sent = lab.transcript("leaf").len();
    let v = lab
        .mercury(["--format", "json", "run"])
        .stdin(r#"{"op":"plug_port","device":"dpu-1","port":"pf0vf1","vif_id":"vif-a","vlan":120,"bridge":"br-ex","reason":"test"}"#)
        .run()
        .expect(77);
    assert_eq!(v["changed"], false, "{v}");
    assert_eq!(
        lab.transcript("leaf").len(),
        sent,
        "nothing sent to the switch"
    );
    assert_eq!(lab.state("leaf"), before_switch);
    assert_eq!(ovs.dump(), before_card);
}

#[test]
fn a_card_failure_after_the_switch_hop_restores_the_switch_port_exactly() {
    let ovs = ovs_or_skip!();
    let wrapper = ovs.wrapper("vsctl-fail", true);
    let lab = lab(
        &ovs,
        &format!("ovs_vsctl = [\"{}\"]", wrapper.display()),
        "",
    );
    // An access port (the card's first VLAN would make it a trunk), then a trunk other
    // hosts behind the card use: both come back as they were.
    for setup in ["access", "trunk"] {
        if setup == "trunk" {
            trunk(&lab, "110");
        } else {
            lab.attach("leaf", UPLINK, "10").run().expect(0);
        }
        let before_port = lab.port("leaf", UPLINK);
        let before_card = ovs.dump();
        let v = plug(&lab, "pf0vf1", "vif-a", 120, NODE_A).expect(1);
        let after_port = lab.port("leaf", UPLINK);
        if setup == "trunk" {
            // Exactly, to the configuration.
            assert_eq!(after_port, before_port, "{setup}: {v}");
        } else {
            // Exactly what the port does: an access port in its VLAN again. (The trunk list
            // set for the card stays in the configuration, inactive, as on any port that
            // leaves trunk mode.)
            for k in [
                "mode",
                "access_vlan",
                "native_vlan",
                "admin_up",
                "description",
            ] {
                assert_eq!(after_port[k], before_port[k], "{setup} {k}: {v}");
            }
        }
        assert_eq!(
            ovs.dump(),
            before_card,
            "{setup}: nothing committed on the card"
        );
        assert_eq!(
            v["changed"], true,
            "{setup}: lines took effect on the switch: {v}"
        );
        assert!(
            v.get("partial").is_none(),
            "{setup}: nothing stays in effect: {v}"
        );
        let up = hop(&v, "uplink");
        assert_eq!(up["restore"]["ok"], true, "{setup}: {v}");
        assert_eq!(up["restore"]["read_back_as_before"], true, "{setup}: {v}");
        let msg = v["msg"].as_str().unwrap();
        assert!(msg.contains("restored"), "{setup}: {msg}");
        assert!(
            msg.contains("no row"),
            "{setup}: the card's own error: {msg}"
        );
        assert_eq!(hop(&v, "card")["ok"], false, "{v}");
        // The switch's audit record says what was done and undone.
        let audit = lab.audit();
        let done = audit
            .iter()
            .find(|r| {
                r["request_id"] == v["request_id"]
                    && r["event"] == "finished"
                    && r["what"]["device"] == "leaf"
            })
            .unwrap();
        assert_eq!(done["how"]["restore"]["ok"], true, "{done}");
    }
}

/// The card is read before the switch hop: a plug the card's state refuses — a
/// representor plugged for another node, a port another agent manages, a bridge that does
/// not exist — sends nothing to the switch (its transcript, state and audit log stay as
/// they were) and writes nothing on the card.
#[test]
fn a_plug_the_card_refuses_when_read_sends_nothing_to_the_switch() {
    let ovs = ovs_or_skip!();
    let lab = lab(&ovs, "bridges = [\"br-int\", \"br-gone\"]", "");
    trunk(&lab, "110");
    plug(&lab, "pf0vf1", "vif-a", 120, NODE_A).expect(0);
    ovs.add_port("br-int", "pf0vf7");
    let cases: [(&str, &str, &str); 3] = [
        (
            r#""port":"pf0vf1","node_uuid":"2ce37d1c-14a3-4e3f-bf98-d13e8a44d234""#,
            "is plugged for node 1be26c0b",
            "another node's representor",
        ),
        (
            r#""port":"pf0vf7","node_uuid":"2ce37d1c-14a3-4e3f-bf98-d13e8a44d234""#,
            "was not plugged by Mercury",
            "another agent's port",
        ),
        (
            r#""port":"pf0vf2","bridge":"br-gone""#,
            "bridge br-gone does not exist",
            "a missing bridge",
        ),
    ];
    for (fields, why, case) in cases {
        let before_switch = lab.state("leaf");
        let before_card = ovs.dump();
        let sent = lab.transcript("leaf").len();
        let v = lab
            .mercury(["--format", "json", "run"])
            .stdin(&format!(
                r#"{{"op":"plug_port","device":"dpu-1",{fields},"vif_id":"vif-b","vlan":130,"reason":"test"}}"#
            ))
            .run()
            .expect(1);
        assert_eq!(
            lab.transcript("leaf").len(),
            sent,
            "{case}: nothing sent to the switch: {v}"
        );
        assert_eq!(lab.state("leaf"), before_switch, "{case}");
        assert_eq!(uplink(&lab), ("trunk".into(), vec![110, 120]), "{case}");
        assert_eq!(
            ovs.dump(),
            before_card,
            "{case}: nothing written on the card"
        );
        assert_eq!(v["changed"], false, "{case}: {v}");
        let msg = v["msg"].as_str().unwrap();
        assert!(msg.contains(why), "{case}: {msg}");
        assert!(
            msg.contains("nothing was sent to the switch leaf"),
            "{case}: {msg}"
        );
        assert!(
            hop(&v, "uplink")["skipped"]
                .as_str()
                .unwrap()
                .contains("before the switch was touched"),
            "{case}: {v}"
        );
        assert!(
            !lab.audit()
                .iter()
                .any(|r| r["request_id"] == v["request_id"] && r["what"]["device"] == "leaf"),
            "{case}: the switch was not contacted, so it has no audit record"
        );
    }
    // Nor may another node's request unplug it (a failed step's clean-up on a node that
    // names the same representor): the card refuses, the switch is not contacted.
    let sent = lab.transcript("leaf").len();
    let v = lab
        .mercury(["--format", "json", "run"])
        .stdin(&format!(
            r#"{{"op":"unplug_port","device":"dpu-1","port":"pf0vf1","node_uuid":"{NODE_B}","reason":"test"}}"#
        ))
        .run()
        .expect(1);
    assert!(ovs.has_port("pf0vf1"), "{v}");
    assert!(
        v["msg"]
            .as_str()
            .unwrap()
            .contains("is plugged for node 1be26c0b"),
        "{v}"
    );
    assert_eq!(lab.transcript("leaf").len(), sent, "{v}");
    assert_eq!(uplink(&lab), ("trunk".into(), vec![110, 120]));
    // The representor's own node may plug it again (a re-plug).
    plug(&lab, "pf0vf1", "vif-a2", 120, NODE_A).expect(0);
    assert_eq!(
        ovs.iface_id("pf0vf1", "iface-id").as_deref(),
        Some("vif-a2")
    );
}

#[test]
fn a_switch_that_refuses_the_uplink_change_leaves_the_card_untouched_and_says_so_on_unplug() {
    let ovs = ovs_or_skip!();
    let lab = lab_with(
        &ovs,
        &[
            "--fault",
            "reject=allowed vlan add 130",
            "--fault",
            "reject=allowed vlan remove 120",
        ],
        "",
        "",
    );
    trunk(&lab, "110");
    // Plug: the switch refuses; the card is never contacted.
    let before_port = lab.port("leaf", UPLINK);
    let before_card = ovs.dump();
    let v = plug(&lab, "pf0vf2", "vif-b", 130, NODE_B).expect(1);
    assert_eq!(lab.port("leaf", UPLINK), before_port, "{v}");
    assert_eq!(ovs.dump(), before_card, "{v}");
    assert!(
        v["msg"]
            .as_str()
            .unwrap()
            .contains("the card dpu-1 was not changed (read only)"),
        "{v}"
    );
    // The card was read before the switch hop, and never written.
    let card_lines = hop(&v, "card")["lines"].as_array().unwrap().clone();
    assert_eq!(card_lines.len(), 1, "{v}");
    assert!(
        card_lines[0].as_str().unwrap().contains("--format=json"),
        "{v}"
    );
    // Unplug: the card is unplugged, then the switch refuses to take the VLAN off; the
    // message says what is left and how to finish it.
    plug(&lab, "pf0vf1", "vif-a", 120, NODE_A).expect(0);
    assert_eq!(uplink(&lab), ("trunk".into(), vec![110, 120]));
    let v = unplug(&lab, "pf0vf1").expect(1);
    assert!(!ovs.has_port("pf0vf1"), "{v}");
    assert_eq!(uplink(&lab), ("trunk".into(), vec![110, 120]), "{v}");
    let msg = v["msg"].as_str().unwrap();
    assert!(
        msg.contains("the representor was unplugged from dpu-1"),
        "{msg}"
    );
    assert!(msg.contains("detach-port --device leaf"), "{msg}");
    assert_eq!(v["changed"], true, "{v}");
}

#[test]
fn a_caller_not_allowed_the_vlan_on_the_switch_is_refused_with_nothing_sent() {
    let ovs = ovs_or_skip!();
    let lab = lab(
        &ovs,
        "",
        "[callers.conductor]\ndevices = [\"dpu-1\", \"leaf\"]\n\
         [callers.cardonly]\ndevices = [\"dpu-1\"]\n",
    );
    // The switch allows only VLAN 10 and 100-119 for this test.
    let text = std::fs::read_to_string(lab.path("mercury.toml")).unwrap();
    lab.write_config(&text.replace(
        "[devices.leaf]",
        "[devices.leaf]\nallowed_vlans = [\"10\", \"100-119\"]",
    ));
    let before_switch = lab.state("leaf");
    let before_card = ovs.dump();
    let sent = lab.transcript("leaf").len();
    let ssh = |caller: &str, cmd: &str| {
        lab.mercury(["serve-ssh", "--caller", caller])
            .env("SSH_ORIGINAL_COMMAND", cmd)
            .run()
    };
    let plug_cmd = "plug-port --device dpu-1 --port pf0vf1 --vif-id vif-a --vlan 120 --reason test";
    let v = ssh("conductor", plug_cmd).expect(77);
    assert!(
        v["msg"]
            .as_str()
            .unwrap()
            .contains("devices.leaf.allowed_vlans"),
        "{v}"
    );
    // A caller without the switch device may not take the two-hop path at all.
    let v = ssh("cardonly", plug_cmd).expect(77);
    assert!(v["msg"].as_str().unwrap().contains("uplink"), "{v}");
    assert_eq!(lab.transcript("leaf").len(), sent);
    assert_eq!(lab.state("leaf"), before_switch);
    assert_eq!(ovs.dump(), before_card);
    // card_only: the old behaviour, the card alone.
    ssh(
        "cardonly",
        "plug-port --device dpu-1 --port pf0vf1 --vif-id vif-a --vlan 110 --card-only --reason test",
    )
    .expect(0);
    assert_eq!(ovs.get("Port", "pf0vf1", "tag"), "110");
    assert_eq!(lab.state("leaf"), before_switch);
}

#[test]
fn two_concurrent_plugs_behind_one_card_both_succeed() {
    let ovs = ovs_or_skip!();
    let lab = lab(&ovs, "", "");
    trunk(&lab, "110");
    let a = lab
        .mercury(["--format", "json", "run"])
        .stdin(&format!(
            r#"{{"op":"plug_port","device":"dpu-1","port":"pf0vf1","vif_id":"vif-a","node_uuid":"{NODE_A}","vlan":120,"reason":"test"}}"#
        ))
        .spawn();
    let b = lab
        .mercury(["--format", "json", "run"])
        .stdin(&format!(
            r#"{{"op":"plug_port","device":"dpu-1","port":"pf0vf2","vif_id":"vif-b","node_uuid":"{NODE_B}","vlan":130,"reason":"test"}}"#
        ))
        .spawn();
    let (a, b) = (common::finish(a), common::finish(b));
    a.expect(0);
    b.expect(0);
    assert_eq!(uplink(&lab), ("trunk".into(), vec![110, 120, 130]));
    assert_eq!(ovs.get("Port", "pf0vf1", "tag"), "120");
    assert_eq!(ovs.get("Port", "pf0vf2", "tag"), "130");
    // And both unplugs at once: each takes only its own VLAN off.
    let a = unplug_spawn(&lab, "pf0vf1");
    let b = unplug_spawn(&lab, "pf0vf2");
    common::finish(a).expect(0);
    common::finish(b).expect(0);
    assert_eq!(uplink(&lab), ("trunk".into(), vec![110]));
    assert!(!ovs.has_port("pf0vf1") && !ovs.has_port("pf0vf2"));
}

fn unplug_spawn(lab: &Lab, port: &str) -> std::process::Child {
    lab.mercury([
        "unplug-port",
        "--device",
        "dpu-1",
        "--port",
        port,
        "--reason",
        "test",
    ])
    .spawn()
}

#[test]
fn dry_run_shows_both_hops_and_touches_neither() {
    let ovs = ovs_or_skip!();
    let lab = lab(&ovs, "", "");
    let before_switch = lab.state("leaf");
    let before_card = ovs.dump();
    let v = plug_flagged(&lab, "--dry-run").expect(0);
    assert!(lists(&hop(&v, "uplink")["lines"], "allowed vlan"), "{v}");
    assert!(
        lists(&hop(&v, "card")["lines"], "add-port br-int pf0vf1"),
        "{v}"
    );
    assert_eq!(lab.state("leaf"), before_switch);
    assert_eq!(ovs.dump(), before_card);
}

#[test]
fn check_mode_reads_both_devices_predicts_both_hops_and_sends_nothing() {
    let ovs = ovs_or_skip!();
    let lab = lab(&ovs, "", "");
    trunk(&lab, "110");
    let before_switch = lab.state("leaf")["running"].clone();
    let before_card = ovs.dump();
    let v = plug_flagged(&lab, "--check").expect(0);
    assert_eq!(v["changed"], true, "a prediction: {v}");
    for name in ["uplink", "card"] {
        let h = hop(&v, name);
        assert_eq!(h["check"], true, "{v}");
        assert_eq!(h["changed"], true, "{name} would change: {v}");
        assert!(
            !h["data"]["would_send"].as_array().unwrap().is_empty(),
            "{name}: {v}"
        );
    }
    let would_send = hop(&v, "uplink")["data"]["would_send"].as_array().unwrap();
    assert!(
        would_send
            .iter()
            .any(|l| l == "switchport trunk allowed vlan add 120"),
        "{v}"
    );
    assert_eq!(lab.state("leaf")["running"], before_switch);
    assert_eq!(ovs.dump(), before_card);
    // Audit: a pair per device, saying it was a check and nothing changed.
    let audit = lab.audit();
    let finished: Vec<&Value> = audit
        .iter()
        .filter(|r| r["request_id"] == v["request_id"] && r["event"] == "finished")
        .collect();
    assert_eq!(finished.len(), 2, "{finished:?}");
    for r in finished {
        assert_eq!(r["how"]["changed"], false, "{r}");
        assert_eq!(r["how"]["would_change"], true, "{r}");
    }
    // Unplug in check mode after a real plug: the card is read, the uplink's VLAN is
    // predicted to come off (nobody else uses it), nothing is sent.
    plug(&lab, "pf0vf1", "vif-a", 120, NODE_A).expect(0);
    let before_switch = lab.state("leaf")["running"].clone();
    let before_card = ovs.dump();
    let v = unplug_with(&lab, &["--check"], "pf0vf1").expect(0);
    assert_eq!(hop(&v, "uplink")["vlans"], serde_json::json!([120]), "{v}");
    assert_eq!(hop(&v, "uplink")["changed"], true, "{v}");
    assert_eq!(lab.state("leaf")["running"], before_switch);
    assert_eq!(ovs.dump(), before_card);
}

#[test]
fn an_uplink_that_is_not_a_switch_port_is_a_configuration_error() {
    let ovs = ovs_or_skip!();
    for (uplink, words) in [
        (
            r#"{ device = "nope", port = "Gi1/0/5" }"#,
            "names no [devices] table",
        ),
        (
            r#"{ device = "dpu-1", port = "Gi1/0/5" }"#,
            "its own uplink",
        ),
        (r#"{ device = "leaf", port = "pf0vf3" }"#, "invalid port"),
        (
            r#"{ device = "dpu-2", port = "pf0vf3" }"#,
            "itself an OVS device",
        ),
    ] {
        let lab = Lab::new(&[SimDevice::new("leaf", "cisco_ios")]);
        lab.append_config(&format!(
            "\n[devices.dpu-1]\nplatform = \"ovs\"\ntransport = \"local\"\novs_db = \"{}\"\nuplink = {uplink}\n\
             [devices.dpu-2]\nplatform = \"ovs\"\ntransport = \"local\"\n",
            ovs.db()
        ));
        let v = lab
            .mercury(["get-allowed-network-types", "--device", "leaf"])
            .run()
            .expect(78);
        assert!(v["msg"].as_str().unwrap().contains(words), "{uplink}: {v}");
        assert!(
            v["msg"].as_str().unwrap().contains("devices.dpu-1.uplink"),
            "{v}"
        );
    }
}

/// `is_link_valid` answers what a link resolved to, canonically, and a card's uplink: what
/// the Ironic interface compares a DPU child node's switch link with (docs/ironic.md).
#[test]
fn is_link_valid_names_the_cards_uplink_and_a_switch_links_canonical_port() {
    let ovs = ovs_or_skip!();
    let lab = lab(&ovs, "aliases = [\"dpu-1.dc1\"]", "");
    let ask = |llc: &str| {
        lab.mercury(["--format", "json", "run"])
            .stdin(&format!(
                r#"{{"op":"is_link_valid","local_link_connection":{llc}}}"#
            ))
            .run()
            .expect(0)
    };
    let v = ask(r#"{"hostname":"dpu-1.dc1","port_id":"pf0vf3"}"#);
    assert_eq!(v["data"]["valid"], true, "{v}");
    assert_eq!(v["data"]["device"], "dpu-1", "{v}");
    assert_eq!(
        v["data"]["uplink"],
        serde_json::json!({"device": "leaf", "port": UPLINK}),
        "{v}"
    );
    let v = ask(r#"{"switch_info":"leaf","port_id":"Gi1/0/5"}"#);
    assert_eq!(v["data"]["device"], "leaf", "{v}");
    assert_eq!(v["data"]["ports"], serde_json::json!([UPLINK]), "{v}");
    assert_eq!(v["data"]["uplink"], Value::Null, "{v}");
    let v = ask(r#"{"hostname":"dpu-9","port_id":"pf0vf3"}"#);
    assert_eq!(v["data"]["valid"], false, "{v}");
    assert!(v["data"].get("uplink").is_none(), "{v}");
}
