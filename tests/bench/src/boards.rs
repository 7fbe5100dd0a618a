//! `gamesolver-bench c4-boards`: Connect Four solved on every board of the published table with
//! width + height at most `--max-sum` (both sides at least 4), through the service, checked
//! against the published outcome and the move on which perfect play ends, and written as a
//! Markdown table (default `docs/CONNECT4_BOARDS.md`), next to ChristopheSteininger/c4 built
//! for the same sizes (`--peer DIR`, see `tests/bench/peers/build_c4.sh`).
//!
//! [`PUBLISHED`] is `tests/bench/data/connect4_boards.txt` (its header names the source:
//! ChristopheSteininger/c4's readme, which credits John Tromp for width + height <= 15): per board
//! the outcome under perfect play and the ply on which the game ends. Our value on the empty board
//! is the first player's score (a win on ply `n` scores `1 + (W*H - n) / 2`), so [`outcome_of`]
//! recovers the ply from the score and the winner's parity; a draw ends on ply `W*H`.
//!
//! A run: one coordinator and one worker with `--threads` slots and a `--memory-mb` table; each
//! board is one job, timed by the coordinator and cancelled after `--limit-s`. The file is
//! rewritten after every board, and rows of boards or algorithms not run this time are kept, so
//! long boards can be added by later runs (`--boards 7x7`); it lists every run's command, date,
//! load and commit. Exit status 1 when a board's result differs from the published one (after
//! the file is written).

use crate::{bad, failed, http, load, run_peer, utc_now, BenchError, Service};
use clap::Args;
use gamesolver_shared::wire::JobSpec;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The published table (see the module doc).
pub const PUBLISHED: &str = include_str!("../data/connect4_boards.txt");

/// The flags of `gamesolver-bench c4-boards`.
#[derive(Debug, Args)]
pub struct BoardsArgs {
    /// Boards of the published table with width + height at most this (both sides >= 4).
    #[arg(long, default_value_t = 14, value_parser = clap::value_parser!(u32).range(8..=40))]
    pub max_sum: u32,
    /// Only these boards, comma-separated WxH (e.g. 9x5,7x7); each must be in the table.
    #[arg(long, value_delimiter = ',')]
    pub boards: Vec<String>,
    /// The algorithm of every job (`alphabeta`: exact null-window probes; `jlpns`: the job-level
    /// plan, a leaf per worker slot). A board keeps one row per algorithm.
    #[arg(long, default_value = "alphabeta")]
    pub algorithm: String,
    /// Per-board time limit in seconds: a job still running then is cancelled.
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=604_800))]
    pub limit_s: u64,
    /// The worker's task slots, and the `threads` option of `alphabeta` jobs.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub threads: u32,
    /// The worker's memory, and the `memory_mb` option of `alphabeta` jobs (MiB).
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub memory_mb: u64,
    /// More job options, KEY=VALUE (repeatable).
    #[arg(long = "option", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Folder of c4 builds, one per board: DIR/WxH/c4 (tests/bench/peers/build_c4.sh).
    #[arg(long, value_name = "DIR")]
    pub peer: Option<PathBuf>,
    /// Time limit for one c4 run, seconds.
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=604_800))]
    pub peer_limit_s: u64,
    /// The Markdown file written (its rows of boards not run now are kept).
    #[arg(long, default_value = "docs/CONNECT4_BOARDS.md")]
    pub out: PathBuf,
    /// The service's binaries.
    #[command(flatten)]
    pub binaries: crate::Binaries,
}

/// Who wins under perfect play.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Winner {
    /// The player who moves first.
    First,
    /// The other player.
    Second,
    /// Nobody: the board fills up.
    Draw,
}

impl Winner {
    fn word(self) -> &'static str {
        match self {
            Winner::First => "first",
            Winner::Second => "second",
            Winner::Draw => "draw",
        }
    }
}

/// A board of the published table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Board {
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// The published outcome.
    pub winner: Winner,
    /// The published ply on which perfect play ends (`None`: not published).
    pub last: Option<u32>,
}

/// The boards of [`PUBLISHED`], in file order.
pub fn published() -> Result<Vec<Board>, String> {
    let mut out = Vec::new();
    for (i, line) in PUBLISHED.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let bad = || format!("connect4_boards.txt line {}: '{line}'", i + 1);
        if f.len() != 4 {
            return Err(bad());
        }
        let num = |s: &str| s.parse::<u32>().map_err(|_| bad());
        let winner = match f[2] {
            "first" => Winner::First,
            "second" => Winner::Second,
            "draw" => Winner::Draw,
            _ => return Err(bad()),
        };
        let last = match f[3] {
            "-" => None,
            s => Some(num(s)?),
        };
        out.push(Board {
            width: num(f[0])?,
            height: num(f[1])?,
            winner,
            last,
        });
    }
    Ok(out)
}

