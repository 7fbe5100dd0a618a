//! A property test over the ABI boundary: tic-tac-toe (shared/modules/tictactoe.wat) with one
//! export made hostile after some number of calls (it writes random bytes into the I/O area and
//! returns a random word: bad lengths, bad statuses, bad moves, bad utilities, garbage text).
//! Loading it and running kernels and notation on it give one-line errors, never a panic, and
//! the well-behaved module keeps working in the same process afterwards.

use super::*;
use crate::model::ZeroSum;
use crate::plan::run_local;
use crate::registry;
use crate::search::Control;
use crate::wire::JobSpec;
use proptest::prelude::*;

const TICTACTOE: &str = include_str!("../../../modules/tictactoe.wat");

/// The exports and whether they return an `i64`.
const EXPORTS: &[(&str, bool)] = &[
    ("gs_abi_version", false),
    ("gs_io", false),
    ("gs_describe", false),
    ("gs_init", false),
    ("gs_status", false),
    ("gs_moves", false),
    ("gs_play", false),
    ("gs_step", false),
    ("gs_returns", false),
    ("gs_hash", true),
    ("gs_immediate", false),
    ("gs_format_position", false),
    ("gs_parse_position", false),
    ("gs_format_move", false),
    ("gs_parse_move", false),
];

/// Where the hostile bytes wait in the module's memory (free in tictactoe.wat's layout).
const GARBAGE_AT: usize = 3072;

/// Tic-tac-toe whose export `name`, from its `after + 1`-th call on, writes `bytes` at offset
/// `at` of the I/O area and returns `word` (`as_v1`: the module says ABI version 1).
fn hostile(name: &str, after: u32, at: u32, bytes: &[u8], word: i64, as_v1: bool) -> String {
    let wide = EXPORTS.iter().any(|&(n, w)| n == name && w);
    let lines: Vec<&str> = TICTACTOE.lines().collect();
    let head = lines
        .iter()
        .position(|l| l.contains(&format!("(export \"{name}\")")))
        .expect("the export");
    let mut end = head + 1;
    while lines[end].trim_start().starts_with("(local ") {
        end += 1;
    }
    let data: String = bytes.iter().map(|b| format!("\\{b:02x}")).collect();
    let ret = if wide {
        format!("(i64.const {word})")
    } else {
        format!("(i32.const {})", word as i32)
    };
    let inject = format!(
        "(global.set $calls (i32.add (global.get $calls) (i32.const 1)))\n\
         (if (i32.gt_u (global.get $calls) (i32.const {after})) (then\n\
           (memory.copy (i32.add (global.get $io) (i32.const {at})) (i32.const {GARBAGE_AT}) (i32.const {}))\n\
           (return {ret})))",
        bytes.len()
    );
    let mut out: Vec<String> = lines[..end].iter().map(|l| l.to_string()).collect();
    out.push(inject);
    out.extend(lines[end..].iter().map(|l| l.to_string()));
    let mut text = out.join("\n");
    text = text.replacen(
        "(global $io",
        &format!(
            "(global $calls (mut i32) (i32.const 0))\n  (data (i32.const {GARBAGE_AT}) \"{data}\")\n  (global $io"
        ),
        1,
    );
    if as_v1 {
        text = text.replacen(
            "(result i32)\n    (i32.const 2))",
            "(result i32)\n    (i32.const 1))",
            1,
        );
    }
    text
}

fn one_line(what: &str, e: &str) {
    assert!(
        !e.contains('\n') && !e.is_empty() && e.len() < 1000,
        "{what}: not one line: {e:?}"
    );
}

/// Runs `job` on the module `sha`: a result or a one-line error.
fn job(sha: &str, algorithm: &str, options: &[(&str, &str)]) {
    let spec = JobSpec::new(&format!("module:{sha}"), "", algorithm).with_options(options);
    match registry::prepare(&spec) {
        Err(e) => one_line(algorithm, &e.to_string()),
        Ok(p) => {
            if let Err(e) = run_local(p.as_ref(), &Control::unlimited()) {
                one_line(algorithm, &e.to_string());
            }
        }
    }
}

