//! Proof certificates: a decided threshold written as a proof tree, and a checker that verifies
//! it with the game rules alone.
//!
//! A certificate claims "value >= target" ([`Claim::AtLeast`]) or "value < target"
//! ([`Claim::Below`]) from the view of the side to move (negamax, the game's internal scale); the
//! *prover* is the side for whom the claim is a win. The tree is a flat list of JSON tokens in
//! preorder, so files of any depth parse without recursion limits:
//! ```text
//! node := (nothing)                  a terminal position; its value must satisfy the claim
//!       | MOVE HASH node             the prover moves: one move (notation), hash reached (hex)
//!       | COUNT (MOVE node){COUNT}   the opponent moves: every legal reply, each once
//! ```
//! The file: `{"format": "gamesolver-proof/1", "game", "game_params", "position", "claim":
//! "at_least" | "below", "target", "tree": [tokens...]}`. The registry rebuilds the game
//! (`registry::proof`) and calls [`verify_game`]; [`check`] uses only `parse_move`,
//! `legal_moves`, the hash and `terminal_value`, no search code. A tampered move fails: a changed
//! reply no longer matches the legal set, a changed prover move reaches another hash, even where
//! the altered tree would be a proof as well. Every failure is an `Err` of one line naming the
//! token. This module knows the game model and the file format, no game and no search.

use crate::model::{excerpt, Game, Hashed, ZeroSum};
use crate::wire::Settings;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The format tag of version 1.
pub const FORMAT: &str = "gamesolver-proof/1";

/// Most bytes of JSON a certificate's tree may take when it is built (the coordinator's
/// default `--max-proof-bytes`, 64 MiB): a builder stops past it rather than make a certificate
/// that the coordinator would refuse.
pub const MAX_PROOF_BYTES: usize = 64 << 20;

/// What a certificate claims.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Claim {
    /// value >= target.
    AtLeast,
    /// value < target.
    Below,
}

/// A certificate file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProofFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// Game name, as in a job.
    pub game: String,
    /// Game parameters, as in a job.
    #[serde(default)]
    pub game_params: Settings,
    /// The position, in the game's notation (empty: the start).
    #[serde(default)]
    pub position: String,
    /// The claim.
    pub claim: Claim,
    /// The threshold, in the game's internal integer scale.
    pub target: i32,
    /// The proof tree (see the module doc).
    pub tree: Vec<Value>,
}

/// What a verified certificate establishes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Certified {
    /// Game name.
    pub game: String,
    /// The position.
    pub position: String,
    /// The claim that holds.
    pub claim: Claim,
    /// Lower bound on the value it certifies (as the outside world reads values), if any.
    pub lower: Option<Value>,
    /// Strict upper bound: the value is below this, if any (`value < below`; games whose
    /// internal scale is finer than their outside values make `<=` bounds read oddly).
    pub below: Option<Value>,
    /// Positions the checker visited.
    pub positions: u64,
}

impl std::fmt::Display for Certified {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let position = if self.position.is_empty() {
            "the start"
        } else {
            &self.position
        };
        match (&self.lower, &self.below) {
            (Some(l), None) => write!(f, "{} {position}: value >= {l}", self.game)?,
            (None, Some(u)) => write!(f, "{} {position}: value < {u}", self.game)?,
            (Some(l), Some(u)) => write!(f, "{} {position}: {l} <= value < {u}", self.game)?,
            (None, None) => write!(f, "{} {position}: nothing", self.game)?,
        }
        write!(f, " (proof of {} positions verified)", self.positions)
    }
}

