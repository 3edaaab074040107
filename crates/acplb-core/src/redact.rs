//! Secret redaction for everything acplb writes that may hold conversation text (audit records,
//! transcripts, recordings, logs): API keys, bearer tokens, `Authorization` values,
//! `key=value` credentials and GitHub tokens become `[REDACTED]`.
//!
//! A hand-written scanner (no regex dependency). All patterns are ASCII, so every cut falls on a
//! char boundary. It errs towards redacting too much: an audit line that loses a word is fine,
//! one that leaks a key is not.

/// The replacement text.
pub const REDACTED: &str = "[REDACTED]";

/// GitHub token prefixes (classic, OAuth, user-to-server, server-to-server, refresh, fine-grained).
const GITHUB_PREFIXES: [&str; 6] = ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"];
/// Keys whose values are secrets when they appear as `key=value` or `key: value`.
const SECRET_KEYS: [&str; 10] = [
    "token", "secret", "password", "passwd", "pwd", "apikey", "api_key", "api-key", "auth", "key",
];
const SECRET_SUFFIXES: [&str; 8] = [
    "_key",
    "-key",
    "_token",
    "-token",
    "_secret",
    "-secret",
    "_password",
    "apikey",
];

/// `text` with every recognised secret replaced by [`REDACTED`].
pub fn redact(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut i, mut copied) = (0, 0);
    while i < b.len() {
        // Every pattern starts with an ASCII letter, which is always a char boundary.
        let at_start = b[i].is_ascii_alphabetic() && (i == 0 || !is_word(b[i - 1]));
        let hit = if at_start { match_secret(text, i) } else { None };
        match hit {
            Some((keep_end, secret_end)) => {
                out.push_str(&text[copied..keep_end]);
                out.push_str(REDACTED);
                i = secret_end;
                copied = secret_end;
            }
            None => i += 1,
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// A secret starting at `i`: `(end of the part kept, end of the part redacted)`.
fn match_secret(text: &str, i: usize) -> Option<(usize, usize)> {
    let b = text.as_bytes();
    let rest = &text[i..];
    if rest.starts_with("sk-") {
        let end = run(b, i + 3, is_key_char);
        return (end - (i + 3) >= 16).then_some((i, end));
    }
    if let Some(p) = GITHUB_PREFIXES.iter().find(|p| rest.starts_with(**p)) {
        let end = run(b, i + p.len(), |c| c.is_ascii_alphanumeric() || c == b'_');
        return (end - (i + p.len()) >= 16).then_some((i, end));
    }
    let word_end = run(b, i, |c| is_word(c) || c == b'-');
    let word = rest[..word_end - i].to_ascii_lowercase();
    if word == "bearer" || word == "basic" {
        let start = run(b, word_end, |c| c == b' ' || c == b'\t');
        let end = run(b, start, |c| {
            is_key_char(c) || matches!(c, b'.' | b'~' | b'+' | b'/' | b'=')
        });
        return (start > word_end && end - start >= 8).then_some((start, end));
    }
    if word == "authorization" || is_secret_key(&word) {
        let (start, quote) = value_start(b, word_end)?;
        let end = match quote {
            Some(q) => run(b, start, |c| c != q && c != b'\n'),
            // A header value runs to the end of the line.
            None if word == "authorization" => run(b, start, |c| !matches!(c, b'\n' | b'\r' | b'"' | b'\'')),
            None => run(b, start, |c| {
                !c.is_ascii_whitespace()
                    && !matches!(c, b'&' | b',' | b';' | b'"' | b'\'' | b')' | b'}' | b']')
            }),
        };
        return (end > start).then_some((start, end));
    }
    None
}

/// After a key: optional closing quote, spaces, `=` or `:`, spaces, optional opening quote.
/// Returns where the value starts and the quote it opened with, if any.
fn value_start(b: &[u8], mut i: usize) -> Option<(usize, Option<u8>)> {
    if matches!(b.get(i), Some(b'"' | b'\'')) {
        i += 1;
    }
    i = run(b, i, |c| c == b' ' || c == b'\t');
    if !matches!(b.get(i), Some(b'=' | b':')) {
        return None;
    }
    i = run(b, i + 1, |c| c == b' ' || c == b'\t');
    match b.get(i) {
        Some(&q @ (b'"' | b'\'')) => Some((i + 1, Some(q))),
        _ => Some((i, None)),
    }
}

fn is_secret_key(word: &str) -> bool {
    SECRET_KEYS.contains(&word) || SECRET_SUFFIXES.iter().any(|s| word.ends_with(s))
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn is_key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

/// The index after the longest run of bytes from `i` satisfying `pred`.
fn run(b: &[u8], mut i: usize, pred: impl Fn(u8) -> bool) -> usize {
    while i < b.len() && pred(b[i]) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_and_github_keys() {
        assert_eq!(
            redact("key sk-proj-abcdefghijklmnop1234 here"),
            "key [REDACTED] here"
        );
        assert_eq!(redact("sk-abcdefghijklmnopqrstuvwx"), "[REDACTED]");
        assert_eq!(
            redact("use ghp_ABCDEFGHIJKLMNOPqrstuvwxyz0123 now"),
            "use [REDACTED] now"
        );
        assert_eq!(redact("github_pat_11ABCDEFG0123456789_abcdefghij"), "[REDACTED]");
        // Too short, or inside a word: not keys.
        assert_eq!(redact("task-sk-1 and sk-short"), "task-sk-1 and sk-short");
        assert_eq!(redact("risk-abcdefghijklmnopqrstu"), "risk-abcdefghijklmnopqrstu");
    }

    #[test]
    fn bearer_and_authorization() {
        assert_eq!(
            redact("curl -H 'Authorization: Bearer abc.def-ghi_jkl'"),
            "curl -H 'Authorization: [REDACTED]'"
        );
        assert_eq!(
            redact("authorization=Basic dXNlcjpwYXNz\nnext"),
            "authorization=[REDACTED]\nnext"
        );
        assert_eq!(
            redact("got bearer eyJhbGciOiJIUzI1NiJ9.x.y ok"),
            "got bearer [REDACTED] ok"
        );
        assert_eq!(
            redact("\"Authorization\": \"token abc123\", \"x\": 1"),
            "\"Authorization\": \"[REDACTED]\", \"x\": 1"
        );
    }

    #[test]
    fn key_value_pairs() {
        assert_eq!(
            redact("https://x/?api_key=abc123&page=2"),
            "https://x/?api_key=[REDACTED]&page=2"
        );
        assert_eq!(redact("token=xyz; other"), "token=[REDACTED]; other");
        assert_eq!(
            redact("OPENAI_API_KEY=sk-zz OTHER=1"),
            "OPENAI_API_KEY=[REDACTED] OTHER=1"
        );
        assert_eq!(redact("GITHUB_TOKEN: 'abc def'"), "GITHUB_TOKEN: '[REDACTED]'");
        assert_eq!(
            redact(r#"{"password": "hunter2", "user": "bob"}"#),
            r#"{"password": "[REDACTED]", "user": "bob"}"#
        );
        assert_eq!(redact("client_secret = s3cr3t"), "client_secret = [REDACTED]");
    }

    #[test]
    fn leaves_ordinary_text_alone() {
        for s in [
            "max_tokens=4096",
            "the token is missing",
            "tokens: 5",
            "keyboard=us",
            "ünïcödé text",
            "",
        ] {
            assert_eq!(redact(s), s);
        }
    }
}
