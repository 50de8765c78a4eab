//! Engine tests: faults, session counting, concurrency-safe state, transcript,
//! env vars, echo.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;
use serde_json::json;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn env_vars_configure_everything_and_flags_win() {
    let t = Tmp::new("env");
    let s = t.path("s.json");
    let tr = t.path("t.jsonl");
    let r = run(
        &["--hostname", "spine9"],
        "show version\n",
        &[
            ("MERCURY_SIM_PLATFORM", "arista_eos"),
            ("MERCURY_SIM_STATE", s.to_str().unwrap()),
            ("MERCURY_SIM_HOSTNAME", "ignored"),
            ("MERCURY_SIM_TRANSCRIPT", tr.to_str().unwrap()),
        ],
    );
    assert_eq!(r.code, 0);
    assert!(r.stdout.starts_with("spine9#"), "{}", r.stdout);
    let st = state(&s);
    assert_eq!(st["platform"], "arista_eos");
    assert_eq!(st["hostname"], "spine9");
    assert!(std::fs::read_to_string(&tr)
        .unwrap()
        .contains("show version"));
}

#[test]
fn state_file_for_another_platform_is_refused() {
    let t = Tmp::new("mismatch");
    let s = t.path("s.json");
    session("cisco_ios", &s, &[]);
    let r = session("juniper", &s, &[]);
    assert_eq!(r.code, 65);
    assert!(r.stderr.contains("is for platform cisco_ios"));
}

#[test]
fn echo_modes() {
    let t = Tmp::new("echo");
    let s = t.path("s.json");
    let sp = s.to_str().unwrap();
    let on = run(
        &["--platform", "cisco_ios", "--state", sp, "--echo", "on"],
        "show clock\n",
        &[],
    );
    assert!(on.stdout.contains("leaf1#show clock\n"));
    let off = run(
        &["--platform", "cisco_ios", "--state", sp, "--echo", "off"],
        "show clock\n",
        &[],
    );
    assert_eq!(off.stdout, "leaf1#leaf1#");
    // auto: stdin is a pipe here, so lines are echoed.
    let auto = run(
        &["--platform", "cisco_ios", "--state", sp],
        "show clock\n",
        &[],
    );
    assert!(auto.stdout.contains("leaf1#show clock\n"));
}

#[test]
fn transcript_has_one_line_per_received_line() {
    let t = Tmp::new("tr");
    let s = t.path("s.json");
    let tr = t.path("t.jsonl");
    run(
        &[
            "--platform",
            "cisco_ios",
            "--state",
            s.to_str().unwrap(),
            "--transcript",
            tr.to_str().unwrap(),
        ],
        "conf t\ninterface gi1/0/5\nshutdown\nend\n",
        &[],
    );
    let text = std::fs::read_to_string(&tr).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["line"], "conf t");
    assert_eq!(lines[0]["mode"], "privileged");
    assert_eq!(lines[2]["mode"], "config-if");
    assert!(lines[0]["ts"].as_str().unwrap().ends_with('Z'));
    assert!(lines[0]["pid"].as_u64().unwrap() > 0);
    assert_eq!(lines[0]["session"], lines[3]["session"]);
}

#[test]
fn fault_reject_gives_platform_error() {
    let t = Tmp::new("reject");
    let s = t.path("s.json");
    let sp = s.to_str().unwrap();
    let r = run(
        &[
            "--platform",
            "cisco_ios",
            "--state",
            sp,
            "--fault",
            "reject=vlan 99",
        ],
        "conf t\ninterface gi1/0/5\nswitchport access vlan 99\nswitchport access vlan 98\n",
        &[],
    );
    assert_eq!(
        r.stdout.matches("% Invalid input detected").count(),
        1,
        "{}",
        r.stdout
    );
    assert_eq!(port(&state(&s), "GigabitEthernet1/0/5")["access_vlan"], 98);
    let r = run(
        &[
            "--platform",
            "cumulus_nvue",
            "--state",
            t.path("n.json").to_str().unwrap(),
        ],
        "",
        &[
            ("MERCURY_SIM_FAULTS", "reject=swp5"),
            (
                "SSH_ORIGINAL_COMMAND",
                "nv set interface swp5 link state up",
            ),
        ],
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("Error"));
}

#[test]
fn fault_drop_after_exits_without_prompt() {
    let t = Tmp::new("drop");
    let s = t.path("s.json");
    let r = run(
        &[
            "--platform",
            "cisco_ios",
            "--state",
            s.to_str().unwrap(),
            "--fault",
            "drop-after=2",
        ],
        "conf t\ninterface gi1/0/5\nshutdown\n",
        &[],
    );
    assert_eq!(r.code, 255);
    assert!(
        r.stdout.ends_with("leaf1(config)#interface gi1/0/5\n"),
        "{:?}",
        r.stdout
    );
    assert_eq!(port(&state(&s), "GigabitEthernet1/0/5")["admin_up"], true);
}

