//! The Carcassonne game record: plies separated by white space, replayed from the start.
//!
//! - A draw is the tile's letter `A`..`X` (`J`). A tile that fits nowhere is discarded by the
//!   rules and written with `-` (`E-`); reading `E` for such a tile is accepted as well, and
//!   `E-` for a tile that fits is an error.
//! - A placement is `x,y` then `r` and the rotation 0..3 (quarter turns clockwise), then
//!   optionally `@` and where the follower stands: a slot name of the placed (turned) tile
//!   (`NNW N NNE ENE E ESE SSE S SSW WSW W WNW`, see [`super::tiles`]) naming the segment
//!   that holds it, or `M` for the monastery. Written with the segment's middle slot when it has
//!   one (`@N` for a city or road on the north edge), else its first slot (`@ESE`).
//!   Rotations that look alike are the same move (`r2` of a straight road reads as `r0`).
//!
//! Every error is one line naming the ply, its text and the reason
//! (`move 4 ('1,0r2'): the west edge of J (road) meets a city`). Lower-case letters and slot
//! names are accepted.

use super::tiles::{letter, type_of_letter, Edge, Kind, Oriented, Tiles, SLOT_NAMES};
use super::{Carcassonne, Move, State, DIRS, NONE, NO_FOLLOWER};
use crate::model::{Game, NotationError, Turn};

const SIDE_NAMES: [&str; 4] = ["north", "east", "south", "west"];

fn edge_name(e: Edge) -> &'static str {
    match e {
        Edge::City => "city",
        Edge::Road => "road",
        Edge::Field => "field",
    }
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::City => "city",
        Kind::Road => "road",
        Kind::Field => "field",
        Kind::Monastery => "monastery",
    }
}

/// The name a follower on segment `i` of `o` is written with.
pub fn segment_name(o: &Oriented, i: usize) -> &'static str {
    if o.kind[i] == Kind::Monastery {
        return "M";
    }
    let mask = o.mask[i];
    for side in 0..4 {
        if mask >> (3 * side + 1) & 1 == 1 {
            return SLOT_NAMES[3 * side + 1];
        }
    }
    SLOT_NAMES[mask.trailing_zeros() as usize]
}

fn placement_text(o: &Oriented, x: i8, y: i8, rot: u8, seg: u8) -> String {
    let mut s = format!("{x},{y}r{rot}");
    if seg != NO_FOLLOWER {
        s.push('@');
        s.push_str(segment_name(o, seg as usize));
    }
    s
}

/// Writes the record that leads to `state`.
pub(super) fn format_record(tiles: &Tiles, state: &State) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut d = 0;
    let discards = &state.discards[..state.n_disc as usize];
    let flush = |upto: u8, out: &mut Vec<String>, d: &mut usize| {
        while *d < discards.len() && discards[*d].1 <= upto {
            out.push(format!("{}-", letter(discards[*d].0)));
            *d += 1;
        }
    };
    for k in 1..state.n_placed as usize {
        flush(k as u8, &mut out, &mut d);
        let p = state.placed[k];
        out.push(letter(p.t).to_string());
        out.push(placement_text(
            tiles.get(p.t, p.rot),
            p.x,
            p.y,
            p.rot,
            p.follower,
        ));
    }
    flush(u8::MAX, &mut out, &mut d);
    if state.drawn != NONE {
        out.push(letter(state.drawn).to_string());
    }
    out.join(" ")
}

/// Reads a record (see the module doc) into the position it leads to.
pub(super) fn parse_record(game: &Carcassonne, text: &str) -> Result<State, NotationError> {
    let mut state = game.initial_state();
    for (i, tok) in text.split_whitespace().enumerate() {
        let mv = parse_ply(game, &state, tok).map_err(|e| e.with_fragment(tok).at_move(i + 1))?;
        game.apply(&mut state, mv);
    }
    Ok(state)
}

/// Writes one ply.
pub(super) fn format_ply(game: &Carcassonne, state: &State, mv: Move) -> String {
    match mv {
        Move::Draw(t) => {
            if state.placeable(game.tiles, t) {
                letter(t).to_string()
            } else {
                format!("{}-", letter(t))
            }
        }
        Move::Place { x, y, rot, seg } => {
            placement_text(game.tiles.get(state.drawn, rot), x, y, rot, seg)
        }
    }
}

