//! `JetBrains` AIR's agent file change report (ADR 0052): a client that declared
//! `agentFileChangeReport` may ask, in a prompt's `_meta.jetbrains.air.agentFileChangeReportRequest`
//! (`{version: 1, requestId}`), which files the agent changed in that turn. Before the prompt is
//! answered it gets one `session_info_update` carrying `_meta.jetbrains.air.agentFileChangeReport`,
//! in the TS peer's shape: the paths of the edits that were applied (a tool call's `diff`
//! content, once the call completed), inside the session's folders; or why there is no report.
//! It comes from what the client was shown, so it is the same on every provider and transport.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    Meta, SessionInfoUpdate, SessionUpdate, ToolCallContent, ToolCallId, ToolCallStatus,
};
use serde_json::{Value, json};

/// The AIR capability, as the TS peer names it.
pub(crate) const CAPABILITY: &str = "agentFileChangeReport";
/// The prompt's `_meta.jetbrains.air` key that asks for a report.
const REQUEST_KEY: &str = "agentFileChangeReportRequest";
/// The most paths a report lists; more set `truncated`.
const MAX_PATHS: usize = 1024;
/// The longest path a report lists, in characters; a longer one sets `truncated`.
const MAX_PATH_CHARS: usize = 4096;
/// What the report cannot know, said with every `reported` one.
const UNCERTAINTY: &str = "Lists the files of the edits the agent applied in this turn as diffs; files a command changed (a shell `mv`, a build), a moved file's old path and an edit shown without a diff are not seen.";

/// Why a requested report is `unavailable`, by the TS peer's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unavailable {
    /// The turn was cancelled or stopped at the time limit.
    Cancelled,
    /// The turn failed.
    ProviderError,
    /// No turn ran (a plugin refused the prompt).
    NotReported,
}

impl Unavailable {
    fn name(self) -> &'static str {
        match self {
            Unavailable::Cancelled => "cancelled",
            Unavailable::ProviderError => "providerError",
            Unavailable::NotReported => "notReported",
        }
    }
}

/// The request id a prompt's `_meta` asks a report for: exactly `{version: 1, requestId}`, the
/// id 1 to 128 of `A-Z a-z 0-9 . _ : -`; anything else asks for none (as with the TS peer).
pub(crate) fn requested(meta: Option<&Meta>) -> Option<String> {
    let ask = meta?
        .get(crate::capabilities::JETBRAINS)?
        .get(crate::capabilities::AIR)?
        .get(REQUEST_KEY)?;
    let fields = ask.as_object()?;
    let id = fields.get("requestId")?.as_str()?;
    let valid = fields.len() == 2
        && fields.get("version").and_then(Value::as_u64) == Some(1)
        && (1..=128).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'));
    if !valid {
        tracing::debug!(request = %ask, "an AIR file change report request that is not {{version: 1, requestId}} is ignored");
        return None;
    }
    Some(id.to_owned())
}

/// The files a turn's applied edits touched, as its updates show them.
#[derive(Debug, Default)]
pub(crate) struct FileChanges {
    /// A turn runs: updates are looked at.
    armed: bool,
    /// Paths of edit calls not completed yet, by call.
    pending: HashMap<ToolCallId, Vec<PathBuf>>,
    /// Paths of completed edits, in the order they completed.
    changed: Vec<PathBuf>,
    seen: HashSet<PathBuf>,
}

impl FileChanges {
    /// A new turn starts: what an earlier turn saw is forgotten, and its updates are looked at.
    pub(crate) fn arm(&mut self) {
        *self = Self {
            armed: true,
            ..Self::default()
        };
    }

