//! Game modules: a game written as a sandboxed WebAssembly module (ABI v1 or v2,
//! docs/GAME_MODULES.md) and run as a game of the model, with exactly the capabilities it
//! declares.
//!
//! [`load`] compiles a module once per process (cached by SHA-256), reads its description and
//! probes it with random games; [`ModuleGame::new`] builds one game from its parameters. A
//! position is the module's opaque byte string, kept by the host with its decoded status and the
//! plies played since the root; undo and clone are host-side copies.
//!
//! Speed: with ABI v2 one call per move (`gs_step`) plays it and returns the new position's
//! facts (moves, hash, immediate value, utilities). The hash, the immediate value and the
//! utilities travel with the position; the moves stay in the module's I/O area and are read
//! from there while no other call has overwritten them.
//!
//! A module can misbehave at any call (trap, fuel, memory, an answer outside the ABI). The
//! model's methods cannot return errors, so the game records the first fault, from then on
//! answers every question as if each position were terminal with no moves (so every kernel
//! unwinds), and the job reports the fault ([`ModuleGame::fault`]) instead of its result.

pub mod abi;
mod runtime;
#[cfg(test)]
mod tests;

pub use abi::Info;
pub use runtime::{cached, Loaded};

use crate::games::Exact;
use crate::model::single::SinglePlayer;
use crate::model::{Game, Hashed, MoveCodes, NotationError, Picture, Tactics, Turn, ZeroSum};
use abi::{Status, KIND_CHANCE, KIND_PLAYER, KIND_TERMINAL};
use runtime::Inst;
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// One line of at most 200 characters of a module's message.
pub(crate) fn clip_message(text: &str) -> String {
    let line = crate::model::one_line(text);
    match line.char_indices().nth(200) {
        Some((i, _)) => format!("{}...", &line[..i]),
        None => line,
    }
}

