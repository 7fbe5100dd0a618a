use super::adapt::{adapt, record_sequence, AdaptScratch, LayerWalk, Marks};
use super::*;
use crate::games::weakschur::WeakSchur;
use crate::model::{Game, MoveCodes, NotationError, Turn};

/// Weak Schur with sparse codes: the same game through the hash-map policy.
struct Sparse(WeakSchur);
impl Game for Sparse {
    type State = <WeakSchur as Game>::State;
    type Move = u8;
    fn name(&self) -> &'static str {
        "sparse"
    }
    fn num_players(&self) -> usize {
        1
    }
    fn initial_state(&self) -> Self::State {
        self.0.initial_state()
    }
    fn turn(&self, s: &Self::State) -> Turn {
        self.0.turn(s)
    }
    fn legal_moves(&self, s: &Self::State, m: &mut Vec<u8>) {
        self.0.legal_moves(s, m)
    }
    fn apply(&self, s: &mut Self::State, m: u8) {
        self.0.apply(s, m)
    }
    fn returns(&self, s: &Self::State, o: &mut [f64]) {
        self.0.returns(s, o)
    }
    fn parse_position(&self, t: &str) -> Result<Self::State, NotationError> {
        self.0.parse_position(t)
    }
    fn format_position(&self, s: &Self::State) -> String {
        self.0.format_position(s)
    }
    fn parse_move(&self, s: &Self::State, t: &str) -> Result<u8, NotationError> {
        self.0.parse_move(s, t)
    }
    fn format_move(&self, s: &Self::State, m: u8) -> String {
        self.0.format_move(s, m)
    }
    fn same_state(&self, a: &Self::State, b: &Self::State) -> bool {
        self.0.same_state(a, b)
    }
}
impl MoveCodes for Sparse {
    fn code(&self, s: &Self::State, m: u8) -> u64 {
        // Spread over 64 bits (an odd multiplier is a bijection), u64::MAX included for code 0.
        self.0
            .code(s, m)
            .wrapping_mul(0xD6E8_FEB8_6659_FD93)
            .wrapping_sub(1)
    }
}
impl SinglePlayer for Sparse {}

fn opts(level: u32, iterations: u32, seed: u64) -> NrpaOptions {
    NrpaOptions {
        level,
        iterations,
        seed,
        ..NrpaOptions::default()
    }
}

fn replay<G: SinglePlayer>(g: &G, moves: &[G::Move]) -> f64 {
    let mut s = g.initial_state();
    let mut legal = Vec::new();
    for &m in moves {
        g.legal_moves(&s, &mut legal);
        assert!(legal.contains(&m));
        g.apply(&mut s, m);
    }
    assert!(g.is_terminal(&s));
    g.score(&s)
}

#[test]
fn adapt_matches_the_seeds_worked_example() {
    // Root a with children b, c, d under a zero policy; the best sequence plays c.
    let mut pol = Policy::new(Some(3));
    let best = Record {
        score: 3.0,
        moves: vec![1u8],
        codes: vec![0, 1, 2],
        starts: vec![0, 3],
        chosen: vec![1],
    };
    adapt(&mut pol, &best, 1.0, &mut AdaptScratch::new(Some(3)));
    assert!((pol.get(1) - 2.0 / 3.0).abs() < 1e-12 && (pol.get(0) + 1.0 / 3.0).abs() < 1e-12);
    let z: f64 = (0..3).map(|c| pol.get(c).exp()).sum();
    // "a-c wird nun mit rund 57,62% gewählt, a-b und a-d mit jeweils 21,19%".
    assert_eq!(format!("{:.4}", pol.get(1).exp() / z), "0.5761");
    assert_eq!(format!("{:.4}", pol.get(0).exp() / z), "0.2119");
    // Rosin's Adapt: a node with one child keeps its weight at 0 (+alpha - alpha * 1).
    let mut pol = Policy::new(None);
    let one = Record {
        score: 0.0,
        moves: vec![0u8],
        codes: vec![u64::MAX],
        starts: vec![0, 1],
        chosen: vec![0],
    };
    adapt(&mut pol, &one, 1.0, &mut AdaptScratch::new(None));
    assert_eq!(pol.get(u64::MAX), 0.0);
}

