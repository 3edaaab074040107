//! The real Codex CLI behind `acplb`: answers, commands, patches, plans, errors, resumed turns.

use std::time::Duration;

use agent_client_protocol::v1::schema::PermissionOptionKind;
use agent_client_protocol::v1::schema::{ContentBlock, StopReason, TextContent};

use crate::harness::{open_session, prompt};
use crate::live::{Live, assert_end_turn, set_mode};

#[tokio::test]
async fn plain_answer_streams_thought_and_message_with_usage() {
    let mut live = Live::start();
    let updates = live.updates.clone();
    let resp = live
        .one_text_turn("read-only", "scenario:plain Say hello")
        .await
        .unwrap();
    assert_end_turn(&resp.stop_reason);
    assert_eq!(updates.agent_text(), "Hello! I am the mock model. 2 + 2 = 4.");
    let thoughts: String = updates
        .of_kind("agent_thought_chunk")
        .iter()
        .filter_map(|t| t["content"]["text"].as_str())
        .collect();
    assert!(thoughts.contains("The user wants a greeting"), "{thoughts}");
    let usage = serde_json::to_value(resp.usage.expect("usage")).unwrap();
    assert_eq!(usage["inputTokens"], 1200);
    assert_eq!(usage["outputTokens"], 48);
    assert_eq!(usage["thoughtTokens"], 16);
    assert_eq!(usage["cachedReadTokens"], 200);
    assert_eq!(live.mock.requests().len(), 1);
}

#[tokio::test]
async fn shell_command_becomes_a_tool_call_with_output() {
    let mut live = Live::start();
    let updates = live.updates.clone();
    let resp = live
        .one_text_turn("read-only", "scenario:shell list the files")
        .await
        .unwrap();
    assert_end_turn(&resp.stop_reason);
    let calls = updates.of_kind("tool_call");
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["title"], "ls -la");
    assert_eq!(calls[0]["status"], "in_progress");
    let id = calls[0]["toolCallId"].clone();
    let done: Vec<_> = updates
        .of_kind("tool_call_update")
        .into_iter()
        .filter(|u| u["toolCallId"] == id)
        .collect();
    let last = done.last().expect("a final update");
    assert_eq!(last["status"], "completed");
    let output = last["content"].to_string();
    assert!(
        output.contains("README.md") && output.contains("main.py"),
        "{output}"
    );
    assert!(updates.agent_text().contains("The directory listing succeeded"));
    // Every message this Codex sends in a turn is one acplb knows (it used to warn of
    // `thread/readState/changed` in every session).
    let warnings = live.codex_message_warnings().await;
    assert!(warnings.is_empty(), "{warnings:#?}");
}

#[tokio::test]
async fn failing_command_is_a_failed_tool_call_with_exit_code() {
    let mut live = Live::start();
    let updates = live.updates.clone();
    let resp = live
        .one_text_turn("read-only", "scenario:fail run it")
        .await
        .unwrap();
    assert_end_turn(&resp.stop_reason);
    let last = updates.of_kind("tool_call_update").pop().expect("an update");
    assert_eq!(last["status"], "failed");
    assert_eq!(last["rawOutput"]["exit_code"], 3, "{last}");
    assert!(
        last["content"].to_string().contains("No such file or directory"),
        "{last}"
    );
}

