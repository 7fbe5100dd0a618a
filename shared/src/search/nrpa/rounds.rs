//! Rounds: the shared-policy scheme across workers. Each task is one top-level iteration from
//! the round's policy; the next round first applies the previous round's results in task order.

use super::adapt::{record_sequence, Adapter};
use super::checkpoint::{checkpoint, load_checkpoint, Checkpoint};
use super::kernel::{Searcher, Shared};
use super::{NrpaOptions, StopReason};
use crate::model::single::SinglePlayer;
use crate::search::Control;
use parking_lot::Mutex;

/// What one task of a round reports back: the best sequence of its level-(L-1) call (`None`
/// when it was stopped before finishing) and its best rollout.
#[derive(Clone, Debug, PartialEq)]
pub struct RoundResult<M> {
    /// Result of `NRPA(level - 1, top policy)`: the sequence the top level's `>=` rule sees.
    pub sub: Option<Vec<M>>,
    /// Best rollout of the task (only updates the overall best).
    pub found: Option<Vec<M>>,
}

/// The checkpoint a round starts from: `from` (the start of the previous round; `None` before
/// the first) after the previous round's results, in iteration order, each with Rosin's `>=`
/// rule and one Adapt of the top-level policy. This is what the in-process shared scheme does
/// after a batch, so rounds of `width` tasks replay `parallel=shared, batch=width` exactly.
/// Sequences are replayed (so a tampered result is refused, and scores are recomputed).
pub fn round_start<G: SinglePlayer>(
    game: &G,
    root: &G::State,
    opts: &NrpaOptions,
    width: usize,
    from: Option<&Checkpoint<G::Move>>,
    results: &[RoundResult<G::Move>],
) -> Result<Checkpoint<G::Move>, String> {
    let (mut top, mut top_best, mut best, mut done) =
        load_checkpoint(game, root, opts, width, from)?;
    let mut adapter = Adapter::new(game, root, opts);
    for r in results {
        if let Some(moves) = &r.sub {
            let sub = record_sequence(game, root, moves)?;
            if sub.score >= top_best.score {
                top_best = sub;
            }
            adapter.adapt(game, root, 0, &mut top, &top_best);
            done += 1;
        }
        if let Some(moves) = &r.found {
            let f = record_sequence(game, root, moves)?;
            if f.score > best.score {
                best = f;
            }
        }
    }
    Ok(checkpoint(opts, width, done, &top, &top_best, &best))
}

/// What one round task found.
#[derive(Clone, Debug)]
pub struct RoundOutcome<M> {
    /// The task's [`RoundResult`].
    pub result: RoundResult<M>,
    /// Score of `result.found` (`-inf` when nothing completed).
    pub score: f64,
    /// Rollouts made.
    pub rollouts: u64,
    /// Why it stopped early, if it did.
    pub stopped: Option<StopReason>,
    /// Whether a rollout reached `stop_at`.
    pub reached: bool,
    /// Improvements of the task's best: (elapsed ms, rollouts so far, score).
    pub history: Vec<(u64, u64, f64)>,
}

/// One task of a round: top-level iteration `index` (with its own random stream, as in the
/// in-process scheme) from the round's start checkpoint.
pub fn round_iteration<G: SinglePlayer>(
    game: &G,
    root: &G::State,
    opts: &NrpaOptions,
    start: &Checkpoint<G::Move>,
    index: u64,
    ctl: &Control,
) -> Result<RoundOutcome<G::Move>, String> {
    if opts.level == 0 || opts.iterations == 0 {
        return Err("NRPA needs level >= 1 and iterations >= 1".into());
    }
    let (top, _, best, _) = load_checkpoint(game, root, opts, start.batch, Some(start))?;
    let shared = Shared {
        reached: false.into(),
        best: Mutex::new((best.score, std::time::Instant::now())),
        history: Mutex::new(Vec::new()),
    };
    let o = NrpaOptions {
        batch: 1,
        threads: 1,
        ..opts.clone()
    };
    let mut s = Searcher::new(game, root, &o, ctl, &shared);
    let sub = s.iteration(&top, index).map(|r| r.moves.clone());
    let found = (!s.found.is_empty()).then(|| s.found.moves.clone());
    let reached = shared.reached.load(std::sync::atomic::Ordering::Relaxed);
    let history = std::mem::take(&mut *shared.history.lock());
    Ok(RoundOutcome {
        score: s.found.score,
        result: RoundResult { sub, found },
        rollouts: s.rollouts,
        stopped: if reached { None } else { ctl.should_stop() },
        reached,
        history,
    })
}

/// A sequence as `{"score", "moves": [text, ...]}` (moves in the game's notation, the score of
/// the state they reach), or null.
pub fn sequence_json<G: SinglePlayer>(
    game: &G,
    root: &G::State,
    seq: Option<&[G::Move]>,
) -> serde_json::Value {
    match seq {
        None => serde_json::Value::Null,
        Some(moves) => {
            let (texts, end) = move_texts(game, root, moves);
            serde_json::json!({"score": game.score(&end), "moves": texts})
        }
    }
}

/// `moves`, played from `root`, in the game's notation (each move written in the state it is
/// played from), and the state they reach.
pub(super) fn move_texts<G: SinglePlayer>(
    game: &G,
    root: &G::State,
    moves: &[G::Move],
) -> (Vec<String>, G::State) {
    let mut s = root.clone();
    let texts = moves
        .iter()
        .map(|&m| {
            let t = game.format_move(&s, m);
            game.apply(&mut s, m);
            t
        })
        .collect();
    (texts, s)
}

/// Reads [`sequence_json`]'s output (null is `None`), replaying the moves: the score is the
/// replayed one. `what` names the field in errors.
#[allow(clippy::type_complexity)]
pub fn sequence_from_json<G: SinglePlayer>(
    game: &G,
    root: &G::State,
    x: &serde_json::Value,
    what: &str,
) -> Result<Option<(f64, Vec<G::Move>)>, String> {
    if x.is_null() {
        return Ok(None);
    }
    let moves = x["moves"]
        .as_array()
        .ok_or(format!("'{what}.moves' is missing"))?;
    let mut s = root.clone();
    let mut out = Vec::new();
    for (i, t) in moves.iter().enumerate() {
        let t = t
            .as_str()
            .ok_or(format!("move {} of '{what}' is not text", i + 1))?;
        let m = game
            .parse_move(&s, t)
            .map_err(|e| format!("'{what}': {}", e.at_move(i + 1)))?;
        game.apply(&mut s, m);
        out.push(m);
    }
    Ok(Some((game.score(&s), out)))
}
