//! Declared options and game parameters: each one's name, kind and bounds, default and help,
//! in a const table per kernel family (a game's parameters are declared with the game, in its
//! catalogue entry).
//!
//! [`Opts`](crate::model::settings::Opts) reads a setting through its [`Spec`], so the bound check and its message
//! live here and nowhere else. The tables are data on purpose: the README's "Limits of a job",
//! [`super::option_specs`] (which the end-to-end tests walk) and, later, the CLI's help and the
//! API document are derived from them.

pub use crate::model::settings::{Edges, Kind, Spec};

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

/// `threads` as every family that has it declares it.
pub const THREADS: Spec = Spec::uint(
    "threads",
    1,
    MAX_THREADS,
    "the runner's threads",
    "kernel threads of one task",
    THREADS_WHY,
);

/// `memory_mb` as every family that has it declares it (the default differs per family).
pub const fn memory_mb(default: &'static str, help: &'static str) -> Spec {
    Spec::uint("memory_mb", 1, MAX_MEMORY_MB, default, help, MEMORY_WHY)
}

/// Largest |lower| and |upper| of a utility bound.
pub const MAX_UTILITY: f64 = 1e15;

/// `lower` or `upper`, a bound of player 0's utility, as every family that has them declares it.
pub const fn utility_bound(name: &'static str, default: &'static str, help: &'static str) -> Spec {
    Spec::float(
        name,
        -MAX_UTILITY,
        MAX_UTILITY,
        default,
        help,
        "finite, exactly representable integers",
    )
}

/// `seed` (any 64-bit number).
pub const SEED: Spec = Spec::uint("seed", 0, u64::MAX, "0", "random seed", "any 64-bit number");

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
            spec.default,
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
    "none",
    "Awari endgame databases: a set's name (the data folder's tables/NAME, else the coordinator's build NAME)",
);

#[cfg(test)]
mod tests {
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
