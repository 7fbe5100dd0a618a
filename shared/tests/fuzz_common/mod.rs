//! Helpers shared by the property tests (`fuzz_*.rs`): the run configuration, the check that a
//! call does not panic, and generators of hostile text.
//!
//! Each property runs 256 cases unless `PROPTEST_CASES` says otherwise (the README's "Fuzzing"
//! paragraph gives the command for a longer run). Failures are shrunk to a minimal input by
//! proptest and reported with it; nothing is written to `proptest-regressions/`: a bug found
//! gets a named unit test beside the code it fixes.

#![allow(dead_code)]

use gamesolver_shared::model::Game;
use proptest::prelude::*;
use proptest::test_runner::Config;
use rand::{Rng, SeedableRng};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The configuration of every property: `default` cases (or `PROPTEST_CASES`), no
/// regression files.
pub fn config(default: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

/// Runs `f`, turning a panic into a test failure that names `what` and the panic message.
pub fn no_panic<T>(what: &str, f: impl FnOnce() -> T) -> Result<T, TestCaseError> {
    catch_unwind(AssertUnwindSafe(f))
        .map_err(|e| TestCaseError::fail(format!("{what} panicked: {}", panic_message(&*e))))
}

/// The message of a caught panic.
pub fn panic_message(e: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = e.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = e.downcast_ref::<String>() {
        s.clone()
    } else {
        "(not a string)".into()
    }
}

/// Checks that an error message is one clean line: not empty, no line break or other control
/// character, and not an echo of a huge input.
pub fn one_line(what: &str, msg: &str) -> Result<(), TestCaseError> {
    prop_assert!(!msg.trim().is_empty(), "{what}: empty error message");
    prop_assert!(
        !msg.chars().any(|c| c.is_control()),
        "{what}: error message with a control character: {msg:?}"
    );
    prop_assert!(
        msg.len() <= 2_000,
        "{what}: error message of {} bytes: {}...",
        msg.len(),
        msg.chars().take(200).collect::<String>()
    );
    Ok(())
}

/// Values a hostile user types first: limits of integer types, floats that are not numbers,
/// empty and blank text, unicode, paths, very long text.
pub fn nasty_values() -> Vec<String> {
    let mut v: Vec<String> = [
        "0",
        "-0",
        "1",
        "-1",
        "2",
        "+1",
        "00",
        "007",
        "0x10",
        "1_000",
        "1e3",
        "255",
        "256",
        "65535",
        "65536",
        "2147483647",
        "2147483648",
        "-2147483648",
        "-2147483649",
        "4294967295",
        "4294967296",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "18446744073709551615",
        "18446744073709551616",
        "340282366920938463463374607431768211456",
        "NaN",
        "nan",
        "inf",
        "-inf",
        "infinity",
        "1e308",
        "1e309",
        "-1e308",
        "5e-324",
        "0.5",
        "-0.0",
        "1.",
        ".5",
        "",
        " ",
        "\t\n",
        "\u{0}",
        "é",
        "\u{202e}",
        "🂡",
        "日本",
        "true",
        "false",
        "null",
        "[]",
        "{}",
        "@/etc/passwd",
        "../x",
        "/tmp/x",
        "C:\\x",
        "a=b",
        "5T",
        "line",
        "move",
        "rc_201.1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.push("9".repeat(400));
    v.push("-".to_string() + &"9".repeat(400));
    v.push("1".repeat(10_000));
    v.push("é".repeat(5_000));
    v
}

/// A value from [`nasty_values`].
pub fn nasty() -> impl Strategy<Value = String> {
    proptest::sample::select(nasty_values())
}

/// Text of every kind: nasty values, short strings over the characters notations use, any
/// printable unicode, and valid UTF-8 made of random bytes.
pub fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => nasty(),
        3 => "[0-9a-hA-HxXoOwWbB,;:/ .\\-+|#*\n]{0,40}",
        2 => "\\PC{0,40}",
        2 => proptest::collection::vec(any::<u8>(), 0..64)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ]
}

