//! Questions put to the editor as forms, faulty on either side: a form answer that fits none of
//! the form's fields, a client that errs on the form, one that never answers and then cancels
//! the prompt, and an app-server whose `item/tool/requestUserInput` is malformed. Codex always
//! gets an answer and the turn always ends.

use std::path::Path;
use std::time::Duration;

use agent_client_protocol::v1::schema::StopReason;
use serde_json::json;

use super::stand_in::{app_server, spawn_app_server};
use crate::harness::{Acplb, FormAnswer, Updates, open_session_with_forms, prompt};
use crate::plan_mode::{ask, live, question_output};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_answer_that_fits_no_field_is_read_leniently() {
    let mut live = live();
    // An unknown field, and a number where the form asked for one of two texts.
    let answer = FormAnswer::Accept(json!({"nope": "x", "color": 5}));
    let (stop, _) = ask(&mut live, answer, false).await;
    assert_eq!(stop, StopReason::EndTurn);
    let output = question_output(&live.mock).expect("the model got an answer");
    assert!(
        output.contains(r#"{\"color\":{\"answers\":[\"5\"]}}"#),
        "{output}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_errs_on_the_form_still_gets_its_turn_finished() {
    let mut live = live();
    let (stop, _) = ask(&mut live, FormAnswer::Error, false).await;
    assert_eq!(stop, StopReason::EndTurn);
    let output = question_output(&live.mock).expect("the model got an answer");
    assert!(output.contains(r#"\"answers\":[]"#), "{output}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_answers_is_cancelled_within_a_second() {
    let mut live = live();
    let (stop, took) = ask(&mut live, FormAnswer::Never, true).await;
    assert_eq!(stop, StopReason::Cancelled);
    assert!(
        took < Duration::from_secs(1),
        "cancelled within 1 s, took {took:?}"
    );
    assert!(!live.updates.agent_text().contains("You answered:"));
    assert_eq!(live.acplb.forms.seen().len(), 1);
}

/// What the stand-in recorded in `dir/<name>`, as JSON.
fn recorded(dir: &Path, name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}: {text:?}"))
}

/// One prompt to acplb on a stand-in app-server that runs `on_turn`, from a client that shows
/// forms and fills them in with `content`; the turn must end.
pub(super) async fn one_turn(dir: &Path, on_turn: &str, content: serde_json::Value) -> (Acplb, Updates) {
    let codex = app_server(dir, on_turn);
    let mut acplb = spawn_app_server(dir, &codex, &[]);
    acplb.forms.answer(FormAnswer::Accept(content));
    let cwd = dir.to_owned();
    let updates = Updates::default();
    let stop = acplb
        .client(&updates, async |cx| {
            let s = open_session_with_forms(&cx, &cwd).await?;
            prompt(&cx, &s.session_id, "hello").await
        })
        .await
        .unwrap();
    assert_eq!(stop.stop_reason, StopReason::EndTurn);
    (acplb, updates)
}

#[tokio::test]
async fn malformed_questions_from_the_server_are_answered_and_the_turn_ends() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    // Questions without ids (no form can be made: answered at once and shown), then options
    // of odd shapes beside a good one (a form of what can be read).
    let on_turn = format!(
        r#"echo "{{\"id\":$i,\"result\":{{\"turn\":{{\"id\":\"tu-1\"}}}}}}"
echo '{{"id":900,"method":"item/tool/requestUserInput","params":{{"threadId":"th-1","turnId":"tu-1","itemId":"q1","questions":[{{"question":7}},{{"id":"","options":"x"}}]}}}}'
read -r answer; printf '%s\n' "$answer" > '{d}/first.json'
echo '{{"id":901,"method":"item/tool/requestUserInput","params":{{"threadId":"th-1","turnId":"tu-1","itemId":"q2","questions":[{{"id":"a","question":"Pick","isOther":"yes","options":[{{"label":"x"}},{{"nolabel":1}},5]}}]}}}}'
read -r answer; printf '%s\n' "$answer" > '{d}/second.json'
echo '{{"method":"item/agentMessage/delta","params":{{"threadId":"th-1","turnId":"tu-1","itemId":"m1","delta":"still here"}}}}'
echo '{{"method":"turn/completed","params":{{"threadId":"th-1","turn":{{"id":"tu-1","status":"completed"}}}}}}'"#
    );
    let (acplb, updates) = one_turn(dir.path(), &on_turn, json!({"a": "x"})).await;
    let text = updates.agent_text();
    assert!(
        text.contains("Codex asked a question") && text.contains("still here"),
        "{text}"
    );
    let (first, second) = (
        recorded(dir.path(), "first.json"),
        recorded(dir.path(), "second.json"),
    );
    assert_eq!(
        (&first["id"], &first["result"]),
        (&json!(900), &json!({"answers": {}}))
    );
    assert_eq!(
        (&second["id"], &second["result"]),
        (&json!(901), &json!({"answers": {"a": {"answers": ["x"]}}}))
    );
    let forms = acplb.forms.seen();
    assert_eq!(
        forms.len(),
        1,
        "only the readable question became a form: {forms:?}"
    );
    let field = &forms[0]["requestedSchema"]["properties"]["a"];
    assert_eq!(field["oneOf"].as_array().map(Vec::len), Some(1), "{field}");
}

#[tokio::test]
async fn an_mcp_servers_form_reaches_the_editor_and_other_modes_are_declined() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    // A form (shown, answered), then a URL elicitation and a form of no readable field (both
    // declined without asking the editor).
    let on_turn = format!(
        r#"echo "{{\"id\":$i,\"result\":{{\"turn\":{{\"id\":\"tu-1\"}}}}}}"
echo '{{"id":910,"method":"mcpServer/elicitation/request","params":{{"threadId":"th-1","turnId":"tu-1","serverName":"db","mode":"form","_meta":null,"message":"Which table?","requestedSchema":{{"type":"object","properties":{{"table":{{"type":"string","enum":["a","b"]}}}},"required":["table"]}}}}}}'
read -r answer; printf '%s\n' "$answer" > '{d}/form.json'
echo '{{"id":911,"method":"mcpServer/elicitation/request","params":{{"threadId":"th-1","turnId":"tu-1","serverName":"db","mode":"url","_meta":null,"message":"Log in","url":"https://example.invalid","elicitationId":"e1"}}}}'
read -r answer; printf '%s\n' "$answer" > '{d}/url.json'
echo '{{"id":912,"method":"mcpServer/elicitation/request","params":{{"threadId":"th-1","turnId":"tu-1","serverName":"db","mode":"form","_meta":null,"message":"x","requestedSchema":"not a schema"}}}}'
read -r answer; printf '%s\n' "$answer" > '{d}/bad.json'
echo '{{"method":"turn/completed","params":{{"threadId":"th-1","turn":{{"id":"tu-1","status":"completed"}}}}}}'"#
    );
    let (acplb, _) = one_turn(dir.path(), &on_turn, json!({"table": "b"})).await;
    let forms = acplb.forms.seen();
    assert_eq!(forms.len(), 1, "{forms:?}");
    assert_eq!(forms[0]["message"], "db asks: Which table?");
    assert_eq!(
        forms[0]["requestedSchema"]["properties"]["table"]["enum"],
        json!(["a", "b"])
    );
    let form = recorded(dir.path(), "form.json");
    assert_eq!(
        (&form["id"], &form["result"]),
        (
            &json!(910),
            &json!({"action": "accept", "content": {"table": "b"}, "_meta": null})
        )
    );
    for (name, id) in [("url.json", 911), ("bad.json", 912)] {
        let declined = recorded(dir.path(), name);
        assert_eq!(
            (&declined["id"], &declined["result"]["action"]),
            (&json!(id), &json!("decline"))
        );
    }
}
