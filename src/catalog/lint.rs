//! The catalog lint: a catalog that parses is not yet one that works. Every mode reachable,
//! every template variable known, every operation templated (or a driver action) or declared
//! unsupported, sample
//! prompts matching their own mode only, the `[verify]` table complete.

use std::collections::BTreeMap;

use super::*;

/// Actions every platform must either template or declare unsupported.
const REQUIRED_ACTIONS: &[&str] = &[
    "network_add",
    "network_delete",
    "access_set",
    "access_remove",
    "trunk_mode",
    "native_set",
    "native_remove",
    "allowed_set",
    "allowed_add",
    "allowed_remove",
    "port_reset",
    "enable",
    "disable",
    "description",
    "description_clear",
    "mtu",
    "lag_create",
    "lag_delete",
    "lag_member_add",
    "lag_member_remove",
    "plug",
    "unplug",
];

fn lint_platform(p: &Platform) -> Vec<String> {
    let mut out = Vec::new();
    // Every pattern builds (a run builds a pattern only when it first matches one).
    for (what, r) in p.patterns() {
        if let Err(e) = r.build() {
            out.push(format!("{what} {:?}: {e}", r.as_str()));
        }
    }
    // Actions: known, variables allowed, required ones present or declared unsupported.
    let option_templates = p.options.iter().flat_map(|(name, o)| {
        o.templates.iter().flat_map(move |(value, actions)| {
            actions
                .iter()
                .map(move |(a, l)| (format!("options.{name}.templates.{value}.{a}"), a, l))
        })
    });
    for (what, action, lines) in p
        .templates
        .iter()
        .map(|(a, l)| (format!("templates.{a}"), a, l))
        .chain(option_templates)
    {
        let Some((_, allowed)) = ACTIONS.iter().find(|(a, _)| a == action) else {
            out.push(format!("{what}: unknown action"));
            continue;
        };
        for t in lines {
            for v in t.vars() {
                let derived =
                    matches!(v, "port_type" | "port_number" | "noun") && allowed.contains(&"port");
                if !allowed.contains(&v) && !derived && !p.options.contains_key(v) {
                    out.push(format!(
                        "{what}: variable {{{v}}} is not available here (known: {})",
                        allowed.join(", ")
                    ));
                }
            }
        }
    }
    out.extend(p.lint_options());
    for action in p.templates.keys() {
        if p.unsupported.contains_key(action) {
            out.push(format!("{action}: both templated and declared unsupported"));
        }
    }
    for action in p.unsupported.keys() {
        if !ACTIONS.iter().any(|(a, _)| a == action) {
            out.push(format!("unsupported.{action}: unknown action"));
        }
    }
    for action in &p.actions {
        if !ACTIONS.iter().any(|(a, _)| a == action) {
            out.push(format!("actions.{action}: unknown action"));
        }
        if p.unsupported.contains_key(action) {
            out.push(format!("{action}: both an action and declared unsupported"));
        }
    }
    match p.kind {
        Kind::Ovsdb if !p.templates.is_empty() => out.push(
            "kind ovsdb: the driver writes its transactions; templates are not used (list actions)"
                .into(),
        ),
        Kind::Cli | Kind::Exec if !p.actions.is_empty() => out.push(
            "actions: only kind ovsdb lists actions; templates say how other kinds type them"
                .into(),
        ),
        _ => {}
    }
    for action in REQUIRED_ACTIONS {
        if !p.supports(action) && !p.unsupported.contains_key(*action) {
            out.push(format!(
                "{action}: neither templated nor declared unsupported"
            ));
        }
    }
    if p.templates.contains_key("port_exit") && !p.templates.contains_key("port_enter") {
        out.push("port_exit without port_enter".into());
    }
    if p.templates.contains_key("lag_enter") && !p.templates.contains_key("port_enter") {
        out.push("lag_enter without port_enter".into());
    }
    for action in &p.own_context {
        if !PORT_ACTIONS.contains(&action.as_str()) {
            out.push(format!("own_context.{action}: not a port action"));
        }
    }
    if let Some(end) = &p.end_of_options {
        if p.kind != Kind::Exec {
            out.push("end_of_options: only exec platforms pass values as arguments".into());
        }
        if !end.starts_with('-') || end.contains(char::is_whitespace) {
            out.push(format!(
                "end_of_options {end:?}: expected one option-like word (`--`)"
            ));
        }
    }
    if p.exec_shell.is_some() && p.kind != Kind::Exec {
        out.push("exec_shell: only exec platforms run their lines in a shell".into());
    }
    if p.kind == Kind::Exec && p.templates.contains_key("port_enter") {
        out.push("exec platforms have no port context (port_enter)".into());
    }
    // Session lines are sent as written: a {variable} there would be typed literally.
    for (what, lines) in [
        ("on_open", &p.on_open),
        ("commit", &p.commit),
        ("abort", &p.abort),
        ("save", &p.save),
        ("close", &p.close),
    ] {
        for l in lines.iter() {
            if l.contains('{') || l.contains('}') {
                out.push(format!(
                    "{what}: {l:?} has a template variable; only templates are rendered"
                ));
            }
        }
    }
    for m in &p.modes {
        for l in m.enter.iter().chain(&m.exit) {
            if l.contains('{') || l.contains('}') {
                out.push(format!("mode {}: {l:?} has a template variable", m.name));
            }
        }
    }
    let lags = [
        "lag_create",
        "lag_delete",
        "lag_member_add",
        "lag_member_remove",
    ];
    if lags.iter().any(|a| p.supports(a)) && (p.lag_interface.is_none() || p.lag_pattern.is_none())
    {
        out.push("LAG templates need lag_interface and lag_pattern".into());
    }
    for keyword in ["lacp", "static"] {
        let uses_mode = p
            .templates
            .values()
            .flatten()
            .any(|t| t.vars().any(|v| v == "lacp_mode"));
        if uses_mode && !p.lag_modes.contains_key(keyword) {
            out.push(format!(
                "templates use {{lacp_mode}} but lag_modes has no {keyword:?}"
            ));
        }
    }
    let uses_noun = p
        .templates
        .values()
        .flatten()
        .any(|t| t.vars().any(|v| v == "noun"));
    if uses_noun && !(p.nouns.contains_key("port") && p.nouns.contains_key("lag")) {
        out.push("templates use {noun} but nouns lacks \"port\" or \"lag\"".into());
    }
    if let Some(t) = &p.port_names {
        out.extend(t.lint());
        for (_, canonical) in &t.samples {
            if !p.port_pattern.is_match(canonical) {
                out.push(format!(
                    "port_names.samples: {canonical:?} does not match port_pattern"
                ));
            }
        }
    }
    if p.network_types.is_empty() {
        out.push("network_types is empty".into());
    }
    out.extend(lint_verify(p));

    match p.kind {
        Kind::Exec | Kind::Ovsdb => {
            if !p.modes.is_empty() {
                out.push("exec platforms have no modes".into());
            }
        }
        Kind::Cli => out.extend(lint_modes(p)),
    }
    out
}

