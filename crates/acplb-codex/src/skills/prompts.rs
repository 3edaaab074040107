//! Codex's custom prompts (deprecated by Codex in favour of skills, still read by its
//! composer): the `.md` files in `$CODEX_HOME/prompts`, each with optional front matter
//! (`description`, `argument-hint`), and how the arguments typed after the command fill them
//! in, by Codex's rules: `$1`..`$9` and `$ARGUMENTS` from positional arguments, or `$KEY`
//! placeholders from `KEY=value` pairs (all of them required); `$$` stays as it is; double
//! quotes group words. Arguments a prompt has no placeholder for follow its text.

use std::collections::BTreeMap;
use std::path::Path;

use super::{MAX_EACH, Prompt, one_line, safe_name};

/// The largest prompt file read; a larger one is left out, with a warning.
const MAX_BYTES: u64 = 64 * 1024;

/// The prompts in `dir`, by name, and why any file there was left out. A missing folder has
/// none. Blocking: file reads.
pub(crate) fn read(dir: &Path) -> (Vec<Prompt>, Vec<String>) {
    let mut warnings = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (Vec::new(), warnings);
    };
    let mut prompts = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("md") {
            continue;
        }
        let Some(name) = path.file_stem().and_then(|s| s.to_str()).filter(|n| safe_name(n)) else {
            // Debug-quoted: a name may hold control characters.
            warnings.push(format!(
                "custom prompt {:?} left out: its name is not 1-64 ASCII letters, digits, `-`, `_`, `.`",
                entry.file_name().to_string_lossy()
            ));
            continue;
        };
        // Symlinks to Markdown files count, as for Codex.
        match std::fs::metadata(&path) {
            Ok(meta) if meta.is_file() && meta.len() <= MAX_BYTES => {}
            Ok(meta) if meta.is_file() => {
                warnings.push(format!(
                    "custom prompt `{name}` left out: it is larger than {MAX_BYTES} bytes"
                ));
                continue;
            }
            _ => continue,
        }
        match std::fs::read_to_string(&path) {
            Ok(text) => prompts.push(parse(name, &text)),
            Err(e) => warnings.push(format!("custom prompt `{name}` could not be read: {e}")),
        }
    }
    prompts.sort_by(|a, b| a.name.cmp(&b.name));
    if prompts.len() > MAX_EACH {
        warnings.push(format!(
            "{} custom prompts; the first {MAX_EACH} by name are offered",
            prompts.len()
        ));
        prompts.truncate(MAX_EACH);
    }
    (prompts, warnings)
}

/// A prompt file's front matter and body.
fn parse(name: &str, text: &str) -> Prompt {
    let (front, body) = split_front_matter(text);
    let field = |keys: &[&str]| {
        front.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            keys.contains(&key.trim())
                .then(|| value.trim().trim_matches('"').trim_matches('\'').to_owned())
                .filter(|v| !v.is_empty())
        })
    };
    let (named, positional) = placeholders(body);
    let hint = field(&["argument-hint", "argument_hint"])
        .or_else(|| {
            (!named.is_empty()).then(|| {
                named
                    .iter()
                    .map(|k| format!("{k}=…"))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
        })
        .or_else(|| positional.then(|| "arguments".to_owned()));
    Prompt {
        name: name.to_owned(),
        description: one_line(&field(&["description"]).unwrap_or_else(|| format!("Custom prompt {name}.md"))),
        hint: hint.map(|h| one_line(&h)),
        body: body.to_owned(),
    }
}

/// (front matter, body): front matter is between a first line `---` and the next `---` line.
fn split_front_matter(text: &str) -> (&str, &str) {
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return ("", text);
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return (&rest[..offset], &rest[offset + line.len()..]);
        }
        offset += line.len();
    }
    // No closing line: all of it is the body, as written.
    ("", text)
}

/// The named placeholders of `body` (`$FILE`; `$ARGUMENTS` is not one) and whether it has
/// positional ones.
fn placeholders(body: &str) -> (Vec<String>, bool) {
    let mut named = Vec::new();
    let mut positional = false;
    scan(body, |token| match token {
        Token::Positional(_) | Token::All => positional = true,
        Token::Named(key) if !named.iter().any(|k| k == key) => named.push(key.to_owned()),
        Token::Named(_) => {}
    });
    (named, positional)
}

enum Token<'a> {
    Positional(usize),
    All,
    Named(&'a str),
}

/// Calls `found` for each placeholder of `body`.
fn scan<'a>(body: &'a str, mut found: impl FnMut(Token<'a>)) {
    replace(body, |t| {
        found(t);
        None
    });
}

/// `body` with each placeholder replaced by what `with` answers (`None`: left as it is).
fn replace<'a>(body: &'a str, mut with: impl FnMut(Token<'a>) -> Option<String>) -> String {
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let next = after.chars().next();
        let (token, len) = match next {
            Some('$') => {
                out.push_str("$$");
                rest = &after[1..];
                continue;
            }
            Some(d @ '1'..='9') => (Some(Token::Positional(d as usize - '0' as usize)), 1),
            Some(c) if c.is_ascii_uppercase() => {
                let len = after
                    .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
                    .unwrap_or(after.len());
                let key = &after[..len];
                (
                    Some(if key == "ARGUMENTS" {
                        Token::All
                    } else {
                        Token::Named(key)
                    }),
                    len,
                )
            }
            _ => (None, 0),
        };
        let text = &rest[at..at + 1 + len];
        match token.and_then(&mut with) {
            Some(value) => out.push_str(&value),
            None => out.push_str(text),
        }
        rest = &after[len..];
    }
    out.push_str(rest);
    out
}

