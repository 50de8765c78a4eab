//! The README a newcomer reads first stays true: its shell examples run against the bundled
//! lab as written (every `scripts/lab …` and `mercury …` line of its `sh` blocks, in order,
//! on a copy of examples/lab), and every relative link in README.md and docs/ points at a
//! file inside the repository.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The commands of the README's ```sh blocks, continuation lines joined, comments kept
/// (the shell ignores them).
fn sh_commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut pending = String::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_sh = line.trim() == "```sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        if let Some(head) = line.strip_suffix('\\') {
            pending.push_str(head);
            continue;
        }
        pending.push_str(line);
        let cmd = std::mem::take(&mut pending);
        if !cmd.trim().is_empty() {
            out.push(cmd.trim().to_string());
        }
    }
    out
}

/// Commands that need more than the lab: a test run, a build, an install, an executor.
fn needs_more_than_the_lab(cmd: &str) -> bool {
    [
        "scripts/test",
        "scripts/deb",
        "cargo ",
        "ssh ",
        "scripts/lab-ssh",
    ]
    .iter()
    .any(|p| cmd.starts_with(p))
}

#[test]
fn readme_shell_examples_run_against_the_lab() {
    let text = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let commands: Vec<String> = sh_commands(&text)
        .into_iter()
        .filter(|c| !needs_more_than_the_lab(c))
        .collect();
    assert!(
        commands.len() >= 12,
        "only {} commands found: {commands:?}",
        commands.len()
    );
    let lab = tempfile::tempdir().unwrap();
    let config = lab.path().join("mercury.toml");
    std::fs::copy(repo().join("examples/lab/mercury.toml"), &config).unwrap();
    common::set_mode(&config, 0o600);
    let bin = common::sim_bin().parent().unwrap().to_path_buf();
    for cmd in &commands {
        let out = std::process::Command::new("bash")
            .args(["-c", cmd])
            .current_dir(repo())
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    bin.display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            )
            .env("MERCURY_CONFIG", &config)
            .env("MERCURY_LAB_DIR", lab.path())
            .env("LAB_NO_BUILD", "1")
            .env("CARGO_TARGET_DIR", bin.parent().unwrap())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "README command failed ({}): {cmd}\nstdout:\n{}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn relative_links_point_inside_the_repository() {
    let root = repo().canonicalize().unwrap();
    let mut files = vec![root.join("README.md")];
    for e in std::fs::read_dir(root.join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            files.push(p);
        }
    }
    let link = regex::Regex::new(r"\]\(([^)\t\n\r ]+)\)").unwrap();
    let mut checked = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for c in link.captures_iter(&text) {
            let target = c[1].split('#').next().unwrap();
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let resolved = f.parent().unwrap().join(target);
            let Ok(real) = resolved.canonicalize() else {
                panic!("{}: link to {target} points at nothing", f.display());
            };
            assert!(
                real.starts_with(&root),
                "{}: link to {target} leaves the repository",
                f.display()
            );
            checked += 1;
        }
    }
    assert!(checked > 20, "only {checked} links checked");
}
