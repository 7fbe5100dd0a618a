//! Criterion benchmarks of the library: move generation per game and nodes per second per
//! kernel, on the harness's own lists ([`PERFT`] with their published counts, [`SIGNATURES`]
//! with their node counts), each count asserted before timing so that a change in the move
//! generator or in a kernel's search fails here before a figure is taken.
//!
//! Run: `cargo bench -p gamesolver-bench --bench kernels` (add `-- perft` or `-- kernel` to pick
//! a group). Throughput is in elements = leaves (perft) or nodes (kernels), so criterion prints
//! leaves/s and nodes/s. On a loaded machine the times are several times too high; the counts
//! are exact.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gamesolver_bench::{perft_named, PERFT, SIGNATURES};
use gamesolver_shared::plan::run_local;
use gamesolver_shared::registry;
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::JobSpec;
use std::time::Duration;

fn perft_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("perft");
    group.sample_size(10);
    for &(game, depth, published) in PERFT {
        let leaves = perft_named(game, depth).expect("a perft game");
        assert_eq!(
            leaves, published,
            "perft {game} depth {depth}: the move generator changed"
        );
        group.throughput(Throughput::Elements(leaves));
        group.bench_function(format!("{game} depth {depth}"), |b| {
            b.iter(|| perft_named(game, depth))
        });
    }
    group.finish();
}

fn kernel_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("kernel");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    for s in SIGNATURES {
        let job = JobSpec::new(s.game, s.position, s.algorithm)
            .with_params(s.params)
            .with_options(s.options);
        let prepared = registry::prepare(&job).expect("signature job");
        let ctl = Control::unlimited().with_threads(1);
        let first = run_local(prepared.as_ref(), &ctl).expect("signature job runs");
        assert_eq!(
            first.nodes, s.nodes,
            "{}: node-count signature changed",
            s.kernel
        );
        group.throughput(Throughput::Elements(first.nodes));
        group.bench_function(s.kernel, |b| {
            b.iter(|| run_local(prepared.as_ref(), &ctl).expect("runs").nodes)
        });
    }
    group.finish();
}

criterion_group!(benches, perft_benches, kernel_benches);
criterion_main!(benches);
