//! Plan mode and Codex's questions, end to end with the real Codex on app-server: plan mode is
//! offered and chosen, its proposed plan arrives as a `plan` update, an edit is not made in it
//! and is after one mode switch; a question (`request_user_input`, which Codex offers in plan
//! mode) becomes a form the answer of which reaches the model, and a declined, dismissed or
//! unanswerable one never holds the turn up. On exec, plan mode is refused with a reason.

use std::time::{Duration, Instant};

use acplb_playback::mock_model::{MockConfig, MockModelHandle};
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, InitializeRequest, NewSessionRequest, PromptRequest,
    SetSessionConfigOptionRequest, SetSessionModeRequest, StopReason,
};
use serde_json::json;

use crate::harness::{FormAnswer, eventually, open_session, open_session_with_forms, prompt};
use crate::live::{Live, set_mode};

pub(crate) fn live() -> Live {
    Live::start_with(MockConfig::default(), &["--transport", "app-server"], &[])
}

/// The output Codex sent back for the model's `request_user_input` call, as the model saw it.
pub fn question_output(mock: &MockModelHandle) -> Option<String> {
    mock.requests().iter().find_map(|r| {
        let call = r
            .input()
            .iter()
            .find(|i| i["type"] == "function_call" && i["name"] == "request_user_input")?;
        r.input()
            .iter()
            .find(|i| i["type"] == "function_call_output" && i["call_id"] == call["call_id"])
            .map(|o| o["output"].to_string())
    })
}

/// The collaboration mode Codex last told the model it is in (the first line of the last
/// `<collaboration_mode>` developer text of the last request: `# Plan Mode …`, `# Collaboration
/// Mode: Default`).
fn told_mode(mock: &MockModelHandle) -> String {
    let requests = mock.requests();
    let last = requests.last().expect("a model request");
    last.input()
        .iter()
        .filter(|i| i["role"] == "developer")
        .filter_map(|i| i["content"].as_array())
        .flatten()
        .filter_map(|c| c["text"].as_str()?.strip_prefix("<collaboration_mode>"))
        .filter_map(|t| t.lines().next())
        .next_back()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_mode_plans_edits_nothing_and_one_switch_carries_the_plan_out() {
    let mut live = live();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let mock = &live.mock;
    let planned = ws.join("planned.txt");
    let (modes, options, stops) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            set_mode(&cx, &s.session_id, "plan").await?;
            let mut stops = vec![prompt(&cx, &s.session_id, "scenario:propose_plan make a plan").await?];
            let told = told_mode(mock);
            assert!(told.contains("Plan Mode"), "Codex is in plan mode: {told}");
            stops.push(prompt(&cx, &s.session_id, "scenario:plan_patch add the file").await?);
            assert!(!planned.exists(), "nothing is edited in plan mode");
            set_mode(&cx, &s.session_id, "auto").await?;
            stops.push(prompt(&cx, &s.session_id, "scenario:plan_patch carry it out").await?);
            let told = told_mode(mock);
            assert!(told.contains("Default"), "back in Codex's default mode: {told}");
            Ok((s.modes, s.config_options, stops))
        })
        .await
        .unwrap();
    for stop in &stops {
        assert_eq!(stop.stop_reason, StopReason::EndTurn);
    }
    let modes = serde_json::to_value(modes).unwrap();
    let ids: Vec<&str> = modes["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert_eq!(ids, ["read-only", "auto", "full-access", "plan"]);
    let options = serde_json::to_value(options).unwrap();
    let mode_values = &options.as_array().unwrap()[0]["options"];
    assert!(
        mode_values
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["value"] == "plan"),
        "the mode option offers plan: {mode_values}"
    );
    let plans = live.updates.of_kind("plan");
    let entries: Vec<&str> = plans
        .first()
        .and_then(|p| p["entries"].as_array())
        .into_iter()
        .flatten()
        .filter_map(|e| e["content"].as_str())
        .collect();
    assert_eq!(
        entries,
        [
            "Read README.md",
            "Add planned.txt with a greeting",
            "Run the tests"
        ],
        "{plans:?}"
    );
    assert!(
        live.updates.agent_text().contains(PLAN),
        "a client without plan updates reads the plan as text"
    );
    assert!(live.updates.of_kind("plan_update").is_empty());
    assert!(
        live.acplb.permissions.seen().is_empty(),
        "plan mode never asks to edit"
    );
    assert_eq!(
        std::fs::read_to_string(&planned).unwrap_or_default(),
        "carried out\n",
        "the edit happens after the switch"
    );
}

