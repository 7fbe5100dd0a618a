//! Benchmark: the FFO endgame suite (`.obf` lines) with the exact Othello solver, side by side
//! with Edax when its binary is given.
//!
//! ```text
//! cargo run --release -p gamesolver-bench --example ffo_bench -- [--file FILE.obf] [--first 40]
//!     [--only 40,41] [--threads N] [--memory MB] [--random COUNT:LO-HI:SEED]
//!     [--edax PATH/TO/lEdax [--edax-threads N] [--edax-level 60] [--edax-race F]]
//! ```
//! Solves each position (numbered from `--first`) with one full-window search of
//! `othello::solver` on a fresh table of `--memory` MB (64: 4 M entries, as Edax's `-h 22`) and
//! `--threads` threads; prints score (and the suite's), nodes, CPU seconds of this process (user
//! and system: the figure to trust on a loaded machine), wall seconds, nodes per CPU second, and
//! with threads the time spent waiting for work and the split points. `--edax`: Edax solves the
//! same position next (`-solve`, `-l 60 -n N -h 22`, run from the folder above its binary, where
//! `data/eval.dat` lives), interleaved so that load hits both alike; `--edax-race F` stops it at
//! F times our wall time (at least 30 s), its time then a lower bound. Totals, their ratio and
//! the geometric mean of the per-position ratios close the run. A score unlike the suite's or
//! Edax's exits 1. `--random`: positions of seeded random games (LO to HI empties) instead.

use gamesolver_shared::games::othello::solver::{self as othello_solver, Board};
use gamesolver_shared::games::othello::Othello;
use gamesolver_shared::model::Game;
use gamesolver_shared::search::engine::Table;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

