//! `gamesolver`: coordinator, local runner and command-line client. Thin: parse, run, exit.

mod cli;

use clap::Parser;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("serve") {
        return serve_main(&args);
    }
    let parsed = match cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                std::process::exit(
                    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                        2
                    } else {
                        0
                    },
                );
            }
            // One line naming the problem (clap's first line), never the usage block.
            let text = e.render().to_string();
            let first = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("error: bad arguments");
            eprintln!("{}", first.trim());
            std::process::exit(2);
        }
    };
    let outcome = match parsed.command {
        cli::Command::Solve(args) => cli::solve(args),
        cli::Command::Batch(args) => cli::batch(args),
        cli::Command::Healthcheck(args) => cli::healthcheck(args),
    };
    if let Err(f) = outcome {
        if !f.message.is_empty() {
            eprintln!("error: {}", f.message);
        }
        std::process::exit(f.status);
    }
}

/// `gamesolver serve` (the service helper's temporary parser until the lead's CLI has it;
/// kept from the `svc` branch while merging main).
fn serve_main(args: &[String]) {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
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
