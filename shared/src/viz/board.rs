//! Pictures of positions: standalone SVG boards for the dashboard and the job pages.
//!
//! [`picture`] is the only entry point callers need: it takes a job's game name, game parameters
//! and position notation as a `JobSpec` carries them, so the coordinator never names a game. Each
//! game with a picture implements [`Pictured`] here through the game's public interface only: the
//! game parses the position (a bad one gives the game's own one-line error), then its moves are
//! replayed with `parse_move` to learn where each stone went.
//!
//! Output contract: well-formed SVG with no external references, a root `<svg class="gs-board"
//! data-game=NAME>`, one `class="gs-stone"` element per stone with `data-player` 0 (first player)
//! or 1, and `class="gs-win"` on stones of a completed line. Morpion Solitaire draws one
//! `class="gs-dot"` per dot (new dots carry `data-move`, their number) and one `class="gs-line"`
//! per line. Othello and Rolit draw one `gs-stone` per disc with `data-player` its colour's player
//! (0 black, 1 white; Rolit 0 red, 1 yellow, 2 green, 3 blue, three-player Rolit's neutral disc
//! also `gs-neutral`) and `data-square`. Backgammon draws all 30 checkers, each
//! `class="gs-checker"` with `data-player` (0 X, 1 O) and `data-point` (1..24, `bar` or `off`). Bad input is
//! `Err` with one line; a game without a picture is `Ok(None)`; nothing panics.

use super::escape;
use crate::games::awari::Awari;
use crate::games::backgammon::Backgammon;
use crate::games::connect4::{Connect4, Word};
use crate::games::mnk::Mnk;
use crate::games::morpion::Morpion;
use crate::games::othello::{Geometry, Othello};
use crate::games::rolit::Rolit;
use crate::games::Exact;
use crate::model::single::SinglePlayer;
use crate::model::{ChanceZeroSum, Game, OutOfTurn, Picture, Stochastic, VectorEval};
use crate::registry::{catalogue, Opts};
use crate::wire::Settings;
use std::fmt::Write;

/// Largest side of a board picture in pixels (cells shrink on large boards).
const MAX_SIDE: f64 = 480.0;
/// Cell size of small boards in pixels.
const CELL: f64 = 56.0;

/// How stones are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Coloured discs in the holes of a frame (Connect Four).
    Discs,
    /// X and O marks on a grid (tic-tac-toe, m,n,k).
    Marks,
}

/// A rectangular board of two players' stones, as a picture needs it.
#[derive(Clone, Debug)]
pub struct Stones {
    /// Columns.
    pub cols: usize,
    /// Rows.
    pub rows: usize,
    /// Cell `row * cols + col` (row 0 at the top of the picture): `Some(player)` or empty.
    pub cells: Vec<Option<u8>>,
    /// The cell of the last stone played.
    pub last: Option<usize>,
    /// Stones in a row that win (lines of this length are highlighted).
    pub k: usize,
    /// Drawing style.
    pub style: Style,
    /// Column labels under the board (Connect Four's notation), if any.
    pub col_labels: Option<Vec<String>>,
}

/// A game that can show its positions.
pub trait Pictured {
    /// The stones of `position` (in the game's notation), or the game's parse error.
    fn stones(&self, position: &str) -> Result<Stones, String>;
}

impl<W: Word> Pictured for Connect4<W> {
    fn stones(&self, position: &str) -> Result<Stones, String> {
        self.parse_position(position).map_err(|e| e.to_string())?;
        let (cols, rows) = (self.width() as usize, self.height() as usize);
        let mut cells = vec![None; cols * rows];
        let mut height = vec![0usize; cols];
        let mut state = self.initial_state();
        let mut last = None;
        for (i, ch) in position.trim().chars().enumerate() {
            let mut buf = [0u8; 4];
            let col = self
                .parse_move(&state, ch.encode_utf8(&mut buf))
                .map_err(|e| e.at_move(i + 1).to_string())? as usize;
            let row = rows - 1 - height[col];
            cells[row * cols + col] = Some((i % 2) as u8);
            height[col] += 1;
            last = Some(row * cols + col);
            self.apply(&mut state, col as u8);
        }
        // Each column's own notation (the game's, whatever its base).
        let empty = self.initial_state();
        let labels = (0..cols)
            .map(|c| self.format_move(&empty, c as u8))
            .collect();
        Ok(Stones {
            cols,
            rows,
            cells,
            last,
            k: 4,
            style: Style::Discs,
            col_labels: Some(labels),
        })
    }
}

/// An m,n,k-game with its board size (the game does not expose it).
struct MnkBoard {
    game: Mnk,
    m: usize,
    n: usize,
    k: usize,
}

impl Pictured for MnkBoard {
    fn stones(&self, position: &str) -> Result<Stones, String> {
        let g = &self.game;
        g.parse_position(position).map_err(|e| e.to_string())?;
        let mut cells = vec![None; self.m * self.n];
        let mut state = g.initial_state();
        let mut last = None;
        let t = position.trim();
        // The game's own splitting rule: single digits for tic-tac-toe, commas otherwise.
        let items: Vec<String> = if t.is_empty() {
            Vec::new()
        } else if g.name() == "tictactoe" && !t.contains(',') {
            t.chars().map(|c| c.to_string()).collect()
        } else {
            t.split(',').map(str::to_string).collect()
        };
        for (i, item) in items.iter().enumerate() {
            let mv = g
                .parse_move(&state, item)
                .map_err(|e| e.at_move(i + 1).to_string())?;
            let cell = mv as usize;
            if cell >= cells.len() {
                return Err(format!("move {}: cell outside the board", i + 1));
            }
            cells[cell] = Some((i % 2) as u8);
            last = Some(cell);
            g.apply(&mut state, mv);
        }
        Ok(Stones {
            cols: self.m,
            rows: self.n,
            cells,
            last,
            k: self.k,
            style: Style::Marks,
            col_labels: None,
        })
    }
}

fn bad(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The picture of a position of `game` (parameters and notation as in a job), `Ok(None)` for a
/// game without pictures, `Err` with one line for bad parameters or an illegal position.
pub fn picture(
    game: &str,
    game_params: &Settings,
    position: &str,
) -> Result<Option<String>, String> {
    let params = Opts::new(game_params, "game parameter");
    match catalogue::visit(game, &params, Draw(position)) {
        Some(drawn) => drawn.map_err(bad)?,
        None => Ok(None),
    }
}

/// The text board of a position of `game` ([`Picture::board_text`]; parameters and notation as
/// in a job): `Ok(None)` for a game without one, `Err` with one line for bad parameters or an
/// illegal position.
pub fn text(game: &str, game_params: &Settings, position: &str) -> Result<Option<String>, String> {
    let params = Opts::new(game_params, "game parameter");
    match catalogue::visit(game, &params, TextBoard(position)) {
        Some(drawn) => drawn.map_err(bad)?,
        None => Ok(None),
    }
}

/// The catalogue visitor of [`text`].
struct TextBoard<'a>(&'a str);

impl catalogue::Visitor for TextBoard<'_> {
    type Output = Drawn;
    fn zero_sum<G: Exact + Picture>(self, game: G) -> Drawn {
        game.board_text(self.0)
    }
    fn chance<G: ChanceZeroSum + Picture>(self, game: G) -> Drawn {
        game.board_text(self.0)
    }
    fn single<G: SinglePlayer + Picture>(self, game: G) -> Drawn {
        game.board_text(self.0)
    }
    fn multi<G: Stochastic + VectorEval + OutOfTurn + Picture>(self, game: G) -> Drawn {
        game.board_text(self.0)
    }
    fn tree(self) -> Drawn {
        Ok(None)
    }
}

