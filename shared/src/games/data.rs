//! Where data files are read from and written to at run time.
//!
//! Two folders. The *reference data* (Pons' test sets, the standard SameGame boards, the TSPTW
//! instances, the Morpion records, the FFO suite) is read from `$GAMESOLVER_DATA` when set,
//! otherwise from the repository's `data/` folder as seen at compile time; the files that jobs
//! read (SameGame boards, TSPTW instances) are also compiled in ([`embedded`]). What the program
//! *makes* (Awari databases, Connect Four opening books) goes to `$GAMESOLVER_DATA` when set,
//! otherwise to the per-user data folder: `$XDG_DATA_HOME/gamesolver`, else
//! `~/.local/share/gamesolver` (never into the source tree a binary was built from). A missing
//! file is a one-line error that names the file and the variable.

use std::path::{Path, PathBuf};

/// The reference data folder.
pub fn data_dir() -> PathBuf {
    std::env::var_os("GAMESOLVER_DATA")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data"))
}

/// The folder for databases and books the program builds and reads back: `$GAMESOLVER_DATA`,
/// else `$XDG_DATA_HOME/gamesolver`, else `$HOME/.local/share/gamesolver`, else
/// `./gamesolver-data` (a process with no home).
pub fn user_dir() -> PathBuf {
    user_dir_from(|k| std::env::var_os(k))
}

/// [`user_dir`] with the environment read through `var`.
fn user_dir_from(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> PathBuf {
    let var = |k: &str| var(k).filter(|v| !v.is_empty());
    if let Some(d) = var("GAMESOLVER_DATA") {
        return PathBuf::from(d);
    }
    if let Some(x) = var("XDG_DATA_HOME").map(PathBuf::from) {
        // The XDG rule: a relative value is ignored.
        if x.is_absolute() {
            return x.join("gamesolver");
        }
    }
    match var("HOME") {
        Some(h) => Path::new(&h).join(".local/share/gamesolver"),
        None => PathBuf::from("gamesolver-data"),
    }
}

/// Reference files the jobs of the service read (the 20 standard SameGame boards, the 30 TSPTW
/// instances), compiled into the binary so that an installed binary or a container image runs
/// them without the source tree; a file of the same name in the data folder takes precedence.
/// About 290 KB.
macro_rules! embed {
    ($rel:literal) => {
        ($rel, include_str!(concat!("../../../data/", $rel)))
    };
}
const EMBEDDED: &[(&str, &str)] = &[
    embed!("nrpa/samegame/problems.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_201.1.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_201.2.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_201.3.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_201.4.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_202.1.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_202.2.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_202.3.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_202.4.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_203.1.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_203.2.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_203.3.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_203.4.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_204.1.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_204.2.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_204.3.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_205.1.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_205.2.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_205.3.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_205.4.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_206.1.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_206.2.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_206.3.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_206.4.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_207.1.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_207.2.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_207.3.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_207.4.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_208.1.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_208.2.txt"),
    embed!("nrpa/tsptw_solomon_potvin_bengio/rc_208.3.txt"),
];

/// The compiled-in copy of the reference file `rel`, if there is one.
pub fn embedded(rel: &str) -> Option<&'static str> {
    EMBEDDED
        .iter()
        .find(|(r, _)| *r == rel)
        .map(|(_, text)| *text)
}

/// Reads `rel` under the data folder, else its compiled-in copy ([`embedded`]). The error names
/// `rel`, never the folder's absolute path (messages reach users of the service).
pub fn read(rel: &str) -> Result<String, String> {
    let path = data_dir().join(rel);
    std::fs::read_to_string(&path)
        .or_else(|e| {
            if let Some(text) = embedded(rel) {
                return Ok(text.to_string());
            }
            Err(e)
        })
        .map_err(|e| {
            format!(
            "cannot read '{rel}' in the data folder ({}); set GAMESOLVER_DATA to the data folder",
            e.kind()
        )
        })
}

/// Longest data name a job may give.
pub const MAX_NAME_LEN: usize = 64;

/// Checks that `name`, taken from a job, is a plain data name: 1 to [`MAX_NAME_LEN`] letters,
/// digits, `.`, `_` or `-`, not starting with a dot (so no folders, no `..`, no hidden files).
/// Every name a job gives for data (opening books, instances) goes through this one check.
pub fn plain_name(name: &str) -> Result<&str, String> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if ok {
        Ok(name)
    } else {
        Err(format!(
            "'{}' is not a plain data name (letters, digits, '.', '_', '-', not starting with a dot, at most {MAX_NAME_LEN} characters)",
            crate::model::excerpt(name)
        ))
    }
}