/// One change to a text (see [`mutate`]).
#[derive(Clone, Debug)]
pub enum Mutation {
    /// Keep only the text before this character.
    Truncate(prop::sample::Index),
    /// Remove one character.
    Delete(prop::sample::Index),
    /// Insert text before this character.
    Insert(prop::sample::Index, String),
    /// Repeat the characters from the first index to the second this many times.
    Duplicate(prop::sample::Index, prop::sample::Index, usize),
    /// Replace the first run of digits with a huge or odd number.
    Number(String),
    /// Repeat the whole text this many times, joined by a separator.
    Repeat(usize, String),
}

fn separator() -> impl Strategy<Value = String> {
    proptest::sample::select(vec![
        ",", " ", "/", ";", ":", "-", "|", "\n", "\t", ",,", "  ", "", "0", "x", "é",
    ])
    .prop_map(String::from)
}

fn insertion() -> impl Strategy<Value = String> {
    prop_oneof![separator(), nasty(), "[0-9a-z,/ ]{1,8}"]
}

/// Strategy for one [`Mutation`].
pub fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<prop::sample::Index>().prop_map(Mutation::Truncate),
        any::<prop::sample::Index>().prop_map(Mutation::Delete),
        (any::<prop::sample::Index>(), insertion()).prop_map(|(i, s)| Mutation::Insert(i, s)),
        (
            any::<prop::sample::Index>(),
            any::<prop::sample::Index>(),
            1usize..50
        )
            .prop_map(|(a, b, n)| Mutation::Duplicate(a, b, n)),
        proptest::sample::select(vec![
            "0",
            "-1",
            "255",
            "256",
            "65536",
            "4294967296",
            "18446744073709551616",
            "99999999999999999999999999999",
        ])
        .prop_map(|s| Mutation::Number(s.into())),
        (1usize..1000, separator()).prop_map(|(n, s)| Mutation::Repeat(n, s)),
    ]
}

/// Longest text a mutation makes, in bytes.
const MAX_TEXT: usize = 1 << 16;

/// Applies mutations to `base`.
pub fn mutate(base: &str, muts: &[Mutation]) -> String {
    let mut s = base.to_string();
    for m in muts {
        // Character boundaries, including the end.
        let cuts: Vec<usize> = s
            .char_indices()
            .map(|(i, _)| i)
            .chain(std::iter::once(s.len()))
            .collect();
        let at = |i: &prop::sample::Index| cuts[i.index(cuts.len())];
        s = match m {
            Mutation::Truncate(i) => s[..at(i)].to_string(),
            Mutation::Delete(i) => {
                let a = at(i);
                let b = cuts.iter().copied().find(|&c| c > a).unwrap_or(a);
                format!("{}{}", &s[..a], &s[b..])
            }
            Mutation::Insert(i, t) => {
                let a = at(i);
                format!("{}{t}{}", &s[..a], &s[a..])
            }
            Mutation::Duplicate(i, j, n) => {
                let (a, b) = (at(i).min(at(j)), at(i).max(at(j)));
                format!("{}{}{}", &s[..b], s[a..b].repeat(*n), &s[b..])
            }
            Mutation::Number(t) => match s.find(|c: char| c.is_ascii_digit()) {
                Some(a) => {
                    let b = s[a..]
                        .find(|c: char| !c.is_ascii_digit())
                        .map_or(s.len(), |k| a + k);
                    format!("{}{t}{}", &s[..a], &s[b..])
                }
                None => format!("{s}{t}"),
            },
            Mutation::Repeat(n, sep) => vec![s.as_str(); *n].join(sep),
        };
        // Keep inputs bounded (a million bytes) however the mutations compound.
        if s.len() > 1 << 20 {
            let cut = (0..=1 << 20)
                .rev()
                .find(|&i| s.is_char_boundary(i))
                .unwrap();
            s.truncate(cut);
        }
    }
    s
}

/// Up to four mutations.
pub fn mutations() -> impl Strategy<Value = Vec<Mutation>> {
    proptest::collection::vec(mutation(), 0..4)
}

/// Plays up to `plies` random legal moves (chance outcomes uniformly) from the start.
pub fn random_state<G: Game>(g: &G, seed: u64, plies: usize) -> G::State {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut s = g.initial_state();
    let mut moves = Vec::new();
    for _ in 0..plies {
        if g.is_terminal(&s) {
            break;
        }
        g.legal_moves(&s, &mut moves);
        if moves.is_empty() {
            break;
        }
        let mv = moves[rng.gen_range(0..moves.len())];
        g.apply(&mut s, mv);
    }
    s
}
