//! The hooks' parser against the Fabric Agent Contract's own fixtures: it accepts every
//! positive and rejects every negative `com.status` answer and refusal in the catalogue.

use std::path::PathBuf;

use companion_sessions::board::{self, BoardReading};

fn contract_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fabric-contract")
}

#[test]
fn parser_agrees_with_every_comms_fixture_in_the_catalogue() {
    let catalogue: Vec<serde_json::Value> = serde_json::from_str(
        &std::fs::read_to_string(contract_dir().join("fixtures/catalogue.json")).unwrap(),
    )
    .unwrap();
    let mut checked = 0;
    for entry in &catalogue {
        let schema = entry["schema"].as_str().unwrap();
        let valid = entry["valid"].as_bool().unwrap();
        let path = contract_dir()
            .join("fixtures")
            .join(entry["path"].as_str().unwrap());
        let text = std::fs::read_to_string(&path).unwrap();
        let accepted = match schema {
            "comms-status.schema.json" => board::parse_com_status(&text).is_ok(),
            "comms-refusal.schema.json" => board::parse_refusal(&text).is_ok(),
            _ => continue,
        };
        assert_eq!(accepted, valid, "{}", path.display());
        checked += 1;
    }
    assert_eq!(checked, 4, "two positive and two negative comms fixtures");
}

#[test]
fn the_positive_status_fixture_reads_as_a_count_and_the_refusal_as_refused() {
    let status =
        std::fs::read_to_string(contract_dir().join("fixtures/positive/comms-status.json"))
            .unwrap();
    assert!(matches!(
        board::reading_from_answer(Some(&status), false),
        BoardReading::Count { unread: 2, .. }
    ));
    let refusal =
        std::fs::read_to_string(contract_dir().join("fixtures/positive/comms-refusal.json"))
            .unwrap();
    assert!(matches!(
        board::reading_from_answer(Some(&refusal), true),
        BoardReading::Refused { .. }
    ));
    // A refusal with an unknown code is not a refusal we can log by code.
    let unknown = std::fs::read_to_string(
        contract_dir().join("fixtures/negative/comms-refusal-unknown-code.json"),
    )
    .unwrap();
    assert_eq!(
        board::reading_from_answer(Some(&unknown), true),
        BoardReading::Invalid
    );
}

#[test]
fn the_stand_ins_answers_parse_as_the_hooks_expect() {
    use fabric_fake::{Mode, status_answer};
    for (mode, unread, expected) in [
        (Mode::Ready, 0, Some(0)),
        (Mode::Ready, 7, Some(7)),
        (Mode::Degraded, 3, Some(3)),
        (Mode::Unavailable, 5, None),
    ] {
        let text = status_answer(mode, unread).to_string();
        let reading = board::reading_from_answer(Some(&text), false);
        match expected {
            Some(n) => assert!(
                matches!(reading, BoardReading::Count { unread, .. } if unread == n),
                "{mode:?}"
            ),
            None => assert!(matches!(reading, BoardReading::NoCount { .. }), "{mode:?}"),
        }
    }
}