/// The catalogue visitor of [`picture`]: every game draws itself through [`Picture`].
struct Draw<'a>(&'a str);

type Drawn = Result<Option<String>, String>;

impl catalogue::Visitor for Draw<'_> {
    type Output = Drawn;
    fn zero_sum<G: Exact + Picture>(self, game: G) -> Drawn {
        game.picture(self.0)
    }
    fn chance<G: ChanceZeroSum + Picture>(self, game: G) -> Drawn {
        game.picture(self.0)
    }
    fn single<G: SinglePlayer + Picture>(self, game: G) -> Drawn {
        game.picture(self.0)
    }
    fn multi<G: Stochastic + VectorEval + OutOfTurn + Picture>(self, game: G) -> Drawn {
        game.picture(self.0)
    }
    fn tree(self) -> Drawn {
        Ok(None)
    }
}

/// Win, draw or loss for games valued 1, 0 and -1.
fn win_draw_loss(value: i64) -> Option<String> {
    Some(
        match value {
            1 => "win",
            0 => "draw",
            -1 => "loss",
            _ => return None,
        }
        .into(),
    )
}

/// "1st", "2nd", "3rd", "4th", ..., "11th", "21st".
pub fn ordinal(n: i64) -> String {
    let suffix = match (n % 100, n % 10) {
        (11..=13, _) => "th",
        (_, 1) => "st",
        (_, 2) => "nd",
        (_, 3) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// The words for an exact score of a position of `game` (parameters and notation as in a job):
/// the game's [`Picture::score_words`]. `Ok(None)` for a game whose numbers say it all, `Err`
/// with one line for bad parameters or an illegal position.
pub fn score_words(
    game: &str,
    game_params: &Settings,
    position: &str,
    value: i64,
) -> Result<Option<String>, String> {
    let params = Opts::new(game_params, "game parameter");
    match catalogue::visit(game, &params, Words(position, value)) {
        Some(said) => said.map_err(bad)?,
        None => Ok(None),
    }
}

/// The catalogue visitor of [`score_words`].
struct Words<'a>(&'a str, i64);

impl catalogue::Visitor for Words<'_> {
    type Output = Drawn;
    fn zero_sum<G: Exact + Picture>(self, game: G) -> Drawn {
        game.score_words(self.0, self.1)
    }
    fn chance<G: ChanceZeroSum + Picture>(self, game: G) -> Drawn {
        game.score_words(self.0, self.1)
    }
    fn single<G: SinglePlayer + Picture>(self, game: G) -> Drawn {
        game.score_words(self.0, self.1)
    }
    fn multi<G: Stochastic + VectorEval + OutOfTurn + Picture>(self, game: G) -> Drawn {
        game.score_words(self.0, self.1)
    }
    fn tree(self) -> Drawn {
        Ok(None)
    }
}

impl Picture for Mnk {
    fn score_words(&self, position: &str, value: i64) -> Drawn {
        self.parse_position(position).map_err(bad)?;
        Ok(win_draw_loss(value))
    }
    fn picture(&self, position: &str) -> Drawn {
        let (m, n, k) = self.dims();
        let board = MnkBoard {
            game: self.clone(),
            m,
            n,
            k,
        };
        Ok(Some(render(self.name(), &board.stones(position)?)))
    }
}

impl<W: Word> Picture for Connect4<W> {
    fn picture(&self, position: &str) -> Drawn {
        Ok(Some(render(self.name(), &self.stones(position)?)))
    }
    /// Pons' score: a player who wins with their m-th stone of the game scores
    /// `(cells + 1) / 2 + 1 - m`; the side to move has played `played / 2` stones, the other
    /// side `(played + 1) / 2`. The stones are counted from this position, the move played
    /// from it first.
    fn score_words(&self, position: &str, value: i64) -> Drawn {
        let st = self.parse_position(position).map_err(bad)?;
        let half = (self.width() as i64 * self.height() as i64 + 1) / 2;
        let played = st.moves() as i64;
        Ok(Some(if value > 0 {
            let n = half + 1 - value - played / 2;
            format!("win with your {} stone from here", ordinal(n))
        } else if value < 0 {
            let n = half + 1 + value - (played + 1) / 2;
            format!("loss to the opponent's {} stone from here", ordinal(n))
        } else {
            "draw".into()
        }))
    }
}

impl Picture for Morpion {
    fn picture(&self, position: &str) -> Drawn {
        let m = morpion_moves(self, position)?;
        Ok(Some(render_morpion(self.variant_name(), &m)))
    }
}

impl Picture for Othello {
    /// The final disc difference.
    fn score_words(&self, position: &str, value: i64) -> Drawn {
        self.parse_position(position).map_err(bad)?;
        let discs = |n: i64| if n == 1 { "disc" } else { "discs" };
        Ok(Some(match value {
            v if v > 0 => format!("win by {v} {}", discs(v)),
            v if v < 0 => format!("loss by {} {}", -v, discs(-v)),
            _ => "draw".into(),
        }))
    }
    fn picture(&self, position: &str) -> Drawn {
        let st = self.parse_position(position).map_err(bad)?;
        let text = self.format_position(&st);
        let board = DiscBoard::new(self.geometry(), &st.discs, &text, &OTHELLO_COLOURS, 2);
        Ok(Some(render_discs(self.name(), &board)))
    }
    /// The drawn board ([`Othello::board_diagram`]) and its one-line `.obf` form.
    fn board_text(&self, position: &str) -> Drawn {
        let st = self.parse_position(position).map_err(bad)?;
        Ok(Some(format!(
            "{}{}\n",
            self.board_diagram(&st),
            self.board_line(&st)
        )))
    }
}

impl Picture for Rolit {
    fn picture(&self, position: &str) -> Drawn {
        let st = self.parse_position(position).map_err(bad)?;
        let text = self.format_position(&st);
        let players = self.num_players();
        let board = DiscBoard::new(self.geometry(), &st.discs, &text, &ROLIT_COLOURS, players);
        Ok(Some(render_discs(self.name(), &board)))
    }
}

impl Picture for Awari {
    fn picture(&self, position: &str) -> Drawn {
        let st = self.parse_position(position).map_err(bad)?;
        Ok(Some(render_awari(self.pits(), &self.board(&st))))
    }
}

