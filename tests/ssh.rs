//! End-to-end tests of the `ssh` transport against a real OpenSSH sshd on 127.0.0.1, with
//! `mercury-sim` behind every login (`ForceCommand`). They assert the simulated switch's
//! state after successful runs (once its sessions have ended: behind sshd they end after
//! Mercury has gone), and the stage and exit code of every failure.

mod common;

use std::time::{Duration, Instant};

use common::sshd::{Sshd, SshdOptions};
use common::Lab;
use serde_json::Value;

fn attach(lab: &Lab, device: &str, port: &str, vlan: &str) -> common::Ran {
    lab.mercury([
        "attach-port",
        "--device",
        device,
        "--port",
        port,
        "--vlan",
        vlan,
        "--reason",
        "CHG-ssh",
    ])
    .run()
}

fn add_vlan(lab: &Lab, device: &str, vlan: &str) {
    lab.mercury([
        "add-network",
        "--device",
        device,
        "--vlan",
        vlan,
        "--reason",
        "test",
    ])
    .run()
    .expect(0);
}

fn msg(v: &Value) -> String {
    v["msg"].as_str().unwrap_or_default().to_string()
}

/// A lab with one IOS device behind its own sshd, reached with an ed25519 key and the
/// pinned host key.
fn ios_lab(sim_extra: &[&str], device_extra: &str) -> (Lab, Sshd) {
    let lab = Lab::new(&[]);
    let sshd = lab.sshd_for("leaf", "cisco_ios", sim_extra, SshdOptions::default());
    let key = sshd.user_key("id_ed25519", "ed25519", "");
    lab.add_key_device("leaf", "cisco_ios", &sshd, &key, device_extra);
    (lab, sshd)
}

fn assert_access_vlan(lab: &Lab, device: &str, port: &str, vlan: u64) {
    let p = lab.settled_port(device, port);
    assert_eq!(
        (p["mode"].as_str(), p["access_vlan"].as_u64()),
        (Some("access"), Some(vlan)),
        "{port}: {p}"
    );
}

#[test]
fn attach_over_ssh_with_an_ed25519_key_and_pinned_host_key() {
    require_sshd!();
    let (lab, _sshd) = ios_lab(&[], "");
    add_vlan(&lab, "leaf", "120");
    let r = attach(&lab, "leaf", "Gi1/0/5", "120");
    let v = r.expect(0);
    assert_eq!(v["changed"], true, "{v}");
    assert_access_vlan(&lab, "leaf", "GigabitEthernet1/0/5", 120);
    let saved = &lab.settled_state("leaf")["saved"]["ports"]["GigabitEthernet1/0/5"];
    assert_eq!(saved["access_vlan"], 120, "saved: {saved}");
    // Over a PTY the tty echoes; the session still finds every prompt.
    let sent = lab.transcript("leaf");
    assert!(
        sent.iter().any(|l| l == "switchport access vlan 120"),
        "{sent:?}"
    );
    assert_eq!(v["warnings"], serde_json::json!([]), "{v}");
}

