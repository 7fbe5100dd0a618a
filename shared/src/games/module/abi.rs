//! The ABI of game modules (versions 1 and 2): the names and codes both sides agree on, and the
//! module's self-description (`gs_describe`), parsed and checked. docs/GAME_MODULES.md is the contract;
//! this file is its executable half.

/// The newest ABI version this host speaks: version 1 and `gs_step`.
pub const ABI_VERSION: i32 = 2;
/// The oldest ABI version this host speaks (`gs_abi_version` must return one from this to
/// [`ABI_VERSION`]).
pub const MIN_ABI_VERSION: i32 = 1;

/// `gs_step`'s `want` bits: the facts of the new position the host asks for.
pub const WANT_MOVES: i32 = 1;
/// The hash.
pub const WANT_HASH: i32 = 2;
/// The immediate value (`gs_immediate`).
pub const WANT_IMMEDIATE: i32 = 4;
/// The utilities of a finished game.
pub const WANT_RETURNS: i32 = 8;

/// Where `gs_step` writes the facts in the I/O area: after the position, at the next multiple
/// of 8. From there: the hash (`i64`, 0..8), the immediate value (`i32`, 8..12), the number of
/// moves (`i32`, 12..16), then the moves (`u32` each) or the utilities (`f64` each), 16...
pub fn facts_at(position_bytes: usize) -> usize {
    position_bytes.div_ceil(8) * 8
}

/// The I/O area `gs_step` needs.
pub fn step_io_bytes(info: &Info) -> usize {
    facts_at(info.position_bytes) + 16 + (4 * info.max_moves).max(8 * info.players)
}

/// Largest module accepted, in bytes (binary or text).
pub const MAX_MODULE_BYTES: usize = 4 << 20;
/// Default cap on one instance's linear memory, in bytes.
pub const MEMORY_CAP: usize = 64 << 20;
/// Fuel (about one unit per WebAssembly instruction) one export call may burn.
pub const FUEL_PER_CALL: u64 = 10_000_000;
/// Largest position, in bytes.
pub const MAX_POSITION_BYTES: usize = 4096;
/// Most moves (or chance outcomes) one position may have.
pub const MAX_MOVES: usize = 4096;
/// Largest ply cap a module may declare.
pub const MAX_PLIES: u64 = 1_000_000;
/// Most players.
pub const MAX_PLAYERS: usize = 8;
/// Largest text (position, move, parameters, description, error message) crossing the ABI.
pub const MAX_TEXT: usize = 16 << 10;
/// Most declared parameters.
pub const MAX_PARAMS: usize = 16;

/// Status kinds (bits 8..9 of a status word; bits 0..7 are a player).
pub const KIND_PLAYER: i32 = 0;
/// A chance node.
pub const KIND_CHANCE: i32 = 1;
/// A terminal position; the player bits name who would be to move.
pub const KIND_TERMINAL: i32 = 2;

/// A declared integer parameter of the game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// Its name (`[a-z0-9_]`, 1 to 32 characters).
    pub name: String,
    /// Smallest accepted value.
    pub min: i64,
    /// Largest accepted value.
    pub max: i64,
    /// Value when the job does not give it.
    pub default: i64,
    /// One line of help.
    pub help: String,
}

/// What a module declares about its game (`gs_describe`), checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Info {
    /// The game's name (`[a-z0-9_-]`, 1 to 32 characters).
    pub name: String,
    /// Players, not counting chance (1 to [`MAX_PLAYERS`]).
    pub players: usize,
    /// Two players, utilities summing to zero.
    pub zero_sum: bool,
    /// The game has chance nodes.
    pub chance: bool,
    /// Smallest utility of any player.
    pub min_value: i32,
    /// Largest utility of any player.
    pub max_value: i32,
    /// Every position is exactly this many bytes.
    pub position_bytes: usize,
    /// Most moves of one position.
    pub max_moves: usize,
    /// Moves are below this number, when declared (enables the history heuristic and NRPA's
    /// dense codes).
    pub move_bound: Option<u32>,
    /// No game lasts longer than this from any position (the host enforces it).
    pub max_plies: u64,
    /// `gs_hash` is injective.
    pub hash_is_key: bool,
    /// Size of the I/O area at `gs_io()`.
    pub io_bytes: usize,
    /// Declared parameters, in order.
    pub params: Vec<Param>,
}

impl Info {
    /// The declaration as JSON (what the service shows of an uploaded module).
    pub fn summary(&self) -> serde_json::Value {
        let params: Vec<_> = self
            .params
            .iter()
            .map(|p| {
                serde_json::json!({
                    "name": p.name, "min": p.min, "max": p.max, "default": p.default,
                    "help": p.help,
                })
            })
            .collect();
        serde_json::json!({
            "name": self.name,
            "players": self.players,
            "zero_sum": self.zero_sum,
            "chance": self.chance,
            "min_value": self.min_value,
            "max_value": self.max_value,
            "max_moves": self.max_moves,
            "max_plies": self.max_plies,
            "params": params,
        })
    }
}

fn bad(line: usize, msg: impl std::fmt::Display) -> String {
    format!("gs_describe line {line}: {msg}")
}

fn ident(s: &str, extra: &str) -> bool {
    (1..=32).contains(&s.len())
        && s.bytes().all(|b| {
            b.is_ascii_lowercase()
                || b.is_ascii_digit()
                || b == b'_'
                || extra.as_bytes().contains(&b)
        })
}

