//! Retrograde builds as jobs (algorithm `retrograde` on `awari`): the databases of 0..=`stones`
//! stones, named `name`.
//!
//! - Through the coordinator, the plan is [`PlanShape::Retro`] (`plan/planner/retro.rs`):
//!   rounds of [`TaskKind::Retro`] tasks over index ranges of `split` entries, then a
//!   [`TaskKind::RetroSeal`] task per database. Tasks exchange databases and round chunks as
//!   artifacts (content-addressed by SHA-256) through the task's
//!   [`crate::search::retrograde::artifacts::Artifacts`]; a worker caches what it fetched, and
//!   this prepared job (cached by the worker per job) keeps the lower databases and the last
//!   rounds decoded, so a worker fetches each lower database once per build and each round once.
//! - In this process ([`PreparedJob::run_here`]: `gamesolver solve`), the same rounds run over
//!   the caller's threads (`search::retrograde::build_database`) and the databases are written to
//!   the data folder's `tables/NAME`, as `gamesolver tables build` writes them; the result is
//!   the same list of databases with the same checksums.
//!
//! Bounds: `stones` is at most [`MAX_STONES`] on the real board (the board's own maximum on
//! smaller ones), and the memory a task holds (every lower database, the previous two rounds and
//! its output) must fit `memory_mb` of the runner (a worker's share); `split` keeps a round
//! within [`MAX_CHUNKS`] tasks, so a task's list of chunks stays small. `name` is a plain data
//! name (never a path).

use super::kernel::{self, Group};
use crate::games::awari::{Awari, AwariEntry};
use crate::games::data;
use crate::games::entry::GameEntry;
use crate::model::settings::{DefaultValue, Opts, Spec};
use crate::model::Retrograde as _;
use crate::plan::{PlanShape, PreparedJob, SolveError};
use crate::search::retrograde::artifacts::{self, Artifacts};
use crate::search::retrograde::{self, store, Tables};
use crate::search::Control;
use crate::wire::{JobSpec, Outcomes, RetroReport, TaskKind, TaskOutput};
use parking_lot::Mutex;
use std::sync::Arc;

/// Most stones a build may reach on the real board: the 24-stone database has 417 million
/// entries, and a task holds every lower one and two rounds of it (about 2.3 GB).
pub const MAX_STONES: u64 = 24;
/// Most tasks per round: a task names every chunk of the previous two rounds.
pub const MAX_CHUNKS: u64 = 256;
/// Fewest entries per task.
pub const MIN_SPLIT: u64 = 1 << 10;
/// Tasks per round of the top database by default: every task of a round reads every change
/// of the round before (to find its candidates), so more tasks repeat that work.
pub const DEFAULT_CHUNKS: u64 = 4;
/// Default fewest entries per task: a database of at most `split` entries is one task that
/// runs all its rounds (no round trips), so small databases are built whole.
pub const DEFAULT_MIN_SPLIT: u64 = 1 << 20;

/// `stones`.
pub const STONES: Spec = Spec::uint(
    "stones",
    0,
    MAX_STONES,
    DefaultValue::Unset("none (required)"),
    "build the databases of 0..=stones stones",
    "the 24-stone database and those below it need about 2.3 GB in a task",
);
/// `name`.
pub const NAME: Spec = Spec::text(
    "name",
    DefaultValue::Unset("none (required)"),
    "the set's name (a plain data name: letters, digits, '.', '_', '-')",
);
/// `split`.
pub const SPLIT: Spec = Spec::uint(
    "split",
    MIN_SPLIT,
    1 << 30,
    DefaultValue::Depends("the top database / 4, at least 1048576"),
    "entries per round task (at most 256 tasks per round)",
    "a task names every chunk of the last two rounds, so a round has at most 256",
);

/// Options of `retrograde`.
pub const OPTIONS: &[Spec] = &[STONES, NAME, SPLIT, super::spec::THREADS];

/// Retrograde builds: `retrograde`.
pub static GROUP: Group = Group {
    title: "Retrograde builds",
    options: OPTIONS,
    skip: kernel::skip_none,
};

/// The file tag of the databases of a board of `pits` pits (`awari`, `awari4`).
pub fn tag(pits: usize) -> String {
    if pits == 6 {
        "awari".to_string()
    } else {
        format!("awari{pits}")
    }
}

