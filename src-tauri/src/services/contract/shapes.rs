//! The shapes the contract's schemas give a value (lengths, names, ids, local paths, origins,
//! argv, dates and times, versions, digests, URIs), each checked the way the schema says.

use super::*;

pub(super) fn check_len(
    what: &str,
    text: &str,
    min: usize,
    max: usize,
) -> Result<(), ContractError> {
    let n = text.chars().count();
    if n < min || n > max {
        return fail(format!("{what}: length must be {min} to {max}"));
    }
    Ok(())
}

/// `^[a-z]` followed by `[a-z0-9-]`, `min`..=`max` characters in all.
pub(super) fn is_lower_name(text: &str, min: usize, max: usize) -> bool {
    let b = text.as_bytes();
    (min..=max).contains(&b.len())
        && b[0].is_ascii_lowercase()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

pub(super) fn check_service_id(what: &str, id: &str) -> Result<(), ContractError> {
    if !is_lower_name(id, 2, 63) {
        return fail(format!("{what}: not a service id"));
    }
    Ok(())
}

pub(super) fn check_instance(what: &str, instance: &str) -> Result<(), ContractError> {
    if !is_lower_name(instance, 1, 32) {
        return fail(format!("{what}: not an instance name"));
    }
    Ok(())
}

pub(super) fn check_local_path(what: &str, path: &str) -> Result<(), ContractError> {
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

pub(super) fn check_origin_path(what: &str, path: &str) -> Result<(), ContractError> {
    let ok = path.starts_with('/')
        && !path[1..].starts_with('/')
        && !path.chars().any(char::is_whitespace)
        && path.chars().count() <= 2048;
    if !ok {
        return fail(format!("{what}: not a path on the origin"));
    }
    Ok(())
}

pub(super) fn check_argv(what: &str, argv: &[String]) -> Result<(), ContractError> {
    if argv.is_empty() || argv.len() > 32 {
        return fail(format!("{what}: 1 to 32 arguments"));
    }
    for arg in argv {
        check_len(what, arg, 1, 1024)?;
    }
    Ok(())
}

pub(super) fn check_extensions(
    extensions: Option<&Map<String, Value>>,
) -> Result<(), ContractError> {
    if extensions.is_some_and(|map| map.keys().any(|key| !is_uri(key))) {
        return fail("extensions: every key must be a URI");
    }
    Ok(())
}

pub(super) fn check_date_time(what: &str, text: &str) -> Result<(), ContractError> {
    if !is_date_time(text) {
        return fail(format!("{what}: not an RFC 3339 date-time"));
    }
    Ok(())
}

/// `1`..=`65535` without leading zeros, at least `min_digits` digits.
pub(super) fn is_port(text: &str, min_digits: usize) -> bool {
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

pub(super) fn is_header_name(text: &str) -> bool {
    let b = text.as_bytes();
    (1..=64).contains(&b.len())
        && b[0].is_ascii_alphabetic()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'-')
}

pub(super) fn is_capability_name(text: &str) -> bool {
    let b = text.as_bytes();
    (2..=128).contains(&b.len())
        && b[0].is_ascii_lowercase()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"._-".contains(c))
}

pub(super) fn is_sha256(text: &str) -> bool {
    text.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

pub(super) fn is_numeric_identifier(text: &str) -> bool {
    !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'))
}

pub(super) fn is_semver(text: &str) -> bool {
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

pub(super) fn is_integer_at_least(n: &Number, min: i64) -> bool {
    if let Some(i) = n.as_i64() {
        return i >= min;
    }
    if n.as_u64().is_some() {
        return true;
    }
    n.as_f64()
        .is_some_and(|f| f.fract() == 0.0 && f >= min as f64)
}

pub(super) fn two_digits(b: &[u8]) -> Option<u32> {
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