/// Four items: a (0), b (1), d (3) are legal at the start; c (2) needs a and b; c and d
/// exclude each other. Moves commute, as Morpion's do.
struct Dag;
impl Game for Dag {
    type State = Vec<u8>;
    type Move = u8;
    fn name(&self) -> &'static str {
        "dag"
    }
    fn num_players(&self) -> usize {
        1
    }
    fn initial_state(&self) -> Vec<u8> {
        Vec::new()
    }
    fn turn(&self, s: &Vec<u8>) -> Turn {
        let mut m = Vec::new();
        self.legal_moves(s, &mut m);
        if m.is_empty() {
            Turn::Terminal
        } else {
            Turn::Player(0)
        }
    }
    fn legal_moves(&self, s: &Vec<u8>, m: &mut Vec<u8>) {
        m.clear();
        let has = |x: u8| s.contains(&x);
        for x in 0..4u8 {
            let ok = match x {
                2 => has(0) && has(1) && !has(3),
                3 => !has(2),
                _ => true,
            };
            if ok && !has(x) {
                m.push(x);
            }
        }
    }
    fn apply(&self, s: &mut Vec<u8>, m: u8) {
        s.push(m);
    }
    fn returns(&self, s: &Vec<u8>, o: &mut [f64]) {
        o[0] = s.len() as f64;
    }
    fn parse_position(&self, _t: &str) -> Result<Vec<u8>, NotationError> {
        Ok(Vec::new())
    }
    fn format_position(&self, s: &Vec<u8>) -> String {
        format!("{s:?}")
    }
    fn parse_move(&self, _s: &Vec<u8>, t: &str) -> Result<u8, NotationError> {
        t.parse().map_err(|_| NotationError::new("not a move"))
    }
    fn format_move(&self, _s: &Vec<u8>, m: u8) -> String {
        m.to_string()
    }
    fn same_state(&self, a: &Vec<u8>, b: &Vec<u8>) -> bool {
        a == b
    }
}
impl MoveCodes for Dag {
    fn code(&self, _s: &Vec<u8>, m: u8) -> u64 {
        m as u64
    }
}
impl SinglePlayer for Dag {
    fn code_space(&self) -> Option<usize> {
        Some(4)
    }
}

#[test]
fn layers_adapt_matches_hand_computed_weights() {
    let g = Dag;
    let root = g.initial_state();
    // Best sequence a, b, c.
    let best = record_sequence(&g, &root, &[0, 1, 2]).unwrap();
    let layers = NrpaOptions {
        adapt: AdaptRule::Layers,
        ..NrpaOptions::default()
    };
    for space in [Some(4), None] {
        let mut pol = Policy::new(space);
        let mut x = Adapter::new(&g, &root, &layers);
        x.scratch = AdaptScratch::new(space);
        x.walks.push(LayerWalk::new(&g, &root));
        x.walks[0].marks = Marks::new(space);
        x.adapt(&g, &root, 0, &mut pol, &best);
        // Layer {a, b} at the start (legal a, b, d, p = 1/3): a, b get 1 - 2/3, d -2/3;
        // step b is skipped (played); layer {c} among c, d (p = 1/2): c +1/2, d -1/2.
        let want = [1.0 / 3.0, 1.0 / 3.0, 0.5, -2.0 / 3.0 - 0.5];
        for (c, w) in want.iter().enumerate() {
            assert!((pol.get(c as u64) - w).abs() < 1e-12, "{space:?} code {c}");
        }
        // A second Adapt takes its probabilities from the policy before it.
        let e: Vec<f64> = want.iter().map(|w| w.exp()).collect();
        let z0 = e[0] + e[1] + e[3];
        let z1 = e[2] + e[3];
        let want2 = [
            want[0] + 1.0 - 2.0 * e[0] / z0,
            want[1] + 1.0 - 2.0 * e[1] / z0,
            want[2] + 1.0 - e[2] / z1,
            want[3] - 2.0 * e[3] / z0 - e[3] / z1,
        ];
        x.adapt(&g, &root, 0, &mut pol, &best);
        for (c, w) in want2.iter().enumerate() {
            assert!((pol.get(c as u64) - w).abs() < 1e-12, "{space:?} code {c}");
        }
    }
    // Rosin's Adapt on the same sequence, for contrast: b and d compete at ply 2.
    let mut pol = Policy::new(Some(4));
    let seed = NrpaOptions::default();
    Adapter::new(&g, &root, &seed).adapt(&g, &root, 0, &mut pol, &best);
    let want = [2.0 / 3.0, -1.0 / 3.0 + 0.5, 0.5, -1.0 / 3.0 - 0.5 - 0.5];
    for (c, w) in want.iter().enumerate() {
        assert!((pol.get(c as u64) - w).abs() < 1e-12, "seed code {c}");
    }
}

