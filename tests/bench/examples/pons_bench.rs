//! Benchmark: Pons' Connect Four test sets, single-threaded, a fresh (reset) table per position,
//! through the same path as `gamesolver batch` (`registry::prepare` + `plan::run_local`).
//!
//! ```text
//! cargo run --release -p gamesolver-bench --example pons_bench -- [N] [SET...] [--threads T] [--weak] [--memory MB] [--option K=V]...
//! ```
//! `N` (default 100) is how many positions of each set to run (from the top); sets default to
//! all six. Prints mean wall time, mean CPU time of this thread (Linux; the figure to trust on a
//! loaded machine) and mean nodes per position, and checks every score. With `--threads`, the
//! CPU column counts the main thread only. `--memory MB` is the job's `memory_mb` option (table
//! budget). `--option K=V` adds any other job option (e.g. `guess=0` to start the probes
//! there); the probes a job took are summed in the last column. A set is a file of lines
//! `<moves> <score>` in `$GAMESOLVER_DATA/connect4/`; the line ` 1` (no moves) is the empty
//! board.
//!
//! `--peer PROGRAM` runs a peer solver on the same positions right after each set (interleaved,
//! so the machine's load hits both alike) and prints the ratio of our mean time to its. The peer
//! is called as `PROGRAM FILE N [-w]` and must print one line containing `wall <us> us` and
//! `cpu <us> us` (means per position, table reset per position, solve time only); the driver
//! used for Pons' solver is described in docs/BENCHMARKS.md (Connect Four section).

use gamesolver_shared::plan::run_local;
use gamesolver_shared::registry::prepare;
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::JobSpec;
use std::path::Path;
use std::time::Instant;

/// CPU time of the calling thread in seconds (`CLOCK_THREAD_CPUTIME_ID`), if available.
fn thread_cpu() -> Option<f64> {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec; the call only writes it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    (rc == 0).then_some(t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9)
}

fn show(secs: f64) -> String {
    if secs < 1e-3 {
        format!("{:8.1} us", secs * 1e6)
    } else if secs < 1.0 {
        format!("{:8.2} ms", secs * 1e3)
    } else {
        format!("{:8.2} s ", secs)
    }
}

