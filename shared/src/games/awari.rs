//! Awari (oware abapa) with the rules Romein and Bal solved it under, on the standard board of six
//! pits a side, and the same rules on smaller boards (`pits` per side, 1 to 6) for tests and for
//! checking retrograde analysis on a second, smaller game. The rules, their sources and why ending
//! the game at a repetition gives the databases' values: docs/awari.md, "Rules".
//!
//! Value (Romein and Bal's databases): the stones the side to move captures from the position on
//! minus those the opponent captures; stones captured before do not count. Bounds: `±n` for `n`
//! stones on the board. A position can only repeat while no stone is captured, so a state keeps
//! the positions since the last capture (a shared list: copies cost nothing) and the score made
//! since the root; the hash and equality of states take that history into account. With an empty
//! history (the root, right after a capture) the value is the database value of its board.
//!
//! Notation: the pit counts separated by commas, first the side to move's pits in sowing order,
//! then the opponent's (empty text: the start). Moves are the pits `a`, `b`, ... of the side to
//! move, in sowing order. A state with moves played since its text position writes that
//! position, `;` and the moves (`4,4,4,4,4,4,4,4,4,4,4,4;cf`), so that the score and the
//! repetition history read back.

use super::fmix64;
use crate::games::data;
use crate::games::entry::{Family, GameEntry, TablesFn, Visitor};
use crate::games::Exact;
use crate::model::settings::{DefaultValue, Opts, SolveError, Spec};
use crate::model::{
    Game, Hashed, NotationError, Retrograde, Successor, TableProbe, Tactics, Turn, ZeroSum,
};
use crate::search::retrograde::artifacts::{self, SetManifest, SourceMode};
use crate::search::retrograde::{store, Tables};
use std::sync::Arc;

/// Pits per side on the standard board.
pub const PITS: usize = 6;
/// Stones per pit at the start.
pub const START_STONES: u8 = 4;

/// Awari on a board of `pits` pits per side.
#[derive(Clone, Debug)]
pub struct Awari {
    pits: usize,
    /// `binom[n][k]` = C(n, k) for the position ranking.
    binom: Vec<[u64; 2 * PITS]>,
    /// Endgame databases read at covered positions (option `tables=NAME`): a state the
    /// databases answer for is terminal with their exact value.
    tables: Option<Arc<Tables>>,
}

/// The most database sets a process keeps loaded (each of 0..20 stones holds 226 MB).
pub const MAX_LOADED_SETS: usize = 2;

/// The endgame database sets loaded by this process, by file tag and name (as the job gives
/// it), least recently used first: read once.
static LOADED: std::sync::Mutex<Vec<(String, String, Arc<Tables>)>> =
    std::sync::Mutex::new(Vec::new());

/// One move of a state's history, newest first.
#[derive(Debug)]
struct Link {
    /// The position before the move (board and side, see [`AwariState::key`]).
    before: u128,
    /// The move played.
    mv: u8,
    prev: Option<Arc<Link>>,
}

/// A position: the board from the side to move's point of view, who moves, the score since the
/// root and the moves played since the root.
#[derive(Clone, Debug)]
pub struct AwariState {
    /// Pits `0..pits` are the side to move's, `pits..2 * pits` the opponent's, in sowing order.
    board: [u8; 2 * PITS],
    /// The player to move (0 at the root).
    side: u8,
    /// Stones the side to move captured since the root minus the opponent's.
    score: i32,
    /// The last move repeated a position: the game is over.
    repeated: bool,
    /// The board at the root (the text position).
    root: [u8; 2 * PITS],
    /// Moves since the root, newest first.
    history: Option<Arc<Link>>,
    /// XOR of the mixed keys of the positions since the last capture.
    history_hash: u64,
    /// Moves since the last capture.
    since_capture: u32,
}

#[inline]
fn mix128(k: u128) -> u64 {
    fmix64(fmix64(k as u64) ^ (k >> 64) as u64 ^ 0x9E37_79B9_7F4A_7C15)
}

impl Default for Awari {
    fn default() -> Self {
        Awari::new(PITS).expect("the standard board")
    }
}

impl Awari {
    /// Awari with `pits` pits per side (6 is the real game).
    pub fn new(pits: usize) -> Result<Self, String> {
        if !(1..=PITS).contains(&pits) {
            return Err(format!(
                "awari pits={pits} is not supported (1 to {PITS} per side)"
            ));
        }
        let rows = 2 * PITS * START_STONES as usize + 2 * PITS + 1;
        let mut binom = vec![[0u64; 2 * PITS]; rows];
        for (n, row) in binom.iter_mut().enumerate() {
            row[0] = 1;
            for k in 1..2 * PITS {
                // C(n, k) = C(n, k - 1) * (n - k + 1) / k, exact at every step.
                row[k] = if k > n {
                    0
                } else {
                    row[k - 1] * (n - k + 1) as u64 / k as u64
                };
            }
        }
        Ok(Awari {
            pits,
            binom,
            tables: None,
        })
    }

