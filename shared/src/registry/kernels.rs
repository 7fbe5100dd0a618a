//! The algorithm catalogue: every kernel the registry knows, one line each.
//!
//! A kernel declares itself once, in its own file under `kernels/`, by a type that implements
//! [`Kernel`] (its name, the shapes of game it serves, its family's option table, its prepare
//! hooks), written with `kernel::kernel!` or a family's macro on top of it. [`ALGORITHMS`],
//! [`super::option_specs`], [`super::families`], the analysis and `tables` allow-lists, the
//! command line's help, `/openapi.json`, the dashboard and the fuzz lists derive from the list
//! below. Adding a kernel is its own file under `kernels/` plus one line in that list.
//!
//! The list is a type ([`Kernels`]), so a test can prepare jobs with a longer one
//! ([`super::prepare_in`] with `(Toy, Kernels)`) without editing anything here.

pub use super::kernel::{groups, Algorithm, Analyse, Group, Kernel, KernelList, Prepared, Shape};

/// The one list of kernels: `name::Type` declares the module `kernels/name.rs` and lists its
/// kernel `Type`; generates [`Kernels`] (the list as a type) and [`ALGORITHMS`].
macro_rules! catalogue {
    (@list) => { () };
    (@list $m:ident :: $k:ident $(, $($rest:tt)*)?) => {
        ($m::$k, catalogue!(@list $($($rest)*)?))
    };
    ($($m:ident :: $k:ident),* $(,)?) => {
        $(pub mod $m;)*
        /// The kernels, in catalogue order, as a [`KernelList`].
        pub type Kernels = catalogue!(@list $($m::$k),*);
        /// Algorithm names a job may give, in catalogue order.
        pub const ALGORITHMS: &[&str] = &[$(<$m::$k as Kernel>::ALGORITHM.name),*];
    };
}

catalogue![
    minimax::Minimax,
    alphabeta::Alphabeta,
    pns::Pns,
    dfpn::Dfpn,
    pn2::Pn2,
    pdspn::Pdspn,
    jlpns::Jlpns,
    expectimax::Expectimax,
    star1::Star1,
    star2::Star2,
    star25::Star25,
    maxn::Maxn,
    paranoid::Paranoid,
    brs::Brs,
    mcts::Mcts,
    nmcs::Nmcs,
    nrpa::Nrpa,
    retrograde::Retrograde,
];

/// Every kernel's declaration, in catalogue order.
pub fn entries() -> Vec<&'static Algorithm> {
    Kernels::all()
}

/// The declaration of the catalogue's kernel `name`.
pub fn find(name: &str) -> Option<&'static Algorithm> {
    Kernels::find(name)
}