    /// Notes the edits an update shows, and the calls it completes or fails.
    pub(crate) fn observe(&mut self, update: &SessionUpdate) {
        if !self.armed {
            return;
        }
        let (id, content, status) = match update {
            SessionUpdate::ToolCall(call) => (&call.tool_call_id, Some(&call.content), Some(call.status)),
            SessionUpdate::ToolCallUpdate(u) => (&u.tool_call_id, u.fields.content.as_ref(), u.fields.status),
            _ => return,
        };
        if let Some(content) = content {
            let paths: Vec<PathBuf> = content
                .iter()
                .filter_map(|c| match c {
                    ToolCallContent::Diff(d) => Some(d.path.clone()),
                    _ => None,
                })
                .collect();
            if !paths.is_empty() {
                self.pending.insert(id.clone(), paths);
            }
        }
        match status {
            Some(ToolCallStatus::Completed) => {
                for path in self.pending.remove(id).unwrap_or_default() {
                    if self.seen.insert(path.clone()) {
                        self.changed.push(path);
                    }
                }
            }
            Some(ToolCallStatus::Failed) => {
                self.pending.remove(id);
            }
            _ => {}
        }
    }

    /// The reports for `ids` (the turn's prompt and those steered into it that asked): the
    /// changed paths inside `roots` (others left out and the report marked `truncated`), or
    /// why there is none. Disarms.
    pub(crate) fn reports(
        &mut self,
        ids: &[String],
        ending: Result<(), Unavailable>,
        roots: &[PathBuf],
    ) -> Vec<Value> {
        let changed = std::mem::take(self);
        if let Err(why) = ending {
            return ids.iter().map(|id| unavailable(id, why)).collect();
        }
        let mut truncated = false;
        let mut paths = Vec::new();
        for path in changed.changed {
            let text = path.to_string_lossy().into_owned();
            let fits = paths.len() < MAX_PATHS && text.chars().count() <= MAX_PATH_CHARS;
            if inside(&path, roots) && fits {
                paths.push(text);
            } else {
                truncated = true;
            }
        }
        ids.iter()
            .map(|id| {
                json!({
                    "version": 1,
                    "requestId": id,
                    "status": "reported",
                    "paths": paths,
                    "declaredComplete": false,
                    "truncated": truncated,
                    "uncertainty": UNCERTAINTY,
                })
            })
            .collect()
    }
}

/// The report `request_id` gets when there is none to give, and why.
pub(crate) fn unavailable(request_id: &str, why: Unavailable) -> Value {
    json!({
        "version": 1,
        "requestId": request_id,
        "status": "unavailable",
        "reason": why.name(),
    })
}

/// An absolute path strictly inside one of `roots` (a `..` never counts as inside).
fn inside(path: &Path, roots: &[PathBuf]) -> bool {
    let clean = path.is_absolute()
        && path
            .components()
            .all(|c| !matches!(c, std::path::Component::ParentDir));
    clean && roots.iter().any(|root| path != root && path.starts_with(root))
}

