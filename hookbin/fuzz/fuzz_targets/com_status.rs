//! `com.status` answers and refusals, as the worker and the watcher read them.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = companion_sessions::board::parse_com_status(text);
    let _ = companion_sessions::board::parse_refusal(text);
    let _ = companion_sessions::board::reading_from_answer(Some(text), false);
    let _ = companion_sessions::board::reading_from_answer(Some(text), true);
});
