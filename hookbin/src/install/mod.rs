//! `install-host-hooks`: consented, reversible installs of our hook entries into each host's
//! config. (Placeholder until the installer lands.)

pub mod cli;
