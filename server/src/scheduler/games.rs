//! Uploaded game modules (`POST /v1/games`): the name a module goes by, written to the store
//! with a line in the event log. The module itself is a file artifact, stored before this.

use super::{now_ms, SchedError, Scheduler};
use crate::store::Write;

impl Scheduler {
    /// Records the module `sha256` under `name` (replacing the name's earlier module: jobs
    /// already submitted keep the hash they were given); `info` is its declaration as JSON.
    pub fn record_game(
        &mut self,
        name: String,
        sha256: String,
        info: String,
    ) -> Result<(), SchedError> {
        let detail = format!("game module '{name}' uploaded: {sha256}");
        self.commit(vec![
            Write::Game {
                name,
                sha256,
                info,
                at_ms: now_ms(),
            },
            Self::event(None, "game", detail),
        ])
    }
}
