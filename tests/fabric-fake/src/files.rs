//! Fabric's folder as the stand-in writes it: `hub.json` (`fabric-hub/0.1`) and service
//! descriptors (`fabric-service/0.1`, one `<id>.<instance>.json` per service), plus the
//! atomic file writing both use.

use std::fs::{self, OpenOptions};
use std::io::{self, ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// The protocol a real `hub.json` carries.
pub const HUB_PROTOCOL: &str = "fabric-hub/0.1";
/// The origin a real `hub.json` carries.
pub const DEFAULT_HUB_ORIGIN: &str = "http://127.0.0.1:47070";
/// The file name of the hub file in Fabric's folder.
pub const HUB_FILE: &str = "hub.json";
/// The origin of a descriptor when none is given (nothing listens there in tests).
pub const DEFAULT_SERVICE_ORIGIN: &str = "http://127.0.0.1:47195";

/// The current time as RFC 3339 UTC, whole seconds (`2026-10-01T09:00:00Z`).
pub fn now_rfc3339() -> String {
    let now = OffsetDateTime::now_utc();
    let now = now.replace_nanosecond(0).unwrap_or(now);
    now.format(&Rfc3339)
        .expect("a UTC time formats as RFC 3339")
}

/// Writes `bytes` to `path` atomically: a temporary file in the same folder (created with
/// `mode` on Unix), then a rename over `path`.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            ErrorKind::InvalidInput,
            format!("{} has no file name", path.display()),
        )
    })?;
    let tmp = dir.join(format!(
        ".{}.{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
    #[cfg(not(unix))]
    let _ = mode;
    let result = options
        .open(&tmp)
        .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_all()))
        .and_then(|()| fs::rename(&tmp, path));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Creates `dir` and its missing parents, mode 0700 on Unix.
fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

fn to_pretty_bytes(value: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("JSON values serialize");
    bytes.push(b'\n');
    bytes
}

/// The content of a `hub.json`. [`Hub::new`] gives the real thing's fields for a pid;
/// change the public fields to write odd files (another protocol, another origin).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hub {
    pub protocol: String,
    pub origin: String,
    pub pid: u32,
    /// Written as `"features"` only when not empty.
    pub features: Vec<String>,
}

impl Hub {
    /// A hub as Fabric writes it today, naming `pid`, with no features.
    pub fn new(pid: u32) -> Self {
        Hub {
            protocol: HUB_PROTOCOL.to_owned(),
            origin: DEFAULT_HUB_ORIGIN.to_owned(),
            pid,
            features: Vec::new(),
        }
    }

    /// The JSON document for Fabric's folder `fabric_dir`, started now.
    pub fn to_json(&self, fabric_dir: &Path) -> Value {
        let fabric_dir = std::path::absolute(fabric_dir).unwrap_or(fabric_dir.to_path_buf());
        let door_token_file = fabric_dir.join("hub-door-token");
        let mut hub = json!({
            "protocol": self.protocol,
            "origin": self.origin,
            "mcp": "/mcp",
            "doorTokenFile": door_token_file.to_string_lossy(),
            "pid": self.pid,
            "startedAt": now_rfc3339(),
        });
        if !self.features.is_empty() {
            hub["features"] = json!(self.features);
        }
        hub
    }

    /// Writes `<fabric_dir>/hub.json` atomically, mode 0600, creating the folder (0700)
    /// when needed. Returns the file's path.
    pub fn write(&self, fabric_dir: &Path) -> io::Result<PathBuf> {
        create_private_dir(fabric_dir)?;
        let path = fabric_dir.join(HUB_FILE);
        write_atomic(&path, &to_pretty_bytes(&self.to_json(fabric_dir)), 0o600)?;
        Ok(path)
    }
}

/// Writes `<fabric_dir>/hub.json` as Fabric does, naming `pid` and listing `features`
/// (left out when empty). Returns the file's path.
pub fn write_hub(fabric_dir: &Path, features: &[&str], pid: u32) -> io::Result<PathBuf> {
    let mut hub = Hub::new(pid);
    hub.features = features.iter().map(|f| f.to_string()).collect();
    hub.write(fabric_dir)
}

/// The text of the `hub.json` [`write_hub`] writes, for a caller that writes it itself (as
/// another Unix user, at the other end of an ssh).
pub fn hub_text(fabric_dir: &Path, features: &[&str], pid: u32) -> String {
    let mut hub = Hub::new(pid);
    hub.features = features.iter().map(|f| f.to_string()).collect();
    hub.to_json(fabric_dir).to_string()
}

/// Removes `<fabric_dir>/hub.json`, as Fabric does on quit; no error when it is missing.
pub fn remove_hub(fabric_dir: &Path) -> io::Result<()> {
    match fs::remove_file(fabric_dir.join(HUB_FILE)) {
        Err(e) if e.kind() != ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// A local service descriptor valid against `service-descriptor.schema.json`, supervised by
/// nothing (`lifecycle.manager: none`). `id` and `instance` must follow the contract's
/// patterns (`^[a-z][a-z0-9-]{1,62}$`, `^[a-z][a-z0-9-]{0,31}$`) and `origin` must be
/// `http://127.0.0.1:<port>` for the result to be valid.
pub fn service_descriptor(id: &str, instance: &str, name: &str, origin: &str) -> Value {
    json!({
        "protocol": "fabric-service/0.1",
        "id": id,
        "instance": instance,
        "name": name,
        "origin": origin,
        "auth": {"tokenFile": format!("~/.local/share/{id}/service.token")},
        "lifecycle": {"manager": "none"},
        "paths": {
            "data": format!("~/.local/share/{id}"),
            "logs": [format!("~/.local/state/{id}/service.log")],
        },
        "installedAt": now_rfc3339(),
        "installedBy": "fabric-fake",
    })
}

/// The name a descriptor gets when none is given.
pub fn default_service_name(id: &str) -> String {
    format!("Fake service {id}")
}

/// Writes the descriptor `<services_dir>/<id>.<instance>.json` (see [`service_descriptor`]),
/// creating the folder when needed. Returns the file's path.
pub fn write_service(
    services_dir: &Path,
    id: &str,
    instance: &str,
    origin: &str,
) -> io::Result<PathBuf> {
    write_service_named(
        services_dir,
        id,
        instance,
        origin,
        &default_service_name(id),
    )
}

/// [`write_service`] with a chosen display `name`.
pub fn write_service_named(
    services_dir: &Path,
    id: &str,
    instance: &str,
    origin: &str,
    name: &str,
) -> io::Result<PathBuf> {
    fs::create_dir_all(services_dir)?;
    let path = services_dir.join(format!("{id}.{instance}.json"));
    let descriptor = service_descriptor(id, instance, name, origin);
    write_atomic(&path, &to_pretty_bytes(&descriptor), 0o644)?;
    Ok(path)
}
