//! Files under a test's temporary `HOME`: writing one (its folders made first) and the
//! standard layout of our folders there (what `Paths` gives with `HOME` set and no XDG
//! variables).

use std::path::Path;

use companion_platform::paths::Paths;

/// Writes `text` to `path`, making its folders first.
pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Our folders under `home` as a Linux desktop has them (XDG defaults): Fabric's under
/// `~/.local/share/passioncode-fabric`, ours under `~/.cache`, `~/.local/share` and
/// `~/.config`.
pub fn paths_in(home: &Path) -> Paths {
    let fabric_dir = home.join(".local/share/passioncode-fabric");
    Paths {
        home: home.to_path_buf(),
        services_dir: fabric_dir.join("services"),
        fabric_dir,
        cache_dir: home.join(".cache/fabric-companion"),
        data_dir: home.join(".local/share/fabric-companion"),
        config_dir: home.join(".config/fabric-companion"),
    }
}
