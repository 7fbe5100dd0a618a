//! Declared options and game parameters: each one's name, kind and bounds, default and help,
//! in a const table per kernel family (a game's parameters are declared with the game, in its
//! catalogue entry).
//!
//! [`super::Opts`] reads a setting through its [`Spec`], so the bound check and its message
//! live here and nowhere else. The tables are data on purpose: the README's "Limits of a job",
//! [`super::option_specs`] (which the end-to-end tests walk) and, later, the CLI's help and the
//! API document are derived from them.

/// What values a setting takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// A whole number in `min..=max`.
    UInt {
        /// Smallest accepted.
        min: u64,
        /// Largest accepted.
        max: u64,
    },
    /// A finite number in `min..=max`.
    Float {
        /// Smallest accepted.
        min: f64,
        /// Largest accepted.
        max: f64,
    },
    /// `true` or `false`.
    Bool,
    /// A word or a value in the game's notation, checked by the family that reads it.
    Text,
}

/// One declared option or game parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spec {
    /// The key, as in `KEY=VALUE`.
    pub name: &'static str,
    /// Values and bounds.
    pub kind: Kind,
    /// The default, as text for people ("none", "the runner's threads").
    pub default: &'static str,
    /// What it does, one line.
    pub help: &'static str,
    /// Why the bound is where it is, one line (empty for unbounded kinds).
    pub why: &'static str,
    /// The algorithms of the family it applies to; empty: all of them.
    pub only: &'static [&'static str],
}

impl Spec {
    /// A whole-number setting.
    pub const fn uint(
        name: &'static str,
        min: u64,
        max: u64,
        default: &'static str,
        help: &'static str,
        why: &'static str,
    ) -> Spec {
        Spec {
            name,
            kind: Kind::UInt { min, max },
            default,
            help,
            why,
            only: &[],
        }
    }

    /// A number setting.
    pub const fn float(
        name: &'static str,
        min: f64,
        max: f64,
        default: &'static str,
        help: &'static str,
        why: &'static str,
    ) -> Spec {
        Spec {
            name,
            kind: Kind::Float { min, max },
            default,
            help,
            why,
            only: &[],
        }
    }

    /// A boolean setting.
    pub const fn flag(name: &'static str, default: &'static str, help: &'static str) -> Spec {
        Spec {
            name,
            kind: Kind::Bool,
            default,
            help,
            why: "",
            only: &[],
        }
    }

    /// A text setting (a word, or a value in the game's notation).
    pub const fn text(name: &'static str, default: &'static str, help: &'static str) -> Spec {
        Spec {
            name,
            kind: Kind::Text,
            default,
            help,
            why: "",
            only: &[],
        }
    }

    /// The same setting, for these algorithms of its family only.
    pub const fn for_algorithms(mut self, only: &'static [&'static str]) -> Spec {
        self.only = only;
        self
    }

    /// Whether it applies to `algorithm`.
    pub fn applies_to(&self, algorithm: &str) -> bool {
        self.only.is_empty() || self.only.contains(&algorithm)
    }

    /// Whether it is a number with bounds.
    pub fn is_numeric(&self) -> bool {
        matches!(self.kind, Kind::UInt { .. } | Kind::Float { .. })
    }

    /// For numeric settings: the values at its bounds (accepted) and the values just past them
    /// (refused), as `KEY=VALUE` texts would carry them. `None` for other kinds.
    pub fn edges(&self) -> Option<Edges> {
        match self.kind {
            Kind::UInt { min, max } => Some(Edges {
                accepted: vec![min.to_string(), max.to_string()],
                refused: min
                    .checked_sub(1)
                    .into_iter()
                    .chain(max.checked_add(1))
                    .map(|v| v.to_string())
                    .collect(),
            }),
            Kind::Float { min, max } => {
                // Just past: one part in a million beyond (or 1e-6 beyond a bound of 0).
                let past = |b: f64, dir: f64| {
                    let d = (b.abs() * 1e-6).max(1e-6);
                    b + dir * d
                };
                Some(Edges {
                    accepted: vec![fmt_f64(min), fmt_f64(max)],
                    refused: vec![fmt_f64(past(min, -1.0)), fmt_f64(past(max, 1.0))],
                })
            }
            Kind::Bool | Kind::Text => None,
        }
    }

    /// The bound as people read it ("1 to 512").
    pub fn range_text(&self) -> String {
        match self.kind {
            Kind::UInt { min, max } if max == u64::MAX => format!("at least {min}"),
            Kind::UInt { min, max } => format!("{min} to {max}"),
            Kind::Float { min, max } => format!("{} to {}", fmt_f64(min), fmt_f64(max)),
            Kind::Bool => "true or false".into(),
            Kind::Text => "text".into(),
        }
    }
}

/// Values at and just past a numeric setting's bounds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edges {
    /// The bounds themselves: accepted.
    pub accepted: Vec<String>,
    /// Just below the minimum and just above the maximum: refused.
    pub refused: Vec<String>,
}

fn fmt_f64(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

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

/// Every family's table, titled, in the order of the README.
pub fn families() -> Vec<(&'static str, Vec<Spec>)> {
    use super::{chance, family, mcts, multi, pn, single};
    // The games' numeric parameters, zero-sum games first (see `Family::order`), each once.
    let mut entries = super::catalogue::ENTRIES.to_vec();
    entries.sort_by_key(|e| e.family.order());
    let mut params: Vec<Spec> = Vec::new();
    for p in entries.iter().flat_map(|e| e.params) {
        if p.is_numeric() && !params.contains(p) {
            params.push(*p);
        }
    }
    vec![
        (
            "Two-player zero-sum (`minimax`, `alphabeta`)",
            family::OPTIONS.to_vec(),
        ),
        (
            "Proof-number search (`pns`, `dfpn`, `pn2`, `pdspn`)",
            pn::OPTIONS.to_vec(),
        ),
        (
            "Chance (`expectimax`, `star1`, `star2`, `star25`)",
            chance::OPTIONS.to_vec(),
        ),
        (
            "Multi-player (`maxn`, `paranoid`, `brs`)",
            multi::OPTIONS.to_vec(),
        ),
        ("MCTS (`mcts`)", mcts::OPTIONS.to_vec()),
        ("Single-player (`nmcs`, `nrpa`)", single::OPTIONS.to_vec()),
        ("Game parameters", params),
    ]
}

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