#[test]
fn layers_adapt_in_every_scheme_is_deterministic() {
    let w = WeakSchur::new(4).unwrap();
    // Weak Schur's codes name the number placed and its part, so each step's layer is the
    // step's own move: the layers Adapt is Rosin's there (as for TSPTW's (from, to)).
    let layers = NrpaOptions {
        adapt: AdaptRule::Layers,
        ..opts(2, 12, 9)
    };
    let a = nrpa(&w, &w.initial_state(), &layers, None, &Control::unlimited()).unwrap();
    let seed = nrpa(
        &w,
        &w.initial_state(),
        &opts(2, 12, 9),
        None,
        &Control::unlimited(),
    );
    assert_eq!(a.checkpoints[0].policy, seed.unwrap().checkpoints[0].policy);
    // Morpion: layers of several moves.
    let g = crate::games::morpion::Morpion::new(crate::games::morpion::Variant::D5);
    let root = g.initial_state();
    let o = NrpaOptions {
        adapt: AdaptRule::Layers,
        ..opts(2, 12, 9)
    };
    let a = nrpa(&g, &root, &o, None, &Control::unlimited()).unwrap();
    let b = nrpa(&g, &root, &o, None, &Control::unlimited()).unwrap();
    assert_eq!((a.score, &a.sequence), (b.score, &b.sequence));
    assert_eq!(replay(&g, &a.sequence), a.score);
    let seed = nrpa(&g, &root, &opts(2, 12, 9), None, &Control::unlimited()).unwrap();
    assert_ne!(a.checkpoints[0].policy, seed.checkpoints[0].policy);
    // Resume from a checkpoint (JSON round trip): the same run; Rosin's Adapt refuses it.
    let part = nrpa(
        &g,
        &root,
        &o,
        None,
        &Control::with_limits(None, Some(12 * 5 + 7)),
    )
    .unwrap();
    let json = part.checkpoints[0].to_json(&g, &root);
    assert_eq!(json["adapt"], "layers");
    let back = Checkpoint::from_json(&g, &root, &json).unwrap();
    assert_eq!(back, part.checkpoints[0]);
    let rest = nrpa(
        &g,
        &root,
        &o,
        Some(vec![back.clone()]),
        &Control::unlimited(),
    )
    .unwrap();
    assert_eq!((rest.score, &rest.sequence), (a.score, &a.sequence));
    assert_eq!(rest.checkpoints[0], a.checkpoints[0]);
    assert!(nrpa(
        &g,
        &root,
        &opts(2, 12, 9),
        Some(vec![back]),
        &Control::unlimited()
    )
    .unwrap_err()
    .contains("adapt=layers"));
    // Level 3, batch 2 on two threads and independent runs: deterministic.
    for (batch, scheme) in [(2, Scheme::Shared), (1, Scheme::Independent)] {
        let p = NrpaOptions {
            threads: 2,
            batch,
            scheme,
            ..NrpaOptions {
                level: 3,
                ..o.clone()
            }
        };
        let x = nrpa(&g, &root, &p, None, &Control::unlimited()).unwrap();
        let y = nrpa(&g, &root, &p, None, &Control::unlimited()).unwrap();
        assert_eq!(
            (x.score, &x.sequence, x.rollouts),
            (y.score, &y.sequence, y.rollouts)
        );
        assert_eq!(replay(&g, &x.sequence), x.score);
    }
}

