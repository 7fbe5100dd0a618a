//! Principal lines from solved databases: from a board, best moves for both sides, through the
//! lower databases, until the game ends, a position repeats or a ply limit.
//!
//! Every move of the line keeps the value: the value of a position for its mover is the stones
//! (the `gain`) its move captures minus the value of the next position for the next mover. Best
//! moves alone do not make progress: a side ahead can shuffle between positions that keep its
//! value for ever, and play that goes on for ever is worth 0 (see the module doc of
//! [`super`]). So inside one database the line takes, at a position worth `v != 0`, the move
//! the attractor of the build would take: the side ahead the best move closest to leaving the
//! database, the side behind the one furthest from it, distances counted on the graph of best
//! moves reachable from the line's entry into the database (it is there that the side ahead
//! can force its value, so every distance is finite and falls by one each move, and the line
//! never repeats). At a position worth 0 the line takes a capture when one keeps the value, else
//! a move that repeats a position of the line since the last capture (the game ends there and
//! the rest is worth 0 to both: the shortest way to show it), else any best move.

use super::Successor;
use crate::model::Retrograde;
use std::collections::{HashMap, HashSet};

/// One move of a line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineMove<M> {
    /// The move.
    pub mv: M,
    /// The value of the position before the move, for its mover.
    pub value: i32,
    /// What the move scores on the way (Awari: the stones it captures).
    pub gain: i32,
}

/// How a line ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineEnd {
    /// The last position has no move: the game is over with its end value.
    GameOver,
    /// The last move repeated a position of the line (no capture since): the game is over and
    /// the stones left count for nobody (value 0).
    Repetition,
    /// The line reached its ply limit.
    Limit,
}

impl LineEnd {
    /// The name the API gives it.
    pub fn name(self) -> &'static str {
        match self {
            LineEnd::GameOver => "game over",
            LineEnd::Repetition => "repetition",
            LineEnd::Limit => "ply limit",
        }
    }
}

/// A principal line: `boards[i]` is the position before `moves[i]`, and `boards.last()` the
/// one the line ends at, worth `last_value` to its side to move.
#[derive(Clone, Debug)]
pub struct Line<G: Retrograde> {
    /// The positions, one more than the moves.
    pub boards: Vec<G::Board>,
    /// The moves.
    pub moves: Vec<LineMove<G::Move>>,
    /// The value of the last position for its side to move.
    pub last_value: i32,
    /// Why the line stops.
    pub end: LineEnd,
}

/// The moves of `board` (in database `db`) with their values for the mover, read through
/// `entry`; empty when the game is over.
fn move_values<G: Retrograde, E>(
    game: &G,
    db: usize,
    board: &G::Board,
    entry: &mut impl FnMut(usize, u64) -> Result<i32, E>,
    succ: &mut Vec<(G::Move, Successor)>,
) -> Result<Vec<(G::Move, Successor, i32)>, E> {
    game.successors(db, board, succ);
    let mut out = Vec::with_capacity(succ.len());
    for &(mv, to) in succ.iter() {
        let v = match to {
            Successor::Inside(c) => -entry(db, c)?,
            Successor::Below { db, index, gain } => gain - entry(db, index)?,
        };
        out.push((mv, to, v));
    }
    Ok(out)
}

/// The best moves' successors of `moves` (those of the largest value).
fn best_of<M: Copy>(moves: &[(M, Successor, i32)]) -> Vec<(M, Successor)> {
    let best = moves.iter().map(|m| m.2).max().unwrap_or(0);
    moves
        .iter()
        .filter(|m| m.2 == best)
        .map(|m| (m.0, m.1))
        .collect()
}