    /// The file tag of this board's databases: `awari` on six pits, `awariP` on `P`.
    pub fn table_tag(&self) -> String {
        if self.pits == PITS {
            "awari".to_string()
        } else {
            format!("awari{}", self.pits)
        }
    }

    /// The database set `name` of this board, read once per process and shared: `NAME`, the
    /// data folder's `tables/NAME` (every file checked; where the artifact source is
    /// check-only, the coordinator, the files are checked and not held), or `NAME@HASH`, a build held by the
    /// coordinator, pinned by the hash of its manifest ([`SetManifest`]) and fetched through the
    /// process's artifact source (a worker reads every database, the coordinator only checks
    /// them and gets empty tables: it never searches). At most [`MAX_LOADED_SETS`] sets stay
    /// loaded; the least recently used goes first. Errors start with `tables`; in a worker, a
    /// pinned set that cannot be read is an internal failure (the coordinator checked it).
    pub fn load_tables(&self, name: &str) -> Result<Arc<Tables>, SolveError> {
        let (plain, pin) = match name.split_once('@') {
            Some((n, h)) => (n, Some(h)),
            None => (name, None),
        };
        let plain = data::plain_name(plain).map_err(|e| SolveError::bad(format!("tables: {e}")))?;
        let tag = self.table_tag();
        let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = loaded.iter().position(|(g, n, _)| *g == tag && n == name) {
            let hit = loaded.remove(i);
            let t = hit.2.clone();
            loaded.push(hit);
            return Ok(t);
        }
        let t = match pin {
            None => {
                let dir = data::user_dir().join("tables").join(plain);
                let bad = |e: store::StoreError| SolveError::bad(format!("tables: {e}"));
                let missing = || {
                    SolveError::bad(format!("tables: no databases '{plain}' in the data folder"))
                };
                if matches!(artifacts::source(), Some((_, SourceMode::Check))) {
                    // The coordinator checks the files, it never searches: no entries held.
                    if store::check_tables(self, &tag, &dir, self.max_stones()).map_err(bad)? == 0 {
                        return Err(missing());
                    }
                    Tables::new()
                } else {
                    let t = store::load_tables(self, &tag, &dir, self.max_stones()).map_err(bad)?;
                    if t.is_empty() {
                        return Err(missing());
                    }
                    t
                }
            }
            Some(hash) => {
                let Some((source, mode)) = artifacts::source() else {
                    return Err(SolveError::bad(format!(
                        "tables: '{plain}@...' names a set held by a coordinator; outside the service name a set in the data folder"
                    )));
                };
                let fail = |e: String| match mode {
                    SourceMode::Check => SolveError::bad(format!("tables: {e}")),
                    SourceMode::Read => SolveError::Internal(format!("tables: {e}")),
                };
                let set = SetManifest::fetch(source.as_ref(), plain, hash).map_err(fail)?;
                store::load_pinned(self, &tag, &set, source.as_ref(), mode, self.max_stones())
                    .map_err(|e| fail(format!("{plain}: {e}")))?
            }
        };
        let t = Arc::new(t);
        if loaded.len() >= MAX_LOADED_SETS {
            loaded.remove(0);
        }
        loaded.push((tag, name.to_string(), t.clone()));
        Ok(t)
    }

    /// This game reading `tables` at covered positions.
    pub fn with_table_set(&self, tables: Arc<Tables>) -> Awari {
        Awari {
            tables: Some(tables),
            ..self.clone()
        }
    }

    /// The exact value of `s` from the databases, when they cover it: with no move since the
    /// last capture the repetition rule has nothing to remember, and the value is the score so
    /// far plus the database value of the board.
    #[inline]
    fn table_value(&self, s: &AwariState) -> Option<i32> {
        let t = self.tables.as_ref()?;
        if s.since_capture != 0 || s.repeated {
            return None;
        }
        let stones = self.stones(&s.board);
        if stones >= t.len() {
            return None;
        }
        t.value(stones, self.rank_board(&s.board))
            .map(|v| s.score + v)
    }

    /// Pits per side.
    pub fn pits(&self) -> usize {
        self.pits
    }

    fn cells(&self) -> usize {
        2 * self.pits
    }

