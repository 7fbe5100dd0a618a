//! Retrograde build plans ([`PlanShape::Retro`]): the databases `0..=N` in order, each by rounds.
//!
//! A round of database `d` is split into tasks over equal index ranges of at most `split`
//! entries ([`TaskKind::Retro`]); every task of round `r` reads the whole of round `r - 1` (and
//! `r - 2`), named by the hashes of their chunks, and the lower databases, named by the hashes
//! of their sealed files, and uploads its own chunk. Since a round reads only the previous
//! round, any split and any order give the same bytes (`search::retrograde::run_round`), so the
//! tasks of a round run side by side on any workers. When every chunk of a round is in: if the
//! round changed nothing, the database is at its fixed point and one [`TaskKind::RetroSeal`]
//! task joins the chunks into its file; otherwise the next round is issued, reading this one.
//! A database of one chunk is built whole by its round-1 task (every round in the task, no
//! round trips); it reports nothing changed, so its seal follows.
//!
//! Like every plan this is a function of the results fed in order, so a restarted coordinator
//! replays them and continues inside the round in flight: the chunks already reported are kept
//! (they are artifacts), only the tasks without a result run again. A worker killed mid-task
//! costs that task's range; the coordinator killed costs at most the tasks of the round in
//! flight that had not reported.

use super::Planner;
use crate::plan::job::{PlanShape, PreparedJob};
use crate::wire::{RetroReport, TaskKind, TaskOutput};

/// The state of a retrograde plan.
#[derive(Clone, Debug, Default)]
pub(super) struct Build {
    /// Sealed databases, in order: their seal reports.
    sealed: Vec<RetroReport>,
    /// Rounds of each database (sealed and current): `(changed, solved)` per round.
    rounds: Vec<Vec<(u64, u64)>>,
    /// The round in flight of the current database `sealed.len()` (from 1).
    round: u32,
    /// Chunk hashes of the previous round (empty in round 1: all zeros).
    prev: Vec<String>,
    /// Chunk hashes of the round before it.
    before: Vec<String>,
    /// Reports of the round in flight, by chunk.
    chunks: Vec<Option<RetroReport>>,
    /// The current database reached its fixed point: its seal task is next.
    sealing: bool,
    /// Entries written by the tasks so far (positions x rounds): the plan's work count.
    work: u64,
    /// Rounds run inside one task, by database (a database of one chunk is built whole by
    /// its round-1 task, which reports how many rounds it ran); 0 where rounds were tasks.
    ran: Vec<u32>,
    /// Chunks no task to come reads (a round two behind the one in flight, every round of a
    /// sealed database), not yet taken by [`Build::take_retired`].
    retired: Vec<String>,
}

impl Build {
    /// The state at the start of a plan of databases with these sizes.
    pub(super) fn new(sizes: &[u64], split: u64) -> Build {
        let mut b = Build::default();
        if let Some(&len) = sizes.first() {
            b.start_db(len, split);
        }
        b
    }

    /// The chunks retired since the last call: the coordinator deletes those that no other
    /// job still reads (without this a build of 0..20 leaves about 30 GB of old rounds).
    pub(super) fn take_retired(&mut self) -> Vec<String> {
        std::mem::take(&mut self.retired)
    }

    /// The chunks that tasks to come may read: the two rounds before the one in flight and the
    /// chunks of the round in flight already reported (the seal reads the last round's).
    pub(super) fn live(&self) -> Vec<String> {
        let reported = self.chunks.iter().flatten().map(|r| r.artifact.clone());
        self.prev
            .iter()
            .chain(&self.before)
            .cloned()
            .chain(reported)
            .filter(|n| !n.is_empty())
            .collect()
    }

    /// Retires the chunks of the database just sealed: all it still had live.
    fn retire_rounds(&mut self) {
        let live = self.live();
        self.retired.extend(live);
        self.prev.clear();
        self.before.clear();
    }

