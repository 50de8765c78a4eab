//! End-to-end tests of the executor core against the real binaries: mercury driving
//! mercury-sim over the `command` transport. They assert the simulated switch's state, the
//! JSON contract, the audit log, locking and the exit codes of DESIGN §4.

mod common;

use std::time::{Duration, Instant};

use common::{mercury, set_mode, Lab, SimDevice};
use serde_json::Value;

const CONTRACT_KEYS: [&str; 13] = [
    "ok",
    "failed",
    "changed",
    "rc",
    "msg",
    "error_kind",
    "op",
    "device",
    "platform",
    "request_id",
    "elapsed_ms",
    "commands",
    "warnings",
];

fn assert_contract(v: &Value) {
    for k in CONTRACT_KEYS {
        assert!(v.get(k).is_some(), "result lacks {k}: {v}");
    }
    assert_eq!(v["ok"].as_bool(), Some(v["rc"] == 0), "{v}");
    assert_eq!(v["failed"].as_bool(), Some(v["rc"] != 0), "{v}");
}

fn three_platforms() -> Lab {
    Lab::new(&[
        SimDevice::new("leaf-ios", "cisco_ios"),
        SimDevice::new("leaf-junos", "juniper"),
        SimDevice::new("leaf-nvue", "cumulus_nvue"),
    ])
}

fn add_vlans(lab: &Lab, device: &str, vlans: &[&str]) {
    for v in vlans {
        lab.mercury([
            "add-network",
            "--device",
            device,
            "--vlan",
            v,
            "--reason",
            "test",
        ])
        .run()
        .expect(0);
    }
}

#[test]
fn attach_then_detach_on_cisco_ios_changes_switch_state() {
    let lab = three_platforms();
    add_vlans(&lab, "leaf-ios", &["10", "120"]);
    let r = lab.attach("leaf-ios", "Gi1/0/5", "120").run();
    let v = r.expect(0);
    assert_contract(&v);
    assert_eq!(v["changed"], true);
    assert_eq!(v["platform"], "cisco_ios");
    let port = lab.port("leaf-ios", "GigabitEthernet1/0/5");
    assert_eq!(
        (port["mode"].as_str(), port["access_vlan"].as_u64()),
        (Some("access"), Some(120)),
        "{port}"
    );
    // Saved: the startup config has it too.
    let saved = &lab.state("leaf-ios")["saved"]["ports"]["GigabitEthernet1/0/5"];
    assert_eq!(saved["access_vlan"], 120);

    lab.mercury([
        "detach-port",
        "--device",
        "leaf-ios",
        "--port",
        "Gi1/0/5",
        "--vlan",
        "120",
        "--reason",
        "CHG-2",
    ])
    .run()
    .expect(0);
    let port = lab.port("leaf-ios", "GigabitEthernet1/0/5");
    assert_eq!(port["access_vlan"], 10, "idle VLAN restored: {port}");
}

#[test]
fn attach_on_junos_commits_even_without_saving() {
    let lab = Lab::new(&[SimDevice {
        extra: "save_config = false",
        ..SimDevice::new("leaf-junos", "juniper")
    }]);
    add_vlans(&lab, "leaf-junos", &["10", "120"]);
    lab.attach("leaf-junos", "ge-0/0/5", "120").run().expect(0);
    let port = lab.port("leaf-junos", "ge-0/0/5");
    assert_eq!(port["access_vlan"], 120, "{port}");
    assert_eq!(port["mode"], "access", "{port}");
}

#[test]
fn attach_on_nvue_applies_and_saves() {
    let lab = three_platforms();
    add_vlans(&lab, "leaf-nvue", &["10", "120"]);
    let r = lab.attach("leaf-nvue", "swp5", "120").run();
    r.expect(0);
    let inputs = r.inputs();
    assert_eq!(
        inputs.last().map(String::as_str),
        Some("nv config save"),
        "{inputs:?}"
    );
    let state = lab.state("leaf-nvue");
    assert_eq!(
        state["running"]["ports"]["swp5"]["access_vlan"], 120,
        "{state}"
    );
    assert_eq!(state["saved"]["ports"]["swp5"]["access_vlan"], 120);
    assert!(state["pending"].is_null() || state["pending"]["ports"]["swp5"]["access_vlan"] == 120);
}

