//! The corpus: what each scenario in `_artifacts/tests/scenarios/` asks of acplb and the mock
//! model (the `scenario:<name>` token in a prompt picks the mock's script, see
//! `mock_model/builtin.toml`).

use serde_json::json;

use super::script::{Script, mcp_server};
use crate::scenario::{Step, Transport};

/// An unknown event line, put after `turn.started` by the recording wrapper (real Codex 0.169.0
/// prints no such event; a later version might).
pub const UNKNOWN_EVENT: &str = r#"{"type":"turn.progress","phase":"thinking","elapsed_ms":5}"#;

/// One scenario of the corpus.
#[derive(Debug)]
pub struct Spec {
    /// File stem and scenario name.
    pub name: &'static str,
    /// The scenario's description.
    pub description: &'static str,
    /// acplb arguments besides the corpus defaults.
    pub acplb_args: Vec<String>,
    /// The client script.
    pub steps: Vec<Step>,
    /// A line the wrapper injects into Codex's stdout after `turn.started`.
    pub inject: Option<&'static str>,
    /// The transport acplb runs Codex with.
    pub transport: Transport,
    /// How the client answers acplb's requests (permission prompts), in order per method.
    pub answers: Vec<crate::scenario::Answer>,
}

fn spec(name: &'static str, description: &'static str, steps: Vec<Step>) -> Spec {
    Spec {
        name,
        description,
        acplb_args: Vec::new(),
        steps,
        inject: None,
        transport: Transport::Exec,
        answers: Vec::new(),
    }
}

fn one_prompt(text: &str) -> Vec<Step> {
    Script::new_session(&[]).prompt(text).close()
}

fn auto_prompt(text: &str) -> Vec<Step> {
    Script::new_session(&[]).set_mode("auto").prompt(text).close()
}

