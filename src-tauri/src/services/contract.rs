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

fn check_len(what: &str, text: &str, min: usize, max: usize) -> Result<(), ContractError> {
    let n = text.chars().count();
    if n < min || n > max {
        return fail(format!("{what}: length must be {min} to {max}"));
    }
    Ok(())
}

/// `^[a-z]` followed by `[a-z0-9-]`, `min`..=`max` characters in all.
fn is_lower_name(text: &str, min: usize, max: usize) -> bool {
    let b = text.as_bytes();
    (min..=max).contains(&b.len())
        && b[0].is_ascii_lowercase()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

fn check_service_id(what: &str, id: &str) -> Result<(), ContractError> {
    if !is_lower_name(id, 2, 63) {
        return fail(format!("{what}: not a service id"));
    }
    Ok(())
}

fn check_instance(what: &str, instance: &str) -> Result<(), ContractError> {
    if !is_lower_name(instance, 1, 32) {
        return fail(format!("{what}: not an instance name"));
    }
    Ok(())
}

fn check_local_path(what: &str, path: &str) -> Result<(), ContractError> {
    let b = path.as_bytes();
    let rooted = path.starts_with("~/")
        || path.starts_with("~\\")
        || path.starts_with('/')
        || (b.len() >= 3
            && b[0].is_ascii_alphabetic()
            && b[1] == b':'
            && (b[2] == b'/' || b[2] == b'\\'));
    if !rooted || path.contains('\0') || path.chars().count() > 1024 {
        return fail(format!("{what}: not an absolute or ~ path"));
    }
    Ok(())
}

fn check_origin_path(what: &str, path: &str) -> Result<(), ContractError> {
    let ok = path.starts_with('/')
        && !path[1..].starts_with('/')
        && !path.chars().any(char::is_whitespace)
        && path.chars().count() <= 2048;
    if !ok {
        return fail(format!("{what}: not a path on the origin"));
    }
    Ok(())
}

fn check_argv(what: &str, argv: &[String]) -> Result<(), ContractError> {
    if argv.is_empty() || argv.len() > 32 {
        return fail(format!("{what}: 1 to 32 arguments"));
    }
    for arg in argv {
        check_len(what, arg, 1, 1024)?;
    }
    Ok(())
}

fn check_extensions(extensions: Option<&Map<String, Value>>) -> Result<(), ContractError> {
    if extensions.is_some_and(|map| map.keys().any(|key| !is_uri(key))) {
        return fail("extensions: every key must be a URI");
    }
    Ok(())
}

fn check_date_time(what: &str, text: &str) -> Result<(), ContractError> {
    if !is_date_time(text) {
        return fail(format!("{what}: not an RFC 3339 date-time"));
    }
    Ok(())
}

/// `1`..=`65535` without leading zeros, at least `min_digits` digits.
fn is_port(text: &str, min_digits: usize) -> bool {
    (min_digits..=5).contains(&text.len())
        && !text.starts_with('0')
        && text.bytes().all(|b| b.is_ascii_digit())
        && text.parse::<u32>().is_ok_and(|p| p <= 65535)
}

/// `http://127.0.0.1:<100..=65535>`.
pub fn is_local_origin(origin: &str) -> bool {
    origin
        .strip_prefix("http://127.0.0.1:")
        .is_some_and(|port| is_port(port, 3))
}

/// `https://<dns name of lowercase labels>[:<1..=65535>]`, no path.
pub fn is_remote_origin(origin: &str) -> bool {
    let Some(rest) = origin.strip_prefix("https://") else {
        return false;
    };
    let (host, port) = match rest.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (rest, None),
    };
    if port.is_some_and(|p| !is_port(p, 1)) {
        return false;
    }
    let labels: Vec<&str> = host.split('.').collect();
    let Some((tld, names)) = labels.split_last() else {
        return false;
    };
    !names.is_empty()
        && (2..=63).contains(&tld.len())
        && tld.bytes().all(|b| b.is_ascii_lowercase())
        && names.iter().all(|label| {
            let b = label.as_bytes();
            (1..=63).contains(&b.len())
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
                && b[0] != b'-'
                && b[b.len() - 1] != b'-'
        })
}

fn is_header_name(text: &str) -> bool {
    let b = text.as_bytes();
    (1..=64).contains(&b.len())
        && b[0].is_ascii_alphabetic()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'-')
}

