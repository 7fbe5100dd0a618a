//! Pictures of positions: standalone SVG boards for the dashboard and the job pages.
//!
//! [`picture`] is the only entry point callers need: it takes a job's game name, game
//! parameters and position notation, exactly as a `JobSpec` carries them, so the coordinator
//! never names a game. Each game with a picture implements [`Pictured`] here, through the
//! game's public interface only: the position is first parsed by the game itself (so a bad
//! position gives the game's own one-line error), then its moves are replayed with the game's
//! `parse_move` to learn where each stone went.
//!
//! Output contract: well-formed SVG, no external references (no fonts, images or scripts), a
//! root `<svg class="gs-board" data-game=NAME>`, one `class="gs-stone"` element per stone with
//! `data-player` 0 (first player) or 1, and `class="gs-win"` on stones of a completed line.
//! Morpion Solitaire draws the grid around the game, one `class="gs-dot"` per dot (new dots
//! carry `data-move`, their number in the sequence) and one `class="gs-line"` per line drawn.
//! Bad input (unknown parameter, illegal position) is `Err` with one line; a game without a
//! picture is `Ok(None)`; nothing panics.

use super::escape;
use crate::games::connect4::{Connect4, Word};
use crate::games::mnk::Mnk;
use crate::games::morpion::Morpion;
use crate::model::Game;
use crate::registry::Opts;
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
    let stones = match game {
        "tictactoe" => {
            params.finish().map_err(bad)?;
            MnkBoard {
                game: Mnk::tictactoe(),
                m: 3,
                n: 3,
                k: 3,
            }
            .stones(position)?
        }
        "mnk" => {
            let m = params.get_or("m", 3usize).map_err(bad)?;
            let n = params.get_or("n", 3usize).map_err(bad)?;
            let k = params.get_or("k", 3usize).map_err(bad)?;
            params.finish().map_err(bad)?;
            let game = Mnk::new(m, n, k)?;
            MnkBoard { game, m, n, k }.stones(position)?
        }
        "connect4" => {
            use crate::games::connect4::{word_size, Wide, WordSize};
            let width = params.get_or("width", 7u32).map_err(bad)?;
            let height = params.get_or("height", 6u32).map_err(bad)?;
            let base = params.get_or("base", 1u8).map_err(bad)?;
            params.finish().map_err(bad)?;
            match word_size(width, height, base)? {
                WordSize::U64 => Connect4::<u64>::new(width, height, base)?.stones(position)?,
                WordSize::U128 => Connect4::<u128>::new(width, height, base)?.stones(position)?,
                WordSize::W256 => {
                    Connect4::<Wide<4>>::new(width, height, base)?.stones(position)?
                }
                WordSize::W512 => {
                    Connect4::<Wide<8>>::new(width, height, base)?.stones(position)?
                }
            }
        }
        "morpion" => {
            let variant = params.get_or("variant", "5T".to_string()).map_err(bad)?;
            params.finish().map_err(bad)?;
            let game = Morpion::new(Morpion::parse_variant(&variant)?);
            let m = morpion_moves(&game, position)?;
            return Ok(Some(render_morpion(&variant.to_ascii_uppercase(), &m)));
        }
        _ => return Ok(None),
    };
    Ok(Some(render(game, &stones)))
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
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
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
        assert!(e.contains("not supported"), "{e}");
        assert_eq!(picture("tree", &Settings::new(), "").unwrap(), None);
        assert_eq!(picture("nosuchgame", &Settings::new(), "").unwrap(), None);
    }
    fn data_dir() -> std::path::PathBuf {
        match std::env::var_os("GAMESOLVER_DATA") {
            Some(d) => d.into(),
            None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"),
        }
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
}
