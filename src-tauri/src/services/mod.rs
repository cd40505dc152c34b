//! The Services view: reads every `fabric-service/0.1` descriptor in the services folder,
//! checks it against the contract's rules ([`contract`], typed Rust), and probes each local
//! one at `GET <origin>/.well-known/fabric-service` by the contract's rules: 2 s timeout, no
//! redirects, no auth, never through a proxy (the environment's `HTTP_PROXY`/`ALL_PROXY` are
//! ignored: a probe of 127.0.0.1 goes straight there), an answer naming another service is
//! foreign. Read-only: it never starts, stops or signals a service, and never opens a token
//! file.

pub mod contract;

use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

const PROBE_TIMEOUT: Duration = Duration::from_secs(2);
const DESCRIPTOR_LIMIT: u64 = 256 * 1024;
const ANSWER_LIMIT: u64 = 256 * 1024;
const MAX_DESCRIPTORS: usize = 64;

/// What the Services view says of a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum ServiceState {
    Ready,
    Degraded,
    Down,
    Invalid,
    Foreign,
    NotProbed,
}

/// One service as the Services view shows it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ServiceView {
    /// The descriptor's file name.
    pub file: String,
    pub id: Option<String>,
    pub instance: Option<String>,
    pub name: Option<String>,
    pub origin: Option<String>,
    pub placement: String,
    pub manager: Option<String>,
    pub state: ServiceState,
    /// Why, in words.
    pub detail: String,
    /// The service's own status word (`starting`, `ready`, `degraded`, `stopping`).
    pub reported: Option<String>,
    pub version: Option<String>,
    pub degraded: Vec<String>,
}

/// Reads, validates and probes every descriptor in `dir` (probes run in parallel).
pub fn list(dir: &Path) -> Vec<ServiceView> {
    let mut files: Vec<_> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_str()
                    .is_some_and(companion_sessions::services::is_descriptor_name)
                    && e.file_type().is_ok_and(|t| !t.is_dir())
            })
            .map(|e| e.path())
            .collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    files.truncate(MAX_DESCRIPTORS);
    std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .iter()
            .map(|path| scope.spawn(move || inspect(path)))
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    })
}

fn text(doc: &Value, pointer: &str) -> Option<String> {
    doc.pointer(pointer)
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// One descriptor: validated, then probed when local.
pub fn inspect(path: &Path) -> ServiceView {
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut view = ServiceView {
        file,
        id: None,
        instance: None,
        name: None,
        origin: None,
        placement: "local".into(),
        manager: None,
        state: ServiceState::Invalid,
        detail: String::new(),
        reported: None,
        version: None,
        degraded: Vec::new(),
    };
    let bytes = match read_bounded(path, DESCRIPTOR_LIMIT) {
        Ok(bytes) => bytes,
        Err(why) => {
            view.detail = format!("The descriptor cannot be read ({why}).");
            return view;
        }
    };
    let doc: Value = match serde_json::from_slice(&bytes).map_err(|e| e.to_string()) {
        Ok(doc) => doc,
        Err(why) => {
            view.detail = format!("The descriptor does not read as JSON ({why}).");
            return view;
        }
    };
    view.id = text(&doc, "/id");
    view.instance = text(&doc, "/instance");
    view.name = text(&doc, "/name");
    view.origin = text(&doc, "/origin");
    view.placement = text(&doc, "/placement").unwrap_or_else(|| "local".into());
    view.manager = text(&doc, "/lifecycle/manager");
    let descriptor = match contract::descriptor(&doc) {
        Ok(descriptor) => descriptor,
        Err(why) => {
            view.detail = format!("The descriptor does not follow fabric-service/0.1: {why}");
            return view;
        }
    };
    let origin = descriptor.origin.clone();
    if !companion_sessions::services::origin_is_loopback(&origin) {
        view.state = ServiceState::NotProbed;
        view.detail = "A remote service: the dashboard probes local services only.".into();
        return view;
    }
    probe(&mut view, &origin);
    view
}

fn probe(view: &mut ServiceView, origin: &str) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(PROBE_TIMEOUT))
        .max_redirects(0)
        .http_status_as_error(false)
        // Never a proxy: the environment's HTTP_PROXY / ALL_PROXY / http_proxy would send a
        // probe of 127.0.0.1 elsewhere, showing wrong states and leaking ids and ports.
        .proxy(None)
        .build()
        .into();
    let url = format!("{origin}/.well-known/fabric-service");
    let mut response = match agent.get(&url).call() {
        Ok(r) => r,
        Err(e) => {
            view.state = ServiceState::Down;
            view.detail = format!("No answer at {origin} ({}).", short_error(&e));
            return;
        }
    };
    let status = response.status().as_u16();
    if status != 200 {
        view.state = ServiceState::Down;
        view.detail = if (300..400).contains(&status) {
            format!("{origin} answered with a redirect ({status}); redirects are not followed.")
        } else {
            format!("{origin} answered HTTP {status}.")
        };
        return;
    }
    let body = response
        .body_mut()
        .with_config()
        .limit(ANSWER_LIMIT)
        .read_to_vec();
    let answer: Value = match body
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()))
    {
        Ok(v) => v,
        Err(why) => {
            view.state = ServiceState::Invalid;
            view.detail = format!("The answer is not JSON ({why}).");
            return;
        }
    };
    let answer = match contract::well_known(&answer) {
        Ok(answer) => answer,
        Err(why) => {
            view.state = ServiceState::Invalid;
            view.detail = format!("The answer does not follow the contract: {why}");
            return;
        }
    };
    let service = &answer.service;
    if Some(&service.id) != view.id.as_ref() || Some(&service.instance) != view.instance.as_ref() {
        view.state = ServiceState::Foreign;
        view.detail = format!(
            "Something else answers at {origin}: it says it is {}.{}, not this service.",
            service.id, service.instance
        );
        return;
    }
    view.version = Some(service.version.clone());
    view.reported = Some(answer.status.as_str().to_string());
    view.degraded = answer
        .degraded
        .iter()
        .map(|d| format!("{}: {}", d.source, d.reason))
        .collect();
    (view.state, view.detail) = match answer.status {
        contract::ServiceStatus::Ready => (ServiceState::Ready, "Ready.".to_string()),
        contract::ServiceStatus::Degraded => (
            ServiceState::Degraded,
            "Running, with problems.".to_string(),
        ),
        contract::ServiceStatus::Starting => (ServiceState::Degraded, "Starting up.".to_string()),
        contract::ServiceStatus::Stopping => (ServiceState::Degraded, "Stopping.".to_string()),
    };
}

