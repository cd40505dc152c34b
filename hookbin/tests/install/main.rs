//! `fabric-session install-host-hooks`, run as the real binary in a temporary home, over a
//! table of real-world config files for each host: dry run, apply (twice: the second does
//! nothing), a stale digest refused, remove, and the round trip back to the original.
//!
//! Round-trip equality: byte for byte for TOML and for JSON already in the layout we write
//! (2 or 4 spaces or tabs, any line endings); JSON in another layout comes back equal as data.
//! A file that did not exist comes back as no file (no `{}`, no backup of our own entries); an
//! empty JSON file comes back as `{}` (the empty settings).
#![cfg(unix)] // file modes, symlinks and a temporary HOME given by HOME and XDG variables (Windows reads neither)

#[path = "../install_support/mod.rs"]
mod install_support;

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};

use install_support::{HOSTS, Sandbox, mode, our_commands, our_events, sha256_of};
use serde_json::Value;

mod commands;
mod table;
