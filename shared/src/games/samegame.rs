//! SameGame: remove groups of at least two orthogonally connected cells of one colour; cells
//! above fall down, empty columns close up to the left. Removing a group of `n` scores
//! `(n - 2)^2`; clearing the board adds [`CLEAR_BONUS`]; no penalty for cells left over (the
//! scoring of the standard 20-board test set's reference code, data SOURCE.txt). The game ends
//! when no group of two is left.
//!
//! Board: up to 15 x 15 cells, colours 0..4; cell `c * 15 + r` (column from the left, row from
//! the bottom). A move is the group's first cell in that order. Codes: a 64-bit Zobrist hash of the
//! group's colour and cells (the same group anywhere in a game has the same code), as in Cazenave's
//! NRPA for SameGame, so policies use a hash map.
//!
//! Game parameter `tabu` (off by default; Cazenave's tabu colour for NMCS and NRPA): the colour
//! with the most cells on the start board may only be removed when no other colour's group is left.
//! Cazenave's weight penalty of -1000 gives those moves probability `exp(-1000)`, 0 in double
//! precision, the same as removing them from the legal moves, which this option does.
//!
//! Notation (docs/API.md, section 4): a move is any cell of the group (`a1` bottom-left), written
//! as its first cell; a position is an optional board (`score N`, then rows top first, a digit per
//! cell) followed by moves. Positions reached from the start board are written as their move list,
//! others as board and score.

use crate::games::entry::{Family, GameEntry, Visitor};
use crate::model::settings::{DefaultValue, Opts, SolveError, Spec};
use crate::model::single::SinglePlayer;
use crate::model::Picture;
use crate::model::{Game, MoveCodes, NotationError, Turn};

/// Side of the largest board.
pub const MAX_SIDE: usize = 15;
const CELLS: usize = MAX_SIDE * MAX_SIDE;
const EMPTY: u8 = 255;
/// Bonus for clearing the board (reference code of the standard test set).
pub const CLEAR_BONUS: i64 = 1000;
/// Most moves a game can have (each removes at least two cells).
const MAX_MOVES: usize = CELLS / 2 + 1;

/// SameGame on a given start board.
#[derive(Clone, Debug)]
pub struct SameGame {
    width: usize,
    height: usize,
    start: SameState,
    /// The tabu colour (module doc), when that option is on.
    tabu: Option<u8>,
}

/// A board, its score and, when reached from the start board, the moves that led here.
#[derive(Clone, Debug)]
pub struct SameState {
    cells: [u8; CELLS],
    score: i64,
    from_start: bool,
    plies: u16,
    history: [u8; MAX_MOVES],
}

