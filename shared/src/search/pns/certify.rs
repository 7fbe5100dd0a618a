//! Builds proof certificates ([`crate::proof`]) for decided thresholds.
//!
//! Contract: [`build_proof`] returns the token list of a proof tree for "value(root) >= target"
//! (`Claim::AtLeast`) or "value(root) < target" (`Claim::Below`), walking down to terminal
//! positions: at the prover's turns the first move (in the game's order) that keeps the claim, at
//! the opponent's turns every legal move. Which move keeps the claim is asked of one df-pn engine
//! whose table is kept for the whole walk, so every question after the first is mostly answered
//! by the table. The certificate does not depend on which kernel decided the job: any correct
//! decision has a proof tree, and the checker does not trust the builder. If the claim is false
//! the builder says so, and a stop ([`Control`]) ends it with the reason.
//!
//! Memory ([`ProofBudget`]): a proof tree is a tree, not the DAG the search worked on, so it can
//! be far larger than the search (Connect Four from the twelfth ply: millions of positions). The
//! builder stays within the job's memory budget: the df-pn table gets half of it, the tokens the
//! other half, counted as they will be held in the result (a JSON value of 32 bytes per token,
//! plus a heap block per string: about 60 bytes a token, eight times their JSON text). It also
//! stops when the JSON text passes the size limit of a certificate. Either way it ends with
//! [`NoProof::TooLarge`] and a one-line reason naming the limit, as soon as the tree passes it,
//! without building the rest. The walk looks at the stop flag every [`POLL_TOKENS`] tokens, so a
//! cancel or a time limit ends it within milliseconds.

use super::dfpn::Dfpn;
use super::PnOptions;
use crate::model::{Hashed, ZeroSum};
use crate::proof::Claim;
use crate::search::{Control, StopReason};
use serde_json::Value;

/// Tokens between two looks at the stop flag.
pub const POLL_TOKENS: usize = 1 << 10;
/// Bytes a token holds in a JSON value: the value itself.
const VALUE_BYTES: usize = std::mem::size_of::<Value>();
/// Bytes of the heap block behind a short string (the allocator's smallest block).
const MIN_STRING_BLOCK: usize = 32;

/// Bytes of the heap block behind a string of `capacity` bytes (glibc: the request plus an
/// 8-byte header, in steps of 16, at least [`MIN_STRING_BLOCK`]; none for an empty string).
fn string_block(capacity: usize) -> usize {
    if capacity == 0 {
        0
    } else {
        (capacity + 8).next_multiple_of(16).max(MIN_STRING_BLOCK)
    }
}

/// What a certificate may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProofBudget {
    /// The job's memory budget in MiB (`memory_mb`): half for the df-pn table, half for the
    /// tokens as the result holds them.
    pub memory_mb: u64,
    /// Most bytes of the tree's JSON text (the coordinator's `--max-proof-bytes` is the limit
    /// of a whole certificate, [`crate::proof::MAX_PROOF_BYTES`] by default).
    pub json_bytes: usize,
}

impl ProofBudget {
    /// Bytes of tokens allowed: half the memory budget.
    fn token_bytes(&self) -> usize {
        (self.memory_mb as usize).saturating_mul(1 << 20) / 2
    }
}

/// Why [`build_proof`] gave no certificate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoProof {
    /// A limit or a cancel stopped the builder.
    Stopped(StopReason),
    /// The certificate does not fit its budget: one line naming the limit.
    TooLarge(String),
    /// The claim is false, or the search contradicts itself.
    Failed(String),
}

impl std::fmt::Display for NoProof {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoProof::Stopped(r) => write!(f, "stopped before the proof was built ({})", r.as_str()),
            NoProof::TooLarge(m) | NoProof::Failed(m) => f.write_str(m),
        }
    }
}

/// The proof tree's tokens for `claim` about `root` (see the module doc), within the memory
/// budget of `opts` and [`crate::proof::MAX_PROOF_BYTES`] of JSON.
pub fn build_proof<G: ZeroSum + Hashed>(
    game: &G,
    root: &G::State,
    claim: Claim,
    target: i32,
    opts: &PnOptions,
    ctl: &Control,
) -> Result<Vec<Value>, NoProof> {
    let budget = ProofBudget {
        memory_mb: opts.memory_mb,
        json_bytes: crate::proof::MAX_PROOF_BYTES,
    };
    build_proof_within(game, root, claim, target, opts, budget, ctl)
}

