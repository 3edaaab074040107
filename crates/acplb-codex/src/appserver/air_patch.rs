//! `JetBrains` AIR's `diffPatch` (ADR 0049): for an AIR client that declared it, each file of a
//! `fileChange` is one ACP `Diff` with an empty new text whose
//! `_meta.jetbrains.air.diffPatch` is `{version: 1, format: "git_patch", text}`, a Git patch
//! built from Codex's own change text, as the TS peer builds it: an added or deleted file as a
//! whole-file patch (`new file mode` / `deleted file mode`), an update as Codex's hunks under a
//! `diff --git` header (with `rename from` / `rename to` when it moves the file). Paths are
//! relative (`a/`, `b/` with the leading `/` dropped); names with quotes, backslashes or
//! control characters are quoted the way Git quotes them. A change that gives no valid patch
//! (no hunk, hunks whose line counts do not add up, binary text, over 1 MiB) keeps acplb's
//! plain diff.

use std::fmt::Write as _;

use agent_client_protocol::v1::schema::{Diff, ToolCallContent};
use serde_json::json;

use super::wire::{FileUpdateChange, PatchKind};

/// The largest patch (and change text) sent, in bytes.
const MAX_BYTES: usize = 1024 * 1024;
/// How much of a text is looked at for a NUL byte (binary).
const BINARY_PROBE: usize = 8000;
const NO_NEWLINE: &str = "\\ No newline at end of file";

/// The AIR patch content of `change`, or `None` when it has none (acplb's plain diff then).
pub(super) fn content(change: &FileUpdateChange) -> Option<ToolCallContent> {
    if change.diff.len() > MAX_BYTES {
        return None;
    }
    let (path, kind, git) = match &change.kind {
        PatchKind::Add => (&change.path, "add", whole_file(&change.path, &change.diff, true)?),
        PatchKind::Delete => (
            &change.path,
            "delete",
            whole_file(&change.path, &change.diff, false)?,
        ),
        PatchKind::Update { move_path } => {
            let to = move_path.as_ref().unwrap_or(&change.path);
            let diff = change.diff.split("\n\nMoved to: ").next().unwrap_or_default();
            (to, "update", update(&change.path, to, diff)?)
        }
        PatchKind::Unknown => return None,
    };
    if git.len() > MAX_BYTES {
        return None;
    }
    let mut meta = acplb_core::capabilities::air_meta(
        crate::render::air::DIFF_PATCH,
        json!({ "version": 1, "format": "git_patch", "text": git }),
    );
    meta.insert("kind".to_owned(), kind.into());
    Some(Diff::new(path, "").meta(meta).into())
}

/// A whole file added (`added`) or deleted as a Git patch; `None` for an empty or binary text.
fn whole_file(path: &str, text: &str, added: bool) -> Option<String> {
    if text.is_empty() || binary(text) {
        return None;
    }
    let name = git_path(path);
    let mut lines: Vec<&str> = text.split('\n').collect();
    let ends_with_newline = lines.last() == Some(&"");
    if ends_with_newline {
        lines.pop();
    }
    let range = match lines.len() {
        1 => "1".to_owned(),
        n => format!("1,{n}"),
    };
    let (sign, mode, old, new, hunk) = if added {
        let new = file_header("+++", "b/", &name);
        (
            '+',
            "new",
            "--- /dev/null".to_owned(),
            new,
            format!("@@ -0,0 +{range} @@"),
        )
    } else {
        let old = file_header("---", "a/", &name);
        (
            '-',
            "deleted",
            old,
            "+++ /dev/null".to_owned(),
            format!("@@ -{range} +0,0 @@"),
        )
    };
    let mut out = vec![
        format!("diff --git {} {}", quoted("a/", &name), quoted("b/", &name)),
        format!("{mode} file mode 100644"),
        old,
        new,
        hunk,
    ];
    out.extend(lines.iter().map(|l| format!("{sign}{l}")));
    if !ends_with_newline {
        out.push(NO_NEWLINE.to_owned());
    }
    out.push(String::new());
    Some(out.join("\n"))
}

