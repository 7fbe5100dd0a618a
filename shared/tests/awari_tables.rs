//! The `tables=NAME` option of alpha-beta and the proof-number algorithms on Awari, through the
//! same path as `gamesolver solve` (`registry::prepare`, `plan::run_local`): the databases of
//! 0..=4 stones are written to a temporary data folder (this test binary's own
//! `GAMESOLVER_DATA`), and positions of 6 stones, which they do not cover, are solved with them
//! by every algorithm: the value must be the 6-stone database's (built in memory as the
//! reference; the retrograde tests check the databases against plain minimax), and alpha-beta
//! without the databases must find the same value with more nodes.
//!
//! Exact search on Awari is only feasible where every line soon captures or ends: a position
//! repeats only while no stone is captured, so the search state carries the boards since the
//! last capture, and long capture-free play is a tree no table folds. The positions solved are
//! therefore drawn from the 6-stone database and kept when alpha-beta with the databases
//! finishes within a node budget (most do); every other run gets a node limit too, so that a
//! regression fails with a message instead of running forever.

use gamesolver_shared::games::awari::Awari;
use gamesolver_shared::model::{Game, Retrograde};
use gamesolver_shared::plan::run_local;
use gamesolver_shared::registry::prepare;
use gamesolver_shared::search::retrograde::{build_up_to, store, Tables};
use gamesolver_shared::search::Control;
use gamesolver_shared::wire::{JobResult, JobSpec};

/// Databases 0..=TOP are written as the set `small`.
const TOP: usize = 4;
/// Stones of the positions solved.
const STONES: usize = 6;
/// Node budget of the run that picks a position (alpha-beta with the databases).
const PICK_NODES: u64 = 200_000;
/// Node limit of alpha-beta without the databases (it is only compared where it finishes).
const PLAIN_NODES: u64 = 1_000_000;
/// Node limit of every other run (far above what the picked positions need).
const RUN_NODES: u64 = 20_000_000;

fn data_folder() -> (std::path::PathBuf, Tables) {
    let dir = std::env::temp_dir().join(format!("gs-awari-tables-{}", std::process::id()));
    // One test function sets the folder before anything reads it.
    std::env::set_var("GAMESOLVER_DATA", &dir);
    let g = Awari::default();
    let mut t = Tables::new();
    build_up_to(&g, &mut t, TOP);
    store::write_tables(&dir.join("tables").join("small"), &g.table_tag(), &t).unwrap();
    build_up_to(&g, &mut t, STONES);
    (dir, t)
}

fn run_limited(
    position: &str,
    algorithm: &str,
    options: &[(&str, &str)],
    nodes: u64,
) -> Result<JobResult, String> {
    let job = JobSpec::new("awari", position, algorithm).with_options(options);
    let prepared = prepare(&job).map_err(|e| e.to_string())?;
    let control = Control::with_limits(None, Some(nodes));
    run_local(prepared.as_ref(), &control).map_err(|e| e.to_string())
}

fn run(position: &str, algorithm: &str, options: &[(&str, &str)]) -> Result<JobResult, String> {
    run_limited(position, algorithm, options, RUN_NODES)
}

/// Whether a limit stopped the run.
fn stopped(r: &JobResult) -> bool {
    r.extra.to_map().contains_key("stopped") || r.value.is_null()
}

#[test]
fn tables_option_agrees_with_plain_search_and_refuses_bad_names() {
    let (dir, reference) = data_folder();
    let g = Awari::default();
    let len = g.db_len(STONES);
    let mut values = std::collections::BTreeSet::new();
    let (mut tried, mut solved) = (0u64, 0usize);
    let (mut plain_nodes, mut table_nodes) = (0u64, 0u64);
    while solved < 12 {
        assert!(
            tried < 400,
            "only {solved} of {tried} positions solved within the budget"
        );
        let i = (tried * 7919 + 13) % len;
        tried += 1;
        let p = g.format_position(&g.state_of(g.unrank(STONES, i)));
        let want = reference.db(STONES)[i as usize] as i64;
        let pick = run_limited(&p, "alphabeta", &[("tables", "small")], PICK_NODES).unwrap();
        if stopped(&pick) {
            continue;
        }
        solved += 1;
        values.insert(want);
        for algorithm in ["alphabeta", "pns", "dfpn", "pn2", "pdspn"] {
            let r = run(&p, algorithm, &[("tables", "small")]).unwrap();
            assert!(
                !stopped(&r),
                "{algorithm} {p}: not solved in {RUN_NODES} nodes"
            );
            assert_eq!(r.value, serde_json::json!(want), "{algorithm} {p}");
        }
        // The same search without the databases, where it finishes: same value, more nodes.
        let plain = run_limited(&p, "alphabeta", &[], PLAIN_NODES).unwrap();
        if !stopped(&plain) {
            assert_eq!(plain.value, serde_json::json!(want), "plain alphabeta {p}");
            assert!(
                plain.nodes >= pick.nodes,
                "{p}: {} < {}",
                plain.nodes,
                pick.nodes
            );
            plain_nodes += plain.nodes;
            table_nodes += pick.nodes;
        }
        for (algorithm, target) in [("alphabeta", want), ("pns", want + 1), ("dfpn", want)] {
            let t = target.to_string();
            let r = run(&p, algorithm, &[("tables", "small"), ("target", &t)]).unwrap();
            let stop = r.extra.to_map().get("stopped").cloned();
            assert!(
                stop.is_none(),
                "{algorithm} {p} target {target}: stopped {stop:?}"
            );
            assert_eq!(
                r.extra.to_map()["proved"],
                serde_json::json!(want >= target),
                "{algorithm} {p} target {target}"
            );
        }
    }
    assert!(values.len() >= 3, "values {values:?}");
    assert!(
        plain_nodes > table_nodes,
        "plain {plain_nodes} nodes, with the databases {table_nodes}"
    );
    eprintln!(
        "{solved} of {tried} positions; where plain alpha-beta finished: {plain_nodes} nodes, with the databases {table_nodes}"
    );

    let err = |p: &str, alg: &str, opts: &[(&str, &str)]| run(p, alg, opts).unwrap_err();
    let p = "1,1,1,1,1,1,0,0,0,0,0,0";
    assert!(err(p, "alphabeta", &[("tables", "../small")]).contains("tables"));
    assert!(err(p, "alphabeta", &[("tables", "/etc")]).contains("tables"));
    assert!(err(p, "alphabeta", &[("tables", "missing")]).contains("no databases 'missing'"));
    assert!(err(p, "minimax", &[("tables", "small")]).contains("'tables' is for alphabeta"));
    let c4 = JobSpec::new("connect4", "", "alphabeta").with_options(&[("tables", "small")]);
    let e = prepare(&c4)
        .err()
        .expect("connect4 has no databases")
        .to_string();
    assert!(e.contains("no endgame databases"), "{e}");
    // The five-pit board has no set of that name (its files carry another tag).
    let job = JobSpec::new("awari", "1,1,1,1,1,1,1,1,1,1", "alphabeta")
        .with_params(&[("pits", "5")])
        .with_options(&[("tables", "small")]);
    assert!(prepare(&job).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}