    /// Most stones a board can hold: those of the start.
    pub fn max_stones(&self) -> usize {
        self.cells() * START_STONES as usize
    }

    /// The state of a board (side to move first) with nothing played yet.
    pub fn state_of(&self, board: [u8; 2 * PITS]) -> AwariState {
        AwariState {
            board,
            side: 0,
            score: 0,
            repeated: false,
            root: board,
            history: None,
            history_hash: 0,
            since_capture: 0,
        }
    }

    /// The board of a state, side to move first (pits past `2 * pits` are 0).
    pub fn board(&self, s: &AwariState) -> [u8; 2 * PITS] {
        s.board
    }

    /// Stones on the board.
    pub fn stones(&self, board: &[u8; 2 * PITS]) -> usize {
        board[..self.cells()].iter().map(|&c| c as usize).sum()
    }

    fn key(&self, board: &[u8; 2 * PITS], side: u8) -> u128 {
        let mut k = side as u128;
        for &c in &board[..self.cells()] {
            k = (k << 8) | c as u128;
        }
        k
    }

    /// Plays pit `pit` of the side to move: the new board from the opponent's point of view
    /// and the stones captured. The grand-slam rule is not applied here: it decides which moves
    /// are legal ([`Awari::legal_pits`]), not what a move does.
    #[inline]
    pub fn sow(&self, board: &[u8; 2 * PITS], pit: usize) -> ([u8; 2 * PITS], u8) {
        let (p, cells) = (self.pits, self.cells());
        let mut b = *board;
        let mut left = b[pit];
        b[pit] = 0;
        let mut at = pit;
        while left > 0 {
            at = if at + 1 == cells { 0 } else { at + 1 };
            if at != pit {
                b[at] += 1;
                left -= 1;
            }
        }
        let mut captured = 0u8;
        let mut j = at;
        while j >= p && (b[j] == 2 || b[j] == 3) {
            captured += b[j];
            b[j] = 0;
            j -= 1;
        }
        let mut next = [0u8; 2 * PITS];
        next[..p].copy_from_slice(&b[p..cells]);
        next[p..cells].copy_from_slice(&b[..p]);
        (next, captured)
    }

    /// The legal pits of `board` (rules only: no repetition), as a bit set. A move must leave
    /// the opponent stones: with his row empty it must reach him (feeding), and a grand slam
    /// (a capture of every stone he has) is allowed only when every move is one. When the
    /// opponent is empty and no move reaches him, there is none: the game is over.
    #[inline]
    fn legal_pits(&self, board: &[u8; 2 * PITS]) -> u32 {
        let p = self.pits;
        let theirs = &board[p..self.cells()];
        let starved = theirs.iter().all(|&c| c == 0);
        let mut all = 0u32;
        for (i, &c) in board[..p].iter().enumerate() {
            if c > 0 {
                all |= 1 << i;
            }
        }
        // Sowing only adds stones: a pit of 4 or more can never be captured, so no grand slam.
        if !starved && theirs.iter().any(|&c| c >= 4) {
            return all;
        }
        let mut set = 0u32;
        let mut rest = all;
        while rest != 0 {
            let i = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let (next, _) = self.sow(board, i);
            if next[..p].iter().any(|&c| c > 0) {
                set |= 1 << i;
            }
        }
        // Every move is a grand slam: all are legal. (A starved opponent whom no move feeds
        // for good ends the game: the mover keeps what is left, the value of any such move.)
        if set == 0 && !starved {
            all
        } else {
            set
        }
    }

    /// Value of a board without legal moves: each side keeps the stones on its own row.
    fn own_rows_value(&self, board: &[u8; 2 * PITS]) -> i32 {
        let p = self.pits;
        let mine: i32 = board[..p].iter().map(|&c| c as i32).sum();
        let theirs: i32 = board[p..self.cells()].iter().map(|&c| c as i32).sum();
        mine - theirs
    }

    fn parse_board(&self, text: &str) -> Result<[u8; 2 * PITS], NotationError> {
        let t = text.trim();
        let mut board = [0u8; 2 * PITS];
        if t.is_empty() {
            board[..self.cells()].fill(START_STONES);
            return Ok(board);
        }
        let parts: Vec<&str> = t.split(',').collect();
        if parts.len() != self.cells() {
            return Err(NotationError::new(format!(
                "an awari position has {} pit counts, this has {}",
                self.cells(),
                parts.len()
            ))
            .with_fragment(t));
        }
        let mut total = 0usize;
        for (i, part) in parts.iter().enumerate() {
            let c: u8 = part.trim().parse().map_err(|_| {
                NotationError::new(format!("pit {} is not a stone count", i + 1))
                    .with_fragment(part.trim())
            })?;
            board[i] = c;
            total += c as usize;
        }
        if total > self.max_stones() {
            return Err(NotationError::new(format!(
                "{total} stones: a board holds at most {}",
                self.max_stones()
            ))
            .with_fragment(t));
        }
        Ok(board)
    }

