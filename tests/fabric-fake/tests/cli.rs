//! The helper subcommands of the `fabric-fake` binary (`hub`, `service`) and the library
//! functions they share.

use std::path::Path;
use std::process::Command;

use fabric_fake::{fake_binary, remove_hub, write_hub};
use serde_json::{Value, json};

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("readable")).expect("JSON")
}

fn run(args: &[&str]) {
    let status = Command::new(fake_binary())
        .args(args)
        .status()
        .expect("fabric-fake runs");
    assert!(status.success(), "fabric-fake {args:?}: {status}");
}

#[test]
fn hub_subcommand_writes_and_removes_hub_json() {
    let root = tempfile::tempdir().expect("a temp folder");
    let fabric_dir = root.path().join("fabric");
    let dir = fabric_dir.to_str().expect("a UTF-8 path");
    run(&["hub", "--fabric-dir", dir, "--feature", "session-hooks/1"]);

    let hub_path = fabric_dir.join("hub.json");
    let hub = read_json(&hub_path);
    assert_eq!(hub["protocol"], "fabric-hub/0.1");
    assert_eq!(hub["origin"], "http://127.0.0.1:47070");
    assert_eq!(hub["mcp"], "/mcp");
    assert_eq!(hub["features"], json!(["session-hooks/1"]));
    assert_eq!(
        hub["pid"],
        std::process::id(),
        "defaults to the parent's pid"
    );
    assert_eq!(
        hub["doorTokenFile"],
        fabric_dir.join("hub-door-token").to_str().unwrap()
    );
    assert!(hub["startedAt"].as_str().unwrap().ends_with('Z'));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| p.metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&hub_path), 0o600);
        assert_eq!(mode(&fabric_dir), 0o700);
    }

    run(&[
        "hub",
        "--fabric-dir",
        dir,
        "--pid",
        "42",
        "--protocol",
        "fabric-hub/9",
    ]);
    let hub = read_json(&hub_path);
    assert_eq!(
        (hub["pid"].clone(), hub["protocol"].clone()),
        (json!(42), json!("fabric-hub/9"))
    );
    assert!(
        hub.get("features").is_none(),
        "no features, no field: {hub}"
    );

    run(&["hub", "--fabric-dir", dir, "--remove"]);
    assert!(!hub_path.exists());
    run(&["hub", "--fabric-dir", dir, "--remove"]);
}

#[test]
fn service_subcommand_writes_a_descriptor() {
    let root = tempfile::tempdir().expect("a temp folder");
    let services = root.path().join("services");
    let dir = services.to_str().expect("a UTF-8 path");
    run(&[
        "service",
        "--dir",
        dir,
        "--id",
        "mail-agent",
        "--instance",
        "work",
    ]);
    let descriptor = read_json(&services.join("mail-agent.work.json"));
    assert_eq!(descriptor["protocol"], "fabric-service/0.1");
    assert_eq!(descriptor["origin"], "http://127.0.0.1:47195");
    let names: Vec<_> = std::fs::read_dir(&services).unwrap().flatten().collect();
    assert_eq!(names.len(), 1, "no temporary file is left behind");
}

#[test]
fn library_hub_functions() {
    let root = tempfile::tempdir().expect("a temp folder");
    let path = write_hub(root.path(), &[], 7).expect("hub.json is written");
    let hub = read_json(&path);
    assert_eq!(hub["pid"], 7);
    assert!(hub.get("features").is_none());
    remove_hub(root.path()).expect("hub.json is removed");
    assert!(!path.exists());
    remove_hub(root.path()).expect("removing a missing hub.json is fine");
}