fn short_error(e: &ureq::Error) -> String {
    match e {
        ureq::Error::Timeout(_) => "timed out after 2 s".into(),
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            "connection refused".into()
        }
        other => other.to_string(),
    }
}

fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    // The core's one careful read: never blocks on a FIFO or a device.
    let bytes = companion_platform::fsutil::read_bounded_strict(path, limit + 1)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| "it is gone".to_string())?;
    if bytes.len() as u64 > limit {
        return Err(format!("larger than {limit} bytes"));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;

    const FIXTURES: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fabric-contract/fixtures"
    );

    fn fixture(name: &str) -> Value {
        serde_json::from_str(&std::fs::read_to_string(format!("{FIXTURES}/{name}")).unwrap())
            .unwrap()
    }

    #[test]
    fn contract_fixtures_read_as_catalogued() {
        let catalogue = fixture("catalogue.json");
        let entries = catalogue
            .get("fixtures")
            .and_then(Value::as_array)
            .or_else(|| catalogue.as_array())
            .expect("catalogue entries")
            .clone();
        let mut checked = 0;
        for entry in entries {
            let schema = entry["schema"].as_str().unwrap();
            let doc = fixture(entry["path"].as_str().unwrap());
            let valid = match schema {
                "service-descriptor.schema.json" => contract::descriptor(&doc).is_ok(),
                "service-well-known.schema.json" => contract::well_known(&doc).is_ok(),
                _ => continue,
            };
            assert_eq!(
                valid,
                entry["valid"].as_bool().unwrap(),
                "{}",
                entry["path"]
            );
            checked += 1;
        }
        assert!(checked >= 6, "checked {checked}");
    }

    /// Serves one canned answer per connection, forever (until the test ends).
    fn serve(answer: String) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                let mut stream = stream;
                let _ = stream.write_all(answer.as_bytes());
            }
        });
        port
    }

    fn http_json(body: &Value) -> String {
        let body = body.to_string();
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    }

    fn descriptor(dir: &Path, id: &str, port: u16) -> std::path::PathBuf {
        let mut doc = fixture("positive/service-descriptor-systemd.json");
        doc["id"] = id.into();
        doc["origin"] = format!("http://127.0.0.1:{port}").into();
        let path = dir.join(format!("{id}.default.json"));
        std::fs::write(&path, doc.to_string()).unwrap();
        path
    }

    #[test]
    fn probes_ready_degraded_foreign_down_redirect_and_invalid() {
        let dir = std::env::temp_dir().join(format!("fc-services-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut answer = fixture("positive/service-well-known-capabilities.json");
        answer["service"]["id"] = "example-agent".into();
        let degraded = serve(http_json(&answer));
        let mut ready_answer = answer.clone();
        ready_answer["status"] = "ready".into();
        ready_answer["degraded"] = serde_json::json!([]);
        let ready = serve(http_json(&ready_answer));
        let redirect = serve(
            "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:1/\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                .into(),
        );
        let closed = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();

        let v = inspect(&descriptor(&dir, "example-agent", degraded));
        assert_eq!(v.state, ServiceState::Degraded, "{}", v.detail);
        assert_eq!(v.degraded.len(), 1);
        assert_eq!(
            inspect(&descriptor(&dir, "example-agent", ready)).state,
            ServiceState::Ready
        );
        assert_eq!(
            inspect(&descriptor(&dir, "other-agent", ready)).state,
            ServiceState::Foreign
        );
        assert_eq!(
            inspect(&descriptor(&dir, "gone-agent", closed)).state,
            ServiceState::Down
        );
        assert_eq!(
            inspect(&descriptor(&dir, "moved-agent", redirect)).state,
            ServiceState::Down
        );
        std::fs::write(
            dir.join("bad.default.json"),
            "{\"protocol\":\"fabric-service/0.1\"}",
        )
        .unwrap();
        assert_eq!(
            inspect(&dir.join("bad.default.json")).state,
            ServiceState::Invalid
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
