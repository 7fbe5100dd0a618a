//! The README's "Limits of a job", `gamesolver solve --help`, `gamesolver options --json`
//! (the answer of `GET /v1/options`) and `/openapi.json` show the same options with the same
//! bounds, for a few game and algorithm pairs of every kernel family: each is checked against
//! the registry's declared specs (`registry::option_specs`), the one source they all print.

use gamesolver_shared::registry::{self, spec::Kind};
use serde_json::Value;
use std::process::Command;

/// One pair per kernel family, and parameters of several games.
const PAIRS: &[(&str, &str)] = &[
    ("connect4", "alphabeta"),
    ("othello", "pns"),
    ("pig", "expectimax"),
    ("rolit", "maxn"),
    ("tictactoe", "mcts"),
    ("samegame", "nrpa"),
    ("mnk", "dfpn"),
    ("connect4", "jlpns"),
];

fn gamesolver(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_gamesolver"))
        .args(args)
        .output()
        .expect("run gamesolver");
    assert!(out.status.success(), "gamesolver {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn bounds(kind: Kind) -> Option<(f64, f64)> {
    match kind {
        Kind::UInt { min, max } => Some((min as f64, max as f64)),
        Kind::Float { min, max } => Some((min, max)),
        Kind::Bool | Kind::Text => None,
    }
}

#[test]
fn readme_help_options_and_openapi_agree() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let help = gamesolver(&["solve", "--help"]);
    let doc = gamesolver::openapi::document();
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    for &(game, algorithm) in PAIRS {
        let declared = registry::option_specs(game, algorithm);
        assert!(!declared.is_empty(), "{game} {algorithm}: no options");
        let listed: Value = serde_json::from_str(&gamesolver(&[
            "options",
            "--game",
            game,
            "--algorithm",
            algorithm,
            "--json",
        ]))
        .unwrap();
        let listed = listed["options"].as_array().unwrap();
        assert_eq!(listed.len(), declared.len(), "{game} {algorithm}");
        for (d, l) in declared.iter().zip(listed) {
            let spec = d.spec;
            let what = format!("{game} {algorithm} {}", spec.name);
            // `gamesolver options --json` (the body of GET /v1/options).
            assert_eq!(l["name"], spec.name, "{what}");
            assert_eq!(l["param"], d.param, "{what}");
            let range = bounds(spec.kind);
            assert_eq!(
                range,
                l["minimum"].as_f64().zip(l["maximum"].as_f64()),
                "{what}: options --json"
            );
            // The README, the help and the document list the numeric game parameters only
            // (`spec::families`): the others are per game (`options --json` above).
            if d.param && !spec.is_numeric() {
                continue;
            }
            // The README's table row and the help line: name and bounds as people read them.
            let text = spec.range_text();
            let row = format!("| `{}`", spec.name);
            assert!(
                readme
                    .lines()
                    .any(|line| line.starts_with(&row) && line.contains(&format!("| {text} |"))),
                "{what}: no README row with {text}"
            );
            assert!(
                help.lines().any(|line| {
                    let mut words = line.split_whitespace();
                    words.next() == Some(spec.name) && line.contains(&text)
                }),
                "{what}: no `solve --help` line with {text}"
            );
            // /openapi.json: a family schema (or GameParameters) with this property and bounds.
            let found = schemas.iter().any(|(name, schema)| {
                let family = name.ends_with("Options") || name == "GameParameters";
                let p = &schema["properties"][spec.name];
                let alike = p["anyOf"]
                    .as_array()
                    .cloned()
                    .unwrap_or_else(|| vec![p.clone()]);
                family
                    && p.is_object()
                    && (name == "GameParameters") == d.param
                    && alike
                        .iter()
                        .any(|p| range == p["minimum"].as_f64().zip(p["maximum"].as_f64()))
            });
            assert!(
                found,
                "{what}: not in /openapi.json with its bounds {range:?}"
            );
        }
    }
}

/// A pair the registry does not run is refused by `gamesolver options` (exit 2, one line).
#[test]
fn options_of_an_unknown_pair_exit_2() {
    let out = Command::new(env!("CARGO_BIN_EXE_gamesolver"))
        .args(["options", "--game", "tictactoe", "--algorithm", "nrpa"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("nrpa"), "{err}");
}

/// docs/API.md's game table (section 4) lists exactly the catalogue's games, each with every
/// declared parameter and its default, and each game has its notation section: adding a game
/// without its documentation fails here, naming what is missing.
#[test]
fn the_api_game_table_is_the_catalogue() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/API.md")).unwrap();
    let (_, section) = doc
        .split_once("\n## 4. Games and notations\n")
        .expect("section 4");
    let (section, _) = section.split_once("\n## 5.").expect("section 5 follows");
    let rows: Vec<&str> = section.lines().filter(|l| l.starts_with("| `")).collect();
    let mut missing = Vec::new();
    for e in registry::catalogue::ENTRIES {
        let cell = format!("| `{}` |", e.name);
        match rows.iter().find(|r| r.starts_with(&cell)) {
            None => missing.push(format!("no row for game `{}`", e.name)),
            Some(row) => {
                for p in e.params {
                    let named = row.contains(&format!("`{}` ({}", p.name, p.default))
                        || row.contains(&format!("`{}` (`{}`", p.name, p.default))
                        || row.contains(&format!("`{}` (required", p.name));
                    if !named {
                        missing.push(format!(
                            "row of `{}`: parameter `{}` with its default {}",
                            e.name, p.name, p.default
                        ));
                    }
                }
            }
        }
        if !section.contains(&format!("\n### `{}`\n", e.name)) {
            missing.push(format!("no notation section '### `{}`'", e.name));
        }
    }
    for r in &rows {
        let name = r.trim_start_matches("| `").split('`').next().unwrap_or("");
        if registry::catalogue::info(name).is_none() {
            missing.push(format!(
                "a row for `{name}`, which the catalogue does not have"
            ));
        }
    }
    assert!(
        missing.is_empty(),
        "docs/API.md section 4:\n{}",
        missing.join("\n")
    );
}
