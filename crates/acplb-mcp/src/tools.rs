//! The tools this server lists: their names, descriptions, input schemas (the argument names
//! of `codex mcp-server`) and annotations.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

pub(crate) const CODEX: &str = "codex";
pub(crate) const REPLY: &str = "codex-reply";
pub(crate) const THREADS: &str = "codex_threads";
pub(crate) const STATUS: &str = "codex_status";

fn schema(v: Value) -> Arc<JsonObject> {
    match v {
        Value::Object(o) => Arc::new(o),
        _ => Arc::new(JsonObject::new()),
    }
}

fn text(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

/// The Codex tools.
pub(crate) fn codex_tools() -> Vec<Tool> {
    let output = schema(json!({
        "type": "object",
        "properties": {
            "threadId": text("The thread to continue with `codex-reply`."),
            "content": text("Codex's final answer."),
        },
        "required": ["threadId", "content"],
    }));
    let start = Tool::new(
        CODEX,
        "Run a Codex session: a new thread, one turn with `prompt`; answers with Codex's final message and the `threadId` to continue it with `codex-reply`. Each thread is an acplb session (journaled, listed by `acplb sessions`).",
        schema(json!({
            "type": "object",
            "properties": {
                "prompt": text("What Codex should do (the first user message)."),
                "model": text("The model, e.g. `gpt-5.2-codex`."),
                "profile": text("A profile of Codex's config.toml for this thread."),
                "cwd": text("The working directory, an absolute path; the server's own when omitted."),
                "approval-policy": {"type": "string", "enum": ["untrusted", "on-failure", "on-request", "never"],
                    "description": "When Codex asks before acting; asks reach you through elicitation when your client supports it."},
                "sandbox": {"type": "string", "enum": ["read-only", "workspace-write", "danger-full-access"],
                    "description": "The sandbox for Codex's commands."},
                "config": {"type": "object", "description": "Codex config overrides for this thread (dotted keys, as `codex -c`); keys that could hold a secret are refused."},
                "base-instructions": text("Base instructions, in place of the model's own."),
                "developer-instructions": text("Codex's developer instructions for this thread; the server's plugins append their context after them."),
                "compact-prompt": text("The prompt Codex uses to compact this thread's history."),
                "include-plan-tool": {"type": "boolean", "description": "Codex's plan tool (`update_plan`) for this thread; on unless false."},
                "tag": text("A label for this thread, shown by `codex_threads`."),
            },
            "required": ["prompt"],
        })),
    )
    .with_raw_output_schema(output.clone())
    .annotate(
        ToolAnnotations::with_title("Codex")
            .read_only(false)
            .destructive(true)
            .idempotent(false)
            .open_world(true),
    );
    let reply = Tool::new(
        REPLY,
        "Continue a Codex thread: one more turn with `prompt` in the thread `threadId` (`conversationId` is accepted too), also one started by another server process.",
        schema(json!({
            "type": "object",
            "properties": {
                "prompt": text("The next user message."),
                "threadId": text("The thread, as `codex` answered it."),
                "conversationId": text("The older name of `threadId`."),
            },
            "required": ["prompt"],
        })),
    )
    .with_raw_output_schema(output)
    .annotate(
        ToolAnnotations::with_title("Codex reply")
            .read_only(false)
            .destructive(true)
            .idempotent(false)
            .open_world(true),
    );
    let threads = Tool::new(
        THREADS,
        "This identity's Codex threads, newest first: id, status, last active, cwd, repository and branch; filter by `repo` (name or path) and `status`.",
        schema(json!({
            "type": "object",
            "properties": {
                "repo": text("Only threads in this repository (its name or root path)."),
                "status": {"type": "string", "enum": ["active", "idle", "closed", "interrupted"], "description": "Only threads with this status."},
            },
        })),
    )
    .annotate(read_only("Codex threads"));
    let status = Tool::new(
        STATUS,
        "Health of this server: Codex alive and its version, identity, team, uptime, running and open threads, unread mail.",
        schema(json!({"type": "object", "properties": {}})),
    )
    .annotate(read_only("Codex status"));
    vec![start, reply, threads, status]
}

fn read_only(title: &str) -> ToolAnnotations {
    ToolAnnotations::with_title(title)
        .read_only(true)
        .destructive(false)
        .idempotent(true)
        .open_world(false)
}

/// Annotations for the team-mail tools, which acplb-atm lists without any.
pub(crate) fn annotate_mail(mut tool: Tool) -> Tool {
    let annotations = match tool.name.as_ref() {
        "atm_pending_count" => read_only("Unread team mail"),
        // Reading marks mail read: not read-only, but nothing is lost.
        "atm_read" => ToolAnnotations::with_title("Read team mail")
            .read_only(false)
            .destructive(false)
            .idempotent(false)
            .open_world(false),
        _ => ToolAnnotations::with_title("Send team mail")
            .read_only(false)
            .destructive(false)
            .idempotent(false)
            .open_world(true),
    };
    if tool.annotations.is_none() {
        tool.annotations = Some(annotations);
    }
    tool
}