#[test]
fn hash_policy_agrees_with_dense_table() {
    let mut a = Policy::new(Some(5000));
    let mut b = Policy::new(None);
    for i in 0..5000u64 {
        let c = (i * 7919) % 5000;
        a.add(c, i as f64 * 0.5);
        b.add(c, i as f64 * 0.5);
    }
    for c in 0..5000 {
        assert_eq!(a.get(c), b.get(c));
    }
    assert_eq!(a.entries(), b.entries());
    let g = WeakSchur::new(4).unwrap();
    let x = nrpa(
        &g,
        &g.initial_state(),
        &opts(2, 30, 5),
        None,
        &Control::unlimited(),
    )
    .unwrap();
    let y = nrpa(
        &Sparse(g.clone()),
        &g.initial_state(),
        &opts(2, 30, 5),
        None,
        &Control::unlimited(),
    )
    .unwrap();
    assert_eq!(
        (x.score, &x.sequence, x.rollouts),
        (y.score, &y.sequence, y.rollouts)
    );
}

#[test]
fn fixed_seed_is_deterministic_and_replays() {
    let g = WeakSchur::new(4).unwrap();
    let a = nrpa(
        &g,
        &g.initial_state(),
        &opts(2, 40, 11),
        None,
        &Control::unlimited(),
    )
    .unwrap();
    let b = nrpa(
        &g,
        &g.initial_state(),
        &opts(2, 40, 11),
        None,
        &Control::unlimited(),
    )
    .unwrap();
    assert_eq!(
        (a.score, &a.sequence, a.rollouts),
        (b.score, &b.sequence, b.rollouts)
    );
    assert_eq!(a.rollouts, 40 * 40);
    assert_eq!(replay(&g, &a.sequence), a.score);
    let c = nrpa(
        &g,
        &g.initial_state(),
        &opts(2, 40, 12),
        None,
        &Control::unlimited(),
    )
    .unwrap();
    assert_ne!(a.sequence, c.sequence, "another seed, another search");
}

#[test]
fn nrpa_and_nmcs_find_the_exhaustive_optimum() {
    // WS(2) = 8 and WS(3) = 23 (games::weakschur checks them by exhaustive search).
    for (k, ws) in [(2, 8.0), (3, 23.0)] {
        let g = WeakSchur::new(k).unwrap();
        for seed in 0..3 {
            let o = nrpa(
                &g,
                &g.initial_state(),
                &opts(3, 30, seed),
                None,
                &Control::unlimited(),
            )
            .unwrap();
            assert_eq!(o.score, ws, "nrpa k={k} seed={seed}");
            assert_eq!(replay(&g, &o.sequence), ws);
            let o =
                crate::search::nmcs::nmcs(&g, &g.initial_state(), 3, seed, &Control::unlimited());
            assert_eq!(o.score, ws, "nmcs k={k} seed={seed}");
            assert_eq!(replay(&g, &o.sequence), ws);
        }
    }
}

#[test]
fn nmcs_is_deterministic_and_levels_help() {
    let g = WeakSchur::new(4).unwrap();
    let a = crate::search::nmcs::nmcs(&g, &g.initial_state(), 1, 3, &Control::unlimited());
    let b = crate::search::nmcs::nmcs(&g, &g.initial_state(), 1, 3, &Control::unlimited());
    assert_eq!(
        (a.score, &a.sequence, a.rollouts),
        (b.score, &b.sequence, b.rollouts)
    );
    assert_eq!(replay(&g, &a.sequence), a.score);
    let l0 = crate::search::nmcs::nmcs(&g, &g.initial_state(), 0, 3, &Control::unlimited());
    assert_eq!(l0.rollouts, 1);
    let c = crate::search::nmcs::nmcs(
        &g,
        &g.initial_state(),
        1,
        3,
        &Control::with_limits(None, Some(10)),
    );
    assert_eq!(c.rollouts, 10);
    assert_eq!(c.stopped, Some(StopReason::Nodes));
    assert_eq!(replay(&g, &c.sequence), c.score);
}

