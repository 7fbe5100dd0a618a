//! Property tests of job validation: jobs made from the registry's own lists of games,
//! algorithms, game parameters and options, with extreme values (0, negative, integer limits,
//! NaN, infinities, empty, unicode, long text, paths) and positions from random play, mutated or
//! not. `registry::prepare` must answer every one with a prepared job or a bad-input error,
//! never a panic and never an internal error.
//!
//! Only `prepare` runs here, never a kernel: a generated job may ask for any depth or size, and
//! bounding those is the registry's work, checked by its own tests.
//!
//! `survey_prepare_panics` (ignored) runs many cases and prints each distinct panic with its
//! smallest job: `cargo test --release -p gamesolver-shared --test fuzz_jobs survey -- --ignored
//! --nocapture`.

mod fuzz_common;

use fuzz_common::{config, mutate, mutations, nasty, no_panic, random_state, text};
use gamesolver_shared::games;
use gamesolver_shared::model::Game;
use gamesolver_shared::registry::{self, SolveError};
use gamesolver_shared::wire::{JobSpec, Limits, Settings};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{TestCaseError, TestRunner};

/// The parameters `game` declares (its catalogue entry).
fn game_params(game: &str) -> Vec<&'static str> {
    registry::catalogue::info(game)
        .map(|i| i.params.iter().map(|p| p.name).collect())
        .unwrap_or_default()
}

/// Every option a kernel family declares, each once.
fn all_options() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = Vec::new();
    for (title, specs) in registry::families() {
        if title == "Game parameters" {
            continue;
        }
        for s in specs {
            if !v.contains(&s.name) {
                v.push(s.name);
            }
        }
    }
    v
}

/// Every game parameter name, whatever the game.
fn all_params() -> Vec<&'static str> {
    let mut v: Vec<&str> = registry::GAMES
        .iter()
        .flat_map(|g| game_params(g))
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The algorithms that prepare on `game` at its start (any of [`TREES`] for the tree game), or
/// all of them when none does.
fn algorithms_of(game: &str) -> Vec<&'static str> {
    let positions: Vec<String> = if game == "tree" {
        TREES.iter().map(|t| t.to_string()).collect()
    } else {
        vec![String::new()]
    };
    let fitting: Vec<&'static str> = registry::ALGORITHMS
        .iter()
        .copied()
        .filter(|a| {
            positions.iter().any(|p| {
                let job = JobSpec::new(game, p, a).with_params(required_params(game));
                registry::prepare(&job).is_ok()
            })
        })
        .collect();
    if fitting.is_empty() {
        registry::ALGORITHMS.to_vec()
    } else {
        fitting
    }
}

/// Parameters a game cannot do without (added to generated jobs unless they set their own).
fn required_params(game: &str) -> &'static [(&'static str, &'static str)] {
    match game {
        "tsptw" => &[("instance", "rc_201.1")],
        _ => &[],
    }
}

/// The options a game and algorithm pair reads, found by asking `prepare`: an option is
/// known when some plausible value of it is not refused as an unknown option. A pair that
/// refuses the bare job gets every option.
fn options_of(game: &str, algorithm: &str) -> Vec<&'static str> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    type Known = HashMap<(String, String), Vec<&'static str>>;
    static CACHE: OnceLock<Mutex<Known>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (game.to_string(), algorithm.to_string());
    if let Some(v) = cache.lock().unwrap().get(&key) {
        return v.clone();
    }
    let base =
        JobSpec::new(game, &played(game, 0, 0), algorithm).with_params(required_params(game));
    let known: Vec<&'static str> = if registry::prepare(&base).is_err() {
        all_options()
    } else {
        all_options()
            .into_iter()
            .filter(|o| {
                ["1", "true", "line", "0.5", "mean", "first"].iter().any(
                    |v| match registry::prepare(&base.clone().with_options(&[(o, v)])) {
                        Ok(_) => true,
                        Err(e) => !e.to_string().contains("unknown option"),
                    },
                )
            })
            .collect()
    };
    cache.lock().unwrap().insert(key, known.clone());
    known
}

/// Numbers at the edges of integer types and of the games' sizes.
fn edge_number() -> impl Strategy<Value = String> {
    proptest::sample::select(vec![
        "0",
        "1",
        "-1",
        "2",
        "3",
        "4",
        "5",
        "7",
        "8",
        "16",
        "64",
        "255",
        "256",
        "1000",
        "65535",
        "65536",
        "1000000",
        "4294967295",
        "4294967296",
        "274177",
        "67280421310721",
        "9223372036854775807",
        "18446744073709551615",
    ])
    .prop_map(String::from)
}

/// A setting's value: hostile, plausible, or any text.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[1-9]|1[0-9]",
        3 => edge_number(),
        2 => nasty(),
        1 => "-?[0-9]{1,3}",
        2 => proptest::sample::select(vec![
            "true", "false", "5T", "5D", "line", "move", "rc_201.1", "Test_L1_R1", "features",
            "mean", "0.5", "1e-9", "root", "tasks", "threads", "first", "random",
        ])
        .prop_map(String::from),
        1 => text(),
    ]
}

