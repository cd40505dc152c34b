//! `watch-mail`: the idle session's mail watcher. (Placeholder until it lands.)

pub mod cli;