/// The user data folder's ([`data::user_dir`]) folder of the set `name` (checked to be a plain name): where
/// `gamesolver solve` and `gamesolver tables` write and read databases, and where the search
/// kernels' `tables=NAME` finds them.
pub fn tables_dir(name: &str) -> Result<std::path::PathBuf, SolveError> {
    let name = data::plain_name(name).map_err(|e| SolveError::bad(format!("option name: {e}")))?;
    Ok(data::user_dir().join("tables").join(name))
}

/// Bytes a task of a build up to `top` holds at its peak: every lower database, the previous
/// two rounds and the output (a whole round at most).
pub fn task_bytes(game: &Awari, top: usize) -> u64 {
    (0..top).map(|d| game.db_len(d)).sum::<u64>() + 3 * game.db_len(top)
}

/// Prepares a `retrograde` job.
pub fn prepare(job: &JobSpec, res: &super::Resources) -> Result<Box<dyn PreparedJob>, SolveError> {
    if job.game != AwariEntry::NAME {
        return Err(SolveError::bad(format!(
            "retrograde builds databases of awari, not '{}'",
            crate::model::excerpt(&job.game)
        )));
    }
    let params = Opts::new(&job.game_params, "game parameter");
    let game = AwariEntry::build(&params)?;
    params.finish()?;
    if !job.position.is_empty() {
        return Err(SolveError::bad(
            "retrograde builds whole databases: give no position",
        ));
    }
    let o = Opts::new(&job.options, "option");
    let stones: u64 = o
        .uint(&STONES)?
        .ok_or_else(|| SolveError::bad("retrograde needs option stones=N"))?;
    let max = (game.max_stones() as u64).min(MAX_STONES);
    if stones > max {
        return Err(SolveError::bad(format!(
            "option stones={stones}: at most {max} on a board of {} pits a side",
            game.pits()
        )));
    }
    let name = o
        .text(&NAME)
        .ok_or_else(|| SolveError::bad("retrograde needs option name=NAME"))?;
    tables_dir(name)?;
    let top = stones as usize;
    let top_len = game.db_len(top);
    let split = match o.uint::<u64>(&SPLIT)? {
        Some(s) => s,
        None => top_len.div_ceil(DEFAULT_CHUNKS).max(DEFAULT_MIN_SPLIT),
    };
    if top_len.div_ceil(split) > MAX_CHUNKS {
        return Err(SolveError::bad(format!(
            "option split={split}: the {stones}-stone database of {top_len} entries would take more than {MAX_CHUNKS} tasks a round (split at least {})",
            top_len.div_ceil(MAX_CHUNKS)
        )));
    }
    let threads = o
        .uint_or(&super::spec::THREADS, res.threads)?
        .min(res.threads);
    o.finish()?;
    let need = task_bytes(&game, top);
    if need > res.memory_mb << 20 {
        return Err(SolveError::bad(format!(
            "the databases up to {stones} stones need {} MiB in a task, more than the {} MiB this runner offers",
            need.div_ceil(1 << 20),
            res.memory_mb
        )));
    }
    Ok(Box::new(RetroJob {
        job: job.clone(),
        tag: tag(game.pits()),
        game,
        name: name.to_string(),
        top,
        split,
        threads,
        cache: Mutex::new(Decoded::default()),
    }))
}

/// What a worker keeps decoded between the tasks of one build.
#[derive(Default)]
struct Decoded {
    /// The lower databases and the artifacts they came from.
    below: Option<(Vec<String>, Arc<Tables>)>,
    /// The last round arrays assembled, by their chunk names (at most [`KEEP_ROUNDS`]).
    rounds: Vec<(Vec<String>, Arc<Vec<i8>>)>,
}

/// Round arrays kept decoded: the previous round and the one before serve a round's tasks.
const KEEP_ROUNDS: usize = 2;

/// A prepared retrograde job.
pub struct RetroJob {
    job: JobSpec,
    game: Awari,
    tag: String,
    name: String,
    top: usize,
    split: u64,
    threads: usize,
    cache: Mutex<Decoded>,
}

fn internal(e: impl std::fmt::Display) -> SolveError {
    SolveError::Internal(e.to_string())
}

