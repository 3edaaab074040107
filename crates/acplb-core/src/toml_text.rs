//! TOML spellings of keys and strings, for the one writer of each: Codex's `-c key=value`
//! overrides and the files acplb writes. Every special character is escaped, so a value never
//! becomes a second key, a second line or an unterminated string.

use std::fmt::Write as _;

/// A TOML key: bare when it can be, else a quoted basic string.
#[must_use]
pub fn key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare { key.to_owned() } else { basic(key) }
}

/// A TOML basic string (`"…"`) with every control character escaped, tabs included.
#[must_use]
pub fn basic(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_escape_quotes_backslashes_and_controls() {
        assert_eq!(basic("a\u{1}b\\"), "\"a\\u0001b\\\\\"");
        assert_eq!(basic("say \"hi\"\n\tx\r"), "\"say \\\"hi\\\"\\n\\tx\\r\"");
        assert_eq!(basic("\u{7f}"), "\"\\u007F\"");
    }

    #[test]
    fn keys_are_bare_only_when_toml_allows_it() {
        assert_eq!(key("model_x-1"), "model_x-1");
        assert_eq!(key(""), "\"\"");
        assert_eq!(key("a.b"), "\"a.b\"");
        assert_eq!(key("é"), "\"é\"");
    }

    #[test]
    fn every_spelling_reads_back_as_the_same_value() {
        for s in [
            "",
            "plain",
            "tab\there",
            "line\nbreak",
            "quote\"s",
            "back\\slash",
            "\u{1b}[31m",
            "é ü",
        ] {
            let doc = format!("{} = {}", key(s), basic(s));
            let table: toml::Table = doc.parse().expect("valid TOML");
            assert_eq!(table.get(s).and_then(toml::Value::as_str), Some(s), "{doc}");
        }
    }
}