/// Behind sshd the simulator runs on a PTY, whose kernel echo would echo typed-ahead
/// lines as they arrive; it switches that off and echoes each line as it reads it, as IOS
/// does, so Mercury's pipelined reads work over a real PTY: the setup lines and the two
/// show lines of the before-read each reach the device typed ahead (not waited for), the
/// interface block's body after its first line and its `exit` too (issue 18: the
/// `interface` line itself is waited for), and the after-read travels with `end`.
#[test]
fn typed_ahead_reads_over_a_pty_cost_one_round_trip() {
    require_sshd!();
    let (lab, _sshd) = ios_lab(&[], "");
    add_vlan(&lab, "leaf", "120");
    let v = attach(&lab, "leaf", "Gi1/0/5", "120").expect(0);
    assert_eq!(v["changed"], true, "{v}");
    assert_access_vlan(&lab, "leaf", "GigabitEthernet1/0/5", 120);
    let outputs: Vec<(&str, &str)> = v["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["input"].as_str().unwrap(), c["output"].as_str().unwrap()))
        .collect();
    let vlan_table = outputs
        .iter()
        .find(|(i, _)| *i == "show vlan brief")
        .unwrap();
    assert!(vlan_table.1.contains("VLAN Name"), "{outputs:?}");
    assert!(!vlan_table.1.contains("interface"), "{outputs:?}");
    let text = std::fs::read_to_string(lab.path("leaf.transcript")).unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let last_session = records.last().unwrap()["session"].clone();
    let waited: Vec<(String, bool)> = records
        .iter()
        .filter(|r| r["session"] == last_session)
        .map(|r| (r["line"].as_str().unwrap().to_string(), r["waited"] == true))
        .collect();
    let ahead: Vec<&str> = waited
        .iter()
        .filter(|(_, w)| !w)
        .map(|(l, _)| l.as_str())
        .collect();
    assert_eq!(
        ahead,
        [
            "terminal width 511",
            "show vlan brief",
            "switchport access vlan 120",
            "exit",
            "show running-config interface GigabitEthernet1/0/5"
        ],
        "{waited:?}"
    );
    let waits = waited.iter().filter(|(_, w)| *w).count() as u64;
    assert!(
        v["round_trips"].as_u64().unwrap().abs_diff(waits) <= 1,
        "{v} {waited:?}"
    );
}

#[test]
fn ecdsa_and_rsa_keys_authenticate() {
    require_sshd!();
    let lab = Lab::new(&[]);
    let sshd = lab.sshd_for("leaf", "cisco_ios", &[], SshdOptions::default());
    for (i, kind) in ["ecdsa", "rsa"].iter().enumerate() {
        let key = sshd.user_key(&format!("id_{kind}"), kind, "");
        let name = format!("leaf-{kind}");
        lab.add_key_device(&name, "cisco_ios", &sshd, &key, "");
        // Both devices share the one simulated switch ("leaf") behind this sshd.
        let vlan = format!("{}", 120 + i);
        add_vlan(&lab, &name, &vlan);
        attach(&lab, &name, "Gi1/0/5", &vlan).expect(0);
        assert_access_vlan(&lab, "leaf", "GigabitEthernet1/0/5", 120 + i as u64);
    }
}

#[test]
fn encrypted_key_with_a_passphrase_file() {
    require_sshd!();
    let lab = Lab::new(&[]);
    let sshd = lab.sshd_for("leaf", "cisco_ios", &[], SshdOptions::default());
    let key = sshd.user_key("id_enc", "ed25519", "correct horse");
    let good = lab.secret("passphrase", "correct horse");
    let bad = lab.secret("wrong-passphrase", "battery staple");
    for (name, pass) in [("leaf", &good), ("leaf-bad", &bad)] {
        lab.add_ssh_device(
            name,
            "cisco_ios",
            &sshd,
            &format!(
                "username = \"root\"\nkey_file = \"{}\"\npassphrase_file = \"{}\"\nhost_key = \"{}\"\n",
                key.display(),
                pass.display(),
                sshd.fingerprint
            ),
        );
    }
    add_vlan(&lab, "leaf", "120");
    attach(&lab, "leaf", "Gi1/0/5", "120").expect(0);
    assert_access_vlan(&lab, "leaf", "GigabitEthernet1/0/5", 120);
    // A passphrase that does not open the key is a local configuration problem.
    let v = attach(&lab, "leaf-bad", "Gi1/0/5", "120").expect(78);
    assert!(msg(&v).contains("passphrase_file"), "{v}");
    assert!(!msg(&v).contains("battery"), "secret in message: {v}");
}

/// A key login asks the server nothing before it offers the key: the `none` request that
/// lists the server's methods is a round trip of its own (issue 18), asked only when the key
/// did not do. Counted from sshd's own log of the authentication requests it received.
#[test]
fn a_key_login_sends_no_request_before_the_key() {
    require_sshd!();
    let lab = Lab::new(&[]);
    let opts = SshdOptions {
        extra: "LogLevel DEBUG1\n".into(),
        ..SshdOptions::default()
    };
    let sshd = lab.sshd_for("leaf", "cisco_ios", &[], opts);
    let key = sshd.user_key("id_ed25519", "ed25519", "");
    lab.add_key_device("leaf", "cisco_ios", &sshd, &key, "");
    add_vlan(&lab, "leaf", "120");
    let log = sshd.log();
    let methods: Vec<&str> = log
        .lines()
        .filter_map(|l| {
            l.split("userauth-request for user root service ssh-connection method ")
                .nth(1)
        })
        .map(|rest| rest.split_whitespace().next().unwrap_or(""))
        .collect();
    assert!(
        !methods.is_empty(),
        "sshd logged no authentication request:\n{log}"
    );
    assert!(methods.iter().all(|m| *m == "publickey"), "{methods:?}");
}

#[test]
fn a_key_the_server_does_not_accept_is_77_naming_the_methods() {
    require_sshd!();
    let (lab, sshd) = ios_lab(&[], "");
    // A key that is not in authorized_keys.
    let stranger = sshd.dir.path().join("stranger");
    common::sshd::keygen(&stranger, "ed25519", "");
    common::set_mode(&stranger, 0o600);
    lab.add_key_device("leaf-stranger", "cisco_ios", &sshd, &stranger, "");
    let v = attach(&lab, "leaf-stranger", "Gi1/0/5", "120").expect(77);
    let m = msg(&v);
    assert!(m.starts_with("authentication as root@127.0.0.1:"), "{m}");
    // The key was refused, and the methods were asked for after it to say what the server
    // accepts.
    assert!(
        m.contains(&format!("tried publickey ({} refused)", stranger.display())),
        "{m}"
    );
    assert!(m.contains("the server accepts publickey"), "{m}");
    assert!(lab.transcript("leaf").is_empty(), "the device was reached");
}

/// A lab whose sshd allows password and keyboard-interactive logins (PAM) for the test
/// user; `extra` are sshd_config lines.
fn password_lab(extra: &str, password: &str) -> Option<(Lab, Sshd)> {
    let lab = Lab::new(&[]);
    let sshd = lab.sshd_for(
        "leaf",
        "cisco_ios",
        &[],
        SshdOptions {
            passwords: true,
            extra: extra.into(),
            ..SshdOptions::default()
        },
    );
    let pw = lab.secret("password", password);
    lab.add_ssh_device(
        "leaf",
        "cisco_ios",
        &sshd,
        &format!(
            "username = \"{}\"\npassword_file = \"{}\"\nhost_key = \"{}\"\n",
            common::sshd::PASSWORD_USER,
            pw.display(),
            sshd.fingerprint
        ),
    );
    Some((lab, sshd))
}

#[test]
fn password_login() {
    require_sshd!();
    let password = common::sshd::ensure_password_user();
    let (lab, _sshd) = password_lab("KbdInteractiveAuthentication no", &password).expect("lab");
    add_vlan(&lab, "leaf", "120");
    let r = attach(&lab, "leaf", "Gi1/0/5", "120");
    let v = r.expect(0);
    assert!(!r.stdout.contains(&password), "password in the result");
    assert_access_vlan(&lab, "leaf", "GigabitEthernet1/0/5", 120);
    assert_eq!(v["changed"], true);
}

#[test]
fn keyboard_interactive_login_answers_the_password_prompt() {
    require_sshd!();
    let password = common::sshd::ensure_password_user();
    let (lab, sshd) = password_lab("PasswordAuthentication no", &password).expect("lab");
    add_vlan(&lab, "leaf", "120");
    attach(&lab, "leaf", "Gi1/0/5", "120").expect(0);
    assert_access_vlan(&lab, "leaf", "GigabitEthernet1/0/5", 120);
    assert!(
        sshd.log().contains("Accepted keyboard-interactive"),
        "{}",
        sshd.log()
    );
}

#[test]
fn wrong_password_is_77() {
    require_sshd!();
    common::sshd::ensure_password_user();
    // One method only: every refused PAM attempt costs pam_unix's ~2 s failure delay.
    let (lab, _sshd) =
        password_lab("KbdInteractiveAuthentication no", "not-the-password").expect("lab");
    let r = attach(&lab, "leaf", "Gi1/0/5", "120");
    let v = r.expect(77);
    let m = msg(&v);
    assert!(m.starts_with("authentication as mercury-sshtest@"), "{m}");
    assert!(m.contains("password"), "{m}");
    assert!(
        !r.stdout.contains("not-the-password"),
        "password shown: {v}"
    );
    assert_eq!(v["error_kind"], "not_permitted");
}

/// A fingerprint that belongs to no server of the test.
fn stranger_fingerprint(lab: &Lab) -> String {
    let p = lab.path("stranger_host_key");
    common::sshd::keygen(&p, "ed25519", "");
    common::sshd::fingerprint_of(&p.with_extension("pub"))
}

#[test]
fn pinned_host_key_mismatch_is_77_with_both_fingerprints_and_no_credentials_sent() {
    require_sshd!();
    let lab = Lab::new(&[]);
    let sshd = lab.sshd_for("leaf", "cisco_ios", &[], SshdOptions::default());
    let key = sshd.user_key("id_ed25519", "ed25519", "");
    let wrong = stranger_fingerprint(&lab);
    lab.add_ssh_device(
        "leaf",
        "cisco_ios",
        &sshd,
        &format!(
            "username = \"root\"\nkey_file = \"{}\"\nhost_key = \"{wrong}\"\n",
            key.display()
        ),
    );
    let v = attach(&lab, "leaf", "Gi1/0/5", "120").expect(77);
    let m = msg(&v);
    assert!(
        m.starts_with(&format!("host key of 127.0.0.1:{}", sshd.port)),
        "{m}"
    );
    assert!(
        m.contains(&sshd.fingerprint) && m.contains(&wrong),
        "both fingerprints: {m}"
    );
    assert!(!sshd.log().contains("Accepted"), "authenticated anyway");
    assert!(lab.transcript("leaf").is_empty());
}

#[test]
fn known_hosts_plain_hashed_and_port_forms() {
    require_sshd!();
    let lab = Lab::new(&[]);
    let sshd = lab.sshd_for("leaf", "cisco_ios", &[], SshdOptions::default());
    let key = sshd.user_key("id_ed25519", "ed25519", "");
    let device = |name: &str, file: &str| {
        lab.add_ssh_device(
            name,
            "cisco_ios",
            &sshd,
            &format!(
                "username = \"root\"\nkey_file = \"{}\"\nknown_hosts = \"{file}\"\n",
                key.display()
            ),
        )
    };
    // Unknown: an empty file, and a line for the host on port 22 only.
    std::fs::write(lab.path("empty"), "").unwrap();
    std::fs::write(
        lab.path("port22"),
        format!("127.0.0.1 {}\n", sshd.host_public),
    )
    .unwrap();
    std::fs::write(lab.path("plain"), sshd.known_hosts_line()).unwrap();
    sshd.add_hashed_known_host(&lab.path("hashed"));
    for (name, file) in [
        ("d-empty", "empty"),
        ("d-port22", "port22"),
        ("d-missing", "no-such-file"),
        ("d-plain", "plain"),
        ("d-hashed", "hashed"),
    ] {
        device(name, file);
    }
    add_vlan(&lab, "d-plain", "120");
    for name in ["d-empty", "d-port22", "d-missing"] {
        let v = attach(&lab, name, "Gi1/0/5", "120").expect(77);
        let m = msg(&v);
        assert!(m.contains(&sshd.fingerprint), "{m}");
        assert!(
            m.contains(&format!("has no key for [127.0.0.1]:{}", sshd.port)),
            "{m}"
        );
    }
    attach(&lab, "d-plain", "Gi1/0/5", "120").expect(0);
    attach(&lab, "d-hashed", "Gi1/0/6", "120").expect(0);
    assert_access_vlan(&lab, "leaf", "GigabitEthernet1/0/5", 120);
    assert_access_vlan(&lab, "leaf", "GigabitEthernet1/0/6", 120);
}

#[test]
fn a_changed_key_in_known_hosts_is_77_listing_the_known_key() {
    require_sshd!();
    let lab = Lab::new(&[]);
    let sshd = lab.sshd_for("leaf", "cisco_ios", &[], SshdOptions::default());
    let key = sshd.user_key("id_ed25519", "ed25519", "");
    let other = lab.path("stranger_host_key");
    common::sshd::keygen(&other, "ed25519", "");
    let other_public = std::fs::read_to_string(other.with_extension("pub")).unwrap();
    let other_fp = common::sshd::fingerprint_of(&other.with_extension("pub"));
    std::fs::write(
        lab.path("known_hosts"),
        format!("[127.0.0.1]:{} {other_public}", sshd.port),
    )
    .unwrap();
    lab.add_ssh_device(
        "leaf",
        "cisco_ios",
        &sshd,
        &format!(
            "username = \"root\"\nkey_file = \"{}\"\nknown_hosts = \"known_hosts\"\nhost_key = \"trust-on-first-use\"\n",
            key.display()
        ),
    );
    // Even with trust-on-first-use, a changed key is refused.
    let v = attach(&lab, "leaf", "Gi1/0/5", "120").expect(77);
    let m = msg(&v);
    assert!(m.contains(&sshd.fingerprint), "{m}");
    assert!(m.contains(&format!("{other_fp} (line 1)")), "{m}");
    let after = std::fs::read_to_string(lab.path("known_hosts")).unwrap();
    assert_eq!(after.lines().count(), 1, "known_hosts changed: {after}");
}

#[test]
fn trust_on_first_use_learns_once_says_so_and_then_enforces() {
    require_sshd!();
    let lab = Lab::new(&[]);
    let sshd = lab.sshd_for("leaf", "cisco_ios", &[], SshdOptions::default());
    let key = sshd.user_key("id_ed25519", "ed25519", "");
    lab.add_ssh_device(
        "leaf",
        "cisco_ios",
        &sshd,
        &format!(
            "username = \"root\"\nkey_file = \"{}\"\nknown_hosts = \"known_hosts\"\nhost_key = \"trust-on-first-use\"\n",
            key.display()
        ),
    );
    let v = lab
        .mercury([
            "add-network",
            "--device",
            "leaf",
            "--vlan",
            "120",
            "--reason",
            "r",
        ])
        .run()
        .expect(0);
    let warnings = v["warnings"].as_array().cloned().unwrap_or_default();
    assert_eq!(warnings.len(), 1, "{v}");
    let w = warnings[0].as_str().unwrap();
    assert!(
        w.contains("trust-on-first-use") && w.contains(&sshd.fingerprint),
        "{w}"
    );
    let learned = std::fs::read_to_string(lab.path("known_hosts")).unwrap();
    assert!(
        learned.starts_with(sshd.known_hosts_line().trim_end()),
        "{learned}"
    );
    // The audit record says so too.
    let finished = lab
        .audit()
        .into_iter()
        .rfind(|r| r["event"] == "finished")
        .unwrap();
    assert_eq!(finished["how"]["warnings"][0], w, "{finished}");

    // Known now: no warning, nothing written.
    let v = attach(&lab, "leaf", "Gi1/0/5", "120").expect(0);
    assert_eq!(v["warnings"], serde_json::json!([]), "{v}");
    assert_eq!(
        std::fs::read_to_string(lab.path("known_hosts")).unwrap(),
        learned
    );
    assert_access_vlan(&lab, "leaf", "GigabitEthernet1/0/5", 120);
}

#[test]
fn connection_refused_is_69_naming_the_tcp_stage() {
    let lab = Lab::new(&[]);
    let port = lab.add_unreachable_ssh_device("gone", &stranger_fingerprint(&lab));
    let v = attach(&lab, "gone", "Gi1/0/5", "120").expect(69);
    let m = msg(&v);
    assert!(
        m.starts_with(&format!("TCP connect to 127.0.0.1:{port}")),
        "{m}"
    );
    assert_eq!(v["error_kind"], "unreachable");
}

#[test]
fn a_port_that_accepts_tcp_but_never_speaks_ssh_is_69_within_connect_timeout() {
    let lab = Lab::new(&[]);
    let key = lab.path("id_ed25519");
    common::sshd::keygen(&key, "ed25519", "");
    common::set_mode(&key, 0o600);
    let port = common::sshd::silent_listener();
    lab.append_config(&format!(
        "\n[devices.mute]\nplatform = \"cisco_ios\"\naddress = \"127.0.0.1\"\nport = {port}\nusername = \"root\"\nkey_file = \"{}\"\nhost_key = \"{}\"\nconnect_timeout = 1\n",
        key.display(),
        stranger_fingerprint(&lab)
    ));
    let started = Instant::now();
    let v = attach(&lab, "mute", "Gi1/0/5", "120").expect(69);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "not bounded by connect_timeout"
    );
    let m = msg(&v);
    assert!(
        m.starts_with(&format!("SSH handshake with 127.0.0.1:{port}")),
        "{m}"
    );
    assert!(m.contains("did not speak SSH"), "{m}");
}

