//! A fast look into large JSON documents: the members of an object, by key, with every value
//! skipped over rather than decoded. Claude Code's `~/.claude.json` grows to megabytes (every
//! project, with its history); the hooks need two small facts from it, so they walk its
//! structure and jump over strings with `memchr` instead of building or validating what they
//! do not read.
//!
//! It owns syntax only: it never interprets a value, never allocates for one it skips, and
//! never keeps anything of a document. A document that is not well-formed where it is walked
//! is [`Malformed`]. Skipped values are checked for balance and string boundaries, not for
//! every rule of JSON (a stray `x` inside an array it skips goes unnoticed); what it is asked
//! about is read exactly.

use std::borrow::Cow;
use std::ops::Range;

/// The document is not JSON where it was walked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not well-formed JSON")]
pub struct Malformed;

/// Deeper nesting than this is refused rather than walked.
const MAX_DEPTH: usize = 512;

/// The value at the start of `doc` (after any BOM and white space), as a span of `doc`.
pub fn root(doc: &[u8]) -> Result<Range<usize>, Malformed> {
    let start = if doc.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let mut scanner = Scanner { doc, pos: start };
    scanner.skip_ws();
    let begin = scanner.pos;
    scanner.skip_value()?;
    let end = scanner.pos;
    scanner.skip_ws();
    if scanner.pos != doc.len() {
        return Err(Malformed);
    }
    Ok(begin..end)
}

/// Calls `visit(key, value span)` for each member of the object at `span`, in order; stops
/// early when `visit` returns `false`. A span that is not an object gives [`Malformed`].
pub fn for_each_member(
    doc: &[u8],
    span: Range<usize>,
    mut visit: impl FnMut(&str, Range<usize>) -> bool,
) -> Result<(), Malformed> {
    let doc = doc.get(..span.end).ok_or(Malformed)?;
    let mut scanner = Scanner {
        doc,
        pos: span.start,
    };
    scanner.expect(b'{')?;
    scanner.skip_ws();
    if scanner.peek() == Some(b'}') {
        return Ok(());
    }
    loop {
        scanner.skip_ws();
        let key = scanner.string()?;
        scanner.skip_ws();
        scanner.expect(b':')?;
        scanner.skip_ws();
        let begin = scanner.pos;
        scanner.skip_value()?;
        if !visit(&key, begin..scanner.pos) {
            return Ok(());
        }
        scanner.skip_ws();
        match scanner.next() {
            Some(b',') => continue,
            Some(b'}') => return Ok(()),
            _ => return Err(Malformed),
        }
    }
}

/// The span of member `key` of the object at `span`, if there is one.
pub fn member(
    doc: &[u8],
    span: Range<usize>,
    key: &str,
) -> Result<Option<Range<usize>>, Malformed> {
    let mut found = None;
    for_each_member(doc, span, |name, value| {
        if name == key {
            found = Some(value);
            false
        } else {
            true
        }
    })?;
    Ok(found)
}

/// Whether the value at `span` is an object.
pub fn is_object(doc: &[u8], span: &Range<usize>) -> bool {
    doc.get(span.start) == Some(&b'{')
}