/// A setting's name: one the registry reads (for this game, or any), or any text.
fn key(names: Vec<&'static str>) -> impl Strategy<Value = String> {
    let known = if names.is_empty() { vec!["x"] } else { names };
    prop_oneof![
        16 => proptest::sample::select(known).prop_map(String::from),
        1 => proptest::sample::select(all_params()).prop_map(String::from),
        1 => proptest::sample::select(all_options()).prop_map(String::from),
        1 => text(),
    ]
}

fn settings(names: Vec<&'static str>, max: usize) -> impl Strategy<Value = Settings> {
    // Settings nobody reads are refused at once: rarely one where none is read.
    let max = if names.is_empty() { 1 } else { max };
    let count = prop_oneof![3 => Just(0usize), 1 => 0..=max];
    count
        .prop_flat_map(move |n| proptest::collection::vec((key(names.clone()), value()), n))
        .prop_map(|items| items.into_iter().collect())
}

/// A small max/min (or chance) tree as text, for the `tree` game.
const TREES: &[&str] = &[
    r#"{"max": [{"min": [4, 9, 6]}, {"min": [2, 15, 13]}, {"min": [5, 8, 10]}], "labels": ["A", "B", "C"]}"#,
    r#"{"max": [{"chance": [[0.5, 2], [0.5, 5]]}, 4]}"#,
    r#"{"player": 0, "children": [{"utility": [1, 2, 3]}, {"player": 2, "children": [{"utility": [3, 2, 1]}, {"utility": [0, 0, 0]}]}]}"#,
    "7",
];

/// The position text after random play in the game at its default parameters ("" when the
/// game has none to play here).
fn played(game: &str, seed: u64, plies: usize) -> String {
    fn at<G: Game>(g: &G, seed: u64, plies: usize) -> String {
        g.format_position(&random_state(g, seed, plies))
    }
    use games::*;
    match game {
        "tictactoe" => at(&mnk::Mnk::tictactoe(), seed, plies),
        "mnk" => at(&mnk::Mnk::new(3, 3, 3).unwrap(), seed, plies),
        "connect4" => at(
            &connect4::Connect4::<u64>::new(7, 6, 1).unwrap(),
            seed,
            plies,
        ),
        "tree" => {
            // A path in a tree is not a job's position; the tree is.
            TREES[seed as usize % TREES.len()].to_string()
        }
        "morpion" => at(&morpion::Morpion::new(morpion::Variant::T5), seed, plies),
        "samegame" => at(&samegame::SameGame::standard(1).unwrap(), seed, plies),
        "tsptw" => at(&tsptw::Tsptw::load("rc_201.1").unwrap(), seed, plies),
        "weakschur" => at(&weakschur::WeakSchur::new(4).unwrap(), seed, plies),
        "pig" => at(&pig::Pig::new(100, 6).unwrap(), seed, plies),
        "backgammon" => at(&backgammon::Backgammon, seed, plies),
        "carcassonne" => at(&carcassonne::Carcassonne::new(), seed, plies),
        "othello" => at(&othello::Othello::new(8).unwrap(), seed, plies),
        "rolit" => at(&rolit::Rolit::new(4, 8).unwrap(), seed, plies),
        _ => String::new(),
    }
}

fn limits() -> impl Strategy<Value = Limits> {
    let n = || {
        proptest::option::weighted(
            0.2,
            prop_oneof![
                Just(0u64),
                Just(1u64),
                Just(u64::MAX),
                Just(1u64 << 32),
                Just(1u64 << 63),
                any::<u64>(),
            ],
        )
    };
    (n(), n()).prop_map(|(time_ms, node_limit)| Limits {
        time_ms,
        node_limit,
    })
}

/// Whole jobs: mostly registry games and algorithms with their own settings, some unknown.
fn job() -> impl Strategy<Value = JobSpec> {
    let game = prop_oneof![
        9 => proptest::sample::select(registry::GAMES.to_vec()).prop_map(String::from),
        1 => text(),
    ];
    let game_and_algorithm = game.prop_flat_map(|game| {
        let fitting = algorithms_of(&game);
        let algorithm = prop_oneof![
            8 => proptest::sample::select(fitting).prop_map(String::from),
            1 => proptest::sample::select(registry::ALGORITHMS.to_vec()).prop_map(String::from),
            1 => text(),
        ];
        (Just(game), algorithm)
    });
    game_and_algorithm.prop_flat_map(|(game, algorithm)| {
        let params: Vec<&'static str> = game_params(&game);
        let position = {
            let g = game.clone();
            prop_oneof![
                3 => (any::<u64>(), 0usize..80).prop_map(move |(s, n)| played(&g, s, n)),
                3 => (any::<u64>(), 0usize..80, mutations())
                    .prop_map({
                        let g = game.clone();
                        move |(s, n, m)| mutate(&played(&g, s, n), &m)
                    }),
                1 => text(),
            ]
        };
        let options = options_of(&game, &algorithm);
        (
            Just(game),
            Just(algorithm),
            settings(params, 3),
            settings(options, 3),
            position,
            limits(),
        )
            .prop_map(
                |(game, algorithm, mut game_params, options, position, limits)| {
                    for (k, v) in required_params(&game) {
                        game_params.entry(k.to_string()).or_insert(v.to_string());
                    }
                    JobSpec {
                        game,
                        game_params,
                        position,
                        algorithm,
                        options,
                        limits,
                    }
                },
            )
    })
}

