//! Game modules (issue 48, docs/GAME_MODULES.md), in process: tic-tac-toe as a WebAssembly
//! module (shared/modules/tictactoe.wat) against the catalogue's native tic-tac-toe under every
//! kernel that fits (same values, best moves and node counts), hostile modules (each refused at
//! load or stopped at run time with one line, and a normal job runs afterwards), and the
//! command line's `--game-module`. Needs the `modules` feature, and the binary built with it
//! for the CLI part: `cargo build --release -p gamesolver --features modules && cargo test
//! --release -p gamesolver-e2e --features modules --test game_modules`.
#![cfg(feature = "modules")]

use gamesolver_shared::games::module;
use gamesolver_shared::plan::run_local;
use gamesolver_shared::registry::{self, SolveError};
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::{JobResult, JobSpec};

const TICTACTOE: &str = include_str!("../../shared/modules/tictactoe.wat");

/// Loads the tic-tac-toe module; its job name.
fn tictactoe() -> String {
    let loaded = module::load(TICTACTOE.as_bytes()).expect("the module loads");
    format!("module:{}", loaded.sha256)
}

fn run(job: &JobSpec) -> Result<JobResult, SolveError> {
    let prepared = registry::prepare(job)?;
    run_local(prepared.as_ref(), &Control::unlimited())
}

/// Positions: the start, openings, a forced win, a draw-bound middle game, a finished game.
const POSITIONS: &[&str] = &[
    "", "5", "1", "51", "519", "15", "1524", "5137", "14253", "1,5,9,2",
];

/// Value, best move, node count and the kernel's own figures, on the module and natively.
fn compare(algorithm: &str, options: &[(&str, &str)]) {
    let v1 = module::load(as_v1(TICTACTOE).as_bytes()).expect("the module loads");
    for (name, pos) in [tictactoe(), format!("module:{}", v1.sha256)]
        .iter()
        .flat_map(|n| POSITIONS.iter().map(move |p| (n, p)))
    {
        let native = run(&JobSpec::new("tictactoe", pos, algorithm).with_options(options));
        let wasm = run(&JobSpec::new(name, pos, algorithm).with_options(options));
        let what = format!("{algorithm} {options:?} at '{pos}' on {}", &name[..16]);
        match (native, wasm) {
            (Ok(n), Ok(w)) => {
                assert_eq!(w.value, n.value, "value, {what}");
                assert_eq!(w.best_move, n.best_move, "best move, {what}");
                assert_eq!(w.nodes, n.nodes, "nodes, {what}");
                let figures = |r: &JobResult| {
                    let mut e = serde_json::to_value(&r.extra).unwrap();
                    if let Some(m) = e.as_object_mut() {
                        // The size of a position differs (the host's position is not the native one).
                        m.retain(|k, _| {
                            !k.contains("ms")
                                && !k.contains("per_s")
                                && !k.ends_with("bytes_per_node")
                        });
                    }
                    e
                };
                assert_eq!(figures(&w), figures(&n), "extra, {what}");
            }
            (Err(n), Err(w)) => {
                assert_eq!(
                    std::mem::discriminant(&n),
                    std::mem::discriminant(&w),
                    "{what}: {n} / {w}"
                );
            }
            (n, w) => panic!("{what}: native {n:?}, module {w:?}"),
        }
    }
}

#[test]
fn minimax_and_alphabeta_agree_with_the_native_game() {
    compare("minimax", &[]);
    compare("alphabeta", &[]);
    compare("alphabeta", &[("depth", "3")]);
}

#[test]
fn analyse_all_agrees_with_the_native_game() {
    compare("alphabeta", &[("analyse", "all")]);
}

#[test]
fn proof_number_kernels_agree_with_the_native_game() {
    for algorithm in ["pns", "dfpn", "pn2", "pdspn", "jlpns"] {
        compare(algorithm, &[]);
    }
    compare("dfpn", &[("target", "1")]);
}

#[test]
fn mcts_with_a_seed_agrees_with_the_native_game() {
    compare("mcts", &[("playouts", "3000"), ("seed", "7")]);
    compare(
        "mcts",
        &[("playouts", "2000"), ("seed", "3"), ("solver", "false")],
    );
}

const WEAKSCHUR: &str = include_str!("../../shared/modules/weakschur.wat");

