//! Every string the tray hands to the desktop (a menu label, the tooltip, a notification's
//! text) passes through here first. Parts of those strings come from outside (`hub.json`'s
//! origin, a project folder's name, a host's version): a NUL in a D-Bus string makes the bus
//! daemon drop the whole connection, other control characters garble a panel, and a
//! megabyte-long name has no place in a menu. So: control characters out (a line break or tab
//! becomes a space, except in a notification body), length bounded by characters, cut with
//! an ellipsis.

/// The longest menu label, tooltip or notification summary, in characters.
pub const LINE_MAX_CHARS: usize = 200;
/// The longest notification body, in characters.
pub const BODY_MAX_CHARS: usize = 1000;

/// A one-line text: every control character (NUL, escapes, line breaks) out or a space,
/// at most `max_chars` characters.
pub fn line(text: &str, max_chars: usize) -> String {
    clean(text, max_chars, false)
}

/// A label, tooltip or summary ([`line`] with [`LINE_MAX_CHARS`]).
pub fn label(text: &str) -> String {
    line(text, LINE_MAX_CHARS)
}

/// A notification body: as [`line`], but line breaks are kept.
pub fn body(text: &str) -> String {
    clean(text, BODY_MAX_CHARS, true)
}

/// A notification body for a server that reads the body as markup (its capabilities say
/// `body-markup`): `&`, `<` and `>` as entities, so a project folder named `a&b` or `<x>`
/// shows as written and never loses the whole body to a markup error.
pub fn markup_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

fn clean(text: &str, max_chars: usize, keep_newlines: bool) -> String {
    let mut out = String::with_capacity(text.len().min(max_chars * 4));
    let mut count = 0;
    for c in text.chars() {
        let c = match c {
            '\n' if keep_newlines => '\n',
            '\n' | '\r' | '\t' => ' ',
            c if c.is_control() => continue,
            // Bidirectional overrides and isolates would reorder the rest of a panel's line.
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => continue,
            c => c,
        };
        if count == max_chars {
            out.pop();
            out.push('…');
            break;
        }
        out.push(c);
        count += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_markup_body_shows_as_written() {
        assert_eq!(
            markup_escaped("2 unread on a&b\n<x> & <b>y</b>"),
            "2 unread on a&amp;b\n&lt;x&gt; &amp; &lt;b&gt;y&lt;/b&gt;"
        );
        assert_eq!(markup_escaped("plain"), "plain");
    }

    #[test]
    fn nul_and_other_controls_never_pass() {
        let dirty = "a\0b\u{1b}[31mc\u{7f}d\u{85}e\u{202e}f";
        let clean = label(dirty);
        assert_eq!(clean, "ab[31mcdef");
        assert!(!clean.chars().any(char::is_control));
    }

    #[test]
    fn line_breaks_become_spaces_except_in_a_body() {
        assert_eq!(label("one\ntwo\r\tthree"), "one two  three");
        assert_eq!(body("one\ntwo\0"), "one\ntwo");
    }

    #[test]
    fn length_is_bounded_in_characters_with_an_ellipsis() {
        let long = "é".repeat(5000);
        let cut = label(&long);
        assert_eq!(cut.chars().count(), LINE_MAX_CHARS);
        assert!(cut.ends_with('…'));
        assert_eq!(body(&long).chars().count(), BODY_MAX_CHARS);
        let exact = "x".repeat(LINE_MAX_CHARS);
        assert_eq!(label(&exact), exact, "a text at the limit is whole");
        assert_eq!(label(""), "");
    }
}