#[test]
fn checkpoint_resume_continues_exactly() {
    let g = WeakSchur::new(4).unwrap();
    let root = g.initial_state();
    let o = opts(2, 12, 9);
    let full = nrpa(&g, &root, &o, None, &Control::unlimited()).unwrap();
    // Stop part-way (a rollout limit), write the checkpoint as JSON, read it back, resume.
    let part = nrpa(
        &g,
        &root,
        &o,
        None,
        &Control::with_limits(None, Some(12 * 5 + 7)),
    )
    .unwrap();
    assert_eq!(part.stopped, Some(StopReason::Nodes));
    assert_eq!(part.checkpoints[0].done, 5);
    let json = part.checkpoints[0].to_json(&g, &root);
    let back = Checkpoint::from_json(&g, &root, &json).unwrap();
    assert_eq!(back, part.checkpoints[0]);
    let rest = nrpa(&g, &root, &o, Some(vec![back]), &Control::unlimited()).unwrap();
    assert_eq!((rest.score, &rest.sequence), (full.score, &full.sequence));
    assert_eq!(rest.checkpoints[0], full.checkpoints[0]);
    // Options must match.
    let other = opts(2, 13, 9);
    let c = Checkpoint::from_json(&g, &root, &json).unwrap();
    assert!(
        nrpa(&g, &root, &other, Some(vec![c]), &Control::unlimited())
            .unwrap_err()
            .contains("checkpoint was made")
    );
}

#[test]
fn parallel_schemes() {
    let g = WeakSchur::new(4).unwrap();
    let root = g.initial_state();
    let seq = nrpa(&g, &root, &opts(2, 20, 4), None, &Control::unlimited()).unwrap();
    // Shared scheme, batch 1 on two threads: the sequential algorithm exactly.
    let o = NrpaOptions {
        threads: 2,
        ..opts(2, 20, 4)
    };
    let p = nrpa(&g, &root, &o, None, &Control::unlimited()).unwrap();
    assert_eq!((p.score, &p.sequence), (seq.score, &seq.sequence));
    // Batch 2: deterministic whatever the thread timing, same budget of rollouts.
    let o = NrpaOptions {
        threads: 2,
        batch: 2,
        ..opts(2, 20, 4)
    };
    let a = nrpa(&g, &root, &o, None, &Control::unlimited()).unwrap();
    let b = nrpa(&g, &root, &o, None, &Control::unlimited()).unwrap();
    assert_eq!(
        (a.score, &a.sequence, a.rollouts),
        (b.score, &b.sequence, b.rollouts)
    );
    assert_eq!(a.rollouts, seq.rollouts);
    assert_eq!(replay(&g, &a.sequence), a.score);
    // Independent runs: run 0 is the sequential run, so two threads are at least as good.
    let o = NrpaOptions {
        threads: 2,
        scheme: Scheme::Independent,
        ..opts(2, 20, 4)
    };
    let i = nrpa(&g, &root, &o, None, &Control::unlimited()).unwrap();
    assert!(i.score >= seq.score);
    assert_eq!(i.rollouts, 2 * seq.rollouts);
    assert_eq!(i.checkpoints.len(), 2);
}

#[test]
fn stop_at_and_time_limit_stop_early() {
    let g = WeakSchur::new(4).unwrap();
    let o = NrpaOptions {
        stop_at: Some(40.0),
        ..opts(3, 100, 1)
    };
    let r = nrpa(&g, &g.initial_state(), &o, None, &Control::unlimited()).unwrap();
    assert!(r.score >= 40.0 && r.stopped.is_none() && r.rollouts < 100 * 100 * 100);
    let t = Control::with_limits(Some(Duration::from_millis(100)), None);
    let r = nrpa(&g, &g.initial_state(), &opts(5, 100, 1), None, &t).unwrap();
    assert_eq!(r.stopped, Some(StopReason::Time));
    assert_eq!(replay(&g, &r.sequence), r.score);
    assert!(!r.history.is_empty() && r.history.last().unwrap().2 == r.score);
}