/// A module's binary bytes: `bytes` as they are when binary WebAssembly, else the text format
/// (`(module ...)`) assembled. The module's name in jobs is the SHA-256 of these bytes.
pub fn binary(bytes: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, String> {
    if bytes.len() > abi::MAX_MODULE_BYTES {
        return Err(format!(
            "module of {} bytes, more than the {} accepted",
            bytes.len(),
            abi::MAX_MODULE_BYTES
        ));
    }
    if bytes.starts_with(b"\0asm") {
        return Ok(std::borrow::Cow::Borrowed(bytes));
    }
    wat::parse_bytes(bytes)
        .map_err(|e| format!("not a WebAssembly module: {}", clip_message(&e.to_string())))
}

/// Loads a module from its bytes: binary WebAssembly, or the text format (`(module ...)`).
/// Compiles it (once per process), checks that it imports nothing and declares a sane game,
/// probes it with random games under its default parameters, and keeps it for jobs that name
/// it (`module:<sha256>`).
pub fn load(bytes: &[u8]) -> Result<Arc<Loaded>, String> {
    let wasm = binary(bytes)?;
    let loaded = runtime::compile(&wasm).map_err(|e| format!("module: {e}"))?;
    if cached(&loaded.sha256).is_some() {
        return Ok(loaded);
    }
    probe(&loaded).map_err(|e| match e.starts_with("module game ") {
        true => e,
        false => format!("module game {}: {e}", loaded.name),
    })?;
    runtime::keep(&loaded);
    Ok(loaded)
}

/// The module `sha256`: the one this process keeps, else fetched from the artifact source that
/// the process installed (a coordinator's own folder; the coordinator over HTTP, with a local
/// cache, in a worker), checked against the hash and loaded. `Ok(None)`: no source knows it.
pub fn find(sha256: &str) -> Result<Option<Arc<Loaded>>, String> {
    use crate::search::retrograde::artifacts as files;
    if let Some(l) = cached(sha256) {
        return Ok(Some(l));
    }
    if !files::is_name(sha256) {
        return Ok(None);
    }
    let Some((source, _)) = files::source() else {
        return Ok(None);
    };
    if source
        .size(sha256)
        .is_some_and(|n| n > abi::MAX_MODULE_BYTES as u64)
    {
        return Err(format!(
            "artifact {sha256} is not a game module (too large)"
        ));
    }
    let Ok(bytes) = source.get(sha256) else {
        return Ok(None);
    };
    files::check(sha256, &bytes)?;
    if !bytes.starts_with(b"\0asm") {
        return Err(format!("artifact {sha256} is not a game module"));
    }
    let loaded = load(&bytes)?;
    Ok(Some(loaded))
}

/// Plays a few random games with the default parameters, checking every answer against the
/// ABI (statuses, moves, utilities, repeatable hashes, position text round trips).
fn probe(loaded: &Arc<Loaded>) -> Result<(), String> {
    const GAMES: u64 = 8;
    const PLIES: u64 = 20_000;
    let game = ModuleGame::new(loaded.clone(), &Default::default())?;
    game.with(|inst| {
        inst.want = abi::WANT_MOVES | abi::WANT_HASH | abi::WANT_IMMEDIATE | abi::WANT_RETURNS;
        Ok(())
    })?;
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut moves = Vec::new();
    let mut plies = 0;
    let mut out = vec![0.0; loaded.info.players];
    'games: for _ in 0..GAMES {
        let mut s = game.initial_state();
        loop {
            if let Some(f) = game.fault() {
                return Err(f);
            }
            let h = game.hash(&s);
            let text = game.format_position(&s);
            match game.parse_position(&text) {
                Ok(back) if back.bytes == s.bytes => {}
                Ok(_) => {
                    return Err(game.fault().unwrap_or(format!(
                        "position '{}' reads back as another position",
                        crate::model::excerpt(&text)
                    )))
                }
                Err(e) => {
                    return Err(game.fault().unwrap_or(format!(
                        "position '{}' does not read back: {e}",
                        crate::model::excerpt(&text)
                    )))
                }
            }
            if game.status_of(&s) != Some(s.status) {
                return Err("gs_status differs from the status gs_play returned".into());
            }
            if game.hash(&s) != h {
                return Err("gs_hash gave two hashes for one position".into());
            }
            if game.is_terminal(&s) {
                game.returns(&s, &mut out);
                break;
            }
            game.legal_moves(&s, &mut moves);
            if moves.is_empty() {
                break;
            }
            rng = rng
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let mv = moves[((rng >> 33) % moves.len() as u64) as usize];
            let before = s.clone();
            game.apply(&mut s, mv);
            if let Some(f) = game.fault() {
                return Err(f);
            }
            game.check_step(&s)?;
            let text = game.format_move(&before, mv);
            match game.parse_move(&before, &text) {
                Ok(back) if back == mv => {}
                _ => {
                    return Err(game.fault().unwrap_or(format!(
                        "move '{}' does not read back as itself",
                        crate::model::excerpt(&text)
                    )))
                }
            }
            plies += 1;
            if plies >= PLIES {
                break 'games;
            }
        }
    }
    match game.fault() {
        Some(f) => Err(f),
        None => Ok(()),
    }
}

/// Positions up to this many bytes are kept inline (no allocation per copy).
const INLINE: usize = 30;

/// A position's bytes.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Bytes {
    Inline(u8, [u8; INLINE]),
    Heap(Box<[u8]>),
}

impl Bytes {
    fn new(b: &[u8]) -> Bytes {
        if b.len() <= INLINE {
            let mut a = [0; INLINE];
            a[..b.len()].copy_from_slice(b);
            Bytes::Inline(b.len() as u8, a)
        } else {
            Bytes::Heap(b.into())
        }
    }
    #[inline]
    fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Inline(n, a) => &a[..*n as usize],
            Bytes::Heap(b) => b,
        }
    }
}

