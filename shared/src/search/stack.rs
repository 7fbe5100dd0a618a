//! The stack of kernel threads.
//!
//! Kernels that recurse (minimax, alpha-beta, df-pn, expectimax and the Star kernels, max^n,
//! paranoid, best-reply, NMCS, NRPA) go one frame deeper per ply, so their deepest stack is set
//! by the bounds of a job: at most `registry::spec::MAX_DEPTH` plies of depth-limited search,
//! and at most the game's length for exact search (at most 448 cells for Connect Four, 256
//! for m,n,k; Pig and backgammon never end by themselves, so their `depth` bound is what stops
//! them). [`KERNEL_STACK_BYTES`] is sized for that, so a job within the bounds cannot overflow
//! the stack of a thread made by [`spawn_kernel`].

/// Stack size of a thread that runs kernels: over a hundred times the deepest need of a job
/// within the bounds (0.5 MiB, the chance kernels at `depth=512` on backgammon; `measure_stack`
/// below finds it), a margin for debug builds and bigger states. It is address space: a thread
/// only touches the pages it uses.
pub const KERNEL_STACK_BYTES: usize = 64 << 20;

/// Runs `f` on a new thread with a [`KERNEL_STACK_BYTES`] stack and returns what it returns; a
/// panic in `f` is resumed on the caller's thread.
pub fn run_on_kernel_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        let h = std::thread::Builder::new()
            .name("kernel".into())
            .stack_size(KERNEL_STACK_BYTES)
            .spawn_scoped(s, f)
            .expect("spawn a kernel thread");
        match h.join() {
            Ok(v) => v,
            Err(p) => std::panic::resume_unwind(p),
        }
    })
}

#[cfg(test)]
mod tests {
    use crate::plan::run_local;
    use crate::registry::kernels::of_group;
    use crate::registry::{chance, multi, prepare};
    use crate::search::Control;
    use crate::wire::JobSpec;

    /// Jobs at the depth bound (or the longest game) for every recursive kernel family, each
    /// stopped by a node limit large enough to reach the bottom first (the kernels go depth
    /// first).
    fn deepest_jobs(d: &str) -> Vec<JobSpec> {
        let mut jobs = Vec::new();
        for alg in of_group(&chance::GROUP) {
            jobs.push(JobSpec::new("pig", "", alg).with_options(&[("depth", d)]));
            let roll = "-2,0,0,0,0,5,0,3,0,0,0,-5,5,0,0,0,-3,0,-5,0,0,0,0,2 0-0 X 31";
            jobs.push(JobSpec::new("backgammon", roll, alg).with_options(&[("depth", d)]));
        }
        for alg in of_group(&multi::GROUP) {
            jobs.push(JobSpec::new("rolit", "", alg).with_options(&[("depth", d)]));
        }
        // Exact search of the longest games: every cell filled before anyone wins.
        let big = [("m", "16"), ("n", "16"), ("k", "16")];
        for alg in ["minimax", "alphabeta", "dfpn", "pns"] {
            jobs.push(JobSpec::new("mnk", "", alg).with_params(&big));
        }
        jobs.push(
            JobSpec::new("mnk", "", "alphabeta")
                .with_params(&big)
                .with_options(&[("depth", d)]),
        );
        let tall = [("width", "7"), ("height", "63")];
        jobs.push(JobSpec::new("connect4", "", "alphabeta").with_params(&tall));
        jobs.push(JobSpec::new("connect4", "", "dfpn").with_params(&tall));
        jobs.push(JobSpec::new("samegame", "", "nmcs").with_options(&[("level", "8")]));
        jobs.push(
            JobSpec::new("samegame", "", "nrpa")
                .with_options(&[("level", "8"), ("iterations", "2")]),
        );
        for j in &mut jobs {
            j.limits.node_limit = Some(20_000);
        }
        jobs
    }

    fn run(j: &JobSpec) {
        let p = prepare(j).unwrap_or_else(|e| panic!("{j:?}: {e}"));
        // A node limit ends the job with or without a result: either is fine here.
        let _ = run_local(p.as_ref(), &Control::unlimited());
    }

    /// Runs every job of `algorithms` at the depth bound on a kernel thread: none overflows.
    fn family_fits(algorithms: &[&str]) {
        let depth = crate::registry::spec::MAX_DEPTH.to_string();
        let jobs: Vec<JobSpec> = deepest_jobs(&depth)
            .into_iter()
            .filter(|j| algorithms.contains(&j.algorithm.as_str()))
            .collect();
        assert!(!jobs.is_empty());
        for j in jobs {
            super::run_on_kernel_stack(|| run(&j));
        }
    }

    #[test]
    fn chance_kernels_at_the_depth_bound_fit_the_kernel_stack() {
        family_fits(&of_group(&chance::GROUP));
    }

    #[test]
    fn multi_player_kernels_at_the_depth_bound_fit_the_kernel_stack() {
        family_fits(&of_group(&multi::GROUP));
    }

    #[test]
    fn zero_sum_kernels_on_the_longest_games_fit_the_kernel_stack() {
        family_fits(&["minimax", "alphabeta"]);
    }

    #[test]
    fn proof_number_kernels_on_the_longest_games_fit_the_kernel_stack() {
        family_fits(&["pns", "dfpn"]);
    }

    #[test]
    fn nested_kernels_at_the_level_bound_fit_the_kernel_stack() {
        family_fits(&["nmcs", "nrpa"]);
    }

    /// How the constant was found: `STACK_KB=N JOB=i [DEPTH=d] cargo test --release -p gamesolver-shared
    /// --lib measure_stack -- --ignored` runs job `i` of [`deepest_jobs`] on a thread of N KiB;
    /// the smallest N that does not overflow is its need.
    #[test]
    #[ignore]
    fn measure_stack() {
        let kb: usize = std::env::var("STACK_KB").unwrap().parse().unwrap();
        let i: usize = std::env::var("JOB").unwrap().parse().unwrap();
        let depth =
            std::env::var("DEPTH").unwrap_or_else(|_| crate::registry::spec::MAX_DEPTH.to_string());
        let j = deepest_jobs(&depth)[i].clone();
        std::thread::Builder::new()
            .stack_size(kb << 10)
            .spawn(move || run(&j))
            .unwrap()
            .join()
            .unwrap();
    }
}
