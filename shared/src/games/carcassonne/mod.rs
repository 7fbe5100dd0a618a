//! Carcassonne, the two-player base game (72 tiles, 7 followers each), as a game with chance.
//!
//! Turn: a chance node draws a tile type from the bag (probability `count / tiles left`), the
//! player who drew places it ([`Move::Place`]: cell, rotation, optional follower on a segment of
//! the placed tile), then the other player draws. A tile that fits nowhere is discarded and the
//! same player draws again; the game ends when the bag is empty, with the final scoring. Rules:
//! the current Hans im Glück base game, in full in docs/games.md, "Carcassonne".
//!
//! Features are tracked incrementally: every tile segment ([`tiles`]) gets a number, and a
//! union-find over the segments (union by size, a circular member list per feature) keeps per
//! feature the open edges left (a city or road is complete at zero), the followers per player and
//! the members to walk when it scores. The state is a fixed-size value (no heap), so copy-make
//! kernels copy it without allocating.
//!
//! Values ([`ChanceZeroSum`]): the score difference from the view of the player to move (at a
//! chance node the player about to draw; at the end the player who would draw next); `returns` are
//! the two final scores. [`Carcassonne::evaluate`]: the score difference plus the end-of-game value
//! of every incomplete feature, a guessed share of completing them and a little per follower in
//! hand. Notation ([`notation`], docs/API.md section 4): a game record from the start tile (D at
//! 0,0, city north); errors name the ply (`move 7 ('3,0r1'): ...`).

pub mod notation;
pub mod tiles;

#[cfg(test)]
mod tests;

use crate::games::entry::{Family, GameEntry, Visitor};
use crate::model::chance::ChanceZeroSum;
use crate::model::settings::{Opts, SolveError, Spec};
use crate::model::{Game, Hashed, NotationError, Stochastic, Turn};
use std::sync::OnceLock;
use tiles::{Edge, Kind, Oriented, Tiles, MAX_SEGS, START_TYPE, TOTAL_TILES, TYPES};

/// Followers per player.
pub const FOLLOWERS: u8 = 7;
/// Segments in a whole game fit in `u8` ids (the 72 tiles have 243 segments; a test checks it).
const SEG_CAP: usize = 256;
/// Cells of the open-addressing board table (a power of two, well above 72 tiles).
const TABLE: usize = 256;
/// Marks "no follower" in [`Move::Place`] and in the placement history.
pub const NO_FOLLOWER: u8 = u8::MAX;
/// Marks "no tile drawn".
const NONE: u8 = u8::MAX;

/// Evaluation: value of a follower still in hand, in points. Hand-chosen (not tuned): a follower
/// typically earns a few points, but one in hand has earned nothing yet.
pub const FOLLOWER_VALUE: f64 = 0.5;

/// Step of the side directions N, E, S, W.
const DIRS: [(i8, i8); 4] = [(0, 1), (1, 0), (0, -1), (-1, 0)];

fn tables() -> &'static Tiles {
    static T: OnceLock<Tiles> = OnceLock::new();
    T.get_or_init(Tiles::base_game)
}

/// A move: a tile drawn (chance) or a tile placed (player).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Move {
    /// Chance: a tile of this type (0 = `A` .. 23 = `X`) is drawn.
    Draw(u8),
    /// The drawn tile goes to cell (`x`, `y`) turned `rot` quarter turns clockwise, with a
    /// follower on its segment `seg` (index in [`tiles::Oriented`]) or [`NO_FOLLOWER`].
    Place {
        /// Column (east positive).
        x: i8,
        /// Row (north positive).
        y: i8,
        /// Quarter turns clockwise.
        rot: u8,
        /// Segment of the tile that gets a follower, or [`NO_FOLLOWER`].
        seg: u8,
    },
}

/// A placed tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
struct Placed {
    x: i8,
    y: i8,
    t: u8,
    rot: u8,
    /// Id of its first segment; its segments are `seg0 .. seg0 + nseg`.
    seg0: u8,
    /// Segment that got a follower when it was placed (history, for the record), or NONE.
    follower: u8,
}