/// Every platform either reads ports back (show templates and a known parser) or says why
/// it cannot (`verify.unsupported`): never silently "verified".
fn lint_verify(p: &Platform) -> Vec<String> {
    let mut out = Vec::new();
    let spec = match &p.verify {
        Verify::Undeclared => {
            out.push(
                "verify: neither show lines with a parser nor verify.unsupported with a reason"
                    .into(),
            );
            return out;
        }
        Verify::Unsupported(why) => {
            if why.trim().is_empty() {
                out.push("verify.unsupported: give the reason".into());
            }
            return out;
        }
        Verify::Show(s) => s,
    };
    if !VERIFY_PARSERS.contains(&spec.parser.as_str()) {
        out.push(format!(
            "verify.parser {:?} is not one of {}",
            spec.parser,
            VERIFY_PARSERS.join(", ")
        ));
    }
    if p.vlans_by_name() && spec.vlan_table.is_none() {
        out.push("network_delete names VLANs by {vlan_name}: declare verify.vlan_table, the show line that lists VLANs by name and id, so that a request's id selects the VLAN".into());
    }
    if let Some(t) = &spec.vlan_table {
        if t.contains('{') {
            out.push("verify.vlan_table is sent as written: no {variables}".into());
        }
    }
    // The ovsdb driver reads OVSDB itself; everyone else needs show lines.
    let ovsdb = spec.parser == "ovsdb";
    if ovsdb != (p.kind == Kind::Ovsdb) {
        out.push("verify.parser ovsdb is the ovsdb driver's own OVSDB read (kind ovsdb)".into());
    }
    if spec.show.is_empty() && !ovsdb {
        out.push("verify: no show lines (declare verify.unsupported with a reason instead)".into());
    }
    for t in &spec.show {
        for v in t.vars() {
            if !matches!(v, "port" | "port_type" | "port_number") {
                out.push(format!(
                    "verify.show: variable {{{v}}} is not available here (known: port, port_type, port_number)"
                ));
            }
        }
    }
    if let Some(m) = &spec.mode {
        match p.mode(m) {
            None => out.push(format!("verify.mode {m:?} is not a mode")),
            Some(mode) if mode.config => {
                out.push(format!("verify.mode {m:?} is a configuration mode"))
            }
            Some(_) => {}
        }
    }
    for (word, to) in &spec.modes {
        if !VERIFY_MODES.contains(&to.as_str()) {
            out.push(format!(
                "verify.modes.{word}: {to:?} is not one of {}",
                VERIFY_MODES.join(", ")
            ));
        }
    }
    if let Some(m) = spec.mode_default.as_deref() {
        if !VERIFY_MODES.contains(&m) {
            out.push(format!(
                "verify.mode_default {m:?} is not one of {}",
                VERIFY_MODES.join(", ")
            ));
        }
    }
    for f in &spec.unread {
        if !VERIFY_FIELDS.contains(&f.as_str()) {
            out.push(format!(
                "verify.unread: {f:?} is not a port field ({})",
                VERIFY_FIELDS.join(", ")
            ));
        }
    }
    out
}