fn is_capability_name(text: &str) -> bool {
    let b = text.as_bytes();
    (2..=128).contains(&b.len())
        && b[0].is_ascii_lowercase()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"._-".contains(c))
}

fn is_sha256(text: &str) -> bool {
    text.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

fn is_numeric_identifier(text: &str) -> bool {
    !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'))
}

fn is_semver(text: &str) -> bool {
    let ident_chars = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
    };
    let (rest, build) = match text.split_once('+') {
        Some((rest, build)) => (rest, Some(build)),
        None => (text, None),
    };
    if build.is_some_and(|b| !ident_chars(b)) {
        return false;
    }
    let (core, pre) = match rest.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (rest, None),
    };
    if pre.is_some_and(|p| !ident_chars(p)) {
        return false;
    }
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3 && parts.iter().all(|p| is_numeric_identifier(p))
}

fn is_integer_at_least(n: &Number, min: i64) -> bool {
    if let Some(i) = n.as_i64() {
        return i >= min;
    }
    if n.as_u64().is_some() {
        return true;
    }
    n.as_f64()
        .is_some_and(|f| f.fract() == 0.0 && f >= min as f64)
}

fn two_digits(b: &[u8]) -> Option<u32> {
    (b.len() == 2 && b.iter().all(u8::is_ascii_digit))
        .then(|| u32::from(b[0] - b'0') * 10 + u32::from(b[1] - b'0'))
}

/// RFC 3339 `date-time` (as JSON Schema's `format` means it): `YYYY-MM-DDTHH:MM:SS[.frac]`
/// then `Z` or `±HH:MM`; `T`/`Z` in either case; a leap second only at 23:59 UTC.
pub fn is_date_time(text: &str) -> bool {
    let b = text.as_bytes();
    let Some(t) = b.iter().position(|&c| c == b'T' || c == b't') else {
        return false;
    };
    let (date, time) = (&b[..t], &b[t + 1..]);
    if date.len() != 10 || date[4] != b'-' || date[7] != b'-' {
        return false;
    }
    let year = date[..4].iter().all(u8::is_ascii_digit).then(|| {
        date[..4]
            .iter()
            .fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0'))
    });
    let (Some(year), Some(month), Some(day)) =
        (year, two_digits(&date[5..7]), two_digits(&date[8..10]))
    else {
        return false;
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    if day == 0 || day > days {
        return false;
    }
    if time.len() < 9 || time[2] != b':' || time[5] != b':' {
        return false;
    }
    let (Some(hour), Some(minute), Some(second)) = (
        two_digits(&time[..2]),
        two_digits(&time[3..5]),
        two_digits(&time[6..8]),
    ) else {
        return false;
    };
    if hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    let mut i = 8;
    if time.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while time.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    let offset = &time[i..];
    let utc_minutes = |h: u32, m: u32, sign: i64, oh: u32, om: u32| {
        let local = i64::from(h * 60 + m);
        (local + sign * i64::from(oh * 60 + om)).rem_euclid(24 * 60)
    };
    match offset {
        [b'Z' | b'z'] => second != 60 || (hour == 23 && minute == 59),
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let (Some(oh), Some(om)) = (two_digits(&[*h1, *h2]), two_digits(&[*m1, *m2])) else {
                return false;
            };
            if oh > 23 || om > 59 {
                return false;
            }
            // Local time minus the offset is UTC: a `+` offset subtracts.
            let sign = if *sign == b'+' { -1 } else { 1 };
            second != 60 || utc_minutes(hour, minute, sign, oh, om) == 23 * 60 + 59
        }
        _ => false,
    }
}

/// An absolute URI by RFC 3986's characters: a scheme (`ALPHA *( ALPHA / DIGIT / "+" / "-" /
/// "." )`), `:`, then only unreserved, reserved and percent-encoded characters.
pub fn is_uri(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once(':') else {
        return false;
    };
    let s = scheme.as_bytes();
    if s.is_empty()
        || !s[0].is_ascii_alphabetic()
        || !s
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || b"+-.".contains(c))
    {
        return false;
    }
    let r = rest.as_bytes();
    let mut i = 0;
    while i < r.len() {
        let c = r[i];
        if c == b'%' {
            if !(r.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && r.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
            {
                return false;
            }
            i += 3;
            continue;
        }
        if !(c.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=".contains(&c)) {
            return false;
        }
        i += 1;
    }
    true
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
