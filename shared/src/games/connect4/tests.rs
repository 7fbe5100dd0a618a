use super::*;
use crate::model::battery;

fn battery_for<W: Word>(w: u32, h: u32, playouts: usize, seed: u64) {
    let g = Connect4::<W>::new(w, h, 1).unwrap();
    let s = g.initial_state();
    battery::check_game(&g, &s, playouts, seed);
    battery::check_hashed(&g, &s, playouts, seed + 1);
    battery::check_zero_sum(&g, &s, playouts, seed + 2);
}

#[test]
fn battery_on_every_word_size() {
    battery_for::<u64>(7, 6, 300, 10);
    battery_for::<u64>(4, 4, 300, 20);
    battery_for::<u64>(5, 4, 200, 30);
    battery_for::<u64>(6, 5, 200, 40);
    battery_for::<u64>(8, 7, 100, 50);
    battery_for::<u128>(9, 7, 100, 60);
    battery_for::<Wide<2>>(9, 7, 50, 65);
    battery_for::<Wide<4>>(11, 11, 40, 70);
    battery_for::<u64>(1, 4, 20, 80);
}

#[test]
fn word_sizes_follow_the_board() {
    assert_eq!(word_size(7, 6, 1), Ok(WordSize::U64));
    assert_eq!(word_size(8, 7, 1), Ok(WordSize::U64));
    assert_eq!(word_size(9, 7, 1), Ok(WordSize::U128));
    assert_eq!(word_size(11, 11, 1), Ok(WordSize::W256));
    assert_eq!(word_size(1, 40, 1), Ok(WordSize::U128));
    assert!(word_size(0, 6, 1).is_err());
    assert!(word_size(7, 6, 2).is_err());
    assert!(word_size(35, 64, 1).unwrap_err().contains("at most 512"));
    assert!(Connect4::<u64>::new(9, 7, 1).is_err());
}

#[test]
fn scores_follow_the_contract() {
    let g = Connect4::<u64>::new(7, 6, 1).unwrap();
    // X wins vertically with its 4th stone, ply 7: score 1 + (42 - 7) / 2 = 18 for X.
    let s = g.parse_position("1212121").unwrap();
    assert!(g.is_terminal(&s));
    assert_eq!(g.terminal_value(&s), -18 * VALUE_SCALE);
    let s = g.parse_position("121212").unwrap();
    assert_eq!(g.immediate_value(&s), Some(18 * VALUE_SCALE));
    assert_eq!(g.value_to_json(&s, 18 * VALUE_SCALE), serde_json::json!(18));
    assert_eq!(g.parse_target(&s, "-3"), Ok(-300));
    // The empty board: between losing to the 2nd stone of O (-21) and winning with the 1st (+21).
    assert_eq!(
        g.value_bounds(&g.initial_state()),
        (-21 * VALUE_SCALE, 21 * VALUE_SCALE)
    );
}

#[test]
fn notation_errors_name_the_move() {
    let g = Connect4::<u64>::new(7, 6, 1).unwrap();
    let e = g.parse_position("1111118").unwrap_err();
    assert_eq!(
        e.to_string(),
        "move 7 ('8'): column 8 is outside the board (columns 1..7)"
    );
    let e = g.parse_position("4444444").unwrap_err();
    assert_eq!(e.to_string(), "move 7 ('4'): column 4 is full");
    let e = g.parse_position("12x").unwrap_err();
    assert_eq!(
        e.to_string(),
        "move 3 ('x'): column x is outside the board (columns 1..7)"
    );
    let e = g.parse_position("12-").unwrap_err();
    assert_eq!(e.to_string(), "move 3 ('-'): not a column");
    let e = g.parse_position("12121213").unwrap_err();
    assert_eq!(e.to_string(), "move 8 ('3'): the game is already over");
    let g0 = Connect4::<u128>::new(11, 6, 0).unwrap();
    let s = g0.parse_position("0a5A").unwrap();
    assert_eq!(g0.format_move(&s, 10), "a");
    assert_eq!(g0.parse_position(&g0.format_position(&s)).unwrap(), s);
    let e = g0.parse_position("b").unwrap_err();
    assert_eq!(
        e.to_string(),
        "move 1 ('b'): column b is outside the board (columns 0..a)"
    );
}

#[test]
fn format_reconstructs_a_legal_order() {
    let g = Connect4::<u64>::new(7, 6, 1).unwrap();
    for text in [
        "",
        "4",
        "44",
        "4455",
        "2252576253462244111563365343671351441",
        "1212121",
        "1122334",
    ] {
        let s = g.parse_position(text).unwrap();
        let back = g.format_position(&s);
        assert_eq!(back.len(), text.len());
        assert_eq!(g.parse_position(&back).unwrap(), s, "'{text}' -> '{back}'");
    }
}

#[test]
fn mirror_positions_share_the_canonical_hash() {
    let g = Connect4::<u64>::new(7, 6, 1).unwrap();
    let a = g.parse_position("1123").unwrap();
    let b = g.parse_position("7765").unwrap();
    assert_ne!(g.hash(&a), g.hash(&b));
    assert_eq!(g.canonical_hash(&a), g.canonical_hash(&b));
}

#[test]
fn hostile_score_targets_are_refused_on_one_short_line() {
    let g = Connect4::<u64>::new(7, 6, 1).unwrap();
    let e = g
        .parse_target(&g.initial_state(), &format!("1\n{}", "9".repeat(10_000)))
        .unwrap_err()
        .to_string();
    assert!(!e.contains('\n') && e.len() < 100, "{e}");
}
