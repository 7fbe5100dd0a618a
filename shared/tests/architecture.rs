//! Arrows point down: no import circles among the library's modules (nor among the server's,
//! the worker's and the end-to-end crate's).
//!
//! Reads every file under `shared/src`, collects the module paths it names (`use crate::...`,
//! `use super::...`, and `crate::`/`super::` paths in code), and builds two graphs:
//!
//! - top-level modules (`model`, `games`, `search`, `plan`, `registry`, `proof`, `viz`, `wire`);
//! - top-level modules and their direct submodules (`registry::pn`, `search::pns`, ...). A root
//!   file (`registry.rs`, `search/mod.rs`) is the face of its module: the edges between it and its
//!   own submodules (declaring, re-exporting and dispatching to them; submodules reading the
//!   types it defines) are not counted, every other edge is.
//!
//! Test code is left out: files named `tests.rs` or under a `tests/` folder, and each item behind
//! a `#[cfg(test)]` (the rest of the file is read). Comments are left out, so doc links do not
//! count. `super::` inside an inline `mod` block is read as the file's own `super::`.
//!
//! A last test reads every `.rs` file of the workspace (shared, server, worker, tests) and bounds
//! its module header to [`MAX_HEADER_LINES`], apart from the shrinking [`LONG_HEADERS`].
//!
//! Run it with `cargo test --release -p gamesolver-shared --test architecture`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The library's top-level modules.
const TOP: &[&str] = &[
    "model", "games", "search", "plan", "registry", "proof", "viz", "wire",
];

/// Circles among direct submodules that are still to be broken, each as its members in sorted
/// order. The test fails on any circle not listed and on a listed one that no longer exists, so
/// this list can only shrink.
const KNOWN_CIRCLES: &[&[&str]] = &[];

type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("readable source folder")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "tests") {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|e| e == "rs")
            && p.file_name().is_some_and(|n| n != "tests.rs")
        {
            out.push(p);
        }
    }
}

/// The module path of a file: `registry/pn.rs` is `[registry, pn]`, `search/mod.rs` is
/// `[search]`.
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src_dir()).expect("under src");
    let mut segs: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if segs.last().is_some_and(|s| s == "mod") {
        segs.pop();
    }
    segs
}

/// The direct submodules of each top-level module, from the folder layout.
fn submodules() -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for top in TOP {
        let mut subs = BTreeSet::new();
        if let Ok(rd) = std::fs::read_dir(src_dir().join(top)) {
            for e in rd {
                let p = e.expect("entry").path();
                let stem = p.file_stem().expect("name").to_string_lossy().into_owned();
                if stem != "mod" && (p.is_dir() || p.extension().is_some_and(|x| x == "rs")) {
                    subs.insert(stem);
                }
            }
        }
        out.insert(top.to_string(), subs);
    }
    out
}