/// An Awari board from the side to move's point of view: its pits `a`, `b`, ... along the
/// bottom row left to right, the opponent's along the top row right to left (the sowing order,
/// counter-clockwise), each pit a circle with its count written in it and up to 12 stones drawn
/// as dots. Every pit is `class="gs-pit"` with `data-pit` (the side to move's move letter, or
/// `opp-` and the opponent's letter) and `data-count`.
pub fn render_awari(pits: usize, board: &[u8]) -> String {
    let cell = 64.0;
    let pad = 12.0;
    let label = 18.0;
    let title = 16.0;
    let top = pad + title + label;
    let w = (pits as f64 * cell).max(150.0) + 2.0 * pad;
    let h = 2.0 * cell + 2.0 * pad + 2.0 * label + 2.0 * title;
    let total: u32 = board.iter().take(2 * pits).map(|&c| c as u32).sum();
    let mut out = String::new();
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" class="gs-board" data-game="awari" data-cols="{pits}" data-rows="2" data-stones="{total}" font-family="sans-serif" font-size="12"><rect x="{pad}" y="{top}" width="{bw:.1}" height="{bh:.1}" rx="14" fill="#a0703c"/>"##,
        bw = pits as f64 * cell,
        bh = 2.0 * cell
    );
    for i in 0..2 * pits {
        let count = board.get(i).copied().unwrap_or(0);
        // Bottom row: the side to move's pits left to right; top row: the opponent's, right to left.
        let (col, row, name) = if i < pits {
            (i, 1, format!("{}", (b'a' + i as u8) as char))
        } else {
            let j = i - pits;
            (pits - 1 - j, 0, format!("opp-{}", (b'a' + j as u8) as char))
        };
        let cx = pad + (col as f64 + 0.5) * cell;
        let cy = top + (row as f64 + 0.5) * cell;
        let r = cell * 0.4;
        let _ = write!(
            out,
            r##"<circle class="gs-pit" data-pit="{name}" data-count="{count}" cx="{cx:.1}" cy="{cy:.1}" r="{r:.1}" fill="#7a4f24" stroke="#5a3a1a" stroke-width="2"/>"##
        );
        // Up to 12 stones as dots on a ring, then the count in the middle.
        let dots = count.min(12) as usize;
        for k in 0..dots {
            let a = k as f64 / dots.max(1) as f64 * std::f64::consts::TAU;
            let rr = r * 0.62;
            let _ = write!(
                out,
                r##"<circle class="gs-seed" cx="{:.1}" cy="{:.1}" r="4.5" fill="#f1e3c6"/>"##,
                cx + rr * a.sin(),
                cy - rr * a.cos()
            );
        }
        let _ = write!(
            out,
            r##"<text x="{cx:.1}" y="{:.1}" text-anchor="middle" font-size="20" font-weight="700" fill="#ffffff" stroke="#3a240e" stroke-width="3" paint-order="stroke">{count}</text>"##,
            cy + 7.0
        );
        let letter = (b'a' + (i % pits) as u8) as char;
        let (ly, fill) = if row == 1 {
            (top + 2.0 * cell + label - 4.0, "#111111")
        } else {
            (top - 5.0, "#777777")
        };
        let _ = write!(
            out,
            r##"<text x="{cx:.1}" y="{ly:.1}" text-anchor="middle" font-size="13" fill="{fill}">{letter}</text>"##
        );
    }
    let _ = write!(
        out,
        r##"<text x="{pad}" y="{:.1}" font-size="12" fill="#777777">opponent (sows right to left)</text><text x="{pad}" y="{:.1}" font-size="12" fill="#111111">to move, {total} stones on the board</text></svg>"##,
        pad + 11.0,
        h - pad - 2.0
    );
    out
}

impl Picture for Backgammon {
    fn picture(&self, position: &str) -> Drawn {
        let st = self.parse_position(position).map_err(bad)?;
        let points = BgPoints::from_notation(&self.format_position(&st))?;
        Ok(Some(render_backgammon(&points)))
    }
}

/// Disc colours (fill, outline) of Othello: black, white.
const OTHELLO_COLOURS: [(&str, &str); 2] = [("#111111", "#000000"), ("#f4f4f4", "#555555")];
/// Disc colours of Rolit in turn order: red, yellow, green, blue.
const ROLIT_COLOURS: [(&str, &str); 4] = [
    ("#d62828", "#7a1010"),
    ("#f7c815", "#8a6d00"),
    ("#2a9d3a", "#14561d"),
    ("#1f5fbf", "#0d2f66"),
];

/// A square board of discs of several colours (Othello, Rolit), as a picture needs it.
#[derive(Clone, Debug)]
pub struct DiscBoard {
    /// Side length.
    pub size: usize,
    /// Cell `row * size + col` (row 0 = rank 1, at the top): the disc's colour index, if any.
    pub cells: Vec<Option<u8>>,
    /// The cell of the last disc placed.
    pub last: Option<usize>,
    /// (fill, outline) per colour.
    pub colours: Vec<(&'static str, &'static str)>,
    /// Colours from this index on belong to nobody (three-player Rolit's blue).
    pub players: usize,
}

impl DiscBoard {
    /// From the game's bitboards (stride-8 layout of [`Geometry`], one per colour) and the
    /// position's own notation (its last two characters name the last square, unless a pass).
    pub fn new(
        geo: Geometry,
        discs: &[u64],
        notation: &str,
        colours: &[(&'static str, &'static str)],
        players: usize,
    ) -> DiscBoard {
        let size = geo.size as usize;
        let mut cells = vec![None; size * size];
        for (c, bits) in discs.iter().enumerate() {
            for (i, cell) in cells.iter_mut().enumerate() {
                if bits >> ((i / size) * 8 + i % size) & 1 != 0 {
                    *cell = Some(c as u8);
                }
            }
        }
        let last = notation
            .len()
            .checked_sub(2)
            .and_then(|i| notation.get(i..))
            .and_then(|t| geo.parse_square(t).ok())
            .map(|sq| (sq / 8) as usize * size + (sq % 8) as usize);
        DiscBoard {
            size,
            cells,
            last,
            colours: colours[..discs.len().min(colours.len())].to_vec(),
            players,
        }
    }
}

/// Draws a disc board: a square grid, files `a..` above and ranks `1..` at the left (the
/// notation's `a1` is the top left), one disc per occupied square, the last one ringed.
pub fn render_discs(game: &str, b: &DiscBoard) -> String {
    let n = b.size.max(1);
    let cell = (MAX_SIDE / n as f64).min(CELL);
    let (x0, y0) = (28.0, 24.0);
    let side = n as f64 * cell;
    let (w, h) = (side + x0 + 12.0, side + y0 + 12.0);
    let board = if game == "othello" {
        "#2e7d4f"
    } else {
        "#d8d1bd"
    };
    let mut out = String::new();
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" class="gs-board" data-game="{g}" data-cols="{n}" data-rows="{n}" font-family="sans-serif" font-size="12">"##,
        g = escape(game),
    );
    let _ = write!(
        out,
        r##"<rect x="{x0}" y="{y0}" width="{side:.1}" height="{side:.1}" fill="{board}" stroke="#333333" stroke-width="2"/><g stroke="#333333" stroke-width="1">"##
    );
    for k in 1..n {
        let t = k as f64 * cell;
        let _ = write!(
            out,
            r#"<line x1="{:.1}" x2="{:.1}" y1="{y0}" y2="{:.1}"/><line x1="{x0}" x2="{:.1}" y1="{:.1}" y2="{:.1}"/>"#,
            x0 + t,
            x0 + t,
            y0 + side,
            x0 + side,
            y0 + t,
            y0 + t
        );
    }
    out.push_str("</g>");
    for k in 0..n {
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            x0 + (k as f64 + 0.5) * cell,
            y0 - 8.0,
            (b'a' + k as u8) as char,
            x0 / 2.0,
            y0 + (k as f64 + 0.5) * cell + 4.0,
            k + 1
        );
    }
    let radius = cell * 0.4;
    for (i, c) in b.cells.iter().enumerate() {
        let Some(c) = c else { continue };
        let (fill, line) = b
            .colours
            .get(*c as usize)
            .copied()
            .unwrap_or(("#888888", "#444444"));
        let (cx, cy) = (
            x0 + ((i % n) as f64 + 0.5) * cell,
            y0 + ((i / n) as f64 + 0.5) * cell,
        );
        let class = if (*c as usize) < b.players {
            "gs-stone"
        } else {
            "gs-stone gs-neutral"
        };
        let width = if b.last == Some(i) { 4.0 } else { 1.5 };
        let ring = if b.last == Some(i) { "#ff00aa" } else { line };
        let _ = write!(
            out,
            r#"<circle class="{class}" data-player="{c}" data-square="{}{}" cx="{cx:.1}" cy="{cy:.1}" r="{radius:.1}" fill="{fill}" stroke="{ring}" stroke-width="{width}"/>"#,
            (b'a' + (i % n) as u8) as char,
            i / n + 1
        );
    }
    out.push_str("</svg>");
    out
}

