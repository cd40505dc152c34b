//! The Fabric Agent Contract's service documents as typed Rust: a service descriptor
//! (`fabric-service/0.1`, the files in Fabric's `services/` folder) and the answer at
//! `/.well-known/fabric-service`. [`descriptor`] and [`well_known`] accept exactly what the
//! contract's schemas accept — every required field, enum, pattern, length, format
//! (`date-time`, `uri`) and conditional rule, no unknown field — and say why not in one line.
//!
//! This is product code written from the contract's rules; the schemas themselves are test
//! data (`tests/fabric-contract`, AGPL-3.0) and are never embedded. `tests/contract_agreement.rs`
//! proves this module and the schemas agree on every fixture and on crafted variants that
//! break each rule once.

mod shapes;

use shapes::{
    check_argv, check_date_time, check_extensions, check_instance, check_len, check_local_path,
    check_origin_path, check_service_id, is_capability_name, is_header_name, is_integer_at_least,
    is_semver, is_sha256,
};
pub use shapes::{is_date_time, is_local_origin, is_remote_origin, is_uri};

use serde::Deserialize;
use serde::de::Deserializer;
use serde_json::{Map, Number, Value};

/// Why a document does not follow the contract: one line, naming the field (never a value).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ContractError(pub String);

fn fail<T>(what: impl Into<String>) -> Result<T, ContractError> {
    Err(ContractError(what.into()))
}

/// An optional field that, when present, must be of its type (`null` is not absent).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// A required field that may be `null`.
fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    Option::<T>::deserialize(d)
}

/// The only protocol there is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum Protocol {
    #[serde(rename = "fabric-service/0.1")]
    V0_1,
}