impl RetroJob {
    /// A round task over the whole of database `db` from round 1: nobody else writes a part of
    /// it, so it runs every round here to the fixed point (`build_database`, the in-process
    /// kernel, on the task's threads) and uploads the final entries as its chunk with nothing
    /// changed, which seals the database. This spares the rounds of small databases their
    /// round trips; the cost of a kill is this task, at most `split` entries' build.
    fn whole(
        &self,
        store: &dyn Artifacts,
        db: usize,
        tables: &Tables,
        ctl: &Control,
    ) -> Result<TaskOutput, SolveError> {
        let len = self.game.db_len(db);
        let (entries, stats) = retrograde::with_threads(ctl.threads().max(1), || {
            retrograde::build_database(&self.game, db, tables, |round, changed| {
                if ctl.wants_progress() {
                    ctl.report(serde_json::json!({"round": round + 1, "changed": changed}));
                }
            })
        })
        .map_err(SolveError::Internal)?;
        ctl.add_nodes(len * stats.rounds as u64);
        let solved = entries.iter().filter(|&&e| e != 0).count() as u64;
        let bytes: Vec<u8> = entries.iter().map(|&e| e as u8).collect();
        let artifact = store.put(&bytes).map_err(internal)?;
        // The seal task that follows reads this round: keep it decoded.
        let mut c = self.cache.lock();
        c.rounds.push((vec![artifact.clone()], Arc::new(entries)));
        if c.rounds.len() > KEEP_ROUNDS {
            c.rounds.remove(0);
        }
        drop(c);
        let mut out = TaskOutput::default();
        out.extra.retro = Some(Box::new(RetroReport {
            artifact,
            bytes: len,
            changed: 0,
            solved,
            sha256: None,
            rounds: stats.rounds,
            outcomes: None,
        }));
        Ok(out)
    }

    /// The lower databases named by `below` (sealed files), from the cache or the artifacts.
    fn below(&self, store: &dyn Artifacts, below: &[String]) -> Result<Arc<Tables>, SolveError> {
        let cached = {
            let mut c = self.cache.lock();
            match &c.below {
                Some((names, t)) if names == below => return Ok(t.clone()),
                Some((names, _)) if below.starts_with(names) => c.below.take(),
                _ => None,
            }
        };
        let mut tables = match cached {
            Some((_, t)) => Arc::try_unwrap(t).unwrap_or_else(|t| (*t).clone()),
            None => Tables::new(),
        };
        for (db, hash) in below.iter().enumerate().skip(tables.len()) {
            let bytes = store.get(hash).map_err(internal)?;
            let entries = store::decode(&bytes, &self.tag, db, self.game.db_len(db))
                .map_err(|e| internal(format!("database {db} ({hash}): {e}")))?;
            tables.push(entries);
        }
        let tables = Arc::new(tables);
        self.cache.lock().below = Some((below.to_vec(), tables.clone()));
        Ok(tables)
    }

    /// The round array of database `db` made of the chunks `names` (all zeros when empty).
    fn round(
        &self,
        store: &dyn Artifacts,
        db: usize,
        names: &[String],
    ) -> Result<Arc<Vec<i8>>, SolveError> {
        let len = self.game.db_len(db) as usize;
        if names.is_empty() {
            return Ok(Arc::new(vec![0; len]));
        }
        if let Some((_, a)) = self.cache.lock().rounds.iter().find(|(n, _)| n == names) {
            return Ok(a.clone());
        }
        let mut all = Vec::with_capacity(len);
        for hash in names {
            let bytes = store.get(hash).map_err(internal)?;
            all.extend(bytes.iter().map(|&b| b as i8));
        }
        if all.len() != len {
            return Err(internal(format!(
                "the chunks of a round of database {db} hold {} entries, not {len}",
                all.len()
            )));
        }
        let all = Arc::new(all);
        let mut c = self.cache.lock();
        c.rounds.push((names.to_vec(), all.clone()));
        if c.rounds.len() > KEEP_ROUNDS {
            c.rounds.remove(0);
        }
        Ok(all)
    }

    fn store<'a>(&self, ctl: &'a Control) -> Result<&'a Arc<dyn Artifacts>, SolveError> {
        ctl.artifacts().ok_or_else(|| {
            SolveError::Internal(
                "a retrograde task needs the coordinator's artifacts (run it through a coordinator, or as a whole job)"
                    .into(),
            )
        })
    }

    fn check_db(&self, db: u32) -> Result<usize, SolveError> {
        let db = db as usize;
        if db > self.top {
            return Err(SolveError::bad(format!(
                "database {db} is above the build's top {}",
                self.top
            )));
        }
        Ok(db)
    }
}

impl PreparedJob for RetroJob {
    fn job(&self) -> &JobSpec {
        &self.job
    }