/// An update of `from` (moved to `to`) as a Git patch of Codex's hunks.
fn update(from: &str, to: &str, diff: &str) -> Option<String> {
    let hunks = hunks(diff)?;
    if binary(&hunks) {
        return None;
    }
    let (old, new) = (git_path(from), git_path(to));
    let mut headers = vec![format!(
        "diff --git {} {}",
        quoted("a/", &old),
        quoted("b/", &new)
    )];
    if old != new {
        headers.push(format!("rename from {}", quoted("", &old)));
        headers.push(format!("rename to {}", quoted("", &new)));
    }
    headers.push(file_header("---", "a/", &old));
    headers.push(file_header("+++", "b/", &new));
    Some(format!("{}\n{hunks}", headers.join("\n")))
}

/// The hunks of a unified diff, checked: only file header lines before the first `@@`, hunks
/// in order, each with as many old and new lines as its header says; `None` otherwise.
fn hunks(diff: &str) -> Option<String> {
    let mut lines: Vec<&str> = diff.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    let first = lines.iter().position(|l| l.starts_with("@@"))?;
    let header_line = |l: &&str| {
        l.is_empty()
            || ["diff --git ", "index ", "--- ", "+++ "]
                .iter()
                .any(|p| l.starts_with(p))
    };
    if !lines[..first].iter().all(header_line) {
        return None;
    }
    let hunks = &lines[first..];
    let (mut i, mut old_end, mut offset) = (0, 1_i64, 0_i64);
    while i < hunks.len() {
        let (old, new) = ranges(hunks[i])?;
        if old.0 < old_end || new.0 - old.0 != offset {
            return None;
        }
        old_end = old.0 + old.1;
        offset += new.1 - old.1;
        let (mut old_left, mut new_left) = (old.1, new.1);
        i += 1;
        while old_left > 0 || new_left > 0 {
            let line = hunks.get(i)?;
            match line.as_bytes().first() {
                None | Some(b' ') => (old_left, new_left) = (old_left - 1, new_left - 1),
                Some(b'-') => old_left -= 1,
                Some(b'+') => new_left -= 1,
                Some(b'\\') if *line == NO_NEWLINE => {}
                _ => return None,
            }
            i += 1;
        }
        if old_left != 0 || new_left != 0 {
            return None;
        }
        while hunks.get(i) == Some(&NO_NEWLINE) {
            i += 1;
        }
    }
    Some(format!("{}\n", hunks.join("\n")))
}

/// `(first line, count)` of the old and new ranges of a hunk header `@@ -a,b +c,d @@`.
fn ranges(header: &str) -> Option<((i64, i64), (i64, i64))> {
    let mut words = header.strip_prefix("@@ ")?.split(' ');
    let old = range(words.next()?.strip_prefix('-')?)?;
    let new = range(words.next()?.strip_prefix('+')?)?;
    (words.next() == Some("@@")).then_some((old, new))
}

/// A range `start[,count]`: an empty one stands after its start line.
fn range(text: &str) -> Option<(i64, i64)> {
    let (start, count) = text.split_once(',').unwrap_or((text, "1"));
    let (start, count): (i64, i64) = (start.parse().ok()?, count.parse().ok()?);
    match (start, count) {
        (s, 0) => Some((s + 1, 0)),
        (0, _) => None,
        (s, c) => Some((s, c)),
    }
}

fn binary(text: &str) -> bool {
    text.bytes().take(BINARY_PROBE).any(|b| b == 0)
}

/// A path as Git names it in a patch: relative, without leading slashes.
fn git_path(path: &str) -> String {
    path.trim_start_matches('/').to_owned()
}

/// `--- a/name` (a tab after a name with a space, as Git writes it).
fn file_header(marker: &str, prefix: &str, name: &str) -> String {
    let quoted = quoted(prefix, name);
    let tab = if !quoted.starts_with('"') && quoted.contains(' ') {
        "\t"
    } else {
        ""
    };
    format!("{marker} {quoted}{tab}")
}

