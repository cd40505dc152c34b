//! Fabric's service descriptors (`fabric-service/0.1`): how many there are and how many are
//! local, for the session-start line. Only names ending `.json` and not starting with `.`
//! count. A descriptor's `origin` is the only field read here.

use std::path::Path;

use serde::Deserialize;

use companion_platform::fsutil;

/// At most this many descriptors are opened to count local ones; more are counted by name.
const MAX_DESCRIPTORS_READ: usize = 64;
const DESCRIPTOR_LIMIT: u64 = 256 * 1024;

/// A count of the descriptors in a folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DescriptorCount {
    /// Files that count as descriptors.
    pub total: usize,
    /// Of those, the ones whose `origin` is on 127.0.0.1.
    pub local: usize,
}

#[derive(Deserialize)]
struct OriginOnly {
    #[serde(default)]
    origin: String,
}

/// Whether a file name counts as a descriptor.
pub fn is_descriptor_name(name: &str) -> bool {
    name.ends_with(".json") && !name.starts_with('.')
}

/// Counts descriptors in `dir` (zero when it does not exist or cannot be read). Only regular
/// files count: a FIFO, a device or a folder named `*.json` is no descriptor (and is never
/// opened in a way that could block).
pub fn count_descriptors(dir: &Path) -> DescriptorCount {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return DescriptorCount::default();
    };
    let mut count = DescriptorCount::default();
    let mut read = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !is_descriptor_name(name) {
            continue;
        }
        let path = entry.path();
        if read < MAX_DESCRIPTORS_READ {
            read += 1;
            let Ok(Some(bytes)) = fsutil::read_bounded(&path, DESCRIPTOR_LIMIT) else {
                continue;
            };
            count.total += 1;
            if serde_json::from_slice::<OriginOnly>(&bytes)
                .is_ok_and(|d| origin_is_loopback(&d.origin))
            {
                count.local += 1;
            }
        } else if std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            count.total += 1;
        }
    }
    count
}

/// Whether an origin is `http(s)://127.0.0.1[:port]`.
pub fn origin_is_loopback(origin: &str) -> bool {
    let rest = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .unwrap_or("");
    let host = rest.split(['/', ':']).next().unwrap_or("");
    host == "127.0.0.1"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_json_files_not_hidden_ones() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
        write("a.one.json", r#"{"origin":"http://127.0.0.1:4100"}"#);
        write("b.one.json", r#"{"origin":"https://example.test"}"#);
        write(".hidden.json", r#"{"origin":"http://127.0.0.1:1"}"#);
        write("notes.txt", "x");
        write("broken.json", "{");
        assert_eq!(
            count_descriptors(dir.path()),
            DescriptorCount { total: 3, local: 1 }
        );
        assert_eq!(
            count_descriptors(&dir.path().join("missing")),
            DescriptorCount::default()
        );
    }

    #[test]
    fn loopback_origins() {
        assert!(origin_is_loopback("http://127.0.0.1:8080"));
        assert!(origin_is_loopback("http://127.0.0.1"));
        assert!(!origin_is_loopback("http://127.0.0.10:80"));
        assert!(!origin_is_loopback("http://localhost:80"));
    }
}
