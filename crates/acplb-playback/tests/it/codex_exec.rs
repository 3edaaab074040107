//! The real Codex CLI (`codex exec --json`, 0.169.0) against the mock model, one built-in scenario per test.
//!
//! The codex binary comes from `ACPLB_CODEX_TEST_BIN` or the pinned install under `~/.cache/acplb`; when it
//! is missing these tests fail with the install command (they are never skipped).

use std::time::Duration;

use acplb_playback::mock_model::codex_env::{CodexRun, CodexTestEnv};
use acplb_playback::mock_model::{MockConfig, MockModel, MockModelHandle};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

/// Each Codex run is killed past this.
const RUN_TIMEOUT: Duration = Duration::from_secs(60);

struct Fixture {
    mock: MockModelHandle,
    env: CodexTestEnv,
}

fn fixture() -> Fixture {
    let mock = MockModel::start(MockConfig::default()).unwrap();
    let env = CodexTestEnv::new(mock.base_url()).unwrap_or_else(|e| panic!("{e}"));
    Fixture { mock, env }
}

impl Fixture {
    async fn exec(&self, args: &[&str]) -> CodexRun {
        self.env
            .run_exec(args, RUN_TIMEOUT)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    }
}

/// The run ended its turn normally.
fn assert_completed(run: &CodexRun) {
    assert_eq!(run.status.code(), Some(0), "{run}");
    let types = run.event_types();
    assert_eq!(types[..2], ["thread.started", "turn.started"], "{run}");
    assert_eq!(types.last(), Some(&"turn.completed"), "{run}");
}

/// The run failed its turn with `message`: an `error` event, then `turn.failed`, exit status 1.
fn assert_failed_with(run: &CodexRun, message: &str) {
    assert_eq!(run.status.code(), Some(1), "{run}");
    assert_eq!(
        run.event_types(),
        ["thread.started", "turn.started", "error", "turn.failed"],
        "{run}"
    );
    assert_eq!(run.events[2]["message"], message, "{run}");
    assert_eq!(run.turn_failed_message(), Some(message), "{run}");
}

#[tokio::test]
async fn plain() {
    let fx = fixture();
    let run = fx.exec(&["scenario:plain Say hello."]).await;
    assert_completed(&run);
    assert_eq!(run.event_types().len(), 5, "{run}");
    assert_eq!(
        run.items("item.completed", "reasoning")[0]["text"],
        "**Answering**\n\nThe user wants a greeting; reply briefly."
    );
    assert_eq!(run.agent_messages(), ["Hello! I am the mock model. 2 + 2 = 4."]);
    assert_eq!(
        run.events[4]["usage"],
        json!({"input_tokens": 1200, "cached_input_tokens": 200, "cache_write_input_tokens": 0,
            "output_tokens": 48, "reasoning_output_tokens": 16})
    );
    let requests = fx.mock.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.header("authorization"), Some("Bearer dummy"));
    assert_eq!(request.header("originator"), Some("codex_exec"));
    assert_eq!(request.header("thread-id"), run.thread_id());
    assert_eq!(request.header("content-encoding"), None, "Codex sends plain JSON");
    assert_eq!(request.body["model"], "gpt-5.5");
    assert_eq!(request.body["stream"], true);
    let tools: Vec<&str> = request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t.get("name").or_else(|| t.get("type")).and_then(Value::as_str))
        .collect();
    for tool in ["exec_command", "apply_patch", "tool_search", "web_search"] {
        assert!(tools.contains(&tool), "{tool} not offered: {tools:?}");
    }
}

#[tokio::test]
async fn shell() {
    let fx = fixture();
    let run = fx.exec(&["scenario:shell List the files."]).await;
    assert_completed(&run);
    let started = run.items("item.started", "command_execution");
    let completed = run.items("item.completed", "command_execution");
    assert_eq!((started.len(), completed.len()), (1, 1), "{run}");
    assert_eq!(started[0]["command"], "/bin/bash -lc 'ls -la'");
    assert_eq!(started[0]["status"], "in_progress");
    assert_eq!(completed[0]["exit_code"], 0, "{run}");
    assert_eq!(completed[0]["status"], "completed");
    let output = completed[0]["aggregated_output"].as_str().unwrap();
    assert!(
        output.contains("README.md") && output.contains("main.py"),
        "{output}"
    );
    let messages = run.agent_messages();
    assert_eq!(messages[0], "I'll list the files first.");
    assert!(
        messages[1].starts_with("The directory listing succeeded. Output began: Chunk ID: "),
        "{run}"
    );
    assert!(messages[1].contains("Process exited with code 0"), "{run}");
    let steps: Vec<usize> = fx.mock.requests().iter().map(|r| r.step).collect();
    assert_eq!(steps, [0, 1]);
    assert_eq!(
        run.events.last().unwrap()["usage"]["input_tokens"],
        2400,
        "usage is summed over requests"
    );
}

