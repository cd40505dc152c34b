//! `companion-platform`: the platform plumbing every Fabric Companion program shares.
//!
//! Where things live (`paths`, `env_vars`, `platform`), careful handling of files we do not
//! own and atomic writes (`fsutil`), times and the one deadline computation (`clock`),
//! process facts (`process`), a child and everything it starts ended together
//! (`process_group`), starting a program detached (`detach`), and which command a shell runs
//! (`shell_wrapper`). It knows nothing of hosts, sessions or Fabric, never starts an async
//! runtime, and never talks to Fabric. See `docs/ARCHITECTURE.md`.

pub mod clock;
pub mod detach;
pub mod env_vars;
pub mod fsutil;
pub mod paths;
pub mod platform;
pub mod process;
pub mod process_group;
pub mod shell_wrapper;
