//! Sessions on other machines: a dev server over the person's own `ssh`, a dev container
//! through `docker exec` / `podman exec`, a WSL distribution through `wsl.exe`. Nothing of ours
//! listens anywhere: the tray runs one fixed command per remote, `fabric-session status --json
//! --follow` at the other end, and reads its stream.
//!
//! - [`remote`]: what a remote is (a validated destination and its transport), parsed from the
//!   settings; the fixed commands run for it, and nothing else.
//! - [`stream`]: one line of a remote's stream read as untrusted input: bounded, every string
//!   checked or cleaned, unknown fields ignored, only the status fields kept.
//! - [`link`]: one remote's link kept up: the command run, its lines read under a heartbeat
//!   deadline, reconnection with backoff, the link's state (up, unreachable since, needs a
//!   person).
//! - [`jump`]: the jump to a remote's session: its tmux pane there, then the local terminal
//!   whose `ssh` reaches it.
//! - [`setup`]: a remote set up and taken down: its system checked, our program copied
//!   (checksum verified), a host's hook plan read there and applied only with its digest.
//! - [`board`]: every remote's link state and sessions, shared by the links and the tray, and
//!   the file the dashboard reads.

pub mod board;
pub mod jump;
pub mod link;
pub mod remote;
pub mod setup;
pub mod stream;