/// `@file` positions read files on this machine; the service refuses them (issue #23, scope 1),
/// and the tests here read no file outside the data folder.
fn reads_a_file(job: &JobSpec) -> bool {
    job.game == "tree" && job.position.trim_start().starts_with('@')
}

/// What `prepare` must do with any job: a prepared job whose plan can be asked for, or a
/// bad-input error; never a panic, never an internal error. With `one_line`, the error is
/// also one short line whatever the job quotes (the registry's messages echo names and values
/// as given today: checked with the bounds work).
fn check_prepare(job: &JobSpec, one_line: bool) -> Result<(), TestCaseError> {
    if reads_a_file(job) {
        return Ok(());
    }
    match no_panic("registry::prepare", || registry::prepare(job))? {
        Ok(prepared) => {
            no_panic("plan_shape", || prepared.plan_shape())?;
        }
        Err(SolveError::BadInput(msg)) => {
            prop_assert!(!msg.trim().is_empty(), "empty error for {job:?}");
            if one_line {
                fuzz_common::one_line("registry::prepare", &msg)?;
            }
        }
        Err(e @ SolveError::Internal(_)) => {
            prop_assert!(false, "internal error from prepare: {e} for {job:?}")
        }
    }
    Ok(())
}

/// The game parameters of the registry with extreme values: constructors and their arithmetic.
#[test]
fn prepare_never_panics() {
    let mut runner = TestRunner::new(config(256));
    runner.run(&job(), |job| check_prepare(&job, true)).unwrap();
}

/// The same jobs at the games' default parameters: options, positions, limits, names.
#[test]
fn prepare_never_panics_at_default_game_parameters() {
    let mut runner = TestRunner::new(config(256));
    let jobs = job().prop_map(|mut j| {
        j.game_params = gamesolver_shared::wire::settings(required_params(&j.game));
        j
    });
    runner.run(&jobs, |job| check_prepare(&job, false)).unwrap();
}

/// Runs many jobs and prints each distinct panic (by source location) with the smallest job
/// that caused it, for the bounds work. Not a check: `prepare_never_panics` is.
#[test]
#[ignore = "a survey for people, not a check; run with --ignored --nocapture"]
fn survey_prepare_panics() {
    use std::collections::BTreeMap;
    use std::sync::Mutex;
    static WHERE: Mutex<Option<String>> = Mutex::new(None);
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|info| {
        let at = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        *WHERE.lock().unwrap() = Some(at);
    }));
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000u32);
    let mut runner = TestRunner::new(config(cases));
    let strategy = job();
    let mut found: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut prepared = 0u32;
    let mut hist: BTreeMap<String, u32> = BTreeMap::new();
    let mut messy: BTreeMap<String, String> = BTreeMap::new();
    for _ in 0..cases {
        let job = strategy.new_tree(&mut runner).unwrap().current();
        if reads_a_file(&job) {
            continue;
        }
        let outcome = std::panic::catch_unwind(|| registry::prepare(&job).map(|_| ()));
        if let Ok(Err(e)) = &outcome {
            let m = e.to_string();
            let k: String = m.chars().take(24).collect();
            if std::env::var("FUZZ_HIST").is_ok() {
                *hist.entry(k.clone()).or_insert(0u32) += 1;
            }
            if m.chars().any(char::is_control) || m.len() > 2_000 {
                let text = serde_json::to_string(&job).unwrap();
                let entry = messy.entry(k).or_insert_with(|| text.clone());
                if text.len() < entry.len() {
                    *entry = text;
                }
            }
        }
        if matches!(outcome, Ok(Ok(()))) {
            prepared += 1;
        }
        if let Err(e) = outcome {
            let at = WHERE.lock().unwrap().take().unwrap_or_default();
            let msg = fuzz_common::panic_message(&*e);
            let text = serde_json::to_string(&job).unwrap();
            let entry = found
                .entry(at)
                .or_insert_with(|| (msg.clone(), text.clone()));
            if text.len() < entry.1.len() {
                *entry = (msg, text);
            }
        }
    }
    std::panic::set_hook(default_hook);
    for (at, (msg, job)) in &found {
        println!("{at}: {msg}\n    {job}");
    }
    let mut h: Vec<_> = hist.into_iter().collect();
    h.sort_by_key(|x| std::cmp::Reverse(x.1));
    for (k, n) in h.iter().take(25) {
        println!("{n:6} {k}");
    }
    for (start, job) in &messy {
        println!("error not on one short line: '{start}...'\n    {job}");
    }
    println!(
        "{} distinct panic locations in {cases} jobs ({prepared} prepared)",
        found.len()
    );
}
