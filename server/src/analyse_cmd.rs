//! `gamesolver analyse`: the text of an analysis result, one line per root move, best first.
//!
//! A line is the move, its score (the exact value, `l..u` bounds when a limit stopped the move
//! first, or MCTS's mean value and visits) and what the score means where the game's scale
//! says it, in the game's own words (`Picture::score_words`, which the dashboard shows too):
//! Connect Four scores as Pons' solver counts them ("win with your 3rd stone from here" / "loss
//! to the opponent's 2nd stone from here", the stones counted from the root, the move itself
//! first; "draw"), Othello disc differences, and win/draw/loss for games valued -1/0/1. The usual
//! summary (value, best move, nodes, time: [`render_text`], also what `solve` prints) follows.

use gamesolver_shared::wire::{JobResult, JobSpec, MoveScore};

/// Text rendering of a result for people.
pub fn render_text(r: &JobResult) -> String {
    let mut s = String::new();
    let show = |v: &serde_json::Value| match v {
        serde_json::Value::String(t) => t.clone(),
        other => other.to_string(),
    };
    s += &format!("value      {}\n", show(&r.value));
    s += &format!("best move  {}\n", r.best_move.as_deref().unwrap_or("-"));
    for (k, v) in &r.extra.to_map() {
        let text = match v {
            serde_json::Value::Array(items) if items.iter().all(|i| i.is_string()) => {
                items.iter().map(show).collect::<Vec<_>>().join(" ")
            }
            other => show(other),
        };
        s += &format!("{:<10} {}\n", k.replace('_', " "), text);
    }
    s += &format!("nodes      {}\n", r.nodes);
    s += &format!("time       {:.3} s\n", r.elapsed_ms as f64 / 1000.0);
    s
}

/// The text `analyse` prints for `r`, the result of `job`.
pub fn render(r: &JobResult, job: &JobSpec) -> String {
    let Some(moves) = &r.extra.moves else {
        return render_text(r);
    };
    let mut rows: Vec<(&String, &MoveScore)> = moves.iter().collect();
    // Best first: exact and bounded moves by (lower, upper), MCTS moves by visits then value.
    let key = |m: &MoveScore| -> (f64, f64) {
        let num = |v: &Option<serde_json::Value>| v.as_ref().and_then(|x| x.as_f64());
        match (m.visits, num(&m.value), num(&m.lower), num(&m.upper)) {
            (Some(n), q, _, _) => (n as f64, q.unwrap_or(f64::NEG_INFINITY)),
            (None, Some(v), _, _) => (v, v),
            (None, None, l, u) => (
                l.unwrap_or(f64::NEG_INFINITY),
                u.unwrap_or(f64::NEG_INFINITY),
            ),
        }
    };
    // Ties: the result's best move first, so that the first row and "best move" agree.
    let best = r.best_move.as_deref();
    rows.sort_by(|a, b| {
        key(b.1)
            .partial_cmp(&key(a.1))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| (Some(b.0.as_str()) == best).cmp(&(Some(a.0.as_str()) == best)))
    });
    let best_line = best_move_line(best, moves);
    let meaning = Meaning::of(job);
    let width = rows.iter().map(|(m, _)| m.len()).max().unwrap_or(4).max(4);
    let mut s = format!("{:<width$}  score\n", "move");
    for (mv, score) in rows {
        let text = match (score.visits, &score.value, &score.lower, &score.upper) {
            (Some(n), Some(q), _, _) => format!("{q}  visits {n}"),
            (Some(n), None, _, _) => format!("-  visits {n}"),
            (None, Some(v), _, _) => match v.as_i64().and_then(|v| meaning.say(v)) {
                Some(m) => format!("{v}  {m}"),
                None => v.to_string(),
            },
            (None, None, Some(l), Some(u)) => format!("{l}..{u}  (not finished)"),
            _ => "-".into(),
        };
        s += &format!("{mv:<width$}  {text}\n");
    }
    let value = match &r.value {
        serde_json::Value::Null => "-".to_string(),
        v => v.to_string(),
    };
    s += &format!("value      {value}\n");
    s += &format!("best move  {best_line}\n");
    if let Some(reason) = r.extra.stopped {
        s += &format!("stopped    {reason}\n");
    }
    s += &format!("nodes      {}\n", r.nodes);
    s += &format!("time       {:.3} s\n", r.elapsed_ms as f64 / 1000.0);
    s
}

/// The "best move" line: the move, when its exact score is at least every other move's upper
/// bound (or when MCTS chose it by visits); otherwise no move is proved best, and the line says
/// so and names the move with the best bounds.
fn best_move_line(
    best: Option<&str>,
    moves: &std::collections::BTreeMap<String, MoveScore>,
) -> String {
    let Some(b) = best else {
        return "-".into();
    };
    let num = |v: &Option<serde_json::Value>| v.as_ref().and_then(|x| x.as_f64());
    let Some(m) = moves.get(b) else {
        return b.into();
    };
    if m.visits.is_some() {
        return b.into();
    }
    let proved = num(&m.value).is_some_and(|v| {
        moves
            .iter()
            .filter(|(k, _)| k.as_str() != b)
            .all(|(_, o)| num(&o.value).or(num(&o.upper)).is_some_and(|u| u <= v))
    });
    if proved {
        b.into()
    } else {
        format!("none proved (the best bounds: {b})")
    }
}

/// How a game's exact score reads in words: the game's own hook
/// ([`gamesolver_shared::model::Picture::score_words`]), the wording the dashboard shows too.
struct Meaning<'a>(&'a JobSpec);

impl<'a> Meaning<'a> {
    fn of(job: &'a JobSpec) -> Meaning<'a> {
        Meaning(job)
    }

    /// The words for a move's exact score `v` (the root side's view).
    fn say(&self, v: i64) -> Option<String> {
        let j = self.0;
        if j.options.contains_key("depth") {
            // Estimates of a depth-limited search: numbers, not outcomes.
            return None;
        }
        gamesolver_shared::viz::board::score_words(&j.game, &j.game_params, &j.position, v)
            .ok()
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::Meaning;
    use gamesolver_shared::wire::JobSpec;

    /// The CLI reads scores with the game's words (`viz::board` tests the wording itself).
    #[test]
    fn scores_read_with_the_games_words() {
        let job = |game: &str, position: &str| -> JobSpec {
            serde_json::from_value(serde_json::json!({
                "game": game, "position": position, "algorithm": "alphabeta"}))
            .unwrap()
        };
        let c4 = job("connect4", "445566");
        assert_eq!(
            Meaning::of(&c4).say(-18).unwrap(),
            "loss to the opponent's 1st stone from here"
        );
        assert_eq!(
            Meaning::of(&job("connect4", "")).say(1).unwrap(),
            "win with your 21st stone from here"
        );
        assert_eq!(
            Meaning::of(&job("othello", "")).say(-3).unwrap(),
            "loss by 3 discs"
        );
        assert_eq!(Meaning::of(&job("tictactoe", "")).say(1).unwrap(), "win");
        assert_eq!(Meaning::of(&job("nim", "")).say(1), None);
        // A depth-limited analysis shows estimates without the words of an exact score.
        let hint = JobSpec::new("othello", "", "alphabeta").with_options(&[("depth", "4")]);
        assert!(Meaning::of(&hint).say(3).is_none());
    }
}