/// Weak Schur as a module (shared/modules/weakschur.wat) against the catalogue's `weakschur`:
/// seeded NRPA and NMCS give the same scores and work, and NRPA finds WS(3) = 23, the
/// published value (Walker 1952; the catalogue's source cites the sequence WS(1..4)).
#[test]
fn the_weak_schur_module_agrees_with_the_native_game() {
    let loaded = module::load(WEAKSCHUR.as_bytes()).expect("the module loads");
    let name = format!("module:{}", loaded.sha256);
    for (k, algorithm, options) in [
        (
            "4",
            "nrpa",
            vec![("level", "2"), ("iterations", "30"), ("seed", "5")],
        ),
        (
            "3",
            "nrpa",
            vec![("level", "2"), ("iterations", "100"), ("seed", "1")],
        ),
        ("4", "nmcs", vec![("level", "1"), ("seed", "2")]),
        ("2", "nmcs", vec![("level", "2"), ("seed", "1")]),
    ] {
        let job = |game: &str| {
            JobSpec::new(game, "", algorithm)
                .with_options(&options)
                .with_params(&[("k", k)])
        };
        let n = run(&job("weakschur")).unwrap();
        let w = run(&job(&name)).unwrap();
        let what = format!("{algorithm} k={k} {options:?}");
        assert_eq!(w.value, n.value, "{what}");
        assert_eq!(w.nodes, n.nodes, "{what}");
        assert_eq!(w.best_move, n.best_move, "{what}");
        if k == "3" {
            assert_eq!(w.value.as_f64(), Some(23.0), "{what}");
        }
    }
    // Positions and moves read and print as the catalogue's; an illegal one is refused.
    let n = run(&JobSpec::new("weakschur", "1221", "nmcs").with_params(&[("k", "3")])).unwrap();
    let w = run(&JobSpec::new(&name, "1221", "nmcs").with_params(&[("k", "3")])).unwrap();
    assert_eq!(w.value, n.value);
    let e = run(&JobSpec::new(&name, "111", "nmcs"))
        .unwrap_err()
        .to_string();
    assert!(!e.contains('\n') && e.contains("sum of two"), "{e}");
}

/// The exhaustive walk of the module game gives the published counts of tic-tac-toe: 255,168
/// complete games (131,184 won by X, 77,904 by O, 46,080 drawn), as the native game does.
#[test]
fn the_module_game_has_the_published_game_counts() {
    use gamesolver_shared::model::Game;
    let loaded = module::load(TICTACTOE.as_bytes()).unwrap();
    let g = module::ModuleGame::new(loaded, &Default::default()).unwrap();
    fn walk(g: &module::ModuleGame, s: &module::Position, counts: &mut [u64; 3]) {
        if g.is_terminal(s) {
            let mut r = [0.0; 2];
            g.returns(s, &mut r);
            counts[if r[0] > 0.0 {
                0
            } else if r[1] > 0.0 {
                1
            } else {
                2
            }] += 1;
            return;
        }
        let mut moves = Vec::new();
        g.legal_moves(s, &mut moves);
        for m in moves {
            let mut c = s.clone();
            g.apply(&mut c, m);
            walk(g, &c, counts);
        }
    }
    let mut counts = [0u64; 3];
    walk(&g, &g.initial_state(), &mut counts);
    assert_eq!(counts, [131_184, 77_904, 46_080]);
    assert!(g.fault().is_none());
    // Notation as the native game's: a finished game in a legal order, errors naming the move.
    let native = gamesolver_shared::games::mnk::Mnk::tictactoe();
    for text in [
        "", "5", "519", "14253", "1,5,9,2", "753", "123456", "5,5", "0", "1x",
    ] {
        let n = native.parse_position(text);
        let w = g.parse_position(text);
        match (n, w) {
            (Ok(n), Ok(w)) => assert_eq!(g.format_position(&w), native.format_position(&n)),
            (Err(_), Err(e)) => assert!(!e.to_string().contains('\n')),
            (n, w) => panic!("'{text}': native {n:?}, module {w:?}"),
        }
    }
    let e = g.parse_position("155").unwrap_err().to_string();
    assert_eq!(e, "move 3: the cell is already taken");
}

/// A module built from tic-tac-toe's source with `edit` applied (a string replaced).
fn edited(from: &str, to: &str) -> String {
    assert!(TICTACTOE.contains(from), "the source has '{from}'");
    TICTACTOE.replacen(from, to, 1)
}