#[test]
fn fault_hang_after_keeps_reading_without_prompt() {
    let t = Tmp::new("hang");
    let s = t.path("s.json");
    let tr = t.path("t.jsonl");
    let r = run(
        &[
            "--platform",
            "cisco_ios",
            "--state",
            s.to_str().unwrap(),
            "--fault",
            "hang-after=1",
            "--transcript",
            tr.to_str().unwrap(),
        ],
        "conf t\nexit\nexit\n",
        &[],
    );
    assert_eq!(r.code, 0);
    assert!(r.stdout.ends_with("End with CNTL/Z.\n"), "{:?}", r.stdout);
    assert_eq!(std::fs::read_to_string(&tr).unwrap().lines().count(), 3);
}

#[test]
fn fault_slow_delays_each_response() {
    let t = Tmp::new("slow");
    let s = t.path("s.json");
    let start = Instant::now();
    run(
        &[
            "--platform",
            "cisco_ios",
            "--state",
            s.to_str().unwrap(),
            "--fault",
            "slow=150",
        ],
        "show clock\nshow clock\n",
        &[],
    );
    assert!(start.elapsed() >= Duration::from_millis(450));
}

#[test]
fn fault_no_prompt_after_login() {
    let t = Tmp::new("noprompt");
    let s = t.path("s.json");
    let r = run(
        &[
            "--platform",
            "juniper",
            "--state",
            s.to_str().unwrap(),
            "--fault",
            "no-prompt-after-login",
        ],
        "show version\n",
        &[],
    );
    assert!(r.stdout.contains("JUNOS"));
    assert!(!r.stdout.contains("@leaf1>"));
}

#[test]
fn fault_db_locked_and_commit_fail() {
    let t = Tmp::new("locked");
    let s = t.path("s.json");
    let sp = s.to_str().unwrap();
    let r = run(
        &[
            "--platform",
            "juniper",
            "--state",
            sp,
            "--fault",
            "db-locked",
        ],
        "configure exclusive\nconfigure\nset interfaces ge-0/0/1 disable\ncommit\n",
        &[],
    );
    assert!(
        r.stdout
            .contains("error: configuration database locked by:"),
        "{}",
        r.stdout
    );
    assert_eq!(port(&state(&s), "ge-0/0/1")["admin_up"], true);
    let r = run(
        &[
            "--platform",
            "juniper",
            "--state",
            sp,
            "--fault",
            "commit-fail",
        ],
        "configure\nset interfaces ge-0/0/1 disable\ncommit\n",
        &[],
    );
    assert!(r.stdout.contains("error: commit failed"));
    assert_eq!(port(&state(&s), "ge-0/0/1")["admin_up"], true);
    let n = t.path("n.json");
    exec("cumulus_nvue", &n, "nv set interface swp1 link state up");
    let r = run(
        &[
            "--platform",
            "cumulus_nvue",
            "--state",
            n.to_str().unwrap(),
            "--fault",
            "db-locked",
            "nv",
            "config",
            "apply",
            "-y",
        ],
        "",
        &[],
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("locked"));
    let i = t.path("i.json");
    let r = run(
        &[
            "--platform",
            "cisco_ios",
            "--state",
            i.to_str().unwrap(),
            "--fault",
            "db-locked",
        ],
        "write memory\n",
        &[],
    );
    assert!(r.stdout.contains("locked"), "{}", r.stdout);
}

#[test]
fn sessions_are_counted_and_limited() {
    let t = Tmp::new("sess");
    let s = t.path("s.json");
    let sp = s.to_str().unwrap().to_string();
    // Hold one session open.
    let mut held = Command::new(BIN)
        .args(["--platform", "cisco_ios", "--state", &sp])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = held.stdout.take().unwrap();
    let mut buf = [0u8; 6];
    out.read_exact(&mut buf).unwrap(); // "leaf1#": the session is registered
    let st = state(&s);
    assert_eq!(st["sessions"]["active"], 1);
    let r = run(
        &[
            "--platform",
            "cisco_ios",
            "--state",
            &sp,
            "--fault",
            "max-sessions=1",
        ],
        "show clock\n",
        &[],
    );
    assert_ne!(r.code, 0);
    assert!(r.stdout.contains("Maximum number of sessions"));
    let r = run(
        &[
            "--platform",
            "cisco_ios",
            "--state",
            &sp,
            "--fault",
            "max-sessions=2",
        ],
        "show clock\n",
        &[],
    );
    assert_eq!(r.code, 0);
    let st = state(&s);
    assert_eq!(st["sessions"]["max_seen"], 2);
    assert_eq!(st["sessions"]["total"], 2);
    held.stdin.take().unwrap().write_all(b"exit\n").unwrap();
    held.wait().unwrap();
    assert_eq!(state(&s)["sessions"]["active"], 0);
}

