//! Databases in search: [`WithTables`] wraps a game so that every state the databases can
//! answer for is terminal, with the database value as its terminal value. Every zero-sum kernel
//! (plain alpha-beta, the engine, the proof-number family) then reads exact values at covered
//! positions without knowing about databases.
//!
//! Contract: a state is cut only where [`TableProbe::probe_board`] says the databases give its
//! exact value (`offset + entry`) and the board's database is loaded; everywhere else the
//! wrapper is the game itself, so values are those of the game. States the game itself ends
//! keep the game's value.

use super::Tables;
use crate::model::{Game, Hashed, NotationError, TableProbe, Tactics, Turn, ZeroSum};
use std::sync::Arc;

/// A game whose covered states are answered from databases; see the module doc.
#[derive(Clone, Debug)]
pub struct WithTables<G> {
    game: G,
    tables: Arc<Tables>,
}

impl<G: TableProbe> WithTables<G> {
    /// `game` with `tables` (the databases `0..tables.len()` of that game).
    pub fn new(game: G, tables: Arc<Tables>) -> Self {
        WithTables { game, tables }
    }

    /// The wrapped game.
    pub fn inner(&self) -> &G {
        &self.game
    }

    /// The exact value of `state` from the databases, when they cover it.
    #[inline]
    pub fn lookup(&self, state: &G::State) -> Option<i32> {
        let (board, offset) = self.game.probe_board(state)?;
        let (db, index) = self.game.rank(&board);
        self.tables.value(db, index).map(|v| offset + v)
    }
}

impl<G: TableProbe> Game for WithTables<G> {
    type State = G::State;
    type Move = <G as Game>::Move;

    fn name(&self) -> &'static str {
        self.game.name()
    }
    fn num_players(&self) -> usize {
        2
    }
    fn initial_state(&self) -> Self::State {
        self.game.initial_state()
    }
    #[inline]
    fn turn(&self, s: &Self::State) -> Turn {
        match self.game.turn(s) {
            Turn::Terminal => Turn::Terminal,
            _ if self.lookup(s).is_some() => Turn::Terminal,
            t => t,
        }
    }
    fn legal_moves(&self, s: &Self::State, moves: &mut Vec<Self::Move>) {
        if self.lookup(s).is_some() {
            moves.clear();
        } else {
            self.game.legal_moves(s, moves);
        }
    }
    #[inline]
    fn apply(&self, s: &mut Self::State, mv: Self::Move) {
        self.game.apply(s, mv);
    }
    fn returns(&self, s: &Self::State, out: &mut [f64]) {
        let v = self.terminal_value(s) as f64;
        let side = self.game.side(s) as usize;
        out[side] = v;
        out[1 - side] = -v;
    }
    fn parse_position(&self, text: &str) -> Result<Self::State, NotationError> {
        self.game.parse_position(text)
    }
    fn format_position(&self, s: &Self::State) -> String {
        self.game.format_position(s)
    }
    fn parse_move(&self, s: &Self::State, text: &str) -> Result<Self::Move, NotationError> {
        if self.is_terminal(s) {
            return Err(
                NotationError::new("the databases decide this position").with_fragment(text.trim())
            );
        }
        self.game.parse_move(s, text)
    }
    fn format_move(&self, s: &Self::State, mv: Self::Move) -> String {
        self.game.format_move(s, mv)
    }
    fn same_state(&self, a: &Self::State, b: &Self::State) -> bool {
        self.game.same_state(a, b)
    }
}

impl<G: TableProbe> ZeroSum for WithTables<G> {
    #[inline]
    fn side(&self, s: &Self::State) -> u8 {
        self.game.side(s)
    }
    #[inline]
    fn terminal_value(&self, s: &Self::State) -> i32 {
        if self.game.is_terminal(s) {
            ZeroSum::terminal_value(&self.game, s)
        } else {
            self.lookup(s)
                .expect("terminal_value of a state that is not terminal")
        }
    }
    fn value_bounds(&self, s: &Self::State) -> (i32, i32) {
        self.game.value_bounds(s)
    }
    fn value_to_json(&self, s: &Self::State, value: i32) -> serde_json::Value {
        self.game.value_to_json(s, value)
    }
    fn order_moves(&self, s: &Self::State, moves: &mut [Self::Move]) {
        self.game.order_moves(s, moves);
    }
    fn evaluate(&self, s: &Self::State) -> i32 {
        self.game.evaluate(s)
    }
}

impl<G: TableProbe + Hashed> Hashed for WithTables<G> {
    const HASH_IS_KEY: bool = G::HASH_IS_KEY;
    #[inline]
    fn hash(&self, s: &Self::State) -> u64 {
        self.game.hash(s)
    }
}

impl<G: TableProbe> Tactics for WithTables<G> {}