/// User + system CPU seconds of this process or of its waited-for children.
fn cpu(who: i32) -> f64 {
    // SAFETY: a zeroed rusage is a valid value; the call only writes it.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable rusage.
    unsafe { libc::getrusage(who, &mut u) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

struct Edax {
    bin: PathBuf,
    threads: usize,
    level: u32,
    /// Stop Edax after this many times our wall time on the position (`--edax-race`).
    race: Option<f64>,
}

/// What Edax gave for one position.
struct EdaxRun {
    /// Score and nodes; `None` when it was stopped (`--edax-race`).
    answer: Option<(i32, u64)>,
    cpu: f64,
    wall: f64,
}

impl Edax {
    /// Solves one `.obf` line, stopped after `limit` wall seconds when given.
    fn solve(&self, line: &str, index: usize, limit: Option<f64>) -> EdaxRun {
        let dir = std::env::temp_dir().join(format!("ffo_bench_{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join(format!("p{index}.obf"));
        std::fs::write(&file, format!("{line}\n")).expect("obf file");
        let home = self
            .bin
            .parent()
            .and_then(|p| p.parent())
            .expect("Edax lives in DIR/bin/");
        let c0 = cpu(libc::RUSAGE_CHILDREN);
        let w0 = Instant::now();
        let out_file = dir.join(format!("p{index}.out"));
        let mut child = Command::new(&self.bin)
            .current_dir(home)
            .args(["-solve", file.to_str().expect("utf-8 path")])
            .args(["-l", &self.level.to_string()])
            .args(["-n", &self.threads.to_string()])
            .args(["-h", "22"])
            .stdout(std::fs::File::create(&out_file).expect("Edax output file"))
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("run Edax");
        let mut stopped = false;
        while child.try_wait().expect("wait for Edax").is_none() {
            if limit.is_some_and(|l| w0.elapsed().as_secs_f64() > l) {
                child.kill().expect("stop Edax");
                child.wait().expect("reap Edax");
                stopped = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let c = cpu(libc::RUSAGE_CHILDREN) - c0;
        let wall = w0.elapsed().as_secs_f64();
        if stopped {
            return EdaxRun {
                answer: None,
                cpu: c,
                wall,
            };
        }
        let text = std::fs::read_to_string(&out_file).expect("Edax output");
        // The result line, "  1|   20   +38        0:01.207      21000788 ..." (older builds
        // put more bars between the columns): the score is the first signed column after the
        // depth, then the time, then the nodes.
        let row = text
            .lines()
            .find(|l| l.trim_start().starts_with("1|"))
            .unwrap_or_else(|| panic!("no Edax result in:\n{text}"));
        let cols: Vec<&str> = row
            .split_once('|')
            .map_or("", |(_, rest)| rest)
            .split(|c: char| c == '|' || c.is_whitespace())
            .filter(|c| !c.is_empty())
            .skip_while(|c| !c.starts_with('+') && !c.starts_with('-'))
            .collect();
        let parsed = (cols.len() >= 3)
            .then(|| {
                Some((
                    cols[0].trim_start_matches('+').parse().ok()?,
                    cols[2].parse().ok()?,
                ))
            })
            .flatten();
        let answer = parsed.unwrap_or_else(|| panic!("unreadable Edax result: {row}"));
        EdaxRun {
            answer: Some(answer),
            cpu: c,
            wall,
        }
    }
}

/// `.obf` lines (no scores) of positions from seeded random games: moves drawn uniformly from
/// the start until `lo..=hi` (drawn per position) squares are empty, kept when the side to
/// move has a move.
fn random_positions(g: &Othello, count: usize, lo: u32, hi: u32, seed: u64) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = String::new();
    let mut moves = Vec::new();
    let mut made = 0;
    while made < count {
        let target = rng.gen_range(lo..=hi);
        let mut s = g.initial_state();
        loop {
            let empties = 64 - (s.discs[0] | s.discs[1]).count_ones();
            if empties <= target || g.is_terminal(&s) {
                break;
            }
            g.legal_moves(&s, &mut moves);
            g.apply(&mut s, moves[rng.gen_range(0..moves.len())]);
        }
        let empties = 64 - (s.discs[0] | s.discs[1]).count_ones();
        let p = s.to_move as usize;
        let stuck = g.geometry().moves(s.discs[p], s.discs[1 - p]) == 0;
        if empties != target || g.is_terminal(&s) || stuck {
            continue;
        }
        out.push_str(&g.board_string(&s.discs, s.to_move));
        out.push_str(";\n");
        made += 1;
    }
    out
}

/// `COUNT:LO-HI:SEED`.
fn parse_random(v: &str) -> Option<(usize, u32, u32, u64)> {
    let mut parts = v.split(':');
    let count = parts.next()?.parse().ok()?;
    let (lo, hi) = parts.next()?.split_once('-')?;
    let seed = parts.next()?.parse().ok()?;
    Some((count, lo.parse().ok()?, hi.parse().ok()?, seed))
}

fn main() {
    let mut file = gamesolver_shared::games::data::data_dir().join("othello/fforum-40-59.obf");
    let mut first = 40usize;
    let mut only: Option<Vec<usize>> = None;
    let mut threads = 1usize;
    let mut memory = 64usize;
    let mut edax: Option<Edax> = None;
    let mut random: Option<(usize, u32, u32, u64)> = None;
    let (mut edax_threads, mut edax_level) = (1usize, 60u32);
    let mut edax_race: Option<f64> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--file" => file = val().into(),
            "--first" => first = val().parse().expect("--first N"),
            "--only" => {
                only = Some(
                    val()
                        .split(',')
                        .map(|x| x.trim().parse().expect("--only 40,41"))
                        .collect(),
                )
            }
            "--threads" => threads = val().parse().expect("--threads N"),
            "--memory" => memory = val().parse().expect("--memory MB"),
            "--edax" => {
                edax = Some(Edax {
                    bin: val().into(),
                    threads: 1,
                    level: 60,
                    race: None,
                })
            }
            "--random" => {
                // COUNT:LO-HI:SEED, e.g. 20:18-24:1
                let v = val();
                random = Some(parse_random(&v).unwrap_or_else(|| {
                    panic!("--random COUNT:LO-HI:SEED (e.g. 20:18-24:1), not {v}")
                }));
            }
            "--edax-threads" => edax_threads = val().parse().expect("--edax-threads N"),
            "--edax-level" => edax_level = val().parse().expect("--edax-level L"),
            "--edax-race" => edax_race = Some(val().parse().expect("--edax-race F")),
            other => panic!("unknown argument {other}"),
        }
    }
    if let Some(e) = &mut edax {
        e.threads = edax_threads;
        e.level = edax_level;
        e.race = edax_race;
    }
    let g = Othello::new(8).expect("8 x 8");
    let text = match random {
        Some((count, lo, hi, seed)) => {
            file =
                format!("random games, {count} positions of {lo}-{hi} empties, seed {seed}").into();
            random_positions(&g, count, lo, hi, seed)
        }
        None => std::fs::read_to_string(&file).expect("read the .obf file"),
    };
    println!(
        "ffo_bench: {} threads {threads}, table {memory} MB, load {}",
        file.display(),
        load()
    );
    let (mut tn, mut tc, mut tw, mut en, mut ec, mut ew) = (0u64, 0f64, 0f64, 0u64, 0f64, 0f64);
    let mut ti = 0f64;
    let mut log_ratio = 0f64;
    let mut count = 0;
    let mut wrong = 0;
    let mut edax_stopped = 0;
    for (i, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let index = first + i;
        if only.as_ref().is_some_and(|o| !o.contains(&index)) {
            continue;
        }
        let (board, scores) = line.split_once(';').unwrap_or((line, ""));
        let want: Option<i32> = scores
            .split(';')
            .next()
            .and_then(|s| s.split_once(':'))
            .and_then(|(_, v)| v.trim().trim_start_matches('+').parse().ok());
        let st = g.parse_position(board).expect("an .obf board");
        let p = st.to_move as usize;
        let (me, opp) = (st.discs[p], st.discs[1 - p]);
        let empties = 64 - (me | opp).count_ones();
        let table = Table::with_bytes(memory << 20).expect("table");
        let c0 = cpu(libc::RUSAGE_SELF);
        let w0 = Instant::now();
        let (v, stats) = othello_solver::solve_stats(Board::of(&g), me, opp, &table, threads);
        let nodes = stats.nodes;
        let c = cpu(libc::RUSAGE_SELF) - c0;
        let w = w0.elapsed().as_secs_f64();
        let ok = want.is_none_or(|w| w == v);
        if !ok {
            wrong += 1;
        }
        tn += nodes;
        tc += c;
        tw += w;
        count += 1;
        print!(
            "#{index} {empties:>2} empties score {v:>+3} ({}) nodes {nodes:>11} cpu {c:>8.3} s wall {w:>8.3} s {:>6.1} Mn/cpu-s",
            match want {
                Some(w) if w == v => "ok".to_string(),
                Some(w) => format!("WRONG, suite {w:+}"),
                None => "-".to_string(),
            },
            nodes as f64 / c / 1e6
        );
        if threads > 1 {
            ti += stats.idle.as_secs_f64();
            print!(
                " idle {:.3} s splits {}",
                stats.idle.as_secs_f64(),
                stats.splits
            );
        }
        if let Some(e) = &edax {
            let run = e.solve(line, index, e.race.map(|f| (f * w).max(30.0)));
            ec += run.cpu;
            ew += run.wall;
            log_ratio += (c / run.cpu).ln();
            match run.answer {
                Some((ev, enodes)) => {
                    en += enodes;
                    if ev != v {
                        wrong += 1;
                        print!(" EDAX SCORES {ev:+}");
                    }
                    print!(
                        " | edax {ev:>+3} nodes {enodes:>11} cpu {:>8.3} s wall {:>8.3} s {:>6.1} Mn/cpu-s ratio {:.2}",
                        run.cpu,
                        run.wall,
                        enodes as f64 / run.cpu / 1e6,
                        c / run.cpu
                    );
                }
                None => {
                    edax_stopped += 1;
                    print!(
                        " | edax stopped unfinished after cpu {:>8.3} s wall {:>8.3} s ratio under {:.2}",
                        run.cpu,
                        run.wall,
                        c / run.cpu
                    );
                }
            }
        }
        println!(" load {}", load());
    }
    println!(
        "total: {count} positions, {wrong} wrong, nodes {tn} cpu {tc:.3} s wall {tw:.3} s {:.1} Mn/cpu-s idle {ti:.3} s",
        tn as f64 / tc / 1e6
    );
    if edax.is_some() && count > 0 {
        let (over, under) = if edax_stopped > 0 {
            ("over ", "under ")
        } else {
            ("", "")
        };
        println!(
            "edax total ({edax_stopped} stopped unfinished): nodes {en} (finished runs) cpu {over}{ec:.3} s wall {over}{ew:.3} s; ours/edax cpu {under}{:.2} (total), {under}{:.2} (geometric mean), wall {under}{:.2}",
            tc / ec,
            (log_ratio / count as f64).exp(),
            tw / ew
        );
    }
    println!("load {}", load());
    if wrong > 0 {
        std::process::exit(1);
    }
}