fn main() {
    let mut n = 100usize;
    let mut sets = Vec::new();
    let mut threads = 1usize;
    let mut weak = false;
    let mut peer: Option<String> = None;
    let mut memory_mb: Option<String> = None;
    let mut extra: Vec<(String, String)> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--threads" {
            threads = args
                .next()
                .and_then(|t| t.parse().ok())
                .expect("--threads T");
        } else if a == "--peer" {
            peer = Some(args.next().expect("--peer PROGRAM"));
        } else if a == "--memory" {
            memory_mb = Some(args.next().expect("--memory MB"));
        } else if a == "--option" {
            let kv = args.next().expect("--option K=V");
            let (k, v) = kv.split_once('=').expect("--option K=V");
            extra.push((k.to_string(), v.to_string()));
        } else if a == "--weak" {
            weak = true;
        } else if let Ok(v) = a.parse() {
            n = v;
        } else {
            sets.push(a);
        }
    }
    if sets.is_empty() {
        sets = [
            "Test_L3_R1",
            "Test_L2_R1",
            "Test_L2_R2",
            "Test_L1_R1",
            "Test_L1_R2",
            "Test_L1_R3",
        ]
        .map(String::from)
        .to_vec();
    }
    let data = gamesolver_shared::games::data::data_dir();
    warm_table_pool();
    println!(
        "set          positions   mean wall     mean cpu      mean nodes   probes   (threads {threads}{})",
        if weak { ", weak" } else { "" }
    );
    for set in sets {
        let text = std::fs::read_to_string(data.join("connect4").join(&set)).expect("read set");
        let mut total = 0.0f64;
        let mut cpu_total = 0.0f64;
        let cpu0 = thread_cpu();
        let mut nodes = 0u64;
        let mut count = 0usize;
        let mut probes = 0u64;
        for line in text.lines().filter(|l| !l.trim().is_empty()).take(n) {
            let (moves, want) = line.split_once(' ').expect("'<moves> <score>'");
            let want: i64 = want.trim().parse().expect("score");
            let mut options = std::collections::BTreeMap::new();
            options.insert("threads".to_string(), threads.to_string());
            if weak {
                options.insert("weak".to_string(), "true".to_string());
            }
            if let Some(mb) = &memory_mb {
                options.insert("memory_mb".to_string(), mb.clone());
            }
            for (k, v) in &extra {
                options.insert(k.clone(), v.clone());
            }
            let job = JobSpec {
                game: "connect4".into(),
                position: moves.into(),
                algorithm: "alphabeta".into(),
                options,
                ..JobSpec::default()
            };
            let t0 = Instant::now();
            let c0 = thread_cpu();
            let prepared = prepare(&job).expect("prepare");
            let result = run_local(prepared.as_ref(), &Control::unlimited()).expect("run");
            total += t0.elapsed().as_secs_f64();
            if let (Some(a), Some(b)) = (c0, thread_cpu()) {
                cpu_total += b - a;
            }
            let want = if weak { want.signum() } else { want };
            assert_eq!(result.value, serde_json::json!(want), "{set} '{moves}'");
            nodes += result.nodes;
            // One-task jobs (end games) report no probes: count them as one.
            probes += result
                .extra
                .get("probes")
                .and_then(|p| p.as_u64())
                .unwrap_or(1);
            if std::env::var_os("PONS_VERBOSE").is_some() {
                println!(
                    "{moves} {want} nodes {} probes {}",
                    result.nodes, result.extra["probes"]
                );
            }
            count += 1;
        }
        let per = |x: f64| x / count.max(1) as f64;
        let cpu = match cpu0 {
            Some(_) => show(per(cpu_total)),
            None => "     n/a   ".into(),
        };
        println!(
            "{set:<12} {count:>9}   {}   {cpu}   {:>12.0}   {probes:>6}",
            show(per(total)),
            per(nodes as f64)
        );
        if let Some(peer) = &peer {
            run_peer(
                peer,
                &data.join("connect4").join(&set),
                count,
                weak,
                per(total),
                per(cpu_total),
            );
        }
    }
}

/// Puts a touched table of every size a job may ask for (4 KB .. 64 MB) in the engine's pool, so
/// the timed runs find their table the way a long-running worker does, instead of paying the
/// kernel's first-touch page faults (the peers, too, allocate their table once, untimed).
fn warm_table_pool() {
    use gamesolver_shared::search::engine::Table;
    let tables: Vec<Table> = (12..=26)
        .map(|k| {
            let t = Table::take(1 << k).expect("table");
            for w in t.raw_words().0 {
                w.store(0, std::sync::atomic::Ordering::Relaxed);
            }
            t
        })
        .collect();
    for t in tables {
        t.recycle();
    }
}

/// Runs the peer on the first `count` positions of `file` and prints its means and our ratios.
fn run_peer(peer: &str, file: &Path, count: usize, weak: bool, wall: f64, cpu: f64) {
    let mut cmd = std::process::Command::new(peer);
    cmd.arg(file).arg(count.to_string());
    if weak {
        cmd.arg("-w");
    }
    let out = cmd.output().expect("run the peer");
    let line = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let field = |name: &str| -> Option<f64> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let i = words.iter().position(|w| *w == name)?;
        words.get(i + 1)?.parse::<f64>().ok().map(|us| us * 1e-6)
    };
    match (field("wall"), field("cpu")) {
        (Some(pw), Some(pc)) => println!(
            "  peer       {count:>9}   {}   {}   ratio wall {:.2}  cpu {:.2}   ({line})",
            show(pw),
            show(pc),
            wall / pw,
            cpu / pc
        ),
        _ => println!("  peer: no 'wall <us>' and 'cpu <us>' in its output: {line}"),
    }
}
