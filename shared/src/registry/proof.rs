//! Verifying a proof certificate by the name of its game: the registry builds the game and the
//! position the file names, then [`crate::proof::verify_game`] checks the tree with the rules
//! alone (see [`crate::proof`] for the format and what is checked).
//!
//! Bad input (unreadable file, malformed JSON, unknown game, wrong format) gives `Err` with one
//! line; so does every failed check.

use super::pn::{visit_zero_sum, ZeroSumVisitor};
use crate::model::{excerpt, Hashed, ZeroSum};
use crate::proof::{verify_game, Certified, ProofFile, FORMAT};
use serde::Deserialize;
use serde_json::Value;

/// Reads a certificate file and verifies it.
pub fn verify_proof_file(path: impl AsRef<std::path::Path>) -> Result<Certified, String> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read proof file '{}': {e}", path.display()))?;
    let file: ProofFile = serde_json::from_str(&text)
        .map_err(|e| format!("proof file '{}' is malformed: {e}", path.display()))?;
    verify(&file)
}

/// Verifies a certificate given as JSON text (a job's `proof`, as served by the service).
pub fn verify_proof_text(text: &str) -> Result<Certified, String> {
    let file: ProofFile =
        serde_json::from_str(text).map_err(|e| format!("proof is malformed: {e}"))?;
    verify(&file)
}

/// Verifies a certificate given as a JSON value (`JobResult::proof`).
pub fn verify_proof_value(value: &Value) -> Result<Certified, String> {
    let file = ProofFile::deserialize(value).map_err(|e| format!("proof is malformed: {e}"))?;
    verify(&file)
}

/// Verifies a certificate already read: its game must be one the registry knows.
pub fn verify(file: &ProofFile) -> Result<Certified, String> {
    if file.format != FORMAT {
        return Err(format!(
            "proof format '{}' is not '{FORMAT}'",
            excerpt(&file.format)
        ));
    }
    if !super::GAMES.contains(&file.game.as_str()) {
        return Err(format!("proof of unknown game '{}'", excerpt(&file.game)));
    }
    visit_zero_sum(
        &file.game,
        &file.game_params,
        &file.position,
        Checker { file },
    )
    .map_err(|e| e.to_string())?
}

struct Checker<'a> {
    file: &'a ProofFile,
}

impl ZeroSumVisitor for Checker<'_> {
    type Output = Result<Certified, String>;
    fn visit<G: ZeroSum + Hashed>(self, game: G, root: G::State) -> Self::Output {
        verify_game(&game, &root, self.file)
    }
}