    fn board_text(&self, board: &[u8; 2 * PITS]) -> String {
        board[..self.cells()]
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Positions since the last capture, for equality of states.
    fn recent(&self, s: &AwariState) -> Vec<u128> {
        let mut out = Vec::new();
        let mut link = s.history.as_deref();
        for _ in 0..s.since_capture {
            let Some(l) = link else { break };
            out.push(l.before);
            link = l.prev.as_deref();
        }
        out.sort_unstable();
        out
    }

    /// Rank of a board among the boards of as many stones (combinatorial number system over the
    /// prefix sums: the bars of stars and bars).
    fn rank_board(&self, board: &[u8; 2 * PITS]) -> u64 {
        let mut r = 0u64;
        let mut sum = 0usize;
        for (i, &c) in board[..self.cells() - 1].iter().enumerate() {
            sum += c as usize;
            r += self.binom[sum + i][i + 1];
        }
        r
    }

    fn unrank_board(&self, stones: usize, mut index: u64) -> [u8; 2 * PITS] {
        let bars = self.cells() - 1;
        let mut pos = [0usize; 2 * PITS];
        let mut top = stones + bars;
        for i in (0..bars).rev() {
            // The largest b < top with C(b, i + 1) <= index.
            let mut b = top - 1;
            while self.binom[b][i + 1] > index {
                b -= 1;
            }
            index -= self.binom[b][i + 1];
            pos[i] = b;
            top = b;
        }
        let mut board = [0u8; 2 * PITS];
        let mut prev = 0usize;
        for i in 0..bars {
            let s = pos[i] - i;
            board[i] = (s - prev) as u8;
            prev = s;
        }
        board[bars] = (stones - prev) as u8;
        board
    }
}

impl Game for Awari {
    type State = AwariState;
    /// A pit of the side to move, 0 = `a`.
    type Move = u8;

    fn name(&self) -> &'static str {
        "awari"
    }
    fn num_players(&self) -> usize {
        2
    }
    fn initial_state(&self) -> AwariState {
        let mut b = [0u8; 2 * PITS];
        b[..self.cells()].fill(START_STONES);
        self.state_of(b)
    }
    #[inline]
    fn turn(&self, s: &AwariState) -> Turn {
        if s.repeated || self.legal_pits(&s.board) == 0 || self.table_value(s).is_some() {
            Turn::Terminal
        } else {
            Turn::Player(s.side)
        }
    }
    fn legal_moves(&self, s: &AwariState, moves: &mut Vec<u8>) {
        moves.clear();
        if s.repeated || self.table_value(s).is_some() {
            return;
        }
        let mut set = self.legal_pits(&s.board);
        while set != 0 {
            moves.push(set.trailing_zeros() as u8);
            set &= set - 1;
        }
    }
    fn apply(&self, s: &mut AwariState, mv: u8) {
        let before = self.key(&s.board, s.side);
        let (next, captured) = self.sow(&s.board, mv as usize);
        s.board = next;
        s.side ^= 1;
        s.score = -(s.score + captured as i32);
        s.history = Some(Arc::new(Link {
            before,
            mv,
            prev: s.history.take(),
        }));
        if captured > 0 {
            s.history_hash = 0;
            s.since_capture = 0;
            return;
        }
        s.history_hash ^= mix128(before);
        s.since_capture += 1;
        let now = self.key(&s.board, s.side);
        let mut link = s.history.as_deref();
        for _ in 0..s.since_capture {
            let Some(l) = link else { break };
            if l.before == now {
                s.repeated = true;
                break;
            }
            link = l.prev.as_deref();
        }
    }
    fn returns(&self, s: &AwariState, out: &mut [f64]) {
        let v = ZeroSum::terminal_value(self, s) as f64;
        out[s.side as usize] = v;
        out[1 - s.side as usize] = -v;
    }

    fn parse_position(&self, text: &str) -> Result<AwariState, NotationError> {
        let (board, moves) = match text.split_once(';') {
            Some((b, m)) => (b, m),
            None => (text, ""),
        };
        let mut s = self.state_of(self.parse_board(board)?);
        for (i, ch) in moves.trim().chars().enumerate() {
            let mv = self
                .parse_move(&s, &ch.to_string())
                .map_err(|e| e.at_move(i + 1))?;
            self.apply(&mut s, mv);
        }
        Ok(s)
    }