/// The outcome and the ply on which perfect play ends, from the first player's exact score on
/// the empty `width` x `height` board (see the module doc). `None` for a score no game has.
pub fn outcome_of(width: u32, height: u32, score: i64) -> Option<(Winner, u32)> {
    let cells = (width * height) as i64;
    if score == 0 {
        return Some((Winner::Draw, cells as u32));
    }
    let (winner, s, parity) = if score > 0 {
        (Winner::First, score, 1)
    } else {
        (Winner::Second, -score, 0)
    };
    // 1 + (cells - n) / 2 = s: n is cells - 2 (s - 1) or one less, whichever has the parity.
    let n = cells - 2 * (s - 1);
    let n = if n.rem_euclid(2) == parity { n } else { n - 1 };
    (7..=cells).contains(&n).then_some((winner, n as u32))
}

/// A board's row: our result and c4's.
#[derive(Clone)]
struct Row {
    width: u32,
    height: u32,
    /// The algorithm column: a board has one row per algorithm.
    algorithm: String,
    text: String,
}

/// The algorithm column of a table row (the seventh cell).
fn algorithm_of(line: &str) -> String {
    line.split('|').nth(7).unwrap_or("").trim().to_string()
}

fn parse_board(s: &str) -> Option<(u32, u32)> {
    let (w, h) = s.trim().split_once(['x', 'X'])?;
    Some((w.trim().parse().ok()?, h.trim().parse().ok()?))
}

fn fmt_outcome(winner: Winner, last: Option<u32>) -> String {
    match last {
        Some(n) => format!("{}, {n}", winner.word()),
        None => format!("{}, -", winner.word()),
    }
}