#[test]
fn device_that_drops_the_connection_mid_config_is_69() {
    require_sshd!();
    let (lab, _sshd) = ios_lab(&["--fault", "drop-after=4"], "");
    let v = attach(&lab, "leaf", "Gi1/0/5", "120").expect(69);
    let m = msg(&v);
    assert!(m.contains("connection closed by the device"), "{m}");
    assert!(m.contains("may be partly applied"), "{m}");
}

#[test]
fn device_that_stops_answering_is_75_within_the_deadline_and_the_lock_is_released() {
    require_sshd!();
    let (lab, _sshd) = ios_lab(&["--fault", "hang-after=3"], "command_timeout = 1\n");
    let started = Instant::now();
    let v = attach(&lab, "leaf", "Gi1/0/5", "120").expect(75);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "no hang past the deadline"
    );
    let m = msg(&v);
    assert!(m.contains("timed out after"), "{m}");
    assert!(m.contains("waiting for the prompt after"), "{m}");
    let lock = lab.path("locks/leaf.lock");
    let f = std::fs::OpenOptions::new().write(true).open(&lock).unwrap();
    assert!(f.try_lock().is_ok(), "lock still held after the run");
}

#[test]
fn device_error_marker_is_1_and_the_abort_ran() {
    require_sshd!();
    let lab = Lab::new(&[]);
    let sshd = lab.sshd_for(
        "leaf",
        "juniper",
        &["--fault", "reject=vlan members 120"],
        SshdOptions::default(),
    );
    let key = sshd.user_key("id_ed25519", "ed25519", "");
    lab.add_key_device("leaf", "juniper", &sshd, &key, "");
    add_vlan(&lab, "leaf", "120");
    let r = attach(&lab, "leaf", "ge-0/0/5", "120");
    let v = r.expect(1);
    assert_eq!(v["error_kind"], "device_rejected");
    assert!(msg(&v).contains("vlan members 120"), "{v}");
    let inputs = r.inputs();
    assert!(
        inputs.iter().any(|l| l == "rollback 0"),
        "abort did not run: {inputs:?}"
    );
    assert!(!inputs.iter().any(|l| l == "commit"), "{inputs:?}");
    let port = lab.settled_port("leaf", "ge-0/0/5");
    assert_ne!(port["access_vlan"], 120, "{port}");
}

