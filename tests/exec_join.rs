//! Joined reads on exec platforms (`exec_shell = "posix"`): the show lines of one read run
//! as one script on one exec channel, against the simulator behind a real `/bin/sh -c`
//! (over the `command` transport and behind a real sshd's `ForceCommand`). The simulator's
//! transcript records every command the shell ran with the channel's session, so the
//! channels are counted device-side.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::sshd::SshdOptions;
use common::{sim_bin, Lab, SimDevice};
use mercury::catalog::Catalog;
use mercury::session::plan::Line;
use mercury::session::{Session, SessionError, Settings};
use mercury::transport::command::CommandExec;
use mercury::transport::Connection;
use serde_json::Value;

/// The simulator's transcript records: (session, line).
fn records(lab: &Lab, device: &str) -> Vec<(u64, String)> {
    std::fs::read_to_string(lab.path(&format!("{device}.transcript")))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["session"].as_u64().unwrap(),
                v["line"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn sessions(records: &[(u64, String)]) -> usize {
    records.iter().map(|r| r.0).collect::<BTreeSet<_>>().len()
}

/// The command transport's argv for the SONiC simulator of `lab`'s device `leaf`.
fn sonic_argv(lab: &Lab) -> Vec<String> {
    vec![
        sim_bin().display().to_string(),
        "--platform".into(),
        "sonic".into(),
        "--state".into(),
        lab.path("leaf.json").display().to_string(),
        "--transcript".into(),
        lab.path("leaf.transcript").display().to_string(),
    ]
}

fn settings() -> Settings {
    Settings {
        device: "leaf".into(),
        command_timeout: Duration::from_secs(10),
        deadline: Instant::now() + Duration::from_secs(60),
        enable_secret: None,
        secrets: Vec::new(),
        save: false,
    }
}

/// Arguments a shell would split, expand or run reach the simulator's tools as one
/// argument each: the simulator (behind a real `sh -c`) records each command with its argv
/// quoted back, which splits into exactly the words sent; nothing the arguments name runs.
#[test]
fn hostile_arguments_reach_the_simulator_as_one_argument_each_in_one_channel() {
    let lab = Lab::new(&[]);
    let pwned = lab.path("pwned");
    let p = pwned.display().to_string();
    let hostile = [
        format!("Ethernet 20'; touch {p}; echo '"),
        format!("\"$(touch {p})\""),
        format!("`touch {p}`"),
        format!("a;touch {p}"),
        format!("b && touch {p} || touch {p}"),
        format!("c\ntouch {p}"),
        "d\\".to_string(),
    ];
    let argv = sonic_argv(&lab);
    let catalog = Catalog::builtin().unwrap();
    let sonic = catalog.get("sonic").unwrap();
    let settings = settings();
    let (mut session, opened) = Session::open(
        Connection::Exec(Box::new(CommandExec::new(argv))),
        sonic,
        &settings,
    );
    opened.result.unwrap();
    let mut lines = vec![Line::exec(vec![
        "show".into(),
        "vlan".into(),
        "brief".into(),
    ])];
    lines.extend(hostile.iter().map(|h| {
        Line::exec(vec![
            "show".into(),
            "interfaces".into(),
            "description".into(),
            h.clone(),
        ])
    }));
    let (segment, outputs) = session.read(&lines, None, Instant::now() + Duration::from_secs(60));
    let r = records(&lab, "leaf");
    assert!(!pwned.exists(), "an argument ran as a command");
    assert_eq!(sessions(&r), 1, "{r:?}");
    assert_eq!(segment.transcript.round_trips, 1);
    let received: Vec<Vec<String>> = r
        .iter()
        .map(|(_, l)| mercury_sim::words::shell_words(l))
        .collect();
    let sent: Vec<Vec<String>> = lines.iter().map(|l| l.argv.clone().unwrap()).collect();
    // Every line ran, or the lines up to the one the simulator refused (its error is that
    // line's, with the simulator's own words).
    assert_eq!(received, sent[..received.len()], "{r:?}");
    match segment.result {
        Ok(()) => assert_eq!(outputs.len(), lines.len()),
        Err(SessionError::Rejected { line, indicator }) => {
            assert_eq!(line, lines[received.len() - 1].text, "{indicator}");
            assert_eq!(outputs.len(), received.len() - 1);
        }
        Err(e) => panic!("{e}"),
    }
    assert!(outputs[0].contains("VLAN ID"), "{:?}", outputs[0]);
}

/// The second of three joined lines fails on the simulator (click's `Error: Vlan130 does
/// not exist`, exit 2 — a configuration line, only to have a refusal to attribute):
/// the error is that line's, with the simulator's own stderr; the third never ran (the
/// device did not receive it); the first kept its output; one channel.
#[test]
fn a_failure_on_the_second_of_three_joined_lines_is_attributed_to_it() {
    let lab = Lab::new(&[]);
    let argv = sonic_argv(&lab);
    let catalog = Catalog::builtin().unwrap();
    let settings = settings();
    let (mut session, opened) = Session::open(
        Connection::Exec(Box::new(CommandExec::new(argv))),
        catalog.get("sonic").unwrap(),
        &settings,
    );
    opened.result.unwrap();
    let line = |words: &[&str]| Line::exec(words.iter().map(|w| w.to_string()).collect());
    let lines = [
        line(&["show", "vlan", "brief"]),
        line(&[
            "sudo",
            "-n",
            "config",
            "vlan",
            "member",
            "add",
            "130",
            "Ethernet20",
        ]),
        line(&["show", "interfaces", "status", "Ethernet20"]),
    ];
    let (segment, outputs) = session.read(&lines, None, Instant::now() + Duration::from_secs(60));
    match segment.result {
        Err(SessionError::Rejected { line, indicator }) => {
            assert_eq!(line, lines[1].text);
            assert!(
                indicator.contains("Error: Vlan130 does not exist"),
                "{indicator}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(outputs.len(), 1);
    assert!(outputs[0].contains("VLAN ID"), "{:?}", outputs[0]);
    let recorded: Vec<&str> = segment
        .transcript
        .commands
        .iter()
        .map(|c| c.input.as_str())
        .collect();
    assert_eq!(recorded, [lines[0].text.as_str(), lines[1].text.as_str()]);
    assert!(
        segment.transcript.commands[1]
            .output
            .ends_with("Error: Vlan130 does not exist"),
        "{:?}",
        segment.transcript.commands[1]
    );
    let r = records(&lab, "leaf");
    let received: Vec<&str> = r.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(received, [lines[0].text.as_str(), lines[1].text.as_str()]);
    assert_eq!(sessions(&r), 1);
}

/// `verify-port` on SONiC reads three show lines: one exec channel, counted by the device,
/// the port read back as set, and each line's recorded output exactly what the simulator
/// prints for that line run alone on its own channel.
#[test]
fn sonic_reads_in_one_channel_over_the_command_transport() {
    let lab = Lab::new(&[SimDevice::new("leaf", "sonic")]);
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--device", "leaf", "--reason", "join"]);
        lab.mercury(&all).run()
    };
    run(&["add-network", "--vlan", "120"]).expect(0);
    run(&["attach-port", "--port", "Ethernet20", "--vlan", "120"]).expect(0);
    let before = records(&lab, "leaf").len();
    let v = lab
        .mercury(["verify-port", "--device", "leaf", "--port", "Ethernet20"])
        .run()
        .expect(0);
    let r = records(&lab, "leaf");
    let new = &r[before..];
    assert_eq!(new.len(), 3, "{new:?}");
    assert_eq!(sessions(new), 1, "{new:?}");
    assert_eq!(v["round_trips"], 1, "{v}");
    assert_eq!(v["data"]["ports"][0]["state"]["access_vlan"], 120, "{v}");
    for c in v["commands"].as_array().unwrap() {
        let line = c["input"].as_str().unwrap();
        let alone = std::process::Command::new(sim_bin())
            .args(["--platform", "sonic", "--state"])
            .arg(lab.path("leaf.json"))
            .arg(line)
            .output()
            .unwrap();
        assert!(alone.status.success(), "{line}");
        let mut text = String::from_utf8(alone.stdout).unwrap();
        text.push_str(&String::from_utf8(alone.stderr).unwrap());
        assert_eq!(c["output"].as_str().unwrap(), text.trim_end(), "{line}");
    }
}

/// The same behind a real sshd: the exec request's string reaches the simulator as
/// `SSH_ORIGINAL_COMMAND` under `ForceCommand`, and it runs it in `/bin/sh -c`.
#[test]
fn sonic_reads_in_one_channel_over_ssh() {
    require_sshd!();
    let lab = Lab::new(&[]);
    let sshd = lab.sshd_for("leaf", "sonic", &[], SshdOptions::default());
    let key = sshd.user_key("id_ed25519", "ed25519", "");
    lab.add_key_device("leaf", "sonic", &sshd, &key, "");
    let v = lab
        .mercury(["verify-port", "--device", "leaf", "--port", "Ethernet20"])
        .run()
        .expect(0);
    let r = records(&lab, "leaf");
    assert_eq!(r.len(), 3, "{r:?}");
    assert_eq!(sessions(&r), 1, "{r:?}");
    assert_eq!(v["round_trips"], 1, "{v}");
    assert_eq!(v["data"]["ports"][0]["state"]["admin_up"], true, "{v}");
}
