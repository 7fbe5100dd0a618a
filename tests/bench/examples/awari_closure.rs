//! Measurement: how much of its stone count an Awari position reaches without a capture (issue
//! #26, "positions of 21+ stones solved by alpha-beta with the databases"). With the databases
//! of every lower count, an exact search of an N-stone position still has to decide the
//! capture-free play among N-stone boards (captures land in the databases); its reach bounds
//! what any exact search of the position must cover. For random boards of each stone count the
//! example walks every board reachable by capture-free moves (a bit per board of the count, a
//! stack of ranks) and prints its size against the count's whole database.
//!
//! ```text
//! cargo run --release -p gamesolver-bench --example awari_closure -- STONES[,STONES...] [COUNT] [SEED]
//! ```

use gamesolver_shared::games::awari::Awari;
use gamesolver_shared::model::{Game, Retrograde};
use rand::{Rng, SeedableRng};
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let stones: Vec<usize> = args
        .next()
        .expect("STONES[,STONES...]")
        .split(',')
        .map(|s| s.parse().expect("a stone count"))
        .collect();
    let count: usize = args.next().map_or(5, |c| c.parse().expect("COUNT"));
    let seed: u64 = args.next().map_or(5, |c| c.parse().expect("SEED"));
    let g = Awari::default();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut moves = Vec::new();
    println!("stones position reached of share seconds");
    for &n in &stones {
        let len = g.db_len(n);
        let mut seen = vec![0u64; len.div_ceil(64) as usize];
        for _ in 0..count {
            seen.fill(0);
            let root = g.unrank(n, rng.gen_range(0..len));
            let t = Instant::now();
            let (_, i) = g.rank(&root);
            seen[(i / 64) as usize] |= 1 << (i % 64);
            let mut stack = vec![i];
            let mut reached = 1u64;
            while let Some(i) = stack.pop() {
                let board = g.unrank(n, i);
                g.legal_moves(&g.state_of(board), &mut moves);
                for &m in &moves {
                    let (next, captured) = g.sow(&board, m as usize);
                    if captured > 0 {
                        continue;
                    }
                    let (_, j) = g.rank(&next);
                    let (w, bit) = ((j / 64) as usize, 1u64 << (j % 64));
                    if seen[w] & bit == 0 {
                        seen[w] |= bit;
                        reached += 1;
                        stack.push(j);
                    }
                }
            }
            println!(
                "{n} {} {reached} {len} {:.3} {:.1}",
                g.format_position(&g.state_of(root)),
                reached as f64 / len as f64,
                t.elapsed().as_secs_f64()
            );
        }
    }
}