    fn format_position(&self, s: &AwariState) -> String {
        let mut moves = Vec::new();
        let mut link = s.history.as_deref();
        while let Some(l) = link {
            moves.push((b'a' + l.mv) as char);
            link = l.prev.as_deref();
        }
        let root = self.board_text(&s.root);
        if moves.is_empty() {
            root
        } else {
            moves.reverse();
            format!("{root};{}", moves.into_iter().collect::<String>())
        }
    }

    fn parse_move(&self, s: &AwariState, text: &str) -> Result<u8, NotationError> {
        let t = text.trim();
        let mut chars = t.chars();
        let (Some(c), None) = (chars.next(), chars.next()) else {
            return Err(NotationError::new("a move is one pit letter").with_fragment(t));
        };
        let last = (b'a' + self.pits as u8 - 1) as char;
        if !('a'..=last).contains(&c) {
            return Err(NotationError::new(format!("pits are a to {last}")).with_fragment(t));
        }
        let pit = c as u8 - b'a';
        if self.is_terminal(s) {
            return Err(NotationError::new("the game is already over").with_fragment(t));
        }
        if self.legal_pits(&s.board) >> pit & 1 == 0 {
            let why = if s.board[pit as usize] == 0 {
                "the pit is empty"
            } else if s.board[self.pits..self.cells()].iter().all(|&c| c == 0) {
                "the opponent has no stones and this pit does not reach him"
            } else {
                "it would capture all the opponent's stones while another move does not"
            };
            return Err(NotationError::new(why).with_fragment(t));
        }
        Ok(pit)
    }

    fn format_move(&self, _s: &AwariState, mv: u8) -> String {
        ((b'a' + mv) as char).to_string()
    }

    fn same_state(&self, a: &AwariState, b: &AwariState) -> bool {
        a.board == b.board
            && a.side == b.side
            && a.score == b.score
            && a.repeated == b.repeated
            && self.recent(a) == self.recent(b)
    }
}

impl ZeroSum for Awari {
    #[inline]
    fn side(&self, s: &AwariState) -> u8 {
        s.side
    }
    #[inline]
    fn terminal_value(&self, s: &AwariState) -> i32 {
        if s.repeated {
            s.score
        } else if let Some(v) = self.table_value(s) {
            v
        } else {
            s.score + self.own_rows_value(&s.board)
        }
    }
    fn value_bounds(&self, s: &AwariState) -> (i32, i32) {
        let n = self.stones(&s.board) as i32;
        (s.score - n, s.score + n)
    }
    /// The score so far: the stones on the board are taken as shared evenly.
    fn evaluate(&self, s: &AwariState) -> i32 {
        s.score
    }
    fn order_moves(&self, s: &AwariState, moves: &mut [u8]) {
        // Captures first, larger first; the sort is stable, so the rest keep pit order.
        moves.sort_by_key(|&m| std::cmp::Reverse(self.sow(&s.board, m as usize).1));
    }
}

impl Tactics for Awari {
    /// Capture-free play can run for thousands of plies before a repetition ends it, so exact
    /// search looks for short proofs first (the bounds, `score ± stones`, are tight enough for
    /// the horizon to decide positions where one side takes the rest quickly).
    fn exact_deepening(&self) -> bool {
        true
    }
}

impl Hashed for Awari {
    /// Board, side, score and the positions since the last capture are mixed: not a key.
    const HASH_IS_KEY: bool = false;
    #[inline]
    fn hash(&self, s: &AwariState) -> u64 {
        let k = self.key(&s.board, s.side);
        fmix64(
            mix128(k)
                ^ s.history_hash.rotate_left(17)
                ^ ((s.score as i64 as u64) << 1 | s.repeated as u64)
                    .wrapping_mul(0xD6E8_FEB8_6659_FD93),
        )
    }
}

impl Retrograde for Awari {
    type Board = [u8; 2 * PITS];
    type Move = u8;

