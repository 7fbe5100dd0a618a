//! The one place where a game name meets a kernel name.