/// Plies to leave database `db` from each position of the best-move graph reachable from
/// `start` (worth `!= 0`), by index, with the side ahead choosing the closest exit and the side
/// behind the furthest; `None` when the graph has more than `budget` positions (each position
/// visited is taken from `budget`).
fn exit_distances<G: Retrograde, E>(
    game: &G,
    db: usize,
    start: u64,
    entry: &mut impl FnMut(usize, u64) -> Result<i32, E>,
    budget: &mut usize,
) -> Result<Option<HashMap<u64, u32>>, E> {
    // Each node: whether its side to move is ahead, and its best moves' children (None: the
    // move leaves the database).
    let mut ids: HashMap<u64, usize> = HashMap::from([(start, 0)]);
    let mut order = vec![start];
    let mut nodes: Vec<(bool, Vec<Option<usize>>)> = Vec::new();
    let mut succ = Vec::new();
    let mut k = 0;
    while k < order.len() {
        let board = game.unrank(db, order[k]);
        let moves = move_values(game, db, &board, entry, &mut succ)?;
        let ahead = moves.iter().map(|m| m.2).max().unwrap_or(0) > 0;
        let mut children = Vec::new();
        for (_, to) in best_of(&moves) {
            children.push(match to {
                Successor::Below { .. } => None,
                Successor::Inside(c) => Some(*ids.entry(c).or_insert_with(|| {
                    order.push(c);
                    order.len() - 1
                })),
            });
        }
        if *budget == 0 {
            return Ok(None);
        }
        *budget -= 1;
        nodes.push((ahead, children));
        k += 1;
    }
    let mut dist = vec![u32::MAX; nodes.len()];
    loop {
        let mut changed = false;
        for (i, (ahead, children)) in nodes.iter().enumerate() {
            let d = children.iter().map(|c| c.map_or(0, |c| dist[c]));
            let d = if *ahead { d.min() } else { d.max() };
            let d = match d {
                Some(d) if d < u32::MAX => d + 1,
                // No move (not in a graph of positions worth != 0) or not known yet.
                _ => continue,
            };
            if d < dist[i] {
                dist[i] = d;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    Ok(Some(
        order.into_iter().zip(dist).collect::<HashMap<u64, u32>>(),
    ))
}

/// The principal line from `board` (see the module doc), reading entries through
/// `entry(db, index)` for `db < covered`, at most `max_plies` moves long; the exit distances are
/// computed over at most `max_nodes` positions in all (beyond that the line takes a capture
/// that keeps the value, else a move to a position not yet on it, and may then end at the
/// limit).
/// `Ok(None)` when `board` is not covered.
pub fn principal_line_by<G: Retrograde, E>(
    game: &G,
    covered: usize,
    board: &G::Board,
    mut entry: impl FnMut(usize, u64) -> Result<i32, E>,
    max_plies: usize,
    max_nodes: usize,
) -> Result<Option<Line<G>>, E> {
    let (db, _) = game.rank(board);
    if covered <= db {
        return Ok(None);
    }
    let mut boards = vec![*board];
    let mut moves = Vec::new();
    // The positions since the last capture, with the parity of the ply (who is to move): the
    // game's repetition is of the board and the side to move.
    let key = |b: &G::Board, ply: usize| {
        let (db, index) = game.rank(b);
        (db, index, ply % 2)
    };
    let mut seen: HashSet<(usize, u64, usize)> = HashSet::from([key(board, 0)]);
    // The exit distances of the database the line is in, from where it entered it.
    let mut dist: Option<Option<HashMap<u64, u32>>> = None;
    let mut succ = Vec::new();
    let mut budget = max_nodes;
    loop {
        let cur = *boards.last().expect("a board");
        let (db, index) = game.rank(&cur);
        let values = move_values(game, db, &cur, &mut entry, &mut succ)?;
        let Some(value) = values.iter().map(|m| m.2).max() else {
            let last_value = game.end_value(db, &cur);
            return Ok(Some(Line {
                boards,
                moves,
                last_value,
                end: LineEnd::GameOver,
            }));
        };
        if moves.len() >= max_plies {
            return Ok(Some(Line {
                boards,
                moves,
                last_value: value,
                end: LineEnd::Limit,
            }));
        }
        let best = best_of(&values);
        if value != 0 && dist.is_none() {
            dist = Some(exit_distances(game, db, index, &mut entry, &mut budget)?);
        }
        let by_distance = match (value, &dist) {
            (0, _) | (_, Some(None) | None) => None,
            (_, Some(Some(d))) => {
                let far = |to: &Successor| match *to {
                    Successor::Below { .. } => 0,
                    Successor::Inside(c) => d.get(&c).copied().unwrap_or(u32::MAX),
                };
                if value > 0 {
                    best.iter().min_by_key(|(_, to)| far(to))
                } else {
                    best.iter().max_by_key(|(_, to)| far(to))
                }
            }
        };
        let (mv, to) = *by_distance
            .or_else(|| {
                best.iter()
                    .find(|(_, to)| matches!(to, Successor::Below { .. }))
            })
            .or_else(|| {
                best.iter().find(
                    // Worth 0: a repetition; else (distances not found) a new position.
                    |(_, to)| matches!(*to, Successor::Inside(c) if seen.contains(&(db, c, (moves.len() + 1) % 2)) == (value == 0)),
                )
            })
            .unwrap_or(&best[0]);
        if let Successor::Inside(c) = to {
            if value != 0 && seen.contains(&(db, c, (moves.len() + 1) % 2)) {
                // Without distances a side ahead found no new position: a repetition would
                // be worth 0, not its value, so the line stops short of it.
                return Ok(Some(Line {
                    boards,
                    moves,
                    last_value: value,
                    end: LineEnd::Limit,
                }));
            }
        }
        let (next, gain, left) = match to {
            Successor::Inside(c) => (game.unrank(db, c), 0, false),
            Successor::Below { db, index, gain } => (game.unrank(db, index), gain, true),
        };
        moves.push(LineMove { mv, value, gain });
        boards.push(next);
        if left {
            // A new database: no position before can come back.
            seen.clear();
            dist = None;
        }
        if !seen.insert(key(&next, moves.len())) {
            return Ok(Some(Line {
                boards,
                moves,
                last_value: 0,
                end: LineEnd::Repetition,
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::awari::Awari;
    use crate::model::{Game, ZeroSum};
    use crate::search::retrograde::{build_up_to, Tables};

    /// Every position of small boards: each move of its line is legal, captures its `gain`,
    /// and keeps the value (a position's value is the gain minus the next one's); the line
    /// played by the game's own rules (its score and its repetition rule) ends the game with
    /// the value the databases give the first position; a position worth anything but 0 never
    /// ends its line in a repetition.
    #[test]
    fn lines_are_legal_keep_the_value_and_end_the_game_with_it() {
        let mut lines = [0usize; 3];
        let mut longest = 0;
        for (pits, top) in [(2, 8), (3, 8), (4, 6)] {
            let g = Awari::new(pits).unwrap();
            let mut t = Tables::new();
            build_up_to(&g, &mut t, top);
            for db in 0..=top {
                for i in 0..g.db_len(db) {
                    let board = g.unrank(db, i);
                    let line = principal_line_by(
                        &g,
                        t.len(),
                        &board,
                        |d, k| Ok::<_, ()>(t.db(d)[k as usize] as i32),
                        500,
                        1 << 16,
                    )
                    .unwrap()
                    .expect("covered");
                    let root_value = t.db(db)[i as usize] as i32;
                    check(&g, &t, &board, &line, root_value, false);
                    // Without the distances (no positions to spend on them) the line still
                    // keeps the value, and stops rather than repeat a position worth != 0.
                    let blind = principal_line_by(
                        &g,
                        t.len(),
                        &board,
                        |d, k| Ok::<_, ()>(t.db(d)[k as usize] as i32),
                        500,
                        0,
                    )
                    .unwrap()
                    .expect("covered");
                    check(&g, &t, &board, &blind, root_value, true);
                    lines[match line.end {
                        LineEnd::GameOver => 0,
                        LineEnd::Repetition => 1,
                        LineEnd::Limit => 2,
                    }] += 1;
                    longest = longest.max(line.moves.len());
                }
            }
        }
        assert_eq!(lines[2], 0, "no line reaches the ply limit: {lines:?}");
        assert!(lines[0] > 0 && lines[1] > 0, "{lines:?}");
        assert!(longest >= 10, "longest line {longest}");
    }

    fn check(
        g: &Awari,
        t: &Tables,
        board: &[u8; 12],
        line: &Line<Awari>,
        root_value: i32,
        may_stop: bool,
    ) {
        let at = format!("line from {board:?}: {line:?}");
        assert_eq!(line.boards.len(), line.moves.len() + 1, "{at}");
        assert_eq!(line.boards[0], *board);
        let mut s = g.state_of(*board);
        let mut legal = Vec::new();
        for (k, m) in line.moves.iter().enumerate() {
            let before = line.boards[k];
            let (db, index) = g.rank(&before);
            assert_eq!(
                m.value,
                t.db(db)[index as usize] as i32,
                "value at {k}: {at}"
            );
            assert!(!g.is_terminal(&s), "{at}");
            g.legal_moves(&s, &mut legal);
            assert!(legal.contains(&m.mv), "move {k} is legal: {at}");
            g.apply(&mut s, m.mv);
            let after = line.boards[k + 1];
            assert_eq!(g.board(&s), after, "move {k} leads to the next board: {at}");
            assert_eq!(
                g.stones(&before) - g.stones(&after),
                m.gain as usize,
                "move {k} captures its gain: {at}"
            );
            let next = line.moves.get(k + 1).map_or(line.last_value, |n| n.value);
            assert_eq!(m.value, m.gain - next, "move {k} keeps the value: {at}");
        }
        let first = line.moves.first().map_or(line.last_value, |m| m.value);
        assert_eq!(first, root_value, "{at}");
        match line.end {
            LineEnd::GameOver => {
                let last = line.boards.last().unwrap();
                let (db, _) = g.rank(last);
                assert_eq!(line.last_value, g.end_value(db, last), "{at}");
            }
            LineEnd::Repetition => {
                assert_eq!(line.last_value, 0, "{at}");
                let last = line.moves.last().expect("a repetition is a move");
                assert_eq!(last.value, 0, "only a position worth 0 repeats: {at}");
            }
            LineEnd::Limit if may_stop => {
                let last = line.boards.last().unwrap();
                let (db, index) = g.rank(last);
                assert_eq!(line.last_value, t.db(db)[index as usize] as i32, "{at}");
                return;
            }
            LineEnd::Limit => panic!("limit: {at}"),
        }
        // The game's own rules end the game here, with the databases' value for the root.
        assert!(g.is_terminal(&s), "the line ends the game: {at}");
        let v = g.terminal_value(&s);
        let v = if g.side(&s) == 0 { v } else { -v };
        assert_eq!(
            v, root_value,
            "the game's score at the end of the line: {at}"
        );
    }
}
