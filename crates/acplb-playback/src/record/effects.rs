//! The file side of a recording: which files the workspace held at the start, and what each
//! completed `file_change` wrote, both read from the diffs acplb showed (old and new texts).
//!
//! A replay needs them because acplb reads old texts from a git snapshot of the workspace and
//! new texts from disk; the stand-in makes the recorded changes just before the
//! `item.completed` line of each `file_change` (on app-server: the `item/completed` message of
//! each `fileChange`, where an added file's text is also Codex's own `diff`).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::Path;

use serde_json::Value;

use super::transcript::{AppTurnTranscript, TranscriptRun};
use crate::scenario::EventKind;

/// What a diff said about one file.
#[derive(Debug, Clone)]
struct Diff {
    old: Option<String>,
    new: String,
}

/// The initial files and, per run and stdout line index, the changes made before that line.
#[derive(Debug, Default)]
pub(crate) struct Effects {
    pub(crate) initial: BTreeMap<String, String>,
    /// `(run index, line index)` → file changes to make before that line.
    pub(crate) before_line: HashMap<(usize, usize), Vec<EventKind>>,
    /// `(app-server turn index, event index)` → file changes to make before that message.
    pub(crate) before_message: HashMap<(usize, usize), Vec<EventKind>>,
}

/// Derives [`Effects`] from acplb's messages (`agent`), the exec runs and the app-server turns;
/// `cwd` is the workspace.
pub(crate) fn derive(
    agent: &[Value],
    runs: &[TranscriptRun],
    turns: &[AppTurnTranscript],
    cwd: &str,
) -> Effects {
    let mut diffs: HashMap<String, VecDeque<Diff>> = HashMap::new();
    let mut effects = Effects::default();
    for message in agent {
        for (path, diff) in diffs_in(message) {
            let Some(rel) = relative(&path, cwd) else { continue };
            if !effects.initial.contains_key(&rel)
                && !diffs.contains_key(&rel)
                && let Some(old) = &diff.old
            {
                effects.initial.insert(rel.clone(), old.clone());
            }
            diffs.entry(rel).or_default().push_back(diff);
        }
    }
    for (r, run) in runs.iter().enumerate() {
        for (l, (_, line, is_stdout)) in run.lines.iter().enumerate() {
            if !*is_stdout || !line.contains("file_change") {
                continue;
            }
            let changes = completed_changes(line);
            let mut made = Vec::new();
            for (path, kind) in changes {
                let Some(rel) = relative(&path, cwd) else { continue };
                let diff = diffs.get_mut(&rel).and_then(VecDeque::pop_front);
                match (kind.as_str(), diff) {
                    ("delete", _) => made.push(EventKind::Delete { path: rel }),
                    (_, Some(d)) => made.push(EventKind::Write {
                        path: rel,
                        text: d.new,
                    }),
                    (_, None) => {}
                }
            }
            if !made.is_empty() {
                effects.before_line.insert((r, l), made);
            }
        }
    }
    for (r, turn) in turns.iter().enumerate() {
        for (l, (_, kind)) in turn.events.iter().enumerate() {
            let EventKind::Recv(line) = kind else { continue };
            if !line.contains("fileChange") {
                continue;
            }
            let mut made = Vec::new();
            for (path, kind, codex_diff) in completed_app_changes(line) {
                let Some(rel) = relative(&path, cwd) else { continue };
                let diff = diffs.get_mut(&rel).and_then(VecDeque::pop_front);
                match (kind.as_str(), diff) {
                    ("delete", _) => made.push(EventKind::Delete { path: rel }),
                    (_, Some(d)) => made.push(EventKind::Write {
                        path: rel,
                        text: d.new,
                    }),
                    ("add", None) => made.push(EventKind::Write {
                        path: rel,
                        text: codex_diff,
                    }),
                    (_, None) => {}
                }
            }
            if !made.is_empty() {
                effects.before_message.insert((r, l), made);
            }
        }
    }
    effects
}