/// Verifies a certificate about `game`, whose position `root` the caller parsed from
/// `file.position` with `file.game_params`: the format tag, then the tree ([`check`]). The caller
/// knows the game; verifying a file by its game's name is the registry's
/// (`registry::proof::verify`), since only the registry knows names.
pub fn verify_game<G: ZeroSum + Hashed>(
    game: &G,
    root: &G::State,
    file: &ProofFile,
) -> Result<Certified, String> {
    if file.format != FORMAT {
        return Err(format!(
            "proof format '{}' is not '{FORMAT}'",
            excerpt(&file.format)
        ));
    }
    let positions = check(game, root, file.claim, file.target, &file.tree)?;
    // The target comes from the file: outside the game's value range it has no outside
    // form. "value >= t" with t at or below the range says no more than its lower end;
    // "value < t" above the range says nothing the game does not already (and the
    // impossible claims beyond the range never verify).
    let (lo, hi) = game.value_bounds(root);
    let shown = |v: i32| (lo..=hi).contains(&v).then(|| game.value_to_json(root, v));
    let (lower, below) = match file.claim {
        Claim::AtLeast => (shown(file.target.max(lo)), None),
        Claim::Below => (None, shown(file.target)),
    };
    Ok(Certified {
        game: file.game.clone(),
        position: file.position.clone(),
        claim: file.claim,
        lower,
        below,
        positions,
    })
}

/// Checks a proof tree for `claim` about `root` with the rules of `game` only; returns the
/// number of positions visited.
pub fn check<G: ZeroSum + Hashed>(
    game: &G,
    root: &G::State,
    claim: Claim,
    target: i32,
    tree: &[Value],
) -> Result<u64, String> {
    let mut c = Check {
        game,
        tokens: tree,
        at: 0,
        root_side: game.side(root),
        claim,
        target,
        positions: 0,
        moves: Vec::new(),
    };
    c.node(root, 0)?;
    if c.at != tree.len() {
        return Err(format!(
            "token {}: the proof continues after its tree ended",
            c.at
        ));
    }
    Ok(c.positions)
}

/// Deepest proof the checker follows (every game of the model ends well before this).
const MAX_DEPTH: usize = 10_000;

struct Check<'a, G: Game> {
    game: &'a G,
    tokens: &'a [Value],
    at: usize,
    root_side: u8,
    claim: Claim,
    target: i32,
    positions: u64,
    moves: Vec<G::Move>,
}

impl<G: ZeroSum + Hashed> Check<'_, G> {
    fn next(&mut self, what: &str) -> Result<&Value, String> {
        let t = self
            .tokens
            .get(self.at)
            .ok_or_else(|| format!("token {}: the proof ends where {what} is expected", self.at))?;
        self.at += 1;
        Ok(t)
    }

    fn next_str(&mut self, what: &str) -> Result<String, String> {
        let at = self.at;
        match self.next(what)? {
            Value::String(s) => Ok(s.clone()),
            other => Err(format!(
                "token {at}: expected {what}, found {}",
                excerpt(&other.to_string())
            )),
        }
    }

    fn node(&mut self, state: &G::State, depth: usize) -> Result<(), String> {
        self.positions += 1;
        if depth > MAX_DEPTH {
            return Err(format!("the proof is deeper than {MAX_DEPTH} plies"));
        }
        let here = || self.game.format_position(state);
        if self.game.is_terminal(state) {
            let v = self.game.terminal_value(state);
            let v = if self.game.side(state) == self.root_side {
                v
            } else {
                -v
            };
            let ok = match self.claim {
                Claim::AtLeast => v >= self.target,
                Claim::Below => v < self.target,
            };
            if !ok {
                return Err(format!(
                    "token {}: the game ends at '{}' with value {v} (root's view), which breaks the claim",
                    self.at,
                    here()
                ));
            }
            return Ok(());
        }
        let mover_is_root = self.game.side(state) == self.root_side;
        let prover_moves = mover_is_root == (self.claim == Claim::AtLeast);
        if prover_moves {
            let at = self.at;
            let text = self.next_str("a move")?;
            let mv = self.game.parse_move(state, &text).map_err(|e| {
                format!("token {at}: move '{}' at '{}': {e}", excerpt(&text), here())
            })?;
            let mut child = state.clone();
            self.game.apply(&mut child, mv);
            let at = self.at;
            let hash = self.next_str("a position hash")?;
            let want = format!("{:016x}", self.game.hash(&child));
            if hash != want {
                return Err(format!(
                    "token {at}: the position after '{}' at '{}' does not have the recorded hash",
                    excerpt(&text),
                    here()
                ));
            }
            self.node(&child, depth + 1)
        } else {
            let at = self.at;
            let count = self
                .next("a reply count")?
                .as_u64()
                .ok_or_else(|| format!("token {at}: expected the number of replies"))?;
            self.game.legal_moves(state, &mut self.moves);
            let legal = self.moves.clone();
            if count != legal.len() as u64 {
                return Err(format!(
                    "token {at}: {count} replies listed at '{}', but there are {} legal moves",
                    here(),
                    legal.len()
                ));
            }
            let mut seen = vec![false; legal.len()];
            // Replies are found by a map where there are many: a node of k replies costs O(k).
            let index: Option<std::collections::HashMap<G::Move, usize>> = (legal.len() > 16)
                .then(|| legal.iter().enumerate().map(|(i, &m)| (m, i)).collect());
            for _ in 0..count {
                let at = self.at;
                let text = self.next_str("a reply")?;
                let mv = self.game.parse_move(state, &text).map_err(|e| {
                    format!(
                        "token {at}: reply '{}' at '{}': {e}",
                        excerpt(&text),
                        here()
                    )
                })?;
                let found = match &index {
                    Some(map) => map.get(&mv).copied(),
                    None => legal.iter().position(|&m| m == mv),
                };
                let i = found.ok_or_else(|| {
                    format!(
                        "token {at}: reply '{}' at '{}' is not among the legal moves",
                        excerpt(&text),
                        here()
                    )
                })?;
                if seen[i] {
                    return Err(format!(
                        "token {at}: reply '{}' at '{}' is listed twice",
                        excerpt(&text),
                        here()
                    ));
                }
                seen[i] = true;
                let mut child = state.clone();
                self.game.apply(&mut child, mv);
                self.node(&child, depth + 1)?;
            }
            Ok(())
        }
    }
}