#[inline]
fn key(cell: usize, colour: u8) -> u64 {
    // SplitMix64 of (cell, colour): a Zobrist key without a table.
    let mut z = ((cell as u64) << 3 | colour as u64)
        .wrapping_add(1)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl SameGame {
    /// A game on `width x height` cells starting from `rows` (top row first, colours 0..4).
    pub fn new(rows: &[Vec<u8>]) -> Result<Self, String> {
        let height = rows.len();
        let width = rows.first().map_or(0, |r| r.len());
        if height == 0 || width == 0 || height > MAX_SIDE || width > MAX_SIDE {
            return Err(format!(
                "samegame board must be 1..{MAX_SIDE} x 1..{MAX_SIDE} cells"
            ));
        }
        let mut g = SameGame {
            width,
            height,
            start: Self::empty_state(),
            tabu: None,
        };
        let mut s = Self::empty_state();
        for (i, row) in rows.iter().enumerate() {
            if row.len() != width {
                return Err(format!(
                    "samegame row {} has {} cells, not {width}",
                    i + 1,
                    row.len()
                ));
            }
            for (c, &v) in row.iter().enumerate() {
                if v != EMPTY && v > 4 {
                    return Err(format!("samegame colour {v} is not 0..4"));
                }
                s.cells[c * MAX_SIDE + (height - 1 - i)] = v;
            }
        }
        g.settle(&mut s);
        s.from_start = true;
        g.start = s;
        Ok(g)
    }

    /// Standard board `n` (1..20) of the test set in the data folder.
    pub fn standard(n: usize) -> Result<Self, String> {
        if !(1..=20).contains(&n) {
            return Err(format!("samegame board={n} must be 1..20"));
        }
        let text = super::data::read("nrpa/samegame/problems.txt")?;
        let rows: Vec<Vec<u8>> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .skip((n - 1) * 15)
            .take(15)
            .map(|l| {
                l.split_whitespace()
                    .map(|t| t.parse::<u8>().unwrap_or(EMPTY - 1))
                    .collect()
            })
            .collect();
        if rows.len() != 15 {
            return Err(format!("samegame problems.txt has no board {n}"));
        }
        Self::new(&rows)
    }

    /// With or without the tabu colour (module doc): the colour with the most cells on the
    /// start board (the lowest of equals).
    pub fn with_tabu(mut self, on: bool) -> Self {
        self.tabu = None;
        if on {
            let mut count = [0usize; 5];
            for &v in self.start.cells.iter().filter(|&&v| v != EMPTY) {
                count[v as usize] += 1;
            }
            let best = (0..5).max_by_key(|&c| (count[c], std::cmp::Reverse(c)));
            self.tabu = best.filter(|&c| count[c] > 0).map(|c| c as u8);
        }
        self
    }

    /// The tabu colour, if the option is on.
    pub fn tabu(&self) -> Option<u8> {
        self.tabu
    }

    /// Drops the moves of the tabu colour from `moves` unless they are all there is.
    fn drop_tabu(&self, s: &SameState, moves: &mut Vec<u8>) {
        if let Some(t) = self.tabu {
            if moves.iter().any(|&m| s.cells[m as usize] != t) {
                moves.retain(|&m| s.cells[m as usize] != t);
            }
        }
    }

    fn empty_state() -> SameState {
        SameState {
            cells: [EMPTY; CELLS],
            score: 0,
            from_start: false,
            plies: 0,
            history: [0; MAX_MOVES],
        }
    }

    /// Gravity and column closing.
    fn settle(&self, s: &mut SameState) {
        let mut to = 0;
        for c in 0..self.width {
            let col = c * MAX_SIDE;
            let mut k = 0;
            let mut buf = [EMPTY; MAX_SIDE];
            for r in 0..self.height {
                let v = s.cells[col + r];
                if v != EMPTY {
                    buf[k] = v;
                    k += 1;
                }
            }
            if k > 0 {
                s.cells[to * MAX_SIDE..to * MAX_SIDE + MAX_SIDE].copy_from_slice(&buf);
                to += 1;
            }
        }
        for c in to..self.width {
            s.cells[c * MAX_SIDE..c * MAX_SIDE + MAX_SIDE].fill(EMPTY);
        }
    }

    /// The group of `cell` into `out` (cells), returning its size.
    fn group(&self, s: &SameState, cell: usize, out: &mut [u8; CELLS]) -> usize {
        let mut seen = [false; CELLS];
        self.flood(s, cell, &mut seen, out)
    }

    /// Flood fill from `cell` over unseen cells of its colour, marking them in `seen`.
    fn flood(
        &self,
        s: &SameState,
        cell: usize,
        seen: &mut [bool; CELLS],
        out: &mut [u8; CELLS],
    ) -> usize {
        let colour = s.cells[cell];
        if colour == EMPTY {
            return 0;
        }
        let mut n = 0;
        out[0] = cell as u8;
        seen[cell] = true;
        let mut i = 0;
        n += 1;
        while i < n {
            let p = out[i] as usize;
            i += 1;
            let (c, r) = (p / MAX_SIDE, p % MAX_SIDE);
            let mut visit = |q: usize| {
                if !seen[q] && s.cells[q] == colour {
                    seen[q] = true;
                    out[n] = q as u8;
                    n += 1;
                }
            };
            if c > 0 {
                visit(p - MAX_SIDE);
            }
            if c + 1 < self.width {
                visit(p + MAX_SIDE);
            }
            if r > 0 {
                visit(p - 1);
            }
            if r + 1 < self.height {
                visit(p + 1);
            }
        }
        n
    }

    /// For every cell, the first cell of its group (or EMPTY), and for each first cell its size.
    fn groups(&self, s: &SameState, first: &mut [u8; CELLS], size: &mut [u8; CELLS]) {
        first.fill(EMPTY);
        let mut seen = [false; CELLS];
        let mut buf = [0u8; CELLS];
        for c in 0..self.width {
            for r in 0..self.height {
                let p = c * MAX_SIDE + r;
                if s.cells[p] == EMPTY || seen[p] {
                    continue;
                }
                let n = self.flood(s, p, &mut seen, &mut buf);
                for &q in &buf[..n] {
                    first[q as usize] = p as u8;
                }
                size[p] = n as u8;
            }
        }
    }

    fn cell_name(&self, p: usize) -> String {
        format!(
            "{}{}",
            char::from(b'a' + (p / MAX_SIDE) as u8),
            p % MAX_SIDE + 1
        )
    }

    fn format_board(&self, s: &SameState) -> String {
        let mut out = format!("score {}", s.score);
        for i in 0..self.height {
            out.push('\n');
            for c in 0..self.width {
                let v = s.cells[c * MAX_SIDE + self.height - 1 - i];
                out.push(if v == EMPTY {
                    '.'
                } else {
                    char::from(b'0' + v)
                });
            }
        }
        out
    }
}

impl Game for SameGame {
    type State = SameState;
    type Move = u8;

    fn name(&self) -> &'static str {
        "samegame"
    }
    fn num_players(&self) -> usize {
        1
    }
    fn initial_state(&self) -> SameState {
        self.start.clone()
    }
    fn turn(&self, s: &SameState) -> Turn {
        for c in 0..self.width {
            for r in 0..self.height {
                let p = c * MAX_SIDE + r;
                let v = s.cells[p];
                if v != EMPTY
                    && ((r + 1 < self.height && s.cells[p + 1] == v)
                        || (c + 1 < self.width && s.cells[p + MAX_SIDE] == v))
                {
                    return Turn::Player(0);
                }
            }
        }
        Turn::Terminal
    }
    fn legal_moves(&self, s: &SameState, moves: &mut Vec<u8>) {
        moves.clear();
        let mut first = [EMPTY; CELLS];
        let mut size = [0u8; CELLS];
        self.groups(s, &mut first, &mut size);
        for c in 0..self.width {
            for r in 0..self.height {
                let p = c * MAX_SIDE + r;
                if first[p] == p as u8 && size[p] >= 2 {
                    moves.push(p as u8);
                }
            }
        }
        self.drop_tabu(s, moves);
    }
    fn apply(&self, s: &mut SameState, mv: u8) {
        let mut buf = [0u8; CELLS];
        let n = self.group(s, mv as usize, &mut buf);
        for &q in &buf[..n] {
            s.cells[q as usize] = EMPTY;
        }
        s.score += (n as i64 - 2) * (n as i64 - 2);
        self.settle(s);
        if s.cells[0] == EMPTY {
            s.score += CLEAR_BONUS;
        }
        if (s.plies as usize) < MAX_MOVES {
            s.history[s.plies as usize] = mv;
        }
        s.plies += 1;
    }
    fn returns(&self, s: &SameState, out: &mut [f64]) {
        out[0] = s.score as f64;
    }

    fn parse_position(&self, text: &str) -> Result<SameState, NotationError> {
        let mut lines = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .peekable();
        let mut s = self.start.clone();
        let is_row = |l: &str| l.chars().all(|c| c.is_ascii_digit() || c == '.');
        if lines
            .peek()
            .is_some_and(|l| l.starts_with("score") || is_row(l))
        {
            let mut score = 0;
            if let Some(l) = lines.peek().filter(|l| l.starts_with("score")) {
                score = l["score".len()..]
                    .trim()
                    .parse()
                    .map_err(|_| NotationError::new("expected 'score N'").with_fragment(*l))?;
                lines.next();
            }
            let mut rows = Vec::new();
            while let Some(l) = lines.next_if(|l| is_row(l)) {
                rows.push(
                    l.chars()
                        .map(|c| if c == '.' { EMPTY } else { c as u8 - b'0' })
                        .collect::<Vec<u8>>(),
                );
            }
            if rows.len() != self.height || rows.iter().any(|r| r.len() != self.width) {
                return Err(NotationError::new(format!(
                    "the board must have {} rows of {} cells",
                    self.height, self.width
                )));
            }
            s = Self::empty_state();
            for (i, row) in rows.iter().enumerate() {
                for (c, &v) in row.iter().enumerate() {
                    if v != EMPTY && v > 4 {
                        return Err(NotationError::new(format!("colour {v} is not 0..4")));
                    }
                    s.cells[c * MAX_SIDE + self.height - 1 - i] = v;
                }
            }
            let before = s.cells;
            self.settle(&mut s);
            if before != s.cells {
                return Err(NotationError::new(
                    "the board has holes: cells must rest on cells, columns from the left",
                ));
            }
            s.score = score;
        }
        let rest: Vec<&str> = lines.collect();
        let tokens = rest
            .iter()
            .flat_map(|l| l.split(|c: char| c.is_whitespace() || c == ','))
            .filter(|t| !t.is_empty());
        for (i, t) in tokens.enumerate() {
            let mv = self.parse_move(&s, t).map_err(|e| e.at_move(i + 1))?;
            self.apply(&mut s, mv);
        }
        Ok(s)
    }
    fn format_position(&self, s: &SameState) -> String {
        if s.from_start && (s.plies as usize) < MAX_MOVES {
            let mut t = self.start.clone();
            let mut out = Vec::new();
            for &mv in &s.history[..s.plies as usize] {
                out.push(self.format_move(&t, mv));
                self.apply(&mut t, mv);
            }
            out.join(" ")
        } else {
            self.format_board(s)
        }
    }
    fn parse_move(&self, s: &SameState, text: &str) -> Result<u8, NotationError> {
        let t = text.trim();
        let bad = |m: String| NotationError::new(m).with_fragment(t);
        let mut chars = t.chars();
        let col = chars
            .next()
            .filter(|c| c.is_ascii_lowercase())
            .map(|c| (c as u8 - b'a') as usize);
        let row: Option<usize> = chars.as_str().parse().ok();
        let (Some(c), Some(r)) = (col, row) else {
            return Err(bad(
                "a move is a cell like 'a1' (column letter, row from the bottom)".into(),
            ));
        };
        if c >= self.width || r == 0 || r > self.height {
            return Err(bad(format!(
                "cell {t} is outside the {} x {} board",
                self.width, self.height
            )));
        }
        let p = c * MAX_SIDE + r - 1;
        if s.cells[p] == EMPTY {
            return Err(bad(format!("cell {t} is empty")));
        }
        let mut buf = [0u8; CELLS];
        let n = self.group(s, p, &mut buf);
        if n < 2 {
            return Err(bad(format!("cell {t} is a single cell, not a group")));
        }
        let mv = *buf[..n].iter().min().unwrap();
        if self.tabu == Some(s.cells[p]) {
            let mut legal = Vec::new();
            self.legal_moves(s, &mut legal);
            if !legal.contains(&mv) {
                return Err(bad(format!(
                    "colour {} is tabu while groups of other colours are left",
                    s.cells[p]
                )));
            }
        }
        Ok(mv)
    }
    fn format_move(&self, _s: &SameState, mv: u8) -> String {
        self.cell_name(mv as usize)
    }
    fn same_state(&self, a: &SameState, b: &SameState) -> bool {
        a.cells == b.cells && a.score == b.score
    }
}

