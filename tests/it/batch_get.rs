//! `_session/batch_get` (the TS peer's vendor method; ADR 0043) end to end on both transports:
//! the rows of the sessions named, in the order asked, archived ones included and marked,
//! unknown ids left out, titles as `session/list` shows them; nothing is loaded.

use agent_client_protocol::UntypedMessage;
use agent_client_protocol::v1::schema::{ArchiveSessionRequest, SetSessionTitleRequest};
use serde_json::{Value, json};

use crate::live::Live;
use crate::sessions::{initialize, one_turn_then_exit};

/// `_session/batch_get` for `ids`; its answer.
pub(crate) async fn batch_get(
    cx: &agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>,
    ids: Value,
) -> Result<Value, agent_client_protocol::Error> {
    let ask = UntypedMessage::new("_session/batch_get", json!({ "sessionIds": ids }))?;
    cx.send_request(ask).block_task().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_get_gives_the_rows_asked_for_in_order_archived_included() {
    let mut live = Live::start();
    let ws = live.workspace();
    let a = one_turn_then_exit(&mut live, "scenario:plain first").await;
    live.respawn();
    let b = one_turn_then_exit(&mut live, "scenario:plain second").await;
    live.respawn();
    let updates = live.updates.clone();
    let (a2, b2) = (a.clone(), b.clone());
    let answer = live
        .acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            cx.send_request(SetSessionTitleRequest::new(b2.clone(), "the second one"))
                .block_task()
                .await?;
            cx.send_request(ArchiveSessionRequest::new(a2.clone()))
                .block_task()
                .await?;
            batch_get(&cx, json!([b2.to_string(), "no-such-session", a2.to_string()])).await
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let rows = answer["sessions"].as_array().expect("sessions").clone();
    let ids: Vec<&str> = rows.iter().filter_map(|r| r["sessionId"].as_str()).collect();
    assert_eq!(ids, [b.to_string(), a.to_string()], "{answer}");
    assert_eq!(rows[0]["title"], "the second one", "{answer}");
    assert_eq!(rows[0]["cwd"], ws.to_string_lossy().as_ref(), "{answer}");
    assert!(rows[0].get("archived").is_none(), "{answer}");
    assert_eq!(rows[1]["archived"], true, "{answer}");
    assert!(rows[1]["updatedAt"].is_string(), "{answer}");
}
