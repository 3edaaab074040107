//! Secret redaction for everything acplb writes that may hold conversation text (audit records,
//! transcripts, recordings, logs): every secret in the pattern table below becomes `[REDACTED]`.
//!
//! | pattern | shape | redacted |
//! |---|---|---|
//! | `pem_private_key` | `-----BEGIN … PRIVATE KEY-----` … `-----END … PRIVATE KEY-----` (or, cut off, to the end of the text or of its JSON string) | the whole block |
//! | `jwt` | `eyJ….eyJ….…` (header, payload, optional signature) | the token |
//! | `openai` | `sk-…`, `sk-proj-…`, `sk-svcacct-…`, `sk-ant-…`: 6+ characters with a digit or both cases, or 16+ letters | the key |
//! | `stripe` | `sk_live_…`, `rk_test_…` | the key |
//! | `github` | `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` + 20+ characters, `github_pat_…` | the token |
//! | `aws_access_key` | `AKIA`, `ASIA`, `ABIA`, `ACCA` + 16 capitals or digits | the key id |
//! | `google_api_key` | `AIza` + 35 characters | the key |
//! | `slack` | `xoxb-`, `xoxp-`, `xoxa-`, … with a digit; `xapp-1-…` | the token |
//! | `url_password` | `scheme://user:password@host` | the password |
//! | `authorization` | `Authorization: …` / `Proxy-Authorization=…` | the value, to the end of the line or quote |
//! | `bearer` | `Bearer …` / `Basic …`: 8+ characters with a digit, a symbol or both cases | the credential |
//! | `key_value` | `token=…`, `GITHUB_TOKEN="…"`, `"api_key": "…"`, `client_secret = …` | the value (one word unless quoted) |
//! | `password_line` | `password: …`, `DB_PASSPHRASE: …` | the rest of the line |
//!
//! Token-shaped patterns must start a word (`task-sk-1` and `risk-…` stay). Ordinary words stay:
//! `token count`, `max_tokens=4096`, `skeleton`, `sk-learn`, `AKIA` alone, a URL without a
//! password (the tests hold a table of both kinds).
//!
//! One [`RegexSet`] pass finds which patterns occur at all (none, for almost every line), then
//! only those run to find their spans; overlapping spans merge. Matching is on bytes in ASCII
//! mode (linear time, no Unicode tables); every span is widened to character boundaries.

use std::ops::Range;
use std::sync::LazyLock;

use regex::bytes::{Regex, RegexSet};

/// The replacement text.
pub const REDACTED: &str = "[REDACTED]";

/// One kind of secret.
struct Pattern {
    /// For the table above and the tests.
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "names the pattern for the docs table and the tests")
    )]
    name: &'static str,
    /// ASCII-mode regex. When it has capture groups, the first group that matched is the secret
    /// (the rest, such as a key name, stays); otherwise the whole match is.
    regex: &'static str,
    /// The match must not follow a letter, digit, `_` or `-`.
    starts_word: bool,
    /// A last look at the secret's bytes, for shapes a regex says badly.
    accept: fn(&[u8]) -> bool,
}