#[test]
fn exec_platform_over_ssh_judges_each_command_by_exit_status() {
    require_sshd!();
    let lab = Lab::new(&[]);
    let sshd = lab.sshd_for("leaf", "cumulus_nvue", &[], SshdOptions::default());
    let key = sshd.user_key("id_ed25519", "ed25519", "");
    lab.add_key_device("leaf", "cumulus_nvue", &sshd, &key, "");
    add_vlan(&lab, "leaf", "120");
    let r = attach(&lab, "leaf", "swp5", "120");
    r.expect(0);
    assert_eq!(
        r.inputs().last().map(String::as_str),
        Some("nv config save")
    );
    let state = lab.settled_state("leaf");
    assert_eq!(
        state["running"]["ports"]["swp5"]["access_vlan"], 120,
        "{state}"
    );

    // VLAN 130 is not in the bridge: the apply fails with a non-zero exit status, the
    // pending change is detached.
    let r = attach(&lab, "leaf", "swp6", "130");
    let v = r.expect(1);
    assert!(msg(&v).contains("exit status"), "{v}");
    assert_eq!(
        r.inputs().last().map(String::as_str),
        Some("nv config detach")
    );
    let state = lab.settled_state("leaf");
    assert!(state["pending"].is_null(), "{}", state["pending"]);
    assert!(state["running"]["ports"]["swp6"]["access_vlan"].is_null());
}

