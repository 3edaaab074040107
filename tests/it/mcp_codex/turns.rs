//! Tools and schemas, a turn and its thread, replies (by `threadId`, by `conversationId`, from
//! a second server process), progress, and the thread as an ordinary acplb session.

use std::time::Duration;

use acplb_playback::mock_model::MockConfig;
use serde_json::json;

use super::client::{Recorder, all_text, call, connect, is_error, start, text, thread_of, tool};

#[tokio::test]
async fn every_tool_is_listed_with_a_schema_and_annotations() {
    let mut live = start(MockConfig::default(), &[], &[]);
    let mcp = connect(&mut live, Recorder::default()).await;
    let tools = mcp.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["codex", "codex-reply", "codex_threads", "codex_status"]);
    for tool in &tools {
        let a = tool
            .annotations
            .as_ref()
            .unwrap_or_else(|| panic!("{} has no annotations", tool.name));
        assert!(a.read_only_hint.is_some() && a.destructive_hint.is_some() && a.open_world_hint.is_some());
    }
    let codex = serde_json::to_value(&tools[0]).unwrap();
    assert_eq!(codex["inputSchema"]["required"], json!(["prompt"]));
    let names = "model profile cwd approval-policy sandbox config base-instructions developer-instructions compact-prompt include-plan-tool tag";
    for arg in names.split(' ') {
        assert!(
            codex["inputSchema"]["properties"].get(arg).is_some(),
            "codex lacks `{arg}`"
        );
    }
    let reply = serde_json::to_value(&tools[1]).unwrap();
    assert!(reply["inputSchema"]["properties"].get("conversationId").is_some());
    assert_eq!(tools[2].annotations.as_ref().unwrap().read_only_hint, Some(true));
    mcp.cancel().await.unwrap();
}

#[tokio::test]
async fn a_thread_runs_continues_by_either_id_and_is_an_acplb_session() {
    let mut live = start(MockConfig::default(), &[], &[]);
    let mcp = connect(&mut live, Recorder::default()).await;
    let first = tool(
        &mcp,
        "codex",
        json!({"prompt": "scenario:history one", "tag": "review-7"}),
    )
    .await;
    assert!(!is_error(&first), "{first:?}");
    assert_eq!(text(&first), "history seen=false turns=1");
    let thread = thread_of(&first);
    assert_eq!(
        first.structured_content.as_ref().unwrap()["content"],
        "history seen=false turns=1"
    );
    for (turn, key) in [(2, "threadId"), (3, "conversationId")] {
        let mut args = json!({ "prompt": format!("scenario:history turn {turn}") });
        args[key] = json!(thread);
        let reply = tool(&mcp, "codex-reply", args).await;
        assert_eq!(
            text(&reply),
            format!("history seen=true turns={turn}"),
            "{key}: {reply:?}"
        );
        assert_eq!(thread_of(&reply), thread);
    }
    // One Codex thread for the three turns.
    let codex_threads = live.thread_ids();
    assert_eq!(codex_threads.len(), 3);
    assert!(
        codex_threads.iter().all(|t| *t == codex_threads[0]),
        "{codex_threads:?}"
    );
    // Listed as this server's thread, and as an acplb session.
    let listed = tool(&mcp, "codex_threads", json!({})).await;
    let threads = &listed.structured_content.as_ref().unwrap()["threads"];
    let listed = threads
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["threadId"] == thread);
    assert_eq!(
        listed.unwrap_or_else(|| panic!("{threads}"))["tag"],
        "review-7",
        "{threads}"
    );
    let status = tool(&mcp, "codex_status", json!({})).await;
    let status = status.structured_content.unwrap();
    assert_eq!(status["codex"]["alive"], true, "{status}");
    assert!(
        status["codex"]["version"]
            .as_str()
            .is_some_and(|v| v.contains("0.169.0")),
        "{status}"
    );
    assert_eq!(status["openThreads"], 1, "{status}");
    mcp.cancel().await.unwrap();
    live.acplb.wait_exit(Duration::from_secs(20)).await;
    let journal = live.state_dir().join("sessions").join(&thread);
    assert!(
        journal.exists(),
        "no journal for {thread} under {}",
        live.state_dir().display()
    );
}

