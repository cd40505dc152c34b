//! The hook's stdin parser (the binary's `hook_input.rs`, compiled in as it is).
#![no_main]

#[path = "../../src/hook_input.rs"]
#[allow(dead_code)]
mod hook_input;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let hook_input::Stdin::Input(input) = hook_input::HookInput::classify(data) {
        let _ = input.session();
        let _ = input.project_dir();
        let _ = input.by_subagent();
    }
});
