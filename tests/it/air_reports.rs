//! AIR's agent file change report (ADR 0052), end to end with the real Codex and the mock model
//! on the transport of this run: a client that declared `agentFileChangeReport` and asks for a
//! report in a prompt's `_meta` gets one `session_info_update` with the files the turn's applied
//! edits changed, before the prompt's answer; a turn without edits reports none; a prompt that
//! asks for nothing gets nothing; a prompt steered into a running turn (app-server) gets its own. Refusals and failures are in `hostile/air_reports.rs`.

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, InitializeRequest, NewSessionRequest, PromptRequest, SessionId,
};
use serde_json::{Value, json};

use crate::air::air;
use crate::live::{Live, assert_end_turn, set_mode};

/// A prompt's `_meta` asking for the report `id`.
pub(crate) fn asking(id: &str) -> serde_json::Map<String, Value> {
    json!({"jetbrains": {"air": {"agentFileChangeReportRequest": {"version": 1, "requestId": id}}}})
        .as_object()
        .cloned()
        .unwrap()
}

/// `PromptRequest` of `text` with `meta`.
pub(crate) fn request(
    id: &SessionId,
    text: &str,
    meta: Option<serde_json::Map<String, Value>>,
) -> PromptRequest {
    let req = PromptRequest::new(id.clone(), vec![text.into()]);
    match meta {
        Some(m) => req.meta(m),
        None => req,
    }
}

/// The reports among `updates`, each with its position.
pub(crate) fn reports(updates: &[Value]) -> Vec<(usize, Value)> {
    updates
        .iter()
        .enumerate()
        .filter(|(_, u)| u["sessionUpdate"] == "session_info_update")
        .filter_map(|(i, u)| {
            let r = &u["_meta"]["jetbrains"]["air"]["agentFileChangeReport"];
            (!r.is_null()).then(|| (i, r.clone()))
        })
        .collect()
}

/// `initialize` with `client`, a session in `auto`.
pub(crate) async fn opened(
    cx: &agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>,
    ws: &std::path::Path,
    client: ClientCapabilities,
) -> Result<(Value, SessionId), agent_client_protocol::Error> {
    let init = cx
        .send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(client))
        .block_task()
        .await?;
    let s = cx.send_request(NewSessionRequest::new(ws)).block_task().await?;
    set_mode(cx, &s.session_id, "auto").await?;
    Ok((serde_json::to_value(init).unwrap(), s.session_id))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_turn_reports_its_files_before_the_answer_and_a_plain_turn_none() {
    let mut live = Live::start();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let (init, counts) = live
        .acplb
        .client(&updates, async |cx| {
            let (init, id) = opened(&cx, &ws, air(&["agentFileChangeReport"])).await?;
            let mut counts = Vec::new();
            for (text, meta) in [
                ("scenario:patch edit", Some(asking("edit-1"))),
                ("scenario:plain hello", Some(asking("plain-2"))),
                ("scenario:plain again", None),
            ] {
                let answer = cx.send_request(request(&id, text, meta)).block_task().await?;
                assert_end_turn(&answer.stop_reason);
                // Everything said before the answer has arrived with it.
                counts.push(updates.json().len());
            }
            Ok((init, counts))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let listed = init["_meta"]["jetbrains"]["air"]["capabilities"].clone();
    assert!(
        listed
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == "agentFileChangeReport"),
        "{listed}"
    );
    let all = updates.json();
    let reports = reports(&all);
    assert_eq!(reports.len(), 2, "one per prompt that asked: {reports:?}");
    let (at, edit) = &reports[0];
    assert!(*at < counts[0], "the edit's report came before its answer");
    assert_eq!(edit["requestId"], "edit-1");
    assert_eq!(edit["status"], "reported", "{edit}");
    assert_eq!(edit["version"], 1);
    // `scenario:patch` changes README.md and adds hello.txt.
    let mut paths: Vec<String> = serde_json::from_value(edit["paths"].clone()).unwrap();
    paths.sort();
    let at = |name: &str| ws.join(name).display().to_string();
    assert_eq!(paths, [at("README.md"), at("hello.txt")], "{edit}");
    assert_eq!(edit["declaredComplete"], false);
    assert_eq!(edit["truncated"], false);
    let (at, plain) = &reports[1];
    assert!(
        counts[0] <= *at && *at < counts[1],
        "the second report belongs to the second prompt"
    );
    assert_eq!(plain["requestId"], "plain-2");
    assert_eq!(plain["paths"], json!([]), "{plain}");
    assert_eq!(all.len(), counts[2], "nothing after the last answer");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_steered_into_the_turn_gets_its_own_report_before_the_answers() {
    if crate::harness::transport() == "exec" {
        // Only the app-server steers; on exec the second prompt is a turn of its own.
        return;
    }
    // With `appserver.rs`'s scenarios `as_steer` and `as_steered`.
    let mut live = crate::appserver::live();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let watch = live.updates.clone();
    let (first, second, count) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, id) = opened(&cx, &ws, air(&["agentFileChangeReport"])).await?;
            // As `appserver.rs`'s steering test: its command runs without asking.
            set_mode(&cx, &id, "full-access").await?;
            cx.send_request(
                agent_client_protocol::v1::schema::SetSessionConfigOptionRequest::new(
                    id.clone(),
                    "while_busy",
                    "steer",
                ),
            )
            .block_task()
            .await?;
            let first = cx
                .send_request(request(&id, "scenario:as_steer go", Some(asking("turn-1"))))
                .block_task();
            assert!(
                crate::harness::eventually(std::time::Duration::from_secs(60), || !watch
                    .of_kind("tool_call")
                    .is_empty())
                .await,
                "the first turn runs its command"
            );
            let second = cx
                .send_request(request(
                    &id,
                    "scenario:as_steered STEER-TOKEN",
                    Some(asking("steered-2")),
                ))
                .block_task()
                .await?;
            let first = first.await?;
            Ok((first.stop_reason, second.stop_reason, updates.json().len()))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_end_turn(&first);
    assert_end_turn(&second);
    let reports = reports(&updates.json());
    let ids: Vec<_> = reports.iter().map(|(_, r)| r["requestId"].clone()).collect();
    assert_eq!(ids, [json!("turn-1"), json!("steered-2")], "{reports:?}");
    for (at, report) in &reports {
        assert!(*at < count, "{report}");
        assert_eq!(report["status"], "reported", "{report}");
    }
}