/// The code of a file without comments and without its test items: an item behind a
/// `#[cfg(test)]` that starts a line (a `mod tests { ... }`, a test-only function or `use`) is
/// left out up to its closing brace or its semicolon, and reading goes on after it. Strings and
/// character literals are kept, and their braces do not count.
fn code_of(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let at = |i: usize, s: &str| s.chars().enumerate().all(|(k, x)| c.get(i + k) == Some(&x));
    let ident = |i: Option<usize>| i.and_then(|i| c.get(i)).is_some_and(|&x| is_ident(x));
    let mut out = String::new();
    // The brace depth at which the test item being left out ends.
    let mut test: Option<usize> = None;
    let (mut depth, mut i, mut line_start) = (0usize, 0usize, true);
    while i < c.len() {
        let ch = c[i];
        if line_start && ch.is_whitespace() && ch != '\n' {
            i += 1;
            continue;
        }
        if line_start && test.is_none() && at(i, "#[cfg(test)]") {
            test = Some(depth);
            i += "#[cfg(test)]".len();
            line_start = false;
            continue;
        }
        line_start = ch == '\n';
        let from = i;
        if at(i, "//") {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
            continue;
        } else if at(i, "/*") {
            i += 2;
            while i < c.len() && !at(i, "*/") {
                i += 1;
            }
            i += 2;
            continue;
        } else if ch == 'r'
            && (!ident(i.checked_sub(1)) || (c[i - 1] == 'b' && !ident(i.checked_sub(2))))
            && {
                let hashes = c[i + 1..].iter().take_while(|&&x| x == '#').count();
                c.get(i + 1 + hashes) == Some(&'"')
            }
        {
            // A raw string: r"...", r#"..."#.
            let hashes = c[i + 1..].iter().take_while(|&&x| x == '#').count();
            let close: String = std::iter::once('"')
                .chain("#".repeat(hashes).chars())
                .collect();
            i += 2 + hashes;
            while i < c.len() && !at(i, &close) {
                i += 1;
            }
            i += close.len();
        } else if ch == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if ch == '\'' && c.get(i + 1) == Some(&'\\') {
            i += 2;
            while i < c.len() && c[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else if ch == '\'' && c.get(i + 2) == Some(&'\'') {
            i += 3;
        } else {
            i += 1;
            match (ch, test) {
                ('{' | '[' | '(', _) => depth += 1,
                ('}', Some(d)) if depth == d + 1 => {
                    depth -= 1;
                    test = None;
                    continue;
                }
                ('}' | ']' | ')', _) => depth = depth.saturating_sub(1),
                (';', Some(d)) if depth == d => {
                    test = None;
                    continue;
                }
                _ => {}
            }
        }
        let i_end = i.min(c.len());
        if test.is_none() {
            out.extend(&c[from..i_end]);
        } else {
            out.extend(c[from..i_end].iter().filter(|&&x| x == '\n'));
        }
    }
    out
}

/// Splits a `use` tree (`crate::a::{b, c::{d, e}}`) into its full paths.
fn expand_use(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let prefix = &tree[..open];
    let body = &tree[open + 1..tree.rfind('}').expect("balanced use tree")];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&body[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand_use(&format!("{prefix}{p}")))
        .collect()
}

/// Every path starting with `crate::`, `super::` or `self::` in `code`: the trees of `use`
/// items and the paths written in expressions and types.
fn paths_in(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("use ") {
        let before_ok = i == 0 || !is_ident(rest.as_bytes()[i - 1] as char);
        let after = &rest[i + 4..];
        if before_ok {
            if let Some(end) = after.find(';') {
                out.extend(expand_use(&after[..end]));
            }
        }
        rest = after;
    }
    let bytes = code.as_bytes();
    for start in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(i) = code[from..].find(start) {
            let at = from + i;
            from = at + start.len();
            if at > 0 && is_ident(bytes[at - 1] as char) {
                continue;
            }
            let end = code[at..]
                .find(|c: char| !(is_ident(c) || c == ':'))
                .map_or(code.len(), |e| at + e);
            out.push(code[at..end].trim_end_matches(':').to_string());
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The node a resolved path lands in: `top::sub` when its second segment is a direct
/// submodule, else `top`; `None` outside the library's modules (`std`, external crates).
fn node_of(segs: &[String], subs: &BTreeMap<String, BTreeSet<String>>) -> Option<String> {
    let top = segs.first()?;
    let children = subs.get(top)?;
    match segs.get(1) {
        Some(s) if children.contains(s) => Some(format!("{top}::{s}")),
        _ => Some(top.clone()),
    }
}

/// The graph of direct submodules (see the module doc); edge labels are the files.
fn submodule_graph() -> Graph {
    let subs = submodules();
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    let mut graph = Graph::new();
    for file in files {
        let module = module_of(&file);
        let Some(from) = node_of(&module, &subs) else {
            continue; // lib.rs
        };
        let text = std::fs::read_to_string(&file).expect("readable source");
        for path in paths_in(&code_of(&text)) {
            let segs: Vec<String> = path.split("::").map(str::to_string).collect();
            let resolved: Vec<String> = match segs[0].as_str() {
                "crate" => segs[1..].to_vec(),
                "self" => module.iter().cloned().chain(segs[1..].to_vec()).collect(),
                "super" => {
                    let ups = segs.iter().take_while(|s| *s == "super").count();
                    let keep = module.len().saturating_sub(ups);
                    module[..keep]
                        .iter()
                        .cloned()
                        .chain(segs[ups..].to_vec())
                        .collect()
                }
                _ => continue,
            };
            let Some(to) = node_of(&resolved, &subs) else {
                continue;
            };
            let top = |n: &str| n.split("::").next().unwrap_or_default().to_string();
            // A root file and its own submodules: wiring, not a dependency.
            let wiring = top(&from) == top(&to) && (!from.contains("::") || !to.contains("::"));
            if to != from && !wiring {
                let rel = file.strip_prefix(src_dir()).expect("under src");
                graph
                    .entry(from.clone())
                    .or_default()
                    .entry(to)
                    .or_default()
                    .insert(rel.display().to_string());
            }
        }
    }
    graph
}

/// The graph collapsed to top-level modules (every edge counts, root files included).
fn top_graph() -> Graph {
    let subs = submodules();
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    let mut graph = Graph::new();
    for file in files {
        let module = module_of(&file);
        let Some(from) = module.first().filter(|m| subs.contains_key(*m)) else {
            continue;
        };
        let text = std::fs::read_to_string(&file).expect("readable source");
        for path in paths_in(&code_of(&text)) {
            let segs: Vec<&str> = path.split("::").collect();
            let to = match segs[0] {
                "crate" => segs.get(1).copied(),
                _ => continue, // self:: and super:: stay inside the top-level module
            };
            if let Some(to) = to.filter(|t| subs.contains_key(*t) && *t != from) {
                let rel = file.strip_prefix(src_dir()).expect("under src");
                graph
                    .entry(from.clone())
                    .or_default()
                    .entry(to.to_string())
                    .or_default()
                    .insert(rel.display().to_string());
            }
        }
    }
    graph
}

/// The strongly connected components with more than one node (Tarjan), each sorted.
fn circles(graph: &Graph) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(out) = s.graph.get(v) {
            for w in out.keys() {
                let w = w.as_str();
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let lw = s.low[w];
                    let lv = s.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if s.on_stack.contains(w) {
                    let iw = s.index[w];
                    let lv = s.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = s.stack.pop().expect("on stack");
                s.on_stack.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.found.push(comp);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    let nodes: BTreeSet<&str> = graph
        .iter()
        .flat_map(|(a, out)| std::iter::once(a.as_str()).chain(out.keys().map(String::as_str)))
        .collect();
    for v in nodes {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.found.sort();
    s.found
}

/// The edges inside a circle, one line each with the files that make them.
fn describe(graph: &Graph, circle: &[String]) -> String {
    let mut lines = vec![format!("circle: {}", circle.join(" <-> "))];
    for a in circle {
        for (b, files) in graph.get(a).into_iter().flatten() {
            if circle.contains(b) {
                let files: Vec<&str> = files.iter().map(String::as_str).collect();
                lines.push(format!("  {a} -> {b} ({})", files.join(", ")));
            }
        }
    }
    lines.join("\n")
}

#[test]
fn top_level_modules_have_no_import_circles() {
    let graph = top_graph();
    assert!(
        graph.contains_key("registry") && graph["registry"].contains_key("plan"),
        "the reader sees the registry use the planner: {graph:?}"
    );
    let found = circles(&graph);
    let text: Vec<String> = found.iter().map(|c| describe(&graph, c)).collect();
    assert!(found.is_empty(), "{}", text.join("\n"));
}

#[test]
fn direct_submodules_have_no_new_import_circles() {
    let graph = submodule_graph();
    let found = circles(&graph);
    let known: Vec<Vec<String>> = KNOWN_CIRCLES
        .iter()
        .map(|c| c.iter().map(|s| s.to_string()).collect())
        .collect();
    let new: Vec<String> = found
        .iter()
        .filter(|c| !known.contains(c))
        .map(|c| describe(&graph, c))
        .collect();
    assert!(new.is_empty(), "{}", new.join("\n"));
    for k in &known {
        assert!(
            found.contains(k),
            "{k:?} is no longer a circle: take it off KNOWN_CIRCLES (found: {found:?})"
        );
    }
}

/// The graph of one crate's top-level modules (a file `x.rs` or a folder `x/`; the roots
/// `lib.rs` and `main.rs` declare them and are left out): an edge for every `crate::` path in
/// code (comments and doc links do not count).
fn crate_graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    workspace_rust_files(src, &mut files);
    let top = |file: &Path| -> Option<String> {
        let rel = file.strip_prefix(src).expect("under src");
        let first = rel
            .components()
            .next()?
            .as_os_str()
            .to_string_lossy()
            .into_owned();
        let name = first.trim_end_matches(".rs").to_string();
        (name != "lib" && name != "main").then_some(name)
    };
    let modules: BTreeSet<String> = files.iter().filter_map(|f| top(f)).collect();
    let mut graph = Graph::new();
    for file in &files {
        let Some(from) = top(file) else { continue };
        let text = std::fs::read_to_string(file).expect("readable source");
        for path in paths_in(&code_of(&text)) {
            let segs: Vec<&str> = path.split("::").collect();
            if segs[0] != "crate" {
                continue;
            }
            if let Some(to) = segs.get(1).filter(|t| modules.contains(**t) && **t != from) {
                let rel = file.strip_prefix(src).expect("under src");
                graph
                    .entry(from.clone())
                    .or_default()
                    .entry(to.to_string())
                    .or_default()
                    .insert(rel.display().to_string());
            }
        }
    }
    graph
}

/// The coordinator's, the worker's and the end-to-end crate's modules import one another in one
/// direction only, as the library's do.
#[test]
fn server_worker_and_e2e_modules_have_no_import_circles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf();
    let server = crate_graph(&root.join("server/src"));
    assert!(
        server.get("routes").is_some_and(|e| e.contains_key("api")),
        "the reader sees the route table use the handlers: {server:?}"
    );
    for dir in ["server/src", "worker/src", "tests/src"] {
        let graph = crate_graph(&root.join(dir));
        let found = circles(&graph);
        let text: Vec<String> = found.iter().map(|c| describe(&graph, c)).collect();
        assert!(found.is_empty(), "{dir}:\n{}", text.join("\n"));
    }
}

/// The reader itself: a planted circle is found and named, a `use` tree is expanded.
#[test]
fn the_reader_finds_a_planted_circle() {
    assert_eq!(
        expand_use("crate::a::{b, c::{d, e}, f}"),
        [
            "crate::a::b",
            "crate::a::c::d",
            "crate::a::c::e",
            "crate::a::f"
        ]
    );
    let code = code_of("use crate::x::{Y, z::W};\n// crate::doc::Link\nfn f() { super::q::r(); }\n#[cfg(test)]\nuse crate::t;");
    assert_eq!(
        paths_in(&code),
        ["crate::x::Y", "crate::x::z::W", "crate::x", "super::q::r"]
    );
    // Code after a test item is read; braces in strings, characters and comments do not count.
    let code = code_of(
        "#[cfg(test)]\nmod tests {\n    fn g() { let c = ['{', '\\'']; let s = \"}\"; let r = r#\"}\"#; }\n    /* } */\n}\nuse crate::after;\n    #[cfg(test)]\n    const N: [u8; 2] = [0; 2];\nfn h() -> &'static str { crate::last::F }",
    );
    // (A `use` path is found twice: as a tree and as a path written out.)
    assert_eq!(
        paths_in(&code),
        ["crate::after", "crate::after", "crate::last::F"]
    );
    let mut g = Graph::new();
    for (a, b) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        g.entry(a.into())
            .or_default()
            .entry(b.into())
            .or_default()
            .insert(format!("{a}.rs"));
    }
    let found = circles(&g);
    assert_eq!(found, [["a", "b", "c"]]);
    assert!(describe(&g, &found[0]).contains("c -> a (c.rs)"));
}

/// Most lines a module header (the leading `//!` lines of a file) may take: what the module is,
/// why it is built this way, and the facts a maintainer must know. Longer arguments go to docs/.
const MAX_HEADER_LINES: usize = 20;

/// Files whose header is still longer than [`MAX_HEADER_LINES`], relative to the workspace root.
/// The test fails on any other over-long header and on a listed file that is now short enough
/// (or gone), so this list can only shrink.
const LONG_HEADERS: &[&str] = &[
    "shared/src/games/othello/mod.rs",
    "shared/src/games/othello/solver.rs",
];

/// The number of `//!` lines a file starts with.
fn header_lines(text: &str) -> usize {
    text.lines().take_while(|l| l.starts_with("//!")).count()
}

/// Every `.rs` file under `dir`, build output left out.
fn workspace_rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("readable folder")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().expect("name").to_string_lossy().into_owned();
        if p.is_dir() {
            if name != "target" && !name.starts_with('.') {
                workspace_rust_files(&p, out);
            }
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
}

#[test]
fn module_headers_are_at_most_twenty_lines() {
    assert_eq!(
        header_lines("//! a\n//!\n//! b\nuse x;\n//! not a header"),
        3
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf();
    let mut files = Vec::new();
    for crate_dir in ["shared", "server", "worker", "tests"] {
        workspace_rust_files(&root.join(crate_dir), &mut files);
    }
    assert!(
        files.len() > 100,
        "the reader sees the workspace: {files:?}"
    );
    let mut long = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable source");
        let n = header_lines(&text);
        if n > MAX_HEADER_LINES {
            let rel = file.strip_prefix(&root).expect("under the root");
            long.insert(rel.to_string_lossy().replace('\\', "/"), n);
        }
    }
    let new: Vec<String> = long
        .iter()
        .filter(|(f, _)| !LONG_HEADERS.contains(&f.as_str()))
        .map(|(f, n)| format!("{f}: {n} header lines"))
        .collect();
    assert!(
        new.is_empty(),
        "module headers over {MAX_HEADER_LINES} lines (say what and why; move long arguments to \
         docs/ and link them by path):\n{}",
        new.join("\n")
    );
    for f in LONG_HEADERS {
        assert!(
            long.contains_key(*f),
            "{f} has a header of at most {MAX_HEADER_LINES} lines now (or is gone): take it off \
             LONG_HEADERS"
        );
    }
}

/// The game modules of `shared/src/games/mod.rs` (`pub mod X;`), without the shared parts (and
/// `module`, the host of uploaded WebAssembly games, which is no game of its own).
fn game_modules(root: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(root.join("shared/src/games/mod.rs")).expect("games/mod.rs");
    text.lines()
        .filter_map(|l| l.strip_prefix("pub mod ")?.strip_suffix(';'))
        .filter(|m| !["data", "entry", "exact", "module"].contains(m))
        .map(str::to_string)
        .collect()
}

/// The concrete game modules that `code` names (`games::connect4::...`, in `use` trees or
/// written out in expressions).
fn games_named(code: &str, games: &[String]) -> BTreeSet<String> {
    let mut paths = paths_in(code);
    let mut from = 0;
    while let Some(i) = code[from..].find("games::") {
        let at = from + i;
        from = at + 7;
        let end = code[at..]
            .find(|c: char| !(is_ident(c) || c == ':'))
            .map_or(code.len(), |e| at + e);
        paths.push(code[at..end].to_string());
    }
    let mut named = BTreeSet::new();
    for path in paths {
        let segs: Vec<&str> = path.split("::").collect();
        for w in segs.windows(2) {
            if w[0] == "games" && games.iter().any(|g| g == w[1]) {
                named.insert(w[1].to_string());
            }
        }
    }
    named
}

/// The catalogue's game names that `code` dispatches on as string literals: a literal that is
/// exactly a game name and is compared (`== "nim"`, `!= "nim"`), a match arm (`"nim" =>`) or
/// part of an or-pattern (`"nim" | ...`, `... | "nim"`). Literals inside longer strings (an
/// example job's JSON) are not dispatch.
fn games_compared(code: &str) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    for game in gamesolver_shared::registry::GAMES {
        let lit = format!("\"{game}\"");
        let mut from = 0;
        while let Some(i) = code[from..].find(&lit) {
            let at = from + i;
            from = at + lit.len();
            let before = code[..at].trim_end();
            let after = code[from..].trim_start();
            let compared = ["==", "!=", "|"].iter().any(|op| before.ends_with(op))
                || ["=>", "|", "=="].iter().any(|op| after.starts_with(op));
            // `"a" | "b"` but not `||`, which joins booleans.
            let or_or = before.ends_with("||") || after.starts_with("||");
            if compared && !or_or {
                named.insert(game.to_string());
            }
        }
    }
    named
}

#[test]
fn server_and_worker_name_no_game() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf();
    let games = game_modules(&root);
    assert!(
        games.contains(&"connect4".to_string()) && games.len() >= 10,
        "{games:?}"
    );
    let planted = "use gamesolver_shared::games::{data, othello::Othello};\nfn f() { gamesolver_shared::games::awari::Awari::new(6); }";
    assert_eq!(
        games_named(planted, &games).into_iter().collect::<Vec<_>>(),
        ["awari", "othello"]
    );
    let dispatch = "match g { \"nim\" | \"pig\" => 1, _ => 0 }; if game == \"tree\" {}\nlet ok = a || \"x\" == y; let job = r#\"{\"game\":\"awari\"}\"#;";
    assert_eq!(
        games_compared(dispatch).into_iter().collect::<Vec<_>>(),
        ["nim", "pig", "tree"]
    );
    let mut files = Vec::new();
    for dir in ["server/src", "worker/src"] {
        workspace_rust_files(&root.join(dir), &mut files);
    }
    let mut naming = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable source");
        let code = code_of(&text);
        let mut named = games_named(&code, &games);
        named.extend(games_compared(&code));
        if !named.is_empty() {
            let rel = file.strip_prefix(&root).expect("under the root");
            naming.insert(rel.to_string_lossy().replace('\\', "/"), named);
        }
    }
    let named: Vec<String> = naming
        .iter()
        .map(|(f, g)| format!("{f} names {g:?}"))
        .collect();
    assert!(
        named.is_empty(),
        "server/ and worker/ reach games through the catalogue's hooks (GameEntry), never by \
         module or by comparing a name:\n{}",
        named.join("\n")
    );
}

/// Most lines of a function in the scheduler's files (its signature and closing brace
/// included).
const MAX_SCHEDULER_FN_LINES: usize = 100;

/// The functions of rustfmt-formatted `text` (up to a `#[cfg(test)]` at the start of a line)
/// with their first line and length: from the line that names `fn` to the first line after it
/// that is its closing brace at the same indent. A function without a body is left out.
fn function_lengths(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .iter()
        .position(|l| l.starts_with("#[cfg(test)]"))
        .unwrap_or(lines.len());
    let mut out = Vec::new();
    for (i, line) in lines[..end].iter().enumerate() {
        let code = line.trim_start();
        let indent = &line[..line.len() - code.len()];
        let Some(at) = code.find("fn ") else {
            continue;
        };
        let before = &code[..at];
        let qualifiers = before.split_whitespace().all(|w| {
            w.starts_with("pub") || ["async", "const", "unsafe", "extern", "\"C\""].contains(&w)
        });
        if !qualifiers || code.starts_with("//") {
            continue;
        }
        let name: String = code[at + 3..]
            .chars()
            .take_while(|&c| is_ident(c))
            .collect();
        if code.ends_with('}') {
            out.push((name, i + 1, 1));
            continue;
        }
        let close = format!("{indent}}}");
        let body_end = lines[i..end].iter().position(|l| {
            *l == close
                || (l.starts_with(indent)
                    && l.trim_end().ends_with(';')
                    && !l[indent.len()..].starts_with(' '))
        });
        if let Some(k) = body_end.filter(|&k| lines[i + k] == close) {
            out.push((name, i + 1, k + 1));
        }
    }
    out
}

/// The scheduler's files have no function over [`MAX_SCHEDULER_FN_LINES`] lines (its tests
/// aside): each is one named step.
#[test]
fn scheduler_functions_are_at_most_a_hundred_lines() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/src/scheduler");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    assert!(
        files.len() > 3,
        "the scheduler's files are found in {dir:?}"
    );
    let mut long = Vec::new();
    for file in files.iter().filter(|f| !f.ends_with("tests.rs")) {
        let text = std::fs::read_to_string(file).unwrap();
        for (name, line, len) in function_lengths(&text) {
            if len > MAX_SCHEDULER_FN_LINES {
                long.push(format!("{}:{line} `{name}`: {len} lines", file.display()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "split into named steps:\n{}",
        long.join("\n")
    );
}

/// The counter itself: bodies, signatures over several lines, trait declarations without a
/// body, nested functions and test modules.
#[test]
fn the_function_counter_counts_lines() {
    let text = "\
impl X {
    /// fn in a comment
    pub(super) fn a(
        &self,
    ) -> u32 {
        fn inner() {}
        1
    }
    fn declared(&self);
    async fn b() {}
}
#[cfg(test)]
mod tests {
    fn left_out() {
    }
}
";
    let got = function_lengths(text);
    let want: Vec<(String, usize, usize)> = vec![
        ("a".into(), 3, 6),
        ("inner".into(), 6, 1),
        ("b".into(), 10, 1),
    ];
    assert_eq!(got, want);
}