/// The same module declaring ABI version 1: the host ignores its `gs_step` and calls the
/// version 1 exports one by one.
fn as_v1(text: &str) -> String {
    const V2: &str = "(result i32)\n    (i32.const 2))";
    assert!(text.contains(V2), "the source declares version 2");
    text.replacen(V2, "(result i32)\n    (i32.const 1))", 1)
}

/// What an error names when `export` failed: with ABI v2 the host may have reached it through
/// `gs_step`, which plays, lists the moves, hashes, and scores with the other exports.
fn through_step(export: &str, v1: bool, what: &str) -> String {
    let in_step = [
        "gs_play",
        "gs_moves",
        "gs_returns",
        "gs_hash",
        "gs_immediate",
    ];
    if v1 || !in_step.contains(&export) {
        format!("{export} {what}")
    } else {
        what.to_string()
    }
}

/// The opening of an export's body in the source: its first line and its locals.
fn export(name: &str) -> String {
    let lines: Vec<&str> = TICTACTOE.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains(&format!("(export \"{name}\")")))
        .unwrap_or_else(|| panic!("no export {name}"));
    let mut end = at + 1;
    while lines[end].trim_start().starts_with("(local ") {
        end += 1;
    }
    lines[at..end].join("\n")
}

/// A job on `module` (text): `Err(one line)` from load, prepare or run.
fn job_on(
    module_text: &str,
    algorithm: &str,
    options: &[(&str, &str)],
) -> Result<JobResult, String> {
    let loaded = module::load(module_text.as_bytes())?;
    let job =
        JobSpec::new(&format!("module:{}", loaded.sha256), "", algorithm).with_options(options);
    run(&job).map_err(|e| e.to_string())
}

/// One line, naming what went wrong; and the process goes on: a native job and the good
/// module's job still run.
fn assert_one_line(e: &str, want: &str) {
    assert!(!e.contains('\n') && e.len() < 300, "{e}");
    assert!(e.contains(want), "'{e}' should say '{want}'");
    let r = run(&JobSpec::new("tictactoe", "", "alphabeta")).unwrap();
    assert_eq!(r.value, serde_json::json!(0));
    let r = run(&JobSpec::new(&tictactoe(), "5", "alphabeta")).unwrap();
    assert_eq!(r.value, serde_json::json!(0));
}

/// Every export looping for ever: stopped by fuel at load (the probe calls them) or, for the
/// exports the probe does not call, during the search.
#[test]
fn an_infinite_loop_in_any_export_is_stopped_by_fuel() {
    for name in [
        "gs_abi_version",
        "gs_io",
        "gs_describe",
        "gs_init",
        "gs_moves",
        "gs_play",
        "gs_returns",
        "gs_hash",
        "gs_immediate",
        "gs_format_position",
        "gs_parse_position",
        "gs_format_move",
        "gs_parse_move",
        "gs_step",
    ] {
        let head = export(name);
        let looping = edited(&head, &format!("{head}\n (loop $spin (br $spin))"));
        let e = job_on(&looping, "alphabeta", &[]).expect_err(name);
        assert_one_line(&e, &through_step(name, false, "ran out of fuel"));
        if name != "gs_step" && name != "gs_abi_version" {
            let e = job_on(&as_v1(&looping), "alphabeta", &[]).expect_err(name);
            assert_one_line(&e, &format!("{name} ran out of fuel"));
        }
    }
}

/// Faults that start after many calls (past the load-time probe), deep inside a search: every
/// kernel family stops cleanly and the job reports the fault.
#[test]
fn a_fault_deep_in_a_search_ends_the_job_with_its_error() {
    let late = |name: &str, fault: &str| {
        let head = export(name);
        edited(
            &head,
            &format!(
                "{head}\n (global.set $calls (i32.add (global.get $calls) (i32.const 1)))\n \
             (if (i32.gt_u (global.get $calls) (i32.const 300)) (then {fault}))"
            ),
        )
        .replacen(
            "(global $io",
            "(global $calls (mut i32) (i32.const 0))\n  (global $io",
            1,
        )
    };
    for (algorithm, options) in [
        ("alphabeta", vec![]),
        ("minimax", vec![]),
        ("pns", vec![]),
        ("dfpn", vec![]),
        ("pn2", vec![]),
        ("pdspn", vec![]),
        ("jlpns", vec![]),
        ("mcts", vec![("playouts", "20000"), ("seed", "1")]),
        ("alphabeta", vec![("analyse", "all")]),
    ] {
        for (name, fault, want) in [
            ("gs_play", "(unreachable)", "trapped"),
            ("gs_moves", "(loop $spin (br $spin))", "ran out of fuel"),
            ("gs_play", "(return (i32.const 7))", "not a status"),
            ("gs_moves", "(return (i32.const 0))", "listed 0 moves"),
        ] {
            for v1 in [false, true] {
                let text = if v1 {
                    as_v1(&late(name, fault))
                } else {
                    late(name, fault)
                };
                let e =
                    job_on(&text, algorithm, &options).expect_err(&format!("{algorithm} {name}"));
                let want = match want {
                    "trapped" | "ran out of fuel" => through_step(name, v1, want),
                    _ => want.to_string(),
                };
                assert_one_line(&e, &want);
            }
        }
    }
}

