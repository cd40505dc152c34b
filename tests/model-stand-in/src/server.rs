//! The HTTP/1.1 server (hyper on a current-thread tokio runtime): accepts on `127.0.0.1`,
//! records each request in the [`Log`], answers it through [`crate::routes`].
//!
//! [`StandIn`] runs it on a thread of its own for synchronous tests; [`serve`] is the loop
//! itself, for the binary.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::record::{self, Log, Recorded};
use crate::routes::{self, Answer, Turn};

/// The reply every turn gets unless another is given.
pub const DEFAULT_REPLY: &str = "Stand-in model reply: done.";

/// The largest request body read (bigger ones get a 413).
pub const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// How the stand-in answers and where it logs.
#[derive(Clone, Debug)]
pub struct Options {
    /// The text of every assistant answer.
    pub reply: String,
    /// Append each request to this file as one JSON line (created when missing).
    pub log_file: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            reply: DEFAULT_REPLY.to_owned(),
            log_file: None,
        }
    }
}

/// What every connection shares.
#[derive(Debug)]
pub struct State {
    reply: String,
    log: Arc<Log>,
    /// Numbers the answers' ids (`msg_stand_in_<n>`), unique even for concurrent requests.
    answers: AtomicU64,
}

impl State {
    /// The state for `options`, opening the log file when one is named.
    pub fn new(options: &Options) -> io::Result<State> {
        Ok(State {
            reply: options.reply.clone(),
            log: Arc::new(Log::new(options.log_file.as_deref())?),
            answers: AtomicU64::new(1),
        })
    }

    /// The requests seen so far.
    pub fn records(&self) -> Vec<Recorded> {
        self.log.records()
    }
}

/// A running stand-in on a thread of its own. Dropping it stops the server.
pub struct StandIn {
    addr: SocketAddr,
    state: Arc<State>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl StandIn {
    /// Binds `127.0.0.1:0` and starts serving.
    pub fn start(options: Options) -> io::Result<StandIn> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let state = Arc::new(State::new(&options)?);
        let (stop, stopped) = oneshot::channel::<()>();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let served = Arc::clone(&state);
        let thread = std::thread::Builder::new()
            .name("model-stand-in".to_owned())
            .spawn(move || {
                runtime.block_on(async move {
                    match TcpListener::from_std(listener) {
                        Ok(listener) => {
                            serve(listener, served, async {
                                let _ = stopped.await;
                            })
                            .await;
                        }
                        Err(e) => eprintln!("model-stand-in: cannot listen: {e}"),
                    }
                });
            })?;
        Ok(StandIn {
            addr,
            state,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:<port>` (no trailing slash, no `/v1`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.state.records()
    }

    /// The requests to `path` (query ignored), in arrival order.
    pub fn requests_to(&self, path: &str) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|record| record.path == path)
            .collect()
    }

    /// Stops the server and waits for its thread.
    pub fn stop(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// Accepts connections until `shutdown` completes; each connection is served on its own
/// task. Connections still open when it returns are dropped with the runtime.
pub async fn serve(listener: TcpListener, state: Arc<State>, shutdown: impl Future<Output = ()>) {
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let state = Arc::clone(&state);
                    tokio::spawn(async move {
                        let service = service_fn(move |request| {
                            let state = Arc::clone(&state);
                            async move { Ok::<_, Infallible>(handle(request, &state).await) }
                        });
                        let _ = http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    });
                }
                Err(e) => {
                    // Out of file descriptors and the like: say so, breathe, go on.
                    eprintln!("model-stand-in: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
        }
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

async fn handle(request: Request<Incoming>, state: &State) -> Response<Full<Bytes>> {
    let method = request.method().as_str().to_owned();
    let path = request.uri().path().to_owned();
    let query = request.uri().query().map(str::to_owned);
    let anthropic_client = request.headers().contains_key("anthropic-version");
    let encoding = request
        .headers()
        .get(hyper::header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.eq_ignore_ascii_case("identity"))
        .map(str::to_owned);
    let body = Limited::new(request.into_body(), MAX_BODY_BYTES)
        .collect()
        .await
        .map(|collected| collected.to_bytes());
    let (answer, body) = match (body, encoding) {
        (Err(e), _) => (
            error_answer(
                413,
                &format!("cannot read the body of {method} {path}: {e}"),
            ),
            Bytes::new(),
        ),
        (Ok(body), Some(encoding)) => (
            error_answer(
                415,
                &format!(
                    "{method} {path}: the body is {encoding}-encoded; model-stand-in reads plain bodies only"
                ),
            ),
            body,
        ),
        (Ok(body), None) => {
            let seq = state.answers.fetch_add(1, Ordering::Relaxed);
            let answer = routes::answer(
                &routes::Request {
                    method: &method,
                    path: &path,
                    body: &body,
                    anthropic_client,
                },
                &Turn {
                    reply: &state.reply,
                    seq,
                    now: now_secs(),
                },
            );
            (answer, body)
        }
    };
    if let Some(delay) = answer.delay {
        tokio::time::sleep(delay).await;
    }
    state.log.push(Recorded {
        seq: 0,
        method,
        path,
        query,
        body: record::body_value(&body),
        status: answer.status,
    });
    to_response(answer)
}

fn error_answer(status: u16, message: &str) -> Answer {
    Answer {
        status,
        content_type: "application/json",
        body: serde_json::json!({"type": "error",
            "error": {"type": "invalid_request_error", "message": format!("model-stand-in: {message}")}})
        .to_string(),
        delay: None,
    }
}

fn to_response(answer: Answer) -> Response<Full<Bytes>> {
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = Response::new(Full::new(Bytes::from(answer.body)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(answer.content_type),
    );
    if answer.content_type == "text/event-stream" {
        headers.insert(
            hyper::header::CACHE_CONTROL,
            hyper::header::HeaderValue::from_static("no-cache"),
        );
    }
    response
}