#[test]
fn trunk_update_sets_native_and_allowed_on_all_three() {
    let lab = three_platforms();
    for (dev, port, key) in [
        ("leaf-ios", "Gi1/0/7", "GigabitEthernet1/0/7"),
        ("leaf-junos", "ge-0/0/7", "ge-0/0/7"),
        ("leaf-nvue", "swp7", "swp7"),
    ] {
        add_vlans(&lab, dev, &["10", "100", "101", "102", "150"]);
        lab.mercury([
            "update-port",
            "--device",
            dev,
            "--port",
            port,
            "--mode",
            "trunk",
            "--native-vlan",
            "150",
            "--allowed-vlans",
            "100-102",
            "--reason",
            "r",
        ])
        .run()
        .expect(0);
        let p = lab.port(dev, key);
        assert_eq!(p["mode"], "trunk", "{dev}: {p}");
        assert_eq!(p["native_vlan"], 150, "{dev}: {p}");
        let allowed: Vec<u64> = p["allowed_vlans"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_u64)
            .collect();
        for v in [100, 101, 102] {
            assert!(allowed.contains(&v), "{dev}: {p}");
        }
    }
}

#[test]
fn batched_ports_run_in_one_session() {
    let lab = three_platforms();
    add_vlans(&lab, "leaf-ios", &["10", "120"]);
    let before = lab.state("leaf-ios")["sessions"]["total"]
        .as_u64()
        .unwrap_or(0);
    let req = r#"{"op":"attach_port","device":"leaf-ios","vlan":120,"reason":"batch",
                  "ports":["Gi1/0/1","Gi1/0/2","Gi1/0/3"]}"#;
    lab.mercury(["run"]).stdin(req).run().expect(0);
    let state = lab.state("leaf-ios");
    assert_eq!(state["sessions"]["total"].as_u64().unwrap_or(0), before + 1);
    for p in [
        "GigabitEthernet1/0/1",
        "GigabitEthernet1/0/2",
        "GigabitEthernet1/0/3",
    ] {
        assert_eq!(state["running"]["ports"][p]["access_vlan"], 120, "{p}");
    }
}

#[test]
fn dry_run_lists_exactly_what_a_live_run_sends_and_contacts_nothing() {
    let lab = Lab::new(&[
        SimDevice::new("leaf-ios", "cisco_ios"),
        SimDevice::new("leaf-junos", "juniper"),
        SimDevice::new("leaf-nvue", "cumulus_nvue"),
        SimDevice::new("leaf-eos", "arista_eos"),
    ]);
    for (dev, port) in [
        ("leaf-ios", "Gi1/0/9"),
        ("leaf-junos", "ge-0/0/9"),
        ("leaf-nvue", "swp9"),
        ("leaf-eos", "Ethernet9"),
    ] {
        add_vlans(&lab, dev, &["10", "120"]);
        // A dry run plans for a port that needs the change: one in the idle VLAN.
        lab.mercury([
            "reset-port",
            "--device",
            dev,
            "--port",
            port,
            "--reason",
            "idle",
        ])
        .run()
        .expect(0);
        let args = [
            "attach-port",
            "--device",
            dev,
            "--port",
            port,
            "--vlan",
            "120",
            "--reason",
            "r",
        ];
        let sessions = lab.state(dev)["sessions"]["total"].clone();
        let dry = lab.mercury(std::iter::once("--dry-run").chain(args)).run();
        let dv = dry.expect(0);
        assert_eq!(dv["dry_run"], true);
        assert_eq!(dv["changed"], false);
        assert_eq!(
            lab.state(dev)["sessions"]["total"],
            sessions,
            "{dev}: dry run contacted the device"
        );
        let live = lab.mercury(args).run();
        live.expect(0);
        assert_eq!(dry.inputs(), live.inputs(), "{dev}");
    }
}

