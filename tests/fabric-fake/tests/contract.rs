//! Conformance with the vendored Fabric Agent Contract (`tests/fabric-contract/`): every
//! catalogued fixture behaves as the catalogue says, and every document the stand-in
//! produces is valid against its schema.
//!
//! All schemas go into one registry keyed by `$id`; `$ref`s resolve from it only, and any
//! other retrieval is refused, so nothing touches the network.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use fabric_fake::answers::{self, Mode, REFUSAL_CODES};
use fabric_fake::{refusal_answer, status_answer, write_service};
use jsonschema::error::ValidationErrorKind;
use jsonschema::{Registry, Retrieve, Uri, ValidationError, Validator};
use serde_json::Value;

fn contract_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fabric-contract")
}

fn read_json(path: &Path) -> Value {
    let text =
        fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// Refuses every retrieval: a `$ref` outside the registry is an error, never a download.
struct NoRetrieval;

impl Retrieve for NoRetrieval {
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("{uri} is not in the contract's schemas, and nothing is fetched").into())
    }
}

/// The contract's schemas, by file name, and the registry holding them all.
struct Contract {
    schemas: BTreeMap<String, Value>,
    registry: Registry<'static>,
}

impl Contract {
    fn load() -> Self {
        let mut schemas = BTreeMap::new();
        for entry in fs::read_dir(contract_dir().join("schemas")).expect("schemas/ is readable") {
            let path = entry.expect("a directory entry").path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".schema.json") {
                schemas.insert(name, read_json(&path));
            }
        }
        assert_eq!(schemas.len(), 10, "the contract has 10 schemas");
        let resources: Vec<(String, Value)> = schemas
            .values()
            .map(|schema| {
                let id = schema["$id"].as_str().expect("every schema has an $id");
                (id.to_owned(), schema.clone())
            })
            .collect();
        let registry = Registry::new()
            .retriever(NoRetrieval)
            .extend(resources)
            .expect("every $id is a URI")
            .prepare()
            .expect("the registry resolves from itself");
        Contract { schemas, registry }
    }

    fn validator(&self, schema_file: &str) -> Validator {
        let schema = self
            .schemas
            .get(schema_file)
            .unwrap_or_else(|| panic!("no schema {schema_file}"));
        jsonschema::options()
            .with_registry(&self.registry)
            .with_retriever(NoRetrieval)
            .should_validate_formats(true)
            .build(schema)
            .unwrap_or_else(|e| panic!("{schema_file} compiles: {e}"))
    }

    /// Panics with every error when `instance` is not valid against `schema_file`.
    fn assert_valid(&self, schema_file: &str, instance: &Value) {
        let validator = self.validator(schema_file);
        let errors: Vec<String> = validator
            .iter_errors(instance)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "not valid against {schema_file}: {errors:#?}\n{instance:#}"
        );
    }
}

/// The keyword of `error` and of every error nested under its `anyOf`/`oneOf`.
fn keywords(error: &ValidationError<'_>, out: &mut Vec<String>) {
    out.push(error.kind().keyword().to_owned());
    if let ValidationErrorKind::AnyOf { context }
    | ValidationErrorKind::OneOfNotValid { context }
    | ValidationErrorKind::OneOfMultipleValid { context } = error.kind()
    {
        for nested in context.iter().flatten() {
            keywords(nested, out);
        }
    }
}

#[test]
fn every_catalogued_fixture_behaves_as_catalogued() {
    let contract = Contract::load();
    let fixtures = contract_dir().join("fixtures");
    let catalogue = read_json(&fixtures.join("catalogue.json"));
    let entries = catalogue.as_array().expect("the catalogue is a list");
    assert!(!entries.is_empty());
    for entry in entries {
        let name = entry["name"].as_str().expect("name");
        let schema = entry["schema"].as_str().expect("schema");
        let instance = read_json(&fixtures.join(entry["path"].as_str().expect("path")));
        if entry["valid"] == true {
            contract.assert_valid(schema, &instance);
            continue;
        }
        let keyword = entry["keyword"]
            .as_str()
            .expect("a negative entry names a keyword");
        let validator = contract.validator(schema);
        let mut found = Vec::new();
        for error in validator.iter_errors(&instance) {
            keywords(&error, &mut found);
        }
        assert!(!found.is_empty(), "{name} must be rejected");
        assert!(
            found.iter().any(|k| k == keyword),
            "{name} must fail on {keyword:?}, failed on {found:?}"
        );
    }
}

#[test]
fn stand_in_status_answers_are_valid() {
    let contract = Contract::load();
    for (mode, unread) in [
        (Mode::Ready, 0),
        (Mode::Ready, 7),
        (Mode::Degraded, 3),
        (Mode::Unavailable, 0),
    ] {
        let answer = status_answer(mode, unread);
        contract.assert_valid("comms-status.schema.json", &answer);
        match mode {
            Mode::Unavailable => assert!(answer.get("unread").is_none(), "{answer}"),
            _ => assert_eq!(answer["unread"], unread),
        }
    }
}

#[test]
fn stand_in_refusals_are_valid_and_cover_every_contract_code() {
    let contract = Contract::load();
    let schema_codes =
        &contract.schemas["comms-common.schema.json"]["$defs"]["refusalCode"]["enum"];
    assert_eq!(schema_codes, &serde_json::json!(REFUSAL_CODES));
    for code in REFUSAL_CODES {
        contract.assert_valid("comms-refusal.schema.json", &refusal_answer(code));
    }
}

#[test]
fn stand_in_list_answer_is_a_valid_page() {
    let contract = Contract::load();
    let page = answers::list_answer(&fabric_fake::files::now_rfc3339());
    contract.assert_valid("comms-page.schema.json", &page);
}

#[test]
fn written_service_descriptor_is_valid() {
    let contract = Contract::load();
    let dir = tempfile::tempdir().expect("a temp folder");
    let path = write_service(
        dir.path(),
        "example-agent",
        "default",
        "http://127.0.0.1:47195",
    )
    .expect("the descriptor is written");
    assert_eq!(path, dir.path().join("example-agent.default.json"));
    contract.assert_valid("service-descriptor.schema.json", &read_json(&path));
}
