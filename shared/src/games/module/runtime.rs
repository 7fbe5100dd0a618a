//! The sandbox: one wasmtime engine per process, modules compiled once and cached by the
//! SHA-256 of their bytes, and instances (one per game and thread, at most [`SLOTS`] per
//! thread) whose calls are metered by fuel and whose memory is capped by a resource limiter.
//!
//! Nothing here panics on a module's behaviour: every failure (trap, fuel, memory, a result
//! outside the ABI) is an `Err` with one line naming the export.

use super::abi::{self, Info, Status, FUEL_PER_CALL, MEMORY_CAP};
use sha2::{Digest, Sha256};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use wasmtime::{
    Config, Engine, Instance, Memory, Module, OptLevel, Store, StoreLimits, StoreLimitsBuilder,
    Trap, TypedFunc, WasmParams, WasmResults,
};

/// Instances one thread keeps (for the most recently used games); older ones are dropped.
const SLOTS: usize = 4;
/// Modules the process keeps compiled; the least recently loaded is dropped past this.
const CACHED_MODULES: usize = 32;

/// A compiled, described module.
pub struct Loaded {
    /// SHA-256 of the module's binary bytes, in lowercase hex.
    pub sha256: String,
    /// What the module declares.
    pub info: Info,
    /// The name as kernels see it (leaked once per distinct module).
    pub name: &'static str,
    /// The ABI version the module speaks.
    pub version: i32,
    /// The module exports `gs_immediate`.
    pub immediate: bool,
    /// Validation and compilation time, in milliseconds.
    pub compile_ms: f64,
    module: Module,
}

impl std::fmt::Debug for Loaded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Loaded({} {})", self.name, &self.sha256[..12])
    }
}

