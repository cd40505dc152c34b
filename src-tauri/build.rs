//! Build script: checks that the front end was built, then runs `tauri-build`.
//!
//! The app serves `ui/dist` (Vite's output); it must exist before this crate compiles.

fn main() {
    let dist = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/dist");
    println!("cargo:rerun-if-changed=../ui/dist");
    if !dist.join("index.html").is_file() {
        panic!(
            "ui/dist/index.html is missing: build the front end first (cd ui && npm ci && npm run build)"
        );
    }
    tauri_build::build();
}