/// The path of the data file `name` (a [`plain_name`]) in the data folder's `folder`, with
/// `ext` appended (e.g. `".txt"`), if it is a regular file; `what` names it in errors ("no book
/// 'x' in the data folder"). Checking for a regular file first means a job can never make the
/// process open a FIFO or a device.
pub fn named_file(folder: &str, name: &str, ext: &str, what: &str) -> Result<PathBuf, String> {
    named_file_in(&data_dir(), folder, name, ext, what)
}

/// [`named_file`] in the folder `base` (e.g. [`user_dir`]).
pub fn named_file_in(
    base: &Path,
    folder: &str,
    name: &str,
    ext: &str,
    what: &str,
) -> Result<PathBuf, String> {
    let name = plain_name(name.trim()).map_err(|e| format!("{what}: {e}"))?;
    let path = base.join(folder).join(format!("{name}{ext}"));
    match std::fs::metadata(&path) {
        Ok(m) if m.is_file() => Ok(path),
        _ => Err(format!("no {what} '{name}' in the data folder")),
    }
}

/// Reads the data file `name` (see [`named_file`]).
pub fn read_named(folder: &str, name: &str, ext: &str, what: &str) -> Result<String, String> {
    let path = match named_file(folder, name, ext, what) {
        Ok(path) => path,
        Err(e) => {
            let rel = format!("{folder}/{}{ext}", name.trim());
            return embedded(&rel).map(str::to_string).ok_or(e);
        }
    };
    std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {what} '{}' ({})", name.trim(), e.kind()))
}

/// One line of a Pons Connect Four test set: the moves (1-based columns) and the exact score.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PonsLine {
    /// Columns played, as in the file (`base=1` notation).
    pub moves: String,
    /// The published exact score (docs/API.md, section 3).
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

    /// The compiled-in copies are the repository's files, and every TSPTW instance is there.
    #[test]
    fn the_embedded_reference_files_are_the_data_folders() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data");
        for (rel, text) in EMBEDDED {
            assert_eq!(
                std::fs::read_to_string(dir.join(rel)).unwrap(),
                *text,
                "{rel}"
            );
        }
        let instances = std::fs::read_dir(dir.join("nrpa/tsptw_solomon_potvin_bengio"))
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".txt"))
            .count();
        assert_eq!(EMBEDDED.len(), instances + 1);
        assert!(embedded("nrpa/samegame/problems.txt").is_some());
        assert!(embedded("nrpa/../x").is_none());
    }

    /// What the program builds goes to GAMESOLVER_DATA, else the XDG data folder, else
    /// ~/.local/share: never next to the sources.
    #[test]
    fn the_user_folder_follows_the_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| std::ffi::OsString::from(v))
            }
        };
        const ALL: &[(&str, &str)] = &[
            ("GAMESOLVER_DATA", "/srv/gs"),
            ("XDG_DATA_HOME", "/x"),
            ("HOME", "/home/u"),
        ];
        assert_eq!(user_dir_from(env(ALL)), PathBuf::from("/srv/gs"));
        assert_eq!(
            user_dir_from(env(&[("GAMESOLVER_DATA", ""), ("XDG_DATA_HOME", "/x")])),
            PathBuf::from("/x/gamesolver")
        );
        assert_eq!(
            user_dir_from(env(&[("XDG_DATA_HOME", "rel"), ("HOME", "/home/u")])),
            PathBuf::from("/home/u/.local/share/gamesolver")
        );
        assert_eq!(user_dir_from(env(&[])), PathBuf::from("gamesolver-data"));
        // The reference data of the tests is in the repository.
        assert!(data_dir().join("connect4/Test_L1_R1").is_file());
    }

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
        assert!(!e.contains('\n') && e.len() < 250, "{e}");
        let e = parse_pons_set(&format!("44 1\u{0}{}", "9".repeat(10_000))).unwrap_err();
        assert!(!e.contains('\0') && e.len() < 100, "{e}");
    }

    #[test]
    fn data_names_are_plain_and_errors_hide_the_folder() {
        for bad in [
            "",
            ".hidden",
            "../x",
            "a/b",
            "a\\b",
            "/etc/passwd",
            "x y",
            "é",
        ] {
            assert!(plain_name(bad).is_err(), "{bad:?}");
        }
        assert!(plain_name(&"a".repeat(MAX_NAME_LEN)).is_ok());
        assert!(plain_name(&"a".repeat(MAX_NAME_LEN + 1)).is_err());
        assert_eq!(plain_name("Test_L2_R1").unwrap(), "Test_L2_R1");
        let e = named_file("connect4", "no_such_book", "", "book").unwrap_err();
        assert_eq!(e, "no book 'no_such_book' in the data folder");
        let e = read("no/such/file").unwrap_err();
        let dir = data_dir().display().to_string();
        assert!(!e.contains(&dir) && e.contains("'no/such/file'"), "{e}");
        // A folder is not a data file.
        assert!(named_file("", "connect4", "", "book").is_err());
    }
}