    fn start_db(&mut self, len: u64, split: u64) {
        self.round = 1;
        self.prev.clear();
        self.before.clear();
        self.sealing = false;
        self.chunks = vec![None; chunk_count(len, split)];
        self.rounds.push(Vec::new());
        self.ran.push(0);
    }
}

/// Tasks of one round of a database of `len` entries.
fn chunk_count(len: u64, split: u64) -> usize {
    len.div_ceil(split.max(1)).max(1) as usize
}

/// Where chunk `i` of `n` of a database of `len` entries starts: the chunks are of equal size
/// (within one entry), each at most `split`, so the tasks of a round weigh alike.
fn chunk_start(len: u64, n: usize, i: usize) -> u64 {
    (u128::from(len) * i as u128 / n.max(1) as u128) as u64
}

impl Planner {
    fn retro_shape(&self) -> (&[u64], u64) {
        match &self.shape {
            PlanShape::Retro { sizes, split } => (sizes, (*split).max(1)),
            _ => (&[], 1),
        }
    }

    /// Whether every database is sealed.
    pub(super) fn retro_done(&self) -> bool {
        self.retro.sealed.len() >= self.retro_shape().0.len()
    }

    /// The next tasks of a retrograde plan, up to the parallelism.
    pub(super) fn next_retro_tasks(&self) -> Vec<TaskKind> {
        let mut out = Vec::new();
        if self.retro_done() {
            return out;
        }
        let db = self.retro.sealed.len() as u32;
        if self.retro.sealing {
            let seal = TaskKind::RetroSeal {
                db,
                chunks: self.retro_chunk_names(),
            };
            if !self.pending.contains(&seal) {
                out.push(seal);
            }
            return out;
        }
        let sizes = self.retro_shape().0;
        let len = sizes[db as usize];
        let below: Vec<String> = self
            .retro
            .sealed
            .iter()
            .map(|r| r.artifact.clone())
            .collect();
        for (i, c) in self.retro.chunks.iter().enumerate() {
            if self.pending.len() + out.len() >= self.parallelism {
                break;
            }
            if c.is_some() {
                continue;
            }
            let n = self.retro.chunks.len();
            let task = TaskKind::Retro {
                db,
                round: self.retro.round,
                start: chunk_start(len, n, i),
                end: chunk_start(len, n, i + 1),
                below: below.clone(),
                prev: self.retro.prev.clone(),
                before: self.retro.before.clone(),
            };
            if !self.pending.iter().any(|t| same_range(t, &task)) {
                out.push(task);
            }
        }
        out
    }

    fn retro_chunk_names(&self) -> Vec<String> {
        self.retro
            .chunks
            .iter()
            .map(|c| c.as_ref().map(|r| r.artifact.clone()).unwrap_or_default())
            .collect()
    }

    /// Feeds a retrograde task's output (the task was pending).
    pub(super) fn on_retro_result(&mut self, task: &TaskKind, output: &TaskOutput) {
        let Some(report) = output.extra.retro.as_deref() else {
            return;
        };
        let (sizes, split) = (self.retro_shape().0.to_vec(), self.retro_shape().1);
        let db = self.retro.sealed.len() as u32;
        let len = sizes.get(db as usize).copied().unwrap_or(0);
        match task {
            TaskKind::Retro {
                db: d,
                round,
                start,
                end,
                ..
            } if *d == db && *round == self.retro.round && !self.retro.sealing => {
                let n = self.retro.chunks.len();
                let Some(i) = (0..n).find(|&i| {
                    chunk_start(len, n, i) == *start && chunk_start(len, n, i + 1) == *end
                }) else {
                    return;
                };
                self.retro.chunks[i] = Some(report.clone());
                self.retro.work += (end - start) * u64::from(report.rounds.max(1));
                if let Some(ran) = self.retro.ran.last_mut() {
                    *ran = (*ran).max(report.rounds);
                }
                if self.retro.chunks.iter().all(Option::is_some) {
                    let changed = self.retro.chunks.iter().flatten().map(|r| r.changed).sum();
                    let solved = self.retro.chunks.iter().flatten().map(|r| r.solved).sum();
                    if let Some(r) = self.retro.rounds.last_mut() {
                        r.push((changed, solved));
                    }
                    if changed == 0 {
                        self.retro.sealing = true;
                    } else {
                        let names = self.retro_chunk_names();
                        let spent = std::mem::replace(
                            &mut self.retro.before,
                            std::mem::replace(&mut self.retro.prev, names),
                        );
                        self.retro
                            .retired
                            .extend(spent.into_iter().filter(|n| !n.is_empty()));
                        self.retro.round += 1;
                        let n = self.retro.chunks.len();
                        self.retro.chunks = vec![None; n];
                    }
                }
            }
            TaskKind::RetroSeal { db: d, .. } if *d == db && self.retro.sealing => {
                self.retro.sealed.push(report.clone());
                self.retro.retire_rounds();
                if let Some(&len) = sizes.get(self.retro.sealed.len()) {
                    self.retro.start_db(len, split);
                }
            }
            _ => {}
        }
    }