#[test]
fn exit_1_when_the_device_rejects_a_line_and_nothing_is_saved() {
    let lab = Lab::new(&[SimDevice {
        sim_args: &["--fault", "reject=access vlan 120"],
        ..SimDevice::new("leaf-ios", "cisco_ios")
    }]);
    add_vlans(&lab, "leaf-ios", &["10", "120"]);
    let r = lab.attach("leaf-ios", "Gi1/0/5", "120").run();
    let v = r.expect(1);
    assert_contract(&v);
    assert_eq!(v["error_kind"], "device_rejected");
    assert!(
        v["msg"]
            .as_str()
            .unwrap()
            .contains("switchport access vlan 120"),
        "{v}"
    );
    let inputs = r.inputs();
    assert!(
        !inputs.iter().any(|l| l.starts_with("copy")),
        "saved after a failure: {inputs:?}"
    );
    // The accepted `switchport mode access` was undone, config mode was left, and the port
    // was read back to prove it.
    let last_config = inputs
        .iter()
        .rposition(|l| l == "configure terminal")
        .expect("configured");
    assert!(
        inputs[last_config..]
            .iter()
            .any(|l| l == "no switchport mode"),
        "not undone: {inputs:?}"
    );
    let end = inputs
        .iter()
        .rposition(|l| l == "end")
        .expect("left config mode");
    assert!(end > last_config, "left config mode: {inputs:?}");
    assert!(
        inputs[end + 1..].iter().all(|l| l.starts_with("show ")),
        "after leaving config mode only reads: {inputs:?}"
    );
    assert_eq!(v["changed"], false, "{v}");
    // The simulator keys ports by their full name (as in the test above).
    let port = lab.port("leaf-ios", "GigabitEthernet1/0/5");
    assert_ne!(port["mode"].as_str(), Some("access"), "not undone: {port}");
}

#[test]
fn exit_1_on_nvue_apply_failure_detaches_pending() {
    let lab = three_platforms();
    // VLAN 120 was never added to the bridge: apply fails, pending must be dropped.
    let r = lab.attach("leaf-nvue", "swp5", "120").run();
    r.expect(1);
    assert_eq!(
        r.inputs().last().map(String::as_str),
        Some("nv config detach")
    );
    let state = lab.state("leaf-nvue");
    assert!(
        state["pending"].is_null(),
        "pending left behind: {}",
        state["pending"]
    );
    assert!(state["running"]["ports"]["swp5"]["access_vlan"].is_null());
}

#[test]
fn exit_64_for_unknown_flags_and_verbs() {
    let lab = three_platforms();
    let v = lab.mercury(["attach-port", "--bogus"]).run().expect(64);
    assert_contract(&v);
    assert_eq!(v["error_kind"], "usage");
    lab.mercury(["reboot-switch"]).run().expect(64);
}

#[test]
fn exit_65_for_invalid_data_before_any_connection() {
    let lab = three_platforms();
    for args in [
        vec![
            "attach-port",
            "--device",
            "leaf-ios",
            "--port",
            "Gi1/0/5",
            "--vlan",
            "4095",
            "--reason",
            "r",
        ],
        vec![
            "attach-port",
            "--device",
            "leaf-ios",
            "--port",
            "Gi1/0/5;reload",
            "--vlan",
            "120",
            "--reason",
            "r",
        ],
        vec![
            "attach-port",
            "--device",
            "leaf-ios",
            "--port",
            "swp5",
            "--vlan",
            "120",
            "--reason",
            "r",
        ],
        vec![
            "attach-port",
            "--device",
            "nope",
            "--port",
            "Gi1/0/5",
            "--vlan",
            "120",
            "--reason",
            "r",
        ],
        vec![
            "attach-port",
            "--device",
            "leaf-ios",
            "--port",
            "Gi1/0/5",
            "--vlan",
            "120",
        ],
        vec![
            "plug-port",
            "--device",
            "leaf-ios",
            "--port",
            "Gi1/0/5",
            "--vif-id",
            "v1",
            "--reason",
            "r",
        ],
    ] {
        let v = lab.mercury(&args).run().expect(65);
        assert_contract(&v);
        assert_eq!(v["error_kind"], "invalid_request", "{args:?}");
    }
    for json in [
        r#"{"op":"attach_port","device":"leaf-ios","port":"Gi1/0/5","vlan":120,"reason":"r","extra":1}"#,
        r#"{"op":"attach_port","device":"leaf-ios","port":"Gi1/0/5","vlan":1.5,"reason":"r"}"#,
        r#"not json"#,
    ] {
        lab.mercury(["run"]).stdin(json).run().expect(65);
    }
    assert!(
        lab.transcript("leaf-ios").is_empty(),
        "the device was contacted"
    );
}

#[test]
fn exit_69_when_the_device_goes_away() {
    let lab = Lab::new(&[SimDevice {
        sim_args: &["--fault", "drop-after=4"],
        ..SimDevice::new("leaf-ios", "cisco_ios")
    }]);
    let v = lab.attach("leaf-ios", "Gi1/0/5", "120").run().expect(69);
    assert_eq!(v["error_kind"], "unreachable");
    assert!(
        v["msg"].as_str().unwrap().contains("connection closed"),
        "{v}"
    );
}

