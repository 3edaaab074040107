//! A form Codex asks during a `codex` tool call (here an MCP server's, from a stand-in
//! app-server: Codex 0.169 asks its own questions only in plan mode) reaches the MCP client as
//! its elicitation and the answer goes back to Codex; a client that cannot elicit has it
//! declined, and the call's result says so.

use std::path::Path;

use rmcp::ServiceExt as _;
use serde_json::{Value, json};

use super::client::{Elicit, Recorder, all_text, is_error, tool};
use crate::harness::Acplb;
use crate::hostile::stand_in::app_server;

/// What acplb answered the stand-in's form.
pub fn answered(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("form.json")).unwrap_or_default();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text:?}"))
}

/// A form whose only field is `table`, one of `a` and `b`.
const TABLE: &str =
    r#"{"type":"object","properties":{"table":{"type":"string","enum":["a","b"]}},"required":["table"]}"#;

async fn call_with(elicit: Option<Elicit>) -> (tempfile::TempDir, String, Vec<String>) {
    call_with_schema(elicit, TABLE).await
}

pub async fn call_with_schema(
    elicit: Option<Elicit>,
    schema: &str,
) -> (tempfile::TempDir, String, Vec<String>) {
    let form = json!({"id": 910, "method": "mcpServer/elicitation/request", "params": {
        "threadId": "th-1", "turnId": "tu-1", "serverName": "db", "mode": "form", "_meta": null,
        "message": "Which table?",
        "requestedSchema": serde_json::from_str::<Value>(schema).unwrap()}});
    call_asked(elicit, &form).await
}

/// A `codex` call whose turn sends `form` (a request with id 910) and records acplb's answer.
async fn call_asked(elicit: Option<Elicit>, form: &Value) -> (tempfile::TempDir, String, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let on_turn = format!(
        r#"echo "{{\"id\":$i,\"result\":{{\"turn\":{{\"id\":\"tu-1\"}}}}}}"
echo '{form}'
read -r answer; printf '%s\n' "$answer" > '{d}/form.json'
echo '{{"method":"turn/completed","params":{{"threadId":"th-1","turn":{{"id":"tu-1","status":"completed"}}}}}}'"#
    );
    let codex = app_server(dir.path(), &on_turn);
    let vars = vec![("ACPLB_CODEX".to_owned(), codex.display().to_string())];
    let mut acplb = Acplb::spawn(&["--transport", "app-server", "mcp", "codex"], &vars, dir.path());
    let recorder = Recorder {
        elicit,
        ..Recorder::default()
    };
    let stdin = acplb.child.stdin.take().unwrap();
    let stdout = acplb.child.stdout.take().unwrap();
    let mcp = recorder
        .clone()
        .serve((stdout, stdin))
        .await
        .expect("the MCP handshake");
    let result = tool(&mcp, "codex", json!({"prompt": "hello"})).await;
    assert!(!is_error(&result), "{result:?}\n{}", acplb.stderr());
    let asked = recorder.asked.lock().unwrap().clone();
    mcp.cancel().await.unwrap();
    (dir, all_text(&result), asked)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_codex_asks_is_the_mcp_clients_elicitation_and_its_answer_goes_back() {
    let (dir, _, asked) = call_with(Some(Elicit::FillTable)).await;
    assert_eq!(asked, ["db asks: Which table?"]);
    let form = answered(dir.path());
    assert_eq!(form["id"], 910);
    assert_eq!(form["result"]["action"], "accept", "{form}");
    assert_eq!(form["result"]["content"], json!({"table": "b"}), "{form}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_elicitation_a_form_is_declined_and_the_result_says_so() {
    let (dir, text, asked) = call_with(None).await;
    assert!(asked.is_empty());
    let form = answered(dir.path());
    assert_eq!(form["result"]["action"], "decline", "{form}");
    assert!(
        text.contains("declined a form (\"db asks: Which table?\")")
            && text.contains("no elicitation support"),
        "{text}"
    );
}

/// One of Codex's own questions (`request_user_input`, which Codex 0.169 asks in plan mode) goes
/// the same way: a form of one choice, and the choice back in the shape Codex reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_codex_asks_is_the_mcp_clients_elicitation_and_the_answer_goes_back() {
    let question = json!({"id": 910, "method": "item/tool/requestUserInput", "params": {
        "threadId": "th-1", "turnId": "tu-1", "itemId": "q1",
        "questions": [{"id": "a", "header": "Pick", "question": "Which one?", "isOther": false,
                       "options": [{"label": "x", "description": "the x"}, {"label": "y", "description": "the y"}]}]}});
    let (dir, _, asked) = call_asked(Some(Elicit::PickX), &question).await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    let form = answered(dir.path());
    assert_eq!(form["id"], 910);
    assert_eq!(
        form["result"],
        json!({"answers": {"a": {"answers": ["x"]}}}),
        "{form}"
    );
}
