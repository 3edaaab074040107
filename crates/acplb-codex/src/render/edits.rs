//! File edits: `file_change` items become Edit tool calls with real diffs.
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
use super::emit::ended;
use super::names;
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
        .name(names::APPLY_PATCH.to_owned())
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
        .status(ended(failed))
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

#[cfg(test)]
mod tests {
    use super::*;

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