#[tokio::test]
async fn fail() {
    let fx = fixture();
    let run = fx.exec(&["scenario:fail Run a failing command."]).await;
    assert_completed(&run);
    let completed = run.items("item.completed", "command_execution");
    assert_eq!(
        completed[0]["command"],
        "/bin/bash -lc 'ls /definitely/not/here; exit 3'"
    );
    assert_eq!(completed[0]["exit_code"], 3, "{run}");
    assert_eq!(completed[0]["status"], "failed");
    assert!(
        completed[0]["aggregated_output"]
            .as_str()
            .unwrap()
            .contains("No such file or directory")
    );
    assert!(
        run.agent_messages()[0].contains("Process exited with code 3"),
        "{run}"
    );
}

#[tokio::test]
async fn patch_in_workspace_write() {
    let fx = fixture();
    let run = fx
        .exec(&[
            "-s",
            "workspace-write",
            "scenario:patch Create hello.txt and edit README.",
        ])
        .await;
    assert_completed(&run);
    let workspace = fx.env.workspace();
    let changes = &run.items("item.completed", "file_change")[0]["changes"];
    let expected = json!([
        {"path": workspace.join("README.md").display().to_string(), "kind": "update"},
        {"path": workspace.join("hello.txt").display().to_string(), "kind": "add"},
    ]);
    assert_eq!(*changes, expected, "{run}");
    assert_eq!(run.items("item.started", "file_change").len(), 1);
    assert_eq!(
        std::fs::read_to_string(workspace.join("hello.txt")).unwrap(),
        "Hello from the mock model.\nSecond line.\n"
    );
    assert_eq!(
        std::fs::read_to_string(workspace.join("README.md")).unwrap(),
        "# demo repo (edited by codex)\n"
    );
    let message = run.agent_messages()[0];
    assert!(
        message.contains("Success. Updated the following files: | A hello.txt | M README.md"),
        "{run}"
    );
}

#[tokio::test]
async fn patch_missing_file_is_refused_without_an_item() {
    let fx = fixture();
    let run = fx
        .exec(&[
            "-s",
            "workspace-write",
            "scenario:patch_missing Edit a missing file.",
        ])
        .await;
    assert_completed(&run);
    assert!(run.items("item.started", "file_change").is_empty(), "{run}");
    let message = run.agent_messages()[0];
    assert!(
        message.starts_with("Patch result: apply_patch verification failed: Failed to read file to update"),
        "{run}"
    );
}

#[tokio::test]
async fn plan_with_update_plan_enabled() {
    let fx = fixture();
    let run = fx
        .exec(&[
            "-c",
            "tools.update_plan.enabled=true",
            "scenario:plan Make a plan.",
        ])
        .await;
    assert_completed(&run);
    let sequence: Vec<String> = run
        .events
        .iter()
        .filter_map(|e| {
            Some(format!(
                "{} {}",
                e["type"].as_str()?,
                e.get("item")?["type"].as_str()?
            ))
        })
        .collect();
    assert_eq!(
        sequence,
        [
            "item.started todo_list",
            "item.started command_execution",
            "item.completed command_execution",
            "item.updated todo_list",
            "item.completed agent_message",
            "item.completed todo_list",
        ],
        "{run}"
    );
    let first = &run.items("item.started", "todo_list")[0]["items"];
    assert_eq!(
        *first,
        json!([{"text": "Inspect repo", "completed": false}, {"text": "Run a command", "completed": false},
            {"text": "Report back", "completed": false}])
    );
    let last = &run.items("item.completed", "todo_list")[0]["items"];
    assert_eq!(last[1], json!({"text": "Run a command", "completed": true}));
    assert_eq!(run.agent_messages(), ["All planned steps are done."]);
    assert_eq!(fx.mock.requests().len(), 4);
}

#[tokio::test]
async fn http500() {
    let fx = fixture();
    let run = fx.exec(&["scenario:http500 trigger an error"]).await;
    assert_failed_with(
        &run,
        "We\u{2019}re currently experiencing high demand, which may cause temporary errors.",
    );
    assert_eq!(fx.mock.requests().len(), 1, "request_max_retries = 0: no retry");
}

#[tokio::test]
async fn http401() {
    let fx = fixture();
    let run = fx.exec(&["scenario:http401 trigger an error"]).await;
    let url = format!("{}/responses", fx.mock.base_url());
    assert_failed_with(
        &run,
        &format!("unexpected status 401 Unauthorized: Incorrect API key provided: dummy., url: {url}"),
    );
}

#[tokio::test]
async fn http429() {
    let fx = fixture();
    let run = fx.exec(&["scenario:http429 trigger an error"]).await;
    assert_failed_with(&run, "exceeded retry limit, last status: 429 Too Many Requests");
}

#[tokio::test]
async fn respfailed() {
    let fx = fixture();
    let run = fx.exec(&["scenario:respfailed trigger an error"]).await;
    assert_failed_with(
        &run,
        "stream disconnected before completion: mock response.failed",
    );
}