#[test]
fn jump_host_tunnels_to_the_device() {
    require_sshd!();
    let lab = Lab::new(&[]);
    let device = lab.sshd_for("leaf", "cisco_ios", &[], SshdOptions::default());
    let key = device.user_key("id_ed25519", "ed25519", "");
    let bastion = Sshd::start(&SshdOptions {
        forwarding: true,
        force_command: Some(vec!["/bin/false".into()]),
        ..SshdOptions::default()
    });
    bastion.authorize(&key);
    let closed = Sshd::start(&SshdOptions::default());
    closed.authorize(&key);
    let via = |name: &str, jump: &Sshd, jump_key: &str| {
        lab.add_ssh_device(
            name,
            "cisco_ios",
            &device,
            &format!(
                "username = \"root\"\nkey_file = \"{}\"\nhost_key = \"{}\"\nproxy_jump = \"root@127.0.0.1:{}\"\nproxy_jump_host_key = \"{jump_key}\"\n",
                key.display(),
                device.fingerprint,
                jump.port
            ),
        )
    };
    via("leaf", &bastion, &bastion.fingerprint);
    via("leaf-no-forwarding", &closed, &closed.fingerprint);
    via("leaf-wrong-bastion", &bastion, &stranger_fingerprint(&lab));

    add_vlan(&lab, "leaf", "120");
    attach(&lab, "leaf", "Gi1/0/5", "120").expect(0);
    assert_access_vlan(&lab, "leaf", "GigabitEthernet1/0/5", 120);
    assert!(
        bastion.log().contains("Accepted publickey for root"),
        "{}",
        bastion.log()
    );

    let v = attach(&lab, "leaf-no-forwarding", "Gi1/0/6", "120").expect(69);
    let m = msg(&v);
    assert!(
        m.starts_with(&format!(
            "tunnel through jump host 127.0.0.1:{}",
            closed.port
        )),
        "{m}"
    );

    // The bastion connects, but what answers behind it never speaks SSH.
    let mute = common::sshd::silent_listener();
    lab.append_config(&format!(
        "\n[devices.leaf-mute]\nplatform = \"cisco_ios\"\naddress = \"127.0.0.1\"\nport = {mute}\nusername = \"root\"\nkey_file = \"{}\"\nhost_key = \"{}\"\nproxy_jump = \"127.0.0.1:{}\"\nproxy_jump_host_key = \"{}\"\nconnect_timeout = 1\n",
        key.display(),
        device.fingerprint,
        bastion.port,
        bastion.fingerprint
    ));
    let v = attach(&lab, "leaf-mute", "Gi1/0/6", "120").expect(69);
    let m = msg(&v);
    assert!(
        m.starts_with(&format!("SSH handshake with 127.0.0.1:{mute}")),
        "{m}"
    );

    let v = attach(&lab, "leaf-wrong-bastion", "Gi1/0/6", "120").expect(77);
    let m = msg(&v);
    assert!(
        m.starts_with(&format!("host key of jump host 127.0.0.1:{}", bastion.port)),
        "{m}"
    );
    assert!(m.contains("proxy_jump_host_key"), "{m}");
}