fn engine() -> Result<&'static Engine, String> {
    static ENGINE: OnceLock<Result<Engine, String>> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            let mut c = Config::new();
            c.consume_fuel(true);
            c.cranelift_opt_level(OptLevel::Speed);
            Engine::new(&c).map_err(|e| format!("module engine: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Compiled modules by hash, and their hashes in the order they were loaded.
type Cache = (HashMap<String, Arc<Loaded>>, Vec<String>);

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The module of this hash, if this process has loaded it.
pub fn cached(sha256: &str) -> Option<Arc<Loaded>> {
    let c = cache().lock().unwrap_or_else(|e| e.into_inner());
    c.0.get(sha256).cloned()
}

/// Keeps a module that passed its probe (`load`), dropping the least recently kept one past
/// [`CACHED_MODULES`].
pub(super) fn keep(loaded: &Arc<Loaded>) {
    let mut c = cache().lock().unwrap_or_else(|e| e.into_inner());
    if c.0.contains_key(&loaded.sha256) {
        return;
    }
    if c.1.len() >= CACHED_MODULES {
        let old = c.1.remove(0);
        c.0.remove(&old);
    }
    c.1.push(loaded.sha256.clone());
    c.0.insert(loaded.sha256.clone(), loaded.clone());
}

/// Validates and compiles `wasm` (binary), checks that it imports nothing and speaks ABI v1 or
/// v2, and reads its description. A module already kept is returned as it is; a new one is not
/// kept until it passes its probe (see `load`), so no job can name a module that failed it.
pub(super) fn compile(wasm: &[u8]) -> Result<Arc<Loaded>, String> {
    if wasm.len() > abi::MAX_MODULE_BYTES {
        return Err(format!(
            "module of {} bytes, more than the {} accepted",
            wasm.len(),
            abi::MAX_MODULE_BYTES
        ));
    }
    let sha256: String = Sha256::digest(wasm)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    if let Some(l) = cached(&sha256) {
        return Ok(l);
    }
    let start = std::time::Instant::now();
    let module = Module::new(engine()?, wasm)
        .map_err(|e| format!("not a valid WebAssembly module: {}", first_line(&e)))?;
    let compile_ms = start.elapsed().as_secs_f64() * 1e3;
    if let Some(i) = module.imports().next() {
        return Err(format!(
            "the module imports '{}.{}'; game modules may import nothing",
            crate::model::excerpt(i.module()),
            crate::model::excerpt(i.name())
        ));
    }
    let mut probe = Inst::new(&module, None)?;
    let version = probe.call("gs_abi_version", |f| Some(&f.version), ())?;
    if !(abi::MIN_ABI_VERSION..=abi::ABI_VERSION).contains(&version) {
        return Err(format!(
            "gs_abi_version is {version}; this host speaks ABI versions {} to {}",
            abi::MIN_ABI_VERSION,
            abi::ABI_VERSION
        ));
    }
    if version >= 2 && probe.f.step.is_none() {
        return Err(format!(
            "gs_abi_version is {version} but the module exports no gs_step"
        ));
    }
    let len = probe.call("gs_describe", |f| Some(&f.describe), ())?;
    let text = probe.text("gs_describe", len, abi::MAX_TEXT)?;
    let info = Info::parse(&text)?;
    probe.set_io_bytes(info.io_bytes)?;
    if version >= 2 && info.io_bytes < abi::step_io_bytes(&info) {
        return Err(format!(
            "gs_describe: io_bytes must be at least {} for gs_step's facts (ABI v2)",
            abi::step_io_bytes(&info)
        ));
    }
    let name: &'static str = Box::leak(info.name.clone().into_boxed_str());
    let loaded = Arc::new(Loaded {
        sha256: sha256.clone(),
        info,
        name,
        version,
        immediate: probe.f.immediate.is_some(),
        compile_ms,
        module,
    });
    Ok(loaded)
}

fn first_line(e: &impl std::fmt::Display) -> String {
    crate::model::one_line(&e.to_string())
}

/// The exports, typed. Optional ones are `None` when absent.
pub(super) struct Funcs {
    pub version: TypedFunc<(), i32>,
    pub describe: TypedFunc<(), i32>,
    pub io: TypedFunc<(), i32>,
    pub init: TypedFunc<i32, i32>,
    pub status: TypedFunc<(), i32>,
    pub moves: TypedFunc<(), i32>,
    pub play: TypedFunc<i32, i32>,
    pub returns: TypedFunc<(), i32>,
    pub hash: TypedFunc<(), i64>,
    pub immediate: Option<TypedFunc<(), i32>>,
    /// ABI v2 (`None` for a module of version 1, whatever it exports).
    pub step: Option<TypedFunc<(i32, i32), i32>>,
    pub format_position: TypedFunc<(), i32>,
    pub parse_position: TypedFunc<i32, i32>,
    pub format_move: TypedFunc<i32, i32>,
    pub parse_move: TypedFunc<i32, i32>,
}

/// One instance of a module with its own store, memory and I/O area.
pub(super) struct Inst {
    store: Store<StoreLimits>,
    memory: Memory,
    /// Offset of the I/O area in the memory.
    io: usize,
    /// Its declared size (0 until the description is read).
    io_bytes: usize,
    pub f: Funcs,
    /// `gs_step`'s `want` bits for this instance: moves and utilities always, the hash and the
    /// immediate value once the kernel has asked for them.
    pub want: i32,
    /// The I/O area holds the facts `gs_step` wrote for the position `facts_of` (no call since).
    pub facts: bool,
    /// The position whose facts the I/O area holds (when `facts`).
    pub facts_of: Vec<u8>,
}

impl Inst {
    /// Instantiates `module` (no imports) and reads `gs_io`. With `io_bytes`, checks that the
    /// I/O area lies inside the memory.
    pub fn new(module: &Module, io_bytes: Option<usize>) -> Result<Inst, String> {
        let limits = StoreLimitsBuilder::new()
            .memory_size(MEMORY_CAP)
            .memories(1)
            .tables(4)
            .table_elements(1 << 16)
            .instances(1)
            .trap_on_grow_failure(true)
            .build();
        let mut store = Store::new(module.engine(), limits);
        store.limiter(|l| l);
        store
            .set_fuel(FUEL_PER_CALL)
            .map_err(|e| format!("module engine: {e}"))?;
        let instance =
            Instance::new(&mut store, module, &[]).map_err(|e| explain("instantiation", &e))?;
        let memory = instance
            .get_memory(&mut store, "memory")
            .ok_or("the module exports no memory named 'memory'")?;
        macro_rules! func {
            ($name:literal) => {
                instance
                    .get_typed_func(&mut store, $name)
                    .map_err(|e| format!("export {}: {}", $name, first_line(&e)))?
            };
        }
        macro_rules! optional {
            ($name:literal) => {
                match instance.get_export(&mut store, $name) {
                    None => None,
                    Some(_) => Some(func!($name)),
                }
            };
        }
        let f = Funcs {
            version: func!("gs_abi_version"),
            describe: func!("gs_describe"),
            io: func!("gs_io"),
            init: func!("gs_init"),
            status: func!("gs_status"),
            moves: func!("gs_moves"),
            play: func!("gs_play"),
            returns: func!("gs_returns"),
            hash: func!("gs_hash"),
            immediate: optional!("gs_immediate"),
            step: optional!("gs_step"),
            format_position: func!("gs_format_position"),
            parse_position: func!("gs_parse_position"),
            format_move: func!("gs_format_move"),
            parse_move: func!("gs_parse_move"),
        };
        let mut inst = Inst {
            store,
            memory,
            io: 0,
            io_bytes: 0,
            f,
            want: abi::WANT_MOVES | abi::WANT_RETURNS,
            facts: false,
            facts_of: Vec::new(),
        };
        let io = inst.call("gs_io", |f| Some(&f.io), ())?;
        inst.io = io as u32 as usize;
        if let Some(n) = io_bytes {
            inst.set_io_bytes(n)?;
        }
        Ok(inst)
    }

    /// Declares the I/O area's size, checking that it lies inside the memory.
    pub fn set_io_bytes(&mut self, n: usize) -> Result<(), String> {
        if self.io + n > self.memory.data_size(&self.store) {
            return Err(format!(
                "gs_io: the I/O area at {} of {n} bytes is not inside the memory",
                self.io
            ));
        }
        self.io_bytes = n;
        Ok(())
    }

    /// Calls the export `pick` chooses (`None`: not exported), with a fresh allowance of fuel.
    /// The export is borrowed, not cloned: cloning a `TypedFunc` clones its registered type,
    /// which costs more than the call.
    #[inline]
    pub fn call<P: WasmParams, R: WasmResults>(
        &mut self,
        name: &str,
        pick: impl FnOnce(&Funcs) -> Option<&TypedFunc<P, R>>,
        args: P,
    ) -> Result<R, String> {
        self.facts = false;
        self.store
            .set_fuel(FUEL_PER_CALL)
            .map_err(|e| format!("module engine: {e}"))?;
        let f = pick(&self.f).ok_or_else(|| format!("{name} is not exported"))?;
        f.call(&mut self.store, args).map_err(|e| explain(name, &e))
    }

    /// The I/O area's bytes `at..at + len`, checked against the area and the memory.
    fn area(&mut self, name: &str, at: usize, len: usize) -> Result<&mut [u8], String> {
        let limit = if self.io_bytes == 0 {
            abi::MAX_TEXT
        } else {
            self.io_bytes
        };
        let (io, data) = (self.io, self.memory.data_mut(&mut self.store));
        if at + len > limit {
            return Err(format!("{name}: {len} bytes do not fit in the I/O area"));
        }
        data.get_mut(io + at..io + at + len)
            .ok_or_else(|| format!("{name}: the I/O area lies outside the memory"))
    }

    /// Writes `bytes` at offset `at` of the I/O area.
    #[inline]
    pub fn write(&mut self, name: &str, at: usize, bytes: &[u8]) -> Result<(), String> {
        self.area(name, at, bytes.len())?.copy_from_slice(bytes);
        Ok(())
    }

    /// Reads `len` bytes at offset `at` of the I/O area.
    #[inline]
    pub fn read(&mut self, name: &str, at: usize, len: usize) -> Result<&[u8], String> {
        self.area(name, at, len).map(|s| &*s)
    }

    /// Reads a text result of `len` bytes (at most `max`) at the start of the I/O area.
    pub fn text(&mut self, name: &str, len: i32, max: usize) -> Result<String, String> {
        if len < 0 || len as usize > max {
            return Err(format!("{name} returned a text length of {len}"));
        }
        let bytes = self.read(name, 0, len as usize)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| format!("{name}: the text is not UTF-8"))
    }

    /// A result word of `name`: `Ok(word)` when it is at least 0, else the module's error
    /// message (`-1 - len` bytes at the start of the I/O area) as `Err(Ok(message))`.
    pub fn word_or_message(
        &mut self,
        name: &str,
        word: i32,
    ) -> Result<Result<i32, String>, String> {
        if word >= 0 {
            return Ok(Ok(word));
        }
        let len = (-(word as i64) - 1).min(abi::MAX_TEXT as i64) as i32;
        let msg = self.text(name, len, abi::MAX_TEXT.min(self.io_bytes.max(1)))?;
        Ok(Err(super::clip_message(&msg)))
    }

    /// Decodes a status word.
    pub fn status(&self, name: &str, word: i32, info: &Info) -> Result<Status, String> {
        Status::decode(word, info.players, info.chance)
            .ok_or_else(|| format!("{name} returned {word}, not a status of this game"))
    }
}

/// One line for an error of a call to `name`.
fn explain(name: &str, e: &wasmtime::Error) -> String {
    match e.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => format!("{name} ran out of fuel ({FUEL_PER_CALL} per call)"),
        Some(Trap::StackOverflow) => format!("{name} overflowed its stack"),
        Some(t) => format!("{name} trapped: {}", first_line(t)),
        None => {
            let text = format!("{e:#}");
            if text.contains("growing memory") || text.contains("memory minimum size") {
                format!(
                    "{name}: memory past the cap of {} MiB per instance",
                    MEMORY_CAP >> 20
                )
            } else {
                format!("{name}: {}", first_line(&text))
            }
        }
    }
}

thread_local! {
    /// This thread's instances, by game id, most recent last.
    static INSTANCES: RefCell<Vec<(u64, Inst)>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` on this thread's instance of game `id`, creating it with `create` when missing.
#[inline]
pub(super) fn with_instance<T>(
    id: u64,
    create: impl FnOnce() -> Result<Inst, String>,
    f: impl FnOnce(&mut Inst) -> Result<T, String>,
) -> Result<T, String> {
    INSTANCES.with(|cell| {
        let Ok(mut slots) = cell.try_borrow_mut() else {
            return Err("module game called back into itself".to_string());
        };
        let i = match slots.iter().position(|s| s.0 == id) {
            Some(i) => i,
            None => {
                let inst = create()?;
                if slots.len() >= SLOTS {
                    slots.remove(0);
                }
                slots.push((id, inst));
                slots.len() - 1
            }
        };
        f(&mut slots[i].1)
    })
}

/// Instantiates `loaded` for a game.
pub(super) fn instantiate(loaded: &Loaded) -> Result<Inst, String> {
    let mut inst = Inst::new(&loaded.module, Some(loaded.info.io_bytes))?;
    if loaded.version < 2 {
        inst.f.step = None;
    }
    Ok(inst)
}