#[test]
fn sigterm_releases_the_session() {
    let t = Tmp::new("term");
    let s = t.path("s.json");
    let mut child = Command::new(BIN)
        .args(["--platform", "juniper", "--state", s.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Keep stdin open: Child::wait() would close it and the EOF would race the signal.
    let _stdin = child.stdin.take();
    let mut r = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    r.read_line(&mut line).unwrap(); // banner: the session is registered
    assert_eq!(state(&s)["sessions"]["active"], 1);
    Command::new("kill")
        .arg(child.id().to_string())
        .status()
        .unwrap();
    let st = child.wait().unwrap();
    assert_eq!(st.code(), Some(128 + 15), "{st:?}");
    assert_eq!(state(&s)["sessions"]["active"], 0);
}

#[test]
fn parallel_sessions_never_lose_updates() {
    let t = Tmp::new("par");
    let s = t.path("s.json");
    let sp = s.to_str().unwrap().to_string();
    let kids: Vec<_> = (1..=16)
        .map(|i| {
            let cmd = format!("sudo config vlan add {}", 100 + i);
            Command::new(BIN)
                .args(["--platform", "sonic", "--state", &sp])
                .env("SSH_ORIGINAL_COMMAND", cmd)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for k in kids {
        let o = k.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let st = state(&s);
    for i in 1..=16 {
        assert!(
            st["running"]["vlans"][(100 + i).to_string()].is_object(),
            "vlan {} lost",
            100 + i
        );
    }
    assert_eq!(st["sessions"]["total"], 16);
    assert_eq!(st["sessions"]["active"], 0);
}

#[test]
fn unmodelled_lines_are_recorded_with_mode() {
    let t = Tmp::new("unm");
    let s = t.path("s.json");
    session(
        "cisco_ios",
        &s,
        &[
            "conf t",
            "spanning-tree mode rapid-pvst",
            "interface gi1/0/5",
            "spanning-tree portfast",
        ],
    );
    let st = state(&s);
    assert_eq!(
        st["unmodelled"],
        json!([
            "config: spanning-tree mode rapid-pvst",
            "config-if: spanning-tree portfast"
        ])
    );
}

#[test]
fn crlf_line_endings_and_prompt_flush() {
    let t = Tmp::new("crlf");
    let s = t.path("s.json");
    let mut child = Command::new(BIN)
        .args([
            "--platform",
            "cisco_ios",
            "--state",
            s.to_str().unwrap(),
            "--echo",
            "off",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut buf = [0u8; 6];
    out.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"leaf1#");
    stdin.write_all(b"conf t\r\n").unwrap();
    let mut buf = vec![
            0u8;
            "Enter configuration commands, one per line.  End with CNTL/Z.\r\nleaf1(config)#".len()
        ];
    out.read_exact(&mut buf).unwrap();
    assert!(String::from_utf8_lossy(&buf).ends_with("Z.\r\nleaf1(config)#"));
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// Regression: `show` used to read the platform name without the state lock, so a show
/// racing a writer's in-place rewrite saw an empty file ("no state", exit 66).
#[test]
fn show_never_sees_a_half_written_state() {
    let t = Tmp::new("showrace");
    let s = t.path("s.json");
    let sp = s.to_str().unwrap().to_string();
    assert_eq!(exec("sonic", &s, "sudo config vlan add 100").code, 0);
    let writer = {
        let sp = sp.clone();
        std::thread::spawn(move || {
            for i in 0..60 {
                let cmd = format!("sudo config vlan add {}", 200 + i);
                let st = Command::new(BIN)
                    .args(["--platform", "sonic", "--state", &sp, &cmd])
                    .output()
                    .unwrap();
                assert!(st.status.success());
            }
        })
    };
    let mut shows = 0;
    while !writer.is_finished() {
        let out = Command::new(BIN)
            .args(["show", "--state", &sp])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "show failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        shows += 1;
    }
    writer.join().unwrap();
    assert!(shows > 0);
}

/// `show` (and a session's platform check) read the state while sessions rewrite it in
/// place; an unlocked read saw it empty and `show` failed with "no state" (found by the
/// mercury crate's fault matrix, tests/faults.rs).
#[test]
fn show_during_parallel_sessions_never_sees_a_half_written_state() {
    let t = Tmp::new("showpar");
    let s = t.path("s.json");
    let sp = s.to_str().unwrap().to_string();
    exec("sonic", &s, "sudo config vlan add 100");
    let kids: Vec<_> = (1..=16)
        .map(|i| {
            Command::new(BIN)
                .args(["--platform", "sonic", "--state", &sp])
                .env(
                    "SSH_ORIGINAL_COMMAND",
                    format!("sudo config vlan add {}", 100 + i),
                )
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for _ in 0..40 {
        let r = run(&["show", "--state", &sp], "", &[]);
        assert_eq!(r.code, 0, "show failed during writes: {}", r.stderr);
    }
    for mut k in kids {
        assert!(k.wait().unwrap().success());
    }
}
