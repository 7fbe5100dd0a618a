//! Tests of the Carcassonne rules: the tile set against the published counts, the model battery,
//! random games, hand-made positions whose scores are worked out by hand in the comments, the
//! notation, and the chance kernels against expectimax.

use super::tiles::*;
use super::*;
use crate::model::battery::{check_game, check_hashed, check_stochastic};
use crate::model::chance::check_chance_zero_sum;
use crate::model::play_moves;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn game() -> Carcassonne {
    Carcassonne::new()
}

fn letters_bag(spec: &str) -> [u8; TYPES] {
    let mut bag = [0u8; TYPES];
    for c in spec.chars() {
        bag[type_of_letter(c).unwrap() as usize] += 1;
    }
    bag
}

/// Plays `record` from a start whose bag holds the letters of `bag`.
fn play_with_bag(bag: &str, record: &str) -> State {
    let g = game();
    let mut s = g.with_bag(letters_bag(bag));
    let plies: Vec<&str> = record.split_whitespace().collect();
    play_moves(&g, &mut s, &plies).unwrap_or_else(|e| panic!("{record}: {e}"));
    s
}

fn play(record: &str) -> State {
    game()
        .parse_position(record)
        .unwrap_or_else(|e| panic!("{record}: {e}"))
}

#[test]
fn tile_set_matches_the_published_counts() {
    let t = Tiles::base_game();
    // A..X as in the Hans im Glück tile overview (module doc of `tiles`).
    let expected = [
        2, 4, 1, 4, 5, 2, 1, 3, 2, 3, 3, 3, 2, 3, 2, 3, 1, 3, 2, 1, 8, 9, 4, 1,
    ];
    assert_eq!(t.count, expected);
    assert_eq!(t.count.iter().map(|&c| c as usize).sum::<usize>(), 72);
    let (mut field, mut road, mut city) = (0, 0, 0);
    let (mut with_city, mut with_road, mut shields, mut monasteries, mut segs) = (0, 0, 0, 0, 0);
    for ty in 0..TYPES as u8 {
        let o = t.get(ty, 0);
        let n = t.count[ty as usize] as usize;
        for e in o.edges {
            match e {
                Edge::Field => field += n,
                Edge::Road => road += n,
                Edge::City => city += n,
            }
        }
        with_city += n * o.edges.contains(&Edge::City) as usize;
        with_road += n * o.edges.contains(&Edge::Road) as usize;
        shields += n * o.shield.iter().filter(|&&s| s).count();
        monasteries += n * o.monastery.is_some() as usize;
        segs += n * o.nseg as usize;
    }
    // Gatliff's statistics (module doc of `tiles`).
    assert_eq!((field, road, city), (115, 94, 79));
    assert_eq!((with_city, with_road), (44, 45));
    assert_eq!((shields, monasteries), (10, 6));
    assert_eq!(segs, 243);
    assert!(segs <= SEG_CAP);
    // The start tile: city north, road east-west.
    let d = t.get(START_TYPE, 0);
    assert_eq!(d.edges, [Edge::City, Edge::Road, Edge::Field, Edge::Road]);
}

