//! `prompt_template`: how a mail becomes the agent's prompt. `{message}`, `{from}` and
//! `{summary}` are replaced in one pass over the template, so a placeholder inside the mail text
//! stays as written; `{{` and `}}` are literal braces. Anything else in braces is refused when
//! the file is loaded, so rendering never fails.

/// The placeholders a template may use.
pub(crate) const PLACEHOLDERS: [&str; 3] = ["message", "from", "summary"];

/// One piece of a template.
#[derive(Debug, PartialEq, Eq)]
enum Piece<'a> {
    /// Text copied as it is.
    Text(&'a str),
    /// `{{` or `}}`: one literal brace.
    Brace(char),
    /// `{word}`.
    Placeholder(&'a str),
    /// A `{` or `}` that is neither doubled nor part of `{word}`.
    Stray(char),
}

/// The template's pieces, left to right.
fn pieces(template: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(at) = rest.find(['{', '}']) {
        if at > 0 {
            out.push(Piece::Text(&rest[..at]));
        }
        let tail = &rest[at..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push(Piece::Brace(if tail.starts_with('{') { '{' } else { '}' }));
            rest = &tail[2..];
            continue;
        }
        if tail.starts_with('{')
            && let Some(end) = tail[1..].find(['{', '}'])
            && tail.as_bytes()[1 + end] == b'}'
        {
            out.push(Piece::Placeholder(&tail[1..=end]));
            rest = &tail[end + 2..];
            continue;
        }
        out.push(Piece::Stray(if tail.starts_with('{') { '{' } else { '}' }));
        rest = &tail[1..];
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest));
    }
    out
}

/// The prompt for one mail: `template` with `{message}`, `{from}` and `{summary}` replaced in
/// one pass (the values are never scanned for placeholders) and `{{`/`}}` made single braces.
/// Anything else is copied as written; a template that passed loading has nothing else.
pub fn render_prompt(template: &str, message: &str, from: &str, summary: &str) -> String {
    let mut out = String::with_capacity(template.len() + message.len());
    for piece in pieces(template) {
        match piece {
            Piece::Text(t) => out.push_str(t),
            Piece::Brace(c) | Piece::Stray(c) => out.push(c),
            Piece::Placeholder("message") => out.push_str(message),
            Piece::Placeholder("from") => out.push_str(from),
            Piece::Placeholder("summary") => out.push_str(summary),
            Piece::Placeholder(other) => {
                out.push('{');
                out.push_str(other);
                out.push('}');
            }
        }
    }
    out
}

/// Why `template` cannot be used, as a message and a hint; `None` when it can.
pub(crate) fn check_template(template: &str) -> Option<(String, String)> {
    let known = "a template may use {message}, {from} and {summary}; write {{ and }} for literal braces";
    let mut has_message = false;
    for piece in pieces(template) {
        match piece {
            Piece::Placeholder("message") => has_message = true,
            Piece::Placeholder(word) if PLACEHOLDERS.contains(&word) => {}
            Piece::Placeholder(word) => {
                return Some((
                    format!("`prompt_template` uses an unknown placeholder `{{{word}}}`"),
                    known.to_owned(),
                ));
            }
            Piece::Stray(c) => {
                return Some((
                    format!("`prompt_template` has a lone `{c}`"),
                    format!("write `{c}{c}` for a literal `{c}`; {known}"),
                ));
            }
            Piece::Text(_) | Piece::Brace(_) => {}
        }
    }
    (!has_message).then(|| {
        (
            "`prompt_template` has no `{message}`: the mail would never reach the agent".to_owned(),
            "put `{message}` where the mail text goes, e.g. \"Message from {from}:\\n{message}\"".to_owned(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_replaced() {
        let got = render_prompt(
            "Message from {from} ({summary}):\n{message}",
            "hi",
            "alice@t",
            "greeting",
        );
        assert_eq!(got, "Message from alice@t (greeting):\nhi");
        assert_eq!(render_prompt("{message}", "x", "f", "s"), "x");
        assert_eq!(render_prompt("{message}{message}", "ab", "", ""), "abab");
    }

    #[test]
    fn values_are_never_expanded_again() {
        let got = render_prompt("{from}: {message}", "say {from} and {summary} {{x}}", "bob", "S");
        assert_eq!(got, "bob: say {from} and {summary} {{x}}");
        let got = render_prompt("[{summary}] {message}", "m", "{message}", "{from}");
        assert_eq!(got, "[{from}] m");
    }

    #[test]
    fn doubled_braces_are_literal() {
        assert_eq!(render_prompt("{{message}} {message}", "m", "", ""), "{message} m");
        assert_eq!(render_prompt("a }} b {{ {message}", "m", "", ""), "a } b { m");
        assert_eq!(render_prompt("{{{message}}}", "m", "", ""), "{m}");
    }

    #[test]
    fn templates_are_checked() {
        assert_eq!(check_template("{message}"), None);
        assert_eq!(check_template("{{x}} {from} {summary} {message}"), None);
        let (msg, hint) = check_template("{msg} {message}").unwrap();
        assert_eq!(msg, "`prompt_template` uses an unknown placeholder `{msg}`");
        assert!(hint.contains("{message}, {from} and {summary}"), "{hint}");
        assert!(check_template("a { b {message}").unwrap().0.contains("lone `{`"));
        assert!(check_template("a } b {message}").unwrap().0.contains("lone `}`"));
        assert!(check_template("{message").unwrap().0.contains("lone `{`"));
        let (msg, _) = check_template("From {from}").unwrap();
        assert!(msg.contains("the mail would never reach the agent"), "{msg}");
        assert!(
            check_template("{{message}}")
                .unwrap()
                .0
                .contains("no `{message}`")
        );
    }

    #[test]
    fn stray_braces_render_as_written() {
        assert_eq!(render_prompt("a { {message} }", "m", "", ""), "a { m }");
        assert_eq!(render_prompt("{other} {message}", "m", "", ""), "{other} m");
    }
}
