//! Byte-level edits of an inbox: find a top-level key's value inside one record's raw JSON.
//!
//! Marking a foreign record read must not re-serialise it (that would reorder nothing but could
//! still change number or escape spellings), so we locate `"read": false` and replace only the
//! value's bytes.

use std::ops::Range;

/// The byte range of the value of top-level `key` in the JSON object `raw`, if present.
///
/// `raw` must be valid JSON (it comes from a parsed inbox); keys written with escapes are not
/// matched, and the caller falls back to re-serialising the record.
pub(crate) fn top_level_value(raw: &str, key: &str) -> Option<Range<usize>> {
    let b = raw.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(b, i);
        if b.get(i) != Some(&b'"') {
            return None; // `}` of an empty object, or not an object
        }
        let key_end = string_end(b, i)?;
        let this_key = &raw[i + 1..key_end - 1];
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        let start = skip_ws(b, i + 1);
        let end = value_end(b, start)?;
        if this_key == key {
            return Some(start..end);
        }
        i = skip_ws(b, end);
        if b.get(i) != Some(&b',') {
            return None;
        }
        i += 1;
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// Index just past the string starting at `b[start] == '"'`.
fn string_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Index just past the value starting at `start`.
fn value_end(b: &[u8], start: usize) -> Option<usize> {
    match b.get(start)? {
        b'"' => string_end(b, start),
        b'{' | b'[' => {
            let mut depth = 0_usize;
            let mut i = start;
            while i < b.len() {
                match b[i] {
                    b'"' => {
                        i = string_end(b, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let mut i = start;
            while i < b.len() && !matches!(b[i], b',' | b'}' | b']') && !b[i].is_ascii_whitespace() {
                i += 1;
            }
            Some(i)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value<'a>(raw: &'a str, key: &str) -> Option<&'a str> {
        top_level_value(raw, key).map(|r| &raw[r])
    }

    #[test]
    fn finds_top_level_values_only() {
        let raw = r#"{ "text": "a \"read\": x", "metadata": {"read": 1, "x": [1, {"read": 2}]},
            "read" : false, "n": -1.5e3 }"#;
        assert_eq!(value(raw, "read"), Some("false"));
        assert_eq!(value(raw, "n"), Some("-1.5e3"));
        assert_eq!(
            value(raw, "metadata"),
            Some(r#"{"read": 1, "x": [1, {"read": 2}]}"#)
        );
        assert_eq!(value(raw, "text"), Some(r#""a \"read\": x""#));
        assert_eq!(value(raw, "missing"), None);
        assert_eq!(value("{}", "read"), None);
        assert_eq!(value("[1]", "read"), None);
        assert_eq!(value(r#"{"read":false}"#, "read"), Some("false"));
    }
}
