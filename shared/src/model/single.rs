//! Single-player optimisation games (NMCS, NRPA): the score of a terminal state and the few
//! extras a policy-learning kernel can use.
//!
//! Contract: the score is `returns()[0]` of a terminal state (the only player is player 0); higher
//! is better. A single-player game has `num_players() == 1` and every non-terminal state is
//! `Turn::Player(0)`. Move codes come from [`super::MoveCodes`]; this trait only adds what makes a
//! policy table fast ([`SinglePlayer::code_space`]) and how a whole sequence is written so that it
//! can be fed back as a position ([`SinglePlayer::sequence_text`]).

use super::MoveCodes;

/// A single-player game with a score to maximise.
pub trait SinglePlayer: MoveCodes {
    /// The score of a terminal state (higher is better). Default: `returns()[0]`.
    fn score(&self, state: &Self::State) -> f64 {
        let mut out = [0.0];
        self.returns(state, &mut out);
        out[0]
    }

    /// When every code is below a small bound `n`, `Some(n)`: kernels may then keep their policy
    /// in a dense table of `n` weights instead of a hash map. `None` (the default) means codes
    /// are arbitrary 64-bit values.
    fn code_space(&self) -> Option<usize> {
        None
    }

    /// The legal moves of `state` into `moves` (cleared first, as [`crate::model::Game::legal_moves`]
    /// fills it) and their codes appended to `codes` in the same order: what a rollout needs at
    /// every ply, in one pass for games that override it. Default: `legal_moves`, then `code`
    /// per move.
    #[inline]
    fn legal_moves_and_codes(
        &self,
        state: &Self::State,
        moves: &mut Vec<Self::Move>,
        codes: &mut Vec<u64>,
    ) {
        self.legal_moves(state, moves);
        codes.extend(moves.iter().map(|&m| self.code(state, m)));
    }

    /// Plays `moves[i]`, where `moves` is what [`SinglePlayer::legal_moves_and_codes`] (or
    /// `legal_moves`) just listed for `state`: games that keep their legal moves with extra
    /// data may play the `i`-th one without decoding the move. Default: `apply(moves[i])`.
    #[inline]
    fn apply_legal(&self, state: &mut Self::State, moves: &[Self::Move], i: usize) {
        self.apply(state, moves[i]);
    }

    /// Whether moves of one played sequence that are all legal in a position (on the way through
    /// that sequence's moves in another order) stay legal as the others are played: then the
    /// NRPA layers Adapt plays a layer without re-checking each move's legality. Default `false`
    /// (the kernel checks); Morpion's moves of one sequence place distinct dots on compatible
    /// lines, so it answers `true`.
    fn sequence_moves_commute(&self) -> bool {
        false
    }

    /// A text that `parse_position` reads back as the state reached by playing `moves` from
    /// `root` (which was itself parsed from a position text or is the start). Default: the
    /// position of the final state, which is right for games whose notation is the move list
    /// from the start.
    fn sequence_text(&self, root: &Self::State, moves: &[Self::Move]) -> String {
        let mut s = root.clone();
        for &mv in moves {
            self.apply(&mut s, mv);
        }
        self.format_position(&s)
    }
}

/// Checks the single-player conventions along random games: one player, terminal scores finite,
/// codes stable (a move's code computed twice is equal) and inside `code_space`, and
/// `sequence_text` replays to the same state and score. Panics with a message naming the game.
pub fn check_single_player<G: SinglePlayer>(
    game: &G,
    start: &G::State,
    playouts: usize,
    seed: u64,
) {
    use rand::{Rng, SeedableRng};
    super::battery::assert_players(game, 1, "a single-player game has one player");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut moves = Vec::new();
    for _ in 0..playouts {
        let mut s = start.clone();
        let mut seq = Vec::new();
        loop {
            game.legal_moves(&s, &mut moves);
            if moves.is_empty() {
                assert!(
                    game.is_terminal(&s),
                    "{}: non-terminal state without moves",
                    game.name()
                );
                break;
            }
            assert_eq!(
                game.turn(&s),
                super::Turn::Player(0),
                "{}: turn is not player 0",
                game.name()
            );
            let mut codes: Vec<u64> = moves.iter().map(|&m| game.code(&s, m)).collect();
            for (&m, &c) in moves.iter().zip(&codes) {
                assert_eq!(
                    game.code(&s, m),
                    c,
                    "{}: code of {m:?} is not stable",
                    game.name()
                );
                if let Some(n) = game.code_space() {
                    assert!(
                        (c as usize) < n,
                        "{}: code {c} outside code space {n}",
                        game.name()
                    );
                }
            }
            codes.sort_unstable();
            codes.dedup();
            assert_eq!(
                codes.len(),
                moves.len(),
                "{}: two legal moves share a code",
                game.name()
            );
            let mv = moves[rng.gen_range(0..moves.len())];
            seq.push(mv);
            game.apply(&mut s, mv);
        }
        let score = game.score(&s);
        assert!(score.is_finite(), "{}: score is not finite", game.name());
        let text = game.sequence_text(start, &seq);
        let back = game
            .parse_position(&text)
            .unwrap_or_else(|e| panic!("{}: sequence text does not parse: {e}", game.name()));
        assert!(
            game.same_state(&back, &s),
            "{}: sequence text replays to another state",
            game.name()
        );
        assert_eq!(
            game.score(&back),
            score,
            "{}: sequence text replays to another score",
            game.name()
        );
    }
}