/// A backgammon position as drawn: checkers per point from X's side, the bar and borne off.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BgPoints {
    /// Index `i` is X's point `i + 1`: positive X's checkers, negative O's.
    pub points: [i32; 24],
    /// Checkers on the bar: X, O.
    pub bar: [u32; 2],
    /// Checkers borne off: X, O.
    pub off: [u32; 2],
    /// The player on roll (0 X, 1 O) and the dice, if rolled.
    pub mover: u8,
    /// The dice to play, larger first.
    pub dice: Option<(u8, u8)>,
}

impl BgPoints {
    /// Reads the game's own full notation (`BOARD BAR MOVER DICE`, the module doc of
    /// `games::backgammon`), as `format_position` writes it.
    pub fn from_notation(text: &str) -> Result<BgPoints, String> {
        let bad = || format!("backgammon position '{text}' is not in the full notation");
        let f: Vec<&str> = text.split_whitespace().collect();
        if f.len() != 4 {
            return Err(bad());
        }
        let mut points = [0i32; 24];
        let counts: Vec<&str> = f[0].split(',').collect();
        if counts.len() != 24 {
            return Err(bad());
        }
        for (p, c) in points.iter_mut().zip(counts) {
            *p = c.parse().map_err(|_| bad())?;
        }
        let (bx, bo) = f[1].split_once('-').ok_or_else(bad)?;
        let bar = [
            bx.parse().map_err(|_| bad())?,
            bo.parse().map_err(|_| bad())?,
        ];
        let on = |sign: i32| -> u32 {
            points
                .iter()
                .filter(|&&v| v * sign > 0)
                .map(|v| v.unsigned_abs())
                .sum()
        };
        let total = u32::from(crate::games::backgammon::CHECKERS);
        let off = [
            total.checked_sub(on(1) + bar[0]).ok_or_else(bad)?,
            total.checked_sub(on(-1) + bar[1]).ok_or_else(bad)?,
        ];
        let mover = match f[2] {
            "X" => 0,
            "O" => 1,
            _ => return Err(bad()),
        };
        let dice = match f[3].as_bytes() {
            [b'-'] => None,
            [a, b] if a.is_ascii_digit() && b.is_ascii_digit() => Some((a - b'0', b - b'0')),
            _ => return Err(bad()),
        };
        Ok(BgPoints {
            points,
            bar,
            off,
            mover,
            dice,
        })
    }
}

/// Checker colours: X (player 0) dark, O (player 1) light.
const BG_COLOURS: [(&str, &str); 2] = [("#2b2b2b", "#000000"), ("#f2ead8", "#6b5d45")];

/// Draws a backgammon board from X's side: points 13..24 along the top from left to right,
/// 12..1 along the bottom, the bar in the middle, the borne-off trays at the right (X below,
/// O above). Every checker is drawn; tall stacks are squeezed to fit their point.
pub fn render_backgammon(p: &BgPoints) -> String {
    let pw = 34.0; // point width
    let ch = pw * 0.9; // checker diameter
    let bar_w = 40.0;
    let tray_w = 50.0;
    let pad = 12.0;
    let half_h = 5.0 * ch + 10.0; // a point's triangle area
    let gap = 40.0;
    let board_w = 12.0 * pw + bar_w;
    let board_h = 2.0 * half_h + gap;
    let (w, h) = (board_w + tray_w + 3.0 * pad, board_h + 2.0 * pad + 20.0);
    let mut out = String::new();
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" class="gs-board" data-game="backgammon" font-family="sans-serif" font-size="11">"##
    );
    let (x0, y0) = (pad, pad);
    let _ = write!(
        out,
        r##"<rect x="{x0}" y="{y0}" width="{board_w}" height="{board_h}" fill="#c9a66b" stroke="#4a3218" stroke-width="3"/><rect x="{:.1}" y="{y0}" width="{bar_w}" height="{board_h}" fill="#6b4a22"/><rect x="{:.1}" y="{y0}" width="{tray_w}" height="{board_h}" fill="#8b6a3a" stroke="#4a3218" stroke-width="2"/>"##,
        x0 + 6.0 * pw,
        x0 + board_w + pad
    );
    // Left edge of X's point `q` (1..24) and whether it hangs from the top.
    let place = |q: usize| -> (f64, bool) {
        let (col, top) = if q >= 13 {
            (q - 13, true)
        } else {
            (12 - q, false)
        };
        let x = x0 + col as f64 * pw + if col >= 6 { bar_w } else { 0.0 };
        (x, top)
    };
    for q in 1..=24 {
        let (x, top) = place(q);
        let fill = if q % 2 == 0 { "#8c2d19" } else { "#efe3c2" };
        let (base, tip) = if top {
            (y0, y0 + half_h)
        } else {
            (y0 + board_h, y0 + board_h - half_h)
        };
        let _ = write!(
            out,
            r##"<path d="M{x:.1} {base:.1}L{:.1} {base:.1}L{:.1} {tip:.1}Z" fill="{fill}" stroke="#4a3218" stroke-width="0.5"/>"##,
            x + pw,
            x + pw / 2.0
        );
        let label_y = if top { y0 - 2.0 } else { y0 + board_h + 12.0 };
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{label_y:.1}" text-anchor="middle">{q}</text>"#,
            x + pw / 2.0
        );
    }
    let checker = |out: &mut String, player: usize, point: &str, cx: f64, cy: f64| {
        let (fill, line) = BG_COLOURS[player];
        let _ = write!(
            out,
            r#"<circle class="gs-checker" data-player="{player}" data-point="{point}" cx="{cx:.1}" cy="{cy:.1}" r="{:.1}" fill="{fill}" stroke="{line}" stroke-width="1.5"/>"#,
            ch / 2.0
        );
    };
    // A stack of `n` checkers from the edge towards the middle, squeezed to fit `room`.
    let step = |n: u32, room: f64| -> f64 {
        if n <= 1 {
            ch
        } else {
            ch.min((room - ch) / (n - 1) as f64)
        }
    };
    for q in 1..=24 {
        let v = p.points[q - 1];
        if v == 0 {
            continue;
        }
        let (player, n) = (if v > 0 { 0 } else { 1 }, v.unsigned_abs());
        let (x, top) = place(q);
        let d = step(n, half_h);
        for k in 0..n {
            let off = ch / 2.0 + k as f64 * d;
            let cy = if top { y0 + off } else { y0 + board_h - off };
            checker(&mut out, player, &q.to_string(), x + pw / 2.0, cy);
        }
    }
    // The bar: X's checkers in the upper half (they enter into O's home, the top right), O's
    // in the lower half.
    let bar_x = x0 + 6.0 * pw + bar_w / 2.0;
    for (player, &n) in p.bar.iter().enumerate() {
        let d = step(n, half_h);
        for k in 0..n {
            let off = gap / 2.0 + ch / 2.0 + k as f64 * d;
            let mid = y0 + board_h / 2.0;
            let cy = if player == 0 { mid - off } else { mid + off };
            checker(&mut out, player, "bar", bar_x, cy);
        }
    }
    // Borne off: thin slabs in the tray, X at the bottom, O at the top.
    let tray_x = x0 + board_w + pad;
    let slab = (half_h - 4.0) / f64::from(crate::games::backgammon::CHECKERS);
    for (player, &n) in p.off.iter().enumerate() {
        let (fill, line) = BG_COLOURS[player];
        for k in 0..n {
            let y = if player == 0 {
                y0 + board_h - 2.0 - (k + 1) as f64 * slab
            } else {
                y0 + 2.0 + k as f64 * slab
            };
            let _ = write!(
                out,
                r#"<rect class="gs-checker gs-off" data-player="{player}" data-point="off" x="{:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{fill}" stroke="{line}" stroke-width="0.5"/>"#,
                tray_x + 6.0,
                tray_w - 12.0,
                slab - 0.5
            );
        }
    }
    let dice = match p.dice {
        Some((a, b)) => format!(", dice {a} {b}"),
        None => ", to roll".to_string(),
    };
    let _ = write!(
        out,
        r#"<text x="{x0}" y="{:.1}" class="gs-caption">{} on roll{dice}; off: X {}, O {}</text>"#,
        h - 4.0,
        ["X", "O"][p.mover as usize],
        p.off[0],
        p.off[1]
    );
    out.push_str("</svg>");
    out
}

