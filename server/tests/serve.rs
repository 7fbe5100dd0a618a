//! `gamesolver serve` as users start it: bad arguments exit 2 with one line, an unusable store
//! exits 1 with one line naming the file; never a panic.

use std::process::Command;

fn serve(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gamesolver"))
        .arg("serve")
        .args(args)
        .env("RUST_LOG", "error")
        .output()
        .expect("run gamesolver serve");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).trim().to_string(),
    )
}

#[test]
fn bad_arguments_exit_2_with_one_line() {
    for args in [
        &["--lease-ms", "1"][..],
        &["--max-attempts", "0"],
        &["--parallelism", "0"],
        &["--local-workers", "two"],
    ] {
        let (code, err) = serve(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn an_unusable_database_or_address_is_one_line_naming_it() {
    let (code, err) = serve(&[
        "--listen",
        "127.0.0.1:0",
        "--db",
        "/nonexistent-dir/x/gs.db",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("/nonexistent-dir/x/gs.db") && err.lines().count() == 1,
        "{err}"
    );
    let dir = std::env::temp_dir().join(format!("gs-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (code, err) = serve(&[
        "--listen",
        "not-an-address",
        "--db",
        dir.join("gs.db").to_str().unwrap(),
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("not-an-address") && err.lines().count() == 1,
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
