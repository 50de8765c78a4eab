//! Output for people: `--format text` for every kind of result (snapshots of the tables,
//! with times and request ids masked), usage errors in text even when stdout is a pipe, the
//! stderr notice while a request waits for a device lock, and audit records in syslog.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{mercury, Lab, SimDevice};

/// The text with the parts that change from run to run masked.
fn masked(text: &str, lab: &Lab) -> String {
    let ms = regex::Regex::new(r"[0-9]+ ms, request mercury-[0-9a-f]{16}").unwrap();
    let t = ms.replace_all(text, "N ms, request ID");
    // The catalog grows; its size is not what these snapshots are about.
    let n = regex::Regex::new(r"[0-9]+ platforms").unwrap();
    let t = n.replace_all(&t, "N platforms");
    t.replace(&lab.dir.path().display().to_string(), "LAB")
}

fn lab() -> Lab {
    Lab::new(&[
        SimDevice {
            extra: "mac = \"02:00:00:00:01:01\"\naliases = [\"leaf-ios.lab\"]",
            ..SimDevice::new("leaf-ios", "cisco_ios")
        },
        SimDevice::new("leaf-junos", "juniper"),
    ])
}

#[test]
fn text_for_every_result_kind() {
    let lab = lab();
    let text = |args: &[&str]| {
        let mut all = vec!["--format", "text"];
        all.extend_from_slice(args);
        let r = lab.mercury(all).run();
        assert!(
            !r.stdout.trim_start().starts_with('{'),
            "JSON instead of text: {}",
            r.stdout
        );
        (r.code, masked(&r.stdout, &lab))
    };
    let (code, switches) = text(&["get-switches"]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("get_switches_text", switches);
    let (code, check) = text(&["check"]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("check_text", check);
    lab.mercury([
        "add-network",
        "--device",
        "leaf-ios",
        "--vlan",
        "10",
        "--reason",
        "t",
    ])
    .run()
    .expect(0);
    let (code, connect) = text(&["check", "--connect"]);
    assert_eq!(code, 78, "{connect}");
    insta::assert_snapshot!("check_connect_text", connect);
    let (_, link) = text(&["is-link-valid", "--device", "leaf-ios", "--port", "Gi1/0/5"]);
    assert!(
        link.contains("link is valid") && link.contains("valid: yes"),
        "{link}"
    );
    let (code, err) = text(&[
        "attach-port",
        "--device",
        "leaf-l0s",
        "--port",
        "Gi1/0/5",
        "--vlan",
        "120",
        "--reason",
        "r",
    ]);
    assert_eq!(code, 65);
    assert!(
        err.starts_with("FAILED: attach_port [rc 65, invalid_request"),
        "{err}"
    );
    assert!(err.contains("did you mean leaf-ios?"), "{err}");
    lab.mercury([
        "add-network",
        "--device",
        "leaf-ios",
        "--vlan",
        "120",
        "--reason",
        "t",
    ])
    .run()
    .expect(0);
    let (code, diff) = text(&[
        "--verify",
        "attach-port",
        "--device",
        "leaf-ios",
        "--port",
        "Gi1/0/5",
        "--vlan",
        "120",
        "--reason",
        "r",
    ]);
    assert_eq!(code, 0, "{diff}");
    assert!(
        diff.contains("--- Gi1/0/5") || diff.contains("--- GigabitEthernet1/0/5"),
        "{diff}"
    );
    assert!(diff.contains("  + access_vlan: 120"), "{diff}");
}

#[test]
fn usage_errors_are_text_when_asked_even_through_a_pipe() {
    for args in [
        &["--format", "text", "attach-port", "--bogus"][..],
        &["--format=text", "nonesuch"][..],
        &["attach-port", "--format", "text", "--vlan"][..],
    ] {
        let r = mercury(args).run();
        assert_eq!(r.code, 64, "{args:?}");
        assert!(
            r.stdout.starts_with("FAILED: [rc 64, usage"),
            "{args:?}: {}",
            r.stdout
        );
    }
    // Without --format, a pipe gets the JSON contract.
    let r = mercury(["attach-port", "--bogus"]).run();
    assert_eq!(r.expect(64)["error_kind"], "usage");
}

#[test]
fn a_request_waiting_for_the_lock_says_who_holds_it() {
    let lab = Lab::new(&[SimDevice {
        sim_args: &["--fault", "slow=300"],
        ..SimDevice::new("leaf-ios", "cisco_ios")
    }]);
    lab.append_config("\n[coalesce]\nenabled = false\n");
    lab.mercury([
        "add-network",
        "--device",
        "leaf-ios",
        "--vlan",
        "120",
        "--reason",
        "t",
    ])
    .run()
    .expect(0);
    let slow = lab
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
    // Wait (bounded) until the first request holds the lock.
    let lock = lab.path("locks/leaf-ios.lock");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !std::fs::read_to_string(&lock)
        .unwrap_or_default()
        .contains("holder-1")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the first request never took the lock"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let second = lab
        .mercury([
            "attach-port",
            "--device",
            "leaf-ios",
            "--port",
            "Gi1/0/6",
            "--vlan",
            "120",
            "--reason",
            "second",
        ])
        .run();
    let first = common::finish(slow);
    first.expect(0);
    second.expect(0);
    let notice: Vec<&str> = second
        .stderr
        .lines()
        .filter(|l| l.starts_with("mercury: waiting for the lock of leaf-ios"))
        .collect();
    assert_eq!(notice.len(), 1, "{}", second.stderr);
    assert!(
        notice[0].contains("request holder-1, attach_port since"),
        "{}",
        notice[0]
    );
    assert!(
        notice[0].contains(&format!("pid {}", first_pid(&lab))),
        "{}",
        notice[0]
    );
    // Not a terminal: no live counter.
    assert!(!second.stderr.contains('\r'), "{:?}", second.stderr);

    // On a terminal (script(1) gives the waiter a pty), a counter follows the notice.
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("SKIPPED: no script(1) for the terminal case");
        return;
    }
    let slow = lab
        .mercury([
            "attach-port",
            "--device",
            "leaf-ios",
            // A port that needs the change: a repeat would be read, found done and
            // released at once (read before write), leaving nothing to wait for.
            "--port",
            "Gi1/0/8",
            "--vlan",
            "120",
            "--reason",
            "again",
            "--request-id",
            "holder-2",
        ])
        .spawn();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !std::fs::read_to_string(&lock)
        .unwrap_or_default()
        .contains("holder-2")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the holder never took the lock"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let cmd = format!(
        "{} --config {} attach-port --device leaf-ios --port Gi1/0/7 --vlan 120 --reason tty",
        common::mercury_bin().display(),
        lab.config.display()
    );
    let tty = std::process::Command::new("script")
        .args(["-qefc", &cmd, "/dev/null"])
        .output()
        .unwrap();
    common::finish(slow).expect(0);
    let screen = String::from_utf8_lossy(&tty.stdout);
    assert!(tty.status.success(), "{screen}");
    assert!(
        screen.contains("mercury: waiting for the lock of leaf-ios: held by pid"),
        "{screen}"
    );
    assert!(screen.contains("request holder-2"), "{screen}");
    assert!(screen.contains("\rmercury: waited 1 s"), "{screen:?}");
}

