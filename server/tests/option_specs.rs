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
        Kind::Bool | Kind::Text | Kind::Choice(_) => None,
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

/// docs/API.md section 5 names every kernel of the catalogue in its list of algorithm names (in
/// catalogue order), in the heading of a section of its own and in the table of which
/// algorithms apply (5.1), where every catalogue game has a row too: adding a kernel or a game
/// without its documentation fails here, naming what is missing.
#[test]
fn the_api_algorithm_sections_are_the_catalogue() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/API.md")).unwrap();
    let (_, section) = doc
        .split_once("\n## 5. Algorithms and options\n")
        .expect("section 5");
    let (section, _) = section.split_once("\n## 6.").expect("section 6 follows");
    let mut missing = Vec::new();
    let (_, names) = section
        .split_once("Algorithm names:")
        .expect("the list of algorithm names");
    let names = names.split("\n\n").next().unwrap_or_default();
    if quoted(names) != registry::ALGORITHMS {
        missing.push(format!(
            "the list of algorithm names is {:?}, the catalogue's {:?}",
            quoted(names),
            registry::ALGORITHMS
        ));
    }
    let headings: Vec<&str> = section
        .lines()
        .filter(|l| l.starts_with("### 5."))
        .collect();
    let (_, which) = section.split_once("\n### 5.1 ").expect("section 5.1");
    let rows: Vec<Vec<&str>> = which
        .lines()
        .take_while(|l| !l.starts_with("### "))
        .filter(|l| l.starts_with("| ") && !l.starts_with("| game family"))
        .map(cells)
        .collect();
    for name in registry::ALGORITHMS {
        if !headings.iter().any(|h| quoted(h).contains(name)) {
            missing.push(format!("no section '### 5.N `{name}`'"));
        }
        if !rows
            .iter()
            .any(|r| r.len() > 2 && quoted(r[2]).contains(name))
        {
            missing.push(format!("5.1: no row names the algorithm `{name}`"));
        }
    }
    for game in registry::GAMES {
        if !rows
            .iter()
            .any(|r| r.len() > 1 && quoted(r[1]).contains(game))
        {
            missing.push(format!("5.1: no row names the game `{game}`"));
        }
    }
    assert!(
        missing.is_empty(),
        "docs/API.md section 5:\n{}",
        missing.join("\n")
    );
}

/// The README's game table ("## Games") has a row for each game of the catalogue and none for
/// a game the catalogue does not hold.
#[test]
fn the_readme_game_table_is_the_catalogue() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let (_, section) = doc
        .split_once("\n## Games\n")
        .expect("a section '## Games'");
    let listed: Vec<&str> = section
        .lines()
        .skip_while(|l| !l.starts_with("| game "))
        .skip(2)
        .take_while(|l| l.starts_with("| "))
        .filter_map(|row| quoted(cells(row)[0]).first().copied())
        .collect();
    let missing: Vec<&str> = registry::GAMES
        .iter()
        .copied()
        .filter(|g| !listed.contains(g))
        .collect();
    let unknown: Vec<&str> = listed
        .iter()
        .copied()
        .filter(|g| !registry::GAMES.contains(g))
        .collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "README.md '## Games': no row for {missing:?}; rows for games the catalogue lacks: \
         {unknown:?}"
    );
}

/// The cells of a Markdown table row.
fn cells(row: &str) -> Vec<&str> {
    row.trim()
        .trim_matches('|')
        .split('|')
        .map(str::trim)
        .collect()
}

/// The words between backticks in `text`.
fn quoted(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// Whether `text` holds `word` on its own (not inside a longer number or word).
fn holds(text: &str, word: &str) -> bool {
    let part = |c: char| c.is_alphanumeric() || c == '.' || c == '_';
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let rest = &text[i + word.len()..];
        // A '.' after the word ends a sentence unless a digit follows (1.0 is not 1).
        let longer = match rest.chars().next() {
            Some('.') => rest[1..].starts_with(char::is_numeric),
            Some(c) => part(c),
            None => false,
        };
        !before.is_some_and(part) && !longer
    })
}