#[test]
fn check_lists_what_an_ssh_device_lacks() {
    let lab = Lab::new(&[]);
    lab.append_config("\n[devices.bare]\nplatform = \"cisco_ios\"\naddress = \"192.0.2.1\"\n");
    let v = lab.mercury(["check"]).run().expect(78);
    let m = msg(&v);
    assert!(m.contains("devices.bare.username"), "{m}");
    assert!(m.contains("key_file or password_file"), "{m}");
    assert!(m.contains("host_key"), "{m}");
    // And a run says the same, before any connection.
    let v = attach(&lab, "bare", "Gi1/0/5", "120").expect(78);
    assert!(msg(&v).contains("devices.bare"), "{v}");
}

#[test]
fn concurrent_requests_to_one_device_are_serialised_by_the_lock() {
    require_sshd!();
    let (lab, _sshd) = ios_lab(&[], "");
    add_vlan(&lab, "leaf", "120");
    let children: Vec<_> = (1..=6)
        .map(|i| {
            lab.mercury([
                "attach-port",
                "--device",
                "leaf",
                "--port",
                &format!("Gi1/0/{i}"),
                "--vlan",
                "120",
                "--reason",
                "parallel",
            ])
            .spawn()
        })
        .collect();
    for c in children {
        common::finish(c).expect(0);
    }
    for i in 1..=6 {
        assert_access_vlan(&lab, "leaf", &format!("GigabitEthernet1/0/{i}"), 120);
    }
    let sessions = &lab.settled_state("leaf")["sessions"];
    assert_eq!(sessions["max_seen"], 1, "max_sessions = 1: {sessions}");
}

