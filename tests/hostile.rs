//! Hostile inputs: a corpus of several hundred requests across all three entry points
//! (flags, JSON on stdin, the forced-command string) carrying command injection, control
//! characters, bad VLANs, overlong values, malformed JSON and forbidden options. Every case
//! must end in exit 64 or 65 with a clear, escaped message, and provably no device contact:
//! one device is a program that records being spawned, another an SSH address where a
//! listener records every TCP connection.

mod common;

use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

use common::{mercury, Lab, Ran};

/// Values that must never reach a device, whatever field they are put in.
const INJECTIONS: &[&str] = &[
    "Gi1/0/5\nreload",
    "Gi1/0/5\r\nreload",
    "Gi1/0/5;reload",
    "Gi1/0/5 ; reload",
    "Gi1/0/5|reload",
    "Gi1/0/5 && reload",
    "Gi1/0/5`reload`",
    "$(reload)",
    "Gi1/0/5\u{1b}[2J",
    "Gi1/0/5\u{1b}]0;x\u{7}",
    "Gi1/0/5\u{0}",
    "Gi1/0/5\u{2028}reload",
    "Gi1/0/5\u{2029}reload",
    "Gi1/0/5\u{85}reload",
    "Gi1/0/5\u{202e}",
    "Gi1/0/5\tx",
    "Gi1/0/5 extra",
    "../../etc/passwd",
    "-x",
    "--config=/tmp/evil.toml",
    "Gi1/0/5'",
    "Gi1/0/5\"",
    "Gi1/0/5\\",
    "Gi1/0/5>x",
    "Gi1/0/5#",
];

/// Control characters: refused even in free text.
const CONTROLS: &[&str] = &[
    "a\nb",
    "a\rb",
    "a\u{1b}[31mb",
    "a\u{0}b",
    "a\u{2028}b",
    "a\u{2029}b",
    "a\u{85}b",
    "a\u{7}b",
    "a\u{7f}b",
    "a\u{202e}b",
];

const BAD_VLANS: &[&str] = &[
    "0",
    "4095",
    "-1",
    "1;reload",
    "1.5",
    "1e3",
    "99999999999999999999",
    "",
    " 120",
    "120 ",
    "0x78",
    "vlan",
    "12a",
    "+120",
    "120\n",
    "١٢٠",
];

/// The base request, as (field, value) pairs valid for attach_port.
fn base() -> Vec<(&'static str, String)> {
    vec![
        ("device", "leaf".into()),
        ("port", "Gi1/0/5".into()),
        ("vlan", "120".into()),
        ("reason", "hostile-test".into()),
    ]
}

#[derive(Clone, Copy, Debug)]
enum Entry {
    Flags,
    Json,
    Forced,
}

