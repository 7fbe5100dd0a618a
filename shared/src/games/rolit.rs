//! Rolit: Othello for three or four players, on even square boards of 4 x 4 to 8 x 8.
//!
//! Rules: Goliath Games' published Rolit rules, as also used by Schadd and Winands ("Best Reply
//! Search for Multiplayer Games", 2011); the choices they leave open are marked *ours*.
//! - Red (player 0), yellow (1), green (2), blue (3) in turn order; red first. The four centre
//!   squares start with one disc of each colour, clockwise red, yellow, green, blue (8 x 8: red d4,
//!   yellow e4, green e5, blue d5), whatever the number of players.
//! - With three players blue does not play and its start disc is neutral: it counts for nobody and
//!   can be captured like any other (*ours*).
//! - A player with a capturing move (bracketing, as in Othello, a run of other colours) must play
//!   one, and every bracketed run turns to its colour; otherwise it places next to any disc (also
//!   a player with no disc left). So there are no passes; the game ends when the board is full.
//! - Utilities: each player's disc count at the end (docs/API.md, section 3); the evaluator
//!   ([`VectorEval`]) gives the current counts.
//!
//! The board arithmetic is Othello's ([`Geometry`]), with the union of every other colour as
//! "other". Notation: Othello's squares joined by nothing, without passes. A state keeps its move
//! history for the notation only ([`Game::same_state`] and [`Hashed::hash`] ignore it). For
//! best-reply search ([`OutOfTurn`]) any player's moves can be played out of turn; such states
//! are seen only by the search.

use super::fmix64;
use super::othello::{Geometry, PARAM_SIZE};
use crate::games::entry::{Family, GameEntry, Visitor};
use crate::model::settings::{DefaultValue, Opts, SolveError, Spec};
use crate::model::{Game, Hashed, NotationError, OutOfTurn, Stochastic, Turn, VectorEval};

/// Colour names in turn order.
pub const COLOURS: [&str; 4] = ["red", "yellow", "green", "blue"];
/// Most placements in a game: an 8 x 8 board less the four start discs.
const MAX_PLACEMENTS: usize = 60;

/// Rolit for a number of players on a board size.
#[derive(Clone, Debug)]
pub struct Rolit {
    geo: Geometry,
    players: u8,
}

/// A position: discs by colour (index 3 is neutral with three players), who moves, and the move
/// history (for the notation only).
#[derive(Clone, Debug)]
pub struct RolitState {
    /// Discs of red, yellow, green and blue (stride-8 layout of [`Geometry`]).
    pub discs: [u64; 4],
    /// The player to move (at the end: the one who would move).
    pub to_move: u8,
    len: u8,
    history: [u8; MAX_PLACEMENTS],
}

impl RolitState {
    /// Every disc on the board.
    #[inline]
    pub fn occupied(&self) -> u64 {
        self.discs[0] | self.discs[1] | self.discs[2] | self.discs[3]
    }
}

impl Rolit {
    /// Rolit for `players` (3 or 4) on a `size x size` board (even, 4..8).
    pub fn new(players: usize, size: usize) -> Result<Rolit, String> {
        if !(3..=4).contains(&players) {
            return Err(format!("rolit players {players} is not supported (3 or 4)"));
        }
        let geo = Geometry::new(size).map_err(|e| e.replace("othello", "rolit"))?;
        Ok(Rolit {
            geo,
            players: players as u8,
        })
    }

    /// The board shape.
    pub fn geometry(&self) -> Geometry {
        self.geo
    }

    /// Side length.
    pub fn size(&self) -> usize {
        self.geo.size as usize
    }

    /// Discs of `player` at `s`.
    pub fn count(&self, s: &RolitState, player: usize) -> u32 {
        s.discs[player].count_ones()
    }

    /// The squares `player` may play at `s` (see the module doc): its capturing moves, or every
    /// empty square next to a disc when it has none.
    #[inline]
    pub fn placements(&self, s: &RolitState, player: u8) -> u64 {
        let occ = s.occupied();
        let me = s.discs[player as usize];
        let capturing = self.geo.moves(me, occ & !me);
        if capturing != 0 {
            capturing
        } else {
            self.geo.neighbours(occ) & self.geo.valid & !occ
        }
    }

