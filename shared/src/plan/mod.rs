//! Job planning: a job becomes tasks, task results become more tasks or the final result.