#[tokio::test]
async fn every_call_is_in_the_audit_log_redacted_and_cut_to_200_characters() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let log_arg = log.display().to_string();
    let mut live = start(MockConfig::default(), &["--audit", &log_arg], &[]);
    let mcp = connect(&mut live, Recorder::default()).await;
    let secret = "sk-proj-Abc123Def456Ghi789";
    let prompt = format!("key {secret} then {} scenario:history one", "x".repeat(300));
    let thread = thread_of(&tool(&mcp, "codex", json!({ "prompt": prompt })).await);
    tool(
        &mcp,
        "codex-reply",
        json!({"prompt": "scenario:history two", "threadId": thread}),
    )
    .await;
    let lines = || -> Vec<serde_json::Value> {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    // Written on the blocking pool: the second line may land a moment after the answer.
    assert!(crate::harness::eventually(Duration::from_secs(5), || lines().len() == 2).await);
    let lines = lines();
    assert!(
        lines.iter().all(|l| l["session_id"] == thread.as_str()),
        "{lines:?}"
    );
    let first = lines[0]["prompt_summary"].as_str().unwrap();
    assert!(!first.contains(secret), "{first}");
    assert!(
        first.chars().count() <= 200,
        "{} characters",
        first.chars().count()
    );
    assert_eq!(lines[1]["prompt_summary"], "scenario:history two");
    mcp.cancel().await.unwrap();
}

#[tokio::test]
async fn a_second_server_process_continues_the_thread() {
    let mut live = start(MockConfig::default(), &[], &[]);
    let mcp = connect(&mut live, Recorder::default()).await;
    let first = tool(&mcp, "codex", json!({"prompt": "scenario:history one"})).await;
    let thread = thread_of(&first);
    mcp.cancel().await.unwrap();
    live.acplb.wait_exit(Duration::from_secs(20)).await;
    live.respawn();
    let mcp = connect(&mut live, Recorder::default()).await;
    let reply = tool(
        &mcp,
        "codex-reply",
        json!({"prompt": "scenario:history two", "threadId": thread}),
    )
    .await;
    assert!(!is_error(&reply), "{reply:?}\n{}", live.acplb.stderr());
    assert_eq!(text(&reply), "history seen=true turns=2");
    let ids = live.thread_ids();
    assert_eq!(ids.len(), 2);
    assert_eq!(
        ids[0], ids[1],
        "the second process went on in the same Codex thread"
    );
    mcp.cancel().await.unwrap();
}

#[tokio::test]
async fn progress_notifications_arrive_while_a_command_runs() {
    let mut live = start(MockConfig::default(), &[], &[]);
    let recorder = Recorder::default();
    let mcp = connect(&mut live, recorder.clone()).await;
    let args = json!({"prompt": "scenario:shell list"});
    let result = mcp.call_tool(call("codex", args, Some("p-1"))).await.unwrap();
    assert!(!is_error(&result), "{result:?}");
    assert!(
        text(&result).starts_with("The directory listing succeeded"),
        "{result:?}"
    );
    let progress = recorder.progress.lock().unwrap().clone();
    let messages: Vec<String> = progress.iter().filter_map(|p| p.message.clone()).collect();
    assert!(messages.iter().any(|m| m.starts_with("tool")), "{messages:?}");
    let tokens: Vec<_> = progress
        .iter()
        .map(|p| serde_json::to_value(&p.progress_token).unwrap())
        .collect();
    // rmcp's client puts its own token on the request: every notification carries that one.
    assert!(tokens.iter().all(|t| *t == tokens[0]), "{tokens:?}");
    let steps: Vec<f64> = progress.iter().map(|p| p.progress).collect();
    assert!(
        steps.windows(2).all(|w| w[0] < w[1]),
        "progress must increase: {steps:?}"
    );
    mcp.cancel().await.unwrap();
}