impl MoveCodes for SameGame {
    fn code(&self, s: &SameState, mv: u8) -> u64 {
        let mut buf = [0u8; CELLS];
        let n = self.group(s, mv as usize, &mut buf);
        let colour = s.cells[mv as usize];
        buf[..n]
            .iter()
            .fold(0u64, |h, &q| h ^ key(q as usize, colour))
    }
}

impl SinglePlayer for SameGame {
    fn sequence_text(&self, root: &SameState, moves: &[u8]) -> String {
        let mut s = root.clone();
        let mut texts = Vec::new();
        for &m in moves {
            texts.push(self.format_move(&s, m));
            self.apply(&mut s, m);
        }
        if root.from_start {
            self.format_position(&s)
        } else {
            format!("{}\n{}", self.format_board(root), texts.join(" "))
        }
    }
}

impl Picture for SameGame {}

/// `board`: which standard board.
pub const PARAM_BOARD: Spec = Spec::uint(
    "board",
    1,
    20,
    DefaultValue::UInt(1),
    "one of the 20 standard boards",
    "the standard set has 20",
);
/// `tabu`: the tabu colour rule.
pub const PARAM_TABU: Spec = Spec::flag("tabu", false, "tabu color rule");

/// The catalogue entry of SameGame.
pub struct SameGameEntry;