#[test]
fn segments_cover_every_slot_once_in_every_rotation() {
    let t = Tiles::base_game();
    for ty in 0..TYPES as u8 {
        for r in 0..4 {
            let o = t.get(ty, r);
            let mut all = 0u16;
            for i in 0..o.nseg as usize {
                let m = o.mask[i];
                assert_eq!(all & m, 0, "{} r{r}: overlapping segments", letter(ty));
                all |= m;
                if o.kind[i] == Kind::City {
                    // A city takes whole edges.
                    for side in 0..4 {
                        let e = m >> (3 * side) & 7;
                        assert!(e == 0 || e == 7, "{} r{r}: city cuts an edge", letter(ty));
                    }
                }
            }
            assert_eq!(all, 0xFFF, "{} r{r}: uncovered slots", letter(ty));
            // Turning four times gives the tile back; each turn moves the edges by one side.
            let o0 = t.get(ty, 0);
            for s in 0..4 {
                assert_eq!(o.edges[(s + r as usize) % 4], o0.edges[s]);
            }
        }
    }
    // Distinct rotations: full city, monastery and crossing look alike in all four; straight
    // road and city through the middle in two.
    let distinct = |c: char| {
        let ty = type_of_letter(c).unwrap() as usize;
        (0..4).filter(|&r| t.canon[ty][r] == r as u8).count()
    };
    for (c, n) in [
        ('B', 1),
        ('C', 1),
        ('X', 1),
        ('U', 2),
        ('F', 2),
        ('G', 2),
        ('H', 2),
        ('V', 4),
        ('D', 4),
    ] {
        assert_eq!(distinct(c), n, "rotations of {c}");
    }
    // H: the field between the two caps touches both; E: one field, one city.
    let h = t.get(type_of_letter('H').unwrap(), 0);
    assert_eq!((h.nseg, h.field_cities[2]), (3, 0b11));
}

#[test]
fn battery() {
    let g = game();
    let s = g.initial_state();
    check_game(&g, &s, 3, 1);
    check_stochastic(&g, &s, 5, 2);
    check_hashed(&g, &s, 3, 3);
    check_chance_zero_sum(&g, &s, 20, 4);
}