/// `prefix` + `name`, quoted as Git quotes a name with a quote, a backslash or a control
/// character.
fn quoted(prefix: &str, name: &str) -> String {
    let full = format!("{prefix}{name}");
    if !full
        .chars()
        .any(|c| c == '"' || c == '\\' || c.is_ascii_control())
    {
        return full;
    }
    let mut out = String::from("\"");
    for c in full.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\x0b' => out.push_str("\\v"),
            '\x0c' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if c.is_ascii_control() => {
                let _ = write!(out, "\\{:03o}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn change(path: &str, kind: PatchKind, diff: &str) -> FileUpdateChange {
        FileUpdateChange {
            path: path.into(),
            kind,
            diff: diff.into(),
        }
    }

    fn patch_of(content: Option<ToolCallContent>) -> (Value, String) {
        let value = serde_json::to_value(content.expect("a patch")).unwrap();
        let text = value["_meta"]["jetbrains"]["air"]["diffPatch"]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        (value, text)
    }

    #[test]
    fn an_added_file_is_a_whole_file_patch() {
        let (value, text) = patch_of(content(&change("/w/new.txt", PatchKind::Add, "one\ntwo\n")));
        assert_eq!(
            text,
            "diff --git a/w/new.txt b/w/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/w/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"
        );
        assert_eq!(value["newText"], "");
        assert_eq!(value["_meta"]["kind"], "add");
        assert_eq!(value["_meta"]["jetbrains"]["air"]["version"], 1);
        assert_eq!(
            value["_meta"]["jetbrains"]["air"]["diffPatch"]["format"],
            "git_patch"
        );
        let (_, deleted) = patch_of(content(&change("/w/old", PatchKind::Delete, "gone")));
        assert_eq!(
            deleted,
            "diff --git a/w/old b/w/old\ndeleted file mode 100644\n--- a/w/old\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn an_update_keeps_codexs_hunks_under_a_git_header() {
        let diff = "@@ -1,2 +1,2 @@\n-a\n+b\n c\n";
        let (value, text) = patch_of(content(&change(
            "/w/f.rs",
            PatchKind::Update { move_path: None },
            diff,
        )));
        assert_eq!(
            text,
            format!("diff --git a/w/f.rs b/w/f.rs\n--- a/w/f.rs\n+++ b/w/f.rs\n{diff}")
        );
        assert_eq!(value["path"], "/w/f.rs");
        let moved = PatchKind::Update {
            move_path: Some("/w/g s.rs".into()),
        };
        let (value, text) = patch_of(content(&change("/w/f.rs", moved, diff)));
        assert!(text.starts_with("diff --git a/w/f.rs b/w/g s.rs\nrename from w/f.rs\nrename to w/g s.rs\n--- a/w/f.rs\n+++ b/w/g s.rs\t\n"), "{text}");
        assert_eq!(value["path"], "/w/g s.rs");
    }

    #[test]
    fn what_gives_no_valid_patch_has_none() {
        let update = |diff: &str| content(&change("/w/f", PatchKind::Update { move_path: None }, diff));
        assert!(update("no hunk at all\n").is_none());
        assert!(update("@@ -1,2 +1,2 @@\n-a\n+b\n").is_none(), "too few lines");
        assert!(
            update("@@ -3 +3 @@\n-a\n+b\n@@ -1 +1 @@\n-c\n+d\n").is_none(),
            "out of order"
        );
        assert!(update("@@ nonsense @@\n-a\n").is_none());
        assert!(content(&change("/w/f", PatchKind::Add, "")).is_none());
        assert!(content(&change("/w/f", PatchKind::Add, "a\0b")).is_none());
        assert!(content(&change("/w/f", PatchKind::Unknown, "x")).is_none());
        assert!(content(&change("/w/f", PatchKind::Add, &"x".repeat(MAX_BYTES + 1))).is_none());
    }

    #[test]
    fn names_git_would_quote_are_quoted() {
        assert_eq!(quoted("a/", "plain name"), "a/plain name");
        assert_eq!(quoted("a/", "q\"t\\x\ty\u{1}"), "\"a/q\\\"t\\\\x\\ty\\001\"");
    }
}