/// The well-behaved module still solves tic-tac-toe in this process.
fn still_works() {
    let loaded = load(TICTACTOE.as_bytes()).expect("the module loads");
    for algorithm in ["alphabeta", "pns"] {
        let spec = JobSpec::new(&format!("module:{}", loaded.sha256), "5", algorithm);
        let p = registry::prepare(&spec).expect("prepared");
        let r = run_local(p.as_ref(), &Control::unlimited()).expect("a result");
        assert_eq!(r.value, serde_json::json!(0), "{algorithm}");
    }
}

fn word() -> impl Strategy<Value = i64> {
    prop_oneof![
        prop::sample::select(vec![
            0i64,
            1,
            2,
            3,
            8,
            9,
            256,
            257,
            512,
            513,
            768,
            1024,
            -1,
            -2,
            -3,
            -9,
            -300,
            -20_000,
            i32::MIN as i64,
            i32::MAX as i64,
            i64::MIN,
            i64::MAX,
        ]),
        any::<i64>(),
    ]
}

fn garbage() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..64),
        // Text-like: digits, separators, line breaks, invalid UTF-8.
        prop::collection::vec(
            prop::sample::select(b"0123456789,= \n\r\t#-kx\xff\xc3".to_vec()),
            0..64
        ),
        // Little-endian words: statuses, counts and moves.
        prop::collection::vec(
            prop::sample::select(vec![0u32, 1, 2, 8, 9, 10, 512, 0xffff_ffff, 0x8000_0000]),
            0..16
        )
        .prop_map(|w| w.iter().flat_map(|x| x.to_le_bytes()).collect()),
        // Doubles: utilities inside and outside the range, fractions, NaN, infinities.
        prop::collection::vec(
            prop::sample::select(vec![
                0.0f64,
                1.0,
                -1.0,
                0.5,
                2.0,
                f64::NAN,
                f64::INFINITY,
                -0.0
            ]),
            0..6
        )
        .prop_map(|w| w.iter().flat_map(|x| x.to_le_bytes()).collect()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn hostile_answers_give_one_line_errors_and_no_panic(
        export in prop::sample::select(EXPORTS.iter().map(|e| e.0).collect::<Vec<_>>()),
        after in prop_oneof![0u32..4, 4u32..400, 400u32..5000],
        at in prop::sample::select(vec![0u32, 0, 8, 12, 16, 20, 24, 40]),
        bytes in garbage(),
        word in word(),
        as_v1 in any::<bool>(),
    ) {
        let text = hostile(export, after, at, &bytes, word, as_v1);
        match load(text.as_bytes()) {
            Err(e) => one_line("load", &e),
            Ok(loaded) => {
                let sha = loaded.sha256.clone();
                job(&sha, "alphabeta", &[]);
                job(&sha, "alphabeta", &[("analyse", "all")]);
                job(&sha, "pns", &[]);
                job(&sha, "mcts", &[("playouts", "500"), ("seed", "1")]);
                // Notation and the game's own answers, directly.
                if let Ok(game) = ModuleGame::new(loaded, &Default::default()) {
                    let s = game.initial_state();
                    for text in ["5", "1,2,3", "", "x", "99"] {
                        if let Err(e) = game.parse_position(text) {
                            one_line("parse_position", &e.to_string());
                        }
                        if let Err(e) = game.parse_move(&s, text) {
                            one_line("parse_move", &e.to_string());
                        }
                    }
                    let _ = game.format_position(&s);
                    let _ = game.format_move(&s, 4);
                    let _ = game.hash(&s);
                    let _ = game.immediate_value(&s);
                    if let Some(f) = game.fault() {
                        one_line("fault", &f);
                    }
                }
            }
        }
        still_works();
    }
}
