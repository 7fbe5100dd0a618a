//! Property tests of every notation parser: positions and moves of every game in
//! `registry::GAMES`, explicit trees as JSON, and proof certificates. Whatever the text, a parser
//! returns a value or a one-line error, never panics; what it accepts is a state the game can
//! work with (its turn, moves and notation do not panic) and what a game writes it reads back.
//!
//! Inputs: random text, valid UTF-8 from random bytes, the hostile values of `fuzz_common`, and
//! mutations (truncation, deletion, duplication, inserted separators, huge numbers, deep
//! repetition) of positions reached by random legal play.

mod fuzz_common;

use fuzz_common::{config, mutate, mutations, no_panic, one_line, random_state, text, Mutation};
use gamesolver_shared::games;
use gamesolver_shared::model::{Game, Hashed, Turn, ZeroSum};
use gamesolver_shared::proof::{self, Claim, ProofFile};
use gamesolver_shared::registry;
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};
use serde_json::{json, Value};
use std::sync::OnceLock;

/// Everything a caller may do with a state a parser accepted: none of it may panic.
fn use_state<G: Game>(g: &G, s: &G::State, what: &str) -> Result<(), TestCaseError> {
    no_panic(what, || {
        let turn = g.turn(s);
        let mut moves = Vec::new();
        g.legal_moves(s, &mut moves);
        for &mv in moves.iter().take(8) {
            let _ = g.format_move(s, mv);
        }
        if turn == Turn::Terminal {
            let mut out = vec![0.0; g.num_players()];
            g.returns(s, &mut out);
        }
        g.format_position(s)
    })?;
    Ok(())
}

/// The notation properties of one game for one random state and one set of hostile inputs.
fn check_notation<G: Game>(
    g: &G,
    seed: u64,
    plies: usize,
    muts: &[Mutation],
    garbage: &str,
    move_text: &str,
) -> Result<(), TestCaseError> {
    let s = random_state(g, seed, plies);
    let text = no_panic("format_position", || g.format_position(&s))?;

    // What the game writes it reads back.
    match no_panic("parse_position(format_position)", || {
        g.parse_position(&text)
    })? {
        Ok(back) => prop_assert!(
            g.same_state(&back, &s),
            "position '{text}' reads back as another state"
        ),
        Err(e) => prop_assert!(false, "position '{text}' written by the game: {e}"),
    }

    // Hostile positions: an accepted state must be usable, an error one line.
    let mutated = mutate(&text, muts);
    for input in [mutated.as_str(), garbage, &mutate(garbage, muts)] {
        match no_panic("parse_position", || g.parse_position(input))? {
            Ok(st) => {
                use_state(g, &st, "a state parse_position accepted")?;
                check_moves(g, &st, move_text, muts)?;
            }
            Err(e) => one_line("parse_position", &e.to_string())?,
        }
    }
    check_moves(g, &s, move_text, muts)
}

/// Legal moves read back as themselves; hostile move text is refused in one line or names a
/// legal move.
fn check_moves<G: Game>(
    g: &G,
    s: &G::State,
    move_text: &str,
    muts: &[Mutation],
) -> Result<(), TestCaseError> {
    let mut legal = Vec::new();
    no_panic("legal_moves", || g.legal_moves(s, &mut legal))?;
    let mut texts = vec![move_text.to_string()];
    for &mv in legal.iter().take(16) {
        let t = no_panic("format_move", || g.format_move(s, mv))?;
        match no_panic("parse_move(format_move)", || g.parse_move(s, &t))? {
            Ok(back) => prop_assert_eq!(back, mv, "move '{}' reads back as another move", t),
            Err(e) => prop_assert!(false, "move '{t}' written by the game: {e}"),
        }
        texts.push(mutate(&t, muts));
    }
    for t in &texts {
        match no_panic("parse_move", || g.parse_move(s, t))? {
            Ok(mv) => prop_assert!(
                legal.contains(&mv),
                "parse_move accepted '{t}' as {mv:?}, which is not a legal move"
            ),
            Err(e) => one_line("parse_move", &e.to_string())?,
        }
    }
    Ok(())
}

