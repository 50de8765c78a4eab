//! `--format text`: the result rendered for people. The same facts as the JSON object —
//! status, operation, device, exit code, message, lines sent, warnings — and each kind of
//! answer (`data`) in its own shape, and a partly applied change line by line: a table for `get_switches` and `check`, a before/after
//! listing for a diff, the import report for `import_ngs`, `key: value` lines otherwise.
//! Nothing here decides anything; it only lays out a finished [`Report`].

use serde_json::Value;

use super::Report;

/// Lays `rows` out in columns under `headers` (left-aligned, two spaces apart).
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, cell) in r.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(cell.chars().count());
            }
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            let last = i + 1 == cells.len();
            if last {
                s.push_str(c);
            } else {
                let pad = widths[i].saturating_sub(c.chars().count());
                s.push_str(c);
                s.push_str(&" ".repeat(pad + 2));
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(headers.to_vec());
    for r in rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    out
}

/// A JSON value as one short cell: strings bare, lists comma-joined, `null` as `-`.
fn cell(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) if s.is_empty() => "-".into(),
        Value::String(s) => safe(s),
        Value::Array(a) if a.is_empty() => "-".into(),
        Value::Array(a) => a.iter().map(cell).collect::<Vec<_>>().join(","),
        Value::Bool(b) => if *b { "yes" } else { "no" }.into(),
        other => other.to_string(),
    }
}