/// Writes a certificate file.
pub fn write_proof_file(path: impl AsRef<std::path::Path>, file: &ProofFile) -> Result<(), String> {
    let path = path.as_ref();
    let text = serde_json::to_string(file).map_err(|e| format!("cannot encode the proof: {e}"))?;
    std::fs::write(path, text)
        .map_err(|e| format!("cannot write proof file '{}': {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::proof::verify;

    /// A max/min tree whose root is MIN: values are -rank, in -2..=0.
    const MIN_TREE: &str = r#"{"min": [2.5, -1, 7]}"#;

    fn file(claim: Claim, target: i32, tree: Vec<Value>) -> ProofFile {
        ProofFile {
            format: FORMAT.into(),
            game: "tree".into(),
            game_params: Settings::new(),
            position: MIN_TREE.into(),
            claim,
            target,
            tree,
        }
    }

    #[test]
    fn targets_outside_the_value_range_verify_or_fail_without_panicking() {
        // MIN to move and refuting: every reply listed (3 leaves).
        let all = vec![3.into(), "0".into(), "1".into(), "2".into()];
        for target in [1, 3, 1000, i32::MAX] {
            // "value < target" above the range: true, and it shows no bound.
            let c = verify(&file(Claim::Below, target, all.clone())).unwrap();
            assert_eq!((c.lower, c.below), (None, None), "{target}");
        }
        // "value >= target" at or below the range: true, shown as the range's lower end.
        let c = verify(&file(
            Claim::AtLeast,
            i32::MIN,
            vec!["1".into(), "0000000000000001".into()],
        ));
        assert!(
            c.is_err(),
            "the prover's move must lead to the recorded hash"
        );
        let c = verify(&file(
            Claim::AtLeast,
            i32::MIN,
            vec!["2".into(), "0000000000000003".into()],
        ))
        .unwrap();
        assert_eq!(c.lower, Some(serde_json::json!(7)));
        // Impossible claims fail in one line.
        for (claim, target) in [
            (Claim::AtLeast, 1),
            (Claim::AtLeast, i32::MAX),
            (Claim::Below, i32::MIN),
        ] {
            let e = verify(&file(claim, target, all.clone())).unwrap_err();
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