fn lint_modes(p: &Platform) -> Vec<String> {
    let mut out = Vec::new();
    let mut names = BTreeSet::new();
    for m in &p.modes {
        if !names.insert(m.name.as_str()) {
            out.push(format!("mode {} defined twice", m.name));
        }
        if let Some(parent) = &m.parent {
            if p.mode(parent).is_none() {
                out.push(format!("mode {}: unknown parent {parent}", m.name));
            }
        }
        if m.parent.is_none() && (!m.enter.is_empty() || !m.exit.is_empty()) {
            out.push(format!("mode {}: enter/exit lines need a parent", m.name));
        }
    }
    if let Some(m) = &p.on_open_mode {
        if p.mode(m).is_none() {
            out.push(format!("on_open_mode {m:?} is not a mode"));
        }
    }
    for (what, mode) in [
        ("login_mode", &p.login_mode),
        ("config_mode", &p.config_mode),
        ("save_mode", &p.save_mode),
    ] {
        if p.mode(mode).is_none() {
            out.push(format!("{what} {mode:?} is not a mode"));
        }
    }
    if let Some(mode) = &p.commit_leaves_to {
        if p.mode(mode).is_none() {
            out.push(format!("commit_leaves_to {mode:?} is not a mode"));
        }
        if p.commit.is_empty() {
            out.push("commit_leaves_to without commit lines".into());
        }
    }
    if p.mode(&p.config_mode).is_some_and(|m| !m.config) {
        out.push(format!(
            "config_mode {} is not marked config = true",
            p.config_mode
        ));
    }
    // Every mode must be reachable from the login mode, and the login mode from every mode
    // (so a session can always get back to save and close).
    for m in &p.modes {
        if p.path(&p.login_mode, &m.name).is_none() && m.enter.is_empty() && m.config {
            // Submodes entered by template lines (config-if) need only a way out.
            if p.path(&m.name, &p.save_mode).is_none() {
                out.push(format!("mode {}: no way back to {}", m.name, p.save_mode));
            }
            continue;
        }
        if p.path(&p.login_mode, &m.name).is_none() {
            out.push(format!(
                "mode {} is not reachable from login mode {}",
                m.name, p.login_mode
            ));
        }
        if p.path(&m.name, &p.save_mode).is_none() {
            out.push(format!("mode {}: no way back to {}", m.name, p.save_mode));
        }
    }
    // Sample prompts: each matches its own mode and no other. As in a session, the host
    // name the sample shows is pinned before the other modes are tried.
    for (mode, samples) in &p.samples {
        let Some(own) = p.mode(mode) else {
            out.push(format!("samples.{mode}: not a mode"));
            continue;
        };
        for s in samples {
            let host = own.prompt.matches(s);
            if host.is_none() {
                out.push(format!(
                    "samples.{mode}: {s:?} does not match {:?}",
                    own.prompt.source
                ));
            }
            for other in p.modes.iter().filter(|o| o.name != *mode) {
                let pinned = host.flatten().and_then(|h| other.prompt.pinned(h));
                let hit = match &pinned {
                    Some(r) => r.is_match(s),
                    None => other.prompt.matches(s).is_some(),
                };
                if hit {
                    out.push(format!(
                        "samples.{mode}: {s:?} also matches mode {}",
                        other.name
                    ));
                }
            }
        }
    }
    for m in &p.modes {
        if !p.samples.contains_key(&m.name) {
            out.push(format!("mode {} has no sample prompts", m.name));
        }
    }
    out
}

impl Catalog {
    /// Compiles and lints every platform; an empty list means the catalog is sound.
    pub fn lint(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let mut names: BTreeMap<&str, &str> = BTreeMap::new();
        for (key, entry) in &self.entries {
            for a in std::iter::once(key).chain(&entry.aliases) {
                if let Some(other) = names.insert(a, key) {
                    if other != key {
                        problems.push(format!("{key}: name or alias {a:?} also names {other}"));
                    }
                }
            }
            match self.get(key) {
                Ok(p) => {
                    problems.extend(lint_platform(p).into_iter().map(|m| format!("{key}: {m}")))
                }
                Err(e) => problems.push(e.to_string()),
            }
        }
        problems
    }
}