#[test]
fn exit_75_when_the_device_stops_answering_and_the_lock_is_released() {
    let lab = Lab::new(&[SimDevice {
        sim_args: &["--fault", "hang-after=3"],
        extra: "command_timeout = 1",
        ..SimDevice::new("leaf-ios", "cisco_ios")
    }]);
    let t = Instant::now();
    let v = lab.attach("leaf-ios", "Gi1/0/5", "120").run().expect(75);
    assert!(
        t.elapsed() < Duration::from_secs(15),
        "no hang past the deadline"
    );
    assert!(v["msg"].as_str().unwrap().contains("timed out"), "{v}");
    // The lock is free again: a dry run doesn't lock, so take it with a real request on
    // the same device and a zero lock wait.
    lab.append_config("");
    let lock = lab.path("locks/leaf-ios.lock");
    let f = std::fs::OpenOptions::new().write(true).open(&lock).unwrap();
    assert!(f.try_lock().is_ok(), "lock still held after the run");
}

#[test]
fn exit_75_when_another_process_holds_the_device_lock() {
    let lab = Lab::new(&[SimDevice {
        sim_args: &["--fault", "slow=300"],
        extra: "lock_timeout = 0.5",
        ..SimDevice::new("leaf-ios", "cisco_ios")
    }]);
    let first = lab
        .mercury([
            "attach-port",
            "--device",
            "leaf-ios",
            "--port",
            "Gi1/0/5",
            "--vlan",
            "120",
            "--reason",
            "first",
            "--request-id",
            "holder-1",
        ])
        .spawn();
    // Wait until the first process holds the lock (its holder info is in the file).
    let lock = lab.path("locks/leaf-ios.lock");
    let t = Instant::now();
    while !std::fs::read_to_string(&lock)
        .unwrap_or_default()
        .contains("holder-1")
    {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "first run never took the lock"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let second = lab.attach("leaf-ios", "Gi1/0/6", "120").run();
    let v = second.expect(75);
    assert_eq!(v["error_kind"], "temporary");
    let msg = v["msg"].as_str().unwrap();
    assert!(
        msg.contains("holder-1") && msg.contains("lock not acquired"),
        "{msg}"
    );
    let first = common::finish(first);
    first.expect(0);
}

#[test]
fn exit_76_on_an_unexpected_mode() {
    // A "device" that never leaves privileged mode: configure terminal gets the same prompt.
    let lab = Lab::new(&[]);
    let script = r#"printf 'sw1#'; while IFS= read -r l; do printf '%s\r\nsw1#' "$l"; done"#;
    lab.append_config(&format!(
        "[devices.odd]\nplatform = \"cisco_ios\"\ntransport = \"command\"\nargv = [\"sh\", \"-c\", {}]\n",
        serde_json::to_string(script).unwrap()
    ));
    let v = lab
        .mercury([
            "--no-verify",
            "attach-port",
            "--device",
            "odd",
            "--port",
            "Gi1/0/5",
            "--vlan",
            "120",
            "--reason",
            "r",
        ])
        .run()
        .expect(76);
    assert_eq!(v["error_kind"], "protocol");
    assert!(
        v["msg"].as_str().unwrap().contains("configure terminal"),
        "{v}"
    );
    // Read first (the default), the same device's answer to the show line is not output
    // the reader knows: also 76, naming the line, before any change.
    let v = lab.attach("odd", "Gi1/0/5", "120").run().expect(76);
    assert!(
        v["msg"].as_str().unwrap().contains("show running-config"),
        "{v}"
    );
}

#[test]
fn exit_77_when_policy_denies() {
    let lab = Lab::with_defaults(
        &[SimDevice {
            extra: "denied_ports = [\"Gi1/0/4*\"]\ndenied_vlans = [150]",
            ..SimDevice::new("leaf-ios", "cisco_ios")
        }],
        "default_vlan = 10\nallowed_vlans = [\"100-199\"]\n",
    );
    for (port, vlan, rule) in [
        ("Gi1/0/5", "300", "devices.leaf-ios.allowed_vlans"),
        ("Gi1/0/5", "150", "devices.leaf-ios.denied_vlans"),
        ("Gi1/0/48", "120", "devices.leaf-ios.denied_ports"),
    ] {
        let v = lab.attach("leaf-ios", port, vlan).run().expect(77);
        assert_eq!(v["error_kind"], "not_permitted");
        assert!(v["msg"].as_str().unwrap().contains(rule), "{v}");
    }
    lab.mercury([
        "add-network",
        "--device",
        "leaf-ios",
        "--vlan",
        "120",
        "--reason",
        "r",
    ])
    .run()
    .expect(77);
    assert!(lab.transcript("leaf-ios").is_empty());
}

#[test]
fn exit_78_for_bad_configuration_and_unsafe_modes() {
    let lab = three_platforms();
    // Unknown key, with its line.
    let good = std::fs::read_to_string(&lab.config).unwrap();
    lab.write_config(&format!("{good}\nbogus_key = 1\n"));
    let v = lab.mercury(["get-switches"]).run().expect(78);
    assert_eq!(v["error_kind"], "config");
    assert!(v["msg"].as_str().unwrap().contains("bogus_key"), "{v}");
    // Config writable by others.
    lab.write_config(&good);
    set_mode(&lab.config, 0o666);
    let v = lab.mercury(["get-switches"]).run().expect(78);
    assert!(
        v["msg"].as_str().unwrap().contains("unsafe permissions"),
        "{v}"
    );
    set_mode(&lab.config, 0o600);
    // A secret readable by others; its content never shows.
    let secret = lab.path("enable.secret");
    std::fs::write(&secret, "TopSecret123\n").unwrap();
    set_mode(&secret, 0o644);
    lab.append_config(&format!(
        "\n[devices.secretive]\nplatform = \"cisco_ios\"\ntransport = \"command\"\nargv = [\"true\"]\nenable_secret_file = \"{}\"\n",
        secret.display()
    ));
    let r = lab.attach("secretive", "Gi1/0/5", "120").run();
    let v = r.expect(78);
    assert!(
        v["msg"].as_str().unwrap().contains("group or others"),
        "{v}"
    );
    assert!(!r.stdout.contains("TopSecret123") && !r.stderr.contains("TopSecret123"));
    let check = lab.mercury(["check"]).run();
    check.expect(78);
    // Unknown platform.
    lab.write_config(&good.replace("platform = \"juniper\"", "platform = \"nosuch\""));
    lab.attach("leaf-junos", "ge-0/0/1", "120").run().expect(78);
}

#[test]
fn audit_has_started_and_finished_records_with_who_what_why_how() {
    let lab = three_platforms();
    add_vlans(&lab, "leaf-ios", &["10", "120"]);
    lab.mercury([
        "attach-port",
        "--device",
        "leaf-ios",
        "--port",
        "Gi1/0/5",
        "--vlan",
        "120",
        "--reason",
        "CHG-42",
        "--request-id",
        "req-42",
        "--node-uuid",
        "1be26c0b-03f2-4d2e-ae87-c02d7f33c123",
        "--lifecycle",
        "tenant",
    ])
    .run()
    .expect(0);
    let records: Vec<Value> = lab
        .audit()
        .into_iter()
        .filter(|r| r["request_id"] == "req-42")
        .collect();
    assert_eq!(records.len(), 2, "{records:#?}");
    let (started, finished) = (&records[0], &records[1]);
    assert_eq!(started["event"], "started");
    assert_eq!(finished["event"], "finished");
    assert!(started["ts"].as_str().unwrap().ends_with('Z'));
    assert_eq!(started["what"]["device"], "leaf-ios");
    // The audit names the port as the device does (the request said `Gi1/0/5`).
    assert_eq!(started["what"]["ports"][0], "GigabitEthernet1/0/5");
    assert_eq!(started["what"]["vlans"][0], 120);
    assert_eq!(started["why"]["reason"], "CHG-42");
    assert_eq!(started["why"]["lifecycle"], "tenant");
    // Who ran it: this test's own uid (the owner of a file it just wrote) and its name.
    let uid = {
        use std::os::unix::fs::MetadataExt;
        let probe = lab.path("uid-probe");
        std::fs::write(&probe, "").unwrap();
        std::fs::metadata(&probe).unwrap().uid()
    };
    assert_eq!(started["who"]["uid"], uid, "{started}");
    let name = std::process::Command::new("id")
        .arg("-un")
        .output()
        .unwrap();
    assert_eq!(
        started["who"]["unix_user"],
        String::from_utf8_lossy(&name.stdout).trim(),
        "{started}"
    );
    assert_eq!(finished["how"]["rc"], 0);
    assert_eq!(finished["how"]["outcome"], "ok");
    assert!(finished["how"]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .any(|l| l == "switchport access vlan 120"));

    // A denied request gets a finished record too, with its rule.
    lab.mercury([
        "attach-port",
        "--device",
        "leaf-ios",
        "--port",
        "Gi1/0/5",
        "--vlan",
        "999",
        "--reason",
        "r",
        "--request-id",
        "req-43",
    ])
    .run()
    .expect(77);
    let denied: Vec<Value> = lab
        .audit()
        .into_iter()
        .filter(|r| r["request_id"] == "req-43")
        .collect();
    assert_eq!(denied.len(), 1);
    assert_eq!(denied[0]["how"]["rc"], 77);
    assert_eq!(denied[0]["how"]["device_contacted"], false);
}

#[test]
fn unwritable_audit_log_refuses_the_change() {
    let lab = three_platforms();
    std::fs::create_dir(lab.path("audit.log")).unwrap(); // a directory cannot be appended to
    let v = lab.attach("leaf-ios", "Gi1/0/5", "120").run().expect(78);
    assert!(v["msg"].as_str().unwrap().contains("audit log"), "{v}");
    assert!(
        lab.transcript("leaf-ios").is_empty(),
        "device touched without an audit record"
    );
}

#[test]
fn serve_ssh_applies_caller_scope_and_refuses_injection() {
    let lab = three_platforms();
    lab.append_config(
        "\n[callers.conductor-a]\ndevices = [\"leaf-ios\"]\nallowed_vlans = [\"100-149\"]\n",
    );
    add_vlans(&lab, "leaf-ios", &["10", "120"]);
    let serve = |cmd: &str, stdin: &str| {
        lab.mercury(["serve-ssh", "--caller", "conductor-a"])
            .env("SSH_ORIGINAL_COMMAND", cmd)
            .env("SSH_CONNECTION", "192.0.2.50 40000 192.0.2.1 22")
            .stdin(stdin)
            .run()
    };
    serve("true", "").expect(0);
    // Flags form.
    serve(
        "attach-port --device leaf-ios --port Gi1/0/5 --vlan 120 --reason 'deploy node 7'",
        "",
    )
    .expect(0);
    assert_eq!(
        lab.port("leaf-ios", "GigabitEthernet1/0/5")["access_vlan"],
        120
    );
    // JSON on stdin.
    serve(
        "",
        r#"{"op":"attach_port","device":"leaf-ios","port":"Gi1/0/6","vlan":121,"reason":"r"}"#,
    )
    .expect(0);
    // Caller's own VLAN range narrows the device policy; other devices are out of scope.
    serve(
        "attach-port --device leaf-ios --port Gi1/0/5 --vlan 150 --reason r",
        "",
    )
    .expect(77);
    serve(
        "attach-port --device leaf-junos --port ge-0/0/5 --vlan 120 --reason r",
        "",
    )
    .expect(77);
    let before = lab.transcript("leaf-ios").len();
    for bad in [
        "attach-port --config /tmp/evil.toml --device leaf-ios --port Gi1/0/5 --vlan 120 --reason r",
        "attach-port --device leaf-ios --port Gi1/0/5 --vlan 120 --reason r; reboot",
        "attach-port --device leaf-ios --port 'Gi1/0/5\nreload' --vlan 120 --reason r",
        "run --request /etc/shadow",
        "check",
        "attach-port -v --device leaf-ios --port Gi1/0/5 --vlan 120 --reason r",
    ] {
        let v = serve(bad, "").expect(64);
        assert_eq!(v["error_kind"], "usage", "{bad}");
    }
    assert_eq!(
        lab.transcript("leaf-ios").len(),
        before,
        "an injection attempt reached the device"
    );
    // The audit names the caller and the SSH client.
    let rec = lab
        .audit()
        .into_iter()
        .find(|r| r["who"]["caller"] == "conductor-a")
        .expect("caller audited");
    assert_eq!(rec["who"]["ssh_client"], "192.0.2.50");
    // An unknown caller is refused.
    lab.mercury(["serve-ssh", "--caller", "nobody"])
        .env("SSH_ORIGINAL_COMMAND", "get-switches")
        .run()
        .expect(77);
}

#[test]
fn queries_answer_without_contacting_devices() {
    let lab = three_platforms();
    lab.append_config("");
    let v = lab.mercury(["get-switches"]).run().expect(0);
    assert_eq!(v["data"]["switches"].as_array().unwrap().len(), 3);
    assert!(!v.to_string().contains("secret"));
    let v = lab
        .mercury(["get-allowed-network-types", "--device", "leaf-nvue"])
        .run()
        .expect(0);
    assert_eq!(v["data"]["network_types"][0], "vlan");
    let v = lab
        .mercury(["is-link-valid", "--device", "leaf-ios", "--port", "Gi1/0/5"])
        .run()
        .expect(0);
    assert_eq!(v["data"]["valid"], true);
    let v = lab
        .mercury(["is-link-valid", "--device", "nope", "--port", "Gi1/0/5"])
        .run()
        .expect(0);
    assert_eq!(v["data"]["valid"], false);
    let v = lab
        .mercury(["is-port-supported", "--vnic-type", "baremetal"])
        .run()
        .expect(0);
    assert_eq!(v["data"]["supported"], true);
    let v = lab
        .mercury([
            "is-port-supported",
            "--vnic-type",
            "smart-nic",
            "--is-smartnic",
            "--device",
            "leaf-ios",
        ])
        .run()
        .expect(0);
    assert_eq!(v["data"]["supported"], false);
    for d in ["leaf-ios", "leaf-junos", "leaf-nvue"] {
        assert!(lab.transcript(d).is_empty());
    }
}

#[test]
fn ironic_local_link_connection_resolves_by_switch_id() {
    let lab = Lab::new(&[SimDevice {
        extra: "mac = \"02:00:00:00:01:01\"",
        ..SimDevice::new("leaf-ios", "cisco_ios")
    }]);
    add_vlans(&lab, "leaf-ios", &["10", "120"]);
    let req = r#"{"op":"attach_port","local_link_connection":{"switch_id":"02:00:00:00:01:01","port_id":"Gi1/0/8","switch_info":null},
                  "vlan":"vlan-120","reason":"deploy","node_uuid":"1be26c0b-03f2-4d2e-ae87-c02d7f33c123","lifecycle":"provisioning"}"#;
    let v = lab.mercury(["run"]).stdin(req).run().expect(0);
    assert_eq!(v["device"], "leaf-ios");
    assert_eq!(
        lab.port("leaf-ios", "GigabitEthernet1/0/8")["access_vlan"],
        120
    );
}

