//! `model-stand-in`: a local stand-in for the model APIs the agent hosts call, for tests only
//! (never shipped).
//!
//! It listens on `127.0.0.1`, port 0, and answers every turn with one fixed reply:
//! - the Anthropic Messages API (Claude Code, Kimi Code with an `anthropic` provider):
//!   `POST /v1/messages` (also with `?beta=true`), streaming (SSE) and not, and
//!   `POST /v1/messages/count_tokens` ([`anthropic`]);
//! - the OpenAI Responses API (Codex): `POST /v1/responses`, streaming (SSE) and not
//!   ([`openai`]);
//! - `GET /v1/models` in the shape each API lists models in ([`anthropic`], [`openai`]).
//!
//! Anything else gets a 404 whose JSON error names the method and path asked for. Every
//! request is recorded (method, path, query, body, the status answered): in memory for the
//! library's [`StandIn`], and as one JSON line per request for the binary ([`record`]).
//!
//! A prompt may ask for a tool call in fixed words (`stand-in: run <command>`, `stand-in:
//! agent run <command>`): the answer is then a call of the host's shell or subagent tool, and
//! once the tool's result comes back, the fixed reply ([`script`]). That is how the tests get a
//! real host to show its permission prompt.
//!
//! It never calls out anywhere and never decides anything for a test: the tests read the
//! recorded requests.

pub mod anthropic;
pub mod openai;
pub mod record;
pub mod routes;
pub mod script;
pub mod server;

pub use record::{Recorded, count_occurrences};
pub use server::{DEFAULT_REPLY, Options, StandIn};
