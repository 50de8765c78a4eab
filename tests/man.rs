#![allow(clippy::expect_used, clippy::unwrap_used)]
//! The committed man pages are generated from the clap definitions; this test fails when
//! they are stale. Regenerate with `MERCURY_UPDATE_MAN=1 cargo test --test man`.

use std::path::{Path, PathBuf};

/// A page: clap's title, name, synopsis, description, options and subcommands (without the
/// generated `help` subcommand), then the hand-written sections of `intake::manual`, then
/// the version.
fn render(cmd: clap::Command) -> Vec<u8> {
    let cmd = cmd.disable_help_subcommand(true);
    let name = cmd.get_name().to_string();
    let man = clap_mangen::Man::new(cmd.clone());
    let mut buf = Vec::new();
    man.render_title(&mut buf).expect("title");
    man.render_name_section(&mut buf).expect("name");
    man.render_synopsis_section(&mut buf).expect("synopsis");
    man.render_description_section(&mut buf)
        .expect("description");
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut buf).expect("options");
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        man.render_subcommands_section(&mut buf)
            .expect("subcommands");
    }
    for (title, body) in mercury::intake::manual::sections(&name) {
        buf.extend_from_slice(format!(".SH \"{title}\"\n{body}").as_bytes());
        if !body.ends_with('\n') {
            buf.push(b'\n');
        }
    }
    man.render_version_section(&mut buf).expect("version");
    buf
}

fn pages() -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    let root = mercury::intake::cli::command()
        .version(env!("CARGO_PKG_VERSION"))
        .disable_help_subcommand(true);
    let mut out = vec![(dir.join("mercury.1"), render(root.clone()))];
    for sub in root.get_subcommands() {
        let name = format!("mercury-{}", sub.get_name());
        let leaked: &'static str = Box::leak(name.clone().into_boxed_str());
        let mut page = sub.clone().name(leaked).version(env!("CARGO_PKG_VERSION"));
        // A subcommand's arguments are deferred until it is built.
        page.build();
        out.push((dir.join(format!("{name}.1")), render(page)));
    }
    out
}

#[test]
fn man_pages_are_current() {
    let update = std::env::var_os("MERCURY_UPDATE_MAN").is_some();
    for (path, text) in pages() {
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        let committed = std::fs::read(&path).unwrap_or_default();
        assert!(
            committed == text,
            "{} is stale: run MERCURY_UPDATE_MAN=1 cargo test --test man",
            path.display()
        );
    }
}

#[test]
fn pages_have_the_sections_people_look_for_and_no_dangling_references() {
    let pages = pages();
    let names: Vec<String> = pages
        .iter()
        .map(|(p, _)| p.file_stem().unwrap().to_str().unwrap().to_string())
        .collect();
    let reference = regex::Regex::new(r"(mercury(?:\\-[a-z]+)*)\(1\)").unwrap();
    for (path, text) in &pages {
        let text = String::from_utf8(text.clone()).unwrap();
        let main = path.ends_with("mercury.1");
        let mut wanted = vec!["NAME", "SYNOPSIS", "DESCRIPTION", "EXIT STATUS", "SEE ALSO"];
        if main {
            wanted.extend(["FILES", "ENVIRONMENT", "EXAMPLES"]);
        }
        for section in wanted {
            assert!(
                text.contains(&format!(".SH {section}"))
                    || text.contains(&format!(".SH \"{section}\"")),
                "{}: no {section}",
                path.display()
            );
        }
        // Every page it refers to exists.
        for r in reference.captures_iter(&text) {
            let page = r[1].replace("\\-", "-");
            assert!(
                names.contains(&page),
                "{} refers to {page}(1), which does not exist",
                path.display()
            );
        }
        // NAME is "mercury \- Put ...", not "mercury \- mercury: ...".
        let name_line = text
            .lines()
            .skip_while(|l| *l != ".SH NAME")
            .nth(1)
            .unwrap();
        let (page, what) = name_line.split_once(" \\- ").unwrap();
        assert!(
            !what.starts_with(&format!("{page}:")) && !what.starts_with("mercury:"),
            "{name_line}"
        );
    }
    assert!(!names.contains(&"mercury-help".to_string()));
}

#[test]
fn main_page_documents_exit_codes() {
    let page = String::from_utf8(render(mercury::intake::cli::command())).unwrap();
    for code in ["64", "65", "69", "75", "77", "78"] {
        assert!(
            page.contains(code),
            "exit code {code} missing from mercury(1)"
        );
    }
}