/// The `(path, kind, diff)` of a completed, successful app-server `fileChange` (transcript form).
fn completed_app_changes(line: &str) -> Vec<(String, String, String)> {
    let Ok(msg) = serde_json::from_str::<Value>(line) else {
        return Vec::new();
    };
    let item = &msg["params"]["item"];
    if msg["method"] != "item/completed" || item["type"] != "fileChange" || item["status"] != "completed" {
        return Vec::new();
    }
    item["changes"]
        .as_array()
        .map(|changes| {
            changes
                .iter()
                .filter_map(|c| {
                    Some((
                        c["path"].as_str()?.to_owned(),
                        c["kind"]["type"].as_str()?.to_owned(),
                        c["diff"].as_str().unwrap_or_default().to_owned(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The `(path, kind)` of a completed, successful `file_change` line.
fn completed_changes(line: &str) -> Vec<(String, String)> {
    let Ok(event) = serde_json::from_str::<Value>(line) else {
        return Vec::new();
    };
    let item = &event["item"];
    if event["type"] != "item.completed" || item["type"] != "file_change" || item["status"] != "completed" {
        return Vec::new();
    }
    item["changes"]
        .as_array()
        .map(|changes| {
            changes
                .iter()
                .filter_map(|c| Some((c["path"].as_str()?.to_owned(), c["kind"].as_str()?.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

/// The diffs of one `session/update` (tool call or tool call update), in order.
fn diffs_in(message: &Value) -> Vec<(String, Diff)> {
    let update = &message["params"]["update"];
    let kind = update["sessionUpdate"].as_str().unwrap_or("");
    if message["method"] != "session/update" || !matches!(kind, "tool_call" | "tool_call_update") {
        return Vec::new();
    }
    let Some(content) = update["content"].as_array() else {
        return Vec::new();
    };
    content
        .iter()
        .filter(|c| c["type"] == "diff")
        .filter_map(|c| {
            Some((
                c["path"].as_str()?.to_owned(),
                Diff {
                    old: c["oldText"].as_str().map(str::to_owned),
                    new: c["newText"].as_str()?.to_owned(),
                },
            ))
        })
        .collect()
}

/// `path` relative to `cwd`, when inside it.
fn relative(path: &str, cwd: &str) -> Option<String> {
    let rel = Path::new(path).strip_prefix(cwd).ok()?.to_str()?.to_owned();
    crate::scenario::is_relative_inside(&rel).then_some(rel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::End;
    use serde_json::json;

    fn run(lines: &[&str]) -> TranscriptRun {
        TranscriptRun {
            session_dir: "s".into(),
            turn: 1,
            argv: vec![],
            stdin_bytes: 0,
            lines: lines.iter().map(|l| (0, (*l).to_owned(), true)).collect(),
            end: End::Exit(0),
            created: std::time::SystemTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn initial_files_and_writes_come_from_diffs() {
        let update = json!({"method": "session/update", "params": {"update": {
            "sessionUpdate": "tool_call_update", "content": [
                {"type": "diff", "path": "/w/README.md", "oldText": "old\n", "newText": "new\n"},
                {"type": "diff", "path": "/w/hello.txt", "newText": "hi\n"},
                {"type": "diff", "path": "/w/gone.txt", "oldText": "bye\n", "newText": ""}]}}});
        let started = r#"{"type":"item.started","item":{"id":"item_1","type":"file_change","changes":[],"status":"in_progress"}}"#;
        let done = r#"{"type":"item.completed","item":{"id":"item_1","type":"file_change","changes":[{"path":"/w/README.md","kind":"update"},{"path":"/w/hello.txt","kind":"add"},{"path":"/w/gone.txt","kind":"delete"},{"path":"/elsewhere/x","kind":"add"}],"status":"completed"}}"#;
        let effects = derive(&[update], &[run(&[started, done])], &[], "/w");
        assert_eq!(
            effects.initial,
            BTreeMap::from([
                ("README.md".into(), "old\n".into()),
                ("gone.txt".into(), "bye\n".into())
            ])
        );
        assert_eq!(
            effects.before_line[&(0, 1)],
            vec![
                EventKind::Write {
                    path: "README.md".into(),
                    text: "new\n".into()
                },
                EventKind::Write {
                    path: "hello.txt".into(),
                    text: "hi\n".into()
                },
                EventKind::Delete {
                    path: "gone.txt".into()
                },
            ]
        );
        assert_eq!(effects.before_line.len(), 1);
    }

    #[test]
    fn app_server_file_changes_take_added_texts_from_codex() {
        let done = json!({"method": "item/completed", "params": {"item": {"type": "fileChange", "status": "completed",
            "changes": [{"path": "/w/new.txt", "kind": {"type": "add"}, "diff": "hi\n"},
                        {"path": "/w/old.txt", "kind": {"type": "delete"}, "diff": ""},
                        {"path": "/w/README.md", "kind": {"type": "update", "move_path": null}, "diff": "@@"}]}}});
        let turn = AppTurnTranscript {
            session_dir: "s".into(),
            turn: 1,
            server: 1,
            events: vec![
                (0, EventKind::Sent("{}".into())),
                (1, EventKind::Recv(done.to_string())),
            ],
            created: std::time::SystemTime::UNIX_EPOCH,
        };
        let effects = derive(&[], &[], &[turn], "/w");
        assert_eq!(
            effects.before_message[&(0, 1)],
            vec![
                EventKind::Write {
                    path: "new.txt".into(),
                    text: "hi\n".into()
                },
                EventKind::Delete {
                    path: "old.txt".into()
                },
            ]
        );
    }
}
