//! What a kernel is to the registry: a type that implements [`Kernel`], declaring its name, the
//! shapes of game it serves ([`Shape`]), the family whose option table it reads ([`Group`]),
//! whether it analyses every root move, and a prepare hook per shape it serves; and a list of
//! kernels ([`KernelList`]: `()` or `(K, L)`), which hands each hook to the kernel a job names.
//! Each kernel is a file under `kernels/` that declares it with [`kernel!`]; the catalogue's list
//! is in [`super::kernels`]. The families (`family`, `pn`, `chance`, ...) hold what their kernels
//! share (option tables, jobs, outputs) and do not depend on the list.

use super::catalogue::{Family, Info};
use super::{PreparedJob, SolveError, Spec};
use crate::wire::JobSpec;

/// What a prepare hook returns.
pub type Prepared = Result<Box<dyn PreparedJob>, SolveError>;

/// A shape of game a kernel can search: what it needs of a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A two-player zero-sum game with exact values ([`Exact`](crate::games::Exact)).
    ZeroSum,
    /// Two players and chance nodes ([`ChanceZeroSum`](crate::model::ChanceZeroSum)).
    Chance,
    /// More than two players, moves out of turn ([`OutOfTurn`](crate::model::OutOfTurn)).
    Multi,
    /// One player ([`SinglePlayer`](crate::model::single::SinglePlayer)).
    Single,
    /// An explicit max/min tree.
    MinMaxTree,
    /// An explicit tree with chance nodes.
    ChanceTree,
    /// An explicit tree of more than two players.
    MultiTree,
    /// A game with endgame databases to build (`model::Retrograde`).
    Ranked,
}

impl Shape {
    /// The shapes a catalogue game offers.
    pub fn of(game: &Info) -> Vec<Shape> {
        let mut shapes = match game.family {
            Family::ZeroSum { .. } => vec![Shape::ZeroSum],
            Family::Tree => vec![Shape::MinMaxTree, Shape::ChanceTree, Shape::MultiTree],
            Family::Multi => vec![Shape::Multi],
            Family::Single => vec![Shape::Single],
            Family::Chance | Family::Stochastic => vec![Shape::Chance],
        };
        if game.tables.is_some() {
            shapes.push(Shape::Ranked);
        }
        shapes
    }

    /// How an error names the kernels of this shape ("multi-player: maxn, ...").
    pub fn what(self) -> &'static str {
        match self {
            Shape::ZeroSum | Shape::MinMaxTree => "two-player zero-sum",
            Shape::Chance | Shape::ChanceTree => "chance",
            Shape::Multi | Shape::MultiTree => "multi-player",
            Shape::Single => "single-player",
            Shape::Ranked => "database builds",
        }
    }
}

/// A kernel family: the option table its kernels share, as the README, `--help` and
/// `/openapi.json` show it (titled with its kernels' names).
#[derive(Debug)]
pub struct Group {
    /// The title, without the kernels' names ("Chance").
    pub title: &'static str,
    /// Every option of the family (a [`Spec::only`] limits one to some of its kernels).
    pub options: &'static [Spec],
    /// The options of the table that do not apply on a game (a game without a book, trees).
    pub skip: fn(&Info) -> &'static [&'static str],
}

/// No option skipped.
pub fn skip_none(_: &Info) -> &'static [&'static str] {
    &[]
}

/// What `analyse=all` does with a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Analyse {
    /// Refused.
    No,
    /// Every root move's exact job, planned side by side (`registry::analysis`). `own_table`:
    /// each move's job keeps its own table for the job's lifetime, so the analysis shares the
    /// table budget (`memory_mb`) out between the moves.
    Moves { own_table: bool },
    /// The kernel's own (MCTS: the root's statistics).
    Own,
}

/// What the catalogue knows of a kernel without a game.
#[derive(Debug)]
pub struct Algorithm {
    /// The name a job gives.
    pub name: &'static str,
    /// The shapes of game it serves.
    pub serves: &'static [Shape],
    /// Its family and option table.
    pub group: &'static Group,
    /// What `analyse=all` does with it.
    pub analyse: Analyse,
}

impl Algorithm {
    /// Whether it serves the catalogue game `game`.
    pub fn serves_game(&self, game: &Info) -> bool {
        Shape::of(game).iter().any(|s| self.serves.contains(s))
    }

    /// Its options on `game` (empty when it does not serve the game).
    pub fn options(&self, game: &Info) -> Vec<Spec> {
        if !self.serves_game(game) {
            return Vec::new();
        }
        let skip = (self.group.skip)(game);
        self.group
            .options
            .iter()
            .filter(|s| s.applies_to(self.name) && !skip.contains(&s.name))
            .copied()
            .collect()
    }

