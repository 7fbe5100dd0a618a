//! Builds proof certificates ([`crate::proof`]) for decided thresholds.
//!
//! Contract: [`build_proof`] returns the token list of a proof tree for "value(root) >= target"
//! (`Claim::AtLeast`) or "value(root) < target" (`Claim::Below`), walking down to terminal
//! positions: at the prover's turns the first move (in the game's order) that keeps the claim, at
//! the opponent's turns every legal move. Which move keeps the claim is asked of one df-pn engine
//! whose table is kept for the whole walk, so every question after the first is mostly answered
//! by the table. The certificate does not depend on which kernel decided the job: any correct
//! decision has a proof tree, and the checker does not trust the builder. If the claim is false
//! the builder says so (`Err`), and a stop ([`Control`]) ends it with the reason.

use super::dfpn::Dfpn;
use super::PnOptions;
use crate::model::{Hashed, ZeroSum};
use crate::proof::Claim;
use crate::search::Control;
use serde_json::Value;

/// The proof tree's tokens for `claim` about `root` (see the module doc).
pub fn build_proof<G: ZeroSum + Hashed>(
    game: &G,
    root: &G::State,
    claim: Claim,
    target: i32,
    opts: &PnOptions,
    ctl: &Control,
) -> Result<Vec<Value>, String> {
    let mut dfpn = Dfpn::new(game, opts);
    let d = dfpn.decide(root, target, ctl);
    let want = claim == Claim::AtLeast;
    match d.verdict.as_bool() {
        Some(b) if b == want => {}
        Some(_) => return Err("the claim to certify is false".to_string()),
        None => return Err("stopped before the proof was built".to_string()),
    }
    let mut b = Builder {
        game,
        dfpn,
        ctl,
        want,
        root_side: game.side(root),
        tokens: Vec::new(),
    };
    b.node(root)?;
    Ok(b.tokens)
}

struct Builder<'a, 'g, G: ZeroSum + Hashed> {
    game: &'g G,
    dfpn: Dfpn<'g, G>,
    ctl: &'a Control,
    want: bool,
    root_side: u8,
    tokens: Vec<Value>,
}

impl<G: ZeroSum + Hashed> Builder<'_, '_, G> {
    fn node(&mut self, state: &G::State) -> Result<(), String> {
        if self.game.is_terminal(state) {
            return Ok(());
        }
        let mut moves = Vec::new();
        self.game.legal_moves(state, &mut moves);
        self.game.order_moves(state, &mut moves);
        let prover_moves = (self.game.side(state) == self.root_side) == self.want;
        if prover_moves {
            for &mv in &moves {
                let mut child = state.clone();
                self.game.apply(&mut child, mv);
                match self.dfpn.holds(&child, self.ctl) {
                    Some(h) if h == self.want => {
                        self.tokens.push(self.game.format_move(state, mv).into());
                        self.tokens
                            .push(format!("{:016x}", self.game.hash(&child)).into());
                        return self.node(&child);
                    }
                    Some(_) => {}
                    None => return Err("stopped before the proof was built".to_string()),
                }
            }
            Err(format!(
                "no move keeps the claim at '{}' (the decision and the table disagree)",
                self.game.format_position(state)
            ))
        } else {
            self.tokens.push(Value::from(moves.len()));
            for &mv in &moves {
                self.tokens.push(self.game.format_move(state, mv).into());
                let mut child = state.clone();
                self.game.apply(&mut child, mv);
                self.node(&child)?;
            }
            Ok(())
        }
    }
}