/// Hands the session one byte per read of what the SSH channel delivered, to shake out
/// prompt and echo boundary bugs with real PTY bytes (CR LF from the tty, echo, prompts).
struct OneByte {
    inner: Box<dyn mercury::transport::Shell>,
    pending: std::collections::VecDeque<u8>,
}

impl mercury::transport::Shell for OneByte {
    fn send(&mut self, data: &[u8]) -> Result<(), mercury::transport::TransportError> {
        self.inner.send(data)
    }
    fn recv(
        &mut self,
        deadline: Instant,
    ) -> Result<mercury::transport::Chunk, mercury::transport::TransportError> {
        use mercury::transport::Chunk;
        if self.pending.is_empty() {
            match self.inner.recv(deadline)? {
                Chunk::Data(d) => self.pending.extend(d),
                Chunk::Eof => return Ok(Chunk::Eof),
            }
        }
        Ok(Chunk::Data(self.pending.pop_front().into_iter().collect()))
    }
    fn close(&mut self, deadline: Instant) {
        self.inner.close(deadline)
    }
}

#[test]
fn real_pty_bytes_read_one_at_a_time_match_the_dry_run_script() {
    require_sshd!();
    use mercury::catalog::{Catalog, Channel};
    use mercury::session::plan::Plan;
    use mercury::session::{self, Settings};
    use mercury::transport::Connection;

    let (lab, _sshd) = ios_lab(&[], "");
    let config = mercury::config::Config::load(&lab.config).unwrap();
    let catalog = Catalog::builtin().unwrap();
    let platform = catalog.get("cisco_ios").unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let device = &config.devices["leaf"];
    let secrets = mercury::config::Secrets::read(device).unwrap();
    let Connection::Shell(shell) =
        mercury::transport::open(device, &secrets, Channel::Shell, deadline).unwrap()
    else {
        panic!("a CLI platform gets a shell");
    };
    let plan = Plan::cli(&["vlan 120", "name one-byte", "exit"]);
    let settings = Settings {
        device: "leaf".into(),
        command_timeout: Duration::from_secs(10),
        deadline,
        enable_secret: None,
        secrets: vec![],
        save: true,
    };
    let one_byte = OneByte {
        inner: shell,
        pending: Default::default(),
    };
    let (transcript, result) = session::run(
        Connection::Shell(Box::new(one_byte)),
        platform,
        &plan,
        &settings,
    );
    result.unwrap();
    let sent: Vec<String> = transcript
        .commands
        .iter()
        .map(|c| c.input.clone())
        .collect();
    let scripted = session::dry_lines(platform, &plan, &settings);
    assert_eq!(sent, scripted);
    // No echo or prompt leaks into a command's output.
    for c in &transcript.commands {
        assert!(
            !c.output.contains(&c.input) && !c.output.contains("leaf#"),
            "{c:?}"
        );
    }
    let state = lab.settled_state("leaf");
    assert_eq!(
        state["running"]["vlans"]["120"]["name"], "one-byte",
        "{state}"
    );
}

