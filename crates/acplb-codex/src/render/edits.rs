//! File edits: `file_change` items become Edit tool calls with real diffs, and patches that
//! Codex refused (reported only on stderr) become failed Edit tool calls.
//!
//! Exec events carry no diff text, only the paths and kinds of change, so the exec decoder asks
//! its caller for file contents through [`FileTexts`], the one window it has onto the file
//! system. The app-server decoder draws its edits' titles and locations here too
//! (`appserver/edits.rs`), with Codex's own diffs.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    Diff, ToolCall, ToolCallContent, ToolCallId, ToolCallLocation, ToolCallStatus, ToolCallUpdateFields,
    ToolKind,
};
use serde_json::json;

use super::DecoderOptions;
use crate::items::{ChangeKind, FileChange, ItemStatus};

/// What a file contained before a change, as far as the caller knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OldText {
    /// The content before the change.
    Known(String),
    /// The file did not exist.
    Absent,
    /// The content cannot be known (not captured in time, too large, not UTF-8, …).
    Unknown {
        /// Why, in words for the user.
        reason: String,
    },
}

/// The decoder's window onto file contents, implemented by the caller.
///
/// [`FileTexts::before`] is called when a change is first seen (at `item.started`, or at
/// `item.completed` when no start was reported); [`FileTexts::after`] when it completed.
pub trait FileTexts {
    /// Content of `path` before the change.
    fn before(&mut self, path: &Path) -> OldText;
    /// Content of `path` after the change, `None` when it cannot be read.
    fn after(&mut self, path: &Path) -> Option<String>;
}

/// A [`FileTexts`] that knows nothing: edits are shown without diffs.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoFileTexts;

impl FileTexts for NoFileTexts {
    fn before(&mut self, _path: &Path) -> OldText {
        OldText::Unknown {
            reason: "file contents are not available".to_owned(),
        }
    }

    fn after(&mut self, _path: &Path) -> Option<String> {
        None
    }
}

/// Old texts of the files of a change, captured when the change was first seen.
pub(crate) type Befores = Vec<(PathBuf, OldText)>;

/// Asks `files` for the old text of every updated or deleted file.
pub(crate) fn befores(item: &FileChange, files: &mut dyn FileTexts) -> Befores {
    item.changes
        .iter()
        .filter(|c| matches!(c.kind, ChangeKind::Update | ChangeKind::Delete))
        .map(|c| {
            let path = PathBuf::from(&c.path);
            let old = files.before(&path);
            (path, old)
        })
        .collect()
}

/// A running edit: "Edit a.rs, b.rs" with one location per file.
pub(crate) fn edit_call(id: ToolCallId, item: &FileChange, opts: &DecoderOptions) -> ToolCall {
    let paths: Vec<&str> = item.changes.iter().map(|c| c.path.as_str()).collect();
    let changes: Vec<_> = item
        .changes
        .iter()
        .map(|c| json!({ "path": c.path, "kind": kind_name(c.kind) }))
        .collect();
    ToolCall::new(id, edit_title(&paths, &opts.cwd))
        .kind(ToolKind::Edit)
        .status(ToolCallStatus::InProgress)
        .locations(paths.iter().map(ToolCallLocation::new).collect())
        .raw_input(json!({ "changes": changes }))
}

/// A finished edit: one diff per file, or a note where the old text is unknown.
pub(crate) fn edit_finish(
    item: &FileChange,
    befores: Befores,
    files: &mut dyn FileTexts,
    opts: &DecoderOptions,
) -> ToolCallUpdateFields {
    let failed = item.status == ItemStatus::Failed;
    let content = if failed {
        vec!["The patch failed; no file was changed by it.".into()]
    } else {
        diffs(item, befores, files, opts)
    };
    ToolCallUpdateFields::new()
        .status(if failed {
            ToolCallStatus::Failed
        } else {
            ToolCallStatus::Completed
        })
        .content(content)
        .raw_output(json!({ "status": item.status.as_str() }))
}

fn diffs(
    item: &FileChange,
    mut befores: Befores,
    files: &mut dyn FileTexts,
    opts: &DecoderOptions,
) -> Vec<ToolCallContent> {
    let mut content = Vec::with_capacity(item.changes.len());
    for change in &item.changes {
        let path = PathBuf::from(&change.path);
        let shown = display_path(&change.path, &opts.cwd);
        let old = match befores.iter().position(|(p, _)| *p == path) {
            Some(i) => befores.swap_remove(i).1,
            None => OldText::Absent,
        };
        let entry = match (change.kind, old) {
            (ChangeKind::Delete, OldText::Known(old)) => Diff::new(path, "").old_text(old).into(),
            (ChangeKind::Delete, OldText::Absent) => format!("Deleted {shown}.").into(),
            (kind, OldText::Unknown { reason }) => format!(
                "{} {shown}; its previous content is unknown ({reason}), so no diff is shown.",
                past_tense(kind)
            )
            .into(),
            (ChangeKind::Add | ChangeKind::Update, old) => match files.after(&path) {
                Some(new) => match old {
                    OldText::Known(old) => Diff::new(path, new).old_text(old).into(),
                    _ => Diff::new(path, new).into(),
                },
                None => format!(
                    "{} {shown}; its new content could not be read.",
                    past_tense(change.kind)
                )
                .into(),
            },
            (kind, _) => format!("{} {shown}.", past_tense(kind)).into(),
        };
        content.push(entry);
    }
    content
}

