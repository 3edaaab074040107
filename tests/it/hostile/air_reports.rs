//! AIR's file change report when things go wrong, end to end on the transport of this run: a
//! cancelled turn reports `unavailable` with the reason `cancelled` before its answer, a failed
//! one (the model answers HTTP 400) `providerError`; a request
//! that is not `{version: 1, requestId}` and a client that did not declare the capability get no
//! report at all (an edit that failed is left out of a report: unit tests in
//! `session/file_report.rs`).

use agent_client_protocol::v1::schema::{CancelNotification, ClientCapabilities, StopReason};
use serde_json::json;

use crate::air::air;
use crate::air_reports::{asking, opened, reports, request};
use crate::harness::until_sleeping;
use crate::live::{Live, assert_end_turn};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_or_failed_turn_reports_why_there_is_no_report() {
    let mut live = Live::start();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let (stop, count, after_failure) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, id) = opened(&cx, &ws, air(&["agentFileChangeReport"])).await?;
            let turn = cx
                .send_request(request(&id, "scenario:sleep wait", Some(asking("slow-1"))))
                .block_task();
            let canceller = async {
                until_sleeping(&updates).await;
                cx.send_notification(CancelNotification::new(id.clone())).unwrap();
            };
            let (answer, ()) = tokio::join!(turn, canceller);
            let stop = answer?.stop_reason;
            let count = updates.json().len();
            // The model refuses the request (HTTP 400): the turn fails.
            let failed = cx
                .send_request(request(&id, "scenario:http400 fail", Some(asking("bad-2"))))
                .block_task()
                .await;
            assert!(failed.is_err(), "{failed:?}");
            Ok((stop, count, updates.json().len()))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(stop, StopReason::Cancelled);
    let reports = reports(&updates.json());
    assert_eq!(reports.len(), 2, "{reports:?}");
    let (at, report) = &reports[0];
    assert!(*at < count, "before the answer");
    assert_eq!(
        report,
        &json!({"version": 1, "requestId": "slow-1", "status": "unavailable", "reason": "cancelled"})
    );
    assert!(
        count <= reports[1].0 && reports[1].0 < after_failure,
        "before the error answer"
    );
    assert_eq!(
        reports[1].1,
        json!({"version": 1, "requestId": "bad-2", "status": "unavailable", "reason": "providerError"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_request_or_an_undeclared_client_gets_no_report() {
    for (client, meta) in [
        (
            air(&["agentFileChangeReport"]),
            json!({"jetbrains": {"air": {"agentFileChangeReportRequest": {"version": 2, "requestId": "r"}}}}),
        ),
        (
            air(&["agentFileChangeReport"]),
            json!({"jetbrains": {"air": {"agentFileChangeReportRequest": {"version": 1, "requestId": "no spaces"}}}}),
        ),
        (air(&["diffPatch"]), serde_json::Value::Object(asking("r-1"))),
        (
            ClientCapabilities::new(),
            serde_json::Value::Object(asking("r-1")),
        ),
    ] {
        let mut live = Live::start();
        let (ws, updates) = (live.workspace(), live.updates.clone());
        live.acplb
            .client(&updates, async |cx| {
                let (_, id) = opened(&cx, &ws, client).await?;
                let meta = meta.as_object().cloned();
                let answer = cx
                    .send_request(request(&id, "scenario:patch edit", meta))
                    .block_task()
                    .await?;
                assert_end_turn(&answer.stop_reason);
                Ok(())
            })
            .await
            .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
        assert!(reports(&updates.json()).is_empty(), "{meta}");
        assert!(ws.join("hello.txt").exists(), "the turn itself ran: {meta}");
    }
}
