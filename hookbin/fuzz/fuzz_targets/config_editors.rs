//! The Claude/Codex JSON and Kimi TOML editors, through the installer's plan (a dry run) on a
//! real file: the first byte picks the host and install or remove, the rest is the file.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use companion_hosts::host::Host;
use companion_hosts::install::{self, Operation};
use companion_platform::paths::Paths;

static HOME: OnceLock<tempfile::TempDir> = OnceLock::new();

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&pick, text)) = data.split_first() else {
        return;
    };
    let home = HOME.get_or_init(|| tempfile::tempdir().unwrap()).path();
    let fabric_dir = home.join("fabric");
    let paths = Paths {
        home: home.to_path_buf(),
        services_dir: fabric_dir.join("services"),
        fabric_dir,
        cache_dir: home.join("cache"),
        data_dir: home.join("data"),
        config_dir: home.join("config"),
    };
    let host = match pick % 3 {
        0 => Host::Claude,
        1 => Host::Codex,
        _ => Host::Kimi,
    };
    let operation = if pick & 0x80 == 0 {
        Operation::Install
    } else {
        Operation::Remove
    };
    let file = install::config_file(host, &paths);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, text).unwrap();
    let script = Path::new("/opt/fabric/fabric-session");
    let _ = install::plan(host, operation, Some(script), &paths);
});