    #[inline]
    fn place(&self, s: &mut RolitState, player: u8, sq: u8) {
        let p = player as usize;
        let me = s.discs[p];
        let f = self.geo.flips(me, s.occupied() & !me, sq);
        for (q, d) in s.discs.iter_mut().enumerate() {
            if q == p {
                *d |= f | 1 << sq;
            } else {
                *d &= !f;
            }
        }
        if (s.len as usize) < MAX_PLACEMENTS {
            s.history[s.len as usize] = sq;
            s.len += 1;
        }
    }
}

impl Game for Rolit {
    type State = RolitState;
    /// A square 0..63 (stride-8 layout of [`Geometry`]).
    type Move = u8;

    fn name(&self) -> &'static str {
        "rolit"
    }
    fn num_players(&self) -> usize {
        self.players as usize
    }
    fn initial_state(&self) -> RolitState {
        let m = (self.geo.size / 2) as u32;
        let sq = |r: u32, c: u32| 1u64 << (r * 8 + c);
        RolitState {
            // Clockwise from the top left of the centre: red, yellow, green, blue.
            discs: [sq(m - 1, m - 1), sq(m - 1, m), sq(m, m), sq(m, m - 1)],
            to_move: 0,
            len: 0,
            history: [0; MAX_PLACEMENTS],
        }
    }
    #[inline]
    fn turn(&self, s: &RolitState) -> Turn {
        if s.occupied() == self.geo.valid {
            Turn::Terminal
        } else {
            Turn::Player(s.to_move)
        }
    }
    fn legal_moves(&self, s: &RolitState, moves: &mut Vec<u8>) {
        self.moves_as(s, s.to_move, moves);
    }
    #[inline]
    fn apply(&self, s: &mut RolitState, mv: u8) {
        let next = (s.to_move + 1) % self.players;
        self.apply_as(s, s.to_move, mv, next);
    }
    fn returns(&self, s: &RolitState, out: &mut [f64]) {
        for (p, o) in out.iter_mut().enumerate().take(self.players as usize) {
            *o = s.discs[p].count_ones() as f64;
        }
    }

    fn parse_position(&self, text: &str) -> Result<RolitState, NotationError> {
        let mut s = self.initial_state();
        super::othello::for_each_square_token(text, |number, token| {
            let mv = self.parse_move(&s, token).map_err(|e| e.at_move(number))?;
            self.apply(&mut s, mv);
            Ok(())
        })?;
        Ok(s)
    }

    fn format_position(&self, s: &RolitState) -> String {
        s.history[..s.len as usize]
            .iter()
            .map(|&m| self.geo.square_name(m))
            .collect()
    }

    fn parse_move(&self, s: &RolitState, text: &str) -> Result<u8, NotationError> {
        let t = text.trim();
        if self.turn(s) == Turn::Terminal {
            return Err(
                NotationError::new("the game is already over (the board is full)").with_fragment(t),
            );
        }
        let sq = self.geo.parse_square(t)?;
        if s.occupied() >> sq & 1 != 0 {
            return Err(NotationError::new("the square is taken").with_fragment(t));
        }
        if self.placements(s, s.to_move) >> sq & 1 == 0 {
            let me = s.discs[s.to_move as usize];
            let msg = if self.geo.moves(me, s.occupied() & !me) != 0 {
                "not a legal move (a capturing move exists, so the move must capture)"
            } else {
                "not a legal move (it must be next to a disc)"
            };
            return Err(NotationError::new(format!(
                "{msg}; {} is to move",
                COLOURS[s.to_move as usize]
            ))
            .with_fragment(t));
        }
        Ok(sq)
    }

    fn format_move(&self, _s: &RolitState, mv: u8) -> String {
        self.geo.square_name(mv)
    }

    fn same_state(&self, a: &RolitState, b: &RolitState) -> bool {
        a.discs == b.discs && a.to_move == b.to_move
    }
}

impl OutOfTurn for Rolit {
    fn moves_as(&self, s: &RolitState, player: u8, moves: &mut Vec<u8>) {
        moves.clear();
        if s.occupied() == self.geo.valid {
            return;
        }
        let mut m = self.placements(s, player);
        while m != 0 {
            moves.push(m.trailing_zeros() as u8);
            m &= m - 1;
        }
    }
    #[inline]
    fn apply_as(&self, s: &mut RolitState, player: u8, mv: u8, next: u8) {
        self.place(s, player, mv);
        s.to_move = next;
    }
}

/// No chance nodes: Rolit is deterministic (the multi-player kernels take stochastic games).
impl Stochastic for Rolit {
    fn chance_outcomes(&self, _s: &RolitState, out: &mut Vec<(u8, f64)>) {
        out.clear();
    }
}