/// Threshold text (`target=V`) of a zero-sum game: a value or a one-line error.
fn check_target<G: ZeroSum>(g: &G, s: &G::State, text: &str) -> Result<(), TestCaseError> {
    if let Err(e) = no_panic("parse_target", || g.parse_target(s, text))? {
        one_line("parse_target", &e.to_string())?;
    }
    Ok(())
}

/// Runs the notation properties of `g`; `plies` bounds the random play.
fn run_game<G: Game>(name: &str, g: &G, plies: usize, cases: u32) {
    let mut runner = TestRunner::new(config(cases));
    let strategy = (any::<u64>(), 0..=plies, mutations(), text(), text());
    if let Err(e) = runner.run(&strategy, |(seed, n, muts, garbage, mv)| {
        check_notation(g, seed, n, &muts, &garbage, &mv)
    }) {
        panic!("{name}: {e}");
    }
}

/// The same for a zero-sum game, with its thresholds.
fn run_zero_sum<G: ZeroSum>(name: &str, g: &G, plies: usize, cases: u32) {
    run_game(name, g, plies, cases);
    let mut runner = TestRunner::new(config(cases));
    let strategy = (any::<u64>(), 0..=plies, text());
    if let Err(e) = runner.run(&strategy, |(seed, n, target)| {
        check_target(g, &random_state(g, seed, n), &target)
    }) {
        panic!("{name} targets: {e}");
    }
}

/// The games this file covers, by registry name; `registry::GAMES` must not have more.
const COVERED: &[&str] = &[
    "tictactoe",
    "mnk",
    "connect4",
    "tree",
    "morpion",
    "samegame",
    "tsptw",
    "weakschur",
    "pig",
    "backgammon",
    "carcassonne",
    "othello",
    "rolit",
    "nim",
    "awari",
];

#[test]
fn every_registry_game_is_fuzzed() {
    for g in registry::GAMES {
        assert!(
            COVERED.contains(g),
            "game '{g}' has no notation property here"
        );
    }
}

#[test]
fn nim_notation() {
    for heaps in ["3,4,5", "31,31,31,31,31,31,31,31"] {
        let g = games::nim::Nim::new(heaps).unwrap();
        run_zero_sum(&format!("nim {heaps}"), &g, 64, 64);
    }
}

#[test]
fn awari_notation() {
    for pits in [2, 6] {
        let g = games::awari::Awari::new(pits).unwrap();
        run_zero_sum(&format!("awari {pits} pits"), &g, 64, 64);
    }
}

#[test]
fn tictactoe_notation() {
    run_zero_sum("tictactoe", &games::mnk::Mnk::tictactoe(), 9, 256);
}

#[test]
fn mnk_notation() {
    for (m, n, k) in [(1, 1, 1), (4, 3, 3), (7, 6, 4), (16, 16, 5)] {
        let g = games::mnk::Mnk::new(m, n, k).unwrap();
        run_zero_sum(&format!("mnk {m}x{n}x{k}"), &g, m * n, 64);
    }
}

#[test]
fn connect4_notation() {
    use games::connect4::{Connect4, Wide};
    run_zero_sum("connect4", &Connect4::<u64>::new(7, 6, 1).unwrap(), 42, 256);
    run_zero_sum(
        "connect4 4x4",
        &Connect4::<u64>::new(4, 4, 1).unwrap(),
        16,
        64,
    );
    run_zero_sum(
        "connect4 9x9",
        &Connect4::<u128>::new(9, 9, 1).unwrap(),
        81,
        64,
    );
    run_zero_sum(
        "connect4 15x15",
        &Connect4::<Wide<4>>::new(15, 15, 1).unwrap(),
        120,
        32,
    );
}