    /// The boards of `db` stones: C(db + 2 pits - 1, 2 pits - 1).
    fn db_len(&self, db: usize) -> u64 {
        self.binom[db + self.cells() - 1][self.cells() - 1]
    }
    fn unrank(&self, db: usize, index: u64) -> [u8; 2 * PITS] {
        self.unrank_board(db, index)
    }
    fn rank(&self, board: &[u8; 2 * PITS]) -> (usize, u64) {
        (self.stones(board), self.rank_board(board))
    }
    fn successors(&self, db: usize, board: &[u8; 2 * PITS], out: &mut Vec<(u8, Successor)>) {
        out.clear();
        let mut set = self.legal_pits(board);
        while set != 0 {
            let pit = set.trailing_zeros() as usize;
            set &= set - 1;
            let (next, captured) = self.sow(board, pit);
            let index = self.rank_board(&next);
            let to = if captured == 0 {
                Successor::Inside(index)
            } else {
                Successor::Below {
                    db: db - captured as usize,
                    index,
                    gain: captured as i32,
                }
            };
            out.push((pit as u8, to));
        }
    }
    /// Un-sowing. Seen from a predecessor `q` after its move, the board is `board` with the rows
    /// swapped, and the pit `i` it sowed from is empty (sowing skips it). Taking back `k = 1, 2,
    /// ...` stones along the sowing order from `i` (skipping `i`) until a pit runs dry gives
    /// every `q` with `q[i] = k` that sows to `board`; it stays in the database when the last
    /// stone captured nothing (it fell in `q`'s own row, or made an opponent's pit other than 2
    /// or 3). Legality: a move that captures nothing is no grand slam, and it leaves the
    /// opponent stones exactly when `board`'s side to move has some (he is that opponent), which
    /// also covers the must-feed rule; with that row empty `board` has no predecessor inside.
    fn predecessors(&self, _db: usize, board: &[u8; 2 * PITS], out: &mut Vec<u64>) {
        out.clear();
        let (p, cells) = (self.pits, self.cells());
        if board[..p].iter().all(|&c| c == 0) {
            return;
        }
        let mut after = [0u8; 2 * PITS];
        after[..p].copy_from_slice(&board[p..cells]);
        after[p..cells].copy_from_slice(&board[..p]);
        for i in 0..p {
            if after[i] != 0 {
                continue;
            }
            let mut q = after;
            let mut at = i;
            let mut k = 0u8;
            loop {
                at = if at + 1 == cells { 0 } else { at + 1 };
                if at == i {
                    continue;
                }
                if q[at] == 0 {
                    break;
                }
                q[at] -= 1;
                k += 1;
                if at >= p && (after[at] == 2 || after[at] == 3) {
                    continue;
                }
                q[i] = k;
                debug_assert_eq!(self.sow(&q, i), (*board, 0));
                debug_assert!(self.legal_pits(&q) >> i & 1 == 1);
                out.push(self.rank_board(&q));
                q[i] = 0;
            }
        }
    }
    fn end_value(&self, _db: usize, board: &[u8; 2 * PITS]) -> i32 {
        self.own_rows_value(board)
    }
    fn value_limit(&self, db: usize) -> i32 {
        db as i32
    }
}

impl TableProbe for Awari {
    fn probe_board(&self, s: &AwariState) -> Option<([u8; 2 * PITS], i32)> {
        // With no move since the last capture the repetition rule has nothing to remember, and
        // the value is the score so far plus the database value of the board.
        (s.since_capture == 0 && !s.repeated).then_some((s.board, s.score))
    }
}

impl Exact for Awari {
    type Book = ();
    fn with_tables(&self, name: &str) -> Result<Self, SolveError> {
        Ok(self.with_table_set(self.load_tables(name)?))
    }
}

// The picture: `viz::board` (`impl Picture for Awari`).

/// `pits`: pits per side.
pub const PARAM_PITS: Spec = Spec::uint(
    "pits",
    1,
    PITS as u64,
    DefaultValue::UInt(PITS as u64),
    "pits per side (6: the real game; fewer: the same rules on a smaller board)",
    "the board's fixed array of 12 pits",
);

/// Most stones a database build goes to on the standard board: the 24-stone database has 417
/// million entries, and a build holds it twice beside every lower one (about 2.3 GB in all).
pub const MAX_BUILD_STONES: usize = 24;

impl crate::search::retrograde::tool::TableGame for Awari {
    fn table_tag(&self) -> String {
        Awari::table_tag(self)
    }
    fn max_db(&self) -> usize {
        if self.pits == PITS {
            self.max_stones().min(MAX_BUILD_STONES)
        } else {
            self.max_stones()
        }
    }
    fn db_label(&self, db: usize) -> String {
        format!("{db} stones")
    }
    fn lookup_state(&self, text: &str) -> Result<AwariState, String> {
        if text.contains(';') {
            return Err(format!(
                "a lookup takes a board ({} pit counts), not moves",
                self.cells()
            ));
        }
        self.parse_position(text)
            .map_err(|e| format!("position: {e}"))
    }
    fn table_board(&self, state: &AwariState) -> [u8; 2 * PITS] {
        self.board(state)
    }
    fn board_state(&self, board: &[u8; 2 * PITS]) -> AwariState {
        self.state_of(*board)
    }
    fn table_move(&self, state: &AwariState, m: u8) -> String {
        self.format_move(state, m)
    }
}