/// A position. Fixed size, no heap: copying it is one `memcpy` of about 3.5 kB.
#[derive(Clone)]
pub struct State {
    placed: [Placed; TOTAL_TILES],
    n_placed: u8,
    /// Board lookup: open addressing from a cell to `1 + index in placed` (0 = empty).
    table: [u8; TABLE],
    /// Union-find parent of each segment.
    parent: [u8; SEG_CAP],
    /// Circular list of the members of each feature.
    next: [u8; SEG_CAP],
    /// Tile index of each segment.
    seg_tile: [u8; SEG_CAP],
    /// At a root: open edges of the feature (roads and cities; complete at 0).
    open: [u8; SEG_CAP],
    /// At a root: number of segments (union by size).
    size: [u8; SEG_CAP],
    /// At a root: followers of each player on the feature.
    count: [[u8; 2]; SEG_CAP],
    /// Follower standing on each segment: 0 none, 1 + player.
    on: [u8; SEG_CAP],
    n_segs: u16,
    bag: [u8; TYPES],
    left: u8,
    /// Discarded tiles in order: (type, number of tiles placed then).
    discards: [(u8, u8); TOTAL_TILES],
    n_disc: u8,
    score: [i16; 2],
    hand: [u8; 2],
    to_move: u8,
    drawn: u8,
    zobrist: u64,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Carcassonne[{}] scores {}:{}",
            notation::format_record(tables(), self),
            self.score[0],
            self.score[1]
        )
    }
}

/// SplitMix64 finaliser: the Zobrist keys are this function of a packed description, so the
/// unbounded board needs no key table.
#[inline(always)]
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[inline(always)]
fn cell_bits(x: i8, y: i8) -> u64 {
    (x as u8 as u64) << 8 | y as u8 as u64
}

fn tile_key(x: i8, y: i8, t: u8, r: u8) -> u64 {
    mix(1 << 60 | cell_bits(x, y) << 16 | (t as u64) << 8 | r as u64)
}

fn follower_key(x: i8, y: i8, local: u8, player: u8) -> u64 {
    mix(2 << 60 | cell_bits(x, y) << 16 | (local as u64) << 8 | player as u64)
}

fn discard_key(t: u8, nth: u8) -> u64 {
    mix(3 << 60 | (t as u64) << 8 | nth as u64)
}

impl State {
    #[inline(always)]
    fn slot_of(x: i8, y: i8) -> usize {
        ((x as u8 as usize).wrapping_mul(97) ^ (y as u8 as usize).wrapping_mul(31)) & (TABLE - 1)
    }

    /// Index of the tile at (x, y).
    #[inline]
    fn at(&self, x: i8, y: i8) -> Option<usize> {
        let mut i = Self::slot_of(x, y);
        loop {
            let v = self.table[i];
            if v == 0 {
                return None;
            }
            let p = &self.placed[v as usize - 1];
            if p.x == x && p.y == y {
                return Some(v as usize - 1);
            }
            i = (i + 1) & (TABLE - 1);
        }
    }

    fn insert(&mut self, x: i8, y: i8, index: usize) {
        let mut i = Self::slot_of(x, y);
        while self.table[i] != 0 {
            i = (i + 1) & (TABLE - 1);
        }
        self.table[i] = index as u8 + 1;
    }

    /// Root of segment `s` (no path compression, for `&self`).
    #[inline]
    fn find(&self, mut s: u8) -> u8 {
        while self.parent[s as usize] != s {
            s = self.parent[s as usize];
        }
        s
    }

    /// Root of segment `s`, halving the path.
    #[inline]
    fn find_mut(&mut self, mut s: u8) -> u8 {
        while self.parent[s as usize] != s {
            let p = self.parent[s as usize];
            self.parent[s as usize] = self.parent[p as usize];
            s = p;
        }
        s
    }

    /// Joins the features of `a` and `b` across one shared edge and returns the root. The
    /// shared edge closes one open edge on each side (`closes`).
    fn join(&mut self, a: u8, b: u8, closes: bool) -> u8 {
        let (mut ra, mut rb) = (self.find_mut(a), self.find_mut(b));
        if ra != rb {
            if self.size[ra as usize] < self.size[rb as usize] {
                std::mem::swap(&mut ra, &mut rb);
            }
            let (ia, ib) = (ra as usize, rb as usize);
            self.parent[ib] = ra;
            self.size[ia] += self.size[ib];
            self.open[ia] += self.open[ib];
            self.count[ia][0] += self.count[ib][0];
            self.count[ia][1] += self.count[ib][1];
            self.next.swap(ia, ib);
        }
        if closes {
            self.open[ra as usize] -= 2;
        }
        ra
    }