/// Runs c4 built for the board (`DIR/WxH/c4`): (outcome, last move, wall seconds), or why not.
fn peer_run(dir: &Path, b: &Board, limit: Duration) -> Result<(Winner, u32, f64), String> {
    let exe = dir.join(format!("{}x{}", b.width, b.height)).join("c4");
    if !exe.is_file() {
        return Err("not built".into());
    }
    let (out, secs) = run_peer(Command::new(&exe), "\n", limit)?;
    // "Final strong score is S (first player will win on move #N)." or "... (draw)."
    let line = out
        .lines()
        .find(|l| l.contains("Final strong score is"))
        .ok_or("no score in c4's output")?;
    let score: i64 = line
        .split("is ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .ok_or("no score in c4's output")?;
    let (winner, last) = outcome_of(b.width, b.height, score).ok_or("c4's score has no game")?;
    if let Some(n) = line.split('#').nth(1) {
        let n: u32 = n
            .trim_end_matches(|c: char| !c.is_ascii_digit())
            .parse()
            .unwrap_or(0);
        if n != last {
            return Err(format!("c4 says move {n}, its score {score} says {last}"));
        }
    }
    Ok((winner, last, secs))
}

/// Waits for job `id` until it ends or `limit` passes (then cancels it); the final status.
fn wait_or_cancel(svc: &Service, id: u64, limit: Duration) -> Result<Option<Value>, String> {
    let t0 = Instant::now();
    let mut pause = Duration::from_millis(5);
    loop {
        let st = http(
            &svc.agent,
            "GET",
            &format!("{}/v1/jobs/{id}", svc.url),
            None,
        )?;
        match st["state"].as_str() {
            Some("done") => return Ok(Some(st)),
            Some("failed") | Some("cancelled") => {
                return Err(format!("job {id} {}: {}", st["state"], st["error"]))
            }
            _ => {}
        }
        if t0.elapsed() > limit {
            let url = format!("{}/v1/jobs/{id}/cancel", svc.url);
            let _ = http(&svc.agent, "POST", &url, Some(&serde_json::json!({})));
            return Ok(None);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(250));
    }
}

fn git_commit() -> String {
    Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

const TABLE_HEAD: &str = "| board | published (winner, last move) | ours | match | ours (s) | c4 (s) | algorithm | nodes |\n|---|---|---|---|---|---|---|---|\n";

/// `gamesolver-bench c4-boards`.
pub fn run(args: BoardsArgs) -> Result<(), BenchError> {
    let table = published().map_err(failed)?;
    let mut chosen = Vec::new();
    if args.boards.is_empty() {
        for b in &table {
            if b.width + b.height <= args.max_sum {
                chosen.push(b.clone());
            }
        }
    } else {
        for s in &args.boards {
            let (w, h) = parse_board(s)
                .ok_or_else(|| bad(format!("--boards: '{s}' is not WxH (e.g. 7x6)")))?;
            let b = table
                .iter()
                .find(|b| b.width == w && b.height == h)
                .ok_or_else(|| bad(format!("--boards: {w} x {h} is not in the published table")))?;
            chosen.push(b.clone());
        }
    }
    let mut options: Vec<(String, String)> = Vec::new();
    if args.algorithm == "alphabeta" {
        options.push(("threads".into(), args.threads.to_string()));
        options.push(("memory_mb".into(), args.memory_mb.to_string()));
    }
    for o in &args.options {
        let (k, v) = o
            .split_once('=')
            .ok_or_else(|| bad(format!("--option '{o}' is not KEY=VALUE")))?;
        options.retain(|(key, _)| key != k);
        options.push((k.to_string(), v.to_string()));
    }
    if let Some(p) = &args.peer {
        if !p.is_dir() {
            return Err(bad(format!("--peer '{}' is not a directory", p.display())));
        }
    }
    let (exe, worker) = args.binaries.resolve()?;
    let scratch = std::env::temp_dir().join(format!("gamesolver-c4-boards-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch)
        .map_err(|e| bad(format!("cannot create '{}': {e}", scratch.display())))?;
    let load_before = load();
    let worker_args = [
        "--threads".to_string(),
        args.threads.to_string(),
        "--memory-mb".to_string(),
        args.memory_mb.to_string(),
    ];
    let svc = Service::start_with(&exe, &worker, &scratch, 1, &worker_args).map_err(failed)?;
    // The file is rewritten after every board, so a run stopped midway keeps what it solved.
    let old = std::fs::read_to_string(&args.out).unwrap_or_default();
    let started = utc_now();
    let mut rows = Vec::new();
    let mut problems = Vec::new();
    for b in &chosen {
        let (w, h) = (b.width, b.height);
        eprintln!("c4-boards: {w} x {h}");
        let opts: Vec<(&str, &str)> = options
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let job = JobSpec::new("connect4", "", &args.algorithm)
            .with_params(&[("width", &w.to_string()), ("height", &h.to_string())])
            .with_options(&opts);
        let t0 = Instant::now();
        let ended = svc
            .submit(&job)
            .and_then(|id| wait_or_cancel(&svc, id, Duration::from_secs(args.limit_s)));
        let mut secs = t0.elapsed().as_secs_f64();
        let (ours, matched, time, nodes) = match ended {
            Ok(Some(st)) => {
                // The coordinator's own times, not this loop's polling.
                if let (Some(c), Some(f)) = (st["created_ms"].as_u64(), st["finished_ms"].as_u64())
                {
                    if f >= c {
                        secs = (f - c) as f64 / 1000.0;
                    }
                }
                let r = &st["result"];
                let nodes = r["nodes"].as_u64().map_or("-".into(), |n| n.to_string());
                match r["value"].as_i64().and_then(|v| outcome_of(w, h, v)) {
                    Some((winner, last)) => {
                        let ok = winner == b.winner && b.last.is_none_or(|n| n == last);
                        if !ok {
                            problems.push(format!(
                                "{w} x {h}: ours {}, published {}",
                                fmt_outcome(winner, Some(last)),
                                fmt_outcome(b.winner, b.last)
                            ));
                        }
                        let m = if ok { "yes" } else { "**NO**" };
                        (
                            fmt_outcome(winner, Some(last)),
                            m,
                            format!("{secs:.2}"),
                            nodes,
                        )
                    }
                    None => {
                        problems.push(format!("{w} x {h}: value {} has no game", r["value"]));
                        (
                            format!("value {}", r["value"]),
                            "**NO**",
                            format!("{secs:.2}"),
                            nodes,
                        )
                    }
                }
            }
            Ok(None) => (
                format!("not solved in {} s", args.limit_s),
                "-",
                format!("> {}", args.limit_s),
                "-".into(),
            ),
            Err(e) => {
                problems.push(format!("{w} x {h}: {e}"));
                (format!("failed: {e}"), "**NO**", "-".into(), "-".into())
            }
        };
        let peer = match &args.peer {
            None => "-".to_string(),
            Some(dir) => match peer_run(dir, b, Duration::from_secs(args.peer_limit_s)) {
                Ok((winner, last, s)) => {
                    if winner == b.winner && b.last.is_none_or(|n| n == last) {
                        format!("{s:.2}")
                    } else {
                        format!("{s:.2} ({})", fmt_outcome(winner, Some(last)))
                    }
                }
                Err(e) => e,
            },
        };
        eprintln!("c4-boards: {w} x {h}: {ours} ({matched}) in {time} s; c4 {peer}");
        rows.push(Row {
            width: w,
            height: h,
            algorithm: args.algorithm.clone(),
            text: format!(
                "| {w} x {h} | {} | {ours} | {matched} | {time} | {peer} | {} | {nodes} |",
                fmt_outcome(b.winner, b.last),
                args.algorithm
            ),
        });
        write_table(&args.out, &old, &rows, &started, load_before)?;
    }
    drop(svc);
    let _ = std::fs::remove_dir_all(&scratch);
    let md = write_table(&args.out, &old, &rows, &started, load_before)?;
    print!("{md}");
    if problems.is_empty() {
        Ok(())
    } else {
        Err(failed(format!(
            "{} board(s) differ from the published table; first: {}",
            problems.len(),
            problems[0]
        )))
    }
}

/// Writes the file: `old` (the file when the run began) merged with this run's rows so far and
/// its run line; returns the text.
fn write_table(
    out: &Path,
    old: &str,
    rows: &[Row],
    started: &str,
    load_before: Option<[f64; 3]>,
) -> Result<String, BenchError> {
    let command = std::env::args().skip(1).collect::<Vec<_>>().join(" ");
    let run_line = format!(
        "- {started} UTC, commit {}: `gamesolver-bench {command}`; load before {}, after {}",
        git_commit(),
        fmt_load(load_before),
        fmt_load(load())
    );
    let md = merge(old, rows.to_vec(), &run_line);
    if let Some(parent) = out.parent() {
        if !parent.as_os_str().is_empty() {
            let _ = std::fs::create_dir_all(parent);
        }
    }
    std::fs::write(out, &md)
        .map_err(|e| failed(format!("cannot write '{}': {e}", out.display())))?;
    Ok(md)
}

fn fmt_load(l: Option<[f64; 3]>) -> String {
    l.map_or("?".into(), |[a, b, c]| format!("{a:.2} {b:.2} {c:.2}"))
}

/// The file: the new rows, the old file's rows of other boards or other algorithms, every run
/// line.
fn merge(old: &str, rows: Vec<Row>, run_line: &str) -> String {
    let mut all: Vec<Row> = Vec::new();
    let mut runs: Vec<String> = Vec::new();
    for line in old.lines() {
        if let Some(rest) = line.strip_prefix("| ") {
            let first = rest.split('|').next().unwrap_or("");
            if let Some((w, h)) = parse_board(&first.replace(' ', "")) {
                let algorithm = algorithm_of(line);
                if !rows
                    .iter()
                    .any(|r| r.width == w && r.height == h && r.algorithm == algorithm)
                {
                    all.push(Row {
                        width: w,
                        height: h,
                        algorithm,
                        text: line.to_string(),
                    });
                }
            }
        } else if line.starts_with("- ") && line.contains("gamesolver-bench") {
            runs.push(line.to_string());
        }
    }
    all.extend(rows);
    all.sort_by(|a, b| {
        (a.width + a.height, b.width, &a.algorithm).cmp(&(
            b.width + b.height,
            a.width,
            &b.algorithm,
        ))
    });
    runs.push(run_line.to_string());
    let mut md = String::from(
        "# Connect Four on larger boards\n\n\
         Generated by `gamesolver-bench c4-boards` (tests/bench/src/boards.rs); do not edit by hand.\n\n\
         Every board is solved from the empty position through a real coordinator and one worker\n\
         process (HTTP, SQLite); the outcome and the move (ply) on which perfect play ends are\n\
         derived from the exact score and compared with the published table\n\
         (`tests/bench/data/connect4_boards.txt`: ChristopheSteininger/c4's readme, after John\n\
         Tromp's table for width + height <= 15). Times are wall seconds from the job's creation\n\
         to its end as the coordinator records them. `alphabeta`: the exact null-window probe\n\
         plan, one task at a time with the worker's threads; `jlpns`: the job-level\n\
         proof-number plan, a leaf task in each of the worker's slots (the run lines give the\n\
         options). c4 is ChristopheSteininger/c4 built for each size\n\
         (`tests/bench/peers/build_c4.sh`), its wall time for the strong solve of the empty\n\
         board, on the same machine. A board not\n\
         solved within the run's limit says so.\n\n",
    );
    md.push_str(TABLE_HEAD);
    for r in &all {
        md.push_str(&r.text);
        md.push('\n');
    }
    md.push_str("\n## Runs\n\n");
    for r in runs {
        md.push_str(&r);
        md.push('\n');
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use gamesolver_shared::plan;
    use gamesolver_shared::registry;
    use gamesolver_shared::search::Control;

    #[test]
    fn the_published_table_parses_and_is_consistent() {
        let t = published().unwrap();
        // Every board with both sides from 4 and width + height <= 15 (Tromp), once.
        for sum in 8..=15 {
            for w in 4..=sum - 4 {
                let n = t
                    .iter()
                    .filter(|b| b.width == w && b.height == sum - w)
                    .count();
                assert_eq!(n, 1, "{w} x {}", sum - w);
            }
        }
        for b in &t {
            let cells = b.width * b.height;
            if let Some(n) = b.last {
                assert!(n <= cells, "{b:?}");
                match b.winner {
                    Winner::Draw => assert_eq!(n, cells, "{b:?}"),
                    Winner::First => assert_eq!(n % 2, 1, "{b:?}"),
                    Winner::Second => assert_eq!(n % 2, 0, "{b:?}"),
                }
            }
        }
        let find = |w, h| t.iter().find(|b| b.width == w && b.height == h).unwrap();
        assert_eq!(find(7, 6).winner, Winner::First);
        assert_eq!(find(7, 6).last, Some(41));
    }

    /// The score of a game that ends on ply `n` (docs/API.md) maps back to `n`.
    #[test]
    fn outcome_of_inverts_the_score() {
        for (w, h) in [(7u32, 6u32), (5, 5), (9, 5), (4, 4), (7, 7)] {
            let cells = w * h;
            for n in 7..=cells {
                let s = 1 + (cells - n) as i64 / 2;
                let (winner, score) = if n % 2 == 1 {
                    (Winner::First, s)
                } else {
                    (Winner::Second, -s)
                };
                assert_eq!(
                    outcome_of(w, h, score),
                    Some((winner, n)),
                    "{w}x{h} ply {n}"
                );
            }
            assert_eq!(outcome_of(w, h, 0), Some((Winner::Draw, cells)));
        }
        assert_eq!(outcome_of(7, 6, 1), Some((Winner::First, 41)));
        assert_eq!(outcome_of(7, 6, 100), None);
    }

    /// Our exact solve of every board with width + height <= 11 (the exact plan, as a job runs
    /// it) gives the published outcome and last move.
    #[test]
    fn small_boards_match_the_published_table() {
        let mut checked = 0;
        for b in published().unwrap() {
            if b.width + b.height > 11 {
                continue;
            }
            let (w, h) = (b.width.to_string(), b.height.to_string());
            let job = JobSpec::new("connect4", "", "alphabeta")
                .with_params(&[("width", w.as_str()), ("height", h.as_str())]);
            let prepared = registry::prepare(&job).unwrap();
            let ctl = Control::unlimited().with_threads(2);
            let r = plan::run_local(prepared.as_ref(), &ctl).unwrap();
            let score = r.value.as_i64().unwrap();
            let got = outcome_of(b.width, b.height, score).unwrap();
            assert_eq!(got, (b.winner, b.last.unwrap()), "{w} x {h}: score {score}");
            checked += 1;
        }
        assert_eq!(checked, 1 + 2 + 3 + 4);
    }

    #[test]
    fn merging_keeps_other_boards_and_every_run() {
        let row = |w: u32, h: u32, t: &str| Row {
            width: w,
            height: h,
            algorithm: "alphabeta".into(),
            text: format!("| {w} x {h} | {t} | . | . | . | . | alphabeta | 1 |"),
        };
        let first = merge(
            "",
            vec![row(7, 6, "a"), row(4, 4, "b")],
            "- r1 gamesolver-bench",
        );
        let second = merge(&first, vec![row(7, 6, "c")], "- r2 gamesolver-bench");
        assert!(second.contains("| 7 x 6 | c |"));
        assert!(!second.contains("| 7 x 6 | a |"));
        assert!(second.contains("| 4 x 4 | b |"));
        assert!(second.find("| 4 x 4").unwrap() < second.find("| 7 x 6").unwrap());
        // Another algorithm's row of the same board is kept beside it, after it.
        let jl = Row {
            width: 7,
            height: 6,
            algorithm: "jlpns".into(),
            text: "| 7 x 6 | d | . | . | . | . | jlpns | 1 |".into(),
        };
        let third = merge(&second, vec![jl], "- r3 gamesolver-bench");
        assert!(third.contains("| 7 x 6 | c |") && third.contains("| 7 x 6 | d |"));
        assert!(third.find("| 7 x 6 | c").unwrap() < third.find("| 7 x 6 | d").unwrap());
        assert!(
            second.contains("- r1 gamesolver-bench") && second.contains("- r2 gamesolver-bench")
        );
    }
}