fn past_tense(kind: ChangeKind) -> &'static str {
    match kind {
        ChangeKind::Add => "Created",
        ChangeKind::Delete => "Deleted",
        ChangeKind::Update | ChangeKind::Unknown => "Changed",
    }
}

fn kind_name(kind: ChangeKind) -> &'static str {
    match kind {
        ChangeKind::Add => "add",
        ChangeKind::Update => "update",
        ChangeKind::Delete => "delete",
        ChangeKind::Unknown => "unknown",
    }
}

/// `Edit README.md, hello.txt` (at most three names, then "and N more").
fn edit_title(paths: &[&str], cwd: &Path) -> String {
    const SHOWN: usize = 3;
    let mut names: Vec<String> = paths.iter().take(SHOWN).map(|p| display_path(p, cwd)).collect();
    if paths.len() > SHOWN {
        names.push(format!("and {} more", paths.len() - SHOWN));
    }
    if names.is_empty() {
        "Edit files".to_owned()
    } else {
        format!("Edit {}", names.join(", "))
    }
}

/// A path relative to `cwd` when it is inside it, else as given.
pub(crate) fn display_path(path: &str, cwd: &Path) -> String {
    match Path::new(path).strip_prefix(cwd) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => path.to_owned(),
    }
}

/// A patch Codex refused or failed to verify, seen on stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PatchRefusal {
    /// `rejected` or `failed`.
    pub(crate) rejected: bool,
    /// Codex's reason.
    pub(crate) reason: String,
    /// The file named in the reason, when there is one.
    pub(crate) path: Option<String>,
}

/// Recognises `ERROR codex_core::tools::router: error=<patch refusal>` lines.
pub(crate) fn patch_refusal(line: &str) -> Option<PatchRefusal> {
    const MARKER: &str = "ERROR codex_core::tools::router:";
    let line = strip_ansi(line);
    let rest = line[line.find(MARKER)? + MARKER.len()..].trim();
    let reason = rest.strip_prefix("error=").unwrap_or(rest).trim();
    let rejected = reason.starts_with("patch rejected");
    if !rejected && !reason.contains("apply_patch") {
        return None;
    }
    let path = reason
        .split_whitespace()
        .find(|w| w.starts_with('/') && w.len() > 1)
        .map(|w| w.trim_end_matches([':', ',', ';', '.']).to_owned());
    Some(PatchRefusal {
        rejected,
        reason: reason.to_owned(),
        path,
    })
}

/// A refused patch as one finished (failed) Edit tool call.
pub(crate) fn refused_call(id: ToolCallId, refusal: PatchRefusal, opts: &DecoderOptions) -> ToolCall {
    let verb = if refusal.rejected {
        "Edit rejected"
    } else {
        "Edit failed"
    };
    let title = match &refusal.path {
        Some(path) => format!("{verb}: {}", display_path(path, &opts.cwd)),
        None => verb.to_owned(),
    };
    let locations = refusal.path.iter().map(ToolCallLocation::new).collect();
    ToolCall::new(id, title)
        .kind(ToolKind::Edit)
        .status(ToolCallStatus::Failed)
        .locations(locations)
        .raw_output(json!({ "error": refusal.reason }))
        .content(vec![refusal.reason.into()])
}

/// Removes ANSI colour sequences (`ESC [ … m`), in case Codex logs with colours.
fn strip_ansi(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains('\u{1b}') {
        return line.into();
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_from_stderr() {
        let line = "2026-11-22T02:54:28.187449Z ERROR codex_core::tools::router: error=patch rejected: writing is blocked by read-only sandbox; rejected by user approval settings";
        let refusal = patch_refusal(line).unwrap();
        assert!(refusal.rejected);
        assert_eq!(refusal.path, None);
        assert!(refusal.reason.starts_with("patch rejected: writing is blocked"));

        let line = "\u{1b}[2m2026-11-22T02:54:28.600242Z\u{1b}[0m \u{1b}[31mERROR\u{1b}[0m codex_core::tools::router: error=apply_patch verification failed: Failed to read file to update /workspace/does-not-exist.txt: No such file or directory (os error 2)";
        let refusal = patch_refusal(line).unwrap();
        assert!(!refusal.rejected);
        assert_eq!(refusal.path.as_deref(), Some("/workspace/does-not-exist.txt"));
    }

    #[test]
    fn other_stderr_lines_are_not_refusals() {
        for line in [
            "Reading additional input from stdin...",
            "2026-11-22T02:54:52.675477Z ERROR codex_core::tools::router: error=approval policy is Never; reject command",
            "2026-11-22T02:55:03.689418Z ERROR codex_core::session: failed to record rollout items: apply_patch",
        ] {
            assert_eq!(patch_refusal(line), None, "{line}");
        }
    }

    #[test]
    fn titles_use_paths_relative_to_cwd() {
        let cwd = Path::new("/workspace");
        assert_eq!(
            edit_title(&["/workspace/README.md", "/workspace/src/a.rs"], cwd),
            "Edit README.md, src/a.rs"
        );
        assert_eq!(
            edit_title(&["/tmp/x", "/workspace/a", "/workspace/b", "/workspace/c"], cwd),
            "Edit /tmp/x, a, b, and 1 more"
        );
    }
}
