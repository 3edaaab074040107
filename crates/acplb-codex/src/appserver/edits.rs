//! `fileChange` items as Edit tool calls whose content is Codex's own diff, as ACP `Diff`s.
//!
//! Codex gives each file's change as text: for an added file its content, for a deleted file
//! its old content, for an update a unified diff of hunks without a header. An added file
//! becomes a `Diff` without old text and a deleted one a `Diff` with empty new text. For an
//! update the decoder has only the hunks, not the whole file (it reads no file), so the `Diff`
//! holds the hunks' lines: old text = context and removed lines, new text = context and added
//! lines. Hunks that are not adjacent are joined by a line `⋯` in both texts, which an editor
//! shows as unchanged, so the gap is visible and nothing is invented.

use agent_client_protocol::v1::schema::{
    Diff, ToolCall, ToolCallContent, ToolCallId, ToolCallStatus, ToolCallUpdateFields,
};
use serde_json::json;

use super::wire::{FileChangeItem, FileUpdateChange, PatchKind};
use crate::items::{ChangeKind, FileChange, ItemStatus, PathChange};
use crate::render::DecoderOptions;
use crate::render::edits::{display_path, edit_call as exec_edit_call};

/// The line standing for the unchanged lines between two hunks.
const GAP: &str = "⋯\n";

/// A proposed or running edit: titled and located by the shared renderer, with the diffs.
pub(super) fn edit_call(id: ToolCallId, item: &FileChangeItem, opts: &DecoderOptions) -> ToolCall {
    exec_edit_call(id, &exec_change(item), opts).content(diffs(&item.changes, opts))
}

/// A finished edit: the diffs again (a permission prompt may have shown a reason instead), with
/// a note first when it was not applied.
pub(super) fn edit_finish(item: &FileChangeItem, opts: &DecoderOptions) -> ToolCallUpdateFields {
    let status = super::tools::item_status(&item.status);
    let (call_status, content) = match status {
        ItemStatus::Failed => (
            ToolCallStatus::Failed,
            vec!["The patch failed; no file was changed by it.".into()],
        ),
        ItemStatus::Declined => {
            let mut content = vec!["The change was declined; no file was changed.".into()];
            content.extend(diffs(&item.changes, opts));
            (ToolCallStatus::Failed, content)
        }
        _ => (ToolCallStatus::Completed, diffs(&item.changes, opts)),
    };
    ToolCallUpdateFields::new()
        .status(call_status)
        .content(content)
        .raw_output(json!({ "status": status.as_str() }))
}

/// One content entry per changed file.
pub(super) fn diffs(changes: &[FileUpdateChange], opts: &DecoderOptions) -> Vec<ToolCallContent> {
    let mut content = Vec::with_capacity(changes.len());
    for change in changes {
        if opts.air_declares(crate::render::air::DIFF_PATCH)
            && let Some(patch) = super::air_patch::content(change)
        {
            content.push(patch);
            continue;
        }
        let shown = display_path(&change.path, &opts.cwd);
        match &change.kind {
            PatchKind::Add => content.push(Diff::new(&change.path, change.diff.as_str()).into()),
            PatchKind::Delete => {
                content.push(Diff::new(&change.path, "").old_text(change.diff.clone()).into());
            }
            PatchKind::Update { move_path } => {
                let path = match move_path {
                    Some(to) => {
                        content.push(format!("Moved {shown} to {}.", display_path(to, &opts.cwd)).into());
                        to
                    }
                    None => &change.path,
                };
                match from_hunks(&change.diff) {
                    Some((old, new)) => content.push(Diff::new(path, new).old_text(old).into()),
                    None => content.push(format!("Changed {shown}.").into()),
                }
            }
            PatchKind::Unknown => content.push(format!("Changed {shown}.").into()),
        }
    }
    content
}