/// The markdown of `scenario:propose_plan`'s proposed plan.
pub(crate) const PLAN: &str =
    "# Add a greeting\n\n1. Read README.md\n2. Add planned.txt with a greeting\n3. Run the tests";

/// The markdown plans the `plan_update`s among `updates` leave the client with, by plan id:
/// an update's `content` replaces the plan, an AIR `contentDelta` appends to it.
pub(crate) fn markdown_plans(updates: &[serde_json::Value]) -> Vec<(String, String)> {
    let mut plans: Vec<(String, String)> = Vec::new();
    for u in updates.iter().filter(|u| u["sessionUpdate"] == "plan_update") {
        assert_eq!(u["plan"]["type"], "markdown", "{u}");
        let id = u["plan"]["planId"].as_str().unwrap().to_owned();
        let content = u["plan"]["content"].as_str().unwrap();
        let delta = u["_meta"]["jetbrains"]["air"]["contentDelta"].as_str();
        let plan = if let Some(p) = plans.iter_mut().find(|(i, _)| *i == id) {
            p
        } else {
            plans.push((id, String::new()));
            plans.last_mut().unwrap()
        };
        match delta {
            Some(delta) => {
                assert!(content.is_empty(), "{u}");
                assert!(!plan.1.is_empty(), "a delta follows a whole plan: {u}");
                plan.1.push_str(delta);
            }
            None => content.clone_into(&mut plan.1),
        }
    }
    plans
}

/// One `scenario:propose_plan` turn in plan mode of a client that advertised `client` (the
/// `clientCapabilities` JSON); the `initialize` answer.
pub(crate) async fn plan_turn(live: &mut Live, client: serde_json::Value) -> serde_json::Value {
    let ws = live.workspace();
    let updates = live.updates.clone();
    let client: ClientCapabilities = serde_json::from_value(client).unwrap();
    live.acplb
        .client(&updates, async |cx| {
            let init = cx
                .send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(client))
                .block_task()
                .await?;
            let s = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
            set_mode(&cx, &s.session_id, "plan").await?;
            let stop = prompt(&cx, &s.session_id, "scenario:propose_plan make a plan").await?;
            assert_eq!(stop.stop_reason, StopReason::EndTurn);
            Ok(serde_json::to_value(init).unwrap())
        })
        .await
        .unwrap()
}

/// How many updates carry an AIR `contentDelta`.
pub(crate) fn content_deltas(updates: &[serde_json::Value]) -> usize {
    updates
        .iter()
        .filter(|u| !u["_meta"]["jetbrains"]["air"]["contentDelta"].is_null())
        .count()
}

/// A client that advertised `clientCapabilities.plan` gets the proposed plan as one markdown
/// `plan_update` stream (ADR 0053), not as text; with AIR's `planContentDelta`, as the first
/// whole and then the new text alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_takes_plan_updates_gets_the_proposed_plan_as_markdown() {
    for air in [false, true] {
        let mut live = live();
        let mut client = json!({"plan": {}});
        if air {
            client["_meta"] =
                json!({"jetbrains": {"air": {"version": 1, "capabilities": ["planContentDelta"]}}});
        }
        let init = plan_turn(&mut live, client).await;
        let all = live.updates.json();
        let plans = markdown_plans(&all);
        assert_eq!(plans.len(), 1, "one plan, air {air}: {plans:?}");
        assert_eq!(plans[0].1.trim_end(), PLAN, "air {air}");
        let deltas = content_deltas(&all);
        assert_eq!(deltas > 0, air, "only a delta client gets deltas ({deltas})");
        let text = live.updates.agent_text();
        assert!(text.contains("I read the workspace."), "{text}");
        assert!(
            !text.contains("Add planned.txt"),
            "the plan is not text too: {text}"
        );
        assert!(live.updates.of_kind("plan").is_empty(), "nor plan entries");
        let listed = init["_meta"]["jetbrains"]["air"]["capabilities"]
            .as_array()
            .cloned();
        assert_eq!(
            listed.is_some_and(|l| l.contains(&json!("planContentDelta"))),
            air,
            "listed for an AIR client: {init}"
        );
    }
}