impl GameEntry for SameGameEntry {
    const NAME: &'static str = "samegame";
    const PARAMS: &'static [Spec] = &[PARAM_BOARD, PARAM_TABU];
    const FAMILY: Family = Family::Single;
    type Game = SameGame;
    fn build(params: &Opts) -> Result<SameGame, SolveError> {
        let board = params.uint_value(&PARAM_BOARD)?;
        let tabu = params.flag(&PARAM_TABU)?;
        params.finish()?;
        Ok(SameGame::standard(board)
            .map_err(SolveError::bad)?
            .with_tabu(tabu))
    }
    fn offer<V: Visitor>(game: SameGame, visitor: V) -> V::Output {
        visitor.single(game)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{battery, single};
    use crate::search::nmcs::nmcs;
    use crate::search::nrpa::{nrpa, NrpaOptions};
    use crate::search::Control;

    fn exhaustive(g: &SameGame, s: &SameState) -> f64 {
        let mut moves = Vec::new();
        g.legal_moves(s, &mut moves);
        let mut best = g.score(s);
        if !moves.is_empty() {
            best = f64::NEG_INFINITY;
        }
        for &m in &moves {
            let mut c = s.clone();
            g.apply(&mut c, m);
            best = best.max(exhaustive(g, &c));
        }
        best
    }

    fn random_board(w: usize, h: usize, colours: u8, seed: u64) -> SameGame {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let rows: Vec<Vec<u8>> = (0..h)
            .map(|_| (0..w).map(|_| rng.gen_range(0..colours)).collect())
            .collect();
        SameGame::new(&rows).unwrap()
    }

    #[test]
    fn standard_boards_load_and_pass_the_batteries() {
        for n in 1..=20 {
            let g = SameGame::standard(n).unwrap();
            assert_eq!(
                g.start.cells.iter().filter(|&&v| v != EMPTY).count(),
                225,
                "board {n}"
            );
        }
        let g = SameGame::standard(1).unwrap();
        // Board 1's top-left cell is 3 (the first number of problems.txt), bottom-left is 1.
        assert_eq!(
            g.format_board(&g.start)
                .lines()
                .nth(1)
                .unwrap()
                .chars()
                .next(),
            Some('3')
        );
        assert_eq!(g.start.cells[0], 1);
        battery::check_game(&g, &g.initial_state(), 5, 1);
        single::check_single_player(&g, &g.initial_state(), 5, 2);
        let small = random_board(5, 4, 3, 9);
        battery::check_game(&small, &small.initial_state(), 50, 3);
        single::check_single_player(&small, &small.initial_state(), 50, 4);
        assert!(SameGame::standard(21).is_err());
    }

    #[test]
    fn scoring_gravity_and_notation() {
        // 0 0 1      after a1 (the two 0s): . . 1 -> columns close up: 1 on the left.
        // 1 1 1                              1 1 1
        let g = SameGame::new(&[vec![0, 0, 1], vec![1, 1, 1]]).unwrap();
        let s = g.parse_position("a2").unwrap();
        assert_eq!(g.score(&s), 0.0);
        assert_eq!(g.format_board(&s), "score 0\n..1\n111");
        // Removing the four 1s clears the board: (4 - 2)^2 + 1000.
        let s = g.parse_position("a2 c1").unwrap();
        assert_eq!(g.score(&s), 1004.0);
        assert!(g.is_terminal(&s));
        assert_eq!(g.format_position(&s), "a2 a1");
        let b = g.parse_position("score 7\n..1\n.11").unwrap_err();
        assert!(b.to_string().contains("holes"), "{b}");
        let s = g.parse_position("score 7\n..1\n111\na1").unwrap();
        assert_eq!(g.score(&s), 1011.0);
        let e = g.parse_position("a2 a2").unwrap_err();
        assert!(
            e.to_string().starts_with("move 2 ('a2'): cell a2 is empty"),
            "{e}"
        );
        let g = SameGame::new(&[vec![0, 1], vec![1, 0]]).unwrap();
        assert!(g
            .parse_position("a1")
            .unwrap_err()
            .to_string()
            .contains("single cell"));
        assert!(g.is_terminal(&g.initial_state()));
    }

    /// The tabu colour (most cells) is offered only when no other group is left; notation
    /// refuses it before; the batteries hold; and with only tabu groups left they are legal.
    #[test]
    fn tabu_colour_waits_for_the_end() {
        // 1 1 0      colour 1 has 4 cells (tabu); the 0s form one group of 2.
        // 1 1 0
        let g = SameGame::new(&[vec![1, 1, 0], vec![1, 1, 0]])
            .unwrap()
            .with_tabu(true);
        assert_eq!(g.tabu(), Some(1));
        let mut legal = Vec::new();
        let root = g.initial_state();
        g.legal_moves(&root, &mut legal);
        assert_eq!(
            legal
                .iter()
                .map(|&m| g.format_move(&root, m))
                .collect::<Vec<_>>(),
            ["c1"]
        );
        let e = g.parse_position("a1").unwrap_err();
        assert!(e.to_string().contains("colour 1 is tabu"), "{e}");
        let s = g.parse_position("c1 a1").unwrap();
        assert_eq!(g.score(&s), 4.0 + 1000.0);
        assert_eq!(exhaustive(&g, &root), 1004.0);
        let big = SameGame::standard(3).unwrap().with_tabu(true);
        battery::check_game(&big, &big.initial_state(), 5, 7);
        single::check_single_player(&big, &big.initial_state(), 5, 8);
        let off = SameGame::standard(3).unwrap().with_tabu(false);
        assert_eq!(off.tabu(), None);
    }

    #[test]
    fn kernels_find_the_exhaustive_optimum_on_small_boards() {
        for seed in 0..4 {
            let g = random_board(4, 4, 3, seed);
            let root = g.initial_state();
            let best = exhaustive(&g, &root);
            let o = nrpa(
                &g,
                &root,
                &NrpaOptions {
                    level: 2,
                    iterations: 40,
                    seed,
                    ..Default::default()
                },
                None,
                &Control::unlimited(),
            )
            .unwrap();
            assert_eq!(o.score, best, "nrpa, board seed {seed}");
            let o = nmcs(&g, &root, 3, seed, &Control::unlimited());
            assert_eq!(o.score, best, "nmcs, board seed {seed}");
        }
    }
}
