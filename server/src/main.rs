//! Temporary entry point until the lead's CLI lands: `gamesolver serve` only.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .init();
    let mut listen = "127.0.0.1:8080".to_string();
    let mut db = std::path::PathBuf::from("gamesolver.db");
    let mut local = 0usize;
    let mut lease_ms = None;
    let mut attempts = None;
    let mut parallelism = None;
    let mut i = 2;
    while i + 1 < args.len() {
        match args[i].as_str() {
            "--listen" => listen = args[i + 1].clone(),
            "--db" => db = args[i + 1].clone().into(),
            "--local-workers" => local = args[i + 1].parse().unwrap(),
            "--lease-ms" => lease_ms = Some(args[i + 1].parse().unwrap()),
            "--max-attempts" => attempts = Some(args[i + 1].parse().unwrap()),
            "--parallelism" => parallelism = Some(args[i + 1].parse().unwrap()),
            _ => panic!("bad arg"),
        }
        i += 2;
    }
    let mut c = gamesolver::ServeConfig::from_env(listen, db, local);
    if let Some(l) = lease_ms {
        c.sched.lease_ms = l;
    }
    if let Some(a) = attempts {
        c.sched.max_attempts = a;
    }
    c.sched.parallelism = parallelism;
    if let Err(e) = gamesolver::serve_blocking(c) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