/// `args` split as Codex's composer splits them: on whitespace, double quotes grouping.
fn split_args(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let (mut quoted, mut any) = (false, false);
    for c in args.chars() {
        match c {
            '"' => (quoted, any) = (!quoted, true),
            c if c.is_whitespace() && !quoted => {
                if any {
                    out.push(std::mem::take(&mut word));
                }
                any = false;
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(word);
    }
    out
}

/// The text `prompt` sends with `args`, or why the arguments do not fit it.
pub(crate) fn expand(prompt: &Prompt, args: &str) -> Result<String, String> {
    let words = split_args(args);
    let (named, positional) = placeholders(&prompt.body);
    let command = format!("/prompts:{}", prompt.name);
    if !named.is_empty() {
        let mut values = BTreeMap::new();
        for word in &words {
            let Some((key, value)) = word.split_once('=').filter(|(k, _)| !k.is_empty()) else {
                return Err(format!(
                    "{command} takes KEY=value arguments ({}); `{word}` is not one",
                    named.join(", ")
                ));
            };
            values.insert(key.to_owned(), value.to_owned());
        }
        let missing: Vec<&str> = named
            .iter()
            .filter(|k| !values.contains_key(*k))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "{command} needs {}",
                missing
                    .iter()
                    .map(|k| format!("{k}=…"))
                    .collect::<Vec<_>>()
                    .join(" ")
            ));
        }
        return Ok(replace(&prompt.body, |t| match t {
            Token::Named(key) => values.get(key).cloned(),
            Token::All => Some(words.join(" ")),
            Token::Positional(_) => None,
        }));
    }
    let text = replace(&prompt.body, |t| match t {
        Token::Positional(n) => Some(words.get(n - 1).cloned().unwrap_or_default()),
        Token::All => Some(words.join(" ")),
        Token::Named(_) => None,
    });
    if positional || words.is_empty() {
        Ok(text)
    } else {
        Ok(format!("{}\n\n{}", text.trim_end(), args.trim()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(body: &str) -> Prompt {
        parse("p", body)
    }

    #[test]
    fn positional_arguments_fill_numbers_and_arguments() {
        let p = prompt("Fix $1 in $2; all: $ARGUMENTS; cost $$5 or $0 or $lower");
        assert_eq!(
            expand(&p, r#"bug "src/a b.rs" extra"#).as_deref(),
            Ok("Fix bug in src/a b.rs; all: bug src/a b.rs extra; cost $$5 or $0 or $lower")
        );
        assert_eq!(
            expand(&p, "").as_deref(),
            Ok("Fix  in ; all: ; cost $$5 or $0 or $lower")
        );
        assert_eq!(p.hint.as_deref(), Some("arguments"));
    }

    #[test]
    fn named_arguments_are_all_required_pairs() {
        let p = prompt("---\ndescription: \"Review a file\"\n---\nReview $FILE for $FOCUS.\n");
        assert_eq!(p.description, "Review a file");
        assert_eq!(p.hint.as_deref(), Some("FILE=… FOCUS=…"));
        assert_eq!(
            expand(&p, r#"FILE=a.rs FOCUS="error handling""#).as_deref(),
            Ok("Review a.rs for error handling.\n")
        );
        let missing = expand(&p, "FILE=a.rs").unwrap_err();
        assert!(missing.contains("needs FOCUS=…"), "{missing}");
        let loose = expand(&p, "a.rs").unwrap_err();
        assert!(loose.contains("`a.rs` is not one"), "{loose}");
    }

    #[test]
    fn arguments_without_placeholders_follow_the_text_and_front_matter_is_optional() {
        let p = prompt("Say hi.\n");
        assert_eq!(expand(&p, "to Bob").as_deref(), Ok("Say hi.\n\nto Bob"));
        assert_eq!(p.description, "Custom prompt p.md");
        assert_eq!(p.hint, None);
        let unclosed = prompt("---\ndescription: x\nno end");
        assert_eq!(unclosed.body, "---\ndescription: x\nno end");
        let hinted = prompt("---\nargument-hint: [FILES=<paths>]\n---\n$FILES");
        assert_eq!(hinted.hint.as_deref(), Some("[FILES=<paths>]"));
    }

    #[test]
    fn the_folder_keeps_safe_markdown_files_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        std::fs::write(d.join("good.md"), "---\ndescription: Good\n---\nbody").expect("write");
        std::fs::write(d.join("bad name.md"), "x").expect("write");
        std::fs::write(d.join("notes.txt"), "x").expect("write");
        std::fs::write(d.join("huge.md"), "x".repeat(70_000)).expect("write");
        std::fs::create_dir(d.join("dir.md")).expect("mkdir");
        let (prompts, warnings) = read(d);
        let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["good"]);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert_eq!(read(&d.join("missing")).0, Vec::new());
    }
}