/// The `session_info_update` that carries `report`.
pub(crate) fn update(report: Value) -> SessionUpdate {
    SessionUpdate::SessionInfoUpdate(
        SessionInfoUpdate::new().meta(crate::capabilities::air_meta(CAPABILITY, report)),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use agent_client_protocol::v1::schema::{Diff, ToolCall, ToolCallUpdate, ToolCallUpdateFields};

    fn meta(v: &Value) -> Meta {
        json!({"jetbrains": {"air": {"agentFileChangeReportRequest": v}}})
            .as_object()
            .cloned()
            .unwrap()
    }

    #[test]
    fn only_an_exact_request_asks_for_a_report() {
        assert_eq!(
            requested(Some(&meta(&json!({"version": 1, "requestId": "r-1:a.b_c"})))).as_deref(),
            Some("r-1:a.b_c")
        );
        for bad in [
            json!({"version": 2, "requestId": "r"}),
            json!({"version": 1, "requestId": ""}),
            json!({"version": 1, "requestId": "a b"}),
            json!({"version": 1, "requestId": "x".repeat(129)}),
            json!({"version": 1, "requestId": "r", "more": true}),
            json!({"version": 1}),
            json!("r"),
        ] {
            assert_eq!(requested(Some(&meta(&bad))), None, "{bad}");
        }
        assert_eq!(requested(None), None);
    }

    fn edit(id: &str, path: &str, status: ToolCallStatus) -> SessionUpdate {
        SessionUpdate::ToolCall(
            ToolCall::new(id.to_owned(), "Edit")
                .status(status)
                .content(vec![ToolCallContent::Diff(Diff::new(path, "new"))]),
        )
    }

    fn ends(id: &str, status: ToolCallStatus) -> SessionUpdate {
        SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            id.to_owned(),
            ToolCallUpdateFields::new().status(status),
        ))
    }

    #[test]
    fn applied_edits_inside_the_roots_are_reported_once_each() {
        let mut c = FileChanges::default();
        c.observe(&edit("0", "/ws/early.txt", ToolCallStatus::Completed));
        c.arm();
        c.observe(&edit("a", "/ws/a.txt", ToolCallStatus::Pending));
        c.observe(&edit("b", "/ws/b.txt", ToolCallStatus::InProgress));
        c.observe(&edit("c", "/elsewhere/c.txt", ToolCallStatus::Completed));
        c.observe(&edit("d", "/ws/../etc/d.txt", ToolCallStatus::Completed));
        c.observe(&edit("e", "/more/e.txt", ToolCallStatus::Completed));
        c.observe(&ends("b", ToolCallStatus::Failed));
        c.observe(&ends("a", ToolCallStatus::Completed));
        c.observe(&edit("f", "/ws/a.txt", ToolCallStatus::Completed));
        let roots = [PathBuf::from("/ws"), PathBuf::from("/more")];
        let r = c.reports(&["r1".into()], Ok(()), &roots).remove(0);
        assert_eq!(r["status"], "reported");
        assert_eq!(
            r["paths"],
            json!(["/more/e.txt", "/ws/a.txt"]),
            "in the order they completed: {r}"
        );
        assert_eq!(r["truncated"], true, "paths outside were left out: {r}");
        assert_eq!(r["declaredComplete"], false);
        assert_eq!(r["requestId"], "r1");
        let again = c.reports(&["r2".into()], Ok(()), &roots).remove(0);
        assert_eq!(again["paths"], json!([]), "disarmed and emptied: {again}");
        assert_eq!(again["truncated"], false);
    }

    #[test]
    fn an_unarmed_turn_notes_nothing_and_failures_say_why() {
        let mut c = FileChanges::default();
        c.observe(&edit("a", "/ws/a.txt", ToolCallStatus::Completed));
        assert!(c.changed.is_empty());
        let r = c.reports(&["r".into(), "s".into()], Err(Unavailable::Cancelled), &[]);
        assert_eq!(
            r,
            [
                json!({"version": 1, "requestId": "r", "status": "unavailable", "reason": "cancelled"}),
                json!({"version": 1, "requestId": "s", "status": "unavailable", "reason": "cancelled"})
            ]
        );
        let r = c.reports(&["r".into()], Err(Unavailable::ProviderError), &[]);
        assert_eq!(r[0]["reason"], "providerError");
        let r = c.reports(&["r".into()], Err(Unavailable::NotReported), &[]);
        assert_eq!(r[0]["reason"], "notReported");
        assert!(c.reports(&[], Ok(()), &[]).is_empty(), "no id, no report");
    }

    #[test]
    fn the_update_carries_the_report_where_the_peer_puts_it() {
        let v = serde_json::to_value(update(json!({"status": "reported"}))).unwrap();
        assert_eq!(v["sessionUpdate"], "session_info_update");
        assert_eq!(
            v["_meta"]["jetbrains"]["air"]["agentFileChangeReport"]["status"],
            "reported"
        );
        assert_eq!(v["_meta"]["jetbrains"]["air"]["version"], 1);
    }
}