/// A module game's position: the module's bytes, their decoded status, the plies played since
/// the position the search started from (the host's ply cap counts them), and the facts
/// `gs_step` gave with it.
#[derive(Clone)]
pub struct Position {
    bytes: Bytes,
    status: Status,
    plies: u32,
    /// Which of `hash`, `immediate` and `utilities` hold (`abi::WANT_*` bits).
    known: u8,
    /// `gs_immediate`'s answer (`i32::MIN`: none).
    immediate: i32,
    hash: u64,
    /// The utilities of a finished game of one or two players.
    utilities: [f64; 2],
}

const KNOWN_HASH: u8 = abi::WANT_HASH as u8;
const KNOWN_IMMEDIATE: u8 = abi::WANT_IMMEDIATE as u8;
const KNOWN_RETURNS: u8 = abi::WANT_RETURNS as u8;

impl Position {
    fn new(bytes: Bytes, status: Status, plies: u32) -> Position {
        Position {
            bytes,
            status,
            plies,
            known: 0,
            immediate: i32::MIN,
            hash: 0,
            utilities: [0.0; 2],
        }
    }

    /// The module's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.bytes.as_slice()
    }
}

impl std::fmt::Debug for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Position(")?;
        for b in self.bytes() {
            write!(f, "{b:02x}")?;
        }
        write!(f, ", {:?}, ply {})", self.status, self.plies)
    }
}

const TERMINAL: Status = Status {
    kind: KIND_TERMINAL,
    player: 0,
};

/// Unique ids of built games (keys of the per-thread instances).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

struct Inner {
    loaded: Arc<Loaded>,
    id: u64,
    /// `name=value` lines of every declared parameter, given to `gs_init`.
    params: String,
    initial: OnceLock<Position>,
    fault: OnceLock<String>,
}

/// A game played by a module. Cheap to clone (shared); every clone shares the fault record.
#[derive(Clone)]
pub struct ModuleGame {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for ModuleGame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ModuleGame({})", self.inner.loaded.name)
    }
}

thread_local! {
    /// Calls to `hash` on this thread; every 64th is made twice and compared.
    static HASHES: Cell<u32> = const { Cell::new(0) };
}

