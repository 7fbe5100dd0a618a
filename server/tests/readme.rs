//! Every `solve` command of the README runs as shown, with the real `gamesolver` binary: it
//! exits with status 0, and where the README states the value (`# value V` after the command,
//! or `value V` at the end of the comment line right above it), a `--json` run prints it.
//!
//! Not run here, each for a reason named in [`skipped`]: commands that need a running
//! coordinator (the service tests in `tests/` run `solve --coordinator`), a book file that
//! another command builds (minutes), docker, or the benchmark command (its own tests).

use std::process::Command;

/// Commands of the README's shell code blocks (```` ```sh ````), with continuation lines joined;
/// each with the comment line right above it (if any).
fn readme_commands() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    let mut out = Vec::new();
    let mut in_block = false;
    let mut shell = false;
    let mut comment = String::new();
    let mut pending = String::new();
    for line in text.lines() {
        if let Some(lang) = line.trim_start().strip_prefix("```") {
            // Shell blocks hold commands; plain blocks hold usage synopses and layouts.
            shell = !in_block && matches!(lang.trim(), "sh" | "bash" | "shell");
            in_block = !in_block;
            comment.clear();
            continue;
        }
        if !shell {
            continue;
        }
        if !in_block {
            continue;
        }
        let t = line.trim();
        if t.starts_with('#') {
            comment = t.trim_start_matches('#').trim().to_string();
            continue;
        }
        if let Some(head) = t.strip_suffix('\\') {
            pending.push_str(head);
            pending.push(' ');
            continue;
        }
        pending.push_str(t);
        let full = std::mem::take(&mut pending);
        if !full.is_empty() {
            out.push((full, std::mem::take(&mut comment)));
        }
    }
    out
}

/// Splits a shell command line: spaces separate words, double quotes group them.
fn words(cmd: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in cmd.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            _ => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

/// Why a README command is not run here, or `None` to run it.
fn skipped(args: &[String]) -> Option<&'static str> {
    let has = |w: &str| {
        args.iter()
            .any(|a| a == w || a.starts_with(&format!("{w}=")))
    };
    if has("--coordinator") {
        Some("needs a running coordinator (tests/tests/service.rs runs solve --coordinator)")
    } else if args.iter().any(|a| a.starts_with("book=")) {
        Some("needs the book that `gamesolver book` builds")
    } else {
        None
    }
}

#[test]
fn every_solve_command_in_the_readme_runs_as_shown() {
    let mut ran = 0;
    for (line, comment) in readme_commands() {
        let (cmd, trailing) = match line.split_once(" # ") {
            Some((c, t)) => (c.trim().to_string(), t.trim().to_string()),
            None => (line.trim().to_string(), String::new()),
        };
        let w = words(&cmd);
        // `cargo run --release -p gamesolver -- ARGS`, `gamesolver ARGS`,
        // `target/release/gamesolver ARGS`: the binary under test with ARGS.
        let args: Vec<String> = match w.iter().position(|x| x == "--") {
            Some(i) if w.first().map(String::as_str) == Some("cargo") => w[i + 1..].to_vec(),
            _ if w
                .first()
                .is_some_and(|x| x == "gamesolver" || x.ends_with("/gamesolver")) =>
            {
                w[1..].to_vec()
            }
            _ => continue,
        };
        if args.first().map(String::as_str) != Some("solve") {
            continue;
        }
        if let Some(why) = skipped(&args) {
            eprintln!("not run: {cmd}: {why}");
            continue;
        }
        let out = Command::new(env!("CARGO_BIN_EXE_gamesolver"))
            .args(&args)
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
            .output()
            .expect("run gamesolver");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "README command failed: {cmd}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // A value the README states next to the command.
        let stated = [trailing.as_str(), comment.as_str()]
            .iter()
            .find_map(|c| c.rsplit_once("value ").map(|(_, v)| v.trim().to_string()))
            .filter(|v| !v.is_empty());
        if let Some(v) = stated {
            assert!(
                args.iter().any(|a| a == "--json"),
                "{cmd}: state values with --json"
            );
            let json: serde_json::Value = serde_json::from_str(stdout.trim())
                .unwrap_or_else(|e| panic!("{cmd}: not JSON ({e}): {stdout}"));
            assert_eq!(json["value"].to_string(), v, "{cmd}: {json}");
        }
        ran += 1;
    }
    assert!(
        ran >= 4,
        "only {ran} README commands found: has the README's format changed?"
    );
}