/// Reads one ply and checks that it is legal in `state`.
pub(super) fn parse_ply(
    game: &Carcassonne,
    state: &State,
    text: &str,
) -> Result<Move, NotationError> {
    let text = text.trim();
    match game.turn(state) {
        Turn::Terminal => Err(NotationError::new("the game is over (the bag is empty)")),
        Turn::Chance => parse_draw(game, state, text),
        Turn::Player(p) => parse_place(game, state, text, p),
    }
}

fn parse_draw(game: &Carcassonne, state: &State, text: &str) -> Result<Move, NotationError> {
    let (name, discard) = match text.strip_suffix('-') {
        Some(n) => (n, true),
        None => (text, false),
    };
    let mut chars = name.chars();
    let t = match (chars.next(), chars.next()) {
        (Some(c), None) => type_of_letter(c),
        _ => None,
    }
    .ok_or_else(|| {
        NotationError::new(format!(
            "a tile is drawn here: expected a tile letter A..X, got '{text}'"
        ))
    })?;
    if state.bag[t as usize] == 0 {
        return Err(NotationError::new(format!(
            "no tile {} is left in the bag",
            letter(t)
        )));
    }
    if discard && state.placeable(game.tiles, t) {
        return Err(NotationError::new(format!(
            "tile {} fits on the board, so it is not discarded",
            letter(t)
        )));
    }
    Ok(Move::Draw(t))
}

fn parse_place(
    game: &Carcassonne,
    state: &State,
    text: &str,
    player: u8,
) -> Result<Move, NotationError> {
    let tiles = game.tiles;
    let t = state.drawn;
    let bad = || {
        NotationError::new(format!(
            "tile {} is to be placed: expected x,y r rotation [@slot], e.g. 1,0r2@N",
            letter(t)
        ))
    };
    let (place, follower) = match text.split_once('@') {
        Some((a, b)) => (a, Some(b)),
        None => (text, None),
    };
    let (cell, rot) = place.split_once(['r', 'R']).ok_or_else(bad)?;
    let (xs, ys) = cell.split_once(',').ok_or_else(bad)?;
    let x: i8 = xs.trim().parse().map_err(|_| bad())?;
    let y: i8 = ys.trim().parse().map_err(|_| bad())?;
    let rot: u8 = rot.trim().parse().map_err(|_| bad())?;
    if rot > 3 {
        return Err(NotationError::new(format!(
            "rotation {rot} is not one of 0..3"
        )));
    }
    if state.at(x, y).is_some() {
        return Err(NotationError::new(format!("cell {x},{y} is taken")));
    }
    // Coordinates stay far inside i8: a chain of 72 tiles reaches at most 71 from the start.
    if x.unsigned_abs() > 100 || y.unsigned_abs() > 100 {
        return Err(NotationError::new(format!("cell {x},{y} touches no tile")));
    }
    let rot = tiles.canon[t as usize][rot as usize];
    let o = tiles.get(t, rot);
    let mut touches = false;
    for (s, &(dx, dy)) in DIRS.iter().enumerate() {
        if let Some(j) = state.at(x + dx, y + dy) {
            touches = true;
            let theirs = state.oriented(tiles, j).edges[(s + 2) % 4];
            if theirs != o.edges[s] {
                return Err(NotationError::new(format!(
                    "the {} edge of {} ({}) meets a {}",
                    SIDE_NAMES[s],
                    letter(t),
                    edge_name(o.edges[s]),
                    edge_name(theirs)
                )));
            }
        }
    }
    if !touches {
        return Err(NotationError::new(format!("cell {x},{y} touches no tile")));
    }
    let seg = match follower {
        None => NO_FOLLOWER,
        Some(name) => {
            let name = name.trim().to_ascii_uppercase();
            let seg = if name == "M" {
                o.monastery.ok_or_else(|| {
                    NotationError::new(format!("tile {} has no monastery", letter(t)))
                })?
            } else {
                let slot = SLOT_NAMES.iter().position(|&n| n == name).ok_or_else(|| {
                    NotationError::new(format!(
                        "'{name}' is not a follower place (M or a slot: {})",
                        SLOT_NAMES.join(" ")
                    ))
                })?;
                o.slot_seg[slot]
            };
            if state.hand[player as usize] == 0 {
                return Err(NotationError::new(format!(
                    "player {} has no follower left",
                    player + 1
                )));
            }
            if !state.free(tiles, x, y, o, seg as usize) {
                return Err(NotationError::new(format!(
                    "the {} at {} already holds a follower",
                    kind_name(o.kind[seg as usize]),
                    name
                )));
            }
            seg
        }
    };
    Ok(Move::Place { x, y, rot, seg })
}