#[test]
fn exec_command_that_outlives_command_timeout_is_75_and_the_lock_is_released() {
    require_sshd!();
    let lab = Lab::new(&[]);
    // Every simulated command waits 3 s before answering; the deadline is 1 s.
    let sshd = lab.sshd_for(
        "leaf",
        "cumulus_nvue",
        &["--fault", "slow=3000"],
        SshdOptions::default(),
    );
    let key = sshd.user_key("id_ed25519", "ed25519", "");
    lab.add_key_device("leaf", "cumulus_nvue", &sshd, &key, "command_timeout = 1\n");
    let started = Instant::now();
    let v = attach(&lab, "leaf", "swp5", "120").expect(75);
    assert!(started.elapsed() < Duration::from_secs(15), "bounded");
    let m = msg(&v);
    // "timed out after N.Ns waiting for ... to finish": at least the 1 s deadline.
    let secs: f64 = m
        .split("timed out after ")
        .nth(1)
        .and_then(|r| r.split('s').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no duration in {m}"));
    assert!((0.95..15.0).contains(&secs), "{m}");
    assert!(m.contains("to finish"), "{m}");
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(lab.path("locks/leaf.lock"))
        .unwrap();
    assert!(f.try_lock().is_ok(), "lock still held after the run");
}

#[test]
fn a_server_with_several_host_keys_is_asked_for_the_type_known_hosts_lists() {
    require_sshd!();
    let lab = Lab::new(&[]);
    let sshd = lab.sshd_for(
        "leaf",
        "cisco_ios",
        &[],
        SshdOptions {
            extra_host_keys: vec!["ecdsa", "rsa"],
            ..SshdOptions::default()
        },
    );
    let key = sshd.user_key("id_ed25519", "ed25519", "");
    // libssh2 would pick ed25519 first; each file lists only one other type.
    for (i, public) in sshd.host_publics.iter().enumerate().skip(1) {
        let file = format!("known_hosts_{i}");
        std::fs::write(
            lab.path(&file),
            format!("[127.0.0.1]:{} {public}\n", sshd.port),
        )
        .unwrap();
        let name = format!("leaf-{i}");
        lab.add_ssh_device(
            &name,
            "cisco_ios",
            &sshd,
            &format!(
                "username = \"root\"\nkey_file = \"{}\"\nknown_hosts = \"{file}\"\n",
                key.display()
            ),
        );
        add_vlan(&lab, &name, "120");
        attach(&lab, &name, &format!("Gi1/0/{i}"), "120").expect(0);
        assert_access_vlan(&lab, "leaf", &format!("GigabitEthernet1/0/{i}"), 120);
    }
}

#[test]
fn enable_secret_over_the_pty_is_answered_and_never_shown() {
    require_sshd!();
    let lab = Lab::new(&[]);
    let secret = "En4ble-s3cret";
    let sshd = lab.sshd_for(
        "leaf",
        "cisco_ios",
        &["--enable-secret", secret],
        SshdOptions::default(),
    );
    let key = sshd.user_key("id_ed25519", "ed25519", "");
    let enable = lab.secret("enable", secret);
    lab.add_ssh_device(
        "leaf",
        "cisco_ios",
        &sshd,
        &format!(
            "username = \"root\"\nkey_file = \"{}\"\nhost_key = \"{}\"\nenable_secret_file = \"{}\"\n",
            key.display(),
            sshd.fingerprint,
            enable.display()
        ),
    );
    add_vlan(&lab, "leaf", "120");
    let r = attach(&lab, "leaf", "Gi1/0/5", "120");
    r.expect(0);
    assert!(r.inputs().iter().any(|l| l == "enable"), "{:?}", r.inputs());
    assert!(!r.stdout.contains(secret), "secret in the result");
    assert!(!r.stderr.contains(secret), "secret on stderr");
    let audit = std::fs::read_to_string(lab.path("audit.log")).unwrap();
    assert!(!audit.contains(secret), "secret in the audit log");
    assert_access_vlan(&lab, "leaf", "GigabitEthernet1/0/5", 120);
}
