#![allow(clippy::expect_used, clippy::unwrap_used)]
//! The committed man pages are generated from the clap definitions; this test fails when
//! they are stale. Regenerate with `MERCURY_UPDATE_MAN=1 cargo test --test man`.

use std::path::{Path, PathBuf};

fn render(cmd: clap::Command) -> Vec<u8> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut buf)
        .expect("render man page");
    buf
}

fn pages() -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    let root = mercury::intake::cli::command().version(env!("CARGO_PKG_VERSION"));
    let mut out = vec![(dir.join("mercury.1"), render(root.clone()))];
    for sub in root.get_subcommands() {
        let name = format!("mercury-{}", sub.get_name());
        let leaked: &'static str = Box::leak(name.clone().into_boxed_str());
        let page = sub.clone().name(leaked).version(env!("CARGO_PKG_VERSION"));
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
fn main_page_documents_exit_codes() {
    let page = String::from_utf8(render(mercury::intake::cli::command())).unwrap();
    for code in ["64", "65", "69", "75", "77", "78"] {
        assert!(
            page.contains(code),
            "exit code {code} missing from mercury(1)"
        );
    }
}
