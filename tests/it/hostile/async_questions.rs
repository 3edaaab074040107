//! Codex's async questions (ADR 0042) gone wrong: an answer that comes after the turn ended
//! (withdrawn, then answered anyway: the user is told it was not delivered), a declined or
//! dismissed form (the turn runs on), `session/cancel` while a question is open (the prompt
//! ends within a second and the form is withdrawn), a client without forms (the questions are
//! text, on both transports), and an app-server whose questions are malformed.

use std::time::{Duration, Instant};

use agent_client_protocol::v1::schema::{CancelNotification, StopReason};
use serde_json::json;

use super::questions::one_turn;
use crate::async_questions::{QUESTION, REPLY_TAG, ask_async, live, model_heard};
use crate::harness::{
    FormAnswer, Updates, eventually, open_session, open_session_with_forms, prompt, transport,
};

/// What the user is told of an answer that came too late.
const NOT_DELIVERED: &str = "Answer not sent: Codex finished before your answer arrived.";

/// Whether any update (a notice or an agent message) holds `text`.
fn told(updates: &Updates, text: &str) -> bool {
    updates.json().iter().any(|u| u.to_string().contains(text))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_after_the_turn_ended_is_not_delivered_and_the_user_is_told() {
    if transport() == "exec" {
        return;
    }
    let mut live = live(FormAnswer::Never);
    let ws = live.workspace();
    let updates = live.updates.clone();
    let watch = live.updates.clone();
    let forms = live.acplb.forms.clone();
    let (first, second) = live
        .acplb
        .client(&updates, async |cx| {
            let s = open_session_with_forms(&cx, &ws).await?;
            let first = prompt(&cx, &s.session_id, "scenario:ask_async_end pick a color").await?;
            // The turn ended with the form open: acplb withdrew it.
            assert!(
                eventually(Duration::from_secs(10), || forms.seen().len() == 1).await,
                "asked once"
            );
            assert!(
                eventually(Duration::from_secs(10), || forms.held_withdrawn() == [true]).await,
                "the open form is withdrawn when the turn ends"
            );
            // A client that answers anyway.
            assert_eq!(forms.release(&json!({"question_0": "LATE-ANSWER"})), 1);
            assert!(
                eventually(Duration::from_secs(10), || told(&watch, NOT_DELIVERED)).await,
                "the user is told the answer was not delivered"
            );
            let second = prompt(&cx, &s.session_id, "hello again").await?;
            Ok((first, second))
        })
        .await
        .unwrap();
    assert_eq!(first.stop_reason, StopReason::EndTurn);
    assert_eq!(second.stop_reason, StopReason::EndTurn, "the session goes on");
    assert!(!model_heard(&live.mock, "LATE-ANSWER"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_or_dismissed_form_leaves_the_turn_running() {
    if transport() == "exec" {
        return;
    }
    let mut live = live(FormAnswer::Decline);
    let ws = live.workspace();
    let updates = live.updates.clone();
    let forms = live.acplb.forms.clone();
    let stops = live
        .acplb
        .client(&updates, async |cx| {
            let s = open_session_with_forms(&cx, &ws).await?;
            let mut stops = Vec::new();
            for answer in [FormAnswer::Decline, FormAnswer::Cancel] {
                forms.answer(answer);
                std::fs::remove_file(ws.join("release")).ok();
                let running = ask_async(&cx, &s.session_id, &forms).await;
                std::fs::write(ws.join("release"), "").unwrap();
                stops.push(running.await.unwrap()?.stop_reason);
            }
            Ok(stops)
        })
        .await
        .unwrap();
    assert_eq!(stops, [StopReason::EndTurn, StopReason::EndTurn]);
    let text = live.updates.agent_text();
    assert_eq!(text.matches("Done after the questions").count(), 2, "{text}");
    assert!(!model_heard(&live.mock, ""), "nothing was steered in");
    assert!(!told(&live.updates, NOT_DELIVERED));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_cancel_while_a_question_is_open_ends_the_prompt_within_a_second() {
    if transport() == "exec" {
        return;
    }
    let mut live = live(FormAnswer::Never);
    let ws = live.workspace();
    let updates = live.updates.clone();
    let forms = live.acplb.forms.clone();
    let (stop, took) = live
        .acplb
        .client(&updates, async |cx| {
            let s = open_session_with_forms(&cx, &ws).await?;
            let running = ask_async(&cx, &s.session_id, &forms).await;
            let at = Instant::now();
            cx.send_notification(CancelNotification::new(s.session_id.clone()))?;
            let stop = running.await.unwrap()?.stop_reason;
            Ok((stop, at.elapsed()))
        })
        .await
        .unwrap();
    assert_eq!(stop, StopReason::Cancelled);
    assert!(
        took < Duration::from_secs(1),
        "cancelled within 1 s, took {took:?}"
    );
    assert!(
        eventually(Duration::from_secs(5), || live.acplb.forms.held_withdrawn()
            == [true])
        .await,
        "the open form is withdrawn"
    );
    assert!(!model_heard(&live.mock, ""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_forms_sees_the_questions_as_text() {
    let mut live = live(FormAnswer::Decline);
    let ws = live.workspace();
    let updates = live.updates.clone();
    let stop = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            prompt(&cx, &s.session_id, "scenario:ask_async_end pick a color").await
        })
        .await
        .unwrap();
    assert_eq!(stop.stop_reason, StopReason::EndTurn);
    let text = live.updates.agent_text();
    assert!(
        text.contains(QUESTION) && text.contains("- Red") && text.contains("Finished without waiting"),
        "{text}"
    );
    assert!(live.acplb.forms.seen().is_empty());
}

#[tokio::test]
async fn malformed_async_questions_from_the_server_never_hang_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    // Async messages whose questions are not a list, hold no readable question, or mix odd
    // entries with one good one (which alone becomes a form); then the turn ends.
    let message = |id: &str, questions: &str| {
        format!(
            r#"echo '{{"method":"item/completed","params":{{"threadId":"th-1","turnId":"tu-1","item":{{"type":"agentMessage","id":"{id}","text":"text of {id}","phase":"final_answer","delivery":"async","questions":{questions}}}}}}}'"#
        )
    };
    let on_turn = [
        r#"echo "{\"id\":$i,\"result\":{\"turn\":{\"id\":\"tu-1\"}}}""#.to_owned(),
        message("m1", r#""what?""#),
        message("m2", r#"[7,{"title":""},{"options":["a"]}]"#),
        message("m3", r#"[null,{"title":"Go?","options":[3,"yes",""]}]"#),
        r#"echo '{"method":"turn/completed","params":{"threadId":"th-1","turn":{"id":"tu-1","status":"completed"}}}'"#.to_owned(),
    ]
    .join("\n");
    let (acplb, updates) = one_turn(dir.path(), &on_turn, json!({})).await;
    let text = updates.agent_text();
    assert!(
        text.contains("text of m1") && text.contains("text of m3"),
        "{text}"
    );
    let forms = acplb.forms.seen();
    assert_eq!(
        forms.len(),
        1,
        "only the readable question became a form: {forms:?}"
    );
    let fields = &forms[0]["requestedSchema"]["properties"];
    assert_eq!(fields["question_0"]["title"], "Go?");
    assert_eq!(
        fields["question_0"]["oneOf"].as_array().map(Vec::len),
        Some(1),
        "{fields}"
    );
    assert!(!text.contains(REPLY_TAG));
}

#[tokio::test]
async fn an_answer_codex_refuses_to_steer_is_not_delivered_and_the_user_is_told() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    // One async question; the steer that carries its answer is refused (the turn ended
    // meanwhile, as Codex says), then the turn ends.
    let on_turn = format!(
        r#"echo "{{\"id\":$i,\"result\":{{\"turn\":{{\"id\":\"tu-1\"}}}}}}"
echo '{{"method":"item/completed","params":{{"threadId":"th-1","turnId":"tu-1","item":{{"type":"agentMessage","id":"m1","text":"Go?","delivery":"async","questions":[{{"title":"Go?","options":["yes"]}}]}}}}}}'
read -r steer; printf '%s\n' "$steer" > '{d}/steer.json'
s=$(printf '%s\n' "$steer" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
echo "{{\"id\":$s,\"error\":{{\"code\":-32600,\"message\":\"no active turn to steer\"}}}}"
echo '{{"method":"turn/completed","params":{{"threadId":"th-1","turn":{{"id":"tu-1","status":"completed"}}}}}}'"#
    );
    let (_acplb, updates) = one_turn(dir.path(), &on_turn, json!({"question_0": "yes"})).await;
    let steer: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("steer.json")).unwrap()).unwrap();
    assert_eq!(steer["method"], "turn/steer", "{steer}");
    let text = steer["params"]["input"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.starts_with(REPLY_TAG) && text.contains(r#""answer":"yes""#),
        "{steer}"
    );
    assert!(told(&updates, NOT_DELIVERED), "the user is told");
}