#[test]
fn othello_notation() {
    run_zero_sum(
        "othello",
        &games::othello::Othello::new(8).unwrap(),
        64,
        256,
    );
    run_zero_sum(
        "othello 4",
        &games::othello::Othello::new(4).unwrap(),
        16,
        64,
    );
}

#[test]
fn rolit_notation() {
    run_game("rolit", &games::rolit::Rolit::new(4, 8).unwrap(), 64, 256);
    run_game(
        "rolit 3 6x6",
        &games::rolit::Rolit::new(3, 6).unwrap(),
        36,
        64,
    );
}

#[test]
fn pig_notation() {
    run_game("pig", &games::pig::Pig::new(100, 6).unwrap(), 300, 256);
    run_game("pig 10/2", &games::pig::Pig::new(10, 2).unwrap(), 100, 64);
}

#[test]
fn backgammon_notation() {
    run_game("backgammon", &games::backgammon::Backgammon, 200, 256);
}

#[test]
fn carcassonne_notation() {
    run_game(
        "carcassonne",
        &games::carcassonne::Carcassonne::new(),
        150,
        256,
    );
}

#[test]
fn morpion_notation() {
    use games::morpion::{Morpion, Variant};
    run_game("morpion 5T", &Morpion::new(Variant::T5), 120, 128);
    run_game("morpion 5D", &Morpion::new(Variant::D5), 120, 128);
}

#[test]
fn samegame_notation() {
    run_game(
        "samegame",
        &games::samegame::SameGame::standard(1).unwrap(),
        200,
        256,
    );
}

#[test]
fn tsptw_notation() {
    run_game(
        "tsptw",
        &games::tsptw::Tsptw::load("rc_201.1").unwrap(),
        40,
        256,
    );
}

#[test]
fn weakschur_notation() {
    run_game(
        "weakschur",
        &games::weakschur::WeakSchur::new(4).unwrap(),
        80,
        256,
    );
}

// ---------------------------------------------------------------------------------------------
// Explicit trees (the `tree` game's position is its JSON).

/// Leaves: integers, awkward floats, utility vectors (some of mismatched length).
fn tree_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => (-5i32..5).prop_map(Value::from),
        1 => any::<i64>().prop_map(Value::from),
        1 => proptest::sample::select(vec![
            json!(u64::MAX),
            json!(i64::MIN),
            json!(1e308),
            json!(-1e308),
            json!(5e-324),
            json!(-0.0),
            json!(0.1),
        ]),
        1 => proptest::collection::vec(-3i8..3, 1..4).prop_map(|u| json!({ "utility": u })),
    ]
}

/// Optional move labels (some empty, blank, repeated or holding the path separator `/`).
fn labels() -> impl Strategy<Value = Option<Vec<String>>> {
    proptest::option::weighted(0.3, proptest::collection::vec("[A-C0-2/ ]{0,2}", 6))
}

/// Random trees of every node shape of the module doc.
fn tree_json() -> impl Strategy<Value = Value> {
    tree_leaf().prop_recursive(5, 120, 5, |inner| {
        let kids = || proptest::collection::vec(inner.clone(), 1..5);
        let with_labels = |mut v: Value, l: Option<Vec<String>>, n: usize| {
            if let Some(mut l) = l {
                l.truncate(n);
                v["labels"] = json!(l);
            }
            v
        };
        prop_oneof![
            (kids(), labels()).prop_map(move |(c, l)| {
                let n = c.len();
                with_labels(json!({ "max": c }), l, n)
            }),
            (kids(), labels()).prop_map(move |(c, l)| {
                let n = c.len();
                with_labels(json!({ "min": c }), l, n)
            }),
            (0u64..4, kids(), labels()).prop_map(move |(p, c, l)| {
                let n = c.len();
                with_labels(json!({ "player": p, "children": c }), l, n)
            }),
            kids().prop_map(|c| {
                let p = 1.0 / c.len() as f64;
                let pairs: Vec<Value> = c.into_iter().map(|x| json!([p, x])).collect();
                json!({ "chance": pairs })
            }),
        ]
    })
}

