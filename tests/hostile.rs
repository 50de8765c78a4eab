//! Hostile inputs: a corpus of several hundred requests across all three entry points
//! (flags, JSON on stdin, the forced-command string) carrying command injection, control
//! characters, bad VLANs, overlong values, malformed JSON and forbidden options. Every case
//! must end in exit 64 or 65 with a clear, escaped message, and provably no device contact:
//! one device is a program that records being spawned, another an SSH address where a
//! listener records every TCP connection.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

use common::{mercury, Lab, Ran, SimDevice};

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

/// Invisible format characters (Unicode general category Cf) and fillers: they make text
/// look like other text, so free text refuses them.
const INVISIBLE: &[char] = &[
    '\u{061c}',
    '\u{2060}',
    '\u{00ad}',
    '\u{180e}',
    '\u{200b}',
    '\u{200d}',
    '\u{2063}',
    '\u{206a}',
    '\u{fff9}',
    '\u{e0041}',
    '\u{3164}',
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
            // "100, 120" is a legitimate list spelling; "100," and "100, " are refused by
            // the list cases below.
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
    // VLAN lists are parsed strictly: empty items and separators at either end are
    // refused, not normalised away.
    for list in [
        "100,",
        "100,,101",
        "1,,2",
        ",100",
        "100, ",
        "100 ,",
        "100,101,",
        "100, ,101",
    ] {
        for entry in entries {
            let mut f = base();
            f.retain(|(k, _)| *k != "vlan");
            f.extend([
                ("mode", "trunk".to_string()),
                ("allowed_vlans", list.to_string()),
            ]);
            cases.push(Case {
                entry,
                op: "update_port",
                fields: f,
                raw: None,
                label: format!("allowed_vlans={list:?}"),
            });
        }
    }
    // Invisible format characters (Unicode Cf) in free text.
    for c in INVISIBLE {
        for entry in entries {
            let mut f = base();
            f.retain(|(k, _)| *k != "reason");
            f.push(("reason", format!("CHG-1{c}2")));
            cases.push(Case {
                entry,
                op: "attach_port",
                fields: f,
                raw: None,
                label: format!("reason with {c:?}"),
            });
        }
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
                let problem = check(&r, c);
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
/// characters. Over the forced command a well-formed name of a device the caller does not
/// have (`LEAF`) is outside its scope: 77, the same answer as for any device not its own.
fn check(r: &Ran, c: &Case) -> Option<String> {
    let scoped =
        matches!(c.entry, Entry::Forced) && r.code == 77 && r.stdout.contains("may not use device");
    if r.code != 64 && r.code != 65 && !scoped {
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
    if msg.chars().any(|c| {
        c.is_control()
            || c == '\u{2028}'
            || c == '\u{2029}'
            || c == '\u{202e}'
            || INVISIBLE.contains(&c)
    }) {
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

// ========================================================================================
// Policy: well-formed requests that a caller may not make, and files Mercury may not trust.
//
// Each hole of issue 13 items 5 and 7 has a regression test named after it, run over every
// entry point it applies to — argv (`attach-port ...`), `run` (JSON on stdin), `serve-ssh`
// (the forced command, scoped to `[callers.tester]`) and `serve-jsonrpc` (Ironic's
// `update_port`, scoped to `[callers.ironic]`) — and `mercury check` where the hole is one
// it can know offline. Every one asserts that the simulated switch was not touched (no
// line received, running configuration unchanged), not only the exit code.
// ========================================================================================

use serde_json::{json, Value};

/// The entry points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Via {
    Argv,
    Run,
    ServeSsh,
    JsonRpc,
}

const VIAS: [Via; 4] = [Via::Argv, Via::Run, Via::ServeSsh, Via::JsonRpc];

/// What came back, whatever the entry point: the exit code (for JSON-RPC, the Mercury rc
/// the error quotes; 0 for a result), the message, and everything printed.
#[derive(Debug)]
struct Answer {
    rc: i32,
    msg: String,
    printed: String,
}

impl Answer {
    fn from_ran(r: &Ran) -> Answer {
        let msg = serde_json::from_str::<Value>(r.stdout.trim())
            .ok()
            .and_then(|v| v["msg"].as_str().map(str::to_string))
            .unwrap_or_default();
        Answer {
            rc: r.code,
            msg,
            printed: format!("{}{}", r.stdout, r.stderr),
        }
    }

    fn expect(&self, rc: i32, needle: &str, what: &str) {
        assert_eq!(self.rc, rc, "{what}: {self:?}");
        assert!(
            self.msg.contains(needle),
            "{what}: wanted {needle:?} in {self:?}"
        );
    }
}

/// bcrypt cost 4 of "secret" for user `ironic` (as in tests/jsonrpc.rs).
const HTPASSWD: &str = "ironic:$2y$04$g89FzS2kk46fDeP0k33vLOPiZH8Rt2WvMvE8ZBT.B4tgzIdUIrQ2W\n";

/// Two simulated IOS switches: `leaf` (the callers' own) and `other` (a device no caller
/// may use), each with an alias and a MAC, VLANs 10 and 120 created; callers `tester`
/// (serve-ssh) and `ironic` (serve-jsonrpc) may use `leaf` only.
fn policy_lab() -> Lab {
    let lab = Lab::new(&[
        SimDevice {
            extra: "mac = \"02:00:00:00:0a:01\"\naliases = [\"leaf.dc1\"]",
            ..SimDevice::new("leaf", "cisco_ios")
        },
        SimDevice {
            extra: "mac = \"02:00:00:00:0b:01\"\naliases = [\"other.dc1\"]",
            ..SimDevice::new("other", "cisco_ios")
        },
    ]);
    lab.append_config(
        "\n[callers.tester]\ndevices = [\"leaf\"]\n\n[callers.ironic]\ndevices = [\"leaf\"]\n",
    );
    for device in ["leaf", "other"] {
        for vlan in ["10", "120"] {
            lab.mercury([
                "add-network",
                "--device",
                device,
                "--vlan",
                vlan,
                "--reason",
                "setup",
            ])
            .run()
            .expect(0);
        }
    }
    std::fs::write(lab.path("htpasswd"), HTPASSWD).unwrap();
    common::set_mode(&lab.path("htpasswd"), 0o600);
    lab
}

/// What a device has seen: the number of lines it received and its running configuration.
#[derive(Debug, PartialEq)]
struct Seen {
    lines: usize,
    running: Value,
}

fn seen(lab: &Lab, device: &str) -> Seen {
    Seen {
        lines: lab.transcript(device).len(),
        running: lab.state(device)["running"].clone(),
    }
}

/// One JSON-RPC call on its own connection; the answer with Mercury's rc.
fn jsonrpc(lab: &Lab, method: &str, params: Value) -> Answer {
    let body = json!({"jsonrpc": "2.0", "method": method, "params": params, "id": 1}).to_string();
    let input = format!(
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic aXJvbmljOnNlY3JldA==\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let r = common::mercury([
        "--config".into(),
        lab.config.display().to_string(),
        "serve-jsonrpc".to_string(),
        "--inetd".into(),
        "--htpasswd".into(),
        lab.path("htpasswd").display().to_string(),
    ])
    .env("REMOTE_ADDR", "192.0.2.7")
    .stdin(&input)
    .run();
    let body = r
        .stdout
        .split_once("\r\n\r\n")
        .map(|(_, b)| b)
        .unwrap_or_default();
    let v: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let msg = v["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let rc = if v.get("result").is_some() {
        0
    } else {
        msg.split_once("[mercury rc ")
            .and_then(|(_, rest)| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(-1)
    };
    Answer {
        rc,
        msg,
        printed: format!("{}{}", r.stdout, r.stderr),
    }
}

/// Puts `Gi1/0/5` of `device` on VLAN 120 through `via`, with `reason` (JSON-RPC has no
/// reason: `reason` becomes the port description there).
fn attach(lab: &Lab, via: Via, device: &str, reason: &str) -> Answer {
    match via {
        Via::Argv => Answer::from_ran(
            &lab.mercury([
                "attach-port",
                "--device",
                device,
                "--port",
                "Gi1/0/5",
                "--vlan",
                "120",
                "--reason",
                reason,
            ])
            .run(),
        ),
        Via::Run => Answer::from_ran(
            &lab.mercury(["run"])
                .stdin(
                    &json!({"op": "attach_port", "device": device, "port": "Gi1/0/5",
                        "vlan": 120, "reason": reason})
                    .to_string(),
                )
                .run(),
        ),
        Via::ServeSsh => forced(
            lab,
            &format!("attach-port --device {device} --port Gi1/0/5 --vlan 120 --reason '{reason}'"),
        ),
        Via::JsonRpc => jsonrpc(
            lab,
            "update_port",
            json!({"switch_id": device, "port_name": "Gi1/0/5", "description": reason,
                "mode": "access", "native_vlan": 120, "allowed_vlans": null,
                "lag_name": null, "default_vlan": null}),
        ),
    }
}

/// `serve-ssh --caller tester` with this forced command.
fn forced(lab: &Lab, command: &str) -> Answer {
    forced_with(lab, command, None)
}

/// `serve-ssh --caller tester` with this forced command and, when given, this stdin.
fn forced_with(lab: &Lab, command: &str, stdin: Option<&str>) -> Answer {
    let mut cmd = lab
        .mercury(["serve-ssh", "--caller", "tester"])
        .env("SSH_ORIGINAL_COMMAND", command);
    if let Some(input) = stdin {
        cmd = cmd.stdin(input);
    }
    Answer::from_ran(&cmd.run())
}

/// `mercury check` on the lab.
fn check_lab(lab: &Lab) -> Answer {
    Answer::from_ran(&lab.mercury(["check"]).run())
}

/// Every entry point refuses with `rc` and `needle`, and `leaf` is untouched.
fn refused_everywhere(lab: &Lab, rc: i32, needle: &str, what: &str) {
    let before = seen(lab, "leaf");
    for via in VIAS {
        attach(lab, via, "leaf", "hostile-test").expect(rc, needle, &format!("{what} {via:?}"));
        assert_eq!(
            seen(lab, "leaf"),
            before,
            "{what} {via:?}: the switch was touched"
        );
    }
}

fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// The harness can see a change: the baseline request works on every entry point (so the
/// refusals below are refusals, not a broken lab).
#[test]
fn policy_lab_applies_the_baseline_request_on_every_entry_point() {
    let lab = policy_lab();
    check_lab(&lab).expect(0, "configuration ok", "check");
    for via in VIAS {
        // A fresh port each time, so that every entry point makes a real change.
        lab.mercury([
            "reset-port",
            "--device",
            "leaf",
            "--port",
            "Gi1/0/5",
            "--reason",
            "between",
        ])
        .run()
        .expect(0);
        let before = seen(&lab, "leaf");
        attach(&lab, via, "leaf", "baseline").expect(0, "", &format!("{via:?}"));
        assert_ne!(seen(&lab, "leaf").lines, before.lines, "{via:?}");
        assert_eq!(
            lab.port("leaf", "GigabitEthernet1/0/5")["access_vlan"],
            120,
            "{via:?}"
        );
    }
}

// ---- item 5: files are trusted too easily ---------------------------------------------

#[test]
fn symlinked_lock_file_is_refused_and_its_target_untouched() {
    let lab = policy_lab();
    let victim = lab.path("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    let lock = lab.path("locks/leaf.lock");
    let _ = std::fs::remove_file(&lock);
    std::os::unix::fs::symlink(&victim, &lock).unwrap();
    refused_everywhere(&lab, 78, "symbolic link", "symlinked lock file");
    check_lab(&lab).expect(78, "symbolic link", "check");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
}

#[test]
fn symlinked_audit_log_is_refused_and_nothing_is_appended_to_its_target() {
    let lab = policy_lab();
    let victim = lab.path("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    std::fs::remove_file(lab.path("audit.log")).unwrap();
    std::os::unix::fs::symlink(&victim, lab.path("audit.log")).unwrap();
    refused_everywhere(&lab, 78, "symbolic link", "symlinked audit log");
    check_lab(&lab).expect(78, "symbolic link", "check");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
}

#[test]
fn config_in_a_directory_others_can_write_is_refused() {
    let lab = policy_lab();
    for mode in [0o777, 0o770, 0o702] {
        common::set_mode(lab.dir.path(), mode);
        refused_everywhere(&lab, 78, "not trusted for the configuration", "config dir");
        check_lab(&lab).expect(78, "not trusted for the configuration", "check");
    }
    common::set_mode(lab.dir.path(), 0o700);
    check_lab(&lab).expect(0, "configuration ok", "check");
}

#[test]
fn lock_dir_others_can_write_is_refused() {
    let lab = policy_lab();
    // The sticky bit does not help a directory Mercury creates files in.
    for mode in [0o777, 0o1777, 0o770] {
        common::set_mode(&lab.path("locks"), mode);
        refused_everywhere(&lab, 78, "not trusted for lock files", "lock dir");
        check_lab(&lab).expect(78, "not trusted for lock files", "check");
    }
}

#[test]
fn audit_log_directory_others_can_write_is_refused() {
    let lab = policy_lab();
    let text = std::fs::read_to_string(&lab.config).unwrap();
    lab.write_config(&text.replace(
        "audit_log = \"audit.log\"",
        "audit_log = \"audit/audit.log\"",
    ));
    std::fs::create_dir(lab.path("audit")).unwrap();
    for mode in [0o777, 0o1777, 0o730] {
        common::set_mode(&lab.path("audit"), mode);
        refused_everywhere(&lab, 78, "not trusted for the audit log", "audit dir");
        check_lab(&lab).expect(78, "not trusted for the audit log", "check");
    }
    // A log others can rewrite (forge records in) is refused too.
    common::set_mode(&lab.path("audit"), 0o750);
    std::fs::write(lab.path("audit/audit.log"), "").unwrap();
    common::set_mode(&lab.path("audit/audit.log"), 0o666);
    refused_everywhere(&lab, 78, "group or others can change it", "audit log 0666");
    check_lab(&lab).expect(78, "group or others can change it", "check");
}

#[test]
fn plugins_dir_others_can_write_is_refused() {
    let lab = policy_lab();
    std::fs::create_dir(lab.path("plugins.d")).unwrap();
    std::fs::write(lab.path("plugins.d/extra.toml"), "# a catalog extension\n").unwrap();
    common::set_mode(&lab.path("plugins.d/extra.toml"), 0o644);
    common::set_mode(&lab.path("plugins.d"), 0o777);
    refused_everywhere(&lab, 78, "not trusted for a catalog file", "plugins.d 0777");
    check_lab(&lab).expect(78, "not trusted for a catalog file", "check");
    common::set_mode(&lab.path("plugins.d"), 0o755);
    check_lab(&lab).expect(0, "configuration ok", "check");
}

#[test]
fn secret_in_a_directory_others_can_write_is_refused() {
    let lab = policy_lab();
    std::fs::create_dir(lab.path("secrets")).unwrap();
    std::fs::write(lab.path("secrets/enable"), "TopSecret123\n").unwrap();
    common::set_mode(&lab.path("secrets/enable"), 0o600);
    common::set_mode(&lab.path("secrets"), 0o777);
    let text = std::fs::read_to_string(&lab.config).unwrap();
    lab.write_config(&text.replace(
        "[devices.leaf]\n",
        "[devices.leaf]\nenable_secret_file = \"secrets/enable\"\n",
    ));
    refused_everywhere(&lab, 78, "not trusted for a secret", "secret dir 0777");
    check_lab(&lab).expect(78, "not trusted for a secret", "check");
    for via in VIAS {
        assert!(!attach(&lab, via, "leaf", "r")
            .printed
            .contains("TopSecret123"));
    }
}

#[test]
fn multi_line_secret_file_is_refused() {
    let lab = policy_lab();
    std::fs::write(lab.path("enable.secret"), "TopSecret123\nsecond line\n").unwrap();
    common::set_mode(&lab.path("enable.secret"), 0o600);
    let text = std::fs::read_to_string(&lab.config).unwrap();
    lab.write_config(&text.replace(
        "[devices.leaf]\n",
        "[devices.leaf]\nenable_secret_file = \"enable.secret\"\n",
    ));
    refused_everywhere(&lab, 78, "more than one line", "two-line secret");
    check_lab(&lab).expect(78, "more than one line", "check");
    for via in VIAS {
        let a = attach(&lab, via, "leaf", "r");
        assert!(
            !a.printed.contains("TopSecret123") && !a.printed.contains("second line"),
            "{a:?}"
        );
    }
    // One line, with or without its newline, is a secret.
    std::fs::write(lab.path("enable.secret"), "TopSecret123\n").unwrap();
    check_lab(&lab).expect(0, "configuration ok", "check");
}

#[test]
fn known_hosts_others_can_write_is_refused_before_connecting() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
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
    let lab = policy_lab();
    std::fs::write(lab.path("password"), "pw\n").unwrap();
    common::set_mode(&lab.path("password"), 0o600);
    std::fs::create_dir(lab.path("ssh")).unwrap();
    std::fs::write(lab.path("ssh/known_hosts"), "").unwrap();
    let text = std::fs::read_to_string(&lab.config).unwrap();
    lab.write_config(
        &text
            .replace("devices = [\"leaf\"]", "devices = [\"leaf\", \"leaf-ssh\"]")
            .replace(
                "[callers.tester]",
                &format!(
                    "[devices.leaf-ssh]\nplatform = \"cisco_ios\"\naddress = \"127.0.0.1\"\nport = {port}\n\
                     username = \"u\"\npassword_file = \"password\"\nknown_hosts = \"ssh/known_hosts\"\n\
                     connect_timeout = 1\n\n[callers.tester]"
                ),
            ),
    );
    for (what, file_mode, dir_mode) in [
        ("known_hosts 0666", 0o666, 0o755),
        ("known_hosts 0620", 0o620, 0o755),
        ("its directory 0777", 0o644, 0o777),
    ] {
        common::set_mode(&lab.path("ssh/known_hosts"), file_mode);
        common::set_mode(&lab.path("ssh"), dir_mode);
        for via in VIAS {
            attach(&lab, via, "leaf-ssh", "r").expect(
                78,
                "not trusted for host keys",
                &format!("{what} {via:?}"),
            );
        }
        check_lab(&lab).expect(78, "not trusted for host keys", what);
    }
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        0,
        "Mercury connected to a device whose known_hosts anyone could write"
    );
}

/// As root (CI): files and directories owned by another user are refused, each in turn.
#[test]
fn files_owned_by_another_user_are_refused() {
    if !running_as_root() {
        eprintln!("skipped: chown needs root (CI runs this as root)");
        return;
    }
    let nobody = 65534;
    let lab = policy_lab();
    std::fs::create_dir(lab.path("plugins.d")).unwrap();
    std::fs::write(lab.path("plugins.d/extra.toml"), "# a catalog extension\n").unwrap();
    std::fs::write(lab.path("enable.secret"), "TopSecret123\n").unwrap();
    common::set_mode(&lab.path("enable.secret"), 0o600);
    let text = std::fs::read_to_string(&lab.config).unwrap();
    lab.write_config(&text.replace(
        "[devices.leaf]\n",
        "[devices.leaf]\nenable_secret_file = \"enable.secret\"\n",
    ));
    check_lab(&lab).expect(0, "configuration ok", "check");
    for (name, what) in [
        ("mercury.toml", "the configuration"),
        ("plugins.d/extra.toml", "a catalog file"),
        ("plugins.d", "a catalog file"),
        ("enable.secret", "a secret"),
        ("locks", "lock files"),
        ("locks/leaf.lock", "lock files"),
        ("audit.log", "the audit log"),
        ("", "the configuration"),
    ] {
        let path = lab.path(name);
        std::os::unix::fs::chown(&path, Some(nobody), None).unwrap();
        refused_everywhere(&lab, 78, "unsafe ownership", name);
        check_lab(&lab).expect(78, &format!("not trusted for {what}"), name);
        std::os::unix::fs::chown(&path, Some(0), None).unwrap();
    }
    check_lab(&lab).expect(0, "configuration ok", "check");
}

/// Not as root (root may write anything): check says so when the lock directory or the
/// audit log is not writable by the user running it, as the run would find out.
#[test]
fn check_fails_when_lock_dir_or_audit_log_is_not_writable() {
    if running_as_root() {
        eprintln!("skipped: root can write any file, so only a non-root run can show this");
        return;
    }
    let lab = policy_lab();
    common::set_mode(&lab.path("locks"), 0o500);
    check_lab(&lab).expect(78, "not writable by the running user", "lock dir 0500");
    attach(&lab, Via::Argv, "leaf", "r").expect(78, "locks", "argv");
    common::set_mode(&lab.path("locks"), 0o700);
    common::set_mode(&lab.path("audit.log"), 0o400);
    check_lab(&lab).expect(78, "not writable by the running user", "audit.log 0400");
    attach(&lab, Via::Argv, "leaf", "r").expect(78, "audit", "argv");
}

// ---- item 7: what callers can learn and set --------------------------------------------

#[test]
fn broken_config_line_never_echoes_its_value() {
    let lab = policy_lab();
    let good = std::fs::read_to_string(&lab.config).unwrap();
    for (line, key, needle) in [
        (
            "password = \"hunter2\"",
            "devices.broken.password",
            "password_file",
        ),
        (
            "enable_secret = \"hunter2\"",
            "devices.broken.enable_secret",
            "enable_secret_file",
        ),
        ("port = \"hunter2\"", "devices.broken.port", "expected u16"),
        (
            "username = [\"hunter2\"]",
            "devices.broken.username",
            "expected a string",
        ),
        (
            "host_key = \"hunter2\"",
            "devices.broken.host_key",
            "SHA256",
        ),
        ("mac = \"hunter2\"", "devices.broken.mac", "MAC address"),
        (
            "aliases = [\"hunter2 x\"]",
            "devices.broken.aliases",
            "letters, digits",
        ),
        (
            "allowed_vlans = [\"hunter2\"]",
            "devices.broken.allowed_vlans",
            "VLAN",
        ),
        (
            "transport = \"hunter2\"",
            "devices.broken.transport",
            "unknown transport",
        ),
        ("\"hunter2\"", "", "TOML syntax"),
    ] {
        let text = format!(
            "{good}\n[devices.broken]\nplatform = \"cisco_ios\"\naddress = \"192.0.2.1\"\n{line}\n"
        );
        lab.write_config(&text);
        let config_line = text.lines().position(|l| l == line).unwrap() + 1;
        let mut answers: Vec<(String, Answer)> = VIAS
            .iter()
            .map(|v| (format!("{v:?}"), attach(&lab, *v, "leaf", "r")))
            .collect();
        answers.push(("check".into(), check_lab(&lab)));
        for (via, a) in answers {
            assert_eq!(a.rc, 78, "{line} {via}: {a:?}");
            assert!(
                !a.printed.contains("hunter2"),
                "{line} {via}: the value leaked: {a:?}"
            );
            for want in ["mercury.toml", &format!("line {config_line}"), key, needle] {
                assert!(
                    a.msg.contains(want),
                    "{line} {via}: wanted {want:?} in {:?}",
                    a.msg
                );
            }
        }
    }
}

#[test]
fn serve_ssh_ignores_mercury_config_from_the_environment() {
    let lab = policy_lab();
    // A configuration that would let `tester` use `other` too.
    let evil = lab.path("evil.toml");
    let text = std::fs::read_to_string(&lab.config).unwrap();
    std::fs::write(
        &evil,
        text.replace(
            "[callers.tester]\ndevices = [\"leaf\"]",
            "[callers.tester]\ndevices = [\"leaf\", \"other\"]",
        ),
    )
    .unwrap();
    common::set_mode(&evil, 0o600);
    let before = seen(&lab, "other");
    let command = "attach-port --device other --port Gi1/0/5 --vlan 120 --reason r";
    // No --config on the authorized_keys line: the default path, never the environment.
    let r = common::mercury(["serve-ssh", "--caller", "tester"])
        .env("MERCURY_CONFIG", evil.to_str().unwrap())
        .env("SSH_ORIGINAL_COMMAND", command)
        .run();
    assert_ne!(r.code, 0, "{r:?}");
    assert!(!r.stdout.contains("evil.toml"), "{r:?}");
    if !std::path::Path::new("/etc/mercury/mercury.toml").exists() {
        assert!(r.stdout.contains("/etc/mercury/mercury.toml"), "{r:?}");
    }
    // --config on the authorized_keys line (before or after the verb) wins over it.
    for args in [
        vec![
            "--config",
            lab.config.to_str().unwrap(),
            "serve-ssh",
            "--caller",
            "tester",
        ],
        vec![
            "serve-ssh",
            "--config",
            lab.config.to_str().unwrap(),
            "--caller",
            "tester",
        ],
    ] {
        let r = common::mercury(&args)
            .env("MERCURY_CONFIG", evil.to_str().unwrap())
            .env("SSH_ORIGINAL_COMMAND", command)
            .run();
        Answer::from_ran(&r).expect(77, "may not use device", "--config in argv");
    }
    assert_eq!(
        seen(&lab, "other"),
        before,
        "the environment chose the configuration"
    );
    // Other entry points keep MERCURY_CONFIG (documented), for people and playbooks.
    let r = common::mercury(["get-switches"])
        .env("MERCURY_CONFIG", lab.config.to_str().unwrap())
        .run();
    assert_eq!(r.code, 0, "{r:?}");
}

#[test]
fn serve_ssh_ignores_rust_log_from_the_environment() {
    let lab = policy_lab();
    // The same request logs at info level on stderr from argv ...
    let r = lab
        .mercury([
            "attach-port",
            "--device",
            "leaf",
            "--port",
            "Gi1/0/5",
            "--vlan",
            "120",
            "--reason",
            "r",
        ])
        .env("RUST_LOG", "debug")
        .run();
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("connected to leaf"), "{r:?}");
    // ... but a forced-command client cannot turn diagnostics on (its stderr reaches the client).
    let r = lab
        .mercury(["serve-ssh", "--caller", "tester"])
        .env("RUST_LOG", "debug")
        .env(
            "SSH_ORIGINAL_COMMAND",
            "detach-port --device leaf --port Gi1/0/5 --vlan 120 --reason r",
        )
        .run();
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.trim().is_empty(), "serve-ssh logged: {}", r.stderr);
}

/// The answers of one query about `reference` with the reference itself, the request id and
/// the timing blanked, so two answers compare equal when they tell the caller the same.
fn blanked(r: &Ran, reference: &str) -> String {
    let mut v: Value = serde_json::from_str(r.stdout.trim()).unwrap_or(Value::Null);
    v["request_id"] = Value::Null;
    v["elapsed_ms"] = Value::Null;
    v.to_string().replace(reference, "REF")
}

#[test]
fn queries_do_not_tell_unknown_devices_from_other_callers_devices() {
    let lab = policy_lab();
    let ask = |command: String| {
        lab.mercury(["serve-ssh", "--caller", "tester"])
            .env("SSH_ORIGINAL_COMMAND", &command)
            .run()
    };
    // Another caller's device by name, alias, MAC (as device or switch_id) and switch_info,
    // against a device that does not exist, spelled the same way.
    for (flag, other, unknown) in [
        ("--device", "other", "nosuch"),
        ("--device", "other.dc1", "nosuch.dc1"),
        ("--device", "02:00:00:00:0b:01", "02:00:00:00:0c:01"),
        ("--switch-id", "02:00:00:00:0b:01", "02:00:00:00:0c:01"),
        ("--switch-info", "other", "nosuch"),
    ] {
        for (verb, rest) in [
            ("is-link-valid", "--port Gi1/0/5"),
            ("is-port-supported", "--vnic-type baremetal"),
            ("get-allowed-network-types", ""),
        ] {
            if verb == "get-allowed-network-types" && flag != "--device" {
                continue;
            }
            let theirs = ask(format!("{verb} {flag} {other} {rest}"));
            let missing = ask(format!("{verb} {flag} {unknown} {rest}"));
            assert_eq!(
                blanked(&theirs, other),
                blanked(&missing, unknown),
                "{verb} {flag}: the answers differ:\n{}\n{}",
                theirs.stdout,
                missing.stdout
            );
            let v = theirs.json();
            assert!(
                v["device"].is_null() && v["platform"].is_null(),
                "{verb}: {v}"
            );
            assert!(
                !theirs.stdout.contains("cisco_ios"),
                "{verb}: {}",
                theirs.stdout
            );
            if verb == "is-link-valid" {
                assert_eq!(v["data"]["valid"], false, "{v}");
            } else {
                assert_eq!(theirs.code, 77, "{verb}: {v}");
            }
        }
    }
    // Own device: answered in full.
    let own = ask("is-link-valid --device leaf.dc1 --port Gi1/0/5".into());
    assert_eq!(own.json()["data"]["valid"], true, "{}", own.stdout);
    // The inventory holds only the caller's devices, on both fronts.
    let list = ask("get-switches".into()).json();
    let names: Vec<&str> = list["data"]["switches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["leaf"], "{list}");
    let rpc = jsonrpc(&lab, "get_switches", json!({}));
    assert_eq!(rpc.rc, 0, "{rpc:?}");
    assert!(
        rpc.printed.contains("leaf") && !rpc.printed.contains("other"),
        "{rpc:?}"
    );
}

#[test]
fn changes_to_other_callers_devices_are_refused_like_unknown_devices() {
    let lab = policy_lab();
    let before = seen(&lab, "other");
    let ops = [
        "attach-port --port Gi1/0/5 --vlan 120 --reason r",
        "detach-port --port Gi1/0/5 --vlan 120 --reason r",
        "update-port --port Gi1/0/5 --mode access --native-vlan 120 --reason r",
        "reset-port --port Gi1/0/5 --reason r",
        "add-network --vlan 130 --reason r",
        "delete-network --vlan 120 --reason r",
        "update-lag --lag 10 --member Gi1/0/5 --mode access --native-vlan 120 --reason r",
        "delete-lag --lag 10 --reason r",
    ];
    for op in ops {
        let (verb, rest) = op.split_once(' ').unwrap();
        for (other, unknown) in [
            ("other", "nosuch"),
            ("other.dc1", "nosuch.dc1"),
            ("02:00:00:00:0b:01", "02:00:00:00:0c:01"),
        ] {
            let theirs = forced(&lab, &format!("{verb} --device {other} {rest}"));
            let missing = forced(&lab, &format!("{verb} --device {unknown} {rest}"));
            theirs.expect(77, "may not use device", op);
            assert_eq!(
                theirs.msg.replace(other, "REF"),
                missing.msg.replace(unknown, "REF"),
                "{op}"
            );
            // By alias or MAC, the device's own name never shows.
            if other != "other" {
                assert!(!theirs.printed.contains("\"other\""), "{op}: {theirs:?}");
            }
        }
    }
    // Ironic's calls, by device name and by MAC.
    for switch in ["other", "02:00:00:00:0b:01"] {
        for (method, params) in [
            (
                "update_port",
                json!({"switch_id": switch, "port_name": "Gi1/0/5", "description": "d",
                    "mode": "access", "native_vlan": 120, "allowed_vlans": null,
                    "lag_name": null, "default_vlan": null}),
            ),
            (
                "reset_port",
                json!({"switch_id": switch, "port_name": "Gi1/0/5", "native_vlan": 120,
                    "allowed_vlans": null, "default_vlan": null}),
            ),
            (
                "delete_lag",
                json!({"switch_ids": [switch], "lag_name": "Po10"}),
            ),
        ] {
            let a = jsonrpc(&lab, method, params.clone());
            a.expect(77, "may not use device", method);
            let mut p = params;
            let unknown = if switch == "other" {
                "nosuch"
            } else {
                "02:00:00:00:0c:01"
            };
            let text = p.to_string().replace(switch, unknown);
            p = serde_json::from_str(&text).unwrap();
            let b = jsonrpc(&lab, method, p);
            let strip = |m: &str| {
                m.split(" [mercury rc")
                    .next()
                    .unwrap_or_default()
                    .to_string()
            };
            assert_eq!(
                strip(&a.msg).replace(switch, "REF"),
                strip(&b.msg).replace(unknown, "REF")
            );
        }
    }
    assert_eq!(
        seen(&lab, "other"),
        before,
        "another caller's device was touched"
    );
}

#[test]
fn invisible_format_characters_are_refused_in_free_text() {
    let lab = policy_lab();
    let before = seen(&lab, "leaf");
    for c in [
        '\u{061c}',
        '\u{2060}',
        '\u{00ad}',
        '\u{180e}',
        '\u{200b}',
        '\u{e0041}',
    ] {
        let text = format!("CHG-1{c}2");
        for via in VIAS {
            let a = attach(&lab, via, "leaf", &text);
            // The forced-command grammar refuses it as a usage error (64) before the request
            // layer (65) would; JSON-RPC carries it as the description.
            assert!(matches!(a.rc, 64 | 65), "{c:?} {via:?}: {a:?}");
            assert!(
                !a.msg.contains(c),
                "{c:?} {via:?}: the message carries it: {a:?}"
            );
        }
        let r = lab
            .mercury([
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
                &text,
                "--reason",
                "r",
            ])
            .run();
        r.expect(65);
        assert_eq!(seen(&lab, "leaf"), before, "{c:?}: the switch was touched");
    }
}

#[test]
fn vlan_lists_with_empty_items_are_refused() {
    let lab = policy_lab();
    let before = seen(&lab, "leaf");
    for list in ["100,,101", "100,", ",100", "100, ,101", "100,101,"] {
        let argv = lab
            .mercury([
                "update-port",
                "--device",
                "leaf",
                "--port",
                "Gi1/0/5",
                "--mode",
                "trunk",
                "--allowed-vlans",
                list,
                "--reason",
                "r",
            ])
            .run();
        let run = lab
            .mercury(["run"])
            .stdin(
                &json!({"op": "update_port", "device": "leaf", "port": "Gi1/0/5", "mode": "trunk",
                    "allowed_vlans": list, "reason": "r"})
                .to_string(),
            )
            .run();
        let ssh = lab
            .mercury(["serve-ssh", "--caller", "tester"])
            .env(
                "SSH_ORIGINAL_COMMAND",
                &format!("update-port --device leaf --port Gi1/0/5 --mode trunk --allowed-vlans '{list}' --reason r"),
            )
            .run();
        // serve-jsonrpc takes VLAN lists as JSON integers only; nothing to normalise there.
        for (via, r) in [("argv", argv), ("run", run), ("serve-ssh", ssh)] {
            Answer::from_ran(&r).expect(65, "VLAN list", &format!("{list:?} {via}"));
        }
        assert_eq!(
            seen(&lab, "leaf"),
            before,
            "{list:?}: the switch was touched"
        );
    }
}

// ---- items 1-4: what a caller may touch on its own device ------------------------------

/// `leaf` with the network team's VLANs 300-302 on trunk `Gi1/0/9` (next to VLAN 120), and
/// callers `tester` (serve-ssh) and `ironic` (serve-jsonrpc) limited to VLANs 10 and
/// 100-199 on it, while the device itself allows 300-305 too.
fn vlan_policy_lab() -> Lab {
    let lab = Lab::with_defaults(
        &[SimDevice::new("leaf", "cisco_ios")],
        "default_vlan = 10\nallowed_vlans = [\"10\", \"100-199\", \"300-305\"]\nmanage_vlans = true\n",
    );
    lab.append_config(
        "\n[callers.tester]\ndevices = [\"leaf\"]\nallowed_vlans = [\"10\", \"100-199\"]\n\n[callers.ironic]\ndevices = [\"leaf\"]\nallowed_vlans = [\"10\", \"100-199\"]\n",
    );
    for vlan in ["10", "120", "150", "300", "301", "302"] {
        lab.mercury([
            "add-network",
            "--device",
            "leaf",
            "--vlan",
            vlan,
            "--reason",
            "setup",
        ])
        .run()
        .expect(0);
    }
    lab.mercury([
        "update-port",
        "--device",
        "leaf",
        "--port",
        "Gi1/0/9",
        "--mode",
        "trunk",
        "--allowed-vlans",
        "120,300-302",
        "--reason",
        "network team",
    ])
    .run()
    .expect(0);
    std::fs::write(lab.path("htpasswd"), HTPASSWD).unwrap();
    common::set_mode(&lab.path("htpasswd"), 0o600);
    lab
}

/// `serve-ssh --caller tester run` with this JSON request on stdin.
fn forced_json(lab: &Lab, request: Value) -> Answer {
    forced_with(lab, "run", Some(&request.to_string()))
}

/// Well-formed requests a scoped caller may not make on its own device — a VLAN outside
/// its range by id, and changes that would take the network team's VLANs off a trunk
/// (reset, re-mode, detach, LAG) — over the forced command, `run` behind serve-ssh and
/// Ironic's JSON-RPC: each is 77 and the switch receives nothing.
#[test]
fn vlans_and_removals_outside_the_callers_policy_are_refused_everywhere() {
    let lab = vlan_policy_lab();
    let trunk = lab.port("leaf", "GigabitEthernet1/0/9");
    assert_eq!(
        trunk["allowed_vlans"],
        json!([120, 300, 301, 302]),
        "{trunk}"
    );
    let forced_cases = [
        "attach-port --device leaf --port Gi1/0/5 --vlan 300 --reason r",
        "attach-port --device leaf --port Gi1/0/5 --vlan 4000 --reason r",
        "update-port --device leaf --port Gi1/0/5 --mode trunk --allowed-vlans 120,300 --reason r",
        "add-network --device leaf --vlan 303 --reason r",
        "delete-network --device leaf --vlan 300 --reason r",
        "reset-port --device leaf --port Gi1/0/9 --reason r",
        "update-port --device leaf --port Gi1/0/9 --mode access --native-vlan 150 --reason r",
        "update-port --device leaf --port Gi1/0/9 --mode trunk --allowed-vlans 120,150 --reason r",
        "detach-port --device leaf --port Gi1/0/9 --vlan 300 --mode trunk --reason r",
        "update-lag --device leaf --lag 10 --member Gi1/0/5 --mode trunk --allowed-vlans 300 --reason r",
    ];
    let json_cases = [
        json!({"op": "attach_port", "device": "leaf", "port": "Gi1/0/5", "vlan": 300, "reason": "r"}),
        json!({"op": "reset_port", "device": "leaf", "port": "Gi1/0/9", "reason": "r"}),
        json!({"op": "update_port", "device": "leaf", "port": "Gi1/0/9", "mode": "access",
            "native_vlan": 150, "reason": "r"}),
        json!({"op": "delete_network", "device": "leaf", "vlan": 301, "reason": "r"}),
    ];
    let rpc_cases = [
        (
            "update_port",
            json!({"switch_id": "leaf", "port_name": "Gi1/0/5", "description": "d",
                "mode": "access", "native_vlan": 300, "allowed_vlans": null,
                "lag_name": null, "default_vlan": null}),
        ),
        (
            "update_port",
            json!({"switch_id": "leaf", "port_name": "Gi1/0/9", "description": "d",
                "mode": "access", "native_vlan": 150, "allowed_vlans": null,
                "lag_name": null, "default_vlan": null}),
        ),
        (
            "update_port",
            json!({"switch_id": "leaf", "port_name": "Gi1/0/5", "description": "d",
                "mode": "trunk", "native_vlan": 120, "allowed_vlans": [150, 301],
                "lag_name": null, "default_vlan": null}),
        ),
        (
            "reset_port",
            json!({"switch_id": "leaf", "port_name": "Gi1/0/9", "native_vlan": 120,
                "allowed_vlans": null, "default_vlan": null}),
        ),
    ];
    // A removal is judged on what the port carries, so the port may be read (terminal
    // setup, `show`); no configuration line may be sent and nothing may change.
    let before = seen(&lab, "leaf");
    let untouched = |what: &str| {
        let now = seen(&lab, "leaf");
        assert!(
            now.running == before.running,
            "{what}: the running configuration changed"
        );
        let sent = lab.transcript("leaf");
        let config: Vec<&String> = sent[before.lines..]
            .iter()
            .filter(|l| !(l.starts_with("terminal ") || l.starts_with("show ") || *l == "exit"))
            .collect();
        assert!(config.is_empty(), "{what}: sent {config:?}");
    };
    for c in forced_cases {
        forced(&lab, c).expect(77, "", c);
        untouched(c);
    }
    for c in json_cases {
        let what = c.to_string();
        forced_json(&lab, c).expect(77, "", &what);
        untouched(&what);
    }
    for (method, params) in rpc_cases {
        let what = format!("{method} {params}");
        jsonrpc(&lab, method, params).expect(77, "", &what);
        untouched(&what);
    }
    // The same requests within the caller's range work (so the refusals are policy).
    forced(
        &lab,
        "attach-port --device leaf --port Gi1/0/5 --vlan 150 --reason r",
    )
    .expect(0, "", "within range");
    assert_eq!(lab.port("leaf", "GigabitEthernet1/0/5")["access_vlan"], 150);
    assert_eq!(
        lab.port("leaf", "GigabitEthernet1/0/9")["allowed_vlans"],
        json!([120, 300, 301, 302]),
        "the network team's VLANs are still on the trunk"
    );
}