#[test]
fn text_format_is_for_people() {
    let lab = three_platforms();
    let r = lab
        .mercury([
            "--format",
            "text",
            "--dry-run",
            "attach-port",
            "--device",
            "leaf-ios",
            "--port",
            "Gi1/0/5",
            "--vlan",
            "120",
            "--reason",
            "r",
        ])
        .run();
    assert_eq!(r.code, 0);
    assert!(
        r.stdout
            .starts_with("planned: attach_port on leaf-ios (cisco_ios)"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("> switchport access vlan 120"));
}

#[test]
fn version_and_health() {
    let r = mercury(["--version"]).run();
    assert_eq!(r.code, 0);
    assert!(r.stdout.starts_with("mercury "), "{}", r.stdout);
}

#[test]
fn check_passes_on_a_sound_configuration() {
    let lab = three_platforms();
    let v = lab.mercury(["check"]).run().expect(0);
    assert!(v["msg"].as_str().unwrap().contains("3 devices"), "{v}");
    assert_eq!(v["data"]["problems"].as_array().map(Vec::len), Some(0));
    let v = lab.mercury(["check", "--catalog"]).run().expect(0);
    assert!(v["data"]["platforms"].as_array().unwrap().len() >= 3);
}

#[test]
fn completions_cover_the_verbs() {
    let r = mercury(["completions", "bash"]).run();
    assert_eq!(r.code, 0);
    for verb in ["attach-port", "update-lag", "serve-ssh", "--dry-run"] {
        assert!(
            r.stdout.contains(verb),
            "{verb} missing from bash completions"
        );
    }
}

#[test]
fn diagnostics_go_to_stderr_and_stdout_stays_one_object() {
    let lab = three_platforms();
    add_vlans(&lab, "leaf-ios", &["10", "120"]);
    let r = lab
        .mercury([
            "-vv",
            "attach-port",
            "--device",
            "leaf-ios",
            "--port",
            "Gi1/0/5",
            "--vlan",
            "120",
            "--reason",
            "r",
        ])
        .run();
    r.expect(0);
    assert!(
        r.stderr.contains("send \"switchport access vlan 120\""),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("lock slot 0"), "{}", r.stderr);
}

#[test]
fn ngs_style_switch_info_falls_back_to_switch_id_and_disagreement_is_refused() {
    let lab = Lab::new(&[
        SimDevice {
            extra: "mac = \"02:00:00:00:01:01\"",
            ..SimDevice::new("leaf-ios", "cisco_ios")
        },
        SimDevice {
            extra: "mac = \"02:00:00:00:01:02\"",
            ..SimDevice::new("leaf-junos", "juniper")
        },
    ]);
    let req = |info: &str| {
        format!(
            r#"{{"op":"is_link_valid","local_link_connection":{{"switch_id":"02:00:00:00:01:01","port_id":"Gi1/0/8","switch_info":"{info}"}}}}"#
        )
    };
    // An NGS [genericswitch:...] name Mercury does not know: the MAC decides.
    let v = lab
        .mercury(["run"])
        .stdin(&req("tor-a-ngs"))
        .run()
        .expect(0);
    assert_eq!(v["device"], "leaf-ios");
    assert_eq!(v["data"]["valid"], true);
    // A name that resolves to another device than the MAC: refused.
    let v = lab
        .mercury(["run"])
        .stdin(&req("leaf-junos"))
        .run()
        .expect(0);
    assert_eq!(v["data"]["valid"], false);
    assert!(v["msg"].as_str().unwrap().contains("disagrees"), "{v}");
}

/// `[networks.NAME]` maps a network name to one VLAN: a request (an Ironic VIF id such as
/// `tenant-a`) may give the name where a VLAN goes, and policy sees the id. An unknown name,
/// or a name next to a different VLAN, is refused before anything is sent.
#[test]
fn network_names_from_the_config_stand_for_their_vlan() {
    let lab = Lab::new(&[SimDevice::new("leaf-ios", "cisco_ios")]);
    lab.append_config("\n[networks.tenant-a]\nvlan = 120\n\n[networks.outside]\nvlan = 300\n");
    add_vlans(&lab, "leaf-ios", &["10", "120"]);
    let run = |json: &str| lab.mercury(["run"]).stdin(json).run();
    let v = run(
        r#"{"op":"update_port","device":"leaf-ios","ports":[{"port":"Gi1/0/5","mode":"access","network":"tenant-a"}],"reason":"vif tenant-a"}"#,
    )
    .expect(0);
    assert_eq!(v["changed"], true, "{v}");
    assert_eq!(
        lab.port("leaf-ios", "GigabitEthernet1/0/5")["access_vlan"],
        120
    );
    let v = run(
        r#"{"op":"detach_port","device":"leaf-ios","port":"Gi1/0/5","network":"tenant-a","reason":"vif tenant-a"}"#,
    )
    .expect(0);
    assert_eq!(v["changed"], true, "{v}");
    assert_eq!(
        lab.port("leaf-ios", "GigabitEthernet1/0/5")["access_vlan"],
        10
    );
    let sent = lab.transcript("leaf-ios").len();
    let v = run(
        r#"{"op":"attach_port","device":"leaf-ios","port":"Gi1/0/5","network":"tenant-b","reason":"r"}"#,
    )
    .expect(65);
    assert!(
        v["msg"]
            .as_str()
            .unwrap()
            .contains("unknown network \"tenant-b\""),
        "{v}"
    );
    let v = run(
        r#"{"op":"attach_port","device":"leaf-ios","port":"Gi1/0/5","network":"tenant-a","vlan":121,"reason":"r"}"#,
    )
    .expect(65);
    assert!(
        v["msg"].as_str().unwrap().contains("is VLAN 120, not 121"),
        "{v}"
    );
    // A name does not get around policy: outside is VLAN 300, which no device allows.
    let v = run(
        r#"{"op":"attach_port","device":"leaf-ios","port":"Gi1/0/5","network":"outside","reason":"r"}"#,
    )
    .expect(77);
    assert!(v["msg"].as_str().unwrap().contains("VLAN 300"), "{v}");
    assert_eq!(
        lab.transcript("leaf-ios").len(),
        sent,
        "a refused request reached the switch"
    );
}
