//! Proved positions that a job's workers exchange (docs/API.md 5.3a, "Proved positions"): a
//! job-level leaf's kernel reports the positions it proved with its result, and every other
//! worker gets them with its next lease of the same job, so that it never searches again what
//! another worker proved. Entries are opaque here (the game's solver made them and reads them);
//! they are hints that save time, not results: kept in memory only, bounded per job, lost on a
//! restart (the workers then search again what they would have been sent).

use gamesolver_shared::wire::Proved;
use std::collections::HashMap;

/// Most entries one job keeps (16 bytes each, plus 2 naming the worker that sent it).
pub(super) const MAX_PROVED_PER_JOB: usize = 1 << 18;
/// Most entries one lease carries (the rest follow with the worker's next leases).
pub(super) const MAX_PROVED_PER_LEASE: usize = 1 << 15;
/// Workers told apart as senders; entries of later ones go to every worker, their own too.
const MAX_SENDERS: usize = u16::MAX as usize;

/// One job's entries, in arrival order, and how far each worker has been sent them.
#[derive(Debug, Default)]
pub(super) struct ProvedPool {
    entries: Vec<(u16, Proved)>,
    senders: Vec<String>,
    sent_to: HashMap<String, usize>,
}

impl ProvedPool {
    /// Entries held.
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Bytes held (the entries and the workers' names and cursors).
    pub(super) fn bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<(u16, Proved)>()
            + self
                .senders
                .iter()
                .chain(self.sent_to.keys())
                .map(|s| s.len() + 32)
                .sum::<usize>()
    }

    /// Takes `entries` from `worker`, as far as the job's bound allows.
    pub(super) fn add(&mut self, worker: &str, entries: &[Proved]) {
        let room = MAX_PROVED_PER_JOB.saturating_sub(self.entries.len());
        if entries.is_empty() || room == 0 {
            return;
        }
        let from = match self.senders.iter().position(|s| s == worker) {
            Some(i) => i as u16,
            None if self.senders.len() < MAX_SENDERS => {
                self.senders.push(worker.to_string());
                (self.senders.len() - 1) as u16
            }
            None => u16::MAX,
        };
        self.entries
            .extend(entries.iter().take(room).map(|&e| (from, e)));
    }

    /// The entries `worker` has not been sent yet, but its own, at most
    /// [`MAX_PROVED_PER_LEASE`]; they count as sent.
    pub(super) fn take_for(&mut self, worker: &str) -> Vec<Proved> {
        let own = self.senders.iter().position(|s| s == worker);
        let start = self.sent_to.get(worker).copied().unwrap_or(0);
        let mut out = Vec::new();
        let mut end = start;
        for &(from, e) in &self.entries[start.min(self.entries.len())..] {
            if out.len() >= MAX_PROVED_PER_LEASE {
                break;
            }
            end += 1;
            if Some(from as usize) != own {
                out.push(e);
            }
        }
        if !self.entries.is_empty() {
            self.sent_to.insert(worker.to_string(), end);
        }
        out
    }

    /// Drops every entry (the job ended).
    pub(super) fn clear(&mut self) {
        *self = ProvedPool::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_worker_gets_every_other_workers_entries_once() {
        let mut p = ProvedPool::default();
        p.add("a", &[[1, 10], [2, 20]]);
        p.add("b", &[[3, 30]]);
        assert_eq!(p.take_for("a"), vec![[3, 30]]);
        assert_eq!(p.take_for("a"), Vec::<Proved>::new());
        assert_eq!(p.take_for("c"), vec![[1, 10], [2, 20], [3, 30]]);
        p.add("c", &[[4, 40]]);
        assert_eq!(p.take_for("a"), vec![[4, 40]]);
        assert_eq!(p.take_for("b"), vec![[1, 10], [2, 20], [4, 40]]);
        assert_eq!(p.take_for("c"), Vec::<Proved>::new());
    }

    #[test]
    fn a_job_and_a_lease_are_bounded() {
        let mut p = ProvedPool::default();
        let many: Vec<Proved> = (0..MAX_PROVED_PER_JOB as u64 + 5).map(|k| [k, k]).collect();
        p.add("a", &many);
        p.add("a", &many);
        assert_eq!(p.len(), MAX_PROVED_PER_JOB);
        let first = p.take_for("b");
        assert_eq!(first.len(), MAX_PROVED_PER_LEASE);
        assert_eq!(first[0], [0, 0]);
        assert_eq!(p.take_for("b")[0], [MAX_PROVED_PER_LEASE as u64; 2]);
        p.clear();
        assert_eq!(p.len(), 0);
        assert!(p.take_for("b").is_empty());
    }
}
