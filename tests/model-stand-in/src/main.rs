//! The `model-stand-in` command: serves the stand-in on `127.0.0.1`, port 0, prints its URL
//! (`http://127.0.0.1:<port>`) as the first line on stdout, appends every request to the
//! `--log` file as one JSON line, and runs until SIGINT or SIGTERM.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use model_stand_in::server::{self, Options, State};

/// A local stand-in for the Anthropic Messages API and the OpenAI Responses API, for tests.
#[derive(Parser, Debug)]
#[command(name = "model-stand-in")]
struct Cli {
    /// The text of every assistant answer.
    #[arg(long, default_value = server::DEFAULT_REPLY)]
    reply: String,
    /// Append every request (method, path, query, body, status) to this file as JSON lines.
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Also write the URL to this file (written once the server listens).
    #[arg(long, value_name = "FILE")]
    url_file: Option<PathBuf>,
}

async fn terminated() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let options = Options {
        reply: cli.reply,
        log_file: cli.log,
    };
    let state = match State::new(&options) {
        Ok(state) => Arc::new(state),
        Err(e) => {
            eprintln!("model-stand-in: cannot open the request log: {e}");
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("model-stand-in: cannot start a runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let listener = match tokio::net::TcpListener::bind(("127.0.0.1", 0)).await {
            Ok(listener) => listener,
            Err(e) => {
                eprintln!("model-stand-in: cannot listen on 127.0.0.1: {e}");
                return ExitCode::FAILURE;
            }
        };
        let url = match listener.local_addr() {
            Ok(addr) => format!("http://{addr}"),
            Err(e) => {
                eprintln!("model-stand-in: cannot read the listening address: {e}");
                return ExitCode::FAILURE;
            }
        };
        if let Some(path) = &cli.url_file
            && let Err(e) = std::fs::write(path, format!("{url}\n"))
        {
            eprintln!("model-stand-in: cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{url}");
        let _ = stdout.flush();
        drop(stdout);
        server::serve(listener, state, terminated()).await;
        ExitCode::SUCCESS
    })
}
