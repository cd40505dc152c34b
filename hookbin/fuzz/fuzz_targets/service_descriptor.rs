//! Service descriptors: the dashboard's typed `fabric-service/0.1` validator (compiled in as
//! it is) and the core's count of descriptors in a folder.
#![no_main]

use std::sync::OnceLock;

#[path = "../../../src-tauri/src/services/contract.rs"]
#[allow(dead_code)]
mod contract;

static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(doc) = serde_json::from_slice::<serde_json::Value>(data) {
        let _ = contract::descriptor(&doc);
        let _ = contract::well_known(&doc);
    }
    let dir = DIR.get_or_init(|| tempfile::tempdir().unwrap());
    std::fs::write(dir.path().join("svc.json"), data).unwrap();
    let _ = companion_sessions::services::count_descriptors(dir.path());
});
