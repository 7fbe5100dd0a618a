//! Criterion benchmarks of the library (issue 12): move generation per game (perft counts with
//! their published values, asserted before timing) and nodes per second per kernel on fixed
//! positions (node counts asserted against the signatures that `gamesolver-bench` also checks,
//! so a change in search behaviour fails here before a figure is taken).
//!
//! Run: `cargo bench -p gamesolver-shared --bench kernels` (add `-- perft` or `-- kernel` to
//! pick a group). Throughput is reported in elements = leaves (perft) or nodes (kernels), so
//! criterion prints leaves/s and nodes/s. On a loaded machine the times are several times too
//! high; the counts are exact.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use gamesolver_shared::games::{connect4::Connect4, mnk::Mnk, othello::Othello};
use gamesolver_shared::model::{Game, Turn};
use gamesolver_shared::plan::run_local;
use gamesolver_shared::registry;
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::JobSpec;
use std::time::Duration;

/// Leaves `depth` plies below `state`; terminal states above that depth count 0.
fn perft<G: Game>(game: &G, state: &G::State, depth: u32, moves: &mut Vec<Vec<G::Move>>) -> u64 {
    if depth == 0 {
        return 1;
    }
    if matches!(game.turn(state), Turn::Terminal) {
        return 0;
    }
    let mut here = moves.pop().unwrap_or_default();
    game.legal_moves(state, &mut here);
    let mut total = 0;
    for &m in &here {
        let mut child = state.clone();
        game.apply(&mut child, m);
        total += perft(game, &child, depth - 1, moves);
    }
    moves.push(here);
    total
}

fn bench_perft<G: Game>(c: &mut Criterion, name: &str, game: G, depth: u32, published: u64) {
    let root = game.initial_state();
    let mut buffers = Vec::new();
    let leaves = perft(&game, &root, depth, &mut buffers);
    assert_eq!(
        leaves, published,
        "perft {name} depth {depth}: the move generator changed"
    );
    let mut group = c.benchmark_group("perft");
    group.throughput(Throughput::Elements(leaves));
    group.sample_size(10);
    group.bench_function(format!("{name} depth {depth}"), |b| {
        b.iter(|| perft(&game, black_box(&root), depth, &mut buffers))
    });
    group.finish();
}

fn perft_benches(c: &mut Criterion) {
    // Published counts: 7^6 for Connect Four at depth 6; tic-tac-toe games reaching ply 9
    // (127,872 of the 255,168); Othello 8x8 at depth 6 (8,200).
    bench_perft(
        c,
        "connect4 7x6",
        Connect4::<u64>::new(7, 6, 1).unwrap(),
        6,
        117_649,
    );
    bench_perft(c, "tictactoe", Mnk::new(3, 3, 3).unwrap(), 9, 127_872);
    bench_perft(c, "othello 8x8", Othello::new(8).unwrap(), 6, 8_200);
}

/// A fixed job with its one-thread node count (the signature of `gamesolver-bench`).
struct Fixed {
    name: &'static str,
    game: &'static str,
    params: &'static [(&'static str, &'static str)],
    position: &'static str,
    algorithm: &'static str,
    options: &'static [(&'static str, &'static str)],
    nodes: u64,
}

const FIXED: &[Fixed] = &[
    Fixed {
        name: "alphabeta connect4 5455174361263362",
        game: "connect4",
        params: &[],
        position: "5455174361263362",
        algorithm: "alphabeta",
        options: &[],
        nodes: 163_934,
    },
    Fixed {
        name: "pns connect4 4435612735531457155143",
        game: "connect4",
        params: &[],
        position: "4435612735531457155143",
        algorithm: "pns",
        options: &[],
        nodes: 12_621,
    },
    Fixed {
        name: "dfpn connect4 715371563635542612576371 target 1",
        game: "connect4",
        params: &[],
        position: "715371563635542612576371",
        algorithm: "dfpn",
        options: &[("target", "1")],
        nodes: 14_044,
    },
    Fixed {
        name: "mcts connect4 start 20000 playouts",
        game: "connect4",
        params: &[],
        position: "",
        algorithm: "mcts",
        options: &[("playouts", "20000"), ("trees", "2"), ("seed", "7")],
        nodes: 20_000,
    },
    Fixed {
        name: "nrpa morpion 5D level 1",
        game: "morpion",
        params: &[("variant", "5D")],
        position: "",
        algorithm: "nrpa",
        options: &[("level", "1"), ("iterations", "100"), ("seed", "3")],
        nodes: 100,
    },
];

fn kernel_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("kernel");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    for f in FIXED {
        let job = JobSpec::new(f.game, f.position, f.algorithm)
            .with_params(f.params)
            .with_options(f.options);
        let prepared = registry::prepare(&job).expect("fixed job");
        let ctl = Control::unlimited().with_threads(1);
        let first = run_local(prepared.as_ref(), &ctl).expect("fixed job runs");
        assert_eq!(
            first.nodes, f.nodes,
            "{}: node-count signature changed",
            f.name
        );
        group.throughput(Throughput::Elements(first.nodes));
        group.bench_function(f.name, |b| {
            b.iter(|| run_local(prepared.as_ref(), &ctl).expect("runs").nodes)
        });
    }
    group.finish();
}

criterion_group!(benches, perft_benches, kernel_benches);
criterion_main!(benches);