const PATTERNS: &[Pattern] = &[
    Pattern {
        name: "pem_private_key",
        // A block never holds `"`: a cut-off block inside a JSON string ends at its closing quote.
        regex: r#"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?:[^"]*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|[^"]*)"#,
        starts_word: false,
        accept: any,
    },
    Pattern {
        name: "jwt",
        regex: r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
        starts_word: true,
        accept: any,
    },
    Pattern {
        name: "openai",
        regex: r"sk-[A-Za-z0-9_-]{6,}",
        starts_word: true,
        accept: openai_key,
    },
    Pattern {
        name: "stripe",
        regex: r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",
        starts_word: true,
        accept: any,
    },
    Pattern {
        name: "github",
        regex: r"(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",
        starts_word: true,
        accept: any,
    },
    Pattern {
        name: "aws_access_key",
        regex: r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
        starts_word: true,
        accept: any,
    },
    Pattern {
        name: "google_api_key",
        regex: r"AIza[A-Za-z0-9_-]{35}",
        starts_word: true,
        accept: any,
    },
    Pattern {
        name: "slack",
        regex: r"(?:xox[abceprs]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,})",
        starts_word: true,
        accept: has_digit,
    },
    Pattern {
        name: "url_password",
        regex: r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:]*:([^\s/?#]+)@",
        starts_word: false,
        accept: any,
    },
    Pattern {
        name: "authorization",
        regex: r#"(?i)\b(?:proxy-)?authorization(?:\\?["'])?[ \t]*[:=][ \t]*(?:\\?["'])?([^\r\n"'\\]+)"#,
        starts_word: false,
        accept: any,
    },
    Pattern {
        name: "bearer",
        regex: r"(?i)\b(?:bearer|basic)[ \t]+([A-Za-z0-9._~+/=-]{8,})",
        starts_word: false,
        accept: random_looking,
    },
    Pattern {
        name: "key_value",
        regex: r#"(?i)\b(?:[a-z0-9]+[_-])*(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?|auth|key)(?:\\?["'])?[ \t]*[:=][ \t]*(?:\\"([^"\\\r\n]*)\\"|"([^"\r\n]*)"|'([^'\r\n]*)'|([^\s"'\\&,;<>(){}\[\]]+))"#,
        starts_word: false,
        accept: any,
    },
    Pattern {
        name: "password_line",
        regex: r"(?i)\b(?:[a-z0-9]+[_-])*(?:password|passwd|passphrase)[ \t]*:[ \t]*([^\r\n\x22'\\]+)",
        starts_word: false,
        accept: any,
    },
];

struct Compiled {
    any: RegexSet,
    each: Vec<Regex>,
}

#[expect(
    clippy::expect_used,
    reason = "the table is constant; `every_pattern_compiles` compiles it in the tests"
)]
static COMPILED: LazyLock<Compiled> = LazyLock::new(|| {
    let sources: Vec<String> = PATTERNS.iter().map(|p| format!("(?-u){}", p.regex)).collect();
    Compiled {
        any: RegexSet::new(&sources).expect("the secret patterns compile"),
        each: sources
            .iter()
            .map(|s| Regex::new(s).expect("a secret pattern compiles"))
            .collect(),
    }
});

/// `text` with every recognised secret replaced by [`REDACTED`].
pub fn redact(text: &str) -> String {
    let compiled = &*COMPILED;
    let hay = text.as_bytes();
    let found = compiled.any.matches(hay);
    if !found.matched_any() {
        return text.to_owned();
    }
    let mut spans = Vec::new();
    for index in &found {
        let (pattern, regex) = (&PATTERNS[index], &compiled.each[index]);
        let keep = |whole: Range<usize>, secret: Range<usize>| {
            let follows_word = whole.start > 0 && is_key_char(hay[whole.start - 1]);
            let misplaced = pattern.starts_word && follows_word;
            !(secret.is_empty() || misplaced) && (pattern.accept)(&hay[secret])
        };
        // Without groups the whole match is the secret, and the faster `find` is enough.
        if regex.captures_len() == 1 {
            spans.extend(
                regex
                    .find_iter(hay)
                    .map(|m| m.range())
                    .filter(|r| keep(r.clone(), r.clone())),
            );
            continue;
        }
        for caps in regex.captures_iter(hay) {
            let Some(whole) = caps.get(0) else { continue };
            let secret = (1..caps.len()).find_map(|g| caps.get(g)).unwrap_or(whole);
            if keep(whole.range(), secret.range()) {
                spans.push(secret.range());
            }
        }
    }
    splice(text, spans)
}

/// `text` with `spans` (in any order, possibly overlapping) replaced, each merged run once.
fn splice(text: &str, mut spans: Vec<Range<usize>>) -> String {
    spans.sort_unstable_by_key(|s| s.start);
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut spans = spans.into_iter().peekable();
    while let Some(first) = spans.next() {
        let mut end = first.end;
        while let Some(next) = spans.next_if(|n| n.start <= end) {
            end = end.max(next.end);
        }
        let (start, end) = (
            floor_boundary(text, first.start.max(copied)),
            ceil_boundary(text, end),
        );
        if start >= end {
            continue;
        }
        out.push_str(&text[copied..start]);
        out.push_str(REDACTED);
        copied = end;
    }
    out.push_str(&text[copied..]);
    out
}

