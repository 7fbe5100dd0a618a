//! Errors from reading the text notations of positions and moves.

use std::fmt;

/// What is wrong with a position or move text, and where.
///
/// `Display` gives one line: `move 3 ('8'): column 8 is outside the board (columns 1..7)`.
/// Control characters of the input (line breaks, NUL, ...) are shown escaped and a long
/// fragment is cut, so that hostile text cannot break a log line or echo megabytes back.
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

/// Longest fragment shown in full, in characters.
const FRAGMENT_CHARS: usize = 40;
/// Longest message shown in full, in characters: a backstop for messages that quote input.
const MESSAGE_CHARS: usize = 300;

/// `text` as an error message may quote it: control characters escaped, cut after 40
/// characters (with `...`). For parsers whose errors are plain strings.
pub fn excerpt(text: &str) -> String {
    shown(text, FRAGMENT_CHARS)
}

/// A whole error message on one line of bounded length: control characters escaped, cut after
/// 600 characters (room for a list of known names; quoted input is already an [`excerpt`]).
pub fn one_line(text: &str) -> String {
    shown(text, 600)
}

/// `text` with control characters escaped (`\n`, `\u{0}`), cut after `max` characters.
fn shown(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == max {
            out.push_str("...");
            break;
        }
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

impl fmt::Display for NotationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = shown(&self.message, MESSAGE_CHARS);
        match (&self.move_number, &self.fragment) {
            (Some(n), Some(t)) => write!(f, "move {n} ('{}'): {message}", shown(t, FRAGMENT_CHARS)),
            (Some(n), None) => write!(f, "move {n}: {message}"),
            (None, Some(t)) => write!(f, "'{}': {message}", shown(t, FRAGMENT_CHARS)),
            (None, None) => f.write_str(&message),
        }
    }
}

impl std::error::Error for NotationError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_text_shows_on_one_short_line() {
        let e = NotationError::new("not a cell\nnumber")
            .with_fragment("\u{e}\0x\r\n")
            .at_move(1);
        assert_eq!(
            e.to_string(),
            r"move 1 ('\u{e}\0x\r\n'): not a cell\nnumber"
        );
        let long = NotationError::new("too long").with_fragment("é".repeat(10_000));
        let shown = long.to_string();
        assert!(shown.starts_with(&format!("'{}...'", "é".repeat(FRAGMENT_CHARS))));
        assert!(shown.chars().count() < 60, "{shown}");
        let quoted = NotationError::new(format!("'{}' is not a number", "7".repeat(10_000)));
        assert_eq!(quoted.to_string().chars().count(), MESSAGE_CHARS + 3);
    }
}