#[test]
fn memory_past_the_cap_is_refused() {
    // Growing by 2 GiB in one step, and step by step in a loop.
    let head = export("gs_hash");
    let grow = edited(
        &head,
        &format!("{head}\n (drop (memory.grow (i32.const 32768)))"),
    );
    assert_one_line(
        &job_on(&grow, "alphabeta", &[]).unwrap_err(),
        "memory past the cap",
    );
    let creep = edited(
        &head,
        &format!("{head}\n (loop $more (br_if $more (i32.ge_s (memory.grow (i32.const 16)) (i32.const 0))))"),
    );
    assert_one_line(
        &job_on(&creep, "alphabeta", &[]).unwrap_err(),
        "memory past the cap",
    );
    // A module that asks for more than the cap at the start.
    let big = TICTACTOE.replacen(
        "(memory (export \"memory\") 1)",
        "(memory (export \"memory\") 2000)",
        1,
    );
    assert_one_line(
        &job_on(&big, "alphabeta", &[]).unwrap_err(),
        "memory past the cap",
    );
}

#[test]
fn imports_wrong_versions_and_bad_descriptions_are_refused_at_load() {
    let imports = TICTACTOE.replacen(
        "(memory (export",
        "(import \"wasi_snapshot_preview1\" \"fd_write\" (func $w (param i32 i32 i32 i32) (result i32)))\n  (memory (export",
        1,
    );
    assert_one_line(
        &module::load(imports.as_bytes()).unwrap_err(),
        "may import nothing",
    );
    let v3 = edited(
        "(result i32)\n    (i32.const 2))",
        "(result i32)\n    (i32.const 3))",
    );
    assert_one_line(
        &module::load(v3.as_bytes()).unwrap_err(),
        "ABI versions 1 to 2",
    );
    let no_step = edited("(export \"gs_step\")", "");
    assert_one_line(
        &module::load(no_step.as_bytes()).unwrap_err(),
        "exports no gs_step",
    );
    // Without gs_step, as version 1, it loads and plays.
    let r = job_on(&as_v1(&no_step), "alphabeta", &[]).unwrap();
    assert_eq!(r.value, serde_json::json!(0));
    let no_export = edited("(export \"gs_hash\")", "");
    assert_one_line(&module::load(no_export.as_bytes()).unwrap_err(), "gs_hash");
    let three = edited("players=2\\nzero_sum=1", "players=3\\nzero_sum=1");
    assert_one_line(
        &module::load(three.as_bytes()).unwrap_err(),
        "zero-sum game has 2 players",
    );
    assert_one_line(
        &module::load(b"\0asm\x01\0\0\0garbage").unwrap_err(),
        "not a valid WebAssembly",
    );
    assert_one_line(
        &module::load(b"(module (func").unwrap_err(),
        "not a WebAssembly module",
    );
    let huge = vec![0u8; module::abi::MAX_MODULE_BYTES + 1];
    assert_one_line(&module::load(&huge).unwrap_err(), "more than the");
}