/// The 36-dot Greek cross of Morpion Solitaire in cross-local coordinates (x right, y down),
/// the standard start position; cross-local (0, 0) is grid point (27, 27) (the game's module
/// documentation). A test checks every replayed line against it.
const MORPION_CROSS: [&str; 10] = [
    "...####...",
    "...#..#...",
    "...#..#...",
    "####..####",
    "#........#",
    "#........#",
    "####..####",
    "...#..#...",
    "...#..#...",
    "...####...",
];
/// Grid coordinate of the cross's cross-local origin.
const MORPION_OFFSET: i32 = 27;
/// Side of the game's grid (`point = y * 64 + x`).
const MORPION_SIZE: u32 = 64;
/// Directions of the move encoding: `-`, `|`, `\`, `/`.
const MORPION_DIRS: [(i32, i32); 4] = [(1, 0), (0, 1), (1, 1), (1, -1)];

/// One Morpion move as drawn: the new dot and the five points of its line (grid coordinates).
pub type MorpionMove = ((i32, i32), [(i32, i32); 5]);

/// A Morpion Solitaire game as drawn: the cross and, per move, the new dot and its line.
#[derive(Clone, Debug, PartialEq)]
pub struct MorpionPicture {
    /// Dots of the start position (grid coordinates).
    pub cross: Vec<(i32, i32)>,
    /// Per move: the new dot and the five points of its line, in order along the line.
    pub moves: Vec<MorpionMove>,
}

/// Replays `position` (Pentasol or MSR JSON, as the game reads it) into a picture. The game
/// parses and checks the position; its own Pentasol output is then read back move by move,
/// and each move is decoded as the game documents it: `((start * 4 + dir) * 5 + pos)`.
pub fn morpion_moves(game: &Morpion, position: &str) -> Result<MorpionPicture, String> {
    let end = game.parse_position(position).map_err(|e| e.to_string())?;
    let text = game.format_position(&end);
    let mut state = game.initial_state();
    let mut moves = Vec::new();
    for (i, line) in text.lines().skip(1).enumerate() {
        let mv = game
            .parse_move(&state, line)
            .map_err(|e| e.at_move(i + 1).to_string())?;
        let (pos, dir, start) = (mv % 5, (mv / 5) % 4, mv / 20);
        let (sx, sy) = ((start % MORPION_SIZE) as i32, (start / MORPION_SIZE) as i32);
        let (dx, dy) = MORPION_DIRS[dir as usize];
        let mut pts = [(0, 0); 5];
        for (k, p) in pts.iter_mut().enumerate() {
            *p = (sx + dx * k as i32, sy + dy * k as i32);
        }
        moves.push((pts[pos as usize], pts));
        game.apply(&mut state, mv);
    }
    let mut cross = Vec::new();
    for (y, row) in MORPION_CROSS.iter().enumerate() {
        for (x, c) in row.bytes().enumerate() {
            if c == b'#' {
                cross.push((x as i32 + MORPION_OFFSET, y as i32 + MORPION_OFFSET));
            }
        }
    }
    Ok(MorpionPicture { cross, moves })
}

/// Draws a Morpion Solitaire game: grid points, the cross (black), the new dots (blue, numbered
/// in order when there is room) and every line drawn.
pub fn render_morpion(variant: &str, m: &MorpionPicture) -> String {
    let all = m
        .cross
        .iter()
        .chain(m.moves.iter().flat_map(|(_, l)| l.iter()));
    let (mut x0, mut y0, mut x1, mut y1) = (i32::MAX, i32::MAX, i32::MIN, i32::MIN);
    for &(x, y) in all {
        x0 = x0.min(x);
        y0 = y0.min(y);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    let (x0, y0, x1, y1) = (x0 - 1, y0 - 1, x1 + 1, y1 + 1);
    let span = (x1 - x0).max(y1 - y0).max(1) as f64;
    let cell = (MAX_SIDE / span).clamp(8.0, 30.0);
    let pad = 10.0;
    let w = (x1 - x0) as f64 * cell + 2.0 * pad;
    let h = (y1 - y0) as f64 * cell + 2.0 * pad + 20.0;
    let px = |x: i32| pad + (x - x0) as f64 * cell;
    let py = |y: i32| pad + (y - y0) as f64 * cell;
    let mut out = String::new();
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w:.1} {h:.1}" width="{w:.1}" height="{h:.1}" class="gs-board" data-game="morpion" data-moves="{n}" font-family="sans-serif" font-size="12"><rect width="{w:.1}" height="{h:.1}" fill="#fbfaf5"/>"##,
        n = m.moves.len()
    );
    let _ = write!(out, r##"<g fill="#c9c9c9">"##);
    for y in y0..=y1 {
        for x in x0..=x1 {
            let _ = write!(
                out,
                r#"<circle cx="{:.1}" cy="{:.1}" r="1.2"/>"#,
                px(x),
                py(y)
            );
        }
    }
    out.push_str("</g>");
    for (_, line) in &m.moves {
        let (a, b) = (line[0], line[4]);
        let _ = write!(
            out,
            r##"<line class="gs-line" x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#0072B2" stroke-width="2" stroke-linecap="round"/>"##,
            px(a.0),
            py(a.1),
            px(b.0),
            py(b.1)
        );
    }
    let r = cell * 0.28;
    for &(x, y) in &m.cross {
        let _ = write!(
            out,
            r##"<circle class="gs-dot" cx="{:.1}" cy="{:.1}" r="{r:.1}" fill="#222222"/>"##,
            px(x),
            py(y)
        );
    }
    for (i, ((x, y), _)) in m.moves.iter().enumerate() {
        let _ = write!(
            out,
            r##"<circle class="gs-dot" data-move="{n}" cx="{:.1}" cy="{:.1}" r="{r:.1}" fill="#D55E00"/>"##,
            px(*x),
            py(*y),
            n = i + 1
        );
        if cell >= 18.0 {
            let _ = write!(
                out,
                r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="{:.0}" fill="#ffffff">{}</text>"##,
                px(*x),
                py(*y) + r * 0.45,
                r * 1.1,
                i + 1
            );
        }
    }
    let _ = write!(
        out,
        r#"<text x="{pad}" y="{:.1}">Morpion {} : {} moves</text></svg>"#,
        h - 8.0,
        escape(variant),
        m.moves.len()
    );
    out
}

