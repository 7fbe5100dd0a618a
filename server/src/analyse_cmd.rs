//! `gamesolver analyse`: the text of an analysis result, one line per root move, best first.
//!
//! A line is the move, its score (the exact value, `l..u` bounds when a limit stopped the move
//! first, or MCTS's mean value and visits) and what the score means where the game's scale
//! says it: Connect Four scores as Pons' solver counts them ("win in n" / "loss in n", n the
//! winner's moves from here, the move itself included for a win; "draw"), Othello disc
//! differences, and win/draw/loss for games valued -1/0/1. The usual summary (value, best move,
//! nodes, time) follows.

use gamesolver_shared::games::connect4::Connect4;
use gamesolver_shared::model::Game;
use gamesolver_shared::wire::{JobResult, JobSpec, MoveScore};

/// Games whose values are exactly win (1), draw (0) and loss (-1).
const WIN_DRAW_LOSS: &[&str] = &["tictactoe", "mnk"];

/// The text `analyse` prints for `r`, the result of `job`.
pub fn render(r: &JobResult, job: &JobSpec) -> String {
    let Some(moves) = &r.extra.moves else {
        return crate::cli::render_text(r);
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

/// How a game's exact score reads in words.
enum Meaning {
    /// Connect Four: `half` is (cells + 1) / 2, `played` the stones on the board at the root.
    Pons { half: i64, played: i64 },
    /// Othello: the final disc difference.
    Discs,
    /// Win 1, draw 0, loss -1.
    WinDrawLoss,
    /// No reading beyond the number.
    None,
}

impl Meaning {
    fn of(job: &JobSpec) -> Meaning {
        let param = |k: &str, d: u32| {
            job.game_params
                .get(k)
                .and_then(|v| v.trim().parse::<u32>().ok())
                .unwrap_or(d)
        };
        if job.options.contains_key("depth") {
            // Estimates of a depth-limited search: numbers, not outcomes.
            return Meaning::None;
        }
        match job.game.as_str() {
            "connect4" => {
                let (w, h) = (param("width", 7), param("height", 6));
                match Connect4::<u128>::new(w, h, 1)
                    .ok()
                    .and_then(|g| g.parse_position(&job.position).ok())
                {
                    Some(s) => Meaning::Pons {
                        half: (w as i64 * h as i64 + 1) / 2,
                        played: s.moves() as i64,
                    },
                    None => Meaning::None,
                }
            }
            "othello" => Meaning::Discs,
            g if WIN_DRAW_LOSS.contains(&g) => Meaning::WinDrawLoss,
            _ => Meaning::None,
        }
    }

    /// The words for a move's exact score `v` (the root side's view).
    fn say(&self, v: i64) -> Option<String> {
        let plural = |n: i64, one: &str| {
            if n == 1 {
                one.to_string()
            } else {
                format!("{one}s")
            }
        };
        Some(match *self {
            // Pons' score: a player who wins with their m-th stone of the game scores
            // half + 1 - m. The side to move has played played / 2 stones, the other side
            // (played + 1) / 2.
            Meaning::Pons { half, played } if v > 0 => {
                let n = half + 1 - v - played / 2;
                format!("win in {n} {}", plural(n, "move"))
            }
            Meaning::Pons { half, played } if v < 0 => {
                let n = half + 1 + v - (played + 1) / 2;
                format!("loss in {n} {}", plural(n, "move"))
            }
            Meaning::Pons { .. } => "draw".into(),
            Meaning::Discs if v > 0 => format!("wins by {v} {}", plural(v, "disc")),
            Meaning::Discs if v < 0 => format!("loses by {} {}", -v, plural(-v, "disc")),
            Meaning::Discs => "draw".into(),
            Meaning::WinDrawLoss => match v {
                1 => "win".into(),
                0 => "draw".into(),
                -1 => "loss".into(),
                _ => return None,
            },
            Meaning::None => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Meaning;
    use gamesolver_shared::wire::JobSpec;

    /// Pons' reading of scores: a score of 1 at the start means a win with the 21st (last)
    /// stone; a move that wins at once is "win in 1", one after which the opponent wins at
    /// once "loss in 1".
    #[test]
    fn pons_scores_read_as_moves_of_the_winner() {
        let start = Meaning::Pons {
            half: 21,
            played: 0,
        };
        assert_eq!(start.say(1).unwrap(), "win in 21 moves");
        assert_eq!(start.say(0).unwrap(), "draw");
        // 41 stones played (the second player to move, with 20): the last cell. An immediate
        // win there scores (43 - 41) / 2 = 1.
        let late = Meaning::Pons {
            half: 21,
            played: 41,
        };
        assert_eq!(late.say(1).unwrap(), "win in 1 move");
        // 6 stones played, an immediate win scores (43 - 6) / 2 = 18.
        let six = Meaning::Pons {
            half: 21,
            played: 6,
        };
        assert_eq!(six.say(18).unwrap(), "win in 1 move");
        // The opponent wins at once after this move (7 stones after it): -(43 - 7) / 2 = -18.
        assert_eq!(six.say(-18).unwrap(), "loss in 1 move");
        assert_eq!(Meaning::Discs.say(-3).unwrap(), "loses by 3 discs");
        assert_eq!(Meaning::WinDrawLoss.say(1).unwrap(), "win");
        // A depth-limited analysis shows estimates without the words of an exact score.
        let hint = JobSpec::new("othello", "", "alphabeta").with_options(&[("depth", "4")]);
        assert!(Meaning::of(&hint).say(3).is_none());
        assert!(Meaning::of(&JobSpec::new("othello", "", "alphabeta"))
            .say(3)
            .is_some());
    }
}
