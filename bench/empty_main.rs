// The floor of any Rust binary: the runtime's start-up and exit, nothing else.
fn main() {}
