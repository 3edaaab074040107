//! Codex compacting the conversation (`/compact`, or on its own when the context fills up):
//! a client that advertised `session.compaction` sees ACP's `compaction_update`s (in progress,
//! then completed) and no notice; any other client keeps the notice (ADR 0037). On exec,
//! which prints nothing of a compaction, the turn goes on as before.

use acplb_playback::mock_model::MockConfig;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ClientSessionCapabilities, CompactionCapabilities, InitializeRequest,
    NewSessionRequest, NoticeCapabilities, PromptResponse,
};
use serde_json::Value;

use crate::harness::{Updates, prompt, transport};
use crate::live::Live;

/// Capabilities with compaction updates (and notices) when `compaction`, notices only else.
pub(crate) fn caps(compaction: bool) -> ClientCapabilities {
    let mut session = ClientSessionCapabilities::new().notices(NoticeCapabilities::new());
    if compaction {
        session = session.compaction(CompactionCapabilities::new());
    }
    ClientCapabilities::new().session(session)
}

/// Codex that compacts once a thread passes 1,000 tokens (the mock reports 1,248 a turn).
pub(crate) fn live(extra: &[&str]) -> Live {
    let mut args = vec!["-c", "model_auto_compact_token_limit=1000"];
    args.extend(extra);
    Live::start_with(MockConfig::default(), &args, &[])
}

/// `initialize` with `caps` (as JSON), a session, then each of `prompts`; their answers.
pub(crate) async fn turns(
    live: &mut Live,
    caps: Value,
    prompts: &[&str],
) -> Vec<Result<PromptResponse, agent_client_protocol::Error>> {
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let prompts: Vec<String> = prompts.iter().map(|p| (*p).to_owned()).collect();
    live.acplb
        .client(&updates, async |cx| {
            let caps: ClientCapabilities = serde_json::from_value(caps).expect("capabilities");
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
                .block_task()
                .await?;
            let s = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
            let mut answers = Vec::new();
            for text in &prompts {
                answers.push(prompt(&cx, &s.session_id, text).await);
            }
            Ok(answers)
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()))
}

/// The compaction updates, as JSON.
pub(crate) fn compactions(updates: &Updates) -> Vec<Value> {
    updates.of_kind("compaction_update")
}

/// Whether the user was told in words that the conversation was compacted.
pub(crate) fn told_in_words(updates: &Updates) -> bool {
    updates.json().iter().any(|u| {
        u["sessionUpdate"] != "compaction_update" && u.to_string().contains("compacted the conversation")
    })
}

#[tokio::test]
async fn a_client_with_compaction_updates_sees_codex_compact_on_its_own() {
    let mut live = live(&[]);
    let caps = serde_json::to_value(caps(true)).unwrap();
    let answers = turns(
        &mut live,
        caps,
        &["scenario:plain one", "scenario:plain two", "scenario:plain three"],
    )
    .await;
    assert!(answers.iter().all(Result::is_ok), "{answers:?}");
    let seen = compactions(&live.updates);
    if transport() == "exec" {
        // Codex compacted (a request of its own to the model) but exec prints nothing of it.
        assert!(live.mock.requests().len() > 3, "Codex never compacted");
        assert!(seen.is_empty(), "{seen:?}");
        return;
    }
    assert!(seen.len() >= 2, "no compaction shown: {:?}", live.updates.json());
    assert_eq!(seen[0]["status"], "in_progress", "{seen:?}");
    assert_eq!(seen[1]["status"], "completed", "{seen:?}");
    assert_eq!(seen[0]["compactionId"], seen[1]["compactionId"]);
    assert!(!told_in_words(&live.updates), "{:?}", live.updates.json());
}

#[tokio::test]
async fn a_client_without_compaction_updates_keeps_the_notice() {
    let mut live = live(&[]);
    let caps = serde_json::to_value(caps(false)).unwrap();
    turns(&mut live, caps, &["scenario:plain one", "scenario:plain two"]).await;
    assert!(compactions(&live.updates).is_empty(), "{:?}", live.updates.json());
    if transport() == "exec" {
        return;
    }
    let notices = live.updates.of_kind("notice");
    assert!(
        notices
            .iter()
            .any(|n| n.to_string().contains("compacted the conversation")),
        "no notice: {:?}",
        live.updates.json()
    );
}

#[tokio::test]
async fn slash_compact_shows_as_one_compaction() {
    let mut live = Live::start();
    let caps = serde_json::to_value(caps(true)).unwrap();
    let answers = turns(&mut live, caps, &["scenario:plain one", "/compact"]).await;
    assert!(answers.iter().all(Result::is_ok), "{answers:?}");
    let seen = compactions(&live.updates);
    if transport() == "exec" {
        assert!(seen.is_empty(), "{seen:?}");
        return;
    }
    let statuses: Vec<&Value> = seen.iter().map(|c| &c["status"]).collect();
    assert_eq!(statuses, ["in_progress", "completed"], "{seen:?}");
    assert_eq!(seen[0]["compactionId"], seen[1]["compactionId"]);
    assert!(!told_in_words(&live.updates));
}

#[tokio::test]
async fn an_air_client_without_compaction_updates_sees_the_peers_compaction_call() {
    let mut live = Live::start();
    let mut caps = serde_json::to_value(caps(false)).unwrap();
    caps["_meta"] = serde_json::json!({"jetbrains": {"air": {"version": 1, "capabilities": []}}});
    let answers = turns(&mut live, caps, &["scenario:plain one", "/compact"]).await;
    assert!(answers.iter().all(Result::is_ok), "{answers:?}");
    assert!(compactions(&live.updates).is_empty());
    let all = live.updates.json();
    let marked: Vec<&Value> = all
        .iter()
        .filter(|u| u["_meta"]["jetbrains"]["air"]["contextCompaction"]["version"] == 1)
        .collect();
    if transport() == "exec" {
        assert!(marked.is_empty(), "{all:?}");
        return;
    }
    let steps: Vec<(&Value, &Value)> = marked
        .iter()
        .map(|u| (&u["sessionUpdate"], &u["status"]))
        .collect();
    assert_eq!(
        steps,
        [
            (&Value::from("tool_call"), &Value::from("in_progress")),
            (&Value::from("tool_call_update"), &Value::from("completed"))
        ],
        "{all:?}"
    );
    assert_eq!(marked[0]["title"], "Compact conversation");
    assert_eq!(marked[0]["toolCallId"], marked[1]["toolCallId"]);
    assert!(!told_in_words(&live.updates), "the call says it: {all:?}");
}