    /// The orientation of tile `index`.
    #[inline(always)]
    fn oriented<'t>(&self, tiles: &'t Tiles, index: usize) -> &'t Oriented {
        let p = &self.placed[index];
        tiles.get(p.t, p.rot)
    }

    /// Number of tiles on the 8 cells around (x, y).
    fn neighbours8(&self, x: i8, y: i8) -> u8 {
        let mut n = 0;
        for dx in -1..=1i8 {
            for dy in -1..=1i8 {
                if (dx, dy) != (0, 0) && self.at(x + dx, y + dy).is_some() {
                    n += 1;
                }
            }
        }
        n
    }

    /// Whether orientation `o` fits on the empty cell (x, y), which must touch a tile.
    #[inline]
    fn fits(&self, tiles: &Tiles, x: i8, y: i8, o: &Oriented) -> bool {
        for (s, &(dx, dy)) in DIRS.iter().enumerate() {
            if let Some(j) = self.at(x + dx, y + dy) {
                if self.oriented(tiles, j).edges[(s + 2) % 4] != o.edges[s] {
                    return false;
                }
            }
        }
        true
    }

    /// Whether the feature that segment `i` of `o` would join at (x, y) is free of followers.
    fn free(&self, tiles: &Tiles, x: i8, y: i8, o: &Oriented, i: usize) -> bool {
        if o.kind[i] == Kind::Monastery {
            return true;
        }
        for (s, &(dx, dy)) in DIRS.iter().enumerate() {
            let Some(j) = self.at(x + dx, y + dy) else {
                continue;
            };
            let no = self.oriented(tiles, j);
            let opp = (s + 2) % 4;
            for k in 0..3 {
                if o.mask[i] >> (3 * s + k) & 1 == 1 {
                    let nseg = self.placed[j].seg0 + no.slot_seg[3 * opp + 2 - k];
                    if self.count[self.find(nseg) as usize] != [0, 0] {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// Calls `f(x, y)` once for every empty cell next to a tile. Stops when `f` returns true.
    fn each_frontier(&self, mut f: impl FnMut(i8, i8) -> bool) {
        for i in 0..self.n_placed as usize {
            let p = self.placed[i];
            'dirs: for &(dx, dy) in &DIRS {
                let (cx, cy) = (p.x + dx, p.y + dy);
                if self.at(cx, cy).is_some() {
                    continue;
                }
                // Visit each cell from the first tile (in placement order) that touches it.
                for &(ex, ey) in &DIRS {
                    if let Some(j) = self.at(cx + ex, cy + ey) {
                        if j < i {
                            continue 'dirs;
                        }
                    }
                }
                if f(cx, cy) {
                    return;
                }
            }
        }
    }

    /// Whether a tile of type `t` fits anywhere.
    fn placeable(&self, tiles: &Tiles, t: u8) -> bool {
        let mut found = false;
        self.each_frontier(|x, y| {
            for r in 0..4u8 {
                if tiles.canon[t as usize][r as usize] == r
                    && self.fits(tiles, x, y, tiles.get(t, r))
                {
                    found = true;
                    return true;
                }
            }
            false
        });
        found
    }

    /// Distinct tiles and shields of the feature rooted at `r`.
    fn tiles_and_shields(&self, tiles: &Tiles, r: u8) -> (u32, u32) {
        let mut seen: u128 = 0;
        let mut shields = 0;
        let mut s = r;
        loop {
            let ti = self.seg_tile[s as usize] as usize;
            seen |= 1 << ti;
            let local = (s - self.placed[ti].seg0) as usize;
            shields += self.oriented(tiles, ti).shield[local] as u32;
            s = self.next[s as usize];
            if s == r {
                break;
            }
        }
        (seen.count_ones(), shields)
    }

    /// Adds `points` to every player with the most followers on the feature rooted at `r`.
    fn award(count: [u8; 2], points: f64, out: &mut [f64; 2]) {
        let best = count[0].max(count[1]);
        if best == 0 {
            return;
        }
        for p in 0..2 {
            if count[p] == best {
                out[p] += points;
            }
        }
    }

    /// Sends home every follower on the feature rooted at `r`.
    fn release(&mut self, tiles: &Tiles, r: u8) {
        let mut s = r;
        loop {
            let on = self.on[s as usize];
            if on != 0 {
                let ti = self.seg_tile[s as usize] as usize;
                let p = self.placed[ti];
                self.hand[on as usize - 1] += 1;
                self.on[s as usize] = 0;
                self.zobrist ^= follower_key(p.x, p.y, s - p.seg0, on - 1);
            }
            s = self.next[s as usize];
            if s == r {
                break;
            }
        }
        let _ = tiles;
        self.count[r as usize] = [0, 0];
    }

    /// End-of-game points of every feature with followers, as if the game ended now; with
    /// `guess`, plus the evaluation's guessed extra value of completing them and the followers
    /// in hand.
    fn tally(&self, tiles: &Tiles, guess: bool) -> [f64; 2] {
        let mut out = [0.0; 2];
        for s in 0..self.n_segs as usize {
            if self.parent[s] as usize != s || self.count[s] == [0, 0] {
                continue;
            }
            let r = s as u8;
            let ti = self.seg_tile[s] as usize;
            let o = self.oriented(tiles, ti);
            let local = s - self.placed[ti].seg0 as usize;
            let count = self.count[s];
            match o.kind[local] {
                Kind::Road => {
                    let (t, _) = self.tiles_and_shields(tiles, r);
                    Self::award(count, t as f64, &mut out);
                }
                Kind::City => {
                    let (t, sh) = self.tiles_and_shields(tiles, r);
                    let mut v = (t + sh) as f64;
                    if guess {
                        // Completing doubles the value; guessed chance 1 / open edges.
                        v += (t + sh) as f64 / self.open[s].max(1) as f64;
                    }
                    Self::award(count, v, &mut out);
                }
                Kind::Monastery => {
                    let p = self.placed[ti];
                    let n = self.neighbours8(p.x, p.y) as f64;
                    let mut v = 1.0 + n;
                    if guess {
                        // Completion would add the missing 8 - n; guessed chance n / 8.
                        v += (8.0 - n) * n / 8.0;
                    }
                    Self::award(count, v, &mut out);
                }
                Kind::Field => {
                    let mut cities = [0u64; 4];
                    let mut m = r;
                    loop {
                        let mt = self.seg_tile[m as usize] as usize;
                        let mo = self.oriented(tiles, mt);
                        let ml = (m - self.placed[mt].seg0) as usize;
                        let mut bits = mo.field_cities[ml];
                        while bits != 0 {
                            let j = bits.trailing_zeros() as u8;
                            bits &= bits - 1;
                            let c = self.find(self.placed[mt].seg0 + j);
                            if self.open[c as usize] == 0 {
                                cities[c as usize / 64] |= 1 << (c % 64);
                            }
                        }
                        m = self.next[m as usize];
                        if m == r {
                            break;
                        }
                    }
                    let n: u32 = cities.iter().map(|w| w.count_ones()).sum();
                    Self::award(count, 3.0 * n as f64, &mut out);
                }
            }
        }
        if guess {
            for (o, &h) in out.iter_mut().zip(&self.hand) {
                *o += FOLLOWER_VALUE * h as f64;
            }
        }
        out
    }
}

/// The game: the tile tables and the value bound.
#[derive(Clone, Debug)]
pub struct Carcassonne {
    tiles: &'static Tiles,
    bound: f64,
}

impl Default for Carcassonne {
    fn default() -> Self {
        Self::new()
    }
}

impl Carcassonne {
    /// The two-player base game.
    pub fn new() -> Self {
        let tiles = tables();
        Carcassonne {
            tiles,
            bound: points_bound(tiles) + FOLLOWER_VALUE * FOLLOWERS as f64,
        }
    }

    /// The tile tables.
    pub fn tiles(&self) -> &'static Tiles {
        self.tiles
    }

    /// The scores so far (final scores at the end).
    pub fn scores(&self, state: &State) -> [i16; 2] {
        state.score
    }

    /// Followers in hand.
    pub fn followers(&self, state: &State) -> [u8; 2] {
        state.hand
    }

    /// Tiles left in the bag, per type.
    pub fn bag(&self, state: &State) -> [u8; TYPES] {
        state.bag
    }

    /// Number of tiles left in the bag.
    pub fn tiles_left(&self, state: &State) -> u8 {
        state.left
    }

    /// The type of the tile drawn and waiting to be placed.
    pub fn drawn(&self, state: &State) -> Option<u8> {
        (state.drawn != NONE).then_some(state.drawn)
    }

    /// The static evaluation from player 0's point of view (score difference plus the value
    /// of incomplete features and followers in hand; see the module doc), clamped to the bounds.
    pub fn evaluate(&self, state: &State) -> f64 {
        let t = state.tally(self.tiles, true);
        let v = (state.score[0] as f64 + t[0]) - (state.score[1] as f64 + t[1]);
        v.clamp(-self.bound, self.bound)
    }

    /// The start of a game whose bag holds `bag` (per type; the start tile is placed anyway).
    /// For hand-made positions and tests; the real game is [`Game::initial_state`].
    pub fn with_bag(&self, bag: [u8; TYPES]) -> State {
        let mut s = State {
            placed: [Placed::default(); TOTAL_TILES],
            n_placed: 0,
            table: [0; TABLE],
            parent: [0; SEG_CAP],
            next: [0; SEG_CAP],
            seg_tile: [0; SEG_CAP],
            open: [0; SEG_CAP],
            size: [0; SEG_CAP],
            count: [[0; 2]; SEG_CAP],
            on: [0; SEG_CAP],
            n_segs: 0,
            bag,
            left: bag.iter().sum(),
            discards: [(0, 0); TOTAL_TILES],
            n_disc: 0,
            score: [0; 2],
            hand: [FOLLOWERS; 2],
            to_move: 0,
            drawn: NONE,
            zobrist: 0,
        };
        self.put(&mut s, 0, 0, START_TYPE, 0, NO_FOLLOWER);
        s
    }

    /// Places tile `t` turned `rot` at (x, y) with a follower of the player to move on `seg`,
    /// and scores what it completes. Does not touch the bag or the turn.
    fn put(&self, s: &mut State, x: i8, y: i8, t: u8, rot: u8, seg: u8) {
        let tiles = self.tiles;
        let o = tiles.get(t, rot);
        let k = s.n_placed as usize;
        let seg0 = s.n_segs as u8;
        s.placed[k] = Placed {
            x,
            y,
            t,
            rot,
            seg0,
            follower: seg,
        };
        s.n_placed += 1;
        s.insert(x, y, k);
        s.zobrist ^= tile_key(x, y, t, rot);
        for i in 0..o.nseg as usize {
            let id = seg0 as usize + i;
            s.parent[id] = id as u8;
            s.next[id] = id as u8;
            s.seg_tile[id] = k as u8;
            s.open[id] = o.sides[i];
            s.size[id] = 1;
            s.count[id] = [0, 0];
            s.on[id] = 0;
        }
        s.n_segs += o.nseg as u16;
        // Join with the neighbours across every side.
        for (side, &(dx, dy)) in DIRS.iter().enumerate() {
            let Some(j) = s.at(x + dx, y + dy) else {
                continue;
            };
            let no = s.oriented(tiles, j);
            let nseg0 = s.placed[j].seg0;
            let opp = (side + 2) % 4;
            let mid = seg0 + o.slot_seg[3 * side + 1];
            let nmid = nseg0 + no.slot_seg[3 * opp + 1];
            match o.edges[side] {
                Edge::City => {
                    s.join(mid, nmid, true);
                }
                Edge::Road => {
                    s.join(mid, nmid, true);
                    for k in [0, 2] {
                        let a = seg0 + o.slot_seg[3 * side + k];
                        let b = nseg0 + no.slot_seg[3 * opp + 2 - k];
                        s.join(a, b, false);
                    }
                }
                Edge::Field => {
                    for k in 0..3 {
                        let a = seg0 + o.slot_seg[3 * side + k];
                        let b = nseg0 + no.slot_seg[3 * opp + 2 - k];
                        s.join(a, b, false);
                    }
                }
            }
        }
        let player = s.to_move;
        if seg != NO_FOLLOWER {
            let id = seg0 + seg;
            s.on[id as usize] = player + 1;
            let r = s.find_mut(id);
            s.count[r as usize][player as usize] += 1;
            s.hand[player as usize] -= 1;
            s.zobrist ^= follower_key(x, y, seg, player);
        }
        // Completed roads and cities through this tile.
        let mut done = [u8::MAX; MAX_SEGS];
        for i in 0..o.nseg as usize {
            if !matches!(o.kind[i], Kind::Road | Kind::City) {
                continue;
            }
            let r = s.find_mut(seg0 + i as u8);
            if s.open[r as usize] != 0 || done[..i].contains(&r) {
                continue;
            }
            done[i] = r;
            if s.count[r as usize] == [0, 0] {
                continue;
            }
            let (t, sh) = s.tiles_and_shields(tiles, r);
            let points = match o.kind[i] {
                Kind::City => 2 * (t + sh),
                _ => t,
            };
            let mut gain = [0.0; 2];
            State::award(s.count[r as usize], points as f64, &mut gain);
            s.score[0] += gain[0] as i16;
            s.score[1] += gain[1] as i16;
            s.release(tiles, r);
        }
        // Monasteries on this cell and around it that are now surrounded.
        for dx in -1..=1i8 {
            for dy in -1..=1i8 {
                let Some(j) = s.at(x + dx, y + dy) else {
                    continue;
                };
                let Some(m) = s.oriented(tiles, j).monastery else {
                    continue;
                };
                let id = s.placed[j].seg0 + m;
                let on = s.on[id as usize];
                if on != 0 && s.neighbours8(x + dx, y + dy) == 8 {
                    s.score[on as usize - 1] += 9;
                    s.release(tiles, id);
                }
            }
        }
    }

    /// Adds the final scoring to the scores (called once, when the bag runs empty).
    fn finish(&self, s: &mut State) {
        let t = s.tally(self.tiles, false);
        s.score[0] += t[0] as i16;
        s.score[1] += t[1] as i16;
    }
}

/// An upper bound on one player's final score: every tile adds at most 2 per city segment
/// (a tile counts once per city), 2 for its shield, 1 per road segment, 9 for a monastery and 3
/// per (field, city) pair it borders (each field scores each completed city once).
fn points_bound(tiles: &Tiles) -> f64 {
    let mut total = 0.0;
    for t in 0..TYPES {
        let o = tiles.get(t as u8, 0);
        let mut v = 0.0;
        for i in 0..o.nseg as usize {
            v += match o.kind[i] {
                Kind::City => 2.0 + 2.0 * o.shield[i] as u8 as f64,
                Kind::Road => 1.0,
                Kind::Monastery => 9.0,
                Kind::Field => 3.0 * o.field_cities[i].count_ones() as f64,
            };
        }
        total += v * tiles.count[t] as f64;
    }
    total
}

impl Game for Carcassonne {
    type State = State;
    type Move = Move;

    fn name(&self) -> &'static str {
        "carcassonne"
    }

    fn num_players(&self) -> usize {
        2
    }

    fn initial_state(&self) -> State {
        let mut bag = self.tiles.count;
        bag[START_TYPE as usize] -= 1;
        self.with_bag(bag)
    }

    #[inline]
    fn turn(&self, state: &State) -> Turn {
        if state.drawn != NONE {
            Turn::Player(state.to_move)
        } else if state.left == 0 {
            Turn::Terminal
        } else {
            Turn::Chance
        }
    }

    fn legal_moves(&self, state: &State, moves: &mut Vec<Move>) {
        moves.clear();
        match self.turn(state) {
            Turn::Terminal => {}
            Turn::Chance => {
                for t in 0..TYPES as u8 {
                    if state.bag[t as usize] > 0 {
                        moves.push(Move::Draw(t));
                    }
                }
            }
            Turn::Player(p) => {
                let tiles = self.tiles;
                let t = state.drawn;
                let has = state.hand[p as usize] > 0;
                state.each_frontier(|x, y| {
                    for rot in 0..4u8 {
                        if tiles.canon[t as usize][rot as usize] != rot {
                            continue;
                        }
                        let o = tiles.get(t, rot);
                        if !state.fits(tiles, x, y, o) {
                            continue;
                        }
                        moves.push(Move::Place {
                            x,
                            y,
                            rot,
                            seg: NO_FOLLOWER,
                        });
                        if has {
                            for i in 0..o.nseg as usize {
                                if state.free(tiles, x, y, o, i) {
                                    moves.push(Move::Place {
                                        x,
                                        y,
                                        rot,
                                        seg: i as u8,
                                    });
                                }
                            }
                        }
                    }
                    false
                });
            }
        }
    }

    fn apply(&self, state: &mut State, mv: Move) {
        match mv {
            Move::Draw(t) => {
                debug_assert!(state.drawn == NONE && state.bag[t as usize] > 0);
                state.bag[t as usize] -= 1;
                state.left -= 1;
                if state.placeable(self.tiles, t) {
                    state.drawn = t;
                } else {
                    let nth = state.discards[..state.n_disc as usize]
                        .iter()
                        .filter(|d| d.0 == t)
                        .count() as u8;
                    state.discards[state.n_disc as usize] = (t, state.n_placed);
                    state.n_disc += 1;
                    state.zobrist ^= discard_key(t, nth);
                    if state.left == 0 {
                        self.finish(state);
                    }
                }
            }
            Move::Place { x, y, rot, seg } => {
                debug_assert!(state.drawn != NONE);
                let t = state.drawn;
                self.put(state, x, y, t, rot, seg);
                state.drawn = NONE;
                state.to_move ^= 1;
                if state.left == 0 {
                    self.finish(state);
                }
            }
        }
    }

    fn returns(&self, state: &State, out: &mut [f64]) {
        out[0] = state.score[0] as f64;
        out[1] = state.score[1] as f64;
    }

    fn parse_position(&self, text: &str) -> Result<State, NotationError> {
        notation::parse_record(self, text)
    }

    fn format_position(&self, state: &State) -> String {
        notation::format_record(self.tiles, state)
    }

    fn parse_move(&self, state: &State, text: &str) -> Result<Move, NotationError> {
        notation::parse_ply(self, state, text)
    }

    fn format_move(&self, state: &State, mv: Move) -> String {
        notation::format_ply(self, state, mv)
    }

    fn same_state(&self, a: &State, b: &State) -> bool {
        if (
            a.n_placed, a.score, a.hand, a.to_move, a.drawn, a.bag, a.left,
        ) != (
            b.n_placed, b.score, b.hand, b.to_move, b.drawn, b.bag, b.left,
        ) {
            return false;
        }
        (0..a.n_placed as usize).all(|i| {
            let pa = a.placed[i];
            let Some(j) = b.at(pa.x, pa.y) else {
                return false;
            };
            let pb = b.placed[j];
            let n = self.tiles.get(pa.t, pa.rot).nseg as usize;
            pa.t == pb.t
                && pa.rot == pb.rot
                && (0..n).all(|k| a.on[pa.seg0 as usize + k] == b.on[pb.seg0 as usize + k])
        })
    }
}

impl Stochastic for Carcassonne {
    fn chance_outcomes(&self, state: &State, out: &mut Vec<(Move, f64)>) {
        out.clear();
        let left = state.left as f64;
        for t in 0..TYPES as u8 {
            let c = state.bag[t as usize];
            if c > 0 {
                out.push((Move::Draw(t), c as f64 / left));
            }
        }
    }
}

impl Hashed for Carcassonne {
    const HASH_IS_KEY: bool = false;

    fn hash(&self, state: &State) -> u64 {
        state.zobrist
            ^ mix(4 << 60
                | (state.score[0] as u16 as u64) << 32
                | (state.score[1] as u16 as u64) << 16
                | (state.to_move as u64) << 8
                | state.drawn as u64)
    }
}

impl ChanceZeroSum for Carcassonne {
    fn player_side(&self, state: &State) -> u8 {
        state.to_move
    }

    fn terminal_score(&self, state: &State) -> f64 {
        let d = (state.score[0] - state.score[1]) as f64;
        if state.to_move == 0 {
            d
        } else {
            -d
        }
    }

    fn utility_bounds(&self) -> (f64, f64) {
        (-self.bound, self.bound)
    }

    fn estimate(&self, state: &State) -> f64 {
        let v = self.evaluate(state);
        if state.to_move == 0 {
            v
        } else {
            -v
        }
    }
}

impl crate::model::Picture for Carcassonne {}

/// The catalogue entry of Carcassonne (no parameters).
pub struct CarcassonneEntry;

impl GameEntry for CarcassonneEntry {
    const NAME: &'static str = "carcassonne";
    const PARAMS: &'static [Spec] = &[];
    const FAMILY: Family = Family::Stochastic;
    type Game = Carcassonne;
    fn build(params: &Opts) -> Result<Carcassonne, SolveError> {
        params.finish()?;
        Ok(Carcassonne::new())
    }
    fn offer<V: Visitor>(game: Carcassonne, visitor: V) -> V::Output {
        visitor.stochastic(game)
    }
}