/// The old and new text of the hunks of a unified diff (see the module docs); `None` when it
/// has no hunk.
pub(super) fn from_hunks(diff: &str) -> Option<(String, String)> {
    let (mut old, mut new) = (String::new(), String::new());
    let mut in_hunk = false;
    // Where the previous hunk ended in the old file, to tell adjacent hunks from a gap.
    let mut old_end: Option<u64> = None;
    // Which sides the previous line went to, for "\ No newline at end of file".
    let mut last = (false, false);
    for line in diff.split_inclusive('\n') {
        if let Some(header) = line.strip_prefix("@@") {
            let (start, count) = old_range(header);
            // After a hunk, a gap unless this one starts where it ended (unknown: a gap).
            if in_hunk && (old_end.is_none() || old_end != start) {
                old.push_str(GAP);
                new.push_str(GAP);
            }
            old_end = start.map(|s| s + count);
            in_hunk = true;
            continue;
        }
        if !in_hunk {
            continue;
        }
        let (sides, text) = match line.as_bytes().first() {
            Some(b'+') => ((false, true), &line[1..]),
            Some(b'-') => ((true, false), &line[1..]),
            Some(b' ') => ((true, true), &line[1..]),
            Some(b'\\') => {
                for (on, side) in [(last.0, &mut old), (last.1, &mut new)] {
                    if on && side.ends_with('\n') {
                        side.pop();
                    }
                }
                continue;
            }
            // A blank line inside a hunk is an empty context line (some tools drop the space).
            Some(b'\n' | b'\r') => ((true, true), line),
            _ => continue,
        };
        if sides.0 {
            old.push_str(text);
        }
        if sides.1 {
            new.push_str(text);
        }
        last = sides;
    }
    in_hunk.then_some((old, new))
}

/// The old range of a hunk header (`@@ -12,3 +12,4 @@`, after the first `@@`): start and line
/// count (1 when left out).
fn old_range(header: &str) -> (Option<u64>, u64) {
    let Some(range) = header.split_whitespace().find_map(|w| w.strip_prefix('-')) else {
        return (None, 0);
    };
    let mut parts = range.splitn(2, ',');
    let start = parts.next().and_then(|s| s.parse().ok());
    let count = parts.next().map_or(Some(1), |c| c.parse().ok()).unwrap_or(0);
    (start, count)
}

/// The item as Codex's item type (`items.rs`), for its title, locations and raw input.
fn exec_change(item: &FileChangeItem) -> FileChange {
    FileChange {
        changes: item
            .changes
            .iter()
            .map(|c| PathChange {
                path: c.path.clone(),
                kind: match c.kind {
                    PatchKind::Add => ChangeKind::Add,
                    PatchKind::Delete => ChangeKind::Delete,
                    PatchKind::Update { .. } => ChangeKind::Update,
                    PatchKind::Unknown => ChangeKind::Unknown,
                },
            })
            .collect(),
        status: super::tools::item_status(&item.status),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_hunk_without_context() {
        let (old, new) = from_hunks("@@ -1 +1 @@\n-# demo repo\n+# demo repo (edited by codex)\n").unwrap();
        assert_eq!(old, "# demo repo\n");
        assert_eq!(new, "# demo repo (edited by codex)\n");
    }

    #[test]
    fn context_goes_to_both_sides_and_gaps_are_marked() {
        let diff =
            "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -4,2 +4,3 @@\n d\n+e\n f\n@@ -20,2 +21,1 @@\n x\n-y\n";
        let (old, new) = from_hunks(diff).unwrap();
        // The second hunk starts where the first ended (line 4): no gap; the third does not.
        assert_eq!(old, "a\nb\nc\nd\nf\n⋯\nx\ny\n");
        assert_eq!(new, "a\nB\nc\nd\ne\nf\n⋯\nx\n");
    }

    #[test]
    fn no_newline_at_end_of_file() {
        let diff = "@@ -1 +1 @@\n-old\n\\ No newline at end of file\n+new\n\\ No newline at end of file\n";
        assert_eq!(from_hunks(diff).unwrap(), ("old".into(), "new".into()));
    }

    #[test]
    fn headers_are_skipped_and_no_hunk_is_none() {
        let diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-1\n+2\n";
        assert_eq!(from_hunks(diff).unwrap(), ("1\n".into(), "2\n".into()));
        assert_eq!(from_hunks(""), None);
        assert_eq!(from_hunks("just text\n"), None);
    }

    #[test]
    fn ranges() {
        assert_eq!(old_range(" -12,3 +12,4 @@ fn x()"), (Some(12), 3));
        assert_eq!(old_range(" -1 +1 @@"), (Some(1), 1));
        assert_eq!(old_range(" garbage @@"), (None, 0));
    }
}