/// Any JSON, with keys the tree parser looks for.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(|x| json!(x)),
        "\\PC{0,6}".prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        let key = proptest::sample::select(vec![
            "max", "min", "player", "children", "chance", "labels", "utility", "x", "",
        ]);
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            proptest::collection::btree_map(key, inner, 0..4).prop_map(|m| {
                Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            }),
        ]
    })
}

/// Parses a tree: no panic; an accepted tree passes the notation properties (and those of a
/// zero-sum game when it is a max/min tree), an error is one line.
fn check_tree_text(
    json_text: &str,
    seed: u64,
    muts: &[Mutation],
    garbage: &str,
    mv: &str,
) -> Result<(), TestCaseError> {
    // `@file` reads a file: left out here (the service refuses it, see SECURITY.md).
    if json_text.trim_start().starts_with('@') {
        return Ok(());
    }
    match no_panic("Tree::parse", || games::tree::Tree::parse(json_text))? {
        Err(e) => one_line("Tree::parse", &e.to_string()),
        Ok(t) => {
            check_notation(&t, seed, 64, muts, garbage, mv)?;
            if t.kind() == games::tree::TreeKind::MinMax {
                let s = random_state(&t, seed, 64);
                check_target(&t, &s, garbage)?;
                no_panic("tree values", || {
                    let (lo, hi) = t.value_bounds(&s);
                    (t.value_to_json(&s, lo), t.value_to_json(&s, hi))
                })?;
            }
            Ok(())
        }
    }
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn random_trees(tree in tree_json(), seed in any::<u64>(), muts in mutations(),
                    garbage in text(), mv in text()) {
        let json_text = tree.to_string();
        check_tree_text(&json_text, seed, &[], &garbage, &mv)?;
        check_tree_text(&mutate(&json_text, &muts), seed, &muts, &garbage, &mv)?;
    }

    #[test]
    fn random_json_as_trees(v in any_json(), seed in any::<u64>(), garbage in text()) {
        check_tree_text(&v.to_string(), seed, &[], &garbage, "0")?;
    }

    #[test]
    fn random_text_as_trees(t in text(), seed in any::<u64>()) {
        check_tree_text(&t, seed, &[], "0", "0")?;
    }
}

/// A tree of the given depth as text, by one node shape.
fn deep_text(depth: usize, open: &str, leaf: &str, close: &str) -> String {
    let mut s = String::with_capacity(depth * (open.len() + close.len()) + leaf.len());
    for _ in 0..depth {
        s.push_str(open);
    }
    s.push_str(leaf);
    for _ in 0..depth {
        s.push_str(close);
    }
    s
}

#[test]
fn deep_and_wide_trees_are_refused_or_parsed_without_overflow() {
    // 100,000 levels of every nesting shape: serde_json stops at its recursion limit.
    for (open, leaf, close) in [
        ("[", "1", "]"),
        ("{\"max\":[", "1", "]}"),
        ("{\"chance\":[[1,", "1", "]]}"),
        ("{\"player\":0,\"children\":[", "{\"utility\":[1,2]}", "]}"),
    ] {
        let text = deep_text(100_000, open, leaf, close);
        let e = games::tree::Tree::parse(&text).unwrap_err().to_string();
        assert!(e.contains("malformed"), "{open}: {e}");
    }
    // As deep as the JSON reader allows: a tree.
    let t = games::tree::Tree::parse(&deep_text(60, "{\"max\":[", "1", "]}")).unwrap();
    assert_eq!(t.len(), 61);
    // Huge fan-out is refused at once, naming the cap; a node at the cap is a tree. Huge
    // numbers.
    let wide = format!("{{\"max\":[{}1]}}", "0,".repeat(200_000));
    let e = games::tree::Tree::parse(&wide).unwrap_err().to_string();
    assert!(e.contains("200001 children, more than the 4096"), "{e}");
    let cap = games::tree::MAX_CHILDREN;
    let wide = format!("{{\"max\":[{}1]}}", "0,".repeat(cap - 1));
    assert_eq!(games::tree::Tree::parse(&wide).unwrap().len(), cap + 1);
    for leaf in [
        "1e308",
        "-1e308",
        "18446744073709551615",
        "-9223372036854775808",
        "1e-320",
    ] {
        let t = games::tree::Tree::parse(&format!("{{\"min\":[{leaf},0]}}")).unwrap();
        t.parse_target(&0, leaf).unwrap();
        let (lo, hi) = t.value_bounds(&0);
        assert_ne!(t.value_to_json(&0, lo), t.value_to_json(&0, hi), "{leaf}");
    }
    for bad in ["1e309", "{\"max\":[1e400]}", "{\"utility\":[1e999]}"] {
        let e = games::tree::Tree::parse(bad).unwrap_err().to_string();
        assert!(!e.contains('\n'), "{bad}: {e}");
    }
}