/// The current disc counts: the utility if the game ended now.
impl VectorEval for Rolit {
    fn evaluate_vector(&self, s: &RolitState, out: &mut [f64]) {
        self.returns(s, out);
    }
}

impl Hashed for Rolit {
    /// 256 bits of board do not fit in 64: a mix, not a key.
    const HASH_IS_KEY: bool = false;
    fn hash(&self, s: &RolitState) -> u64 {
        let mut h = (s.to_move as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        for d in s.discs {
            h = fmix64(h ^ d);
        }
        h
    }
}

/// `players`: the number of players.
pub const PARAM_PLAYERS: Spec = Spec::uint(
    "players",
    3,
    4,
    DefaultValue::UInt(4),
    "number of players",
    "the game's rules",
);

/// The catalogue entry of Rolit.
pub struct RolitEntry;

impl GameEntry for RolitEntry {
    const NAME: &'static str = "rolit";
    const PARAMS: &'static [Spec] = &[PARAM_PLAYERS, PARAM_SIZE];
    const FAMILY: Family = Family::Multi;
    type Game = Rolit;
    fn build(params: &Opts) -> Result<Rolit, SolveError> {
        let players = params.uint_value(&PARAM_PLAYERS)?;
        let size = params.uint_value(&PARAM_SIZE)?;
        params.finish()?;
        Rolit::new(players, size).map_err(SolveError::bad)
    }
    fn offer<V: Visitor>(game: Rolit, visitor: V) -> V::Output {
        visitor.multi(game)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::battery;
    use rand::{Rng, SeedableRng};

    fn names(g: &Rolit, s: &RolitState) -> Vec<String> {
        let mut moves = Vec::new();
        g.legal_moves(s, &mut moves);
        moves.iter().map(|&m| g.format_move(s, m)).collect()
    }

    #[test]
    fn battery_all_sizes_and_player_counts() {
        for players in [3, 4] {
            for (size, n) in [(4, 200), (6, 60), (8, 30)] {
                let g = Rolit::new(players, size).unwrap();
                let s = g.initial_state();
                battery::check_game(&g, &s, n, 1);
                battery::check_hashed(&g, &s, n, 2);
                battery::check_stochastic(&g, &s, n / 4, 3);
            }
        }
    }

    /// The start and first moves of the example game in the module doc: from the start red can
    /// capture yellow (f4), green (f6) or blue (d6), and must.
    #[test]
    fn start_and_forced_capture() {
        let g = Rolit::new(4, 8).unwrap();
        let s = g.initial_state();
        let geo = g.geometry();
        let at = |t: &str| 1u64 << geo.parse_square(t).unwrap();
        assert_eq!(s.discs, [at("d4"), at("e4"), at("e5"), at("d5")]);
        assert_eq!(names(&g, &s), ["f4", "d6", "f6"]);
        let e = g.parse_position("c3").unwrap_err().to_string();
        assert!(e.contains("must capture"), "{e}");
        let s = g.parse_position("f4").unwrap();
        assert_eq!(s.discs[0], at("d4") | at("e4") | at("f4"));
        assert_eq!(s.discs[1], 0);
        // Yellow has no disc left: it may play any empty square next to a disc (14 of them).
        let m = names(&g, &s);
        assert_eq!(m.len(), 14, "{m:?}");
        assert!(m.contains(&"c3".to_string()) && m.contains(&"g3".to_string()));
        let e = g.parse_position("f4a1").unwrap_err().to_string();
        assert!(
            e.starts_with("move 2 ('a1')") && e.contains("next to a disc"),
            "{e}"
        );
        let e = g.parse_position("f4d4").unwrap_err().to_string();
        assert!(e.contains("taken"), "{e}");
        let e = g.parse_position("f4i9").unwrap_err().to_string();
        assert!(e.contains("not a square"), "{e}");
        assert_eq!(
            g.format_position(&g.parse_position("f4, c3").unwrap()),
            "f4c3"
        );
        assert!(Rolit::new(2, 8).is_err() && Rolit::new(5, 8).is_err());
        assert!(Rolit::new(4, 5).unwrap_err().contains("rolit size 5"));
    }

    /// The naive flip rule on a grid: from `sq`, in each of the 8 directions, a run of discs of
    /// other colours that ends at a disc of `p` turns to `p`.
    fn naive_flips(s: &RolitState, p: usize, sq: u8, size: i32) -> u64 {
        let colour = |r: i32, c: i32| -> Option<usize> {
            if r < 0 || c < 0 || r >= size || c >= size {
                return None;
            }
            (0..4).find(|&q| s.discs[q] >> (r * 8 + c) & 1 != 0)
        };
        let (r0, c0) = ((sq / 8) as i32, (sq % 8) as i32);
        let mut out = 0;
        for (dr, dc) in [
            (0, 1),
            (0, -1),
            (1, 0),
            (-1, 0),
            (1, 1),
            (1, -1),
            (-1, 1),
            (-1, -1),
        ] {
            let (mut r, mut c, mut run) = (r0 + dr, c0 + dc, 0u64);
            while let Some(q) = colour(r, c) {
                if q == p {
                    out |= run;
                    break;
                }
                run |= 1 << (r * 8 + c);
                r += dr;
                c += dc;
            }
        }
        out
    }

    /// Random games against a naive grid reference: the discs that change colour are exactly the
    /// bracketed runs, a capture is played whenever one exists, only the mover gains, one disc is
    /// added per move, the turn goes round, and a full board's counts sum to its area.
    #[test]
    fn random_games_keep_the_rules() {
        let g = Rolit::new(4, 8).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let mut moves = Vec::new();
        for _ in 0..20 {
            let mut s = g.initial_state();
            while g.turn(&s) != Turn::Terminal {
                g.legal_moves(&s, &mut moves);
                let mv = moves[rng.gen_range(0..moves.len())];
                let before = s.clone();
                g.apply(&mut s, mv);
                let p = before.to_move as usize;
                assert_eq!(
                    s.occupied().count_ones(),
                    before.occupied().count_ones() + 1
                );
                let gained = s.discs[p] & !before.discs[p] & !(1 << mv);
                assert_eq!(gained, naive_flips(&before, p, mv, 8));
                let any_capture = (0..64u8)
                    .filter(|&q| (g.geometry().valid & !before.occupied()) >> q & 1 != 0)
                    .any(|q| naive_flips(&before, p, q, 8) != 0);
                assert_eq!(gained != 0, any_capture, "a capture is forced");
                for q in 0..4 {
                    if q != p {
                        assert_eq!(s.discs[q] & !before.discs[q], 0, "only the mover gains");
                    }
                }
                assert_eq!(s.to_move, (before.to_move + 1) % 4);
            }
            let mut r = [0.0; 4];
            g.returns(&s, &mut r);
            assert_eq!(r.iter().sum::<f64>(), 64.0);
        }
    }

    /// Three players: blue never moves and its start disc counts for nobody.
    #[test]
    fn three_players_leave_blue_neutral() {
        let g = Rolit::new(3, 6).unwrap();
        let mut s = g.initial_state();
        let mut moves = Vec::new();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut turn = 0;
        while g.turn(&s) != Turn::Terminal {
            assert_eq!(s.to_move, turn, "red, yellow, green in turn, never blue");
            g.legal_moves(&s, &mut moves);
            g.apply(&mut s, moves[rng.gen_range(0..moves.len())]);
            turn = (turn + 1) % 3;
            let mut r = vec![0.0; 3];
            g.returns(&s, &mut r);
            assert_eq!(
                r.iter().sum::<f64>() as u32 + s.discs[3].count_ones(),
                s.occupied().count_ones(),
                "the neutral disc counts for nobody"
            );
        }
        assert_eq!(s.occupied().count_ones(), 36);
    }

    /// Out of turn: a player's moves and the turn handed to anyone.
    #[test]
    fn out_of_turn_moves() {
        let g = Rolit::new(4, 8).unwrap();
        let s = g.initial_state();
        let mut moves = Vec::new();
        g.moves_as(&s, 1, &mut moves);
        let yellow: Vec<String> = moves.iter().map(|&m| g.format_move(&s, m)).collect();
        // Yellow at e4 captures red (c4), green (e6) or blue (c6).
        assert_eq!(yellow, ["c4", "c6", "e6"]);
        let mut t = s.clone();
        g.apply_as(&mut t, 1, moves[0], 0);
        assert_eq!(t.to_move, 0);
        assert_eq!(t.discs[0], 0);
        let mut u = s.clone();
        g.apply(&mut u, {
            g.legal_moves(&s, &mut moves);
            moves[0]
        });
        let mut v = s.clone();
        g.apply_as(&mut v, 0, moves[0], 1);
        assert!(g.same_state(&u, &v));
    }
}