#[tokio::test]
async fn ctxwindow() {
    let fx = fixture();
    let run = fx.exec(&["scenario:ctxwindow trigger an error"]).await;
    assert_failed_with(
        &run,
        "Codex ran out of room in the model's context window. Start a new thread or clear earlier history before retrying.",
    );
}

#[tokio::test]
async fn truncated() {
    let fx = fixture();
    let run = fx.exec(&["scenario:truncated trigger an error"]).await;
    assert_failed_with(
        &run,
        "stream disconnected before completion: stream closed before response.completed",
    );
}

#[tokio::test]
async fn history_over_exec_resume() {
    let fx = fixture();
    let first = fx.exec(&["scenario:history Remember the number 42."]).await;
    assert_completed(&first);
    assert_eq!(first.agent_messages(), ["history seen=false turns=1"]);
    let thread_id = first.thread_id().unwrap().to_owned();

    let second = fx
        .exec(&["resume", &thread_id, "scenario:history What was the number?"])
        .await;
    assert_completed(&second);
    assert_eq!(second.thread_id(), Some(thread_id.as_str()), "same thread");
    assert_eq!(second.agent_messages(), ["history seen=true turns=2"]);
    assert_eq!(
        second.items("item.completed", "agent_message")[0]["id"],
        "item_0",
        "item ids restart per process"
    );

    let requests = fx.mock.requests();
    assert_eq!(requests.len(), 2);
    let resumed = &requests[1];
    let prompts: Vec<String> = resumed
        .user_texts()
        .into_iter()
        .filter(|t| t.starts_with("scenario:"))
        .collect();
    assert_eq!(
        prompts,
        [
            "scenario:history Remember the number 42.",
            "scenario:history What was the number?"
        ]
    );
    let earlier_answer = resumed.input().iter().any(|item| {
        item["role"] == "assistant" && item["content"][0]["text"] == "history seen=false turns=1"
    });
    assert!(
        earlier_answer,
        "the first turn's answer is in the resumed request"
    );
    assert_eq!(resumed.header("thread-id"), Some(thread_id.as_str()));
}

#[tokio::test]
async fn websearch() {
    let fx = fixture();
    let run = fx.exec(&["scenario:websearch search the web"]).await;
    assert_completed(&run);
    let searches = run.items("item.completed", "web_search");
    assert_eq!(searches.len(), 1, "{run}");
    assert_eq!(searches[0]["query"], "agent client protocol spec");
    assert_eq!(run.agent_messages(), ["Search done (mock)."]);
}

#[tokio::test]
async fn escalation_is_refused_by_exec_without_an_item() {
    let fx = fixture();
    let run = fx.exec(&["scenario:escalate Run it outside the sandbox."]).await;
    assert_completed(&run);
    assert!(run.items("item.started", "command_execution").is_empty(), "{run}");
    assert_eq!(
        run.agent_messages(),
        [
            "Escalation result: approval policy is Never; reject command \u{2014} you cannot ask for escalated permissions if the approval policy is Never"
        ]
    );
}

#[tokio::test]
async fn no_scenario_token_gets_the_default_answer() {
    let fx = fixture();
    let run = fx.exec(&["Hi there."]).await;
    assert_completed(&run);
    assert_eq!(run.agent_messages(), ["Hello from the mock model."]);
}

#[tokio::test]
async fn sleep_runs_until_interrupted() {
    let fx = fixture();
    let mut child = fx
        .env
        .exec_command(["scenario:sleep Wait a while."])
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    let started = tokio::time::timeout(RUN_TIMEOUT, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            let event: Value = serde_json::from_str(&line).unwrap();
            let is_start = event["type"] == "item.started" && event["item"]["type"] == "command_execution";
            seen.push(event);
            if is_start {
                return true;
            }
        }
        false
    })
    .await
    .unwrap_or_else(|_| panic!("no command_execution started within {RUN_TIMEOUT:?}: {seen:?}"));
    assert!(started, "stdout closed first: {seen:?}");
    assert_eq!(
        seen.last().unwrap()["item"]["command"],
        "/bin/bash -lc 'sleep 30'"
    );

    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id().unwrap()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let status = tokio::time::timeout(RUN_TIMEOUT, child.wait())
        .await
        .expect("codex exits after SIGINT")
        .unwrap();
    assert_eq!(status.code(), Some(1));
    let mut rest = Vec::new();
    let drained = tokio::time::timeout(RUN_TIMEOUT, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            rest.push(line);
        }
    })
    .await;
    // The command ran in Codex's process group; make sure nothing outlives the test.
    let _gone = nix::sys::signal::killpg(pid, nix::sys::signal::Signal::SIGKILL);
    assert!(drained.is_ok(), "stdout stayed open after codex exited: {rest:?}");
    assert!(
        rest.iter()
            .all(|l| !l.contains("turn.completed") && !l.contains("turn.failed")),
        "{rest:?}"
    );
}