/// The pid recorded by the first request's audit record.
fn first_pid(lab: &Lab) -> u64 {
    lab.audit()
        .into_iter()
        .find(|r| r["request_id"] == "holder-1")
        .unwrap()["who"]["pid"]
        .as_u64()
        .unwrap()
}

#[test]
fn audit_records_go_to_syslog_when_asked() {
    let lab = lab();
    let sock_path = lab.path("log.sock");
    let sock = std::os::unix::net::UnixDatagram::bind(&sock_path).unwrap();
    sock.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let text = std::fs::read_to_string(&lab.config).unwrap().replacen(
        "[defaults]\n",
        "[defaults]\naudit_syslog = true\naudit_syslog_socket = \"log.sock\"\n",
        1,
    );
    lab.write_config(&text);
    lab.mercury([
        "add-network",
        "--device",
        "leaf-ios",
        "--vlan",
        "120",
        "--reason",
        "syslog test",
    ])
    .run()
    .expect(0);
    let file = lab.audit();
    assert_eq!(file.len(), 2);
    let mut buf = vec![0u8; 1 << 16];
    for want in &file {
        let n = sock.recv(&mut buf).unwrap();
        let msg = std::str::from_utf8(&buf[..n]).unwrap();
        assert!(msg.starts_with("<86>mercury["), "{msg}");
        let json = &msg[msg.find("]: ").unwrap() + 3..];
        assert_eq!(
            &serde_json::from_str::<serde_json::Value>(json).unwrap(),
            want
        );
    }
    // The socket gone: the run still succeeds, with a warning; the file has the records.
    drop(sock);
    std::fs::remove_file(&sock_path).unwrap();
    let v = lab
        .mercury([
            "add-network",
            "--device",
            "leaf-ios",
            "--vlan",
            "121",
            "--reason",
            "t",
        ])
        .run()
        .expect(0);
    assert!(v["warnings"].to_string().contains("syslog"), "{v}");
    assert_eq!(lab.audit().len(), 4);
    // audit_syslog is global: refused in a device table.
    lab.append_config(
        "\n[devices.x]\nplatform = \"cisco_ios\"\ntransport = \"local\"\naudit_syslog = true\n",
    );
    let v = lab.mercury(["get-switches"]).run().expect(78);
    assert!(
        v["msg"]
            .as_str()
            .unwrap()
            .contains("devices.x.audit_syslog"),
        "{v}"
    );
}
