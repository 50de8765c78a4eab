//! The SSH forced command as a conductor really sends it: Python builds the remote command
//! with `shlex.join` (what `ssh HOST "…"` carries as one string in `SSH_ORIGINAL_COMMAND`),
//! and Mercury's own tokeniser gets back every word — a reason with parentheses, `#`, quotes
//! and non-ASCII text included — while the grammar still refuses shell metacharacters
//! outside quotes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{Lab, SimDevice};

/// `shlex.join(words)` from the system's Python 3, or `None` where there is none.
fn shlex_join(words: &[&str]) -> Option<String> {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import json, shlex, sys; print(shlex.join(json.load(sys.stdin)), end='')",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .ok()
        .map(|mut child| {
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            stdin
                .write_all(serde_json::to_string(words).unwrap().as_bytes())
                .unwrap();
            drop(stdin);
            child.wait_with_output().unwrap()
        })?;
    assert!(out.status.success());
    Some(String::from_utf8(out.stdout).unwrap())
}

#[test]
fn python_shlex_join_reaches_the_device_word_for_word() {
    let lab = Lab::new(&[SimDevice::new("leaf-ios", "cisco_ios")]);
    lab.append_config("\n[callers.conductor-a]\ndevices = [\"leaf-ios\"]\n");
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
    for reason in [
        "deploy node 7",
        "CHG-1 (urgent)",
        "node #7",
        "it's \"quoted\"; $HOME `x` & more",
        "Zürich → 東京",
    ] {
        let words = [
            "attach-port",
            "--device",
            "leaf-ios",
            "--port",
            "Gi1/0/5",
            "--vlan",
            "120",
            "--reason",
            reason,
        ];
        let Some(command) = shlex_join(&words) else {
            if std::env::var_os("CI").is_some() {
                panic!("python3 is needed in CI");
            }
            eprintln!("skipped: no python3");
            return;
        };
        let v = lab
            .mercury(["serve-ssh", "--caller", "conductor-a"])
            .env("SSH_ORIGINAL_COMMAND", &command)
            .run()
            .expect(0);
        assert_eq!(v["device"], "leaf-ios", "{command}");
        let rec = lab.audit().pop().unwrap();
        assert_eq!(rec["why"]["reason"], reason, "{command}");
    }
    assert_eq!(
        lab.port("leaf-ios", "GigabitEthernet1/0/5")["access_vlan"],
        120
    );
}

#[test]
fn the_old_readme_example_fails_clearly_and_the_fixed_one_works() {
    let lab = Lab::new(&[SimDevice::new("leaf-ios", "cisco_ios")]);
    lab.append_config("\n[callers.conductor-a]\ndevices = [\"leaf-ios\"]\n");
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
    let serve = |cmd: &str| {
        lab.mercury(["serve-ssh", "--caller", "conductor-a"])
            .env("SSH_ORIGINAL_COMMAND", cmd)
            .run()
    };
    // `ssh executor attach-port … --reason 'deploy node 7'`: the local shell removed the
    // quotes, ssh joined the words with spaces, so the remote grammar sees extra words.
    let v = serve("attach-port --device leaf-ios --port Gi1/0/5 --vlan 120 --reason deploy node 7")
        .expect(64);
    assert!(v["msg"].as_str().unwrap().contains("node"), "{v}");
    // `ssh executor "attach-port … --reason 'deploy node 7'"`: the quotes arrive.
    serve("attach-port --device leaf-ios --port Gi1/0/5 --vlan 120 --reason 'deploy node 7'")
        .expect(0);
    // Metacharacters outside quotes are still refused before anything else happens.
    let before = lab.transcript("leaf-ios").len();
    for bad in [
        "attach-port --device leaf-ios --port Gi1/0/5 --vlan 120 --reason (urgent)",
        "attach-port --device leaf-ios --port Gi1/0/5 --vlan 120 --reason r #x",
        "attach-port --device leaf-ios --port Gi1/0/5 --vlan 120 --reason \"$(id)\"",
    ] {
        serve(bad).expect(64);
    }
    // A quoted port name with a separator gets past the tokeniser but not the port check.
    serve("attach-port --device leaf-ios --port 'Gi1/0/5;reload' --vlan 120 --reason r").expect(65);
    assert_eq!(lab.transcript("leaf-ios").len(), before);
}