/// Where the service runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    Local,
    Remote,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum AuthScheme {
    Bearer,
    #[serde(rename = "none")]
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Manager {
    Launchd,
    Systemd,
    TaskScheduler,
    None,
}

impl Manager {
    pub fn as_str(self) -> &'static str {
        match self {
            Manager::Launchd => "launchd",
            Manager::Systemd => "systemd",
            Manager::TaskScheduler => "task-scheduler",
            Manager::None => "none",
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Auth {
    pub token_file: String,
    #[serde(default, deserialize_with = "present")]
    pub header: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub scheme: Option<AuthScheme>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Lifecycle {
    pub manager: Manager,
    #[serde(default, deserialize_with = "present")]
    pub label: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub plist: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub unit: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub task: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServicePaths {
    pub data: String,
    #[serde(default, deserialize_with = "present")]
    pub config: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub cache: Option<String>,
    pub logs: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Commands {
    #[serde(default, deserialize_with = "present")]
    pub doctor: Option<Vec<String>>,
    #[serde(default, deserialize_with = "present")]
    pub update: Option<Vec<String>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Source {
    #[serde(default, deserialize_with = "present")]
    pub repository: Option<String>,
}

/// A service descriptor (`service-descriptor.schema.json`).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Descriptor {
    pub protocol: Protocol,
    pub id: String,
    pub instance: String,
    pub name: String,
    #[serde(default, deserialize_with = "present")]
    pub summary: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub placement: Option<Placement>,
    pub origin: String,
    pub auth: Auth,
    pub lifecycle: Lifecycle,
    #[serde(default, deserialize_with = "present")]
    pub paths: Option<ServicePaths>,
    #[serde(default, deserialize_with = "present")]
    pub commands: Option<Commands>,
    #[serde(default, deserialize_with = "present")]
    pub source: Option<Source>,
    #[serde(default, deserialize_with = "present")]
    pub fabric_manifest: Option<String>,
    pub installed_at: String,
    pub installed_by: String,
    #[serde(default, deserialize_with = "present")]
    pub extensions: Option<Map<String, Value>>,
}

impl Descriptor {
    /// `local` unless the descriptor says `remote`.
    pub fn placement(&self) -> Placement {
        self.placement.unwrap_or(Placement::Local)
    }
}

/// The service's own status word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServiceStatus {
    Starting,
    Ready,
    Degraded,
    Stopping,
}

impl ServiceStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ServiceStatus::Starting => "starting",
            ServiceStatus::Ready => "ready",
            ServiceStatus::Degraded => "degraded",
            ServiceStatus::Stopping => "stopping",
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Build {
    #[serde(default, deserialize_with = "present")]
    pub commit: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub digest: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub dirty: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    pub built_at: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServiceIdentity {
    pub id: String,
    pub instance: String,
    pub name: String,
    pub version: String,
    pub build: Build,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Process {
    pub pid: Number,
    pub started_at: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DegradedItem {
    pub source: String,
    pub reason: String,
}

/// A summary value: a number, or a short text.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum SummaryValue {
    Number(Number),
    Text(String),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SummaryItem {
    pub label: String,
    pub value: SummaryValue,
    #[serde(default, deserialize_with = "present")]
    pub attention: Option<bool>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PathSurface {
    pub path: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Dashboard {
    pub path: String,
    pub login: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum McpTransport {
    #[serde(rename = "streamable-http")]
    StreamableHttp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum McpAuth {
    Descriptor,
    Own,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Mcp {
    pub path: String,
    pub transport: McpTransport,
    #[serde(default, deserialize_with = "present")]
    pub capabilities: Option<Vec<String>>,
    #[serde(default, deserialize_with = "present")]
    pub auth: Option<McpAuth>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Events {
    pub path: String,
    #[serde(default, deserialize_with = "present")]
    pub stream: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Surfaces {
    #[serde(default, deserialize_with = "present")]
    pub dashboard: Option<Dashboard>,
    #[serde(default, deserialize_with = "present")]
    pub mcp: Option<Mcp>,
    pub events: Events,
    #[serde(default, deserialize_with = "present")]
    pub usage: Option<PathSurface>,
    #[serde(default, deserialize_with = "present")]
    pub operator_channel: Option<PathSurface>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Update {
    #[serde(deserialize_with = "nullable")]
    pub available: Option<String>,
}

/// The answer at `/.well-known/fabric-service` (`service-well-known.schema.json`).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WellKnown {
    pub protocol: Protocol,
    pub service: ServiceIdentity,
    pub process: Process,
    pub status: ServiceStatus,
    pub degraded: Vec<DegradedItem>,
    #[serde(default, deserialize_with = "present")]
    pub summary: Option<Vec<SummaryItem>>,
    pub surfaces: Surfaces,
    #[serde(default, deserialize_with = "present")]
    pub update: Option<Update>,
    #[serde(default, deserialize_with = "present")]
    pub extensions: Option<Map<String, Value>>,
}

/// Reads and checks a service descriptor.
pub fn descriptor(doc: &Value) -> Result<Descriptor, ContractError> {
    let d: Descriptor = typed(doc)?;
    check_service_id("id", &d.id)?;
    check_instance("instance", &d.instance)?;
    check_len("name", &d.name, 1, 80)?;
    if let Some(summary) = &d.summary {
        check_len("summary", summary, 0, 200)?;
    }
    if !is_local_origin(&d.origin) && !is_remote_origin(&d.origin) {
        return fail("origin: must be http://127.0.0.1:<port> or https://<dns name>[:<port>]");
    }
    check_local_path("auth.tokenFile", &d.auth.token_file)?;
    if let Some(header) = &d.auth.header {
        if !is_header_name(header) {
            return fail("auth.header: not a header name");
        }
        if header != "Authorization" && d.auth.scheme != Some(AuthScheme::None) {
            return fail("auth.scheme: must be \"none\" with a header other than Authorization");
        }
    }
    check_lifecycle(&d.lifecycle)?;
    if let Some(paths) = &d.paths {
        check_local_path("paths.data", &paths.data)?;
        if let Some(config) = &paths.config {
            check_local_path("paths.config", config)?;
        }
        if let Some(cache) = &paths.cache {
            check_local_path("paths.cache", cache)?;
        }
        if paths.logs.len() > 16 {
            return fail("paths.logs: at most 16");
        }
        for log in &paths.logs {
            check_local_path("paths.logs", log)?;
        }
    }
    if let Some(commands) = &d.commands {
        if let Some(doctor) = &commands.doctor {
            check_argv("commands.doctor", doctor)?;
        }
        if let Some(update) = &commands.update {
            check_argv("commands.update", update)?;
        }
    }
    if let Some(repository) = d.source.as_ref().and_then(|s| s.repository.as_ref())
        && !is_uri(repository)
    {
        return fail("source.repository: not a URI");
    }
    if let Some(manifest) = &d.fabric_manifest {
        check_local_path("fabricManifest", manifest)?;
    }
    check_date_time("installedAt", &d.installed_at)?;
    check_len("installedBy", &d.installed_by, 1, 200)?;
    check_extensions(d.extensions.as_ref())?;
    match d.placement {
        Some(Placement::Remote) => {
            if !is_remote_origin(&d.origin) {
                return fail("origin: a remote service's origin is https://<dns name>[:<port>]");
            }
            if d.lifecycle.manager != Manager::None {
                return fail("lifecycle.manager: a remote service's manager is \"none\"");
            }
            if d.commands.as_ref().is_some_and(|c| c.update.is_some()) {
                return fail("commands.update: a remote service has no update command");
            }
        }
        _ => {
            if d.paths.is_none() {
                return fail("paths: required for a local service");
            }
            if !is_local_origin(&d.origin) {
                return fail("origin: a local service's origin is http://127.0.0.1:<port>");
            }
        }
    }
    Ok(d)
}

/// Reads and checks a well-known answer.
pub fn well_known(doc: &Value) -> Result<WellKnown, ContractError> {
    let w: WellKnown = typed(doc)?;
    let s = &w.service;
    check_service_id("service.id", &s.id)?;
    check_instance("service.instance", &s.instance)?;
    check_len("service.name", &s.name, 1, 80)?;
    if !is_semver(&s.version) {
        return fail("service.version: not a semantic version");
    }
    if s.build.commit.is_none() && s.build.digest.is_none() {
        return fail("service.build: needs a commit or a digest");
    }
    if let Some(commit) = &s.build.commit
        && !(7..=40).contains(&commit.len())
            | !commit
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return fail("service.build.commit: not a commit id");
    }
    if let Some(digest) = &s.build.digest
        && !is_sha256(digest)
    {
        return fail("service.build.digest: not sha256:<64 hex>");
    }
    if let Some(built_at) = &s.build.built_at {
        check_date_time("service.build.builtAt", built_at)?;
    }
    if !is_integer_at_least(&w.process.pid, 1) {
        return fail("process.pid: not a positive integer");
    }
    check_date_time("process.startedAt", &w.process.started_at)?;
    if w.degraded.len() > 64 {
        return fail("degraded: at most 64");
    }
    for item in &w.degraded {
        check_len("degraded.source", &item.source, 1, 80)?;
        check_len("degraded.reason", &item.reason, 1, 300)?;
    }
    if let Some(summary) = &w.summary {
        if summary.len() > 6 {
            return fail("summary: at most 6");
        }
        for item in summary {
            check_len("summary.label", &item.label, 1, 40)?;
            if let SummaryValue::Text(text) = &item.value {
                check_len("summary.value", text, 0, 40)?;
            }
        }
    }
    let surfaces = &w.surfaces;
    if let Some(dashboard) = &surfaces.dashboard {
        check_origin_path("surfaces.dashboard.path", &dashboard.path)?;
    }
    if let Some(mcp) = &surfaces.mcp {
        check_origin_path("surfaces.mcp.path", &mcp.path)?;
        if let Some(capabilities) = &mcp.capabilities {
            if capabilities.len() > 256 {
                return fail("surfaces.mcp.capabilities: at most 256");
            }
            for (i, name) in capabilities.iter().enumerate() {
                if !is_capability_name(name) {
                    return fail("surfaces.mcp.capabilities: not a capability name");
                }
                if capabilities[..i].contains(name) {
                    return fail("surfaces.mcp.capabilities: listed twice");
                }
            }
        }
    }
    check_origin_path("surfaces.events.path", &surfaces.events.path)?;
    if let Some(stream) = &surfaces.events.stream {
        check_origin_path("surfaces.events.stream", stream)?;
    }
    if let Some(usage) = &surfaces.usage {
        check_origin_path("surfaces.usage.path", &usage.path)?;
    }
    if let Some(channel) = &surfaces.operator_channel {
        check_origin_path("surfaces.operatorChannel.path", &channel.path)?;
    }
    if let Some(available) = w.update.as_ref().and_then(|u| u.available.as_ref())
        && !is_semver(available)
    {
        return fail("update.available: not a semantic version");
    }
    check_extensions(w.extensions.as_ref())?;
    Ok(w)
}

/// The document's shape: types, required fields, enums, no unknown fields.
fn typed<T: for<'de> Deserialize<'de>>(doc: &Value) -> Result<T, ContractError> {
    T::deserialize(doc).map_err(|e: serde_json::Error| ContractError(shape_message(&e)))
}

/// serde's message without any value it may quote (a value can be anything).
fn shape_message(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.split_once(", expected") {
        Some((_, expected))
            if text.starts_with("invalid type") || text.starts_with("invalid value") =>
        {
            format!("a value of the wrong type or outside the contract (expected{expected})")
        }
        _ => text,
    }
}

fn check_lifecycle(l: &Lifecycle) -> Result<(), ContractError> {
    if let Some(label) = &l.label {
        let b = label.as_bytes();
        let ok = (3..=255).contains(&b.len())
            && b[0].is_ascii_alphanumeric()
            && b[1..]
                .iter()
                .all(|c| c.is_ascii_alphanumeric() || b"._-".contains(c));
        if !ok {
            return fail("lifecycle.label: not a launchd label");
        }
    }
    if let Some(plist) = &l.plist {
        check_local_path("lifecycle.plist", plist)?;
        if !plist.ends_with(".plist") {
            return fail("lifecycle.plist: must end in .plist");
        }
    }
    if let Some(unit) = &l.unit {
        let ok = unit.strip_suffix(".service").is_some_and(|stem| {
            let b = stem.as_bytes();
            (1..=251).contains(&b.len())
                && b[0].is_ascii_alphanumeric()
                && b[1..]
                    .iter()
                    .all(|c| c.is_ascii_alphanumeric() || b":_.@-".contains(c))
        });
        if !ok {
            return fail("lifecycle.unit: not a systemd unit name");
        }
    }
    if let Some(task) = &l.task {
        let ok = task.strip_prefix('\\').is_some_and(|rest| {
            let n = rest.chars().count();
            (1..=254).contains(&n)
                && rest
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || b" ._\\-".contains(&c))
        });
        if !ok {
            return fail("lifecycle.task: not a Scheduled Task path");
        }
    }
    match l.manager {
        Manager::Launchd if l.label.is_none() || l.plist.is_none() => {
            return fail("lifecycle: launchd needs label and plist");
        }
        Manager::Systemd if l.unit.is_none() => return fail("lifecycle: systemd needs unit"),
        Manager::TaskScheduler if l.task.is_none() => {
            return fail("lifecycle: task-scheduler needs task");
        }
        _ => {}
    }
    if l.manager != Manager::Systemd && l.unit.is_some() {
        return fail("lifecycle.unit: only for systemd");
    }
    if l.manager != Manager::TaskScheduler && l.task.is_some() {
        return fail("lifecycle.task: only for task-scheduler");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_patterns() {
        assert!(is_date_time("2026-10-01T09:00:00Z"));
        assert!(is_date_time("2026-10-01t09:00:00.250+02:00"));
        assert!(is_date_time("2016-12-31T23:59:60Z"));
        assert!(!is_date_time("2026-02-30T09:00:00Z"));
        assert!(!is_date_time("2026-10-01 09:00:00Z"));
        assert!(!is_date_time("2026-10-01T09:00:00"));
        assert!(!is_date_time("2026-10-01T12:59:60Z"));
        assert!(is_local_origin("http://127.0.0.1:47070"));
        assert!(!is_local_origin("http://127.0.0.1:80"));
        assert!(!is_local_origin("http://127.0.0.1:047070"));
        assert!(is_remote_origin("https://agents.example.com:8443"));
        assert!(!is_remote_origin("https://1.2.3.4"));
        assert!(!is_remote_origin("https://Example.com"));
        assert!(is_semver("1.2.3-beta.1+build-5"));
        assert!(!is_semver("01.2.3"));
        assert!(is_uri("https://example.com/x?y=%20"));
        assert!(!is_uri("no scheme"));
        assert!(!is_uri("https://example.com/%zz"));
    }
}