#[derive(Clone, Debug)]
struct Case {
    entry: Entry,
    op: &'static str,
    fields: Vec<(&'static str, String)>,
    /// Raw stdin / forced string overriding the generated one.
    raw: Option<String>,
    label: String,
}

fn corpus() -> Vec<Case> {
    let mut cases = Vec::new();
    let entries = [Entry::Flags, Entry::Json, Entry::Forced];
    // Injection payloads in every rendered field of attach_port.
    for field in ["device", "port", "vlan", "mode"] {
        for p in INJECTIONS {
            for entry in entries {
                let mut f = base();
                match f.iter_mut().find(|(k, _)| *k == field) {
                    Some(slot) => slot.1 = p.to_string(),
                    None => f.push((field, p.to_string())),
                }
                cases.push(Case {
                    entry,
                    op: "attach_port",
                    fields: f,
                    raw: None,
                    label: format!("{field}={p:?}"),
                });
            }
        }
    }
    // Identifiers that reach the audit log or OVS: request_id, vif_id, node_uuid, lifecycle.
    for field in ["request_id", "vif_id", "node_uuid", "lifecycle"] {
        for p in INJECTIONS.iter().take(12) {
            for entry in [Entry::Flags, Entry::Json] {
                let mut f = base();
                f.push((field, p.to_string()));
                cases.push(Case {
                    entry,
                    op: "attach_port",
                    fields: f,
                    raw: None,
                    label: format!("{field}={p:?}"),
                });
            }
        }
    }
    // Free text: only control characters are refused.
    for p in CONTROLS {
        for entry in entries {
            let mut f = base();
            f.retain(|(k, _)| *k != "reason");
            f.push(("reason", p.to_string()));
            cases.push(Case {
                entry,
                op: "attach_port",
                fields: f,
                raw: None,
                label: format!("reason={p:?}"),
            });
        }
        let mut f = base();
        f.retain(|(k, _)| *k != "vlan");
        f.extend([
            ("mode", "access".to_string()),
            ("native_vlan", "120".to_string()),
            ("description", p.to_string()),
        ]);
        cases.push(Case {
            entry: Entry::Json,
            op: "update_port",
            fields: f,
            raw: None,
            label: format!("description={p:?}"),
        });
    }
    // VLAN forms, in vlan, native_vlan, allowed_vlans.
    for v in BAD_VLANS {
        for entry in entries {
            let mut f = base();
            f.retain(|(k, _)| *k != "vlan");
            f.push(("vlan", v.to_string()));
            cases.push(Case {
                entry,
                op: "attach_port",
                fields: f,
                raw: None,
                label: format!("vlan={v:?}"),
            });
        }
        if v.trim().is_empty() || v.trim() != *v {
            // "100,", "100, 120" are legitimate list spellings.
            continue;
        }
        let mut f = base();
        f.retain(|(k, _)| *k != "vlan");
        f.extend([
            ("mode", "trunk".to_string()),
            ("allowed_vlans", format!("100,{v}")),
        ]);
        cases.push(Case {
            entry: Entry::Flags,
            op: "update_port",
            fields: f,
            raw: None,
            label: format!("allowed_vlans=100,{v:?}"),
        });
    }
    // Names rendered into lines or file names: VLAN names, LAG names and members, bridges, MACs.
    for p in INJECTIONS {
        let net = vec![
            ("device", "leaf".to_string()),
            ("vlan", "120".to_string()),
            ("name", p.to_string()),
            ("reason", "r".to_string()),
        ];
        cases.push(Case {
            entry: Entry::Json,
            op: "add_network",
            fields: net,
            raw: None,
            label: format!("name={p:?}"),
        });
        let lag = vec![
            ("device", "leaf".to_string()),
            ("lag", p.to_string()),
            ("members", "Gi1/0/5".to_string()),
            ("reason", "r".to_string()),
        ];
        cases.push(Case {
            entry: Entry::Json,
            op: "update_lag",
            fields: lag,
            raw: None,
            label: format!("lag={p:?}"),
        });
        let plug = vec![
            ("device", "leaf".to_string()),
            ("port", "pf0vf1".to_string()),
            ("vif_id", "vif-1".to_string()),
            ("bridge", p.to_string()),
            ("reason", "r".to_string()),
        ];
        cases.push(Case {
            entry: Entry::Json,
            op: "plug_port",
            fields: plug,
            raw: None,
            label: format!("bridge={p:?}"),
        });
    }
    for m in [
        "aa:bb:cc:dd:ee",
        "aa:bb:cc:dd:ee:fg",
        "aa:bb:cc:dd:ee:ff;x",
        "aa:bb:cc:dd:ee:ff\n",
        "zz",
        "",
    ] {
        let plug = vec![
            ("device", "leaf".to_string()),
            ("port", "pf0vf1".to_string()),
            ("vif_id", "vif-1".to_string()),
            ("mac", m.to_string()),
            ("reason", "r".to_string()),
        ];
        cases.push(Case {
            entry: Entry::Json,
            op: "plug_port",
            fields: plug,
            raw: None,
            label: format!("mac={m:?}"),
        });
    }
    // Path tricks in the names that select a device or become file names (lock, spool).
    for name in [
        "../leaf",
        "leaf/../leaf",
        "./leaf",
        "/etc/passwd",
        "leaf/",
        "leaf\\..\\x",
        "..",
        ".",
        "~root",
        "leaf%2f..%2fx",
        "LEAF",
        "leaf ",
        " leaf",
        "le\u{200b}af",
    ] {
        for entry in entries {
            let mut f = base();
            f.retain(|(k, _)| *k != "device");
            f.push(("device", name.to_string()));
            cases.push(Case {
                entry,
                op: "attach_port",
                fields: f,
                raw: None,
                label: format!("device={name:?}"),
            });
        }
    }
    // Overlong values.
    for (field, len) in [
        ("port", 65),
        ("port", 10_000),
        ("reason", 513),
        ("reason", 100_000),
        ("device", 200),
        ("request_id", 129),
    ] {
        for entry in [Entry::Flags, Entry::Json] {
            let mut f = base();
            f.retain(|(k, _)| *k != field);
            f.push((field, "a".repeat(len)));
            cases.push(Case {
                entry,
                op: "attach_port",
                fields: f,
                raw: None,
                label: format!("{field} x{len}"),
            });
        }
    }
    // Malformed JSON on stdin.
    let raw_json = [
        String::new(),
        "null".into(),
        "[]".into(),
        "\"attach_port\"".into(),
        "{".into(),
        "{}".into(),
        r#"{"op":"attach_port","op":"detach_port","device":"leaf","port":"Gi1/0/5","vlan":120,"reason":"r"}"#.into(),
        r#"{"op":"attach_port","device":"leaf","device":"other","port":"Gi1/0/5","vlan":120,"reason":"r"}"#.into(),
        r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/5","vlan":120,"reason":"r","extra":true}"#.into(),
        r#"{"op":"reload","device":"leaf"}"#.into(),
        r#"{"op":"attach-port","device":"leaf","port":"Gi1/0/5","vlan":120,"reason":"r"}"#.into(),
        r#"{"op":"ATTACH_PORT","device":"leaf","port":"Gi1/0/5","vlan":120,"reason":"r"}"#.into(),
        r#"{"op":"attach_port","device":["leaf"],"port":"Gi1/0/5","vlan":120,"reason":"r"}"#.into(),
        r#"{"op":"attach_port","device":"leaf","port":5,"vlan":120,"reason":"r"}"#.into(),
        r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/5","vlan":[],"reason":"r"}"#.into(),
        r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/5","vlan":true,"reason":"r"}"#.into(),
        r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/5","vlan":{"id":120},"reason":"r"}"#.into(),
        r#"{"op":"attach_port","device":"leaf","ports":"Gi1/0/5","vlan":120,"reason":"r"}"#.into(),
        r#"{"op":"attach_port","device":"leaf","ports":[],"vlan":120,"reason":"r"}"#.into(),
        r#"{"op":"attach_port","device":"leaf","ports":[{"port":"Gi1/0/5","bogus":1}],"vlan":120,"reason":"r"}"#.into(),
        r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/5","vlan":120,"reason":"r","local_link_connection":{"switch_id":"x"}}"#.into(),
        r#"{"op":"attach_port","local_link_connection":{"switch_id":"aa:bb:cc:dd:ee:ff","port_id":"Gi1/0/5;x"},"vlan":120,"reason":"r"}"#.into(),
        r#"{"op":"attach_port","local_link_connection":{"switch_info":"../../x","port_id":"Gi1/0/5"},"vlan":120,"reason":"r"}"#.into(),
        r#"{"op":"attach_port","local_link_connection":{"bogus":1},"vlan":120,"reason":"r"}"#.into(),
        r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/5","vlan":120,"reason":"r"} trailing"#.into(),
        "\u{feff}{\"op\":\"get_switches\"}".into(),
        format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)),
        format!(r#"{{"op":"attach_port","device":"leaf","port":"Gi1/0/5","vlan":120,"reason":"{}"}}"#, "x".repeat(1_100_000)),
        format!(r#"{{"op":"attach_port","device":"leaf","ports":[{}],"vlan":120,"reason":"r"}}"#, vec!["\"Gi1/0/5\""; 600].join(",")),
        // Deep nesting inside a field (not only at the top), and a huge flat array.
        format!(r#"{{"op":"attach_port","local_link_connection":{}1{},"vlan":120,"reason":"r"}}"#, r#"{"switch_id":"#.repeat(5_000), "}".repeat(5_000)),
        format!(r#"{{"op":"attach_port","device":"leaf","ports":{}"Gi1/0/5"{},"vlan":120,"reason":"r"}}"#, "[".repeat(5_000), "]".repeat(5_000)),
        format!(r#"{{"op":"attach_port","device":"leaf","port":"Gi1/0/5","vlan":120,"reason":"r","members":[{}]}}"#, vec!["\"Gi1/0/5\""; 200_000].join(",")),
        // Numbers JSON allows and a VLAN id must not be.
        r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/5","vlan":1e400,"reason":"r"}"#.into(),
        r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/5","vlan":18446744073709551617,"reason":"r"}"#.into(),
        r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/5","vlan":-0.0,"reason":"r"}"#.into(),
        r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/5","vlan":1.2e2,"reason":"r"}"#.into(),
        r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/5","vlan":120.5,"reason":"r"}"#.into(),
        r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/5","vlan":-120,"reason":"r"}"#.into(),
        r#"{"op":"update_port","device":"leaf","port":"Gi1/0/5","mode":"access","native_vlan":120,"mtu":-1,"reason":"r"}"#.into(),
        r#"{"op":"update_port","device":"leaf","port":"Gi1/0/5","mode":"access","native_vlan":120,"mtu":99999999999,"reason":"r"}"#.into(),
        r#"{"op":"update_port","device":"leaf","port":"Gi1/0/5","mode":"trunk","allowed_vlans":[100,4095],"reason":"r"}"#.into(),
        r#"{"op":"update_port","device":"leaf","port":"Gi1/0/5","mode":"trunk","allowed_vlans":"1-99999999999999999999","reason":"r"}"#.into(),
        // Duplicate keys below the top level, and wrong types for booleans and text.
        r#"{"op":"attach_port","local_link_connection":{"switch_id":"aa:bb:cc:dd:ee:ff","port_id":"Gi1/0/5","port_id":"Gi1/0/6"},"vlan":120,"reason":"r"}"#.into(),
        r#"{"op":"attach_port","device":"leaf","ports":[{"port":"Gi1/0/5","port":"Gi1/0/6"}],"vlan":120,"reason":"r"}"#.into(),
        r#"{"op":"is_port_supported","device":"leaf","is_smartnic":"yes","vnic_type":"baremetal"}"#.into(),
        r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/5","vlan":120,"reason":5}"#.into(),
        r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/5","vlan":120,"reason":null}"#.into(),
        // JSON escapes that decode to what the corpus refuses in raw form.
        r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/5\u000areload","vlan":120,"reason":"r"}"#.into(),
        r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/5\u2028reload","vlan":120,"reason":"r"}"#.into(),
        r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/5\u0000","vlan":120,"reason":"r"}"#.into(),
        r#"{"op":"attach_port","device":"leaf","port":"Gi1/0/5","vlan":120,"reason":"\ud800"}"#.into(),
    ];
    for j in raw_json {
        let label = format!("json {}", common_prefix(&j));
        cases.push(Case {
            entry: Entry::Json,
            op: "attach_port",
            fields: vec![],
            raw: Some(j),
            label,
        });
    }
    // Forced-command strings that try to escape the grammar.
    let forced = [
        "attach-port --config /tmp/evil.toml --device leaf --port Gi1/0/5 --vlan 120 --reason r",
        "attach-port --config=/tmp/evil.toml --device leaf --port Gi1/0/5 --vlan 120 --reason r",
        "--config /tmp/evil.toml attach-port --device leaf --port Gi1/0/5 --vlan 120 --reason r",
        "attach-port -v --device leaf --port Gi1/0/5 --vlan 120 --reason r",
        "attach-port --verbose --device leaf --port Gi1/0/5 --vlan 120 --reason r",
        "run --request /etc/shadow",
        "run --request=/etc/shadow",
        "check",
        "check --catalog",
        "completions bash",
        "serve-ssh --caller root",
        "serve-jsonrpc --inetd",
        "help",
        "--help",
        "attach-port --help",
        "sh -c id",
        "/bin/sh",
        "attach-port --device leaf --port Gi1/0/5 --vlan 120 --reason r; id",
        "attach-port --device leaf --port Gi1/0/5 --vlan 120 --reason r && id",
        "attach-port --device leaf --port Gi1/0/5 --vlan 120 --reason r | id",
        "attach-port --device leaf --port Gi1/0/5 --vlan 120 --reason $(id)",
        "attach-port --device leaf --port Gi1/0/5 --vlan 120 --reason `id`",
        "attach-port --device leaf --port Gi1/0/5 --vlan 120 --reason r > /tmp/x",
        "attach-port --device leaf --port Gi1/0/5 --vlan 120 --reason r\nid",
        "attach-port --device leaf --port Gi1/0/5 --vlan 120 --reason 'unterminated",
        "attach-port --device leaf --port Gi1/0/5 --vlan 120 --reason r --",
        "attach-port --device leaf --port Gi1/0/5 --vlan 120 --reason r --dry-run=maybe",
        "attach_port --device leaf --port Gi1/0/5 --vlan 120 --reason r",
        "ATTACH-PORT --device leaf --port Gi1/0/5 --vlan 120 --reason r",
        "true; id",
        "version --config /tmp/x",
        "mercury --config /tmp/x attach-port",
    ];
    for f in forced {
        cases.push(Case {
            entry: Entry::Forced,
            op: "attach_port",
            fields: vec![],
            raw: Some(f.to_string()),
            label: format!("forced {f:?}"),
        });
    }
    cases
}

fn common_prefix(s: &str) -> String {
    s.chars()
        .take(60)
        .collect::<String>()
        .escape_debug()
        .to_string()
}

fn json_value(field: &str, value: &str) -> serde_json::Value {
    match field {
        // Numbers stay numbers where they parse, so the numeric path is exercised too.
        "vlan" | "native_vlan" if is_int(value) => value
            .parse::<i64>()
            .map(serde_json::Value::from)
            .unwrap_or_else(|_| value.into()),
        "members" => serde_json::json!([value]),
        _ => value.into(),
    }
}

/// Canonical integer spelling (so "+120" stays a string).
fn is_int(v: &str) -> bool {
    let digits = v.strip_prefix('-').unwrap_or(v);
    !digits.is_empty() && digits.len() < 19 && digits.bytes().all(|b| b.is_ascii_digit())
}

fn flag(field: &str) -> String {
    match field {
        "members" => "--member".into(),
        f => format!("--{}", f.replace('_', "-")),
    }
}

fn quote(v: &str) -> String {
    format!("'{v}'")
}

fn run_case(lab: &Lab, c: &Case) -> Ran {
    match c.entry {
        Entry::Flags => {
            let mut args: Vec<String> = vec![c.op.replace('_', "-")];
            for (k, v) in &c.fields {
                args.push(flag(k));
                args.push(v.clone());
            }
            if args.iter().any(|a| a.contains('\0')) {
                // argv cannot carry NUL: nothing to test on this entry point.
                return Ran {
                    code: 65,
                    stdout: r#"{"rc":65,"msg":"argv cannot carry NUL","ok":false}"#.into(),
                    stderr: String::new(),
                };
            }
            lab.mercury(&args).run()
        }
        Entry::Json => {
            let body = c.raw.clone().unwrap_or_else(|| {
                let mut m = serde_json::Map::new();
                m.insert("op".into(), c.op.into());
                for (k, v) in &c.fields {
                    m.insert(k.to_string(), json_value(k, v));
                }
                serde_json::Value::Object(m).to_string()
            });
            lab.mercury(["run"]).stdin(&body).run()
        }
        Entry::Forced => {
            let cmd = c.raw.clone().unwrap_or_else(|| {
                let mut parts = vec![c.op.replace('_', "-")];
                for (k, v) in &c.fields {
                    parts.push(flag(k));
                    parts.push(quote(v));
                }
                parts.join(" ")
            });
            if cmd.contains('\0') {
                // An environment variable cannot carry NUL either; send it as JSON on stdin.
                return lab
                    .mercury(["serve-ssh", "--caller", "tester"])
                    .stdin(&cmd)
                    .run();
            }
            lab.mercury(["serve-ssh", "--caller", "tester"])
                .env("SSH_ORIGINAL_COMMAND", &cmd)
                .run()
        }
    }
}

#[test]
fn hostile_corpus_is_refused_without_device_contact() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let ssh_port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    {
        let accepted = Arc::clone(&accepted);
        thread::spawn(move || {
            for s in listener.incoming() {
                if s.is_ok() {
                    accepted.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
    }
    let lab = Lab::new(&[]);
    let marker = lab.path("spawned");
    lab.append_config(&format!(
        "\n[devices.leaf]\nplatform = \"cisco_ios\"\ntransport = \"command\"\nargv = [\"sh\", \"-c\", \"echo spawned >> {m}\"]\n\
         [devices.leaf-ssh]\nplatform = \"cisco_ios\"\naddress = \"127.0.0.1\"\nport = {ssh_port}\nusername = \"x\"\n\
         [callers.tester]\ndevices = [\"leaf\", \"leaf-ssh\"]\n",
        m = marker.display()
    ));
    let mut cases = corpus();
    // The same corpus against the SSH device, for the flag entry point.
    let ssh_cases: Vec<Case> = cases
        .iter()
        .filter(|c| matches!(c.entry, Entry::Flags))
        .filter(|c| !c.fields.iter().any(|(k, _)| *k == "device"))
        .cloned()
        .collect();
    cases.extend(ssh_cases);
    let mut redirected = Vec::new();
    for c in cases
        .iter()
        .filter(|c| matches!(c.entry, Entry::Flags))
        .take(120)
    {
        let mut c = c.clone();
        if let Some(slot) = c
            .fields
            .iter_mut()
            .find(|(k, v)| *k == "device" && v == "leaf")
        {
            slot.1 = "leaf-ssh".into();
            c.label = format!("ssh {}", c.label);
            redirected.push(c);
        }
    }
    cases.extend(redirected);
    assert!(cases.len() >= 300, "corpus has only {} cases", cases.len());

    let failures = std::sync::Mutex::new(Vec::new());
    let next = AtomicUsize::new(0);
    thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(c) = cases.get(i) else { break };
                let r = run_case(&lab, c);
                let problem = check(&r);
                if let Some(p) = problem {
                    failures.lock().unwrap().push(format!(
                        "[{:?}] {}: {p}\n  stdout: {}",
                        c.entry,
                        c.label,
                        r.stdout.trim()
                    ));
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    assert!(
        !marker.exists(),
        "a hostile request spawned the device program"
    );
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        0,
        "a hostile request connected to the SSH device"
    );
    eprintln!("{} hostile cases refused", cases.len());
    let _ = std::io::stderr().flush();
}

/// A refusal must be exit 64/65, one JSON object, a non-empty message without raw control
/// characters.
fn check(r: &Ran) -> Option<String> {
    if r.code != 64 && r.code != 65 {
        return Some(format!("exit {} (want 64 or 65)", r.code));
    }
    let v: serde_json::Value = match serde_json::from_str(r.stdout.trim()) {
        Ok(v) => v,
        Err(e) => return Some(format!("stdout is not JSON: {e}")),
    };
    let msg = v["msg"].as_str().unwrap_or_default();
    if msg.trim().is_empty() {
        return Some("empty message".into());
    }
    if msg
        .chars()
        .any(|c| c.is_control() || c == '\u{2028}' || c == '\u{2029}' || c == '\u{202e}')
    {
        return Some(format!("message carries a control character: {msg:?}"));
    }
    if msg.len() > 2000 {
        return Some(format!("message is {} bytes long", msg.len()));
    }
    None
}

#[test]
fn sanitised_description_renders_safely() {
    let lab = Lab::new(&[]);
    lab.append_config(
        "\n[devices.leaf]\nplatform = \"cisco_ios\"\ntransport = \"command\"\nargv = [\"true\"]\n",
    );
    let r = mercury([
        "--config",
        lab.config.to_str().unwrap(),
        "--dry-run",
        "update-port",
        "--device",
        "leaf",
        "--port",
        "Gi1/0/5",
        "--mode",
        "access",
        "--native-vlan",
        "120",
        "--description",
        "node;7 | $(x) `y` \"z\"",
        "--reason",
        "r",
    ])
    .run();
    r.expect(0);
    let line = r
        .inputs()
        .into_iter()
        .find(|l| l.starts_with("description"))
        .unwrap();
    assert_eq!(line, "description node_7 _ _(x) _y_ _z_");
    assert!(!Path::new(&lab.path("spawned")).exists());
}

/// The JSON-RPC entry point (`serve-jsonrpc`, what Ironic's conductor calls): the same
/// payloads in every parameter of `update_port`, `reset_port`, `update_lag` and
/// `delete_lag`, many calls on one keep-alive connection. Every call must get a JSON-RPC
/// error (never a result), and no device may be contacted.
#[test]
fn hostile_jsonrpc_calls_are_refused_without_device_contact() {
    let lab = Lab::new(&[]);
    let marker = lab.path("spawned");
    lab.append_config(&format!(
        "\n[devices.sw1]\nplatform = \"cisco_ios\"\ntransport = \"command\"\nargv = [\"sh\", \"-c\", \"echo spawned >> {m}\"]\n\
         [callers.ironic]\ndevices = [\"sw1\"]\n",
        m = marker.display()
    ));
    // bcrypt cost 4 of "secret", as in tests/jsonrpc.rs.
    let hash = "$2y$04$g89FzS2kk46fDeP0k33vLOPiZH8Rt2WvMvE8ZBT.B4tgzIdUIrQ2W";
    std::fs::write(lab.path("htpasswd"), format!("ironic:{hash}\n")).unwrap();
    common::set_mode(&lab.path("htpasswd"), 0o600);

    let port_call = |field: &str, value: serde_json::Value| {
        let mut p = serde_json::json!({
            "switch_id": "sw1", "port_name": "Gi1/0/5", "description": "d", "mode": "access",
            "native_vlan": 120, "allowed_vlans": null, "lag_name": null, "default_vlan": null,
        });
        p[field] = value;
        ("update_port", p)
    };
    let mut calls: Vec<(&str, serde_json::Value)> = Vec::new();
    for v in INJECTIONS {
        for field in ["switch_id", "port_name", "mode", "lag_name"] {
            calls.push(port_call(field, (*v).into()));
        }
        calls.push((
            "reset_port",
            serde_json::json!({"switch_id": "sw1", "port_name": v, "native_vlan": 120}),
        ));
        calls.push((
            "update_lag",
            serde_json::json!({"switch_ids": ["sw1"], "lag_name": v, "description": "d",
                "mode": "access", "native_vlan": 120, "aggregation_mode": "lacp"}),
        ));
        calls.push((
            "delete_lag",
            serde_json::json!({"switch_ids": [v], "lag_name": "Po10"}),
        ));
    }
    for c in CONTROLS {
        calls.push(port_call("description", (*c).into()));
    }
    for v in BAD_VLANS {
        let value: serde_json::Value = if is_int(v) {
            v.parse::<i64>()
                .map(Into::into)
                .unwrap_or_else(|_| (*v).into())
        } else {
            (*v).into()
        };
        calls.push(port_call("native_vlan", value.clone()));
        calls.push(port_call("allowed_vlans", serde_json::json!([100, value])));
        calls.push(port_call("default_vlan", serde_json::json!(v)));
    }
    for value in [
        serde_json::json!(1e300),
        serde_json::json!(-1),
        serde_json::json!(true),
        serde_json::json!({"id": 120}),
        serde_json::json!([120]),
    ] {
        calls.push(port_call("native_vlan", value));
    }
    calls.push(port_call("allowed_vlans", serde_json::json!("100")));
    calls.push(port_call("switch_id", serde_json::json!(["sw1"])));
    calls.push(port_call(
        "port_name",
        serde_json::json!("a".repeat(10_000)),
    ));

    let mut input = String::new();
    for (i, (method, params)) in calls.iter().enumerate() {
        let body =
            serde_json::json!({"jsonrpc": "2.0", "method": method, "params": params, "id": i})
                .to_string();
        input.push_str(&format!(
            "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic aXJvbmljOnNlY3JldA==\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ));
    }
    let mut child = std::process::Command::new(common::mercury_bin())
        .arg("--config")
        .arg(&lab.config)
        .args(["serve-jsonrpc", "--inetd", "--htpasswd"])
        .arg(lab.path("htpasswd"))
        .env("REMOTE_ADDR", "192.0.2.7")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // One JSON body per response; each must be an error for its own id.
    let bodies: Vec<serde_json::Value> = text
        .split("HTTP/1.1 ")
        .skip(1)
        .map(|r| {
            let body = r.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or_default();
            serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {r}"))
        })
        .collect();
    assert_eq!(
        bodies.len(),
        calls.len(),
        "one response per call:\n{}",
        text.chars().take(2000).collect::<String>()
    );
    let mut failures = Vec::new();
    for (i, b) in bodies.iter().enumerate() {
        let (method, params) = &calls[i];
        let msg = b["error"]["message"].as_str().unwrap_or_default();
        if b.get("result").is_some() || b["id"] != i || msg.is_empty() {
            failures.push(format!("{method} {params}: {b}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} calls were not refused:\n{}",
        failures.len(),
        calls.len(),
        failures.join("\n")
    );
    assert!(!marker.exists(), "a hostile call reached the device");
    eprintln!("{} hostile JSON-RPC calls refused", calls.len());
}
