//! Whether Codex can authenticate: the answer of `codex login status`, and API keys in the
//! environment (named, never shown).

use super::probe::{self, Outcome};

/// Variables Codex takes an API key or token from (Codex 0.169.0's own `codex doctor` lists
/// these as "auth is provided by environment").
const KEY_VARS: [&str; 3] = ["CODEX_API_KEY", "OPENAI_API_KEY", "CODEX_ACCESS_TOKEN"];

/// What to print on the `login:` line, and hints for the lines after it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub(crate) line: String,
    pub(crate) hints: Vec<String>,
}

/// The `KEY_VARS` that are set (non-empty) according to `get`.
pub(crate) fn keys_in_env(get: impl Fn(&str) -> Option<String>) -> Vec<&'static str> {
    KEY_VARS
        .into_iter()
        .filter(|k| get(k).is_some_and(|v| !v.is_empty()))
        .collect()
}

/// Reads `codex login status`. In 0.169.0 it exits 0 and says `Logged in using ChatGPT` (or
/// another method), or `API key configured - <masked key>` (that line is never repeated); it
/// exits 1 and says `Not logged in` otherwise. Everything goes to stderr.
pub(crate) fn verdict(outcome: &Outcome, env_keys: &[&str], limit_secs: u64) -> Verdict {
    let env_note = (!env_keys.is_empty()).then(|| {
        format!(
            "an API key is set in the environment ({}); Codex uses it in place of a login",
            env_keys.join(", ")
        )
    });
    let (line, mut hints) = match outcome {
        Outcome::Exited {
            status,
            stdout,
            stderr,
        } => {
            let text = format!("{stdout}\n{stderr}");
            let said = |s: &str| text.lines().any(|l| l.trim_start().starts_with(s));
            if status.success() {
                (logged_in_line(&text, said("API key configured")), Vec::new())
            } else if said("Not logged in") {
                match &env_note {
                    Some(_) => ("not logged in".to_owned(), Vec::new()),
                    None => (
                        "NOT LOGGED IN".to_owned(),
                        vec![
                            "run `codex login` (or pipe an API key to `codex login --with-api-key`); not needed"
                                .to_owned(),
                            "when your Codex config names a model provider that reads its own key (env_key)"
                                .to_owned(),
                        ],
                    ),
                }
            } else {
                let why = probe::first_line(stderr);
                (
                    format!("unknown: `codex login status` failed ({status}): {why}"),
                    Vec::new(),
                )
            }
        }
        Outcome::TimedOut => (
            format!("unknown: `codex login status` gave no answer within {limit_secs} s (stopped)"),
            Vec::new(),
        ),
        Outcome::NotStarted(e) => (
            format!("unknown: `codex login status` did not start: {e}"),
            Vec::new(),
        ),
    };
    hints.extend(env_note);
    Verdict { line, hints }
}

fn logged_in_line(text: &str, api_key: bool) -> String {
    if api_key {
        return "logged in (an API key stored by `codex login`)".to_owned();
    }
    let how = text
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("Logged in using "))
        .map(|how| probe::clean(how, 60));
    match how {
        Some(how) if !how.is_empty() => format!("logged in (using {how})"),
        _ => "logged in".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt as _;
    use std::process::ExitStatus;

    use super::*;

    fn exited(code: i32, stderr: &str) -> Outcome {
        Outcome::Exited {
            status: ExitStatus::from_raw(code << 8),
            stdout: String::new(),
            stderr: stderr.to_owned(),
        }
    }

    #[test]
    fn not_logged_in_gets_the_login_hint() {
        let v = verdict(&exited(1, "WARNING: something\nNot logged in\n"), &[], 10);
        assert_eq!(v.line, "NOT LOGGED IN");
        assert!(v.hints[0].contains("codex login"), "{v:?}");
    }

    #[test]
    fn an_api_key_login_never_shows_the_key() {
        let v = verdict(&exited(0, "API key configured - sk-test-***p1234\n"), &[], 10);
        assert_eq!(v.line, "logged in (an API key stored by `codex login`)");
        assert!(!format!("{v:?}").contains("p1234"));
    }

    #[test]
    fn chatgpt_login_names_the_method() {
        let v = verdict(&exited(0, "Logged in using ChatGPT\n"), &[], 10);
        assert_eq!(v.line, "logged in (using ChatGPT)");
    }

    #[test]
    fn a_key_in_the_environment_is_named_not_shown() {
        let keys = keys_in_env(|k| (k == "OPENAI_API_KEY").then(|| "sk-secret-value".to_owned()));
        assert_eq!(keys, ["OPENAI_API_KEY"]);
        let v = verdict(&exited(1, "Not logged in\n"), &keys, 10);
        assert_eq!(v.line, "not logged in");
        assert_eq!(v.hints.len(), 1);
        assert!(v.hints[0].contains("OPENAI_API_KEY") && !v.hints[0].contains("sk-secret"));
        assert!(keys_in_env(|_| Some(String::new())).is_empty());
    }

    #[test]
    fn a_hang_or_an_odd_answer_is_unknown() {
        assert!(verdict(&Outcome::TimedOut, &[], 7).line.contains("within 7 s"));
        let v = verdict(
            &exited(2, "\u{1b}[31merror: unexpected argument\u{1b}[0m"),
            &[],
            10,
        );
        assert!(v.line.starts_with("unknown:") && v.line.contains("error: unexpected argument"));
        assert!(!v.line.contains('\u{1b}'));
    }
}
