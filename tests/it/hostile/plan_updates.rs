//! A proposed plan as `plan_update`s (ADR 0053) for clients that declared the capability
//! wrongly: a `plan` that is not an object is no capability (the plan stays text and plan
//! entries), and AIR's `planContentDelta` without the extension's version gives whole updates,
//! never deltas the client would not put together; a session planned for a client with plan
//! updates and loaded by one without gets the plan as text.

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{ClientCapabilities, InitializeRequest, LoadSessionRequest};
use serde_json::json;

use crate::plan_mode::{PLAN, content_deltas, live, markdown_plans, plan_turn};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_capability_that_is_not_an_object_keeps_the_plan_as_text() {
    let mut live = live();
    plan_turn(&mut live, json!({"plan": true})).await;
    assert!(live.updates.of_kind("plan_update").is_empty());
    assert!(live.updates.agent_text().contains(PLAN));
    assert_eq!(live.updates.of_kind("plan").len(), 1, "the plan's steps");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_deltas_declared_without_airs_version_give_whole_updates() {
    let mut live = live();
    let air = json!({"jetbrains": {"air": {"capabilities": ["planContentDelta"]}}});
    plan_turn(&mut live, json!({"plan": {}, "_meta": air})).await;
    let all = live.updates.json();
    assert_eq!(content_deltas(&all), 0);
    let plans = markdown_plans(&all);
    assert_eq!(plans.len(), 1, "{plans:?}");
    assert_eq!(plans[0].1.trim_end(), PLAN);
}

/// A session planned by an AIR client with plan content deltas, loaded by one without plan
/// updates: the replay gives the plan as text, never an update the second client did not ask
/// for; by one with plan updates but no deltas, as whole updates; by one like the first, as it
/// was sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_load_by_a_client_without_plan_updates_gets_the_plan_as_text() {
    let mut live = live();
    let deltas = json!({"jetbrains": {"air": {"version": 1, "capabilities": ["planContentDelta"]}}});
    plan_turn(&mut live, json!({"plan": {}, "_meta": deltas})).await;
    assert_eq!(markdown_plans(&live.updates.json()).len(), 1);
    assert!(content_deltas(&live.updates.json()) > 0);
    let session = live.updates.all_with_sessions()[0].0.clone();
    for (caps, as_plan, with_deltas) in [
        (json!({}), false, false),
        (json!({"plan": {}}), true, false),
        (json!({"plan": {}, "_meta": deltas}), true, true),
    ] {
        live.acplb.wait_exit(std::time::Duration::from_secs(10)).await;
        live.respawn();
        let (ws, updates) = (live.workspace(), live.updates.clone());
        let caps: ClientCapabilities = serde_json::from_value(caps).unwrap();
        live.acplb
            .client(&updates, async |cx| {
                cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
                    .block_task()
                    .await?;
                cx.send_request(LoadSessionRequest::new(session.clone(), &ws))
                    .block_task()
                    .await
            })
            .await
            .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
        let all = live.updates.json();
        let plans = markdown_plans(&all);
        let text = live.updates.agent_text();
        assert_eq!(
            content_deltas(&all) > 0,
            with_deltas,
            "deltas {with_deltas}: {all:?}"
        );
        if as_plan {
            assert_eq!(plans.len(), 1, "{all:?}");
            assert_eq!(plans[0].1.trim_end(), PLAN);
            assert!(!text.contains(PLAN), "{text}");
        } else {
            assert!(plans.is_empty(), "{all:?}");
            assert!(text.contains(PLAN), "{text}");
            assert!(text.contains("I read the workspace."), "{text}");
        }
    }
}