    fn plan_shape(&self) -> PlanShape {
        PlanShape::Retro {
            sizes: (0..=self.top).map(|d| self.game.db_len(d)).collect(),
            split: self.split,
        }
    }

    fn run(&self, task: &TaskKind, ctl: &Control) -> Result<TaskOutput, SolveError> {
        let store = self.store(ctl)?;
        let report = match task {
            TaskKind::Retro {
                db,
                start,
                end,
                below,
                prev,
                before,
                ..
            } => {
                let db = self.check_db(*db)?;
                let len = self.game.db_len(db);
                if start >= end || *end > len || below.len() != db {
                    return Err(SolveError::bad(format!(
                        "a round task of database {db} on [{start}, {end}) with {} lower databases does not fit it",
                        below.len()
                    )));
                }
                let tables = self.below(&**store, below)?;
                if *start == 0 && *end == len && prev.is_empty() {
                    return self.whole(&**store, db, &tables, ctl);
                }
                let prev = self.round(&**store, db, prev)?;
                // The round before `prev`: only entries with a successor that changed between
                // the two are evaluated again (`run_round_since`, same bytes as a full sweep).
                let before = if before.is_empty() {
                    None
                } else {
                    Some(self.round(&**store, db, before)?)
                };
                if ctl.should_stop().is_some() {
                    return Err(SolveError::Internal("stopped".into()));
                }
                let mut out = vec![0i8; (end - start) as usize];
                let changed = retrograde::run_round_since(
                    &self.game,
                    db,
                    *start..*end,
                    &tables,
                    &prev,
                    before.as_deref().map(|b| b.as_slice()),
                    &mut out,
                );
                ctl.add_nodes(end - start);
                let solved = out.iter().filter(|&&e| e != 0).count() as u64;
                let bytes: Vec<u8> = out.iter().map(|&e| e as u8).collect();
                let artifact = store.put(&bytes).map_err(internal)?;
                RetroReport {
                    artifact,
                    bytes: bytes.len() as u64,
                    changed,
                    solved,
                    sha256: None,
                    rounds: 0,
                    outcomes: None,
                }
            }
            TaskKind::RetroSeal { db, chunks } => {
                let db = self.check_db(*db)?;
                let entries = self.round(&**store, db, chunks)?;
                let (file, sum) = store::encode(&self.tag, db, &entries);
                let artifact = store.put(&file).map_err(internal)?;
                RetroReport {
                    artifact,
                    bytes: file.len() as u64,
                    changed: 0,
                    solved: entries.iter().filter(|&&e| e != 0).count() as u64,
                    sha256: Some(artifacts::hex(&sum)),
                    rounds: 0,
                    outcomes: Some(Outcomes::of(&entries)),
                }
            }
            _ => {
                return Err(SolveError::bad(
                    "a retrograde job runs round and seal tasks only",
                ))
            }
        };
        let mut out = TaskOutput::default();
        out.extra.retro = Some(Box::new(report));
        Ok(out)
    }

    /// The artifact a task made (a SHA-256 name), its size and counts for the range, and
    /// nothing else: no value, no move, no bounds, no display keys.
    fn check_output(&self, task: &TaskKind, out: &TaskOutput) -> Result<(), String> {
        super::check::only_keys(out, &["retro"], &[])?;
        if !out.value.is_null() || out.best_move.is_some() || out.raw.is_some() {
            return Err("a retrograde task reports its artifact only".into());
        }
        let r = out
            .extra
            .retro
            .as_deref()
            .ok_or("a retrograde task's output names no artifact")?;
        if !artifacts::is_name(&r.artifact) {
            return Err("the artifact is not a SHA-256 in hex".into());
        }
        match task {
            TaskKind::Retro { start, end, .. } => {
                let n = end.saturating_sub(*start);
                if r.bytes != n || r.changed > n || r.solved > n {
                    return Err(format!(
                        "a chunk of {n} entries reported {} bytes, {} changed, {} solved",
                        r.bytes, r.changed, r.solved
                    ));
                }
            }
            TaskKind::RetroSeal { db, .. } => {
                if !r.sha256.as_deref().is_some_and(artifacts::is_name) {
                    return Err("a sealed database names no checksum".into());
                }
                let len = self.game.db_len(*db as usize);
                if r.bytes < len || r.solved > len {
                    return Err(format!(
                        "database {db} of {len} entries sealed in {} bytes",
                        r.bytes
                    ));
                }
                match r.outcomes {
                    Some(o) if o.total() == len && o.won + o.lost == r.solved => {}
                    _ => {
                        return Err(format!(
                            "database {db} of {len} entries sealed without its won, drawn and lost counts adding up to it"
                        ))
                    }
                }
            }
            _ => return Err("not a retrograde task".into()),
        }
        Ok(())
    }

