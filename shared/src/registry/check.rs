//! Checks of reported outputs ([`super::PreparedJob::check_output`]), shared by the families:
//! a worker is trusted to run kernels, not to be right about the game, so what it reports is
//! checked against the rules before it is stored.

//!
//! What an output may carry is closed: each family names the typed keys ([`crate::wire::Extra`])
//! and display keys its kernels write ([`only_keys`]), and every one of them is checked: move
//! lists are replayed from the position (legal, at most [`MAX_MOVES`]), numbers are inside the
//! game's range, texts and lists are bounded. The checks are linear in the output's size (a
//! worker's report is at most the 1 MiB request body) and run before anything is stored, so a
//! hostile worker can neither store junk nor make the coordinator work more than its report
//! is long.

use crate::model::Game;
use crate::wire::{Extra, RawBounds, TaskOutput};
use serde_json::Value;

/// Longest move list an output may carry (`pv`, `sequence`, a leaf's path): more than any
/// game of the catalogue lasts.
pub const MAX_MOVES: usize = 10_000;
/// Longest text an output may carry in words (`error`), in characters.
pub const MAX_TEXT: usize = 1_000;
/// Longest list of points an output may carry (`history`).
pub const MAX_POINTS: usize = 100_000;

/// The typed keys of `extra` that are set (absent or default ones are not).
pub fn typed_keys(extra: &Extra) -> Vec<&'static str> {
    let r = &extra.round;
    [
        ("stopped", extra.stopped.is_some()),
        ("final", extra.final_round),
        ("moves", extra.moves.is_some()),
        ("round_start", r.round_start.is_some()),
        ("sub", r.sub.is_some()),
        ("found", r.found.is_some()),
        ("proved", extra.proved.is_some()),
        ("sequence", extra.sequence.is_some()),
        ("peak_nodes", extra.peak_nodes.is_some()),
        ("win_rate", extra.win_rate.is_some()),
        ("root_stats", extra.root_stats.is_some()),
        ("checkpoint", extra.checkpoint.is_some()),
        ("error", extra.error.is_some()),
        ("children", extra.children.is_some()),
        ("retro", extra.retro.is_some()),
    ]
    .into_iter()
    .filter(|(_, set)| *set)
    .map(|(k, _)| k)
    .collect()
}

/// The keys an output may carry besides value, best move, nodes, time and raw bounds: the
/// typed keys in `typed` (`"proof"` for a certificate) and the display keys in `display`. Any
/// other key is refused, so nothing a kernel never writes is stored.
pub fn only_keys(out: &TaskOutput, typed: &[&str], display: &[&str]) -> Result<(), String> {
    if let Some(k) = typed_keys(&out.extra)
        .into_iter()
        .find(|k| !typed.contains(k))
    {
        return Err(format!("'{k}' does not belong in this job's output"));
    }
    if out.proof.is_some() && !typed.contains(&"proof") {
        return Err("this job's output carries no proof certificate".into());
    }
    if let Some(k) = out.extra.keys().find(|k| !display.contains(&k.as_str())) {
        return Err(format!("unknown key '{}' in the output", clip(k)));
    }
    Ok(())
}

/// Replays the move texts `list` from `root`: each must be legal where it is played, and there
/// are at most [`MAX_MOVES`]. Returns the moves and the state they reach. `what` names the list
/// in errors.
pub fn replay<G: Game>(
    game: &G,
    root: &G::State,
    list: &[String],
    what: &str,
) -> Result<(Vec<G::Move>, G::State), String> {
    if list.len() > MAX_MOVES {
        return Err(format!(
            "{what} has {} moves, more than {MAX_MOVES}",
            list.len()
        ));
    }
    let mut s = root.clone();
    let mut legal = Vec::new();
    let mut played = Vec::with_capacity(list.len());
    for (i, text) in list.iter().enumerate() {
        let mv = game
            .parse_move(&s, text)
            .map_err(|e| format!("{what} move {} '{}': {e}", i + 1, clip(text)))?;
        game.legal_moves(&s, &mut legal);
        if !legal.contains(&mv) {
            return Err(format!(
                "{what} move {} '{}' is not legal there",
                i + 1,
                clip(text)
            ));
        }
        game.apply(&mut s, mv);
        played.push(mv);
    }
    Ok((played, s))
}

