//! `codex_threads` and `codex_status`, and where a thread started elsewhere lives: answered
//! from acplb's session registry (read on the blocking pool) and from this server.

use std::path::PathBuf;

use acplb_core::sessions::registry::{Entry, Listing, Registry};
use rmcp::model::{CallToolResult, ContentBlock as Content, JsonObject};
use serde_json::{Value, json};

use crate::args::string;
use crate::config::Shared;
use crate::server::{CodexMcp, tool_error};

const STATUSES: [&str; 4] = ["active", "idle", "closed", "interrupted"];

/// The registry's entries, on the blocking pool.
pub(crate) async fn entries(shared: &Shared) -> Result<Vec<Entry>, String> {
    let Some(state) = shared.state_dir.clone() else {
        return Err("this acplb keeps no sessions (no state directory: set ACPLB_STATE_DIR or HOME)".into());
    };
    tokio::task::spawn_blocking(move || Registry::new(&state).all().map(Listing::into_entries))
        .await
        .map_err(|e| format!("reading the registry stopped: {e}"))?
        .map_err(|e| format!("cannot read the session registry: {e}"))
}

/// The cwd of the kept thread `thread`, if acplb knows it.
pub(crate) async fn cwd_of(shared: &Shared, thread: &str) -> Result<Option<PathBuf>, String> {
    if acplb_core::sessions::state::check_session_id(thread).is_err() {
        return Ok(None);
    }
    Ok(entries(shared)
        .await?
        .into_iter()
        .find(|e| e.session_id == thread)
        .map(|e| e.cwd))
}

/// Keeps `tag` in the registry entry of `thread` (on the blocking pool; a failure is logged).
/// Called once the thread's first turn ended, when the entry the server created is written.
pub(crate) async fn tag(shared: &Shared, thread: &str, tag: String) {
    let Some(state) = shared.state_dir.clone() else {
        return;
    };
    let thread = thread.to_owned();
    let done = tokio::task::spawn_blocking(move || {
        let registry = Registry::new(&state);
        let Some(listed) = registry.find(&thread)? else {
            return Ok(());
        };
        registry.update(&listed.key, &thread, |entry| {
            entry.map(|mut e| {
                e.tag = Some(tag.clone());
                e
            })
        })
    })
    .await;
    match done {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!(error = %e, "cannot keep the thread's tag"),
        Err(e) => tracing::warn!(error = %e, "keeping the thread's tag stopped"),
    }
}

/// `codex_threads`.
pub(crate) async fn list(shared: &Shared, args: &JsonObject) -> CallToolResult {
    let (repo, status) = match (string(args, "repo"), string(args, "status")) {
        (Ok(r), Ok(s)) => (r, s),
        (Err(e), _) | (_, Err(e)) => return tool_error(format!("codex_threads: {e}")),
    };
    if let Some(s) = &status
        && !STATUSES.contains(&s.as_str())
    {
        return tool_error(format!(
            "codex_threads: `status` must be one of {}, not `{s}`",
            STATUSES.join(", ")
        ));
    }
    let mut entries = match entries(shared).await {
        Ok(e) => e,
        Err(e) => return tool_error(format!("codex_threads: {e}")),
    };
    entries.retain(|e| {
        shared.identity.as_deref().is_none_or(|id| e.has_identity(id))
            && status
                .as_deref()
                .is_none_or(|s| e.effective_status().as_str() == s)
            && repo.as_deref().is_none_or(|r| {
                e.repo_name.as_deref() == Some(r)
                    || e.repo_root.as_deref().is_some_and(|p| p.to_string_lossy() == r)
            })
    });
    acplb_core::sessions::registry::sort_newest_first(&mut entries);
    let threads: Vec<Value> = entries
        .iter()
        .map(|e| {
            json!({
                "threadId": e.session_id,
                "codexThreadId": e.thread_id,
                "status": e.effective_status().as_str(),
                "lastActive": e.last_active,
                "title": e.title,
                "tag": e.tag,
                "cwd": e.cwd,
                "repo": e.repo_name,
                "branch": e.branch,
                "identity": e.identity,
            })
        })
        .collect();
    structured(json!({ "threads": threads }))
}

/// `codex_status`.
pub(crate) async fn status(server: &CodexMcp) -> CallToolResult {
    let shared = &server.shared;
    let codex = shared.health().await;
    let mail = match &server.mail {
        Some(_) => match shared.pending_mail().await {
            Ok(n) => json!(n),
            Err(e) => json!({ "error": e }),
        },
        None => Value::Null,
    };
    structured(json!({
        "codex": {
            "alive": codex.is_ok(),
            "problem": codex.err(),
            "version": shared.codex_version().await,
            "transport": shared.transport,
        },
        "identity": shared.identity,
        "role": shared.role,
        "team": shared.team,
        "uptimeSecs": server.started.elapsed().as_secs(),
        "runningThreads": server.hub.running(),
        "openThreads": server.lock_open().len(),
        "pendingMail": mail,
    }))
}

fn structured(value: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![Content::text(
        serde_json::to_string_pretty(&value).unwrap_or_default(),
    )]);
    result.structured_content = Some(value);
    result
}