#[test]
fn illegal_moves_inconsistent_hashes_and_endless_games_are_caught() {
    // gs_moves lists a taken cell: gs_play refuses it.
    let head = export("gs_moves");
    let taken = edited(&head, &format!(
        "{head}\n (if (i32.gt_u (call $plies) (i32.const 1)) (then (i32.store (global.get $io) (i32.const 99)) (return (i32.const 1))))"
    ));
    assert_one_line(
        &module::load(taken.as_bytes()).unwrap_err(),
        "outside the declared range",
    );
    let refused = edited(&head, &format!(
        "{head}\n (if (i32.gt_u (call $plies) (i32.const 1)) (then (i32.store (global.get $io) (i32.const 0)) (i32.store (i32.add (global.get $io) (i32.const 4)) (i32.const 1)) (return (i32.const 2))))"
    ));
    assert_one_line(
        &module::load(refused.as_bytes()).unwrap_err(),
        "gs_step refused move",
    );
    assert_one_line(
        &module::load(as_v1(&refused).as_bytes()).unwrap_err(),
        "gs_play refused move",
    );
    // A hash that counts its calls.
    let head = export("gs_hash");
    let counting = edited(&head, &format!("{head}\n (global.set $n (i32.add (global.get $n) (i32.const 1)))\n (return (i64.extend_i32_u (global.get $n)))"))
        .replacen("(global $io", "(global $n (mut i32) (i32.const 0))\n  (global $io", 1);
    assert_one_line(
        &module::load(counting.as_bytes()).unwrap_err(),
        "two hashes for one position",
    );
    // A game that never ends: the last cell never ends it and play goes on for ever
    // (gs_play undoes the ninth stone); the host's cap of max_plies stops it.
    let endless = edited(
        "(if (result i32) (i32.or (call $won) (i32.eq (call $plies) (i32.const 9)))",
        "(if (result i32) (i32.and (call $won) (i32.const 0))",
    )
    .replacen(
        "(i32.store8 offset=4 (global.get $io) (i32.add (call $plies) (i32.const 1)))",
        "(i32.store8 offset=4 (global.get $io) (i32.add (call $plies) (i32.const 1)))\n    (if (i32.eq (call $plies) (i32.const 9)) (then (i64.store (global.get $io) (i64.const 0))))\n    (i32.store8 offset=5 (global.get $io) (i32.const 0))",
        1,
    );
    assert_one_line(
        &module::load(endless.as_bytes()).unwrap_err(),
        "did not end within max_plies",
    );
}

/// `--game-module FILE` on the command line: the text format and the binary run in process
/// and agree with the catalogue game; a bad module is exit 2 with one line.
#[test]
fn the_command_line_runs_a_module_file() {
    let dir = gamesolver_e2e::scratch("game-modules-cli");
    let wat = dir.join("tictactoe.wat");
    std::fs::write(&wat, TICTACTOE).unwrap();
    let wasm = dir.join("tictactoe.wasm");
    std::fs::write(&wasm, wat::parse_str(TICTACTOE).unwrap()).unwrap();
    let native = gamesolver_e2e::gamesolver(&[
        "solve",
        "--game",
        "tictactoe",
        "--algorithm",
        "alphabeta",
        "--position",
        "1524",
        "--json",
    ]);
    assert_eq!(native.0, Some(0), "{}", native.2);
    let native: serde_json::Value = serde_json::from_str(&native.1).unwrap();
    for file in [&wat, &wasm] {
        let (code, out, err) = gamesolver_e2e::gamesolver(&[
            "solve",
            "--game-module",
            file.to_str().unwrap(),
            "--algorithm",
            "alphabeta",
            "--position",
            "1524",
            "--json",
        ]);
        assert_eq!(code, Some(0), "{err}");
        let r: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            (&r["value"], &r["nodes"]),
            (&native["value"], &native["nodes"])
        );
    }
    let (code, out, err) = gamesolver_e2e::gamesolver(&[
        "analyse",
        "--game-module",
        wat.to_str().unwrap(),
        "--algorithm",
        "alphabeta",
        "--position",
        "15",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.lines().count() >= 7, "{out}");
    let bad = dir.join("bad.wat");
    std::fs::write(
        &bad,
        edited(
            "(result i32)\n    (i32.const 2))",
            "(result i32)\n    (i32.const 9))",
        ),
    )
    .unwrap();
    for path in [bad.to_str().unwrap(), "/nonexistent/x.wasm"] {
        let (code, _, err) = gamesolver_e2e::gamesolver(&[
            "solve",
            "--game-module",
            path,
            "--algorithm",
            "alphabeta",
        ]);
        assert_eq!(code, Some(2), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    let (code, _, err) = gamesolver_e2e::gamesolver(&[
        "solve",
        "--game",
        "tictactoe",
        "--game-module",
        wat.to_str().unwrap(),
        "--algorithm",
        "alphabeta",
    ]);
    assert_eq!(code, Some(2), "{err}");
}