/// Plan mode, one question asked (`scenario:ask`) of a client that declared forms and answers
/// `answer`; the prompt's stop reason and how long the prompt took after `cancel` (when set).
pub async fn ask(live: &mut Live, answer: FormAnswer, cancel: bool) -> (StopReason, Duration) {
    live.acplb.forms.answer(answer);
    let ws = live.workspace();
    let updates = live.updates.clone();
    let forms = live.acplb.forms.clone();
    live.acplb
        .client(&updates, async |cx| {
            let s = open_session_with_forms(&cx, &ws).await?;
            set_mode(&cx, &s.session_id, "plan").await?;
            let request = cx.send_request(PromptRequest::new(
                s.session_id.clone(),
                vec!["scenario:ask which color".into()],
            ));
            let mut at = Instant::now();
            if cancel {
                assert!(
                    eventually(Duration::from_secs(60), || !forms.seen().is_empty()).await,
                    "asked"
                );
                at = Instant::now();
                cx.send_notification(CancelNotification::new(s.session_id.clone()))?;
            }
            let stop = request.block_task().await?;
            Ok((stop.stop_reason, at.elapsed()))
        })
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answered_question_reaches_the_model() {
    let mut live = live();
    let (stop, _) = ask(&mut live, FormAnswer::Accept(json!({"color": "Red"})), false).await;
    assert_eq!(stop, StopReason::EndTurn);
    let seen = live.acplb.forms.seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0]["mode"], "form");
    assert_eq!(
        seen[0]["message"],
        "Codex asks: Which color should the button be?"
    );
    let color = &seen[0]["requestedSchema"]["properties"]["color"];
    assert_eq!(color["oneOf"][1]["const"], "Red", "{color}");
    assert_eq!(color["title"], "Color");
    assert!(seen[0]["sessionId"].is_string());
    let output = question_output(&live.mock).expect("the model got an answer");
    assert!(output.contains(r#"\"answers\":[\"Red\"]"#), "{output}");
    assert!(live.updates.agent_text().contains("You answered:"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_question_goes_on_without_an_answer() {
    let mut live = live();
    let (stop, _) = ask(&mut live, FormAnswer::Decline, false).await;
    assert_eq!(stop, StopReason::EndTurn);
    let output = question_output(&live.mock).expect("the model got an answer");
    assert!(output.contains(r#"\"answers\":[]"#), "{output}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dismissed_question_stops_the_turn() {
    let mut live = live();
    let (stop, _) = ask(&mut live, FormAnswer::Cancel, false).await;
    assert_eq!(stop, StopReason::Cancelled);
    assert_eq!(live.acplb.forms.seen().len(), 1);
    assert!(
        !live.updates.agent_text().contains("You answered:"),
        "the model was not asked again"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_forms_sees_the_question_and_the_turn_ends() {
    let mut live = live();
    let stop = live
        .one_text_turn("plan", "scenario:ask which color")
        .await
        .unwrap();
    assert_eq!(stop.stop_reason, StopReason::EndTurn);
    assert!(live.acplb.forms.seen().is_empty());
    let text = live.updates.agent_text();
    assert!(
        text.contains("Codex asked a question that acplb cannot put to you")
            && text.contains("Which color should the button be?"),
        "{text}"
    );
    let output = question_output(&live.mock).expect("the model got an answer");
    assert!(output.contains(r#"\"answers\":[]"#), "{output}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_offers_no_plan_mode_and_says_why() {
    let mut live = Live::start_with(MockConfig::default(), &["--transport", "exec"], &[]);
    let ws = live.workspace();
    let updates = live.updates.clone();
    let (modes, by_mode, by_option) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let by_mode = cx
                .send_request(SetSessionModeRequest::new(s.session_id.clone(), "plan"))
                .block_task()
                .await
                .map(|_| ());
            let by_option = cx
                .send_request(SetSessionConfigOptionRequest::new(
                    s.session_id.clone(),
                    "mode",
                    "plan",
                ))
                .block_task()
                .await
                .map(|_| ());
            Ok((s.modes, by_mode, by_option))
        })
        .await
        .unwrap();
    let modes = serde_json::to_value(modes).unwrap();
    assert!(
        !modes["availableModes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["id"] == "plan"),
        "{modes}"
    );
    for refused in [by_mode, by_option] {
        let e = refused.expect_err("plan mode is refused on exec");
        assert_eq!(i32::from(e.code), -32602, "invalid params");
        assert!(
            e.message.contains("app-server transport") && e.message.contains("plan"),
            "{}",
            e.message
        );
    }
}
