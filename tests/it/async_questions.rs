//! Codex's async questions (`request_user_input_async`, ADR 0042), end to end with the real
//! Codex: on app-server they reach an editor that shows forms while the turn still runs, the
//! turn goes on while the form is open, and the answer is steered into the turn, where the
//! model reads it as Codex's tagged reply. On exec they are the agent message's text.

use std::time::Duration;

use acplb_playback::mock_model::{MockConfig, MockModelHandle};
use agent_client_protocol::Agent;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{PromptRequest, PromptResponse, SessionId, StopReason};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::harness::{FormAnswer, Forms, eventually, open_session_with_forms, transport};
use crate::live::Live;

/// The title of the scenarios' first question.
pub const QUESTION: &str = "Which color should the button be?";
/// The tag around an answer steered into the turn.
pub const REPLY_TAG: &str = "<send_user_message_question_reply>";
/// What acplb logs once Codex took a steered answer.
const STEERED: &str = "steered the answer to an async question into the turn";

/// A live setup on this run's transport whose model is offered `request_user_input_async`:
/// the pinned Codex's own `gpt-5.5` catalog entry with the tool in
/// `experimental_supported_tools`, read from `model_catalog_json` when Codex starts.
/// Its client answers forms with `answer`.
pub fn live(answer: FormAnswer) -> Live {
    let live = Live::start_with(MockConfig::default(), &["--transport", &transport()], &[]);
    live.acplb.forms.answer(answer);
    let mut entry = crate::models::template(&live);
    entry["experimental_supported_tools"] = json!(["request_user_input_async"]);
    let catalog = live.env.root().join("catalog.json");
    std::fs::write(&catalog, json!({ "models": [entry] }).to_string()).unwrap();
    let config = live.env.home().join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    let setting = format!("model_catalog_json = {}\n", json!(catalog.display().to_string()));
    std::fs::write(&config, format!("{setting}{text}")).unwrap();
    live
}

/// Sends the `ask_async` scenario to session `id` (the prompt runs as a task) and waits until
/// the form of its questions reaches the client.
pub async fn ask_async(
    cx: &ConnectionTo<Agent>,
    id: &SessionId,
    forms: &Forms,
) -> JoinHandle<Result<PromptResponse, agent_client_protocol::Error>> {
    let asked = forms.seen().len();
    let running = tokio::spawn(
        cx.send_request(PromptRequest::new(
            id.clone(),
            vec!["scenario:ask_async pick a color".into()],
        ))
        .block_task(),
    );
    assert!(
        eventually(Duration::from_secs(60), || forms.seen().len() > asked).await,
        "the questions reach the editor"
    );
    running
}

/// Whether the model was sent the tagged reply holding `answer`, in a user message.
pub fn model_heard(mock: &MockModelHandle, answer: &str) -> bool {
    mock.requests().iter().any(|r| {
        r.input().iter().any(|i| {
            i["role"] == "user" && {
                let text = i["content"].to_string();
                text.contains(REPLY_TAG) && text.contains(answer)
            }
        })
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_reaches_the_editor_while_the_turn_runs_and_the_answer_reaches_the_model() {
    if transport() == "exec" {
        return exec_shows_the_questions_as_text().await;
    }
    let mut live = live(FormAnswer::Never);
    let ws = live.workspace();
    let updates = live.updates.clone();
    let watch = live.updates.clone();
    let forms = live.acplb.forms.clone();
    let stderr = live.acplb.stderr_reader();
    let stop = live
        .acplb
        .client(&updates, async |cx| {
            let s = open_session_with_forms(&cx, &ws).await?;
            let running = ask_async(&cx, &s.session_id, &forms).await;
            // The form is open and unanswered, and the turn goes on: its next command runs.
            assert!(
                eventually(Duration::from_secs(60), || !watch.of_kind("tool_call").is_empty()).await,
                "the turn runs on while the form is open"
            );
            assert!(!running.is_finished(), "the prompt is still running");
            assert_eq!(
                forms.release(&json!({"question_0": "Red", "question_1": "ASYNC-NOTE-7"})),
                1
            );
            assert!(
                eventually(Duration::from_secs(30), || stderr().contains(STEERED)).await,
                "the answer is steered in: {}",
                stderr()
            );
            std::fs::write(ws.join("release"), "").unwrap();
            running.await.unwrap()
        })
        .await
        .unwrap();
    assert_eq!(stop.stop_reason, StopReason::EndTurn);
    let form = &live.acplb.forms.seen()[0];
    let message = form["message"].as_str().unwrap();
    assert!(message.contains("keeps working"), "{message}");
    let fields = &form["requestedSchema"]["properties"];
    assert_eq!(fields["question_0"]["title"], QUESTION, "{form}");
    assert_eq!(fields["question_0"]["oneOf"][0]["const"], "Blue", "{form}");
    assert_eq!(fields["question_1"]["type"], "string", "{form}");
    assert!(
        model_heard(&live.mock, "ASYNC-NOTE-7"),
        "the model got the answer"
    );
    assert!(model_heard(&live.mock, r#"\"answer\":\"Red\""#), "both answers");
    let text = live.updates.agent_text();
    assert!(
        text.contains(QUESTION) && text.contains("Done after the questions"),
        "{text}"
    );
}

/// On exec there is no form: the questions are the agent message's text, and the turn ends.
async fn exec_shows_the_questions_as_text() {
    let mut live = live(FormAnswer::Accept(json!({"question_0": "Red"})));
    let ws = live.workspace();
    let updates = live.updates.clone();
    let stop = live
        .acplb
        .client(&updates, async |cx| {
            let s = open_session_with_forms(&cx, &ws).await?;
            crate::harness::prompt(&cx, &s.session_id, "scenario:ask_async_end pick a color").await
        })
        .await
        .unwrap();
    assert_eq!(stop.stop_reason, StopReason::EndTurn);
    let text = live.updates.agent_text();
    assert!(text.contains(QUESTION) && text.contains("- Blue"), "{text}");
    assert!(live.acplb.forms.seen().is_empty(), "exec asks no form");
    let seen: Vec<Value> = live.mock.requests().iter().map(|r| r.body.clone()).collect();
    assert!(
        seen.iter().all(|b| !b.to_string().contains(REPLY_TAG)),
        "nothing was steered"
    );
}