/// A JSON list of move texts (`pv`), replayed as [`replay`] does.
pub fn move_list<G: Game>(
    game: &G,
    root: &G::State,
    v: &Value,
    what: &str,
) -> Result<(Vec<G::Move>, G::State), String> {
    let items = v
        .as_array()
        .ok_or_else(|| format!("{what} is not a list of moves"))?;
    if items.len() > MAX_MOVES {
        return Err(format!(
            "{what} has {} moves, more than {MAX_MOVES}",
            items.len()
        ));
    }
    let texts = items
        .iter()
        .map(|m| m.as_str().map(str::to_string))
        .collect::<Option<Vec<String>>>()
        .ok_or_else(|| format!("{what} holds a move that is not text"))?;
    replay(game, root, &texts, what)
}

/// The display key `pv`, if present: a legal line from `root`.
pub fn pv<G: Game>(game: &G, root: &G::State, out: &TaskOutput) -> Result<(), String> {
    match out.extra.get("pv") {
        None => Ok(()),
        Some(v) => move_list(game, root, v, "pv").map(|_| ()),
    }
}

/// The display key `key`, if present: a whole number in `0..=max`.
pub fn count(out: &TaskOutput, key: &str, max: u64) -> Result<Option<u64>, String> {
    match out.extra.get(key) {
        None => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) if n <= max => Ok(Some(n)),
            _ => Err(format!(
                "'{key}' {} is not a whole number up to {max}",
                clip(&v.to_string())
            )),
        },
    }
}

/// The display key `key`, if present: true or false.
pub fn flag(out: &TaskOutput, key: &str) -> Result<Option<bool>, String> {
    match out.extra.get(key) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(v) => Err(format!(
            "'{key}' {} is not true or false",
            clip(&v.to_string())
        )),
    }
}

/// The display key `key`, if present: exactly `want` (a value the job computes itself, such
/// as the bounds its raw bounds show as).
pub fn exactly(out: &TaskOutput, key: &str, want: &Value) -> Result<(), String> {
    match out.extra.get(key) {
        Some(v) if v != want => Err(format!(
            "'{key}' {} is not {}",
            clip(&v.to_string()),
            clip(&want.to_string())
        )),
        _ => Ok(()),
    }
}

/// The typed `error`, if present: one line of at most [`MAX_TEXT`] characters.
pub fn error_text(out: &TaskOutput) -> Result<(), String> {
    match &out.extra.error {
        Some(e) if e.chars().count() > MAX_TEXT || e.chars().any(char::is_control) => Err(format!(
            "'error' is not one line of at most {MAX_TEXT} characters"
        )),
        _ => Ok(()),
    }
}

/// At most 40 characters of reported text, for messages.
fn clip(text: &str) -> String {
    super::clip(text)
}

/// An error about reported data (a reader's message, which may quote it) cut to one line of
/// at most 200 characters.
pub fn clip_error(e: impl std::fmt::Display) -> String {
    let text = e.to_string();
    let mut out: String = text
        .chars()
        .take(200)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.chars().nth(200).is_some() {
        out.push_str("...");
    }
    out
}

/// A number as a message shows it: the shortest text that reads back as it (`1e300`, not
/// three hundred digits).
pub fn short(x: f64) -> String {
    if x.is_finite() {
        Value::from(x).to_string()
    } else {
        x.to_string()
    }
}

/// A reported text as a message may quote it (at most 40 characters).
pub fn clip_text(text: &str) -> String {
    clip(text)
}

/// A reported JSON value as a message may quote it (at most 40 characters).
pub fn clip_value(v: &Value) -> String {
    clip(&v.to_string())
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
            return Err(format!(
                "{what} {} is outside [{}, {}]",
                short(x),
                short(lo),
                short(hi)
            ));
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
    match &out.extra.sequence {
        None => Ok(()),
        Some(list) => replay(game, root, list, "sequence").map(|_| ()),
    }
}

/// The opening of a family's check of its value (after its keys are checked): a task of a kind
/// the family never plans (`planned` false) is refused with `refusal`; a stopped output has no
/// value to check (`Ok(false)`); otherwise `Ok(true)`.
pub fn to_check(out: &TaskOutput, planned: bool, refusal: &str) -> Result<bool, String> {
    if !planned {
        return Err(refusal.into());
    }
    Ok(!is_stopped(out))
}

/// The output of a task that a limit stopped before any result ([`TaskOutput::stopped`]): no
/// value, no bounds, no move, `stopped` naming why. Every family accepts it, with the keys its
/// kernels write (checked like those of any output).
pub fn is_stopped(out: &TaskOutput) -> bool {
    out.raw.is_none()
        && out.value.is_null()
        && out.best_move.is_none()
        && out.extra.stopped.is_some()
}
