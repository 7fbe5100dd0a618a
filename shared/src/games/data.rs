//! Where data files (standard boards, benchmark instances) are read from at run time.
//!
//! The folder is `$GAMESOLVER_DATA` when set, otherwise the workspace's `../shared/data` as seen
//! at compile time. A missing file is a one-line error that names the path and the variable.

use std::path::PathBuf;

/// The data folder.
pub fn data_dir() -> PathBuf {
    std::env::var_os("GAMESOLVER_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"))
}

/// Reads `rel` under the data folder.
pub fn read(rel: &str) -> Result<String, String> {
    let path = data_dir().join(rel);
    std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "cannot read {} ({e}); set GAMESOLVER_DATA to the data folder",
            path.display()
        )
    })
}

/// Checks that `name` is a plain file name (no folders, no `..`), for names taken from jobs.
pub fn plain_name(name: &str) -> Result<&str, String> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if ok {
        Ok(name)
    } else {
        Err(format!(
            "'{}' is not a valid data file name",
            crate::model::excerpt(name)
        ))
    }
}

/// One line of a Pons Connect Four test set: the moves (1-based columns) and the exact score.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PonsLine {
    /// Columns played, as in the file (`base=1` notation).
    pub moves: String,
    /// The published exact score (CONTRACTS.md, Connect Four score).
    pub score: i32,
}

/// Parses the text of a Pons test set (`<moves> <score>` per line, blank lines skipped). A
/// malformed line is an error naming its line number.
pub fn parse_pons_set(text: &str) -> Result<Vec<PonsLine>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let mut parts = line.split_whitespace();
        let (Some(moves), Some(score), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(format!("line {}: expected '<moves> <score>'", i + 1));
        };
        let score = score.parse().map_err(|_| {
            format!(
                "line {}: score '{}' is not an integer",
                i + 1,
                crate::model::excerpt(score)
            )
        })?;
        out.push(PonsLine {
            moves: moves.to_string(),
            score,
        });
    }
    Ok(out)
}

/// Reads Pons' test set `name` (e.g. `Test_L2_R1`) from `connect4/` under the data folder.
pub fn pons_set(name: &str) -> Result<Vec<PonsLine>, String> {
    let name = plain_name(name)?;
    parse_pons_set(&read(&format!("connect4/{name}"))?).map_err(|e| format!("{name}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pons_sets_parse_and_bad_lines_are_named() {
        let set = parse_pons_set("4455 18\n\n12 -3\n").unwrap();
        assert_eq!(
            set,
            vec![
                PonsLine {
                    moves: "4455".into(),
                    score: 18
                },
                PonsLine {
                    moves: "12".into(),
                    score: -3
                }
            ]
        );
        assert!(parse_pons_set("44 x").unwrap_err().contains("line 1"));
        assert!(parse_pons_set("1 2\n44").unwrap_err().contains("line 2"));
        assert!(pons_set("../etc").is_err());
    }

    #[test]
    fn names_and_scores_from_hostile_text_are_quoted_on_one_short_line() {
        let e = plain_name(&format!("a\n{}", "b".repeat(10_000))).unwrap_err();
        assert!(!e.contains('\n') && e.len() < 100, "{e}");
        let e = parse_pons_set(&format!("44 1\u{0}{}", "9".repeat(10_000))).unwrap_err();
        assert!(!e.contains('\0') && e.len() < 100, "{e}");
    }
}
