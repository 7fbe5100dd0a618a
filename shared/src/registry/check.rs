//! Checks of reported outputs ([`super::PreparedJob::check_output`]), shared by the families:
//! a worker is trusted to run kernels, not to be right about the game, so what it reports is
//! checked against the rules before it is stored.

use crate::model::Game;
use crate::wire::{RawBounds, TaskOutput};
use serde_json::Value;

/// At most 40 characters of reported text, for messages.
fn clip(text: &str) -> String {
    super::clip(text)
}

/// The best move, if any, is legal at `root` in the game's notation.
pub fn best_move<G: Game>(game: &G, root: &G::State, out: &TaskOutput) -> Result<(), String> {
    let Some(text) = &out.best_move else {
        return Ok(());
    };
    let m = game
        .parse_move(root, text)
        .map_err(|e| format!("best move '{}': {e}", clip(text)))?;
    let mut moves = Vec::new();
    game.legal_moves(root, &mut moves);
    if moves.contains(&m) {
        Ok(())
    } else {
        Err(format!(
            "best move '{}' is not legal at the root",
            clip(text)
        ))
    }
}

/// A value that is null or a finite number: the number.
pub fn number(v: &Value, what: &str) -> Result<Option<f64>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => match n.as_f64() {
            Some(x) if x.is_finite() => Ok(Some(x)),
            _ => Err(format!("{what} {n} is not a finite number")),
        },
        other => Err(format!(
            "{what} {} is not a number",
            clip(&other.to_string())
        )),
    }
}

/// A value that must be a finite number in `[lo, hi]` (or null).
pub fn number_in(v: &Value, what: &str, lo: f64, hi: f64) -> Result<(), String> {
    if let Some(x) = number(v, what)? {
        // A relative margin for the rounding of utilities scaled to JSON.
        let eps = 1e-9 * lo.abs().max(hi.abs()).max(1.0);
        if x < lo - eps || x > hi + eps {
            return Err(format!("{what} {x} is outside [{lo}, {hi}]"));
        }
    }
    Ok(())
}

/// Raw bounds that are ordered and meet the root's value range `[lo, hi]`.
pub fn raw_in(raw: &RawBounds, lo: i32, hi: i32) -> Result<(), String> {
    if raw.lower > raw.upper || raw.lower > hi || raw.upper < lo {
        return Err(format!(
            "raw bounds [{}, {}] are not inside the value range [{lo}, {hi}]",
            raw.lower, raw.upper
        ));
    }
    Ok(())
}

/// A probe of "value >= target": bounds that answer yes (`lower >= target`) or no (`upper <
/// target`), agreeing with `proved` when it is given.
pub fn probe_answer(out: &TaskOutput, target: i32, lo: i32, hi: i32) -> Result<(), String> {
    let Some(raw) = &out.raw else {
        return Err(format!("probe {target}: no bounds"));
    };
    raw_in(raw, lo, hi)?;
    let yes = raw.lower >= target;
    let no = raw.upper < target;
    if yes == no {
        return Err(format!(
            "probe {target}: bounds [{}, {}] do not answer it",
            raw.lower, raw.upper
        ));
    }
    match out.extra.proved {
        None | Some(None) => Ok(()),
        Some(Some(p)) if p == yes => Ok(()),
        Some(Some(p)) => Err(format!(
            "probe {target}: 'proved' is {p} but the bounds say {yes}"
        )),
    }
}

/// A `sequence` of move texts, if present, is legal from `root` when replayed.
pub fn sequence<G: Game>(game: &G, root: &G::State, out: &TaskOutput) -> Result<(), String> {
    let Some(list) = &out.extra.sequence else {
        return Ok(());
    };
    let mut s = root.clone();
    let mut moves = Vec::new();
    for (i, text) in list.iter().enumerate() {
        let mv = game
            .parse_move(&s, text)
            .map_err(|e| format!("sequence move {} '{}': {e}", i + 1, clip(text)))?;
        game.legal_moves(&s, &mut moves);
        if !moves.contains(&mv) {
            return Err(format!(
                "sequence move {} '{}' is not legal there",
                i + 1,
                clip(text)
            ));
        }
        game.apply(&mut s, mv);
    }
    Ok(())
}

/// The opening of a family's check: a stopped output passes as it is (`Ok(false)`: nothing more
/// to check); a task of a kind the family never plans (`planned` false) is refused with
/// `refusal`; otherwise `Ok(true)`.
pub fn to_check(out: &TaskOutput, planned: bool, refusal: &str) -> Result<bool, String> {
    if is_stopped(out) {
        return Ok(false);
    }
    if !planned {
        return Err(refusal.into());
    }
    Ok(true)
}

/// The output of a task that a limit stopped before any result ([`TaskOutput::stopped`]): no
/// value, no bounds, no move, `stopped` naming why. Every family accepts it.
pub fn is_stopped(out: &TaskOutput) -> bool {
    out.raw.is_none()
        && out.value.is_null()
        && out.best_move.is_none()
        && out.extra.stopped.is_some()
}
