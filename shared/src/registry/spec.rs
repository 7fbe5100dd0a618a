//! Declared options and game parameters: each one's name, kind and bounds, default and help,
//! in a const table per kernel family (a game's parameters are declared with the game, in its
//! catalogue entry).
//!
//! [`Opts`](crate::model::settings::Opts) reads a setting through its [`Spec`], so the bound
//! check, its message and the default ([`DefaultValue`]) live here and nowhere else. A setting
//! shared by several families (`threads`, `depth`, `target`, `memory_mb`, `seed`, `tables`) is
//! declared once here; a family changes its default or meaning with [`Spec::with_default`] and
//! [`Spec::with_help`]. The tables are data on purpose: the README's "Limits of a job",
//! [`super::option_specs`], `--help`, `GET /v1/options` and `/openapi.json` print them, and
//! `server/tests/option_specs.rs` checks every default they print.

pub use crate::model::settings::{DefaultValue, Edges, Kind, Spec};

/// Deepest search any kernel is asked for, in plies (or players' plies, chance layers not
/// counted). The kernels' stacks are sized for it (`search::KERNEL_STACK_BYTES`).
pub const MAX_DEPTH: u64 = 512;
/// Why [`MAX_DEPTH`].
pub const DEPTH_WHY: &str = "far beyond any search that finishes; it sizes the kernels' stacks";

/// Most threads one task may ask for (a worker offers at most this many, see `Resources`).
pub const MAX_THREADS: u64 = 256;
/// Why [`MAX_THREADS`].
pub const THREADS_WHY: &str = "the most any worker offers; a job's value is cut to the worker's";

/// Largest memory budget a job may name, in MiB (1 TiB).
pub const MAX_MEMORY_MB: u64 = 1 << 20;
/// Why [`MAX_MEMORY_MB`].
pub const MEMORY_WHY: &str = "the most any worker offers; a job's value is cut to the worker's";

/// Longest position text of any game but `tree`, in bytes.
pub const MAX_POSITION_BYTES: usize = 64 << 10;
/// Longest position text of the `tree` game (the JSON of the tree), in bytes: the HTTP body
/// limit.
pub const MAX_TREE_BYTES: usize = 1 << 20;

/// Longest time limit a job may set, in milliseconds (a year): a deadline must fit a clock.
pub const MAX_TIME_MS: u64 = 366 * 24 * 3600 * 1000;

/// `threads`: kernel threads of one task, the runner's unless a family says otherwise
/// ([`Spec::with_default`]).
pub const THREADS: Spec = Spec::uint(
    "threads",
    1,
    MAX_THREADS,
    DefaultValue::Depends("the runner's threads"),
    "kernel threads of one task",
    THREADS_WHY,
);

/// `memory_mb` as every family that has it declares it (the default and the meaning differ
/// per family).
pub const fn memory_mb(default: u64, help: &'static str) -> Spec {
    Spec::uint(
        "memory_mb",
        1,
        MAX_MEMORY_MB,
        DefaultValue::UInt(default),
        help,
        MEMORY_WHY,
    )
}

/// `depth`: plies of a depth-limited search (none: the exact value, as a family's default
/// says).
pub const DEPTH: Spec = Spec::uint(
    "depth",
    1,
    MAX_DEPTH,
    DefaultValue::Unset("none (exact)"),
    "plies of a depth-limited search",
    DEPTH_WHY,
);

/// `target`: decide "value >= target" on the game's scale.
pub const TARGET: Spec = Spec::text(
    "target",
    DefaultValue::Unset("none"),
    "decide value >= target",
);

/// Largest |lower| and |upper| of a utility bound.
pub const MAX_UTILITY: f64 = 1e15;

/// `lower` or `upper`, a bound of player 0's utility, as every family that has them declares it.
pub const fn utility_bound(name: &'static str, default: &'static str, help: &'static str) -> Spec {
    Spec::float(
        name,
        -MAX_UTILITY,
        MAX_UTILITY,
        DefaultValue::Depends(default),
        help,
        "finite, exactly representable integers",
    )
}

/// `seed` (any 64-bit number).
pub const SEED: Spec = Spec::uint(
    "seed",
    0,
    u64::MAX,
    DefaultValue::UInt(0),
    "random seed",
    "any 64-bit number",
);

/// A Markdown table of `specs` (setting, values, default, meaning, why the bound): the README's
/// "Limits of a job" holds these tables, and a test keeps it in step with the code.
pub fn markdown(specs: &[Spec]) -> String {
    let mut s = String::from(
        "| setting | values | default | meaning | why the bound |\n|---|---|---|---|---|\n",
    );
    for spec in specs {
        let only = if spec.only.is_empty() {
            String::new()
        } else {
            format!(" ({})", spec.only.join(", "))
        };
        s += &format!(
            "| `{}`{only} | {} | {} | {} | {} |\n",
            spec.name,
            spec.range_text(),
            spec.default.text(),
            spec.help,
            spec.why
        );
    }
    s
}

pub use super::families;

/// `tables`: endgame databases read at covered positions (Awari), by set name; shared by the
/// two-player family and the proof-number family.
pub const TABLES: Spec = Spec::text(
    "tables",
    DefaultValue::Unset("none"),
    "Awari endgame databases: a set's name (the data folder's tables/NAME, else the coordinator's build NAME)",
);

#[cfg(test)]
mod tests {
    use super::{DefaultValue, Kind};

    /// Every declared default is of its setting's kind and within its bounds (a choice's is one
    /// of its words), and the defaults that name a kernel's constant agree with it.
    #[test]
    fn declared_defaults_fit_their_kinds() {
        let params = crate::registry::catalogue::ENTRIES
            .iter()
            .flat_map(|e| e.params.iter().copied());
        let specs: Vec<_> = super::families()
            .into_iter()
            .flat_map(|(_, s)| s)
            .chain(params)
            .collect();
        for s in &specs {
            let fits = match (s.kind, s.default) {
                (Kind::UInt { min, max }, DefaultValue::UInt(v)) => (min..=max).contains(&v),
                (Kind::Float { min, max }, DefaultValue::Float(x)) => x >= min && x <= max,
                (Kind::Bool, DefaultValue::Bool(_)) => true,
                (Kind::Choice(words), DefaultValue::Word(w)) => words.contains(&w),
                (Kind::Text, DefaultValue::Word(_)) => true,
                (_, DefaultValue::Unset(_) | DefaultValue::Depends(_)) => true,
                _ => false,
            };
            assert!(fits, "{}: default {:?} for {:?}", s.name, s.default, s.kind);
        }
        assert_eq!(
            crate::registry::single::CHECKPOINT_S.default,
            DefaultValue::Float(crate::search::nrpa::CHECKPOINT_EVERY.as_secs_f64())
        );
        let playouts = crate::registry::mcts::DEFAULT_PLAYOUTS.to_string();
        assert!(crate::registry::mcts::PLAYOUTS
            .default
            .text()
            .starts_with(&playouts));
    }

    /// The README's "Limits of a job" holds every family's table as the code declares it
    /// (`cargo test --release -p gamesolver-shared --lib readme_limits -- --nocapture` prints
    /// them when they differ).
    #[test]
    fn readme_limits_match_the_tables() {
        let readme =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
        let mut missing = Vec::new();
        for (title, specs) in super::families() {
            let table = super::markdown(&specs);
            if !readme.contains(&table) {
                println!("#### {title}\n\n{table}");
                missing.push(title);
            }
        }
        assert!(missing.is_empty(), "README tables out of date: {missing:?}");
    }
}