impl Info {
    /// Parses and checks the description text: `key=value` lines (see docs/GAME_MODULES.md).
    pub fn parse(text: &str) -> Result<Info, String> {
        let mut kv: Vec<(usize, &str, &str)> = Vec::new();
        let mut params = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((k, v)) = line.split_once('=') else {
                return Err(bad(i + 1, "not key=value"));
            };
            let (k, v) = (k.trim(), v.trim());
            if k == "param" {
                params.push(Self::param(i + 1, v)?);
                continue;
            }
            if kv.iter().any(|e| e.1 == k) {
                return Err(bad(
                    i + 1,
                    format!("'{}' given twice", crate::model::excerpt(k)),
                ));
            }
            kv.push((i + 1, k, v));
        }
        let get = |k: &str| kv.iter().find(|e| e.1 == k).map(|e| (e.0, e.2));
        let num = |k: &str, lo: i64, hi: i64, default: Option<i64>| -> Result<i64, String> {
            match get(k) {
                None => default.ok_or_else(|| format!("gs_describe: '{k}' is missing")),
                Some((line, v)) => match v.parse::<i64>() {
                    Ok(n) if (lo..=hi).contains(&n) => Ok(n),
                    _ => Err(bad(line, format!("{k} must be an integer in {lo}..={hi}"))),
                },
            }
        };
        for &(line, k, _) in &kv {
            const KEYS: &[&str] = &[
                "name",
                "players",
                "zero_sum",
                "chance",
                "min_value",
                "max_value",
                "position_bytes",
                "max_moves",
                "move_bound",
                "max_plies",
                "hash_is_key",
                "io_bytes",
            ];
            if !KEYS.contains(&k) {
                return Err(bad(
                    line,
                    format!("unknown key '{}'", crate::model::excerpt(k)),
                ));
            }
        }
        let name = match get("name") {
            Some((_, v)) if ident(v, "-") => v.to_string(),
            Some((line, _)) => return Err(bad(line, "name must be 1 to 32 of [a-z0-9_-]")),
            None => return Err("gs_describe: 'name' is missing".into()),
        };
        let players = num("players", 1, MAX_PLAYERS as i64, None)? as usize;
        let zero_sum = num("zero_sum", 0, 1, Some(0))? == 1;
        let chance = num("chance", 0, 1, Some(0))? == 1;
        let min_value = num("min_value", i32::MIN as i64 + 1, i32::MAX as i64, None)? as i32;
        let max_value = num("max_value", i32::MIN as i64 + 1, i32::MAX as i64, None)? as i32;
        let position_bytes = num("position_bytes", 1, MAX_POSITION_BYTES as i64, None)? as usize;
        let max_moves = num("max_moves", 1, MAX_MOVES as i64, None)? as usize;
        let move_bound = match get("move_bound") {
            None => None,
            Some(_) => Some(num("move_bound", 1, 1 << 20, None)? as u32),
        };
        let max_plies = num("max_plies", 1, MAX_PLIES as i64, None)? as u64;
        let hash_is_key = num("hash_is_key", 0, 1, Some(0))? == 1;
        let io_bytes = num("io_bytes", 1, 1 << 24, None)? as usize;
        if min_value > max_value {
            return Err("gs_describe: min_value is above max_value".into());
        }
        if zero_sum && (players != 2 || min_value != -max_value) {
            return Err(
                "gs_describe: a zero-sum game has 2 players and min_value = -max_value".into(),
            );
        }
        let need = position_bytes
            .max(max_moves * if chance { 12 } else { 4 })
            .max(players * 8)
            .max(position_bytes + 256);
        if io_bytes < need {
            return Err(format!(
                "gs_describe: io_bytes must be at least {need} for these sizes"
            ));
        }
        if params.len() > MAX_PARAMS {
            return Err(format!("gs_describe: more than {MAX_PARAMS} parameters"));
        }
        for (i, p) in params.iter().enumerate() {
            if params[..i].iter().any(|q: &Param| q.name == p.name) {
                return Err(format!(
                    "gs_describe: parameter '{}' declared twice",
                    p.name
                ));
            }
        }
        Ok(Info {
            name,
            players,
            zero_sum,
            chance,
            min_value,
            max_value,
            position_bytes,
            max_moves,
            move_bound,
            max_plies,
            hash_is_key,
            io_bytes,
            params,
        })
    }

    /// `param=NAME MIN MAX DEFAULT help text`.
    fn param(line: usize, v: &str) -> Result<Param, String> {
        let mut it = v.splitn(5, ' ');
        let mut field = || it.next().unwrap_or("").trim();
        let name = field().to_string();
        let (min, max, default) = (field().parse(), field().parse(), field().parse());
        let help = field().to_string();
        if !ident(&name, "") {
            return Err(bad(line, "a parameter name is 1 to 32 of [a-z0-9_]"));
        }
        match (min, max, default) {
            (Ok(min), Ok(max), Ok(default)) if min <= default && default <= max => Ok(Param {
                name,
                min,
                max,
                default,
                help,
            }),
            _ => Err(bad(
                line,
                "param=NAME MIN MAX DEFAULT HELP with MIN <= DEFAULT <= MAX",
            )),
        }
    }
}

/// A decoded status word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    /// [`KIND_PLAYER`], [`KIND_CHANCE`] or [`KIND_TERMINAL`].
    pub kind: i32,
    /// The player to move (at terminal positions: who would be).
    pub player: u8,
}

impl Status {
    /// Decodes `word` for a game of `players` players; `None` when it is not a status.
    pub fn decode(word: i32, players: usize, chance: bool) -> Option<Status> {
        let (kind, player) = (word >> 8, (word & 0xff) as usize);
        let ok = word >= 0
            && player < players
            && match kind {
                KIND_PLAYER | KIND_TERMINAL => true,
                KIND_CHANCE => chance,
                _ => false,
            };
        ok.then_some(Status {
            kind,
            player: player as u8,
        })
    }
}