    /// Progress of a retrograde plan: where the build stands, and the entries changed and
    /// positions solved in every round of the current database.
    pub(super) fn retro_progress(&self) -> serde_json::Value {
        let sizes = self.retro_shape().0;
        let db = self.retro.sealed.len();
        let rounds: Vec<serde_json::Value> = self
            .retro
            .rounds
            .get(db)
            .map(|r| {
                r.iter()
                    .enumerate()
                    .map(|(i, (changed, solved))| {
                        serde_json::json!({"round": i + 1, "changed": changed, "solved": solved})
                    })
                    .collect()
            })
            .unwrap_or_default();
        let done = self.retro_done();
        serde_json::json!({
            "databases_done": db,
            "databases": sizes.len(),
            "stones": if done { serde_json::Value::Null } else { db.into() },
            "positions": sizes.get(db).copied(),
            "round": if done { serde_json::Value::Null } else { self.retro.round.into() },
            "chunks_done": self.retro.chunks.iter().filter(|c| c.is_some()).count(),
            "chunks": self.retro.chunks.len(),
            "rounds": rounds,
            "entries_written": self.retro.work,
        })
    }

    /// The result of a finished retrograde plan: every database with its size, its positions
    /// won, drawn and lost for the side to move, rounds and checksums.
    pub(super) fn finish_retro(&self, job: &dyn PreparedJob) -> TaskOutput {
        let sizes = self.retro_shape().0;
        let databases: Vec<serde_json::Value> = self
            .retro
            .sealed
            .iter()
            .enumerate()
            .map(|(d, r)| {
                let rounds = self.retro.rounds.get(d).map_or(0, Vec::len);
                let rounds = rounds.max(self.retro.ran.get(d).copied().unwrap_or(0) as usize);
                let mut db = serde_json::json!({
                    "stones": d,
                    "positions": sizes.get(d),
                    "rounds": rounds,
                    "bytes": r.bytes,
                    "sha256": r.sha256,
                    "artifact": r.artifact,
                });
                // Won, drawn and lost as the seal task counted them (absent only in a build
                // recorded before seals counted them).
                if let Some(o) = r.outcomes {
                    db["won"] = o.won.into();
                    db["drawn"] = o.drawn.into();
                    db["lost"] = o.lost.into();
                }
                db
            })
            .collect();
        let mut out = TaskOutput {
            nodes: self.retro.work,
            ..TaskOutput::default()
        };
        out.extra.insert("databases".into(), databases.into());
        if let Some(name) = job.job().options.get("name") {
            out.extra.insert("name".into(), name.clone().into());
        }
        out
    }
}

/// Whether two round tasks cover the same range of the same round.
fn same_range(a: &TaskKind, b: &TaskKind) -> bool {
    match (a, b) {
        (
            TaskKind::Retro {
                db, round, start, ..
            },
            TaskKind::Retro {
                db: d2,
                round: r2,
                start: s2,
                ..
            },
        ) => db == d2 && round == r2 && start == s2,
        _ => false,
    }
}