fn floor_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

fn any(_: &[u8]) -> bool {
    true
}

fn has_digit(s: &[u8]) -> bool {
    s.iter().any(u8::is_ascii_digit)
}

/// Random-looking: a digit, a symbol, or both cases (so `basic knowledge` is not a credential).
fn random_looking(s: &[u8]) -> bool {
    has_digit(s)
        || s.iter().any(|c| !c.is_ascii_alphanumeric())
        || (s.iter().any(u8::is_ascii_uppercase) && s.iter().any(u8::is_ascii_lowercase))
}

/// An OpenAI-style key: its body (after `sk-`) has a digit or both cases, or is one long run
/// of letters; a hyphenated phrase (`sk-learning-rate`) is not a key.
fn openai_key(s: &[u8]) -> bool {
    let body = s.get(3..).unwrap_or_default();
    has_digit(body)
        || (body.iter().any(u8::is_ascii_uppercase) && body.iter().any(u8::is_ascii_lowercase))
        || (body.len() >= 16 && !body.contains(&b'-'))
}

fn is_key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles_and_is_documented() {
        assert_eq!(COMPILED.each.len(), PATTERNS.len());
        let doc = include_str!("redact.rs");
        for p in PATTERNS {
            assert!(
                doc.contains(&format!("//! | `{}` |", p.name)),
                "{} is not in the table",
                p.name
            );
        }
    }

    /// Real-shaped secrets (fake values in the real formats): `input` must become `expected`.
    const SECRETS: &[(&str, &str)] = &[
        ("key sk-proj-abcdefghijklmnop1234 here", "key [REDACTED] here"),
        ("sk-abcdefghijklmnopqrstuvwx", "[REDACTED]"),
        ("short key sk-abc123 ok", "short key [REDACTED] ok"),
        ("sk-svcacct-AbCdEf_GhIj-KlMn", "[REDACTED]"),
        ("sk-ant-api03-abcDEF123456-xyz", "[REDACTED]"),
        ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe [REDACTED]"),
        ("use ghp_ABCDEFGHIJKLMNOPqrstuvwxyz0123 now", "use [REDACTED] now"),
        ("gho_16C7e42F292c6912E7710c838347Ae178B4a", "[REDACTED]"),
        ("github_pat_11ABCDEFG0123456789_abcdefghij", "[REDACTED]"),
        ("aws AKIAIOSFODNN7EXAMPLE key", "aws [REDACTED] key"),
        ("ASIAY34FZKBOKMUTVV7A", "[REDACTED]"),
        ("AIzaSyA1234567890abcdefghijklmnopqrstuv", "[REDACTED]"),
        (
            "slack xoxb-123456789012-1234567890123-AbCdEfGhIjKl",
            "slack [REDACTED]",
        ),
        ("xoxp-1234-5678-abcdef", "[REDACTED]"),
        ("xapp-1-A0123456789-0123456789-abcdef", "[REDACTED]"),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1\nq2w3e4r5\n-----END RSA PRIVATE KEY-----\nafter",
            "[REDACTED]\nafter",
        ),
        (
            "before -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA",
            "before [REDACTED]",
        ),
        (
            r#"{"text":"-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----\n"}"#,
            r#"{"text":"[REDACTED]\n"}"#,
        ),
        (
            r#"{"text":"-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI","n":1}"#,
            r#"{"text":"[REDACTED]","n":1}"#,
        ),
        (
            "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end",
            "jwt [REDACTED] end",
        ),
        (
            "postgres://app:hunter2@db:5432/x",
            "postgres://app:[REDACTED]@db:5432/x",
        ),
        ("https://user:p@ss@host/path", "https://user:[REDACTED]@host/path"),
        ("redis://:s3cret@cache", "redis://:[REDACTED]@cache"),
        (
            "curl -H 'Authorization: Bearer abc.def-ghi_jkl'",
            "curl -H 'Authorization: [REDACTED]'",
        ),
        (
            "authorization=Basic dXNlcjpwYXNz\nnext",
            "authorization=[REDACTED]\nnext",
        ),
        (
            "got bearer eyJhbGciOiJIUzI1NiJ9.x.y ok",
            "got bearer [REDACTED] ok",
        ),
        (
            "\"Authorization\": \"token abc123\", \"x\": 1",
            "\"Authorization\": \"[REDACTED]\", \"x\": 1",
        ),
        (
            "https://x/?api_key=abc123&page=2",
            "https://x/?api_key=[REDACTED]&page=2",
        ),
        ("token=xyz; other", "token=[REDACTED]; other"),
        (
            "OPENAI_API_KEY=sk-zz OTHER=1",
            "OPENAI_API_KEY=[REDACTED] OTHER=1",
        ),
        ("GITHUB_TOKEN: 'abc def'", "GITHUB_TOKEN: '[REDACTED]'"),
        (
            r#"{"password": "hunter2", "user": "bob"}"#,
            r#"{"password": "[REDACTED]", "user": "bob"}"#,
        ),
        (
            r#"{\"password\": \"hunter 2\", \"user\": 1}"#,
            r#"{\"password\": \"[REDACTED]\", \"user\": 1}"#,
        ),
        ("client_secret = s3cr3t", "client_secret = [REDACTED]"),
        ("password: correct horse battery", "password: [REDACTED]"),
        (
            "db:\n  password: s3cr3t pass\n  user: bob",
            "db:\n  password: [REDACTED]\n  user: bob",
        ),
        ("DB_PASSWD=pa55", "DB_PASSWD=[REDACTED]"),
        ("ünïcödé token=ñandú!", "ünïcödé token=[REDACTED]"),
    ];

    /// Ordinary text that looks a little like a secret: it must stay as it is.
    const LOOKALIKES: &[&str] = &[
        "the token count is 4096",
        "max_tokens=4096",
        "tokens: 5",
        "the token is missing",
        "keyboard=us",
        "monkey: 1",
        "skeleton key",
        "pip install sk-learn",
        "sk-learning-rate-schedule",
        "task-sk-1 and sk-short",
        "risk-abcdefghijklmnopqrstu",
        "AKIA alone",
        "AKIAIOSFODNN7EXAMPLEX",
        "https://example.com:8443/path?q=1",
        "https://user@example.com/repo.git",
        "git@github.com:org/repo.git",
        "mail bob@example.com",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjAN\n-----END PUBLIC KEY-----",
        "-----BEGIN CERTIFICATE-----",
        "eyJ alone, and eyJhbGciOiJIUzI1NiJ9 alone",
        "basic knowledge",
        "the bearer receives it",
        "xoxo-hugs-and-kisses",
        "ghp_ is the prefix",
        "password policy",
        "ünïcödé text",
        "",
    ];

    #[test]
    fn real_shaped_secrets_are_redacted() {
        for (input, expected) in SECRETS {
            assert_eq!(redact(input), *expected, "input: {input}");
        }
    }

    #[test]
    fn lookalikes_stay() {
        for text in LOOKALIKES {
            assert_eq!(redact(text), *text);
        }
    }

    #[test]
    fn redaction_is_idempotent_and_keeps_surroundings() {
        for (input, _) in SECRETS {
            let once = redact(input);
            assert_eq!(redact(&once), once, "input: {input}");
        }
        let text = "a sk-abc123def b ghp_ABCDEFGHIJKLMNOPqrstuvwxyz0123 c";
        assert_eq!(redact(text), "a [REDACTED] b [REDACTED] c");
    }

    #[test]
    fn spans_are_widened_to_character_boundaries() {
        // A span that ends inside a multi-byte character is widened, never cut.
        assert_eq!(splice("aé b", std::iter::once(0..2).collect()), "[REDACTED] b");
        assert_eq!(splice("aéb", std::iter::once(2..3).collect()), "a[REDACTED]b");
        assert_eq!(splice("abcdef", vec![3..5, 1..2, 4..6]), "a[REDACTED]c[REDACTED]");
    }
}