#[tokio::test]
async fn patch_in_auto_mode_changes_the_file_and_reports_real_diffs() {
    let mut live = Live::start();
    let ws = live.workspace();
    let readme_before = std::fs::read_to_string(ws.join("README.md")).unwrap();
    let updates = live.updates.clone();
    let resp = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            set_mode(&cx, &s.session_id, "auto").await?;
            prompt(&cx, &s.session_id, "scenario:patch edit the files").await
        })
        .await
        .unwrap();
    assert_end_turn(&resp.stop_reason);
    assert!(
        live.acplb.permissions.seen().is_empty(),
        "auto writes the workspace without asking"
    );
    let readme_after = std::fs::read_to_string(ws.join("README.md")).unwrap();
    let hello = std::fs::read_to_string(ws.join("hello.txt")).expect("hello.txt was created on disk");
    assert_ne!(readme_before, readme_after);
    let edit = updates
        .of_kind("tool_call")
        .into_iter()
        .find(|c| c["kind"] == "edit")
        .expect("an edit tool call");
    let id = edit["toolCallId"].clone();
    let final_update = updates
        .of_kind("tool_call_update")
        .into_iter()
        .rfind(|u| u["toolCallId"] == id)
        .expect("completion");
    assert_eq!(final_update["status"], "completed");
    let diffs: Vec<_> = final_update["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] == "diff")
        .cloned()
        .collect();
    let readme_diff = diffs
        .iter()
        .find(|d| d["path"].as_str().unwrap().ends_with("README.md"))
        .unwrap_or_else(|| panic!("no README diff in {final_update}"));
    assert_eq!(readme_diff["oldText"], readme_before.as_str());
    assert_eq!(readme_diff["newText"], readme_after.as_str());
    let hello_diff = diffs
        .iter()
        .find(|d| d["path"].as_str().unwrap().ends_with("hello.txt"))
        .unwrap();
    assert!(
        hello_diff["oldText"].is_null(),
        "a new file has no old text: {hello_diff}"
    );
    assert_eq!(hello_diff["newText"], hello.as_str());
    let locations = edit["locations"].to_string();
    assert!(
        locations.contains("README.md") && locations.contains("hello.txt"),
        "{locations}"
    );
}

#[tokio::test]
async fn patch_refused_in_read_only_mode_is_a_failed_edit_not_silence() {
    let mut live = Live::start();
    // On app-server Codex asks first; the user says no. On exec the sandbox refuses.
    live.acplb
        .permissions
        .answer(crate::harness::Answer::Kind(PermissionOptionKind::RejectOnce));
    let ws = live.workspace();
    let updates = live.updates.clone();
    let resp = live
        .one_text_turn("read-only", "scenario:patch edit the files")
        .await
        .unwrap();
    assert_end_turn(&resp.stop_reason);
    assert!(!ws.join("hello.txt").exists(), "read-only mode wrote a file");
    let edits: Vec<_> = updates
        .of_kind("tool_call")
        .into_iter()
        .filter(|c| c["kind"] == "edit")
        .collect();
    assert_eq!(
        edits.len(),
        1,
        "{:?}\nstderr:\n{}",
        updates.json(),
        live.acplb.stderr()
    );
    let last_status = updates
        .json()
        .into_iter()
        .filter(|u| u["toolCallId"] == edits[0]["toolCallId"])
        .filter_map(|u| u["status"].as_str().map(str::to_owned))
        .next_back();
    assert_eq!(last_status.as_deref(), Some("failed"), "{:?}", updates.json());
    if crate::harness::transport() == "exec" {
        assert!(edits[0].to_string().contains("read-only"), "{}", edits[0]);
    }
}

#[tokio::test]
async fn plans_reach_the_editor() {
    let mut live = Live::start();
    let updates = live.updates.clone();
    let resp = live
        .one_text_turn("read-only", "scenario:plan make a plan")
        .await
        .unwrap();
    assert_end_turn(&resp.stop_reason);
    let plans = updates.of_kind("plan");
    assert!(plans.len() >= 2, "{plans:?}");
    let last = plans.last().unwrap();
    let statuses: Vec<_> = last["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["status"].clone())
        .collect();
    assert_eq!(statuses[0], "completed");
    assert!(statuses.iter().any(|s| *s != "completed"), "{last}");
}

#[tokio::test]
async fn http_500_is_an_error_then_the_next_prompt_works() {
    let mut live = Live::start();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let (first, second) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let first = prompt(&cx, &s.session_id, "scenario:http500 hi").await;
            let second = prompt(&cx, &s.session_id, "scenario:plain hi again").await;
            Ok((first, second))
        })
        .await
        .unwrap();
    let err = first.unwrap_err();
    assert!(
        err.data.as_ref().unwrap().to_string().contains("high demand"),
        "{err:?}"
    );
    assert_end_turn(&second.unwrap().stop_reason);
    assert!(updates.agent_text().contains("Hello! I am the mock model."));
}

#[tokio::test]
async fn http_401_asks_for_authentication() {
    let mut live = Live::start();
    let result = live.one_text_turn("read-only", "scenario:http401 hi").await;
    let err = result.unwrap_err();
    assert_eq!(i32::from(err.code), -32000, "{err:?}");
    let data = err.data.unwrap();
    assert_eq!(data["reason"], "auth_required", "{data}");
    // The error names the ways in an editor offers (`authenticate`).
    assert_eq!(
        data["authMethods"],
        serde_json::json!(["chatgpt-device-code", "api-key"]),
        "{data}"
    );
    let data = data.to_string();
    assert!(data.contains("401") && data.contains("codex login"), "{data}");
}

