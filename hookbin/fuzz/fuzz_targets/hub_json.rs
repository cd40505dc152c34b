//! `hub.json` as Fabric's state: read through the one careful read, from a real file.
#![no_main]

use std::sync::OnceLock;

static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let dir = DIR.get_or_init(|| tempfile::tempdir().unwrap());
    let path = dir.path().join("hub.json");
    std::fs::write(&path, data).unwrap();
    let state = companion_sessions::hub::read_fabric_state(&path);
    let _ = state.session_hooks_active();
});
