//! `gamesolver games`: upload a game module to a coordinator (`POST /v1/games`) and list the
//! modules it holds (`GET /v1/games`). A job then names the module as `module:<name>` or
//! `module:<sha256>` (`gamesolver solve --coordinator URL --game module:NAME ...`).

use crate::cli::Failure;
use clap::{Args, Subcommand};
use gamesolver::client;
use serde_json::Value;
use std::path::PathBuf;

/// `gamesolver games`.
#[derive(Debug, Args)]
pub struct GamesArgs {
    #[command(subcommand)]
    pub action: GamesAction,
}

/// What `gamesolver games` does.
#[derive(Debug, Subcommand)]
pub enum GamesAction {
    /// Upload FILE (binary WebAssembly or the text format) to the coordinator, which checks it
    /// as `--game-module` does; prints the name and the game of jobs (`module:<sha256>`).
    Upload {
        /// The module file (.wasm or .wat, at most 4 MiB).
        file: PathBuf,
        /// The name jobs may use (`module:NAME`); default, the name the module declares.
        #[arg(long)]
        name: Option<String>,
        /// The coordinator's URL (with GAMESOLVER_API_TOKEN when it wants one).
        #[arg(long)]
        coordinator: String,
        /// Print the coordinator's answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the modules the coordinator holds, by name.
    List {
        /// The coordinator's URL.
        #[arg(long)]
        coordinator: String,
        /// Print the coordinator's answer as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs `gamesolver games`.
pub fn run(args: GamesArgs) -> Result<(), Failure> {
    match args.action {
        GamesAction::Upload {
            file,
            name,
            coordinator,
            json,
        } => {
            let remote = client::remote(&coordinator).map_err(failure)?;
            let bytes = std::fs::read(&file)
                .map_err(|e| Failure::bad_input(format!("{}: {e}", file.display())))?;
            let mut req = remote
                .request("POST", "/v1/games")
                .set("Content-Type", "application/wasm");
            if let Some(n) = &name {
                req = req.query("name", n);
            }
            let answer = client::answer(req.send_bytes(&bytes), Some("upload")).map_err(failure)?;
            if json {
                println!("{answer}");
            } else {
                println!(
                    "{} {} ({} bytes)",
                    answer["name"].as_str().unwrap_or("?"),
                    answer["game"].as_str().unwrap_or("?"),
                    bytes.len()
                );
            }
            Ok(())
        }
        GamesAction::List { coordinator, json } => {
            let remote = client::remote(&coordinator).map_err(failure)?;
            let req = remote.request("GET", "/v1/games");
            let answer = client::answer(req.call(), Some("list")).map_err(failure)?;
            if json {
                println!("{answer}");
                return Ok(());
            }
            for g in answer["games"].as_array().into_iter().flatten() {
                println!("{}", line(g));
            }
            Ok(())
        }
    }
}

/// One module as a line: name, job game, players, values.
fn line(g: &Value) -> String {
    let info = &g["info"];
    format!(
        "{:<24} {}  {} player(s){}, values {}..{}",
        g["name"].as_str().unwrap_or("?"),
        g["game"].as_str().unwrap_or("?"),
        info["players"],
        if info["zero_sum"] == true {
            ", zero-sum"
        } else {
            ""
        },
        info["min_value"],
        info["max_value"]
    )
}

fn failure(e: client::RemoteError) -> Failure {
    match e {
        client::RemoteError::BadInput(m) => Failure::bad_input(m),
        client::RemoteError::NoResult(m) => Failure::no_result(m),
    }
}