#[tokio::test]
async fn three_turn_conversation_resumes_the_same_thread() {
    let mut live = Live::start();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let texts = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let mut texts = Vec::new();
            for n in 1..=3 {
                updates.clear();
                let r = prompt(&cx, &s.session_id, &format!("scenario:history turn {n}")).await?;
                assert_eq!(r.stop_reason, StopReason::EndTurn);
                texts.push(updates.agent_text());
            }
            Ok(texts)
        })
        .await
        .unwrap();
    assert_eq!(
        texts,
        vec![
            "history seen=false turns=1",
            "history seen=true turns=2",
            "history seen=true turns=3"
        ]
    );
    let threads = live.thread_ids();
    assert_eq!(threads.len(), 3);
    assert!(
        threads.iter().all(|t| !t.is_empty() && *t == threads[0]),
        "{threads:?}"
    );
}

#[tokio::test]
async fn a_one_megabyte_prompt_with_context_reaches_the_model_whole() {
    let mut live = Live::start();
    let big = "x".repeat(1_000_000);
    let blocks: Vec<ContentBlock> = vec![
        ContentBlock::Text(TextContent::new("scenario:plain")),
        ContentBlock::Text(TextContent::new(big)),
    ];
    let resp = live.one_turn("read-only", blocks).await.unwrap();
    assert_end_turn(&resp.stop_reason);
    let req = &live.mock.requests()[0];
    assert!(
        req.user_texts().iter().any(|t| t.len() > 1_000_000),
        "the model got the whole prompt"
    );
    let _ = Duration::ZERO;
}

#[tokio::test]
async fn images_reach_the_model_and_their_temp_files_are_removed() {
    use agent_client_protocol::v1::schema::ImageContent;
    let mut live = Live::start();
    // A 1x1 PNG.
    let png =
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    let blocks = vec![
        ContentBlock::Text(TextContent::new("scenario:plain what is in this picture?")),
        ContentBlock::Image(ImageContent::new(png, "image/png")),
    ];
    let before: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .filter(|n| n.to_string_lossy().starts_with("acplb-images-"))
        .collect();
    let resp = live.one_turn("read-only", blocks).await.unwrap();
    assert_end_turn(&resp.stop_reason);
    let body = live.mock.requests()[0].body.to_string();
    assert!(
        body.contains("input_image") && body.contains("data:image/png;base64,"),
        "no image in the request"
    );
    let after: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .filter(|n| n.to_string_lossy().starts_with("acplb-images-") && !before.contains(n))
        .collect();
    assert!(after.is_empty(), "image temp files left: {after:?}");
}

#[tokio::test]
async fn switching_back_to_read_only_applies_to_the_resumed_turn() {
    let mut live = Live::start();
    // Read-only again: on app-server Codex asks before the edit, and the user says no.
    live.acplb
        .permissions
        .answer(crate::harness::Answer::Kind(PermissionOptionKind::RejectOnce));
    let ws = live.workspace();
    let updates = live.updates.clone();
    let (first, second) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            set_mode(&cx, &s.session_id, "auto").await?;
            let first = prompt(&cx, &s.session_id, "scenario:shell look around").await?;
            set_mode(&cx, &s.session_id, "read-only").await?;
            let second = prompt(&cx, &s.session_id, "scenario:patch edit the files").await?;
            Ok((first, second))
        })
        .await
        .unwrap();
    assert_end_turn(&first.stop_reason);
    assert_end_turn(&second.stop_reason);
    assert!(
        !ws.join("hello.txt").exists(),
        "the resumed read-only turn wrote a file"
    );
    let threads = live.thread_ids();
    assert!(
        threads.iter().all(|t| *t == threads[0]),
        "both turns are one thread: {threads:?}"
    );
    let edit_ids: Vec<serde_json::Value> = updates
        .of_kind("tool_call")
        .into_iter()
        .filter(|c| c["kind"] == "edit")
        .map(|c| c["toolCallId"].clone())
        .collect();
    let refused = updates
        .json()
        .into_iter()
        .any(|u| edit_ids.contains(&u["toolCallId"]) && u["status"] == "failed");
    assert!(refused, "the refused patch is shown as a failed edit");
}