/// A JSON value nested `depth` levels (`{"max": [...]}`) built in code, where no reader limits
/// the depth. Dropping such a value recurses too, so callers keep it shallow enough to drop.
fn deep_value(depth: usize) -> Value {
    // Built by moves: `json!` would serialise the inner value again at every level.
    let mut v = json!(1);
    for _ in 0..depth {
        let mut node = serde_json::Map::new();
        node.insert("max".into(), Value::Array(vec![v]));
        v = Value::Object(node);
    }
    v
}

#[test]
fn tree_from_deep_json_values_stops_at_its_depth_limit() {
    // A test thread has a 2 MiB stack (as the coordinator's blocking threads): the tree
    // builder's own depth limit must come before an overflow.
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let ok = games::tree::Tree::from_json(&deep_value(500)).map(|t| t.len());
            let deep = deep_value(20_000);
            let too_deep = games::tree::Tree::from_json(&deep).map(|t| t.len());
            // Dropped on a thread with room for serde_json's recursive drop.
            std::thread::Builder::new()
                .stack_size(64 << 20)
                .spawn(move || drop(deep))
                .unwrap()
                .join()
                .unwrap();
            (ok, too_deep.map_err(|e| e.to_string()))
        })
        .unwrap();
    let (ok, too_deep) = handle
        .join()
        .expect("the tree builder overflowed its stack");
    assert_eq!(ok.unwrap(), 501);
    assert!(too_deep.unwrap_err().contains("deeper"));
}

