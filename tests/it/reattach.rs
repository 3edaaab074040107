//! `session/load` and `session/resume` of a session that is open in this acplb: it is
//! reattached, not refused; a load replays the conversation before its answer, a resume sends
//! no history, and the turn in flight goes on and ends as usual, its updates after the answer.

use std::time::Duration;

use acplb_playback::mock_model::{MockConfig, Script};
use agent_client_protocol::v1::schema::{
    LoadSessionRequest, PromptRequest, ResumeSessionRequest, StopReason,
};

use crate::harness::{eventually, open_session, prompt};
use crate::live::Live;

/// A turn that runs a command for four seconds, then answers.
const SLOW: &str = r#"
[scenarios.slow]
[[scenarios.slow.steps]]
actions = [{ type = "exec", cmd = "sleep 4; echo slow-done", yield_time_ms = 20000 }]
[[scenarios.slow.steps]]
actions = [{ type = "message", text = "The slow command finished." }]
"#;

fn live() -> Live {
    let script = Script::builtin().layered_with(Script::from_toml_str(SLOW, "reattach-test").unwrap());
    Live::start_with(MockConfig::default().with_script(script), &[], &[])
}

/// What the client saw: the updates before the request, those it had when the answer came,
/// the answer as JSON, and how the turn in flight ended.
struct Seen {
    before: usize,
    at_answer: usize,
    answer: serde_json::Value,
    stop: StopReason,
}

/// Opens a session, has one turn, starts a slow one and, while its command runs, loads or
/// resumes the session from the same client.
async fn reattach_mid_turn(live: &mut Live, load: bool) -> Seen {
    let ws = live.workspace();
    let updates = live.updates.clone();
    live.acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let id = s.session_id;
            prompt(&cx, &id, "scenario:plain remember the heron").await?;
            let turn = cx
                .send_request(PromptRequest::new(
                    id.clone(),
                    vec!["scenario:slow wait for it".into()],
                ))
                .block_task();
            let turn = tokio::spawn(turn);
            let running = eventually(Duration::from_secs(30), || {
                !updates.of_kind("tool_call").is_empty()
            })
            .await;
            assert!(running, "the slow command started");
            let before = updates.all().len();
            let answer = if load {
                let r = cx
                    .send_request(LoadSessionRequest::new(id.clone(), &ws))
                    .block_task()
                    .await?;
                serde_json::to_value(r).unwrap()
            } else {
                let r = cx
                    .send_request(ResumeSessionRequest::new(id.clone(), &ws))
                    .block_task()
                    .await?;
                serde_json::to_value(r).unwrap()
            };
            let at_answer = updates.all().len();
            let stop = turn.await.expect("the prompt task")?.stop_reason;
            Ok(Seen {
                before,
                at_answer,
                answer,
                stop,
            })
        })
        .await
        .expect("the open session is reattached")
}

/// The answer says what the session is set to, and the turn in flight went on to its end.
fn assert_attached(seen: &Seen) {
    assert_eq!(
        seen.answer["modes"]["currentModeId"], "read-only",
        "{}",
        seen.answer
    );
    assert!(seen.answer["configOptions"].is_array(), "{}", seen.answer);
    assert_eq!(seen.stop, StopReason::EndTurn, "the turn in flight went on");
}

fn user_texts(updates: &[serde_json::Value]) -> Vec<String> {
    updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "user_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loading_the_open_session_mid_turn_replays_it_and_the_turn_goes_on() {
    let mut live = live();
    let seen = reattach_mid_turn(&mut live, true).await;
    let all = live.updates.json();
    assert_attached(&seen);
    let replayed = &all[seen.before..seen.at_answer];
    assert_eq!(
        user_texts(replayed),
        ["scenario:plain remember the heron", "scenario:slow wait for it"],
        "the load replays both prompts before its answer"
    );
    let text = |updates: &[serde_json::Value]| -> String {
        updates
            .iter()
            .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
            .filter_map(|u| u["content"]["text"].as_str())
            .collect()
    };
    let answer = "The slow command finished.";
    assert!(
        text(&all[seen.at_answer..]).contains(answer),
        "the turn's answer comes after the load's: {}",
        text(&all[seen.at_answer..])
    );
    assert_eq!(text(&all).matches(answer).count(), 1, "nothing is sent twice");
    assert!(
        !live.acplb.stderr().contains("already open"),
        "{}",
        live.acplb.stderr()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resuming_the_open_session_mid_turn_reattaches_it_without_history() {
    let mut live = live();
    let seen = reattach_mid_turn(&mut live, false).await;
    let all = live.updates.json();
    assert_attached(&seen);
    assert!(
        user_texts(&all[seen.before..seen.at_answer]).is_empty(),
        "a resume replays nothing"
    );
    assert!(
        live.updates.agent_text().contains("The slow command finished."),
        "{}",
        live.updates.agent_text()
    );
}