/// Cells on a completed line of `k` or more stones of one player.
pub fn winning_cells(s: &Stones) -> Vec<bool> {
    let mut win = vec![false; s.cells.len()];
    if s.k == 0 {
        return win;
    }
    let at = |r: isize, c: isize| -> Option<u8> {
        if r < 0 || c < 0 || r as usize >= s.rows || c as usize >= s.cols {
            None
        } else {
            s.cells[r as usize * s.cols + c as usize]
        }
    };
    for r in 0..s.rows as isize {
        for c in 0..s.cols as isize {
            let Some(p) = at(r, c) else { continue };
            for (dr, dc) in [(0isize, 1isize), (1, 0), (1, 1), (1, -1)] {
                // Only start a run at its first stone.
                if at(r - dr, c - dc) == Some(p) {
                    continue;
                }
                let mut len = 0;
                while at(r + dr * len, c + dc * len) == Some(p) {
                    len += 1;
                }
                if len as usize >= s.k {
                    for i in 0..len {
                        win[((r + dr * i) as usize) * s.cols + (c + dc * i) as usize] = true;
                    }
                }
            }
        }
    }
    win
}

/// Draws `s` as SVG.
pub fn render(game: &str, s: &Stones) -> String {
    let cell = (MAX_SIDE / s.cols.max(s.rows).max(1) as f64).min(CELL);
    let pad = 12.0;
    let label_h = if s.col_labels.is_some() { 20.0 } else { 0.0 };
    let w = s.cols as f64 * cell + 2.0 * pad;
    let h = s.rows as f64 * cell + 2.0 * pad + label_h;
    let win = winning_cells(s);
    let mut out = String::new();
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" class="gs-board" data-game="{g}" data-cols="{c}" data-rows="{r}" font-family="sans-serif" font-size="12">"##,
        g = escape(game),
        c = s.cols,
        r = s.rows
    );
    let (x0, y0) = (pad, pad);
    let centre = |i: usize| {
        (
            x0 + (i % s.cols) as f64 * cell + cell / 2.0,
            y0 + (i / s.cols) as f64 * cell + cell / 2.0,
        )
    };
    match s.style {
        Style::Discs => {
            let _ = write!(
                out,
                r##"<rect x="{x0}" y="{y0}" width="{:.1}" height="{:.1}" rx="8" fill="#1f4fb4"/>"##,
                s.cols as f64 * cell,
                s.rows as f64 * cell
            );
            let radius = cell * 0.4;
            for (i, c) in s.cells.iter().enumerate() {
                let (cx, cy) = centre(i);
                match c {
                    None => {
                        let _ = write!(
                            out,
                            r##"<circle cx="{cx:.1}" cy="{cy:.1}" r="{radius:.1}" fill="#ffffff"/>"##
                        );
                    }
                    Some(p) => {
                        let fill = if *p == 0 { "#d62828" } else { "#f7c815" };
                        let class = if win[i] {
                            "gs-stone gs-win"
                        } else {
                            "gs-stone"
                        };
                        let ring = if win[i] {
                            r##" stroke="#ffffff" stroke-width="4""##
                        } else if s.last == Some(i) {
                            r##" stroke="#111111" stroke-width="2""##
                        } else {
                            ""
                        };
                        let _ = write!(
                            out,
                            r#"<circle class="{class}" data-player="{p}" cx="{cx:.1}" cy="{cy:.1}" r="{radius:.1}" fill="{fill}"{ring}/>"#
                        );
                    }
                }
            }
        }
        Style::Marks => {
            let _ = write!(
                out,
                r##"<rect x="{x0}" y="{y0}" width="{:.1}" height="{:.1}" fill="#fbfaf5" stroke="#333333" stroke-width="2"/>"##,
                s.cols as f64 * cell,
                s.rows as f64 * cell
            );
            for (i, w) in win.iter().enumerate() {
                if *w {
                    let (cx, cy) = centre(i);
                    let _ = write!(
                        out,
                        r##"<rect x="{:.1}" y="{:.1}" width="{cell:.1}" height="{cell:.1}" fill="#c8f0d0"/>"##,
                        cx - cell / 2.0,
                        cy - cell / 2.0
                    );
                }
            }
            let _ = write!(out, r##"<g stroke="#333333" stroke-width="1">"##);
            for c in 1..s.cols {
                let x = x0 + c as f64 * cell;
                let _ = write!(
                    out,
                    r#"<line x1="{x:.1}" x2="{x:.1}" y1="{y0}" y2="{:.1}"/>"#,
                    y0 + s.rows as f64 * cell
                );
            }
            for r in 1..s.rows {
                let y = y0 + r as f64 * cell;
                let _ = write!(
                    out,
                    r#"<line x1="{x0}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}"/>"#,
                    x0 + s.cols as f64 * cell
                );
            }
            let _ = write!(out, "</g>");
            let arm = cell * 0.3;
            for (i, c) in s.cells.iter().enumerate() {
                let Some(p) = c else { continue };
                let (cx, cy) = centre(i);
                let class = if win[i] {
                    "gs-stone gs-win"
                } else {
                    "gs-stone"
                };
                let width = if s.last == Some(i) { 5.0 } else { 3.5 };
                if *p == 0 {
                    let _ = write!(
                        out,
                        r##"<path class="{class}" data-player="0" d="M{:.1} {:.1}L{:.1} {:.1}M{:.1} {:.1}L{:.1} {:.1}" stroke="#0072B2" stroke-width="{width}" stroke-linecap="round" fill="none"/>"##,
                        cx - arm,
                        cy - arm,
                        cx + arm,
                        cy + arm,
                        cx + arm,
                        cy - arm,
                        cx - arm,
                        cy + arm
                    );
                } else {
                    let _ = write!(
                        out,
                        r##"<circle class="{class}" data-player="1" cx="{cx:.1}" cy="{cy:.1}" r="{arm:.1}" stroke="#D55E00" stroke-width="{width}" fill="none"/>"##
                    );
                }
            }
        }
    }
    if let Some(labels) = &s.col_labels {
        for (c, l) in labels.iter().enumerate() {
            let _ = write!(
                out,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                x0 + c as f64 * cell + cell / 2.0,
                y0 + s.rows as f64 * cell + 16.0,
                escape(l)
            );
        }
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> Settings {
        crate::wire::settings(pairs)
    }

    fn well_formed(svg: &str) {
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"), "{svg}");
        let opens = svg.matches('<').count();
        let closes = svg.matches("/>").count() + svg.matches("</").count() * 2;
        assert_eq!(opens, closes, "unbalanced tags: {svg}");
        assert!(!svg.contains("href"), "no external references");
    }

    fn players(svg: &str) -> (usize, usize) {
        (
            svg.matches(r#"data-player="0""#).count(),
            svg.matches(r#"data-player="1""#).count(),
        )
    }

    #[test]
    fn connect4_stones_fall_and_four_is_marked() {
        // X plays column 4 four times, O plays column 5 in between: X wins vertically.
        let svg = picture("connect4", &Settings::new(), "4545454")
            .unwrap()
            .unwrap();
        well_formed(&svg);
        assert_eq!(players(&svg), (4, 3));
        assert_eq!(svg.matches("gs-win").count(), 4);
        assert!(svg.contains(r#"data-cols="7" data-rows="6""#));
        // Bottom row of column 4 (index 3): row 5, x = 12 + 3 * 56 + 28 = 208.
        let s = Connect4::<u64>::new(7, 6, 1).unwrap().stones("45").unwrap();
        assert_eq!(s.cells[5 * 7 + 3], Some(0));
        assert_eq!(s.cells[5 * 7 + 4], Some(1));
        assert_eq!(s.cells.iter().flatten().count(), 2);
        assert_eq!(s.last, Some(5 * 7 + 4));
        assert!(svg.contains(r#"cx="208.0" cy="320.0""#), "{svg}");
    }

    /// Pons' reading of Connect Four scores: a score of 1 at the start is a win with the 21st
    /// (last) stone; a move that wins at once is a win with your 1st stone, one after which the
    /// opponent wins at once a loss to the opponent's 1st stone. One wording, used by
    /// `gamesolver analyse` and the dashboard.
    #[test]
    fn score_words_of_connect4_othello_and_tictactoe() {
        let w = |g: &str, pos: &str, v: i64| {
            score_words(g, &Settings::new(), pos, v)
                .unwrap()
                .unwrap_or_default()
        };
        assert_eq!(w("connect4", "", 1), "win with your 21st stone from here");
        assert_eq!(w("connect4", "", 0), "draw");
        // 6 stones played: an immediate win scores 18; a loss at once after the move -18.
        assert_eq!(
            w("connect4", "445566", 18),
            "win with your 1st stone from here"
        );
        assert_eq!(
            w("connect4", "445566", -18),
            "loss to the opponent's 1st stone from here"
        );
        assert_eq!(
            w("connect4", "445566", -16),
            "loss to the opponent's 3rd stone from here"
        );
        assert_eq!(w("othello", "", -3), "loss by 3 discs");
        assert_eq!(w("othello", "", 1), "win by 1 disc");
        assert_eq!(w("tictactoe", "", 1), "win");
        assert_eq!(score_words("nim", &Settings::new(), "", 1).unwrap(), None);
        assert!(score_words("connect4", &Settings::new(), "4444444", 1).is_err());
        assert_eq!(ordinal(11), "11th");
        assert_eq!(ordinal(22), "22nd");
        assert_eq!(ordinal(101), "101st");
    }

    #[test]
    fn awari_pits_with_counts_from_the_side_to_move() {
        // The start: 12 pits of 4; after move `a` the board turns (the opponent to move).
        let svg = picture("awari", &Settings::new(), "").unwrap().unwrap();
        well_formed(&svg);
        assert_eq!(svg.matches(r#"class="gs-pit""#).count(), 12);
        assert_eq!(svg.matches(r#"data-count="4""#).count(), 12);
        assert!(svg.contains("48 stones"), "{svg}");
        let p = params(&[("pits", "3")]);
        let svg = picture("awari", &p, "1,0,2,0,0,3").unwrap().unwrap();
        well_formed(&svg);
        assert!(svg.contains(r#"data-cols="3" data-rows="2""#));
        assert!(svg.contains(r#"data-pit="a" data-count="1""#), "{svg}");
        assert!(svg.contains(r#"data-pit="c" data-count="2""#), "{svg}");
        assert!(svg.contains(r#"data-pit="opp-c" data-count="3""#), "{svg}");
        assert_eq!(svg.matches(r#"class="gs-seed""#).count(), 6);
        // The game's own error for a bad board.
        assert!(picture("awari", &p, "1,2").is_err());
    }

    #[test]
    fn connect4_any_size_and_base() {
        let p = params(&[("width", "12"), ("height", "11"), ("base", "0")]);
        let svg = picture("connect4", &p, "0b0b").unwrap().unwrap();
        well_formed(&svg);
        assert!(svg.contains(r#"data-cols="12" data-rows="11""#));
        assert_eq!(players(&svg), (2, 2));
        assert!(svg.contains(">b</text>") && svg.contains(">0</text>"));
        assert_eq!(svg.matches("gs-win").count(), 0);
    }

    #[test]
    fn tictactoe_and_mnk() {
        // X: 1, 5, 9 (diagonal), O: 2, 3.
        let svg = picture("tictactoe", &Settings::new(), "12539")
            .unwrap()
            .unwrap();
        well_formed(&svg);
        assert_eq!(players(&svg), (3, 2));
        assert_eq!(svg.matches("gs-win").count(), 3);
        let p = params(&[("m", "5"), ("n", "4"), ("k", "4")]);
        let svg = picture("mnk", &p, "1,20,7").unwrap().unwrap();
        well_formed(&svg);
        assert!(svg.contains(r#"data-cols="5" data-rows="4""#));
        assert_eq!(players(&svg), (2, 1));
        let empty = picture("mnk", &p, "").unwrap().unwrap();
        assert_eq!(players(&empty), (0, 0));
    }

    #[test]
    fn winning_cells_only_on_lines_of_k() {
        let mut s = Stones {
            cols: 4,
            rows: 4,
            cells: vec![None; 16],
            last: None,
            k: 3,
            style: Style::Marks,
            col_labels: None,
        };
        for i in [0, 5, 10] {
            s.cells[i] = Some(1);
        }
        s.cells[3] = Some(0);
        s.cells[6] = Some(0);
        let w = winning_cells(&s);
        let marked: Vec<usize> = (0..16).filter(|&i| w[i]).collect();
        assert_eq!(marked, vec![0, 5, 10]);
    }

    #[test]
    fn bad_input_is_one_line_and_unknown_games_have_none() {
        let e = picture("connect4", &Settings::new(), "4444444").unwrap_err();
        assert!(e.contains("full") && !e.contains('\n'), "{e}");
        let e = picture("connect4", &params(&[("colour", "red")]), "").unwrap_err();
        assert!(e.contains("colour"), "{e}");
        let e = picture("tictactoe", &Settings::new(), "11").unwrap_err();
        assert!(!e.is_empty() && !e.contains('\n'));
        let e = picture("mnk", &params(&[("m", "0")]), "").unwrap_err();
        assert!(e.contains("'m=0' is out of bounds"), "{e}");
        // Issue 23: a product that overflows, or wraps to 0, is refused, not a panic.
        let huge = params(&[("m", "274177"), ("n", "67280421310721")]);
        assert!(picture("mnk", &huge, "").unwrap_err().contains("m=274177"));
        let e = picture("mnk", &params(&[("m", "200"), ("n", "200")]), "").unwrap_err();
        assert!(e.contains("not supported"), "{e}");
        assert_eq!(picture("tree", &Settings::new(), "").unwrap(), None);
        assert_eq!(picture("nosuchgame", &Settings::new(), "").unwrap(), None);
    }
    fn data_dir() -> std::path::PathBuf {
        crate::games::data::data_dir()
    }

    /// Every replayed line has its four old points on dots and its new dot on an empty point:
    /// checks the cross, the decoding of moves and the replay against the published records.
    fn lines_are_consistent(m: &MorpionPicture) {
        let mut dots: std::collections::HashSet<(i32, i32)> = m.cross.iter().copied().collect();
        assert_eq!(dots.len(), 36);
        for (i, (new, line)) in m.moves.iter().enumerate() {
            assert!(!dots.contains(new), "move {}: new dot already there", i + 1);
            assert!(line.contains(new));
            for p in line.iter().filter(|p| *p != new) {
                assert!(dots.contains(p), "move {}: point {p:?} is not a dot", i + 1);
            }
            dots.insert(*new);
        }
    }

    #[test]
    fn morpion_records_are_drawn_line_by_line() {
        let dir = data_dir().join("nrpa/morpion");
        for (file, variant, moves) in [
            ("5T_178_rosin.psol", "5T", 178),
            ("5D_82_rosin.psol", "5D", 82),
        ] {
            let text = std::fs::read_to_string(dir.join(file)).expect("record file");
            let game = Morpion::new(Morpion::parse_variant(variant).unwrap());
            let m = morpion_moves(&game, &text).unwrap();
            assert_eq!(m.moves.len(), moves, "{file}");
            lines_are_consistent(&m);
            let p = params(&[("variant", variant)]);
            let svg = picture("morpion", &p, &text).unwrap().unwrap();
            well_formed(&svg);
            assert_eq!(svg.matches("class=\"gs-line\"").count(), moves);
            assert_eq!(svg.matches("class=\"gs-dot\"").count(), 36 + moves);
        }
        let start = picture("morpion", &Settings::new(), "").unwrap().unwrap();
        well_formed(&start);
        assert_eq!(start.matches("class=\"gs-line\"").count(), 0);
        let e = picture("morpion", &Settings::new(), "(28,28)\n(0,0) - 0").unwrap_err();
        assert!(e.contains("move 1") && !e.contains('\n'), "{e}");
        let e = picture("morpion", &params(&[("variant", "6X")]), "").unwrap_err();
        assert!(e.contains("6X"), "{e}");
    }

    fn count_player(svg: &str, p: usize) -> usize {
        svg.matches(&format!(r#"data-player="{p}""#)).count()
    }

    #[test]
    fn othello_discs_match_the_position_on_any_size() {
        let svg = picture("othello", &Settings::new(), "").unwrap().unwrap();
        well_formed(&svg);
        assert_eq!(players(&svg), (2, 2));
        let g = Othello::new(8).unwrap();
        let s = g.parse_position("f5d6c3d3c4").unwrap();
        let svg = picture("othello", &Settings::new(), "f5d6c3d3c4")
            .unwrap()
            .unwrap();
        well_formed(&svg);
        assert_eq!(
            players(&svg),
            (
                s.discs[0].count_ones() as usize,
                s.discs[1].count_ones() as usize
            )
        );
        assert_eq!(svg.matches("gs-stone").count(), 9);
        // The last disc (c4) is ringed, and the squares are named as the notation names them.
        assert!(svg.contains(r##"data-square="c4" cx="168.0" cy="220.0" r="22.4" fill="#111111" stroke="#ff00aa""##), "{svg}");
        let p = params(&[("size", "6")]);
        let svg = picture("othello", &p, "c2").unwrap().unwrap();
        well_formed(&svg);
        assert!(svg.contains(r#"data-cols="6" data-rows="6""#));
        assert_eq!(players(&svg), (4, 1));
        assert!(picture("othello", &p, "h8")
            .unwrap_err()
            .contains("not a square"));
        assert!(picture("othello", &params(&[("size", "5")]), "").is_err());
    }

    #[test]
    fn rolit_discs_in_four_colours_and_the_neutral_disc() {
        use rand::{Rng, SeedableRng};
        let svg = picture("rolit", &Settings::new(), "").unwrap().unwrap();
        well_formed(&svg);
        for p in 0..4 {
            assert_eq!(count_player(&svg, p), 1);
        }
        assert_eq!(svg.matches("gs-neutral").count(), 0);
        // Random games on every size and player count: one disc drawn per disc on the board.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
        for players_n in [3usize, 4] {
            for size in [4usize, 6, 8] {
                let g = Rolit::new(players_n, size).unwrap();
                let mut s = g.initial_state();
                let mut moves = Vec::new();
                let plies = rng.gen_range(0..=size * size - 4);
                for _ in 0..plies {
                    g.legal_moves(&s, &mut moves);
                    g.apply(&mut s, moves[rng.gen_range(0..moves.len())]);
                }
                let text = g.format_position(&s);
                let pr = params(&[
                    ("players", &players_n.to_string()),
                    ("size", &size.to_string()),
                ]);
                let svg = picture("rolit", &pr, &text).unwrap().unwrap();
                well_formed(&svg);
                for p in 0..4 {
                    assert_eq!(
                        count_player(&svg, p),
                        s.discs[p].count_ones() as usize,
                        "{text}"
                    );
                }
                let neutral = if players_n == 3 {
                    s.discs[3].count_ones()
                } else {
                    0
                };
                assert_eq!(svg.matches("gs-neutral").count(), neutral as usize);
                assert_eq!(svg.matches("gs-stone").count(), 4 + plies);
            }
        }
    }

    #[test]
    fn backgammon_draws_every_checker() {
        let svg = picture("backgammon", &Settings::new(), "start")
            .unwrap()
            .unwrap();
        well_formed(&svg);
        assert_eq!(svg.matches("gs-checker").count(), 30);
        assert_eq!(players(&svg), (15, 15));
        let on = |svg: &str, player: usize, point: &str| {
            svg.matches(&format!(r#"data-player="{player}" data-point="{point}""#))
                .count()
        };
        // X: 2 on 24, 5 on 13, 3 on 8, 5 on 6; O the mirror image (X's points 1, 12, 17, 19).
        for (pt, n) in [("24", 2), ("13", 5), ("8", 3), ("6", 5)] {
            assert_eq!(on(&svg, 0, pt), n, "X on {pt}");
        }
        for (pt, n) in [("1", 2), ("12", 5), ("17", 3), ("19", 5)] {
            assert_eq!(on(&svg, 1, pt), n, "O on {pt}");
        }
        // A position with a checker on the bar and checkers borne off.
        let text = "0,0,0,3,4,5,0,0,0,0,0,0,0,0,0,0,0,0,-5,0,0,0,0,-5 1-0 X 31";
        let svg = picture("backgammon", &Settings::new(), text)
            .unwrap()
            .unwrap();
        well_formed(&svg);
        assert_eq!(svg.matches("gs-checker").count(), 30);
        assert_eq!(on(&svg, 0, "bar"), 1);
        assert_eq!(on(&svg, 0, "off"), 2);
        assert_eq!(on(&svg, 1, "off"), 5);
        assert_eq!(on(&svg, 0, "6"), 5);
        assert_eq!(on(&svg, 1, "24"), 5);
        assert!(svg.contains("dice 3 1"));
        let p = BgPoints::from_notation(text).unwrap();
        assert_eq!(
            (p.bar, p.off, p.mover, p.dice),
            ([1, 0], [2, 5], 0, Some((3, 1)))
        );
        assert!(picture("backgammon", &Settings::new(), "nonsense").is_err());
        assert!(picture("backgammon", &params(&[("x", "1")]), "start").is_err());
    }
}