// ---------------------------------------------------------------------------------------------
// Other text a job or a data file brings to a game.

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn game_parameter_parsers(t in text()) {
        use games::morpion::Morpion;
        for r in [
            no_panic("parse_variant", || Morpion::parse_variant(&t).map(|_| ()))?,
            no_panic("parse_codes", || Morpion::parse_codes(&t).map(|_| ()))?,
            no_panic("plain_name", || games::data::plain_name(&t).map(|_| ()))?,
            no_panic("parse_pons_set", || games::data::parse_pons_set(&t).map(|_| ()))?,
            no_panic("tsptw parse_instance", || {
                games::tsptw::Tsptw::parse_instance("x", &t).map(|_| ())
            })?,
        ] {
            if let Err(e) = r {
                one_line("parameter parser", &e)?;
            }
        }
    }

    #[test]
    fn tsptw_instances_from_numbers(nums in proptest::collection::vec(
        prop_oneof![
            (0u32..100).prop_map(|x| x.to_string()),
            fuzz_common::nasty(),
        ], 0..40)) {
        let t = nums.join(" ");
        if let Ok(g) = no_panic("tsptw parse_instance", || {
            games::tsptw::Tsptw::parse_instance("x", &t)
        })? {
            check_notation(&g, 1, 10, &[], "1 2 3", "1")?;
        }
    }

    #[test]
    fn connect4_book_text(t in text(), muts in mutations()) {
        use games::connect4::{book, Connect4};
        let g = Connect4::<u64>::new(7, 6, 1).unwrap();
        for input in [t.clone(), mutate("# gamesolver connect4 book width=7 height=6 depth=2\n4 0\n44 1\n", &muts)] {
            if let Err(e) = no_panic("book::parse", || book::Book::parse(&g, &input).map(|_| ()))? {
                one_line("book::parse", &e)?;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Proof certificates.

/// The exact negamax value of `s` (small games only), memoised by position hash.
fn negamax<G: ZeroSum + Hashed>(g: &G, s: &G::State) -> i32 {
    fn go<G: ZeroSum + Hashed>(
        g: &G,
        s: &G::State,
        memo: &mut std::collections::HashMap<u64, i32>,
    ) -> i32 {
        if g.is_terminal(s) {
            return g.terminal_value(s);
        }
        if let Some(&v) = memo.get(&g.hash(s)) {
            return v;
        }
        let mut moves = Vec::new();
        g.legal_moves(s, &mut moves);
        let side = g.side(s);
        let best = moves
            .into_iter()
            .map(|mv| {
                let mut c = s.clone();
                g.apply(&mut c, mv);
                let v = go(g, &c, memo);
                if g.side(&c) == side {
                    v
                } else {
                    -v
                }
            })
            .max()
            .expect("a non-terminal state has a move");
        memo.insert(g.hash(s), best);
        best
    }
    go(g, s, &mut std::collections::HashMap::new())
}

/// A certificate for `claim` at `target` about `position`, built by the df-pn certifier.
fn certificate<G: ZeroSum + Hashed>(
    game: &G,
    name: &str,
    params: &[(&str, &str)],
    position: &str,
    target: i32,
) -> ProofFile {
    use gamesolver_shared::search::pns::{certify, PnOptions};
    // The tree game's position is the tree itself; its root is state 0.
    let root = if name == "tree" {
        game.initial_state()
    } else {
        game.parse_position(position).unwrap()
    };
    let claim = if negamax(game, &root) >= target {
        Claim::AtLeast
    } else {
        Claim::Below
    };
    let opts = PnOptions {
        memory_mb: 16,
        ..PnOptions::default()
    };
    let ctl = gamesolver_shared::search::Control::unlimited();
    let tree = certify::build_proof(game, &root, claim, target, &opts, &ctl).unwrap();
    ProofFile {
        format: proof::FORMAT.into(),
        game: name.into(),
        game_params: gamesolver_shared::wire::settings(params),
        position: position.into(),
        claim,
        target,
        tree,
    }
}

const PROOF_TREE: &str = r#"{"max": [{"min": [4, 9, 6]}, {"min": [2, 15, 13]}, {"min": [5, 8, 10]}], "labels": ["A", "B", "C"]}"#;

/// Valid certificates to start mutations from: tic-tac-toe (a draw: both claims around 0),
/// a 4 x 3 k=3 board, a max/min tree.
fn certificates() -> &'static [ProofFile] {
    static CERTS: OnceLock<Vec<ProofFile>> = OnceLock::new();
    CERTS.get_or_init(|| {
        let ttt = games::mnk::Mnk::tictactoe();
        let mnk = games::mnk::Mnk::new(4, 3, 3).unwrap();
        let tree = games::tree::Tree::parse(PROOF_TREE).unwrap();
        let mut v = vec![
            certificate(&ttt, "tictactoe", &[], "", 0),
            certificate(&ttt, "tictactoe", &[], "", 1),
            certificate(&ttt, "tictactoe", &[], "5,1", 1),
            certificate(&mnk, "mnk", &[("m", "4"), ("n", "3"), ("k", "3")], "2", 1),
        ];
        // Tree targets are ranks: 5 is the value, rank 3 of the nine leaves.
        let rank_five = tree.parse_target(&0, "5").unwrap();
        v.push(certificate(&tree, "tree", &[], PROOF_TREE, rank_five));
        v.push(certificate(&tree, "tree", &[], PROOF_TREE, rank_five + 1));
        for c in &v {
            gamesolver_shared::registry::proof::verify(c)
                .expect("a certificate of the certifier verifies");
        }
        v
    })
}

/// The true value of a certificate's position, when its game and position are ones the test
/// can solve.
fn true_value(file: &ProofFile) -> Option<i32> {
    let p = |k: &str, d: usize| {
        file.game_params
            .get(k)
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(d)
    };
    match file.game.as_str() {
        "tictactoe" => {
            let g = games::mnk::Mnk::tictactoe();
            Some(negamax(&g, &g.parse_position(&file.position).ok()?))
        }
        "mnk" if p("m", 3) * p("n", 3) <= 12 => {
            let g = games::mnk::Mnk::new(p("m", 3), p("n", 3), p("k", 3)).ok()?;
            Some(negamax(&g, &g.parse_position(&file.position).ok()?))
        }
        "tree" if !file.position.trim_start().starts_with('@') => {
            let g = games::tree::Tree::parse(&file.position).ok()?;
            Some(negamax(&g, &0))
        }
        _ => None,
    }
}

/// One change to a certificate.
#[derive(Clone, Debug)]
enum CertEdit {
    /// Remove a token of the tree.
    DeleteToken(prop::sample::Index),
    /// Copy a token next to itself.
    DuplicateToken(prop::sample::Index),
    /// Swap two tokens.
    SwapTokens(prop::sample::Index, prop::sample::Index),
    /// Replace a token by another JSON value.
    ReplaceToken(prop::sample::Index, Value),
    /// Apply text mutations to a string token.
    MutateToken(prop::sample::Index, Vec<Mutation>),
    /// Another threshold.
    Target(i32),
    /// The other claim.
    FlipClaim,
    /// Another position text.
    Position(String),
    /// Another game name or parameter.
    Game(String),
    Param(String, String),
    /// Another format tag.
    Format(String),
}

fn cert_edit() -> impl Strategy<Value = CertEdit> {
    use prop::sample::Index;
    let token = prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (0u64..10).prop_map(Value::from),
        text().prop_map(Value::from),
        "[0-9]{1,2}".prop_map(Value::from),
        "[0-9a-f]{16}".prop_map(Value::from),
        Just(Value::Null),
        Just(json!([])),
        Just(json!(-1.5)),
    ];
    prop_oneof![
        3 => any::<Index>().prop_map(CertEdit::DeleteToken),
        2 => any::<Index>().prop_map(CertEdit::DuplicateToken),
        2 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| CertEdit::SwapTokens(a, b)),
        3 => (any::<Index>(), token).prop_map(|(i, t)| CertEdit::ReplaceToken(i, t)),
        2 => (any::<Index>(), mutations()).prop_map(|(i, m)| CertEdit::MutateToken(i, m)),
        2 => prop_oneof![any::<i32>(), -3i32..4].prop_map(CertEdit::Target),
        1 => Just(CertEdit::FlipClaim),
        2 => prop_oneof![text(), "[1-9](,[1-9]){0,4}", Just(PROOF_TREE.to_string())]
            .prop_map(CertEdit::Position),
        1 => proptest::sample::select(vec!["tictactoe", "mnk", "tree", "connect4", "othello", "pig", ""])
            .prop_map(|g| CertEdit::Game(g.into())),
        1 => (proptest::sample::select(vec!["m", "n", "k", "x"]), "[0-5]")
            .prop_map(|(k, v)| CertEdit::Param(k.into(), v)),
        1 => text().prop_map(CertEdit::Format),
    ]
}