/// The catalogue entry of Awari.
pub struct AwariEntry;

impl GameEntry for AwariEntry {
    const NAME: &'static str = "awari";
    const PARAMS: &'static [Spec] = &[PARAM_PITS];
    const FAMILY: Family = Family::ZeroSum {
        book: false,
        features: false,
    };
    const TABLES: Option<TablesFn> = Some(|params| Ok(Box::new(AwariEntry::build(params)?)));
    type Game = Awari;
    fn build(params: &Opts) -> Result<Awari, SolveError> {
        let pits = params.uint_value(&PARAM_PITS)?;
        params.finish()?;
        Awari::new(pits).map_err(SolveError::bad)
    }
    fn offer<V: Visitor>(game: Awari, visitor: V) -> V::Output {
        visitor.zero_sum(game)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::battery;

    fn b(cells: &[u8]) -> [u8; 2 * PITS] {
        let mut x = [0u8; 2 * PITS];
        x[..cells.len()].copy_from_slice(cells);
        x
    }

    #[test]
    fn battery_standard_and_small_boards() {
        let g = Awari::default();
        battery::check_game(&g, &g.initial_state(), 40, 1);
        battery::check_hashed(&g, &g.initial_state(), 20, 2);
        battery::check_zero_sum(&g, &g.initial_state(), 40, 3);
        for pits in 1..=4 {
            let g = Awari::new(pits).unwrap();
            battery::check_game(&g, &g.initial_state(), 30, 4);
            battery::check_hashed(&g, &g.initial_state(), 10, 5);
            battery::check_zero_sum(&g, &g.initial_state(), 30, 6);
        }
    }

    #[test]
    fn sowing_skips_the_starting_pit_and_captures_backwards() {
        let g = Awari::default();
        // 12 stones from pit a: one in each other pit, the 12th in b (a is skipped).
        let (next, cap) = g.sow(&b(&[12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]), 0);
        assert_eq!(cap, 0);
        // Seen from the opponent: his row first.
        assert_eq!(&next[..12], &[1, 1, 1, 1, 1, 1, 0, 2, 1, 1, 1, 1]);
        // f with 3 stones lands in the opponent's c; his a, b, c hold 2, 3, 2 after sowing:
        // all three are captured going backwards. He keeps d..f, so it is no grand slam.
        let (next, cap) = g.sow(&b(&[0, 0, 0, 0, 0, 3, 1, 2, 1, 5, 0, 1]), 5);
        assert_eq!(cap, 7);
        assert_eq!(&next[..12], &[0, 0, 0, 5, 0, 1, 0, 0, 0, 0, 0, 0]);
        // The chain stops at a pit that does not hold 2 or 3.
        let (_, cap) = g.sow(&b(&[0, 0, 0, 0, 0, 3, 1, 4, 1, 5, 0, 1]), 5);
        assert_eq!(cap, 2);
    }

    #[test]
    fn grand_slam_is_illegal_unless_forced_and_the_opponent_must_be_fed() {
        let g = Awari::default();
        let moves_of = |text: &str| {
            let mut moves = Vec::new();
            g.legal_moves(&g.parse_position(text).unwrap(), &mut moves);
            moves
        };
        // f would capture both of the opponent's pits (2 + 3), all he has; e does not.
        assert_eq!(g.sow(&b(&[0, 0, 0, 0, 1, 2, 1, 2, 0, 0, 0, 0]), 5).1, 5);
        assert_eq!(moves_of("0,0,0,0,1,2,1,2,0,0,0,0"), vec![4]);
        // A grand slam that leaves him a pit of 4 is an ordinary capture.
        assert_eq!(moves_of("0,0,0,0,1,2,1,2,4,0,0,0"), vec![4, 5]);
        // Every move is a grand slam: both are legal and capture; the opponent is left without
        // stones and a move, and the mover keeps his 3: all 8 stones are his.
        assert_eq!(moves_of("0,0,0,0,3,2,1,2,0,0,0,0"), vec![4, 5]);
        let mut s = g.parse_position("0,0,0,0,3,2,1,2,0,0,0,0").unwrap();
        g.apply(&mut s, 4);
        assert!(g.is_terminal(&s));
        assert_eq!(ZeroSum::terminal_value(&g, &s), -8);
        assert!(g
            .parse_position("0,0,0,0,1,2,1,2,0,0,0,0;f")
            .unwrap_err()
            .to_string()
            .contains("capture all"));
        // The opponent is empty: only pits that reach him are legal.
        assert_eq!(moves_of("0,0,0,1,2,0,0,0,0,0,0,0"), vec![4]);
        // 22 stones from a lap twice and end with 2 in each of his pits: a grand slam, so the
        // only other pit that feeds him is the one legal move.
        assert_eq!(g.sow(&b(&[22, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]), 0).1, 12);
        assert_eq!(moves_of("22,0,0,0,0,1,0,0,0,0,0,0"), vec![5]);
        // Nobody can feed him: the game ends and the mover keeps his stones.
        let s = g.parse_position("1,1,0,0,0,0,0,0,0,0,0,0").unwrap();
        assert!(g.is_terminal(&s));
        assert_eq!(ZeroSum::terminal_value(&g, &s), 2);
        // The mover has no stones: the opponent keeps his.
        let s = g.parse_position("0,0,0,0,0,0,0,0,3,0,0,0").unwrap();
        assert_eq!(ZeroSum::terminal_value(&g, &s), -3);
    }

    #[test]
    fn repetition_ends_the_game_and_the_notation_keeps_the_moves() {
        // Two pits a side, every move forced: [0,1 | 0,1] -b-> [1,1 | 0,0] (the opponent must
        // feed) -b-> [1,0 | 1,0] -a-> [1,0 | 0,1] -a-> [0,1 | 0,1], the root again.
        let g = Awari::new(2).unwrap();
        let mut s = g.parse_position("0,1,0,1").unwrap();
        for (i, mv) in [1, 1, 0, 0].into_iter().enumerate() {
            let mut moves = Vec::new();
            g.legal_moves(&s, &mut moves);
            assert_eq!(moves, vec![mv], "move {}", i + 1);
            g.apply(&mut s, mv);
        }
        // The same board, the same player to move: over, and nothing captured.
        assert!(g.is_terminal(&s));
        assert_eq!(ZeroSum::terminal_value(&g, &s), 0);
        assert_eq!(g.format_position(&s), "0,1,0,1;bbaa");
        let back = g.parse_position("0,1,0,1;bbaa").unwrap();
        assert!(g.same_state(&s, &back));
        assert!(g.parse_position("0,1,0,1;bbaab").is_err());
        // One pit a side: the only move captures the opponent's only stones, a forced grand slam.
        let g = Awari::new(1).unwrap();
        let mut s = g.parse_position("1,1").unwrap();
        g.apply(&mut s, 0);
        assert!(g.is_terminal(&s));
        assert_eq!(ZeroSum::terminal_value(&g, &s), -2);
    }

    /// The unmove generator against brute force: for every position of every database of a few
    /// stones on boards of 1 to 6 pits, its predecessors are exactly the positions of the same
    /// database with a legal move to it that captures nothing, each listed once.
    #[test]
    fn predecessors_are_exactly_the_positions_moving_inside_to_it() {
        let mut pairs = 0usize;
        for (pits, top) in [(1, 16), (2, 12), (3, 10), (4, 8), (5, 7), (6, 6)] {
            let g = Awari::new(pits).unwrap();
            for db in 0..=top {
                let len = g.db_len(db) as usize;
                let mut want = vec![Vec::new(); len];
                let mut succ = Vec::new();
                for q in 0..len as u64 {
                    g.successors(db, &g.unrank(db, q), &mut succ);
                    for &(_, to) in &succ {
                        if let Successor::Inside(c) = to {
                            want[c as usize].push(q);
                        }
                    }
                }
                let mut got = Vec::new();
                for (p, want) in want.iter().enumerate() {
                    let board = g.unrank(db, p as u64);
                    g.predecessors(db, &board, &mut got);
                    let n = got.len();
                    got.sort_unstable();
                    got.dedup();
                    assert_eq!(n, got.len(), "a predecessor listed twice");
                    assert_eq!(&got, want, "{pits} pits, {:?}", &board[..2 * pits]);
                    pairs += n;
                }
            }
        }
        assert!(pairs > 50_000, "only {pairs} pairs");
    }

    #[test]
    fn ranking_is_a_bijection() {
        for pits in [2, 3, 6] {
            let g = Awari::new(pits).unwrap();
            for n in 0..6 {
                let len = g.db_len(n);
                for i in 0..len {
                    let board = g.unrank(n, i);
                    assert_eq!(g.stones(&board), n);
                    assert_eq!(g.rank(&board), (n, i));
                }
            }
        }
        let g = Awari::default();
        assert_eq!(g.db_len(48), 279_871_768_995);
        let board = g.unrank(48, 123_456_789_012);
        assert_eq!(g.rank(&board), (48, 123_456_789_012));
    }
}