#[tokio::test]
async fn bad_input_is_a_tool_error_and_the_server_goes_on() {
    let mut live = start(MockConfig::default(), &[], &[]);
    let mcp = connect(&mut live, Recorder::default()).await;
    let ws = live.workspace();
    let cases = [
        ("codex", json!({}), "`prompt` is required"),
        ("codex", json!({"prompt": 42}), "`prompt` must be a string"),
        (
            "codex",
            json!({"prompt": "x", "cwd": "relative/dir"}),
            "absolute path",
        ),
        (
            "codex",
            json!({"prompt": "x", "cwd": ws.join("no-such-dir")}),
            "no-such-dir",
        ),
        ("codex", json!({"prompt": "x", "sandbox": "yolo"}), "`sandbox`"),
        (
            "codex",
            json!({"prompt": "x", "config": "model=x"}),
            "`config` must be an object",
        ),
        ("codex-reply", json!({"prompt": "x"}), "`threadId` is required"),
        (
            "codex-reply",
            json!({"prompt": "x", "threadId": "no-such-thread"}),
            "unknown thread `no-such-thread`",
        ),
        (
            "codex-reply",
            json!({"prompt": "x", "threadId": "../../etc"}),
            "unknown thread `../../etc`",
        ),
        ("codex_threads", json!({"status": "sleeping"}), "`status`"),
        ("no_such_tool", json!({}), "unknown tool"),
    ];
    for (name, args, expected) in cases {
        let result = tool(&mcp, name, args.clone()).await;
        assert!(is_error(&result), "{name} {args}: {result:?}");
        assert!(
            all_text(&result).contains(expected),
            "{name} {args}: {}",
            all_text(&result)
        );
    }
    let ok = tool(&mcp, "codex", json!({"prompt": "hello", "cwd": ws})).await;
    assert_eq!(text(&ok), "Hello from the mock model.", "{ok:?}");
    mcp.cancel().await.unwrap();
}

#[tokio::test]
async fn threads_past_the_open_limit_are_closed_and_a_reply_loads_them_again() {
    let mut live = start(MockConfig::default(), &[], &[]);
    let mcp = connect(&mut live, Recorder::default()).await;
    let first = tool(&mcp, "codex", json!({"prompt": "scenario:history one"})).await;
    let thread = thread_of(&first);
    // Nine more calls: more than the eight kept open, so the first, least recently used, goes.
    for _ in 0..9 {
        let turn = tool(&mcp, "codex", json!({"prompt": "hello"})).await;
        assert!(!is_error(&turn), "{turn:?}");
    }
    let open = tool(&mcp, "codex_status", json!({}))
        .await
        .structured_content
        .unwrap()["openThreads"]
        .clone();
    assert_eq!(open, 8, "the open threads are bounded");
    let threads = tool(&mcp, "codex_threads", json!({}))
        .await
        .structured_content
        .unwrap();
    let entry = threads["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["threadId"] == thread.as_str())
        .cloned()
        .unwrap_or_else(|| panic!("{threads}"));
    assert_ne!(entry["status"], "running", "{entry}");
    // A reply loads it again and goes on in the same Codex thread.
    let reply = tool(
        &mcp,
        "codex-reply",
        json!({"prompt": "scenario:history two", "threadId": thread}),
    )
    .await;
    assert!(!is_error(&reply), "{reply:?}\n{}", live.acplb.stderr());
    assert_eq!(text(&reply), "history seen=true turns=2");
    let ids = live.thread_ids();
    assert_eq!(
        ids[0],
        *ids.last().unwrap(),
        "the reply went on in the first thread"
    );
    mcp.cancel().await.unwrap();
}