/// [`build_proof`] within `budget`.
pub fn build_proof_within<G: ZeroSum + Hashed>(
    game: &G,
    root: &G::State,
    claim: Claim,
    target: i32,
    opts: &PnOptions,
    budget: ProofBudget,
    ctl: &Control,
) -> Result<Vec<Value>, NoProof> {
    let table = PnOptions {
        memory_mb: (budget.memory_mb / 2).max(1),
        ..*opts
    };
    let mut dfpn = Dfpn::new(game, &table);
    let d = dfpn.decide(root, target, ctl);
    let want = claim == Claim::AtLeast;
    match d.verdict.as_bool() {
        Some(b) if b == want => {}
        Some(_) => return Err(NoProof::Failed("the claim to certify is false".to_string())),
        None => {
            return Err(match ctl.should_stop() {
                Some(r) => NoProof::Stopped(r),
                None => too_large(&budget, 0, 0, "the search for its tree"),
            })
        }
    }
    let mut b = Builder {
        game,
        dfpn,
        ctl,
        want,
        root_side: game.side(root),
        tokens: Vec::new(),
        held: 0,
        json: 0,
        budget,
        moves: Vec::new(),
    };
    b.node(root, 0)?;
    Ok(b.tokens)
}

/// The one-line reason of a certificate over its budget, after `tokens` tokens of `json` bytes.
fn too_large(budget: &ProofBudget, tokens: usize, json: usize, what: &str) -> NoProof {
    let built = if tokens > 0 {
        format!(" (stopped after {tokens} tokens, {json} bytes of JSON)")
    } else {
        String::new()
    };
    if json > budget.json_bytes {
        NoProof::TooLarge(format!(
            "its JSON passes {} bytes, the size limit of a certificate{built}",
            budget.json_bytes
        ))
    } else {
        NoProof::TooLarge(format!(
            "memory limit: {what} needs more than memory_mb={} MiB{built}",
            budget.memory_mb
        ))
    }
}

struct Builder<'a, 'g, G: ZeroSum + Hashed> {
    game: &'g G,
    dfpn: Dfpn<'g, G>,
    ctl: &'a Control,
    want: bool,
    root_side: u8,
    tokens: Vec<Value>,
    /// Bytes the tokens hold (values and their strings' heap blocks).
    held: usize,
    /// Bytes of the tokens' JSON text.
    json: usize,
    budget: ProofBudget,
    /// Per-ply move buffers.
    moves: Vec<Vec<G::Move>>,
}

impl<G: ZeroSum + Hashed> Builder<'_, '_, G> {
    /// Appends a token, counting its bytes; ends the walk past a budget, and polls the stop
    /// flag every [`POLL_TOKENS`] tokens.
    fn push(&mut self, token: Value) -> Result<(), NoProof> {
        let (held, json) = match &token {
            Value::String(s) => (VALUE_BYTES + string_block(s.capacity()), s.len() + 3),
            other => (VALUE_BYTES, other.to_string().len() + 1),
        };
        self.held += held;
        self.json += json;
        self.tokens.push(token);
        if self.held > self.budget.token_bytes() || self.json > self.budget.json_bytes {
            return Err(too_large(
                &self.budget,
                self.tokens.len(),
                self.json,
                "its tree",
            ));
        }
        if self.tokens.len().is_multiple_of(POLL_TOKENS) {
            if let Some(r) = self.ctl.should_stop() {
                return Err(NoProof::Stopped(r));
            }
        }
        Ok(())
    }

    fn node(&mut self, state: &G::State, ply: usize) -> Result<(), NoProof> {
        if self.game.is_terminal(state) {
            return Ok(());
        }
        if self.moves.len() <= ply {
            self.moves.resize_with(ply + 1, Vec::new);
        }
        let mut moves = std::mem::take(&mut self.moves[ply]);
        self.game.legal_moves(state, &mut moves);
        self.game.order_moves(state, &mut moves);
        let r = self.below(state, &moves, ply);
        self.moves[ply] = moves;
        r
    }

    fn below(&mut self, state: &G::State, moves: &[G::Move], ply: usize) -> Result<(), NoProof> {
        let prover_moves = (self.game.side(state) == self.root_side) == self.want;
        if prover_moves {
            for &mv in moves {
                let mut child = state.clone();
                self.game.apply(&mut child, mv);
                match self.dfpn.holds(&child, self.ctl) {
                    Some(h) if h == self.want => {
                        self.push(self.game.format_move(state, mv).into())?;
                        self.push(format!("{:016x}", self.game.hash(&child)).into())?;
                        return self.node(&child, ply + 1);
                    }
                    Some(_) => {}
                    None => {
                        return Err(match self.ctl.should_stop() {
                            Some(r) => NoProof::Stopped(r),
                            None => too_large(
                                &self.budget,
                                self.tokens.len(),
                                self.json,
                                "the search for its tree",
                            ),
                        })
                    }
                }
            }
            Err(NoProof::Failed(format!(
                "no move keeps the claim at '{}' (the decision and the table disagree)",
                self.game.format_position(state)
            )))
        } else {
            self.push(Value::from(moves.len()))?;
            for &mv in moves {
                self.push(self.game.format_move(state, mv).into())?;
                let mut child = state.clone();
                self.game.apply(&mut child, mv);
                self.node(&child, ply + 1)?;
            }
            Ok(())
        }
    }
}