struct Scanner<'a> {
    doc: &'a [u8],
    pos: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.doc.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.pos += 1;
        Some(byte)
    }

    fn expect(&mut self, byte: u8) -> Result<(), Malformed> {
        if self.next() == Some(byte) {
            Ok(())
        } else {
            Err(Malformed)
        }
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// Moves past a string whose opening quote is at `pos`; returns its raw contents and
    /// whether it held an escape.
    fn raw_string(&mut self) -> Result<(&'a [u8], bool), Malformed> {
        self.expect(b'"')?;
        let start = self.pos;
        let mut escaped = false;
        loop {
            let rest = self.doc.get(self.pos..).ok_or(Malformed)?;
            let at = memchr::memchr2(b'"', b'\\', rest).ok_or(Malformed)?;
            self.pos += at;
            if rest[at] == b'"' {
                let raw = &self.doc[start..self.pos];
                self.pos += 1;
                return Ok((raw, escaped));
            }
            // A backslash escapes the next byte (`\uXXXX` needs no more care: its hex digits
            // are never a quote or a backslash).
            escaped = true;
            self.pos += 2;
        }
    }

    /// A string decoded (only keys are decoded, and only when they hold an escape).
    fn string(&mut self) -> Result<Cow<'a, str>, Malformed> {
        let begin = self.pos;
        let (raw, escaped) = self.raw_string()?;
        if !escaped {
            return std::str::from_utf8(raw)
                .map(Cow::Borrowed)
                .map_err(|_| Malformed);
        }
        serde_json::from_slice::<String>(&self.doc[begin..self.pos])
            .map(Cow::Owned)
            .map_err(|_| Malformed)
    }

    fn skip_value(&mut self) -> Result<(), Malformed> {
        match self.peek().ok_or(Malformed)? {
            b'"' => self.raw_string().map(drop),
            b'{' | b'[' => self.skip_container(),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => {
                while matches!(
                    self.peek(),
                    Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                ) {
                    self.pos += 1;
                }
                Ok(())
            }
            _ => Err(Malformed),
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), Malformed> {
        if self.doc.get(self.pos..self.pos + word.len()) == Some(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(Malformed)
        }
    }

    /// Skips an object or array, however deep, jumping over strings.
    fn skip_container(&mut self) -> Result<(), Malformed> {
        let mut closers: Vec<u8> = Vec::new();
        loop {
            let byte = self.peek().ok_or(Malformed)?;
            match byte {
                b'"' => {
                    self.raw_string()?;
                    continue;
                }
                b'{' | b'[' => {
                    if closers.len() >= MAX_DEPTH {
                        return Err(Malformed);
                    }
                    closers.push(if byte == b'{' { b'}' } else { b']' });
                }
                b'}' | b']' => {
                    if closers.pop() != Some(byte) {
                        return Err(Malformed);
                    }
                    if closers.is_empty() {
                        self.pos += 1;
                        return Ok(());
                    }
                }
                _ => {}
            }
            self.pos += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(doc: &str) -> Result<Vec<(String, String)>, Malformed> {
        let bytes = doc.as_bytes();
        let span = root(bytes)?;
        let mut out = Vec::new();
        for_each_member(bytes, span, |key, value| {
            out.push((key.to_string(), doc[value].to_string()));
            true
        })?;
        Ok(out)
    }

    #[test]
    fn members_and_their_raw_values() {
        let doc = r#" {"a": 1, "b" : {"c": [1, {"d": "}"}]}, "e\"q": "x\\", "f": null, "g": -1.5e3, "h": true} "#;
        let found = members(doc).unwrap();
        let keys: Vec<&str> = found.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["a", "b", "e\"q", "f", "g", "h"]);
        assert_eq!(found[1].1, r#"{"c": [1, {"d": "}"}]}"#);
        assert_eq!(found[2].1, r#""x\\""#);
        assert_eq!(found[4].1, "-1.5e3");
        assert_eq!(members("{}").unwrap(), vec![]);
        assert_eq!(members("\u{feff}{\"k\":[]}").unwrap().len(), 1);
    }

    #[test]
    fn a_key_with_escapes_is_compared_decoded() {
        let doc = br#"{"fa\u0062ric": {}}"#;
        let span = root(doc).unwrap();
        assert!(member(doc, span, "fabric").unwrap().is_some());
    }

    #[test]
    fn malformed_documents_are_refused() {
        for doc in [
            "",
            "{",
            "{\"a\"}",
            "{\"a\":}",
            "{\"a\":1,}",
            "{\"a\":[1,2}",
            "{\"a\":\"open}",
            "{\"a\":1} x",
            "{\"a\":tru}",
            "[}",
        ] {
            assert_eq!(members(doc).err(), Some(Malformed), "{doc:?}");
        }
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(600), "]".repeat(600));
        assert_eq!(members(&deep).err(), Some(Malformed));
    }

    #[test]
    fn agrees_with_serde_on_what_it_reads() {
        let doc = serde_json::json!({
            "numStartups": 3,
            "projects": {"/w/p": {"mcpServers": {"fabric": {"env": {"K": "v\"}"}}}, "history": ["{", "]"]}},
            "mcpServers": {"other": {}, "fabric": {}},
        })
        .to_string();
        let found = members(&doc).unwrap();
        let parsed: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&doc).unwrap();
        for (key, raw) in found {
            let value: serde_json::Value = serde_json::from_str(&raw).unwrap();
            assert_eq!(parsed[&key], value, "{key}");
        }
    }
}
