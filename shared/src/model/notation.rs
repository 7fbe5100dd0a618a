//! Errors from reading the text notations of positions and moves.

use std::fmt;

/// What is wrong with a position or move text, and where.
///
/// `Display` gives one line: `move 3 ('8'): column 8 is outside the board (columns 1..7)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotationError {
    /// What is wrong, in words.
    pub message: String,
    /// 1-based number of the move in a move list, when the error is about one move.
    pub move_number: Option<usize>,
    /// The offending piece of text, when there is one.
    pub fragment: Option<String>,
}

impl NotationError {
    /// An error with a message only.
    pub fn new(message: impl Into<String>) -> Self {
        NotationError {
            message: message.into(),
            move_number: None,
            fragment: None,
        }
    }
    /// Records which move of a list the error is about.
    pub fn at_move(mut self, number: usize) -> Self {
        self.move_number.get_or_insert(number);
        self
    }
    /// Records the offending text.
    pub fn with_fragment(mut self, fragment: impl Into<String>) -> Self {
        self.fragment.get_or_insert(fragment.into());
        self
    }
}

impl fmt::Display for NotationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.move_number, &self.fragment) {
            (Some(n), Some(t)) => write!(f, "move {n} ('{t}'): {}", self.message),
            (Some(n), None) => write!(f, "move {n}: {}", self.message),
            (None, Some(t)) => write!(f, "'{t}': {}", self.message),
            (None, None) => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for NotationError {}