fn apply_edit(f: &mut ProofFile, e: &CertEdit) {
    let n = f.tree.len();
    match e {
        CertEdit::DeleteToken(i) if n > 0 => {
            f.tree.remove(i.index(n));
        }
        CertEdit::DuplicateToken(i) if n > 0 => {
            let k = i.index(n);
            f.tree.insert(k, f.tree[k].clone());
        }
        CertEdit::SwapTokens(a, b) if n > 0 => f.tree.swap(a.index(n), b.index(n)),
        CertEdit::ReplaceToken(i, t) if n > 0 => f.tree[i.index(n)] = t.clone(),
        CertEdit::MutateToken(i, m) if n > 0 => {
            let k = i.index(n);
            if let Value::String(s) = &f.tree[k] {
                f.tree[k] = Value::String(mutate(s, m));
            }
        }
        CertEdit::Target(t) => f.target = *t,
        CertEdit::FlipClaim => {
            f.claim = match f.claim {
                Claim::AtLeast => Claim::Below,
                Claim::Below => Claim::AtLeast,
            }
        }
        CertEdit::Position(p) => f.position = p.clone(),
        CertEdit::Game(g) => f.game = g.clone(),
        CertEdit::Param(k, v) => {
            f.game_params.insert(k.clone(), v.clone());
        }
        CertEdit::Format(t) => f.format = t.clone(),
        _ => {}
    }
}

