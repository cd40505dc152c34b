//! The one parser of a hook log line (the tray and the dashboard read the log through it).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for line in text.lines() {
        if let Some(line) = companion_sessions::hook_log::parse_line(line) {
            let _ = line.is_failure();
        }
    }
});