/// Every scenario, in a stable order.
#[allow(clippy::too_many_lines, reason = "a table with one entry per scenario")]
pub fn all() -> Vec<Spec> {
    let mut specs = vec![
        spec(
            "plain",
            "a prompt with no scenario token: one short final answer (end_turn with usage)",
            one_prompt("Say hello."),
        ),
        spec(
            "reasoning",
            "a reasoning summary (agent_thought_chunk), then the answer",
            one_prompt("scenario:plain Say hello."),
        ),
        spec(
            "shell",
            "read-only mode: `ls -la` as a search tool call with its output, between a commentary message and the answer",
            one_prompt("scenario:shell List the files."),
        ),
        spec(
            "failing-command",
            "a command that exits 3: a failed execute tool call with the exit code",
            one_prompt("scenario:fail Run a failing command."),
        ),
        spec(
            "patch-add-update",
            "auto mode: a patch adding hello.txt and updating README.md, shown with real diffs",
            auto_prompt("scenario:patch Create hello.txt and edit README."),
        ),
        spec(
            "patch-delete",
            "auto mode: a patch deleting main.py, shown as a diff to empty",
            auto_prompt("scenario:patch_delete Delete main.py."),
        ),
        spec(
            "patch-refused-read-only",
            "read-only mode: Codex's sandbox refuses the patch (stderr only); acplb shows a failed edit",
            one_prompt("scenario:patch Create hello.txt and edit README."),
        ),
        spec(
            "patch-missing-file",
            "auto mode: a patch updating a file that does not exist fails verification (stderr only)",
            auto_prompt("scenario:patch_missing Edit a missing file."),
        ),
        spec(
            "plan",
            "update_plan twice around a command: plan updates, then the answer",
            one_prompt("scenario:plan Make a plan."),
        ),
        spec(
            "mcp-echo",
            "a client MCP server (playback mcp-echo as `mockmcp`): tool_search, then the `echo` tool succeeds",
            Script::new_session(&[mcp_server()])
                .prompt("scenario:mcp Call the echo tool.")
                .close(),
        ),
        spec(
            "mcp-tool-error",
            "the MCP tool `fail` answers isError: a failed MCP tool call",
            Script::new_session(&[mcp_server()])
                .prompt("scenario:mcp_fail Call the failing tool.")
                .close(),
        ),
        spec(
            "web-search",
            "a provider-side web search item, then the answer",
            one_prompt("scenario:websearch Search the web."),
        ),
        spec(
            "http-400",
            "HTTP 400 from the model API: the prompt fails with Codex's message",
            one_prompt("scenario:http400 Trigger an error."),
        ),
        spec(
            "http-401",
            "HTTP 401 from the model API: ACP auth_required",
            one_prompt("scenario:http401 Trigger an error."),
        ),
        spec(
            "http-429",
            "HTTP 429 from the model API (no retries configured)",
            one_prompt("scenario:http429 Trigger an error."),
        ),
        spec(
            "http-500",
            "HTTP 500 from the model API (no retries configured)",
            one_prompt("scenario:http500 Trigger an error."),
        ),
        spec(
            "response-failed",
            "an SSE response.failed (server_error): the turn fails",
            one_prompt("scenario:respfailed Trigger an error."),
        ),
        spec(
            "context-window",
            "response.failed with context_length_exceeded: Codex's context-window message",
            one_prompt("scenario:ctxwindow Trigger an error."),
        ),
        spec(
            "truncated-stream",
            "the model's stream stops mid-message without response.completed",
            one_prompt("scenario:truncated Trigger an error."),
        ),
        spec(
            "multi-turn-resume",
            "three turns on one thread: later turns run `exec resume <thread>` and the model sees the history; usage per turn",
            Script::new_session(&[])
                .prompt("scenario:plain Say hello.")
                .prompt("scenario:history Do you remember?")
                .prompt("scenario:history And now?")
                .close(),
        ),
        spec(
            "queued-prompts",
            "a second prompt sent while the first runs: queued, then run on the same thread",
            Script::new_session(&[])
                .prompt("scenario:plain Say hello.")
                .prompt_now("scenario:history Second prompt.")
                .close(),
        ),
        spec(
            "cancel-sleep",
            "session/cancel while `sleep 30` runs: Codex is interrupted, the tool call fails, the prompt ends cancelled",
            Script::new_session(&[])
                .prompt("scenario:sleep Sleep a while.")
                .cancel_after_tool_call("sleep 30")
                .close(),
        ),
        spec(
            "large-output",
            "a command printing about 110 KB: the tool call output is bounded and marked truncated",
            one_prompt("scenario:bigoutput Print a lot."),
        ),
        spec(
            "escalation-refused",
            "a command asking for sandbox escalation: exec refuses it without an item; the model is told",
            one_prompt("scenario:escalate Run outside the sandbox."),
        ),
        spec(
            "config-options",
            "model and reasoning effort set through session/set_config_option before the prompt",
            Script::new_session(&[])
                .request(
                    "session/set_config_option",
                    json!({ "sessionId": "<session-1>", "configId": "model", "value": "gpt-5.5" }),
                )
                .request(
                    "session/set_config_option",
                    json!({ "sessionId": "<session-1>", "configId": "reasoning_effort", "value": "high" }),
                )
                .prompt("scenario:plain Say hello.")
                .close(),
        ),
    ];
    let mut retries = spec(
        "retries",
        "HTTP 500 with 2 request retries (acplb -c model_providers.mock.request_max_retries=2): two `Reconnecting...` warnings, then the failure",
        one_prompt("scenario:http500 Trigger an error."),
    );
    retries.acplb_args = [
        "-c",
        "model_providers.mock.request_max_retries=2",
        "-c",
        "model_providers.mock.stream_max_retries=2",
    ]
    .map(str::to_owned)
    .to_vec();
    specs.push(retries);
    let mut stream_retries = spec(
        "retries-stream",
        "response.failed with 2 stream retries (acplb -c model_providers.mock.stream_max_retries=2): reconnect warnings, then the failure",
        one_prompt("scenario:respfailed Trigger an error."),
    );
    stream_retries.acplb_args = ["-c", "model_providers.mock.stream_max_retries=2"]
        .map(str::to_owned)
        .to_vec();
    specs.push(stream_retries);
    let mut unknown = spec(
        "unknown-event",
        "a real run of the `plain` mock scenario with one unknown event line (`turn.progress`) that the recording wrapper put after turn.started; acplb must ignore it",
        one_prompt("scenario:plain Say hello."),
    );
    unknown.inject = Some(UNKNOWN_EVENT);
    specs.push(unknown);
    specs.extend(super::app_specs::all());
    specs
}