proptest! {
    #![proptest_config(config(256))]

    /// A changed certificate is refused in one line, or certifies a claim that is true.
    #[test]
    fn mutated_certificates_are_refused_or_true(
        which in any::<prop::sample::Index>(),
        edits in proptest::collection::vec(cert_edit(), 1..4),
    ) {
        let certs = certificates();
        let original = &certs[which.index(certs.len())];
        let mut f = original.clone();
        for e in &edits {
            apply_edit(&mut f, e);
        }
        // `@file` positions read files: not a certificate's business here.
        if f.position.trim_start().starts_with('@') {
            return Ok(());
        }
        match no_panic("proof::verify", || gamesolver_shared::registry::proof::verify(&f))? {
            Err(e) => one_line("proof::verify", &e)?,
            Ok(c) => {
                prop_assert_eq!(&c.game, &f.game);
                prop_assert_eq!(&c.position, &f.position);
                prop_assert_eq!(c.claim, f.claim);
                match true_value(&f) {
                    Some(v) => {
                        let holds = match f.claim {
                            Claim::AtLeast => v >= f.target,
                            Claim::Below => v < f.target,
                        };
                        prop_assert!(holds, "a false claim verified: value {} {:?} {}", v, f.claim, f.target);
                    }
                    None => {
                        // Not solvable here: at least the claim is the original's.
                        prop_assert_eq!(&f.game, &original.game);
                        prop_assert_eq!(&f.position, &original.position);
                        prop_assert_eq!(f.claim, original.claim);
                        prop_assert_eq!(f.target, original.target);
                    }
                }
            }
        }
    }

    /// Any JSON read as a certificate: an error in one line or a verified, true claim.
    #[test]
    fn random_json_certificates(v in any_json(), tokens in proptest::collection::vec(any_json(), 0..12),
                                game in proptest::sample::select(vec!["tictactoe", "mnk", "tree", "connect4", "othello"]),
                                target in any::<i32>(), position in text()) {
        let texts = [
            v.to_string(),
            json!({"format": proof::FORMAT, "game": game, "position": position,
                   "claim": "at_least", "target": target, "tree": tokens}).to_string(),
        ];
        for t in &texts {
            let parsed = no_panic("ProofFile from JSON", || serde_json::from_str::<ProofFile>(t))?;
            if let Ok(f) = parsed {
                if f.position.trim_start().starts_with('@') {
                    continue;
                }
                match no_panic("proof::verify", || gamesolver_shared::registry::proof::verify(&f))? {
                    Err(e) => one_line("proof::verify", &e)?,
                    Ok(_) => {
                        let v = true_value(&f);
                        prop_assert!(v.is_some(), "a random certificate verified: {}", t);
                        let v = v.unwrap();
                        prop_assert!(match f.claim {
                            Claim::AtLeast => v >= f.target,
                            Claim::Below => v < f.target,
                        }, "a false claim verified: {}", t);
                    }
                }
            }
        }
    }
}
