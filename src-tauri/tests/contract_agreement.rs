//! The typed contract checks (`fabric_companion::services::contract`) and the contract's own
//! JSON Schemas (`tests/fabric-contract`, AGPL-3.0 test data, loaded here at test time only)
//! agree: on every service fixture the catalogue lists, and on crafted variants of the
//! positive fixtures that break each rule once (and a few that stay valid at a boundary).
//! Each variant also states what the contract says of it, so neither side can drift alone.

use std::path::PathBuf;

use fabric_companion::services::contract;
use serde_json::{Value, json};

const BASE: &str = "https://fabric.passioncode.ai/agent-contract/0.1.0/schemas/";

fn contract_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fabric-contract")
}

fn read(path: PathBuf) -> Value {
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

struct Schemas {
    descriptor: jsonschema::Validator,
    well_known: jsonschema::Validator,
}

/// Every schema in one registry keyed by its `$id`, formats checked, no network.
fn schemas() -> Schemas {
    let mut registry = jsonschema::Registry::new();
    for entry in std::fs::read_dir(contract_dir().join("schemas")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        registry = registry.add(format!("{BASE}{name}"), read(path)).unwrap();
    }
    let registry = registry.prepare().unwrap();
    let build = |name: &str| {
        jsonschema::options()
            .with_registry(&registry)
            .should_validate_formats(true)
            .build(&json!({ "$ref": format!("{BASE}{name}") }))
            .unwrap()
    };
    Schemas {
        descriptor: build("service-descriptor.schema.json"),
        well_known: build("service-well-known.schema.json"),
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Doc {
    Descriptor,
    WellKnown,
}

fn verdicts(schemas: &Schemas, kind: Doc, doc: &Value) -> (bool, bool) {
    match kind {
        Doc::Descriptor => (
            schemas.descriptor.is_valid(doc),
            contract::descriptor(doc).is_ok(),
        ),
        Doc::WellKnown => (
            schemas.well_known.is_valid(doc),
            contract::well_known(doc).is_ok(),
        ),
    }
}

#[test]
fn every_catalogued_fixture_reads_the_same_both_ways() {
    let schemas = schemas();
    let catalogue = read(contract_dir().join("fixtures/catalogue.json"));
    let mut checked = 0;
    for entry in catalogue.as_array().unwrap() {
        let kind = match entry["schema"].as_str().unwrap() {
            "service-descriptor.schema.json" => Doc::Descriptor,
            "service-well-known.schema.json" => Doc::WellKnown,
            _ => continue,
        };
        let doc = read(
            contract_dir()
                .join("fixtures")
                .join(entry["path"].as_str().unwrap()),
        );
        let expected = entry["valid"].as_bool().unwrap();
        let (schema, typed) = verdicts(&schemas, kind, &doc);
        assert_eq!(schema, expected, "schema on {}", entry["path"]);
        assert_eq!(typed, expected, "typed on {}", entry["path"]);
        checked += 1;
    }
    assert_eq!(checked, 9);
}

/// One change to a document: set a JSON pointer to a value, or remove it (`None`).
type Edit = (&'static str, Option<Value>);

fn apply(mut doc: Value, edits: &[Edit]) -> Value {
    for (pointer, value) in edits {
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        let target = if parent.is_empty() {
            &mut doc
        } else {
            doc.pointer_mut(parent)
                .unwrap_or_else(|| panic!("{parent}"))
        };
        match (target, value) {
            (Value::Object(map), Some(v)) => {
                map.insert(key.to_string(), v.clone());
            }
            (Value::Object(map), None) => {
                map.remove(key);
            }
            (Value::Array(items), Some(v)) => items[key.parse::<usize>().unwrap()] = v.clone(),
            (Value::Array(items), None) => {
                items.remove(key.parse::<usize>().unwrap());
            }
            _ => panic!("cannot edit {pointer}"),
        }
    }
    doc
}

fn s(n: usize) -> Value {
    Value::String("a".repeat(n))
}

fn check(kind: Doc, base: &Value, cases: &[(&str, bool, Vec<Edit>)]) {
    let schemas = schemas();
    let mut wrong = Vec::new();
    for (name, valid, edits) in cases {
        let doc = apply(base.clone(), edits);
        let (schema, typed) = verdicts(&schemas, kind, &doc);
        if schema != *valid || typed != *valid {
            wrong.push(format!(
                "{name}: expected {valid}, schema says {schema}, typed says {typed}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{kind:?}:\n{}", wrong.join("\n"));
}

#[test]
fn descriptor_rules_broken_one_at_a_time() {
    let base = read(contract_dir().join("fixtures/positive/service-descriptor-systemd.json"));
    let remote: Vec<Edit> = vec![
        ("/placement", Some(json!("remote"))),
        ("/origin", Some(json!("https://agents.example.com"))),
        ("/lifecycle", Some(json!({"manager": "none"}))),
        ("/paths", None),
    ];
    let with = |mut edits: Vec<Edit>, more: Vec<Edit>| {
        edits.extend(more);
        edits
    };
    let mut cases: Vec<(&str, bool, Vec<Edit>)> = vec![("as is", true, vec![])];
    for field in [
        "protocol",
        "id",
        "instance",
        "name",
        "origin",
        "auth",
        "lifecycle",
        "installedAt",
        "installedBy",
    ] {
        let pointer: &'static str = Box::leak(format!("/{field}").into_boxed_str());
        cases.push(("a required field missing", false, vec![(pointer, None)]));
    }
    cases.extend([
        ("another protocol", false, vec![("/protocol", Some(json!("fabric-service/0.2")))]),
        ("id upper case", false, vec![("/id", Some(json!("Bad-id")))]),
        ("id one letter", false, vec![("/id", Some(json!("a")))]),
        ("id two letters", true, vec![("/id", Some(json!("ab")))]),
        ("id 64 long", false, vec![("/id", Some(s(64)))]),
        ("id 63 long", true, vec![("/id", Some(s(63)))]),
        ("id underscore", false, vec![("/id", Some(json!("ab_c")))]),
        ("id a number", false, vec![("/id", Some(json!(12)))]),
        ("instance empty", false, vec![("/instance", Some(json!("")))]),
        ("instance 33", false, vec![("/instance", Some(s(33)))]),
        ("instance one letter", true, vec![("/instance", Some(json!("x")))]),
        ("name empty", false, vec![("/name", Some(json!("")))]),
        ("name 81", false, vec![("/name", Some(s(81)))]),
        ("name 80", true, vec![("/name", Some(s(80)))]),
        ("name 80 chars of 2 bytes", true, vec![("/name", Some(json!("é".repeat(80))))]),
        ("summary 201", false, vec![("/summary", Some(s(201)))]),
        ("summary null", false, vec![("/summary", Some(Value::Null))]),
        ("placement unknown", false, vec![("/placement", Some(json!("cloud")))]),
        ("placement local", true, vec![("/placement", Some(json!("local")))]),
        ("placement null", false, vec![("/placement", Some(Value::Null))]),
        ("port 80", false, vec![("/origin", Some(json!("http://127.0.0.1:80")))]),
        ("port 100", true, vec![("/origin", Some(json!("http://127.0.0.1:100")))]),
        ("port 65536", false, vec![("/origin", Some(json!("http://127.0.0.1:65536")))]),
        ("port 65535", true, vec![("/origin", Some(json!("http://127.0.0.1:65535")))]),
        ("port leading zero", false, vec![("/origin", Some(json!("http://127.0.0.1:08080")))]),
        ("localhost", false, vec![("/origin", Some(json!("http://localhost:8080")))]),
        ("a path after the origin", false, vec![("/origin", Some(json!("http://127.0.0.1:8080/")))]),
        ("https for a local service", false, vec![("/origin", Some(json!("https://agents.example.com")))]),
        ("remote", true, remote.clone()),
        ("remote on http", false, with(remote.clone(), vec![("/origin", Some(json!("http://127.0.0.1:8080")))])),
        ("remote on an IP", false, with(remote.clone(), vec![("/origin", Some(json!("https://1.2.3.4")))])),
        ("remote upper case", false, with(remote.clone(), vec![("/origin", Some(json!("https://Agents.example.com")))])),
        ("remote port 0", false, with(remote.clone(), vec![("/origin", Some(json!("https://a.example.com:0")))])),
        ("remote port 443", true, with(remote.clone(), vec![("/origin", Some(json!("https://a.example.com:443")))])),
        ("remote with a path", false, with(remote.clone(), vec![("/origin", Some(json!("https://a.example.com/x")))])),
        ("remote label ends in -", false, with(remote.clone(), vec![("/origin", Some(json!("https://a-.example.com")))])),
        ("remote under systemd", false, with(remote.clone(), vec![("/lifecycle", Some(json!({"manager": "systemd", "unit": "a.service"})))])),
        ("remote with an update command", false, with(remote.clone(), vec![("/commands/update", Some(json!(["x"])))])),
        ("remote with a doctor command", true, with(remote.clone(), vec![("/commands/doctor", Some(json!(["x"])))])),
        ("local without paths", false, vec![("/paths", None)]),
        ("no token file", false, vec![("/auth/tokenFile", None)]),
        ("relative token file", false, vec![("/auth/tokenFile", Some(json!("relative/token")))]),
        ("absolute token file", true, vec![("/auth/tokenFile", Some(json!("/var/x/token")))]),
        ("windows token file", true, vec![("/auth/tokenFile", Some(json!("C:\\x\\token")))]),
        ("tilde backslash token file", true, vec![("/auth/tokenFile", Some(json!("~\\x")))]),
        ("token file with NUL", false, vec![("/auth/tokenFile", Some(json!("/x\u{0}y")))]),
        ("token file 1025", false, vec![("/auth/tokenFile", Some(json!(format!("/{}", "a".repeat(1024)))))]),
        ("own header without scheme", false, vec![("/auth/scheme", None)]),
        ("own header with Bearer", false, vec![("/auth/scheme", Some(json!("Bearer")))]),
        ("Authorization with Bearer", true, vec![("/auth/header", Some(json!("Authorization"))), ("/auth/scheme", Some(json!("Bearer")))]),
        ("Authorization alone", true, vec![("/auth/header", Some(json!("Authorization"))), ("/auth/scheme", None)]),
        ("no header, no scheme", true, vec![("/auth/header", None), ("/auth/scheme", None)]),
        ("bad header name", false, vec![("/auth/header", Some(json!("1X")))]),
        ("another scheme", false, vec![("/auth/scheme", Some(json!("Basic")))]),
        ("auth with an extra key", false, vec![("/auth/extra", Some(json!(1)))]),
        ("another manager", false, vec![("/lifecycle/manager", Some(json!("cron")))]),
        ("systemd without unit", false, vec![("/lifecycle/unit", None)]),
        ("bad unit", false, vec![("/lifecycle/unit", Some(json!("example")))]),
        ("shortest unit", true, vec![("/lifecycle/unit", Some(json!("a.service")))]),
        ("unit with @", true, vec![("/lifecycle/unit", Some(json!("a@b.service")))]),
        ("unit under none", false, vec![("/lifecycle/manager", Some(json!("none")))]),
        ("none", true, vec![("/lifecycle", Some(json!({"manager": "none"})))]),
        ("launchd", true, vec![("/lifecycle", Some(json!({"manager": "launchd", "label": "ai.example.agent", "plist": "~/Library/LaunchAgents/ai.example.agent.plist"})))]),
        ("launchd without plist", false, vec![("/lifecycle", Some(json!({"manager": "launchd", "label": "ai.example.agent"})))]),
        ("plist not .plist", false, vec![("/lifecycle", Some(json!({"manager": "launchd", "label": "ai.example.agent", "plist": "/x/y.txt"})))]),
        ("label too short", false, vec![("/lifecycle", Some(json!({"manager": "launchd", "label": "ab", "plist": "/x/y.plist"})))]),
        ("label with a systemd unit", true, vec![("/lifecycle/label", Some(json!("abc")))]),
        ("task under systemd", false, vec![("/lifecycle/task", Some(json!("\\PassionCode\\x")))]),
        ("task-scheduler without task", false, vec![("/lifecycle", Some(json!({"manager": "task-scheduler"})))]),
        ("task-scheduler", true, vec![("/lifecycle", Some(json!({"manager": "task-scheduler", "task": "\\PassionCode\\example-agent.default"})))]),
        ("task without backslash", false, vec![("/lifecycle", Some(json!({"manager": "task-scheduler", "task": "PassionCode"})))]),
        ("task only a backslash", false, vec![("/lifecycle", Some(json!({"manager": "task-scheduler", "task": "\\"})))]),
        ("lifecycle with an extra key", false, vec![("/lifecycle/extra", Some(json!(1)))]),
        ("no logs", false, vec![("/paths/logs", None)]),
        ("no data", false, vec![("/paths/data", None)]),
        ("17 logs", false, vec![("/paths/logs", Some(json!(vec!["/l"; 17])))]),
        ("16 logs", true, vec![("/paths/logs", Some(json!(vec!["/l"; 16])))]),
        ("relative data", false, vec![("/paths/data", Some(json!("data")))]),
        ("relative config", false, vec![("/paths/config", Some(json!("config")))]),
        ("cache", true, vec![("/paths/cache", Some(json!("~/.cache/x")))]),
        ("paths with an extra key", false, vec![("/paths/extra", Some(json!("/x")))]),
        ("empty doctor", false, vec![("/commands/doctor", Some(json!([])))]),
        ("empty argument", false, vec![("/commands/doctor", Some(json!([""])))]),
        ("33 arguments", false, vec![("/commands/doctor", Some(json!(vec!["x"; 33])))]),
        ("an update command", true, vec![("/commands/update", Some(json!(["x", "update"])))]),
        ("commands with an extra key", false, vec![("/commands/extra", Some(json!(["x"])))]),
        ("repository not a URI", false, vec![("/source/repository", Some(json!("not a uri")))]),
        ("repository empty", false, vec![("/source/repository", Some(json!("")))]),
        ("source with an extra key", false, vec![("/source/extra", Some(json!(1)))]),
        ("relative manifest", false, vec![("/fabricManifest", Some(json!("fabric.json")))]),
        ("manifest", true, vec![("/fabricManifest", Some(json!("~/x/fabric.json")))]),
        ("month 13", false, vec![("/installedAt", Some(json!("2026-13-01T00:00:00Z")))]),
        ("no time", false, vec![("/installedAt", Some(json!("2026-09-28")))]),
        ("no offset", false, vec![("/installedAt", Some(json!("2026-09-28T18:00:00")))]),
        ("an offset", true, vec![("/installedAt", Some(json!("2026-09-28T18:00:00.5+02:00")))]),
        ("29 February of a common year", false, vec![("/installedAt", Some(json!("2026-02-29T18:00:00Z")))]),
        ("installedBy empty", false, vec![("/installedBy", Some(json!("")))]),
        ("installedBy 201", false, vec![("/installedBy", Some(s(201)))]),
        ("extension", true, vec![("/extensions", Some(json!({"https://example.com/ext": {"x": 1}})))]),
        ("extension key not a URI", false, vec![("/extensions", Some(json!({"not a uri": 1})))]),
        ("an unknown field", false, vec![("/color", Some(json!("blue")))]),
    ]);
    check(Doc::Descriptor, &base, &cases);
}

#[test]
fn well_known_rules_broken_one_at_a_time() {
    let base = read(contract_dir().join("fixtures/positive/service-well-known-capabilities.json"));
    let mut cases: Vec<(&str, bool, Vec<Edit>)> = vec![("as is", true, vec![])];
    for pointer in [
        "/protocol",
        "/service",
        "/process",
        "/status",
        "/degraded",
        "/surfaces",
        "/service/id",
        "/service/instance",
        "/service/name",
        "/service/version",
        "/service/build",
        "/process/pid",
        "/process/startedAt",
        "/surfaces/events",
        "/surfaces/events/path",
        "/surfaces/dashboard/login",
        "/surfaces/mcp/transport",
        "/update/available",
    ] {
        cases.push(("a required field missing", false, vec![(pointer, None)]));
    }
    cases.extend([
        (
            "another protocol",
            false,
            vec![("/protocol", Some(json!("fabric-service/1")))],
        ),
        ("bad id", false, vec![("/service/id", Some(json!("X")))]),
        (
            "bad instance",
            false,
            vec![("/service/instance", Some(json!("9")))],
        ),
        ("name 81", false, vec![("/service/name", Some(s(81)))]),
        (
            "version 1.2",
            false,
            vec![("/service/version", Some(json!("1.2")))],
        ),
        (
            "version leading zero",
            false,
            vec![("/service/version", Some(json!("01.2.3")))],
        ),
        (
            "version pre and build",
            true,
            vec![("/service/version", Some(json!("1.2.3-beta.1+exp-5")))],
        ),
        (
            "version empty pre-release",
            false,
            vec![("/service/version", Some(json!("1.2.3-")))],
        ),
        (
            "build without commit or digest",
            false,
            vec![("/service/build", Some(json!({"dirty": true})))],
        ),
        (
            "build with a digest",
            true,
            vec![(
                "/service/build",
                Some(json!({"digest": format!("sha256:{}", "a".repeat(64))})),
            )],
        ),
        (
            "bad digest",
            false,
            vec![("/service/build", Some(json!({"digest": "sha256:xyz"})))],
        ),
        (
            "commit upper case",
            false,
            vec![("/service/build/commit", Some(json!("8B80BE9")))],
        ),
        (
            "commit too short",
            false,
            vec![("/service/build/commit", Some(json!("8b80be")))],
        ),
        (
            "dirty a word",
            false,
            vec![("/service/build/dirty", Some(json!("yes")))],
        ),
        (
            "builtAt not a time",
            false,
            vec![("/service/build/builtAt", Some(json!("today")))],
        ),
        (
            "build with an extra key",
            false,
            vec![("/service/build/extra", Some(json!(1)))],
        ),
        (
            "service with an extra key",
            false,
            vec![("/service/extra", Some(json!(1)))],
        ),
        ("pid 0", false, vec![("/process/pid", Some(json!(0)))]),
        (
            "pid negative",
            false,
            vec![("/process/pid", Some(json!(-4)))],
        ),
        (
            "pid a string",
            false,
            vec![("/process/pid", Some(json!("12")))],
        ),
        ("pid 1.0", true, vec![("/process/pid", Some(json!(1.0)))]),
        ("pid 1.5", false, vec![("/process/pid", Some(json!(1.5)))]),
        (
            "startedAt leap second at noon",
            false,
            vec![("/process/startedAt", Some(json!("2026-06-30T12:59:60Z")))],
        ),
        (
            "process with an extra key",
            false,
            vec![("/process/extra", Some(json!(1)))],
        ),
        (
            "status running",
            false,
            vec![("/status", Some(json!("running")))],
        ),
        (
            "status stopping",
            true,
            vec![("/status", Some(json!("stopping")))],
        ),
        (
            "degraded without reason",
            false,
            vec![("/degraded/0/reason", None)],
        ),
        (
            "degraded empty reason",
            false,
            vec![("/degraded/0/reason", Some(json!("")))],
        ),
        (
            "degraded source 81",
            false,
            vec![("/degraded/0/source", Some(s(81)))],
        ),
        (
            "degraded 65",
            false,
            vec![(
                "/degraded",
                Some(json!(vec![json!({"source": "a", "reason": "b"}); 65])),
            )],
        ),
        ("degraded none", true, vec![("/degraded", Some(json!([])))]),
        (
            "degraded item extra key",
            false,
            vec![("/degraded/0/extra", Some(json!(1)))],
        ),
        (
            "summary 7",
            false,
            vec![(
                "/summary",
                Some(json!(vec![json!({"label": "a", "value": 1}); 7])),
            )],
        ),
        (
            "summary empty label",
            false,
            vec![("/summary/0/label", Some(json!("")))],
        ),
        (
            "summary value 41",
            false,
            vec![("/summary/0/value", Some(s(41)))],
        ),
        (
            "summary value text",
            true,
            vec![("/summary/0/value", Some(json!("three")))],
        ),
        (
            "summary value a fraction",
            true,
            vec![("/summary/0/value", Some(json!(2.5)))],
        ),
        (
            "summary value true",
            false,
            vec![("/summary/0/value", Some(json!(true)))],
        ),
        (
            "summary value null",
            false,
            vec![("/summary/0/value", Some(Value::Null))],
        ),
        (
            "summary attention a word",
            false,
            vec![("/summary/1/attention", Some(json!("yes")))],
        ),
        (
            "events path //",
            false,
            vec![("/surfaces/events/path", Some(json!("//x")))],
        ),
        (
            "events path relative",
            false,
            vec![("/surfaces/events/path", Some(json!("x")))],
        ),
        (
            "events path with a space",
            false,
            vec![("/surfaces/events/path", Some(json!("/a b")))],
        ),
        (
            "events path /",
            true,
            vec![("/surfaces/events/path", Some(json!("/")))],
        ),
        (
            "events stream",
            true,
            vec![("/surfaces/events/stream", Some(json!("/stream")))],
        ),
        (
            "mcp transport sse",
            false,
            vec![("/surfaces/mcp/transport", Some(json!("sse")))],
        ),
        (
            "capability twice",
            false,
            vec![(
                "/surfaces/mcp/capabilities",
                Some(json!(["copy.write", "copy.write"])),
            )],
        ),
        (
            "capability upper case",
            false,
            vec![("/surfaces/mcp/capabilities/0", Some(json!("Copy")))],
        ),
        (
            "mcp auth token",
            false,
            vec![("/surfaces/mcp/auth", Some(json!("token")))],
        ),
        (
            "mcp auth own",
            true,
            vec![("/surfaces/mcp/auth", Some(json!("own")))],
        ),
        (
            "operator channel",
            true,
            vec![(
                "/surfaces/operatorChannel",
                Some(json!({"path": "/fabric/v1/operator"})),
            )],
        ),
        (
            "usage without path",
            false,
            vec![("/surfaces/usage", Some(json!({})))],
        ),
        (
            "usage",
            true,
            vec![("/surfaces/usage", Some(json!({"path": "/usage"})))],
        ),
        (
            "surfaces with an extra key",
            false,
            vec![("/surfaces/extra", Some(json!({"path": "/x"})))],
        ),
        (
            "update available",
            true,
            vec![("/update/available", Some(json!("0.3.0")))],
        ),
        (
            "update available not a version",
            false,
            vec![("/update/available", Some(json!("soon")))],
        ),
        ("no update", true, vec![("/update", None)]),
        (
            "extension key not a URI",
            false,
            vec![("/extensions", Some(json!({"x": 1})))],
        ),
        (
            "an unknown field",
            false,
            vec![("/color", Some(json!("blue")))],
        ),
    ]);
    check(Doc::WellKnown, &base, &cases);
}