#[test]
fn chance_probabilities_are_count_over_tiles_left() {
    let g = game();
    let s = g.initial_state();
    let mut out = Vec::new();
    g.chance_outcomes(&s, &mut out);
    assert_eq!(out.len(), 24);
    assert_eq!(out[0], (Move::Draw(0), 2.0 / 71.0));
    assert_eq!(out[3], (Move::Draw(3), 3.0 / 71.0)); // D: 4 minus the start tile
    assert_eq!(out[21], (Move::Draw(21), 9.0 / 71.0)); // V
    let s = play_with_bag("EEVBW", "");
    g.chance_outcomes(&s, &mut out);
    let probs: Vec<(char, f64)> = out
        .iter()
        .map(|&(m, p)| match m {
            Move::Draw(t) => (letter(t), p),
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(probs, [('B', 0.2), ('E', 0.4), ('V', 0.2), ('W', 0.2)]);
}

#[test]
fn random_games_end_with_every_tile_placed_or_discarded() {
    let g = game();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut moves = Vec::new();
    let mut discards = 0;
    for _ in 0..60 {
        let mut s = g.initial_state();
        while !g.is_terminal(&s) {
            g.legal_moves(&s, &mut moves);
            assert!(!moves.is_empty());
            let mv = moves[rng.gen_range(0..moves.len())];
            g.apply(&mut s, mv);
        }
        assert_eq!(s.n_placed as usize + s.n_disc as usize, 72);
        assert_eq!(s.left, 0);
        assert!(s.bag.iter().all(|&c| c == 0));
        discards += s.n_disc as usize;
        // Followers in hand plus followers on the board make 7 each.
        for p in 0..2u8 {
            let on_board = (0..s.n_segs as usize).filter(|&i| s.on[i] == p + 1).count();
            assert_eq!(s.hand[p as usize] as usize + on_board, FOLLOWERS as usize);
        }
        assert!(s.score[0] >= 0 && s.score[1] >= 0);
        assert!((s.score[0] as f64) < g.bound && (s.score[1] as f64) < g.bound);
        // The record replays to the same final position.
        let text = g.format_position(&s);
        let back = g.parse_position(&text).unwrap();
        assert!(g.same_state(&s, &back));
        assert_eq!(back.score, s.score);
    }
    // Random play now and then draws a tile that fits nowhere, so the discard path is taken
    // (4 times in these 60 seeded games).
    assert!(discards > 0, "no discard in 60 random games");
}

#[test]
fn city_of_two_tiles_completes_for_four() {
    // E's cap turned south closes the start tile's city: 2 tiles, no shield = 4 points.
    let s = play("E 0,1r2@S");
    assert_eq!(s.score, [4, 0]);
    assert_eq!(s.hand, [7, 7]); // the follower came home
}

#[test]
fn city_with_shield_completes_with_two_per_shield() {
    // M (diagonal city with shield) at 0,1 turned so its city faces south (start tile's cap)
    // and east; P0 puts a follower on it. P1 closes the east side with E turned west.
    // City: D, M, E = 3 tiles + 1 shield = 2 * 4 = 8 points for P0.
    let s = play("M 0,1r2@E E 1,1r3");
    assert_eq!(s.score, [8, 0]);
    assert_eq!(s.hand, [7, 7]);
    // Without the shield (N is M without it): 6 points.
    let s = play("N 0,1r2@E E 1,1r3");
    assert_eq!(s.score, [6, 0]);
}

#[test]
fn contested_city_tie_scores_for_both() {
    // P0: N at 0,1 (city south + east, follower). P1, P0: straight roads east of the start.
    // P1: E at 2,1 with its cap west (follower). P0: G at 1,1 joins both caps: city of D, N, G,
    // E = 4 tiles, no shield = 8, one follower each: both score 8.
    let s = play("N 0,1r2@E U 1,0r1 U 2,0r1 E 2,1r3@W G 1,1r0");
    assert_eq!(s.score, [8, 8]);
    assert_eq!(s.hand, [7, 7]);
}

#[test]
fn contested_city_majority_scores_for_the_majority_only() {
    // As above, but P0 also has a cap at 1,2 (follower) and P1's R at 1,1 joins all three:
    // city of D, N, E, E, R = 5 tiles = 10 points; P0 has 2 followers, P1 one: only P0 scores.
    let s = play("N 0,1r2@E U 1,0r1 U 2,0r1 E 2,1r3@W B 0,2r0 U 3,0r1 E 1,2r2@S R 1,1r0");
    assert_eq!(s.score, [10, 0]);
    assert_eq!(s.hand, [7, 7]);
}

#[test]
fn road_completes_between_two_crossings() {
    // P0: W (three-way crossing) east of the start, follower on its west road. P1: X west of
    // the start closes the road: W, D, X = 3 tiles = 3 points for P0.
    let s = play("W 1,0r0@W X -1,0r0");
    assert_eq!(s.score, [3, 0]);
    assert_eq!(s.hand, [7, 7]);
    // P1 may not join P0's road with a follower of its own.
    let err = game().parse_position("W 1,0r0@W X -1,0r0@E").unwrap_err();
    assert_eq!(
        err.to_string(),
        "move 4 ('-1,0r0@E'): the road at E already holds a follower"
    );
}

#[test]
fn monastery_surrounded_scores_nine() {
    // P0: B below the start (follower on the monastery); then seven tiles around it.
    let record = "B 0,-1r0@M U 1,0r1 U -1,0r1 E 1,-1r1 E -1,-1r3 E 0,-2r2 E -1,-2r3";
    let s = play(record);
    assert_eq!(s.score, [0, 0]);
    assert_eq!(s.hand, [6, 7]);
    let s = play(&format!("{record} E 1,-2r1"));
    assert_eq!(s.score, [9, 0]);
    assert_eq!(s.hand, [7, 7]);
}

#[test]
fn farmer_scores_three_per_completed_city_at_the_end() {
    // Bag E, E. P0: E closes the start tile's city (no follower on it), farmer on E's field.
    // P1: E below the start, cap south, follower on that city. End: P0's field borders the
    // completed city (3); P1's city is incomplete (1 tile = 1).
    let g = game();
    let s = play_with_bag("EE", "E 0,1r2@N E 0,-1r2@S");
    assert!(g.is_terminal(&s));
    assert_eq!(s.score, [3, 1]);
    assert_eq!(g.terminal_score(&s), 2.0); // P0 would draw next
}

#[test]
fn hand_checked_short_game() {
    // A whole game with a bag of five tiles (E, E, B, V, W), scored by hand:
    // 1. P0 E 0,1r2, farmer on its field (the start city closes, nobody on it: no points).
    // 2. P1 W 1,0r0, follower on its west road (road W-D, open at the west end).
    // 3. P0 B 0,-1r0, follower on the monastery.
    // 4. P1 V -1,0r2 (curve north-east) extends the road west: still open to the north.
    // 5. P0 E -1,-1r3, follower on the city cap (facing west, incomplete).
    // Final scoring: P0 field borders 1 completed city = 3; monastery with 4 neighbours
    // (D, V, W, E) = 5; incomplete city 1 tile = 1: P0 = 9. P1 road V, D, W = 3: P1 = 3.
    let g = game();
    let record = "E 0,1r2@N W 1,0r0@W B 0,-1r0@M V -1,0r2 E -1,-1r3@W";
    let s = play_with_bag("EEBVW", record);
    assert!(g.is_terminal(&s));
    assert_eq!(s.score, [9, 3]);
    assert_eq!(s.hand, [4, 6]);
    let mut r = [0.0; 2];
    g.returns(&s, &mut r);
    assert_eq!(r, [9.0, 3.0]);
    // Before the final scoring nothing was scored.
    let s = play_with_bag("EEBVW", "E 0,1r2@N W 1,0r0@W B 0,-1r0@M V -1,0r2 E");
    assert_eq!(s.score, [0, 0]);
}

#[test]
fn unplaceable_tile_is_discarded_and_redrawn_by_the_same_player() {
    let g = game();
    // After E closes the start city no city edge is open: C (all city) fits nowhere.
    let s = play_with_bag("ECU", "E 0,1r2 C-");
    assert_eq!(g.turn(&s), Turn::Chance);
    assert_eq!(s.to_move, 1);
    assert_eq!(s.left, 1);
    assert_eq!(g.format_position(&s), "E 0,1r2 C-");
    // Reading `C` for the discarded tile is accepted; `E-` for a tile that fits is not.
    let t = g.parse_position("E 0,1r2 C").unwrap();
    assert!(g.same_state(&play("E 0,1r2 C-"), &t));
    let err = g.parse_position("E-").unwrap_err();
    assert_eq!(
        err.to_string(),
        "move 1 ('E-'): tile E fits on the board, so it is not discarded"
    );
    let s = play_with_bag("ECU", "E 0,1r2 C- U 1,0r1");
    assert!(g.is_terminal(&s));
    // The discard ends the game when it empties the bag.
    let s = play_with_bag("EC", "E 0,1r2 C-");
    assert!(g.is_terminal(&s));
}

#[test]
fn notation_errors_name_the_ply() {
    let g = game();
    let cases = [
        ("Z", "move 1 ('Z'): a tile is drawn here: expected a tile letter A..X, got 'Z'"),
        ("C C", "move 2 ('C'): tile C is to be placed: expected x,y r rotation [@slot], e.g. 1,0r2@N"),
        ("C 0,0r0", "move 2 ('0,0r0'): cell 0,0 is taken"),
        ("C 5,5r0", "move 2 ('5,5r0'): cell 5,5 touches no tile"),
        ("C 0,-1r0", "move 2 ('0,-1r0'): the north edge of C (city) meets a field"),
        ("U 1,0r0", "move 2 ('1,0r0'): the west edge of U (field) meets a road"),
        ("U 1,0r4", "move 2 ('1,0r4'): rotation 4 is not one of 0..3"),
        ("U 1,0r1@M", "move 2 ('1,0r1@M'): tile U has no monastery"),
        ("U 1,0r1@Q", "move 2 ('1,0r1@Q'): 'Q' is not a follower place (M or a slot: NNW N NNE ENE E ESE SSE S SSW WSW W WNW)"),
        ("C 0,1r0 C", "move 3 ('C'): no tile C is left in the bag"),
    ];
    for (text, msg) in cases {
        let err = g.parse_position(text).unwrap_err();
        assert_eq!(err.to_string(), msg, "{text}");
    }
    // Alike rotations are one move: a straight road turned twice reads as unturned.
    let a = play("U 1,0r1");
    let b = play("U 1,0r3");
    assert_eq!(g.format_position(&b), "U 1,0r1");
    assert!(g.same_state(&a, &b));
    // Lower case is accepted.
    assert!(g.same_state(&play("e 0,1R2@s"), &play("E 0,1r2@S")));
}

#[test]
fn evaluation_counts_incomplete_features_and_followers() {
    let g = game();
    let s = g.initial_state();
    // Nothing on the board: only the followers in hand, equal for both.
    assert_eq!(g.evaluate(&s), 0.0);
    // P0 has a follower on an open city of 2 tiles (D + N, one open edge): worth 2 now and
    // a guessed 2 more, minus the follower's value in hand.
    let s = play("N 0,1r2@E");
    let v = g.evaluate(&s);
    assert!((v - (2.0 + 2.0 - FOLLOWER_VALUE)).abs() < 1e-12, "{v}");
    assert_eq!(g.estimate(&s), -v); // P1 is to move
}

/// A from-scratch reference scorer: after every placement it rebuilds all features by a flood
/// fill over (tile, segment) pairs from the slot geometry alone, with no union-find and no
/// incremental counters, and scores completions, monasteries and the end as the rules say.
struct Naive {
    tiles: &'static Tiles,
    placed: Vec<(i8, i8, u8, u8)>,
    /// (tile, segment) -> player of the follower standing there.
    followers: std::collections::HashMap<(usize, u8), u8>,
    score: [i32; 2],
}

impl Naive {
    fn new() -> Self {
        Naive {
            tiles: tables(),
            placed: vec![(0, 0, START_TYPE, 0)],
            followers: Default::default(),
            score: [0, 0],
        }
    }

    fn at(&self, x: i8, y: i8) -> Option<usize> {
        self.placed.iter().position(|p| (p.0, p.1) == (x, y))
    }

    fn o(&self, i: usize) -> &Oriented {
        let p = self.placed[i];
        self.tiles.get(p.2, p.3)
    }

    /// Components of the feature graph: a list of (tile, segment) per feature.
    fn features(&self) -> Vec<Vec<(usize, u8)>> {
        use std::collections::HashSet;
        let mut seen: HashSet<(usize, u8)> = HashSet::new();
        let mut out = Vec::new();
        for i in 0..self.placed.len() {
            for s in 0..self.o(i).nseg {
                if !seen.insert((i, s)) {
                    continue;
                }
                let mut comp = vec![(i, s)];
                let mut k = 0;
                while k < comp.len() {
                    let (ti, ts) = comp[k];
                    k += 1;
                    let o = self.o(ti);
                    let (x, y) = (self.placed[ti].0, self.placed[ti].1);
                    for slot in 0..12usize {
                        if o.mask[ts as usize] >> slot & 1 == 0 {
                            continue;
                        }
                        let side = slot / 3;
                        let (dx, dy) = DIRS[side];
                        let Some(j) = self.at(x + dx, y + dy) else {
                            continue;
                        };
                        let other = 3 * ((side + 2) % 4) + 2 - slot % 3;
                        let js = self.o(j).slot_seg[other];
                        if seen.insert((j, js)) {
                            comp.push((j, js));
                        }
                    }
                }
                out.push(comp);
            }
        }
        out
    }

    fn complete(&self, comp: &[(usize, u8)]) -> bool {
        comp.iter().all(|&(ti, ts)| {
            let o = self.o(ti);
            (0..4).all(|side| {
                o.mask[ts as usize] >> (3 * side + 1) & 1 == 0 || {
                    let (dx, dy) = DIRS[side];
                    self.at(self.placed[ti].0 + dx, self.placed[ti].1 + dy)
                        .is_some()
                }
            })
        })
    }

    fn majority(&self, comp: &[(usize, u8)]) -> [bool; 2] {
        let mut c = [0; 2];
        for k in comp {
            if let Some(&p) = self.followers.get(k) {
                c[p as usize] += 1;
            }
        }
        let best = c[0].max(c[1]);
        [best > 0 && c[0] == best, best > 0 && c[1] == best]
    }

    fn tiles_shields(&self, comp: &[(usize, u8)]) -> (i32, i32) {
        let tiles: std::collections::HashSet<usize> = comp.iter().map(|k| k.0).collect();
        let shields = comp
            .iter()
            .filter(|&&(t, s)| self.o(t).shield[s as usize])
            .count();
        (tiles.len() as i32, shields as i32)
    }

    fn neighbours(&self, x: i8, y: i8) -> i32 {
        let mut n = 0;
        for dx in -1..=1 {
            for dy in -1..=1 {
                n += ((dx, dy) != (0, 0) && self.at(x + dx, y + dy).is_some()) as i32;
            }
        }
        n
    }

    fn give(&mut self, who: [bool; 2], points: i32) {
        for (score, &w) in self.score.iter_mut().zip(&who) {
            if w {
                *score += points;
            }
        }
    }

    fn place(&mut self, x: i8, y: i8, t: u8, rot: u8, seg: u8, player: u8) {
        self.placed.push((x, y, t, rot));
        let new = self.placed.len() - 1;
        if seg != NO_FOLLOWER {
            self.followers.insert((new, seg), player);
        }
        for comp in self.features() {
            let (ti, ts) = comp[0];
            let kind = self.o(ti).kind[ts as usize];
            if !matches!(kind, Kind::Road | Kind::City)
                || !comp.iter().any(|k| k.0 == new)
                || !self.complete(&comp)
            {
                continue;
            }
            let (tiles, shields) = self.tiles_shields(&comp);
            let points = if kind == Kind::City {
                2 * (tiles + shields)
            } else {
                tiles
            };
            let who = self.majority(&comp);
            self.give(who, points);
            for k in &comp {
                self.followers.remove(k);
            }
        }
        for i in 0..self.placed.len() {
            let (mx, my) = (self.placed[i].0, self.placed[i].1);
            if (mx - x).abs() > 1 || (my - y).abs() > 1 {
                continue;
            }
            if let Some(m) = self.o(i).monastery {
                if self.neighbours(mx, my) == 8 {
                    if let Some(p) = self.followers.remove(&(i, m)) {
                        self.score[p as usize] += 9;
                    }
                }
            }
        }
    }

    fn finish(&mut self) {
        let comps = self.features();
        let complete_city = |naive: &Naive, key: (usize, u8)| {
            comps
                .iter()
                .position(|c| c.contains(&key))
                .filter(|&c| naive.complete(&comps[c]))
        };
        for comp in &comps {
            let who = self.majority(comp);
            if who == [false, false] {
                continue;
            }
            let (ti, ts) = comp[0];
            let points = match self.o(ti).kind[ts as usize] {
                Kind::Road => self.tiles_shields(comp).0,
                Kind::City => {
                    let (t, s) = self.tiles_shields(comp);
                    t + s
                }
                Kind::Monastery => 1 + self.neighbours(self.placed[ti].0, self.placed[ti].1),
                Kind::Field => {
                    let mut cities = std::collections::HashSet::new();
                    for &(t, s) in comp {
                        let o = self.o(t);
                        for j in 0..o.nseg {
                            if o.field_cities[s as usize] >> j & 1 == 1 {
                                if let Some(c) = complete_city(self, (t, j)) {
                                    cities.insert(c);
                                }
                            }
                        }
                    }
                    3 * cities.len() as i32
                }
            };
            self.give(who, points);
        }
    }
}

#[test]
fn incremental_scoring_agrees_with_a_from_scratch_reference() {
    let g = game();
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut moves = Vec::new();
    for _ in 0..12 {
        let mut s = g.initial_state();
        let mut naive = Naive::new();
        while !g.is_terminal(&s) {
            g.legal_moves(&s, &mut moves);
            // Prefer placing followers, so that scoring happens often.
            let with: Vec<Move> = moves
                .iter()
                .copied()
                .filter(|m| matches!(m, Move::Place { seg, .. } if *seg != NO_FOLLOWER))
                .collect();
            let mv = if !with.is_empty() && rng.gen_bool(0.7) {
                with[rng.gen_range(0..with.len())]
            } else {
                moves[rng.gen_range(0..moves.len())]
            };
            let (p, t) = (s.to_move, s.drawn);
            g.apply(&mut s, mv);
            if let Move::Place { x, y, rot, seg } = mv {
                naive.place(x, y, t, rot, seg, p);
                if !g.is_terminal(&s) {
                    assert_eq!(
                        [s.score[0] as i32, s.score[1] as i32],
                        naive.score,
                        "{}",
                        g.format_position(&s)
                    );
                    for q in 0..2u8 {
                        let on = naive.followers.values().filter(|&&v| v == q).count();
                        assert_eq!(s.hand[q as usize] as usize, 7 - on);
                    }
                }
            }
        }
        naive.finish();
        assert_eq!(
            [s.score[0] as i32, s.score[1] as i32],
            naive.score,
            "final: {}",
            g.format_position(&s)
        );
    }
}

/// Positions from seeded random games: the state after `plies` plies of game `seed`.
fn random_position(seed: u64, plies: usize) -> State {
    let g = game();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut s = g.initial_state();
    let mut moves = Vec::new();
    for _ in 0..plies {
        if g.is_terminal(&s) {
            break;
        }
        g.legal_moves(&s, &mut moves);
        let mv = moves[rng.gen_range(0..moves.len())];
        g.apply(&mut s, mv);
    }
    s
}

/// Positions `left` tiles before the end of game `seed`, at a chance node (`drawn` false) or
/// with the tile drawn.
fn late_position(seed: u64, left: u8, drawn: bool) -> State {
    let g = game();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut s = g.initial_state();
    let mut moves = Vec::new();
    loop {
        if s.left <= left && (s.drawn != NONE) == drawn {
            return s;
        }
        assert!(!g.is_terminal(&s));
        g.legal_moves(&s, &mut moves);
        let mv = moves[rng.gen_range(0..moves.len())];
        g.apply(&mut s, mv);
    }
}

#[test]
fn star_kernels_equal_expectimax_at_depths_1_and_2() {
    use crate::search::expectimax::{expectimax, Pruning};
    use crate::search::star1::star1;
    use crate::search::star2::star2;
    use crate::search::star25::{star25, ProbingMode};
    use crate::search::Control;
    let g = game();
    let ctl = Control::unlimited();
    let mut cases: Vec<(State, u32)> = Vec::new();
    for (seed, plies) in [(21, 0), (22, 1), (23, 30), (24, 61), (25, 100), (26, 131)] {
        cases.push((random_position(seed, plies), 1));
    }
    for (seed, left, drawn) in [(31, 4, false), (32, 5, true), (33, 3, false), (34, 6, true)] {
        cases.push((late_position(seed, left, drawn), 2));
    }
    // Mid-game decision roots at depth 2 (place, draw, place): about 10^5 leaves each.
    for (seed, left) in [(35, 40), (36, 25)] {
        cases.push((late_position(seed, left, true), 2));
    }
    let mut kinds = [0; 2];
    for (s, depth) in &cases {
        kinds[(s.drawn != NONE) as usize] += 1;
        let text = g.format_position(s);
        let reference = expectimax(&g, s, Some(*depth), Pruning::None, None, &ctl).unwrap();
        let close = |name: &str, v: f64| {
            assert!(
                (v - reference.value).abs() <= 1e-9 * reference.value.abs().max(1.0),
                "{name} depth {depth}: {v} != expectimax {} at '{text}'",
                reference.value
            );
        };
        let pruned = expectimax(&g, s, Some(*depth), Pruning::ChanceBounds, None, &ctl).unwrap();
        close("expectimax with chance cut", pruned.value);
        close(
            "star1",
            star1(&g, s, Some(*depth), None, &ctl).unwrap().value,
        );
        close(
            "star2",
            star2(&g, s, Some(*depth), None, &ctl).unwrap().value,
        );
        for probing in 1..=5 {
            for mode in [ProbingMode::Sequential, ProbingMode::Cyclic] {
                let r = star25(&g, s, Some(*depth), probing, mode, None, &ctl).unwrap();
                close(&format!("star25 {probing} {mode:?}"), r.value);
            }
        }
    }
    assert!(
        kinds[0] > 0 && kinds[1] > 0,
        "both chance and decision roots"
    );
}

#[test]
fn service_jobs_run_the_chance_kernels_and_mcts() {
    use crate::plan::run_local;
    use crate::registry::{prepare, SolveError};
    use crate::search::expectimax::{expectimax, Pruning};
    use crate::search::Control;
    use crate::wire::JobSpec;
    let job = |position: &str, algorithm: &str, options: &[(&str, &str)]| {
        JobSpec::new("carcassonne", position, algorithm).with_options(options)
    };
    let solve = |j: &JobSpec| run_local(prepare(j)?.as_ref(), &Control::unlimited());
    // A position with a tile drawn: every kernel finds expectimax's value and a legal move.
    let position = "N 0,1r2@E U";
    let g = game();
    let s = play(position);
    let reference = expectimax(&g, &s, Some(1), Pruning::None, None, &Control::unlimited())
        .unwrap()
        .value;
    let mut moves = Vec::new();
    g.legal_moves(&s, &mut moves);
    let legal: Vec<String> = moves.iter().map(|&m| g.format_move(&s, m)).collect();
    for (algorithm, options) in [
        ("expectimax", vec![("depth", "1")]),
        ("star1", vec![("depth", "1")]),
        ("star2", vec![("depth", "1")]),
        (
            "star25",
            vec![("depth", "1"), ("probing", "5"), ("probing_mode", "cyclic")],
        ),
        (
            "star25",
            vec![
                ("depth", "1"),
                ("probing", "3"),
                ("probing_mode", "sequential"),
            ],
        ),
    ] {
        let r = solve(&job(position, algorithm, &options)).unwrap();
        let v = r.value.as_f64().unwrap();
        assert!(
            (v - reference).abs() < 1e-9,
            "{algorithm}: {v} != {reference}"
        );
        let best = r.best_move.unwrap();
        assert!(legal.contains(&best), "{algorithm}: {best}");
    }
    let r = solve(&job(
        position,
        "mcts",
        &[("playouts", "200"), ("seed", "1")],
    ))
    .unwrap();
    assert!(legal.contains(&r.best_move.unwrap()));
    assert_eq!(r.nodes, 200);
    // Bad input is one line naming the problem.
    let err = solve(&job("N 0,1r2@E Q 9,9r0", "star2", &[("depth", "1")])).unwrap_err();
    assert_eq!(
        err,
        SolveError::BadInput("position: move 4 ('9,9r0'): cell 9,9 touches no tile".into())
    );
    let err = solve(&job(
        "",
        "star25",
        &[("depth", "1"), ("probing_mode", "zigzag")],
    ))
    .unwrap_err();
    assert!(matches!(err, SolveError::BadInput(m) if m.contains("probing_mode")));
}

#[test]
fn state_is_a_small_fixed_size_value() {
    // Copy-make kernels copy the state per node: keep it one flat block (no heap).
    assert!(
        std::mem::size_of::<State>() <= 3584,
        "{}",
        std::mem::size_of::<State>()
    );
}