    fn run_here(&self, ctl: &Control) -> Option<Result<TaskOutput, SolveError>> {
        Some(self.build_here(ctl))
    }
}

impl RetroJob {
    /// The whole build in this process, into the data folder's `tables/NAME` (continuing from
    /// the databases already there, each checked), with the same result as through a
    /// coordinator.
    fn build_here(&self, ctl: &Control) -> Result<TaskOutput, SolveError> {
        let dir = tables_dir(&self.name)?;
        let game = &self.game;
        let failed = |e: store::StoreError| {
            SolveError::Internal(format!("tables/{}: {}", self.name, {
                // Never show the data folder's path.
                let text = e.to_string();
                text.rsplit('/').next().unwrap_or(&text).to_string()
            }))
        };
        retrograde::with_threads(self.threads.max(ctl.threads()), || {
            let mut tables = store::load_tables(game, &self.tag, &dir, self.top).map_err(failed)?;
            let mut databases = Vec::new();
            let mut work = 0u64;
            for db in 0..=self.top {
                if ctl.should_stop().is_some() {
                    return Err(SolveError::Internal("stopped before a result".into()));
                }
                let mut rounds = None;
                if db == tables.len() {
                    let mut history = Vec::new();
                    let (entries, stats) =
                        retrograde::build_database(game, db, &tables, |round, changed| {
                            history.push(serde_json::json!({"round": round, "changed": changed}));
                            ctl.report(serde_json::json!({
                                "databases_done": db,
                                "databases": self.top + 1,
                                "stones": db,
                                "positions": game.db_len(db),
                                "round": round + 1,
                                "rounds": history,
                            }));
                        });
                    store::write_database(&dir, &self.tag, db, &entries).map_err(failed)?;
                    work += stats.positions * stats.rounds as u64;
                    rounds = Some(stats.rounds);
                    tables.push(entries);
                }
                let entries = tables.db(db);
                let (file, sum) = store::encode(&self.tag, db, entries);
                let o = Outcomes::of(entries);
                databases.push(serde_json::json!({
                    "stones": db,
                    "positions": game.db_len(db),
                    "won": o.won,
                    "drawn": o.drawn,
                    "lost": o.lost,
                    "rounds": rounds,
                    "bytes": file.len(),
                    "sha256": artifacts::hex(&sum),
                    "artifact": artifacts::sha256_hex(&file),
                }));
            }
            let mut out = TaskOutput {
                nodes: work,
                ..TaskOutput::default()
            };
            out.extra.insert("databases".into(), databases.into());
            out.extra.insert("name".into(), self.name.clone().into());
            Ok(out)
        })
        .map_err(SolveError::Internal)?
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Planner;
    use crate::search::retrograde::artifacts::MemoryArtifacts;
    use crate::wire::JobSpec;

    fn job(pits: &str, stones: &str, split: &str) -> JobSpec {
        JobSpec::new("awari", "", "retrograde")
            .with_params(&[("pits", pits)])
            .with_options(&[("stones", stones), ("name", "t"), ("split", split)])
    }

    /// The plan, its tasks run out of order by "workers" that share only the artifacts, and a
    /// planner restored from the record in the middle of a round, gives every database with the
    /// bytes of the in-process build.
    #[test]
    fn a_planned_build_matches_the_in_process_build_through_a_restore() {
        let spec = job("3", "9", "1024");
        let prepared = super::super::prepare(&spec).unwrap();
        let store: Arc<dyn Artifacts> = Arc::new(MemoryArtifacts::default());
        let ctl = Control::unlimited().with_artifacts(store.clone());
        let shape = prepared.plan_shape();
        let mut planner = Planner::new(shape.clone(), 3);
        let mut issued = Vec::new();
        let mut results = Vec::new();
        let mut step = 0;
        while !planner.is_done() {
            let mut tasks = planner.next_tasks();
            issued.extend(tasks.iter().cloned());
            tasks.extend(planner.pending().iter().cloned());
            tasks.dedup();
            // The last issued first: order does not matter within a round.
            let task = planner.pending().last().cloned().expect("a pending task");
            let out = prepared.run(&task, &ctl).unwrap();
            prepared.check_output(&task, &out).unwrap();
            planner.on_result(&task, out.clone());
            results.push((task, out));
            step += 1;
            if step % 7 == 0 {
                // A coordinator restart: the planner rebuilt from what the store kept.
                planner = Planner::restore(shape.clone(), 3, &issued, &results, &[]);
            }
        }
        let done = planner.finish(&*prepared);
        let game = Awari::new(3).unwrap();
        let mut tables = Tables::new();
        retrograde::build_up_to(&game, &mut tables, 9);
        let dbs = done.extra["databases"].as_array().unwrap();
        assert_eq!(dbs.len(), 10);
        for (d, db) in dbs.iter().enumerate() {
            let want = artifacts::hex(&store::checksum(tables.db(d)));
            assert_eq!(db["sha256"], want.as_str(), "database {d}");
            let file = store.get(db["artifact"].as_str().unwrap()).unwrap();
            assert_eq!(
                store::decode(&file, "awari3", d, game.db_len(d)).unwrap(),
                tables.db(d)
            );
        }
        assert!(dbs[9]["rounds"].as_u64().unwrap() >= 2);
        // Won, drawn and lost per database: they add up to its positions, and they are the
        // signs of the values found by looking every position up on its own (its value from
        // its moves' values, `best_moves`), not by reading its entry.
        let mut any = [0u64; 3];
        for (d, db) in dbs.iter().enumerate() {
            let count = |k: &str| db[k].as_u64().unwrap_or_else(|| panic!("{k} of {d}: {db}"));
            let (won, drawn, lost) = (count("won"), count("drawn"), count("lost"));
            assert_eq!(won + drawn + lost, game.db_len(d), "database {d}");
            let mut want = [0u64; 3];
            for i in 0..game.db_len(d) {
                let (v, _) = retrograde::best_moves(&game, &tables, &game.unrank(d, i)).unwrap();
                want[(v.signum() + 1) as usize] += 1;
            }
            assert_eq!([lost, drawn, won], want, "database {d}");
            for k in 0..3 {
                any[k] += want[k];
            }
        }
        assert!(
            any.iter().all(|&n| n > 0),
            "wins, draws and losses all occur: {any:?}"
        );
    }

    /// A seal whose counts do not add up to its database is refused.
    #[test]
    fn a_seal_must_count_every_position() {
        let spec = job("3", "2", "1024");
        let prepared = super::super::prepare(&spec).unwrap();
        let store: Arc<dyn Artifacts> = Arc::new(MemoryArtifacts::default());
        let ctl = Control::unlimited().with_artifacts(store.clone());
        let mut planner = Planner::new(prepared.plan_shape(), 1);
        loop {
            let task = planner.next_tasks().pop().expect("a task");
            let mut out = prepared.run(&task, &ctl).unwrap();
            prepared.check_output(&task, &out).unwrap();
            if let TaskKind::RetroSeal { .. } = task {
                let o = out.extra.retro.as_deref_mut().unwrap().outcomes.as_mut();
                o.unwrap().drawn += 1;
                assert!(prepared.check_output(&task, &out).is_err());
                out.extra.retro.as_deref_mut().unwrap().outcomes = None;
                assert!(prepared.check_output(&task, &out).is_err());
                return;
            }
            planner.on_result(&task, out);
        }
    }

    #[test]
    fn options_are_bounded_and_names_are_plain() {
        let bad = |j: JobSpec| match super::super::prepare(&j) {
            Err(SolveError::BadInput(m)) => m,
            Ok(_) => panic!("accepted {j:?}"),
            Err(e) => panic!("{e}"),
        };
        assert!(bad(job("6", "25", "4096")).contains("stones"));
        assert!(bad(job("2", "17", "4096")).contains("at most 16"));
        assert!(bad(job("6", "20", "4096")).contains("split"));
        let mut j = job("3", "4", "4096");
        j.options.insert("name".into(), "../x".into());
        assert!(bad(j).contains("plain data name"));
        let mut j = job("3", "4", "4096");
        j.options.remove("stones");
        assert!(bad(j).contains("stones=N"));
        let res = super::super::Resources {
            threads: 1,
            memory_mb: 100,
        };
        match super::super::prepare_with(&job("6", "20", "1048576"), &res) {
            Err(SolveError::BadInput(m)) => assert!(m.contains("MiB"), "{m}"),
            _ => panic!("a build larger than the runner's memory was accepted"),
        }
    }
}