/// The names of the catalogue's kernels of `group`.
pub fn of_group(group: &Group) -> Vec<&'static str> {
    entries()
        .into_iter()
        .filter(|a| std::ptr::eq(a.group, group))
        .map(|a| a.name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::Exact;
    use crate::model::Game;
    use crate::plan::{run_local, PlanShape};
    use crate::registry::kernel::skip_none;
    use crate::registry::{families, option_specs, option_specs_in, prepare, prepare_in, Opts};
    use crate::registry::{PreparedJob, Resources, SolveError, Spec};
    use crate::search::Control;
    use crate::wire::JobSpec;
    use crate::wire::{TaskKind, TaskOutput};

    /// `plies`: how deep the toy counts.
    const PLIES: Spec = Spec::uint(
        "plies",
        1,
        4,
        crate::registry::spec::DefaultValue::UInt(1),
        "plies to count",
        "a toy's bound",
    );

    /// The toy's family: one option.
    static TOY: Group = Group {
        title: "Toy",
        options: &[PLIES],
        skip: skip_none,
    };

    /// A kernel declared in a test, as a new kernel's file would declare it: it counts the
    /// positions `plies` plies below the root of a two-player zero-sum game.
    struct Perft;

    impl Kernel for Perft {
        const ALGORITHM: Algorithm = Algorithm {
            name: "perft",
            serves: &[Shape::ZeroSum],
            group: &TOY,
            analyse: Analyse::No,
        };
        fn zero_sum<G: Exact>(
            job: &JobSpec,
            game: G,
            root: G::State,
            _: &Resources,
        ) -> Option<Prepared> {
            let opts = Opts::new(&job.options, "option");
            let plies = match opts.uint_value::<u32>(&PLIES) {
                Ok(p) => p,
                Err(e) => return Some(Err(e)),
            };
            if let Err(e) = opts.finish() {
                return Some(Err(e));
            }
            Some(Ok(Box::new(PerftJob {
                job: job.clone(),
                game,
                root,
                plies,
            })))
        }
    }

    struct PerftJob<G: Exact> {
        job: JobSpec,
        game: G,
        root: G::State,
        plies: u32,
    }

    fn count<G: Game>(game: &G, s: &G::State, plies: u32) -> u64 {
        if plies == 0 || game.is_terminal(s) {
            return 1;
        }
        let mut moves = Vec::new();
        game.legal_moves(s, &mut moves);
        moves
            .iter()
            .map(|&m| {
                let mut c = s.clone();
                game.apply(&mut c, m);
                count(game, &c, plies - 1)
            })
            .sum()
    }

    impl<G: Exact> PreparedJob for PerftJob<G> {
        fn job(&self) -> &JobSpec {
            &self.job
        }
        fn plan_shape(&self) -> PlanShape {
            PlanShape::Single
        }
        fn run(&self, _: &TaskKind, _: &Control) -> Result<TaskOutput, SolveError> {
            let n = count(&self.game, &self.root, self.plies);
            Ok(TaskOutput {
                value: n.into(),
                nodes: n,
                ..TaskOutput::default()
            })
        }
    }

    /// The catalogue with the toy in front.
    type WithPerft = (Perft, Kernels);

    /// A kernel declared outside the catalogue's files is reachable through the whole prepare
    /// path (name check, game building, the zero-sum family's shared steps, its own options and
    /// their errors) and has its options listed, with the list as the only thing given.
    #[test]
    fn a_kernel_declared_in_a_test_is_prepared_and_run() {
        let job = JobSpec::new("tictactoe", "", "perft").with_options(&[("plies", "2")]);
        assert!(prepare(&job).is_err(), "not in the catalogue");
        let p = prepare_in::<WithPerft>(&job, &Resources::MAX).unwrap();
        let r = run_local(p.as_ref(), &Control::unlimited()).unwrap();
        assert_eq!(r.value, serde_json::json!(72));
        let bad = JobSpec::new("tictactoe", "", "perft").with_options(&[("plies", "5")]);
        let e = prepare_in::<WithPerft>(&bad, &Resources::MAX)
            .err()
            .unwrap();
        assert!(e.to_string().contains("'plies=5' is out of bounds"), "{e}");
        // A game it does not serve: the family's error names the kernels that do.
        let pig = JobSpec::new("pig", "", "perft");
        let e = prepare_in::<WithPerft>(&pig, &Resources::MAX)
            .err()
            .unwrap();
        assert!(
            e.to_string().contains("does not apply to game 'pig'"),
            "{e}"
        );
        // The catalogue's kernels still work through the longer list.
        let ab = JobSpec::new("tictactoe", "", "alphabeta");
        assert!(prepare_in::<WithPerft>(&ab, &Resources::MAX).is_ok());
        // Its options, as `gamesolver options` lists them.
        let listed = option_specs_in::<WithPerft>("tictactoe", "perft");
        assert_eq!(listed.first().map(|d| d.spec.name), Some("plies"));
        assert!(option_specs("tictactoe", "perft").is_empty());
        assert!(option_specs_in::<WithPerft>("pig", "perft").is_empty());
        let first = &groups::<WithPerft>()[0];
        assert!(std::ptr::eq(first.0, &TOY) && first.1 == ["perft"]);
    }

    /// Names are unique, each group's kernels are listed together, and the families the
    /// documents print are the catalogue's groups.
    #[test]
    fn the_catalogue_is_consistent() {
        for (i, name) in ALGORITHMS.iter().enumerate() {
            assert!(!ALGORITHMS[..i].contains(name), "{name} twice");
        }
        let all: Vec<&str> = entries().iter().map(|a| a.name).collect();
        assert_eq!(all, ALGORITHMS);
        let groups = groups::<Kernels>();
        let mut seen = Vec::new();
        for a in entries() {
            if seen.last().is_some_and(|g| std::ptr::eq(*g, a.group)) {
                continue;
            }
            assert!(
                !seen.iter().any(|g| std::ptr::eq(*g, a.group)),
                "{}: its family's kernels are not listed together",
                a.name
            );
            seen.push(a.group);
        }
        assert_eq!(families().len(), groups.len() + 1);
    }
}
