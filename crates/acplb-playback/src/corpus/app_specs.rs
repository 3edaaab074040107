//! The app-server part of the corpus (`as-*`): sessions on one long-lived `codex app-server`,
//! with approvals answered per scenario, steering, interrupts and a crash of the server.

use serde_json::json;

use super::script::{Script, mcp_server};
use super::specs::Spec;
use crate::scenario::{After, Answer, Pick, Reply, Step, Transport};

/// What the scripted client answers to acplb's permission prompts, in order.
fn answers(picks: &[Option<Pick>]) -> Vec<Answer> {
    picks
        .iter()
        .map(|pick| Answer {
            method: "session/request_permission".to_owned(),
            reply: pick.map_or(Reply::Never, Reply::Pick),
            line: 0,
        })
        .collect()
}

fn app(name: &'static str, description: &'static str, steps: Vec<Step>) -> Spec {
    Spec {
        name,
        description,
        acplb_args: Vec::new(),
        steps,
        inject: None,
        transport: Transport::AppServer,
        answers: Vec::new(),
    }
}

fn asked(mut spec: Spec, picks: &[Option<Pick>]) -> Spec {
    spec.answers = answers(picks);
    spec
}

fn one(text: &str) -> Vec<Step> {
    Script::new_session(&[]).prompt(text).close()
}

fn in_mode(mode: &str, text: &str) -> Vec<Step> {
    Script::new_session(&[]).set_mode(mode).prompt(text).close()
}

/// The app-server scenarios, in a stable order.
#[allow(clippy::too_many_lines, reason = "a table with one entry per scenario")]
pub(super) fn all() -> Vec<Spec> {
    let permission = || "session/request_permission".to_owned();
    vec![
        app("as-plain", "app-server: a reasoning summary and an answer, streamed as deltas (end_turn with usage)",
            one("scenario:plain Say hello.")),
        app("as-shell-stream", "app-server, read-only: a command printing a line, sleeping 1.5 s and printing another; its output arrives while it runs",
            one("scenario:as_stream Run a slow command.")),
        app("as-failing-command", "app-server: a command that exits 3",
            one("scenario:fail Run a failing command.")),
        asked(app("as-patch-approved", "app-server, read-only: a patch adding hello.txt and editing README.md; Codex asks, the client allows once, the patch is applied",
            one("scenario:patch Create hello.txt and edit README.")), &[Some(Pick::AllowOnce)]),
        app("as-patch-auto", "app-server, auto: the same patch applied without asking",
            in_mode("auto", "scenario:patch Create hello.txt and edit README.")),
        asked(app("as-approval-declined", "app-server, read-only: a command asking to run outside the sandbox; the client rejects it and the model is told",
            one("scenario:escalate Run outside the sandbox.")), &[Some(Pick::Reject), Some(Pick::Reject)]),
        asked(app("as-allow-session", "app-server, read-only: the client allows an escalated command for the session; the same command a second time is not asked about",
            one("scenario:as_escalate_twice Run it twice.")), &[Some(Pick::AllowSession), Some(Pick::AllowSession)]),
        asked(app("as-mcp-approval", "app-server, read-only: the `echo` tool of MCP server `mockmcp` (playback mcp-echo); Codex asks, the client allows once",
            Script::new_session(&[mcp_server()]).prompt("scenario:mcp Call the echo tool.").close()), &[Some(Pick::AllowOnce)]),
        app("as-mcp", "app-server, full-access: the `echo` tool of MCP server `mockmcp` runs without asking",
            Script::new_session(&[mcp_server()]).set_mode("full-access").prompt("scenario:mcp Call the echo tool.").close()),
        asked(app("as-cancel-approval", "app-server, read-only: session/cancel while a permission prompt is open; Codex hears `cancel`, the turn is interrupted, the prompt ends cancelled",
            Script::new_session(&[])
                .prompt("scenario:escalate Run outside the sandbox.")
                .notify_after(After::Request { method: permission(), count: 1 }, "session/cancel", json!({ "sessionId": "<session-1>" }))
                .close()), &[None]),
        app("as-interrupt", "app-server: session/cancel while `sleep 30` runs: turn/interrupt, the turn ends interrupted, the prompt cancelled",
            Script::new_session(&[])
                .prompt("scenario:as_sleep Sleep a while.")
                .notify_after(After::Paused(Box::new(After::Text("Sleeping now.".into())), 1000), "session/cancel", json!({ "sessionId": "<session-1>" }))
                .close()),
        app("as-http-500", "app-server: HTTP 500 from the model API: an error notification, then the turn fails",
            one("scenario:http500 Trigger an error.")),
        app("as-http-401", "app-server: HTTP 401 from the model API: the prompt fails with auth required",
            one("scenario:http401 Trigger an error.")),
        app("as-multi-turn", "app-server: three turns on one thread; the model sees the history",
            Script::new_session(&[])
                .prompt("scenario:plain Say hello.")
                .prompt("scenario:history Do you remember?")
                .prompt("scenario:history And now?")
                .close()),
        app("as-queued", "app-server: a second prompt sent while the first runs is queued (while_busy = queue), then runs on the same thread",
            Script::new_session(&[])
                .prompt("scenario:plain Say hello.")
                .prompt_now("scenario:history Second prompt.")
                .close()),
        app("as-steer", "app-server: with while_busy = steer, a prompt sent while `sleep 2` runs goes into the running turn (turn/steer); both prompts end with the turn",
            Script::new_session(&[])
                .request("session/set_config_option", json!({ "sessionId": "<session-1>", "configId": "while_busy", "value": "steer" }))
                .prompt("scenario:as_steer Work a while.")
                .request_after(After::Paused(Box::new(After::Text("Working on it.".into())), 500), "session/prompt",
                    json!({ "sessionId": "<session-1>", "prompt": [{ "type": "text", "text": "Also mention what you saw." }] }))
                .close()),
        app("as-plan", "app-server: update_plan twice around a command: plan updates",
            one("scenario:plan Make a plan.")),
        app("as-usage", "app-server: two turns (a command, then an answer); context usage and per-turn token usage",
            Script::new_session(&[])
                .prompt("scenario:shell List the files.")
                .prompt("scenario:plain Say hello.")
                .close()),
        app("as-crash", "app-server, full-access: a command kills the app-server mid-turn (the turn fails with its exit status); the next prompt starts a new one, which resumes the thread and remembers the conversation",
            Script::new_session(&[])
                .set_mode("full-access")
                .prompt("scenario:as_crash Crash the server.")
                .prompt("scenario:history Do you remember?")
                .close()),
    ]
}