    /// Whether it builds endgame databases (it serves [`Shape::Ranked`] only): its work counts
    /// entries written, not nodes, and its result names a set of databases that later jobs pin
    /// by name.
    pub fn builds_databases(&self) -> bool {
        matches!(self.serves, [Shape::Ranked])
    }

    /// The key of its progress reports that counts its work.
    pub fn work_key(&self) -> &'static str {
        if self.builds_databases() {
            "entries_written"
        } else {
            "nodes"
        }
    }

    /// Whether it reads the option `key` on some game.
    pub fn reads(&self, key: &str) -> bool {
        self.group
            .options
            .iter()
            .any(|s| s.name == key && s.applies_to(self.name))
    }
}

/// Declares a kernel: a unit type with its doc, its [`Algorithm`] (`serves` names [`Shape`]s)
/// and its prepare hooks, each written as the hook's name, the names of its arguments and the
/// expression it prepares with (the `Some` or `Ok` around it is the macro's):
///
/// ```ignore
/// kernel! {
///     /// `minimax`: plain minimax.
///     Minimax {
///         name: "minimax",
///         serves: [ZeroSum, MinMaxTree],
///         group: family::GROUP,
///         analyse: Analyse::No,
///     }
///     zero_sum(job, game, root, res) => family::two_player(job, game, root, res, Search::Minimax);
/// }
/// ```
///
/// The arguments are those of the [`Kernel`] hook of that name, in its order; a game's type
/// is `G`.
macro_rules! kernel {
    (
        $(#[$doc:meta])*
        $kernel:ident {
            name: $name:literal,
            serves: [$($shape:ident),* $(,)?],
            group: $group:path,
            analyse: $analyse:expr $(,)?
        }
        $($hook:ident($($arg:ident),*) => $e:expr;)*
    ) => {
        $(#[$doc])*
        pub struct $kernel;

        impl $crate::registry::kernel::Kernel for $kernel {
            const ALGORITHM: $crate::registry::kernel::Algorithm =
                $crate::registry::kernel::Algorithm {
                    name: $name,
                    serves: &[$($crate::registry::kernel::Shape::$shape),*],
                    group: &$group,
                    analyse: $analyse,
                };
            $($crate::registry::kernel::kernel_hook!($hook($($arg),*) => $e);)*
        }
    };
}
pub(crate) use kernel;

/// Declares, from the table of prepare hooks it is given, the traits [`Kernel`] and
/// [`KernelList`], the lists `()` and `(K, L)`, and `kernel_hook!`, which writes the hook a
/// [`kernel!`] names. A row: the hook's doc, name, generics in brackets, parameters and answer;
/// then the answer of a kernel that does not write it, that of the empty list, and what wraps
/// the expression of a written one (`Some`, `Ok`). `$d` is `$`, for `kernel_hook!`'s own
/// variables. The types are written from the crate's root: `kernel_hook!` expands in the
/// kernels' files.
macro_rules! declare_hooks {
    ($d:tt $(
        $(#[$doc:meta])*
        $hook:ident[$($gen:tt)*]($($p:ident: $t:ty),* $(,)?) -> $ret:ty
            = $default:expr, $empty:expr, $wrap:ident;
    )*) => {
        /// A kernel: its declaration and one prepare hook per shape it serves. A hook that is
        /// not written answers `None` (the kernel does not serve that shape).
        pub trait Kernel: 'static {
            /// The declaration.
            const ALGORITHM: Algorithm;
            $(
                $(#[$doc])*
                #[allow(unused_variables)]
                fn $hook<$($gen)*>($($p: $t),*) -> $ret {
                    $default
                }
            )*
        }

        /// A list of kernels: `()` or `(K, L)`. Each hook goes to the kernel named `name`.
        pub trait KernelList: 'static {
            /// Every declaration, in list order.
            fn algorithms(out: &mut Vec<&'static Algorithm>);
            $(
                #[doc = concat!("[`Kernel::", stringify!($hook), "`] of the kernel `name`.")]
                fn $hook<$($gen)*>(name: &str, $($p: $t),*) -> $ret;
            )*

            /// Every declaration, in list order.
            fn all() -> Vec<&'static Algorithm> {
                let mut out = Vec::new();
                Self::algorithms(&mut out);
                out
            }
            /// The declaration of `name`.
            fn find(name: &str) -> Option<&'static Algorithm> {
                Self::all().into_iter().find(|a| a.name == name)
            }
            /// The names of the kernels that serve `shape`.
            fn serving(shape: Shape) -> Vec<&'static str> {
                Self::all()
                    .into_iter()
                    .filter(|a| a.serves.contains(&shape))
                    .map(|a| a.name)
                    .collect()
            }
        }

        impl KernelList for () {
            fn algorithms(_: &mut Vec<&'static Algorithm>) {}
            $(
                #[allow(unused_variables)]
                fn $hook<$($gen)*>(_: &str, $($p: $t),*) -> $ret {
                    $empty
                }
            )*
        }

        /// `K`'s hook when the job names `K`, else the rest's.
        impl<K: Kernel, L: KernelList> KernelList for (K, L) {
            fn algorithms(out: &mut Vec<&'static Algorithm>) {
                out.push(&K::ALGORITHM);
                L::algorithms(out);
            }
            $(
                fn $hook<$($gen)*>(name: &str, $($p: $t),*) -> $ret {
                    if name == K::ALGORITHM.name {
                        K::$hook($($p),*)
                    } else {
                        L::$hook(name, $($p),*)
                    }
                }
            )*
        }

        /// The hook a [`kernel!`] writes: its arguments named by the kernel, the expression
        /// wrapped.
        macro_rules! kernel_hook {
            $(
                ($hook($($d $p:ident),*) => $d e:expr) => {
                    fn $hook<$($gen)*>($($d $p: $t),*) -> $ret {
                        $wrap($d e)
                    }
                };
            )*
        }
        pub(crate) use kernel_hook;
    };
}

declare_hooks! { $
    /// Prepares a job before any game is built (builds of databases).
    job[](job: &crate::wire::JobSpec, res: &crate::registry::Resources)
        -> Option<crate::registry::kernel::Prepared> = None, None, Some;
    /// Prepares a job on a two-player zero-sum game (or a max/min tree) at `root`.
    zero_sum[G: crate::games::Exact](
        job: &crate::wire::JobSpec,
        game: G,
        root: G::State,
        res: &crate::registry::Resources,
    ) -> Option<crate::registry::kernel::Prepared> = None, None, Some;
    /// Prepares a job on a game with chance nodes at `root`. `evaluates`: the game has a real
    /// evaluator; `max_view`: values as player 0's utility (trees).
    chance[G: crate::model::ChanceZeroSum](
        job: &crate::wire::JobSpec,
        game: G,
        root: G::State,
        evaluates: bool,
        max_view: bool,
        res: &crate::registry::Resources,
    ) -> Option<crate::registry::kernel::Prepared> = None, None, Some;
    /// Prepares a job on a chance game that has its own stochastic model (MCTS draws its
    /// outcomes); the others search it as [`Kernel::chance`] does.
    stochastic[G: crate::model::ChanceZeroSum](
        job: &crate::wire::JobSpec,
        game: G,
        root: G::State,
        res: &crate::registry::Resources,
    ) -> Option<crate::registry::kernel::Prepared>
        = Self::chance(job, game, root, true, false, res), None, Some;
    /// Prepares a job on a single-player game (position not parsed yet).
    single[G: crate::model::single::SinglePlayer](
        job: &crate::wire::JobSpec,
        game: G,
        res: &crate::registry::Resources,
    ) -> Option<crate::registry::kernel::Prepared> = None, None, Some;
    /// Prepares a job on a multi-player game at `root`.
    multi[G: crate::model::Stochastic + crate::model::VectorEval + crate::model::OutOfTurn](
        job: &crate::wire::JobSpec,
        game: G,
        root: G::State,
    ) -> Option<crate::registry::kernel::Prepared> = None, None, Some;
    /// Prepares a job on an explicit multi-player tree.
    multi_tree[](job: &crate::wire::JobSpec, tree: crate::games::tree::Tree)
        -> Option<crate::registry::kernel::Prepared> = None, None, Some;
    /// Prepares a job on an explicit tree of any kind, before its kind is looked at; `Err`
    /// gives the tree back to the per-kind hooks.
    tree[](
        job: &crate::wire::JobSpec,
        tree: crate::games::tree::Tree,
        res: &crate::registry::Resources,
    ) -> Result<crate::registry::kernel::Prepared, crate::games::tree::Tree>
        = Err(tree), Err(tree), Ok;
}

/// The error of a kernel that does not serve the shape of the job's game: names the kernels
/// that do.
pub fn does_not_apply<L: KernelList>(job: &JobSpec, shape: Shape) -> SolveError {
    SolveError::bad(format!(
        "algorithm '{}' does not apply to game '{}' ({}: {})",
        job.algorithm,
        job.game,
        shape.what(),
        L::serving(shape).join(", ")
    ))
}

/// The families of the list `L`, in order of their first kernel, each with its kernels' names.
pub fn groups<L: KernelList>() -> Vec<(&'static Group, Vec<&'static str>)> {
    let mut out: Vec<(&'static Group, Vec<&'static str>)> = Vec::new();
    for a in L::all() {
        match out.iter_mut().find(|(g, _)| std::ptr::eq(*g, a.group)) {
            Some((_, names)) => names.push(a.name),
            None => out.push((a.group, vec![a.name])),
        }
    }
    out
}