/// `s` with control and format characters escaped (a value can never move the cursor or
/// reorder a terminal line), everything else as it is.
fn safe(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if crate::request::validate::is_dangerous(c) {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// [`safe`] for each line of a multi-line text.
fn safe_lines(s: &str) -> String {
    s.lines().map(safe).collect::<Vec<_>>().join("\n")
}

fn indent(text: &str, by: &str) -> String {
    text.lines().map(|l| format!("{by}{l}\n")).collect()
}

/// The whole text rendering of `r`.
pub fn render(r: &Report) -> String {
    let mut out = String::new();
    let status = if r.ok {
        if r.dry_run {
            "planned"
        } else if r.changed {
            "changed"
        } else {
            "ok"
        }
    } else if r.changed {
        // A failure after part of the change reached the device (DESIGN §4).
        "FAILED, CHANGED"
    } else {
        "FAILED"
    };
    let what = [r.op.as_deref(), r.device.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" on ");
    let platform = r
        .platform
        .as_deref()
        .map(|p| format!(" ({p})"))
        .unwrap_or_default();
    let what = if what.is_empty() {
        String::new()
    } else {
        format!(" {what}{platform}")
    };
    out.push_str(&format!("{status}:{what} [rc {}", r.rc));
    if let Some(k) = r.error_kind {
        out.push_str(&format!(", {k}"));
    }
    out.push_str(&format!(
        ", {} ms, request {}]\n",
        r.elapsed_ms, r.request_id
    ));
    if !r.msg.is_empty() {
        out.push_str(&indent(&safe_lines(&r.msg), "  "));
    }
    for c in &r.commands {
        out.push_str(&format!("  > {}\n", safe(&c.input)));
        for l in c.output.lines().filter(|l| !l.trim().is_empty()) {
            out.push_str(&format!("    {}\n", safe(l)));
        }
    }
    if let Some(p) = &r.partial {
        out.push_str(&format!(
            "\npartly applied: {}\n",
            if p.took_effect {
                "some of the change is in effect"
            } else {
                "nothing took effect"
            }
        ));
        for l in &p.accepted {
            out.push_str(&format!("  accepted:  {}\n", safe(l)));
        }
        if let Some(l) = &p.rejected {
            out.push_str(&format!("  rejected:  {}\n", safe(l)));
        }
        if let Some(l) = &p.in_flight {
            out.push_str(&format!(
                "  in flight: {} (may have taken effect)\n",
                safe(l)
            ));
        }
        for l in &p.unconfirmed {
            out.push_str(&format!(
                "  unconfirmed: {} (typed ahead, may have taken effect)\n",
                safe(l)
            ));
        }
        match p.saved {
            Some(true) => out.push_str("  saved:     yes\n"),
            Some(false) => out.push_str("  saved:     NO (the saved configuration differs)\n"),
            None => {}
        }
    }
    let data = data(r);
    if !data.is_empty() {
        out.push('\n');
        out.push_str(&data);
    }
    if let Some(diff) = &r.diff {
        out.push('\n');
        out.push_str(&render_diff(diff));
    }
    if !r.warnings.is_empty() && r.op.as_deref() != Some("import_ngs") {
        out.push('\n');
        for w in &r.warnings {
            out.push_str(&format!("warning: {}\n", safe(w)));
        }
    }
    out
}

/// `data`, in the shape of its kind.
fn data(r: &Report) -> String {
    let d = &r.data;
    if d.is_null() {
        return String::new();
    }
    if let Some(list) = d.get("switches").and_then(Value::as_array) {
        return switches(list);
    }
    if d.get("problems").is_some() && d.get("platforms").is_some() {
        return check(d);
    }
    if r.op.as_deref() == Some("import_ngs") {
        return import(d);
    }
    key_values(d, "")
}

fn switches(list: &[Value]) -> String {
    let rows: Vec<Vec<String>> = list
        .iter()
        .map(|s| {
            vec![
                cell(&s["name"]),
                cell(&s["platform"]),
                cell(&s["transport"]),
                cell(&s["address"]),
                cell(&s["mac"]),
                cell(&s["default_vlan"]),
                cell(&s["allowed_vlans"]),
                cell(&s["manage_vlans"]),
                cell(&s["aliases"]),
            ]
        })
        .collect();
    table(
        &[
            "DEVICE",
            "PLATFORM",
            "TRANSPORT",
            "ADDRESS",
            "MAC",
            "IDLE VLAN",
            "ALLOWED VLANS",
            "MANAGES VLANS",
            "ALIASES",
        ],
        &rows,
    )
}

fn check(d: &Value) -> String {
    let mut out = String::new();
    if let Some(devices) = d.get("connect").and_then(Value::as_array) {
        let rows: Vec<Vec<String>> = devices
            .iter()
            .map(|c| {
                vec![
                    cell(&c["device"]),
                    cell(&c["platform"]),
                    if c["ok"] == Value::Bool(true) {
                        "ok".into()
                    } else {
                        "FAILED".into()
                    },
                    cell(&c["rc"]),
                    cell(&c["detail"]),
                ]
            })
            .collect();
        out.push_str(&table(
            &["DEVICE", "PLATFORM", "RESULT", "RC", "DETAIL"],
            &rows,
        ));
    }
    if let Some(problems) = d["problems"].as_array().filter(|p| !p.is_empty()) {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str("problems:\n");
        for p in problems {
            out.push_str(&format!("  - {}\n", cell(p)));
        }
    }
    if out.is_empty() {
        if let Some(n) = d["platforms"].as_array().map(Vec::len) {
            out.push_str(&format!("{n} platforms in the catalog\n"));
        }
    }
    out
}

fn import(d: &Value) -> String {
    let mut out = String::new();
    for (label, key) in [
        ("devices", "devices"),
        ("skipped", "skipped"),
        ("written", "written"),
    ] {
        if let Some(a) = d[key].as_array().filter(|a| !a.is_empty()) {
            out.push_str(&format!("{label}: {}\n", cell(&Value::Array(a.clone()))));
        }
    }
    if let Some(notes) = d["unmapped"].as_array().filter(|a| !a.is_empty()) {
        out.push_str("\nno exact equivalent:\n");
        let rows: Vec<Vec<String>> = notes
            .iter()
            .map(|n| {
                vec![
                    cell(&n["device"]),
                    cell(&n["key"]),
                    cell(&n["at"]),
                    cell(&n["message"]),
                ]
            })
            .collect();
        out.push_str(&indent(
            &table(&["SWITCH", "NGS KEY", "AT", "WHAT NOW"], &rows),
            "  ",
        ));
    }
    if let Some(t) = d["toml"].as_str() {
        out.push_str("\nmercury.toml:\n");
        out.push_str(&indent(t, "  "));
    }
    out
}

/// Flat `key: value` lines; nested objects indented, lists of objects as JSON lines.
fn key_values(v: &Value, prefix: &str) -> String {
    match v {
        Value::Object(m) => {
            let mut out = String::new();
            for (k, val) in m {
                match val {
                    Value::Object(inner) if !inner.is_empty() => {
                        out.push_str(&format!("{prefix}{k}:\n"));
                        out.push_str(&key_values(val, &format!("{prefix}  ")));
                    }
                    Value::Array(a) if a.iter().any(|x| x.is_object()) => {
                        out.push_str(&format!("{prefix}{k}:\n"));
                        for x in a {
                            out.push_str(&format!("{prefix}  - {x}\n"));
                        }
                    }
                    other => out.push_str(&format!("{prefix}{k}: {}\n", cell(other))),
                }
            }
            out
        }
        other => format!("{prefix}{}\n", cell(other)),
    }
}

/// Ansible's diff list (`before_header`, `before`, `after_header`, `after`) as `-`/`+`
/// lines per field that differs, and `=` for the ones that stayed.
fn render_diff(diff: &Value) -> String {
    let mut out = String::new();
    for d in diff.as_array().into_iter().flatten() {
        let header = d["after_header"]
            .as_str()
            .unwrap_or_default()
            .trim_end_matches(" (after)");
        out.push_str(&format!("--- {header}\n"));
        let empty = serde_json::Map::new();
        let before = d["before"].as_object().unwrap_or(&empty);
        let after = d["after"].as_object().unwrap_or(&empty);
        let mut keys: Vec<&String> = before.keys().chain(after.keys()).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            let (b, a) = (
                before.get(k).unwrap_or(&Value::Null),
                after.get(k).unwrap_or(&Value::Null),
            );
            if b == a {
                out.push_str(&format!("  = {k}: {}\n", cell(b)));
            } else {
                out.push_str(&format!("  - {k}: {}\n  + {k}: {}\n", cell(b), cell(a)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tables_align_their_columns() {
        let t = table(
            &["A", "LONGER"],
            &[
                vec!["xyz".into(), "1".into()],
                vec!["q".into(), "22".into()],
            ],
        );
        assert_eq!(t, "A    LONGER\nxyz  1\nq    22\n");
    }

    #[test]
    fn a_diff_shows_what_changed() {
        let d = json!([{"before_header": "Gi1/0/5 (before)", "after_header": "Gi1/0/5 (after)",
            "before": {"mode": "access", "access_vlan": 10}, "after": {"mode": "access", "access_vlan": 120}}]);
        assert_eq!(
            render_diff(&d),
            "--- Gi1/0/5\n  - access_vlan: 10\n  + access_vlan: 120\n  = mode: access\n"
        );
    }

    #[test]
    fn switches_become_a_table_and_never_json() {
        let mut r = Report::new("r".into());
        r.op = Some("get_switches".into());
        r.msg = "1 devices".into();
        r.data = json!({"switches": [{"name": "leaf-1", "platform": "cisco_ios", "transport": "ssh",
            "address": "192.0.2.10", "mac": null, "default_vlan": 10, "allowed_vlans": "100-199",
            "manage_vlans": true, "aliases": []}]});
        let t = render(&r);
        assert!(t.contains("DEVICE"), "{t}");
        assert!(
            t.lines()
                .any(|l| l.starts_with("leaf-1  ") && l.contains("100-199")),
            "{t}"
        );
        assert!(!t.contains('{'), "{t}");
    }
}