/// Every default printed by the README's "Limits of a job", `gamesolver solve --help`,
/// `/openapi.json`, `gamesolver options --json` (`GET /v1/options`) and docs/API.md's option
/// tables (section 5) is the declared one. The declared default is the value the code uses:
/// the registry reads a setting with its declaration's default (`Opts::uint_value`, `flag`,
/// `choice`...) and refuses a second default in the code for a setting that declares one.
#[test]
fn every_printed_default_is_the_declared_one() {
    use gamesolver_shared::registry::{KernelList, Kernels};
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let api = std::fs::read_to_string(format!("{root}/docs/API.md")).unwrap();
    let help = gamesolver(&["solve", "--help"]);
    let doc = gamesolver::openapi::document();
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    let mut wrong = Vec::new();
    for (title, specs) in registry::families() {
        let schema = &schemas[&gamesolver::openapi::family_schema_name(&title)];
        for spec in &specs {
            let (name, text) = (spec.name, spec.default.text());
            let what = format!("{title}: {name} (default {text})");
            let row = format!("| `{name}`");
            let cell = format!("| {} | {text} |", spec.range_text());
            if !readme
                .lines()
                .any(|l| l.starts_with(&row) && l.contains(&cell))
            {
                wrong.push(format!("README: {what}"));
            }
            let line = format!("(default: {text})");
            if !help
                .lines()
                .any(|l| l.split_whitespace().next() == Some(name) && l.contains(&line))
            {
                wrong.push(format!("solve --help: {what}"));
            }
            let p = &schema["properties"][name];
            let alike = p["anyOf"]
                .as_array()
                .cloned()
                .unwrap_or_else(|| vec![p.clone()]);
            let shown = alike.iter().any(|p| match spec.default.json() {
                Some(v) => p["default"] == v,
                None => p["description"].as_str().is_some_and(|d| d.contains(&line)),
            });
            if !shown {
                wrong.push(format!("/openapi.json: {what}"));
            }
        }
    }
    for &(game, algorithm) in PAIRS {
        let listed: Value = serde_json::from_str(&gamesolver(&[
            "options",
            "--game",
            game,
            "--algorithm",
            algorithm,
            "--json",
        ]))
        .unwrap();
        let declared = registry::option_specs(game, algorithm);
        for (d, l) in declared.iter().zip(listed["options"].as_array().unwrap()) {
            if l["default"] != d.spec.default.text() {
                wrong.push(format!(
                    "options --json: {game} {algorithm} {}",
                    d.spec.name
                ));
            }
        }
    }
    // docs/API.md, section 5: each kernel's table names every option its kernels declare, and
    // a default that is a value is in its row.
    let sections: Vec<&str> = api.split("\n### 5.").skip(1).collect();
    for section in sections {
        let heading = section.lines().next().unwrap_or("");
        let kernels: Vec<_> = quoted(heading)
            .into_iter()
            .filter_map(Kernels::find)
            .collect();
        if kernels.is_empty() {
            continue;
        }
        let declared: Vec<_> = kernels
            .iter()
            .flat_map(|k| {
                k.group
                    .options
                    .iter()
                    .filter(|s| s.applies_to(k.name))
                    .copied()
            })
            .collect();
        let rows: Vec<Vec<&str>> = section
            .lines()
            .take_while(|l| !l.starts_with("## "))
            .filter(|l| l.starts_with("| `"))
            .map(cells)
            .collect();
        for spec in &declared {
            let row = rows.iter().find(|r| quoted(r[0]).contains(&spec.name));
            let what = format!("docs/API.md 5.{heading}: `{}`", spec.name);
            match row {
                None => wrong.push(format!("{what}: no row")),
                Some(r)
                    if spec.default.is_value() && !holds(r[r.len() - 1], &spec.default.text()) =>
                {
                    wrong.push(format!("{what}: default {} not in its row", spec.default))
                }
                Some(_) => {}
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "defaults printed wrong or missing:\n{}",
        wrong.join("\n")
    );
}