impl ModuleGame {
    /// Builds the game with `params` (each a declared parameter, an integer within its
    /// bounds); bad parameters and a failing `gs_init` are `Err` with one line.
    pub fn new(loaded: Arc<Loaded>, params: &crate::wire::Settings) -> Result<Self, String> {
        for name in params.keys() {
            if !loaded.info.params.iter().any(|p| &p.name == name) {
                return Err(format!(
                    "unknown game parameter '{}' (declared: {})",
                    crate::model::excerpt(name),
                    if loaded.info.params.is_empty() {
                        "none".to_string()
                    } else {
                        loaded
                            .info
                            .params
                            .iter()
                            .map(|p| p.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ));
            }
        }
        let mut text = String::new();
        for p in &loaded.info.params {
            let v = match params.get(&p.name) {
                None => p.default,
                Some(t) => match t.trim().parse::<i64>() {
                    Ok(v) if (p.min..=p.max).contains(&v) => v,
                    _ => {
                        return Err(format!(
                            "game parameter {}: '{}' is not an integer in {}..={}",
                            p.name,
                            crate::model::excerpt(t),
                            p.min,
                            p.max
                        ))
                    }
                },
            };
            text.push_str(&format!("{}={v}\n", p.name));
        }
        let game = ModuleGame {
            inner: Arc::new(Inner {
                loaded,
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                params: text,
                initial: OnceLock::new(),
                fault: OnceLock::new(),
            }),
        };
        game.with(|_| Ok(()))?;
        Ok(game)
    }

    /// What the module declares.
    pub fn info(&self) -> &Info {
        &self.inner.loaded.info
    }

    /// The module.
    pub fn loaded(&self) -> &Arc<Loaded> {
        &self.inner.loaded
    }

    /// The first fault of the module in this game, as one line, if any.
    pub fn fault(&self) -> Option<String> {
        self.inner.fault.get().cloned()
    }

    #[inline]
    fn faulted(&self) -> bool {
        self.inner.fault.get().is_some()
    }

    fn record(&self, msg: String) {
        let _ = self
            .inner
            .fault
            .set(format!("module game {}: {msg}", self.inner.loaded.name));
    }

    /// Runs `f` on this thread's instance, creating it (and running `gs_init`) when missing.
    #[inline]
    fn with<T>(&self, f: impl FnOnce(&mut Inst) -> Result<T, String>) -> Result<T, String> {
        let inner = &*self.inner;
        runtime::with_instance(
            inner.id,
            || {
                let mut inst = runtime::instantiate(&inner.loaded)?;
                let p = inner.params.as_bytes();
                inst.write("gs_init", 0, p)?;
                let w = inst.call("gs_init", |f| Some(&f.init), p.len() as i32)?;
                let w = match inst.word_or_message("gs_init", w)? {
                    Ok(w) => w,
                    Err(msg) => return Err(format!("gs_init refused the parameters: {msg}")),
                };
                let status = inst.status("gs_init", w, &inner.loaded.info)?;
                let n = inner.loaded.info.position_bytes;
                let start = Position::new(Bytes::new(inst.read("gs_init", 0, n)?), status, 0);
                let first = inner.initial.get_or_init(|| start.clone());
                if first.bytes != start.bytes || first.status != start.status {
                    return Err("gs_init gave two different initial positions".into());
                }
                Ok(inst)
            },
            f,
        )
    }

    /// `f` on the instance; a failure becomes the fault.
    #[inline]
    fn run<T>(&self, f: impl FnOnce(&mut Inst) -> Result<T, String>) -> Option<T> {
        if self.faulted() {
            return None;
        }
        match self.with(f) {
            Ok(v) => Some(v),
            Err(e) => {
                self.record(e);
                None
            }
        }
    }

    /// `f` on the instance with `s` in the I/O area (written there unless `gs_step` just left
    /// it there); a failure becomes the fault.
    #[inline]
    fn at<T>(&self, s: &Position, f: impl FnOnce(&mut Inst) -> Result<T, String>) -> Option<T> {
        self.run(|inst| {
            if !(inst.facts && inst.facts_of == s.bytes()) {
                inst.write("position", 0, s.bytes())?;
            }
            f(inst)
        })
    }

    /// The status `gs_status` gives for `s` (`None` after a fault).
    fn status_of(&self, s: &Position) -> Option<Status> {
        let info = self.info();
        self.at(s, |inst| {
            let w = inst.call("gs_status", |f| Some(&f.status), ())?;
            inst.status("gs_status", w, info)
        })
    }

    /// Utilities of a terminal position, checked against the declared range.
    fn utilities(&self, s: &Position, out: &mut [f64]) -> bool {
        let n = self.info().players;
        if s.known & KNOWN_RETURNS != 0 && !self.faulted() {
            out[..n].copy_from_slice(&s.utilities[..n]);
            return true;
        }
        let ok = self.at(s, |inst| v1_utilities(inst, self.info(), out));
        if ok.is_none() {
            out.iter_mut().take(n).for_each(|o| *o = 0.0);
        }
        ok.is_some()
    }

    /// With ABI v2, checks the facts `gs_step` gave with `s` (still in the I/O area when `s`
    /// was just played) against the version 1 exports: the load-time probe's check.
    fn check_step(&self, s: &Position) -> Result<(), String> {
        let info = self.info();
        let mut listed = Vec::new();
        self.legal_moves(s, &mut listed);
        let r = self.at(s, |inst| {
            if inst.f.step.is_none() {
                return Ok(());
            }
            if s.status.kind == KIND_PLAYER {
                let mut moves = Vec::new();
                v1_moves(inst, info, &mut moves)?;
                if moves != listed {
                    return Err("gs_step listed other moves than gs_moves".into());
                }
            }
            // Each call may have written over the position: it is written again before each.
            inst.write("position", 0, s.bytes())?;
            if s.known & KNOWN_HASH != 0 && v1_hash(inst)? != s.hash {
                return Err("gs_step gave another hash than gs_hash".into());
            }
            inst.write("position", 0, s.bytes())?;
            if s.known & KNOWN_IMMEDIATE != 0
                && v1_immediate(inst, info)?.unwrap_or(i32::MIN) != s.immediate
            {
                return Err("gs_step gave another immediate value than gs_immediate".into());
            }
            inst.write("position", 0, s.bytes())?;
            if s.known & KNOWN_RETURNS != 0 {
                let mut out = [0.0; abi::MAX_PLAYERS];
                v1_utilities(inst, info, &mut out)?;
                if out[..info.players] != s.utilities[..info.players] {
                    return Err("gs_step gave other utilities than gs_returns".into());
                }
            }
            Ok(())
        });
        match (r, self.fault()) {
            (_, Some(f)) => Err(f),
            _ => Ok(()),
        }
    }

    /// Reads a text the module wrote (length `w`, or its error message when `w < 0`).
    fn text_result(inst: &mut Inst, name: &str, w: i32) -> Result<Result<String, String>, String> {
        match inst.word_or_message(name, w)? {
            Ok(len) => inst.text(name, len, abi::MAX_TEXT).map(Ok),
            Err(msg) => Ok(Err(msg)),
        }
    }
}

/// `gs_moves` on the position in the I/O area, checked, into `moves`.
fn v1_moves(inst: &mut Inst, info: &Info, moves: &mut Vec<u32>) -> Result<(), String> {
    let n = inst.call("gs_moves", |f| Some(&f.moves), ())?;
    read_moves(inst, info, "gs_moves", 0, n, moves)
}

/// Checks and reads `n` moves that `name` wrote at `at` of the I/O area.
fn read_moves(
    inst: &mut Inst,
    info: &Info,
    name: &str,
    at: usize,
    n: i32,
    moves: &mut Vec<u32>,
) -> Result<(), String> {
    let len = if n <= 0 || n as usize > info.max_moves {
        0
    } else {
        4 * n as usize
    };
    let b = inst.read(name, at, len)?;
    moves_from(name, info, b, n, moves)
}

/// Checks and reads the `n` moves `name` wrote at the start of `b`.
fn moves_from(
    name: &str,
    info: &Info,
    b: &[u8],
    n: i32,
    moves: &mut Vec<u32>,
) -> Result<(), String> {
    if n <= 0 || n as usize > info.max_moves {
        return Err(format!(
            "{name} listed {n} moves at a position that is not over (1..={} expected)",
            info.max_moves
        ));
    }
    moves.clear();
    for c in b[..4 * n as usize].chunks_exact(4) {
        let mv = u32::from_le_bytes(c.try_into().expect("4 bytes"));
        if mv > i32::MAX as u32 || info.move_bound.is_some_and(|m| mv >= m) {
            return Err(format!(
                "{name} listed move {mv}, outside the declared range"
            ));
        }
        moves.push(mv);
    }
    Ok(())
}

/// `gs_hash` on the position in the I/O area.
fn v1_hash(inst: &mut Inst) -> Result<u64, String> {
    inst.call("gs_hash", |f| Some(&f.hash), ())
        .map(|h| h as u64)
}

/// `gs_immediate` on the position in the I/O area, checked (`None` without the export).
fn v1_immediate(inst: &mut Inst, info: &Info) -> Result<Option<i32>, String> {
    if inst.f.immediate.is_none() {
        return Ok(None);
    }
    let v = inst.call("gs_immediate", |f| f.immediate.as_ref(), ())?;
    check_immediate("gs_immediate", info, v)
}

/// An immediate value word: `None` for `i32::MIN`, else it must lie in the value window.
fn check_immediate(name: &str, info: &Info, v: i32) -> Result<Option<i32>, String> {
    let (lo, hi) = (info.min_value, info.max_value);
    match v {
        i32::MIN => Ok(None),
        v if (lo..=hi).contains(&v) => Ok(Some(v)),
        v => Err(format!("{name} gave {v}, outside {lo}..={hi}")),
    }
}

/// `gs_returns` on the position in the I/O area, checked, into `out`.
fn v1_utilities(inst: &mut Inst, info: &Info, out: &mut [f64]) -> Result<(), String> {
    let w = inst.call("gs_returns", |f| Some(&f.returns), ())?;
    if w != 0 {
        return Err(format!("gs_returns returned {w}"));
    }
    let b = inst.read("gs_returns", 0, 8 * info.players)?;
    utilities_from("gs_returns", info, b, out)
}

/// Checks and reads the utilities `name` wrote at the start of `b`: within the declared range,
/// and integers summing to 0 in a zero-sum game.
fn utilities_from(name: &str, info: &Info, b: &[u8], out: &mut [f64]) -> Result<(), String> {
    let n = info.players;
    let mut sum = 0.0;
    for (i, o) in out.iter_mut().take(n).enumerate() {
        let v = f64::from_le_bytes(b[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        if !(v >= info.min_value as f64 && v <= info.max_value as f64) {
            return Err(format!(
                "{name} gave player {i} {v}, outside {}..={}",
                info.min_value, info.max_value
            ));
        }
        if info.zero_sum && v.fract() != 0.0 {
            return Err(format!("{name} gave {v}, not an integer"));
        }
        sum += v;
        *o = v;
    }
    if info.zero_sum && sum != 0.0 {
        return Err(format!(
            "{name}: utilities of a zero-sum game do not sum to 0"
        ));
    }
    Ok(())
}

/// `gs_step` (ABI v2) with the position in the I/O area: the new position with the facts the
/// instance wants; its moves stay in the I/O area (`Inst::facts`).
fn step_v2(inst: &mut Inst, info: &Info, mv: u32) -> Result<Position, String> {
    let want = inst.want;
    let w = inst.call("gs_step", |f| f.step.as_ref(), (mv as i32, want))?;
    let w = match inst.word_or_message("gs_step", w)? {
        Ok(w) => w,
        Err(msg) => return Err(format!("gs_step refused move {mv}: {msg}")),
    };
    let status = inst.status("gs_step", w, info)?;
    let pb = info.position_bytes;
    let at = abi::facts_at(pb);
    // One read: the position, the facts' head, and room for the utilities of a finished game.
    let b = inst.read("gs_step", 0, at + 16 + 8 * info.players.min(2))?;
    let mut p = Position::new(Bytes::new(&b[..pb]), status, 0);
    let hash = u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
    let immediate = i32::from_le_bytes(b[at + 8..at + 12].try_into().expect("4 bytes"));
    if want & abi::WANT_HASH != 0 {
        p.hash = hash;
        p.known |= KNOWN_HASH;
    }
    match status.kind {
        KIND_PLAYER => {
            if want & abi::WANT_IMMEDIATE != 0 {
                p.immediate = check_immediate("gs_step", info, immediate)?.unwrap_or(i32::MIN);
                p.known |= KNOWN_IMMEDIATE;
            }
            inst.facts = true;
            inst.facts_of.clear();
            inst.facts_of.extend_from_slice(p.bytes());
        }
        KIND_TERMINAL if want & abi::WANT_RETURNS != 0 && info.players <= 2 => {
            utilities_from("gs_step", info, &b[at + 16..], &mut p.utilities)?;
            p.known |= KNOWN_RETURNS;
        }
        _ => {}
    }
    Ok(p)
}

impl Game for ModuleGame {
    type State = Position;
    type Move = u32;

    fn name(&self) -> &'static str {
        self.inner.loaded.name
    }
    fn num_players(&self) -> usize {
        self.info().players
    }
    fn initial_state(&self) -> Position {
        match self.inner.initial.get() {
            Some(p) => p.clone(),
            None => Position::new(
                Bytes::new(&vec![0; self.info().position_bytes]),
                TERMINAL,
                0,
            ),
        }
    }
    #[inline]
    fn turn(&self, s: &Position) -> Turn {
        if self.faulted() {
            return Turn::Terminal;
        }
        match s.status.kind {
            KIND_PLAYER => Turn::Player(s.status.player),
            KIND_CHANCE => Turn::Chance,
            _ => Turn::Terminal,
        }
    }
    fn legal_moves(&self, s: &Position, moves: &mut Vec<u32>) {
        moves.clear();
        if s.status.kind == KIND_TERMINAL {
            return;
        }
        let info = self.info();
        let ok = self.run(|inst| {
            if inst.facts && inst.facts_of == s.bytes() {
                // gs_step's list, still in the I/O area: its count, then the moves.
                let at = abi::facts_at(info.position_bytes);
                let b = inst.read("gs_step", at + 12, 4 + 4 * info.max_moves)?;
                let n = i32::from_le_bytes(b[..4].try_into().expect("4 bytes"));
                return moves_from("gs_step", info, &b[4..], n, moves);
            }
            inst.write("position", 0, s.bytes())?;
            v1_moves(inst, info, moves)
        });
        if ok.is_none() {
            moves.clear();
        }
    }
    #[inline]
    fn apply(&self, s: &mut Position, mv: u32) {
        let info = self.info();
        let r = self.at(s, |inst| match inst.f.step {
            Some(_) => step_v2(inst, info, mv),
            None => {
                let w = inst.call("gs_play", |f| Some(&f.play), mv as i32)?;
                let w = match inst.word_or_message("gs_play", w)? {
                    Ok(w) => w,
                    Err(msg) => return Err(format!("gs_play refused move {mv}: {msg}")),
                };
                let status = inst.status("gs_play", w, info)?;
                let bytes = Bytes::new(inst.read("gs_play", 0, info.position_bytes)?);
                Ok(Position::new(bytes, status, 0))
            }
        });
        let plies = s.plies + 1;
        match r {
            Some(p) if plies as u64 > info.max_plies && p.status.kind != KIND_TERMINAL => {
                self.record(format!(
                    "the game did not end within max_plies = {} plies",
                    info.max_plies
                ));
                s.status = TERMINAL;
                s.known = 0;
            }
            Some(mut p) => {
                p.plies = plies;
                *s = p;
            }
            None => {
                s.status = TERMINAL;
                s.known = 0;
            }
        }
        s.plies = plies;
    }
    fn returns(&self, s: &Position, out: &mut [f64]) {
        self.utilities(s, out);
    }

    fn parse_position(&self, text: &str) -> Result<Position, NotationError> {
        let info = self.info();
        if text.len() > abi::MAX_TEXT.min(info.io_bytes) {
            return Err(NotationError::new(format!(
                "position text of {} bytes, more than this game reads",
                text.len()
            )));
        }
        if let Some(f) = self.fault() {
            return Err(NotationError::new(f));
        }
        let r = self.with(|inst| {
            inst.write("gs_parse_position", 0, text.as_bytes())?;
            let w = inst.call(
                "gs_parse_position",
                |f| Some(&f.parse_position),
                text.len() as i32,
            )?;
            match inst.word_or_message("gs_parse_position", w)? {
                Ok(w) => {
                    let status = inst.status("gs_parse_position", w, info)?;
                    let bytes =
                        Bytes::new(inst.read("gs_parse_position", 0, info.position_bytes)?);
                    Ok(Ok(Position::new(bytes, status, 0)))
                }
                Err(msg) => Ok(Err(msg)),
            }
        });
        match r {
            Ok(Ok(p)) => Ok(p),
            Ok(Err(msg)) => Err(NotationError::new(msg)),
            Err(e) => {
                self.record(e);
                Err(NotationError::new(self.fault().unwrap_or_default()))
            }
        }
    }
    fn format_position(&self, s: &Position) -> String {
        let r = self.at(s, |inst| {
            let w = inst.call("gs_format_position", |f| Some(&f.format_position), ())?;
            Self::text_result(inst, "gs_format_position", w)?
        });
        r.unwrap_or_else(|| "?".into())
    }
    fn parse_move(&self, s: &Position, text: &str) -> Result<u32, NotationError> {
        let info = self.info();
        if text.len() > abi::MAX_TEXT.min(info.io_bytes - info.position_bytes) {
            return Err(NotationError::new("move text too long").with_fragment(text));
        }
        if let Some(f) = self.fault() {
            return Err(NotationError::new(f));
        }
        let r = self.at(s, |inst| {
            inst.write("gs_parse_move", info.position_bytes, text.as_bytes())?;
            let w = inst.call("gs_parse_move", |f| Some(&f.parse_move), text.len() as i32)?;
            inst.word_or_message("gs_parse_move", w)
        });
        let mv = match r {
            Some(Ok(mv)) => mv as u32,
            Some(Err(msg)) => return Err(NotationError::new(msg).with_fragment(text.trim())),
            None => return Err(NotationError::new(self.fault().unwrap_or_default())),
        };
        let mut moves = Vec::new();
        self.legal_moves(s, &mut moves);
        if !moves.contains(&mv) {
            return Err(NotationError::new("not a legal move here").with_fragment(text.trim()));
        }
        Ok(mv)
    }
    fn format_move(&self, s: &Position, mv: u32) -> String {
        let r = self.at(s, |inst| {
            let w = inst.call("gs_format_move", |f| Some(&f.format_move), mv as i32)?;
            Self::text_result(inst, "gs_format_move", w)?
        });
        r.unwrap_or_else(|| "?".into())
    }
    fn same_state(&self, a: &Position, b: &Position) -> bool {
        a.bytes == b.bytes
    }
}

impl Hashed for ModuleGame {
    const HASH_IS_KEY: bool = false;
    #[inline]
    fn hash(&self, s: &Position) -> u64 {
        let twice = HASHES.with(|c| {
            let n = c.get().wrapping_add(1);
            c.set(n);
            n % 64 == 0
        });
        if s.known & KNOWN_HASH != 0 && !twice {
            return s.hash;
        }
        self.at(s, |inst| {
            inst.want |= abi::WANT_HASH;
            let h = v1_hash(inst)?;
            let again = if s.known & KNOWN_HASH != 0 {
                s.hash
            } else if twice {
                v1_hash(inst)?
            } else {
                h
            };
            if again != h {
                return Err("gs_hash gave two hashes for one position".into());
            }
            Ok(h)
        })
        .unwrap_or(0)
    }
}

impl ZeroSum for ModuleGame {
    #[inline]
    fn side(&self, s: &Position) -> u8 {
        s.status.player.min(1)
    }
    fn terminal_value(&self, s: &Position) -> i32 {
        let mut out = [0.0; 2];
        self.utilities(s, &mut out);
        out[self.side(s) as usize] as i32
    }
    fn value_bounds(&self, _: &Position) -> (i32, i32) {
        (self.info().min_value, self.info().max_value)
    }
    #[inline]
    fn immediate_value(&self, s: &Position) -> Option<i32> {
        if !self.inner.loaded.immediate {
            return None;
        }
        if s.known & KNOWN_IMMEDIATE != 0 {
            return (s.immediate != i32::MIN && !self.faulted()).then_some(s.immediate);
        }
        self.at(s, |inst| {
            inst.want |= abi::WANT_IMMEDIATE;
            v1_immediate(inst, self.info())
        })
        .flatten()
    }
}

impl Tactics for ModuleGame {
    fn history_slots(&self) -> usize {
        self.info().move_bound.map_or(0, |m| 2 * m as usize)
    }
    fn history_slot(&self, s: &Position, mv: u32) -> usize {
        match self.info().move_bound {
            Some(m) => self.side(s) as usize * m as usize + mv.min(m - 1) as usize,
            None => 0,
        }
    }
}

impl Exact for ModuleGame {
    type Book = ();
}

impl MoveCodes for ModuleGame {
    fn code(&self, _: &Position, mv: u32) -> u64 {
        mv as u64
    }
}

impl SinglePlayer for ModuleGame {
    fn score(&self, s: &Position) -> f64 {
        let mut out = [0.0];
        self.utilities(s, &mut out);
        out[0]
    }
    fn code_space(&self) -> Option<usize> {
        self.info().move_bound.map(|m| m as usize)
    }
}

impl Picture for ModuleGame {}
