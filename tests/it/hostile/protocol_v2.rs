//! Hostile cases for the ACP v2 face (ADR 0048): requests v2 does not have or acplb refuses,
//! each answered with the reason; a cancel mid-command ends the turn `cancelled`; a v2 client
//! that disappears mid-turn leaves no Codex behind.

use std::time::Duration;

use agent_client_protocol::v2::schema::CancelSessionNotification;
use serde_json::json;

use crate::harness::eventually;
use crate::live::Live;
use crate::protocol_v2::{Seen, call, initialize, open, send_prompt, v2_client};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_v2_does_not_have_or_acplb_refuses_are_answered_with_the_reason() {
    let mut live = Live::start();
    let ws = live.workspace();
    let seen = Seen::default();
    let answers = v2_client(&mut live.acplb, &seen, async |cx| {
        initialize(&cx).await?;
        let id = open(&cx, &ws, "read-only").await?;
        let text = |t: &str| json!([{"type": "text", "text": t}]);
        let asks = [
            (
                "session/prompt",
                json!({"sessionId": "no-such-session", "prompt": text("hi")}),
            ),
            ("session/prompt", json!({"sessionId": id, "prompt": []})),
            (
                "session/load",
                json!({"sessionId": id, "cwd": ws, "mcpServers": []}),
            ),
            ("session/set_mode", json!({"sessionId": id, "modeId": "auto"})),
            ("authenticate", json!({"methodId": "api-key"})),
            ("no/such_method", json!({})),
            ("tool_call/cancel", json!({"sessionId": id, "toolCallId": "c"})),
            (
                "session/resume",
                json!({"sessionId": id, "cwd": ws, "replayFrom": {"type": "message", "messageId": "m"}}),
            ),
            (
                "session/set_config_option",
                json!({"sessionId": id, "configId": "mode", "type": "boolean", "value": "auto"}),
            ),
            (
                "session/set_config_option",
                json!({"sessionId": id, "configId": "mode", "value": "auto"}),
            ),
        ];
        let mut answers = Vec::new();
        for (method, params) in asks {
            answers.push((method, call(&cx, method, params).await));
        }
        // The session still works after all of it.
        call(
            &cx,
            "session/prompt",
            json!({"sessionId": id, "prompt": text("scenario:plain still here?")}),
        )
        .await?;
        seen.idle().await;
        Ok(answers)
    })
    .await
    .unwrap();
    let expect = [
        (-32602, "no-such-session"),
        (-32602, "non-empty `prompt`"),
        (-32601, "session/load"),
        (-32601, "session/set_mode"),
        (-32601, "authenticate"),
        (-32601, "no/such_method"),
        (-32602, "session/cancel stops the turn"),
        (-32602, "from its start only"),
        (-32602, "boolean"),
        (-32602, "`type`"),
    ];
    for ((method, answer), (code, says)) in answers.iter().zip(expect) {
        let Err(e) = answer else {
            panic!("{method} was not refused: {answer:?}")
        };
        assert_eq!(i32::from(e.code), code, "{method}: {e:?}");
        assert!(
            e.message.contains(says),
            "{method}: `{}` does not say `{says}`",
            e.message
        );
    }
    seen.assert_all_v2();
    assert_eq!(
        seen.states(),
        ["running", "idle"],
        "a refused prompt starts no turn"
    );
    assert_eq!(seen.idle().await["stopReason"], "end_turn");
}

/// Waits until `scenario:sleep`'s `sleep 30` shows (panics after 30 s).
async fn until_sleeping(seen: &Seen) {
    let sleeping = || {
        seen.of_kind("tool_call_update")
            .iter()
            .any(|c| c["title"] == "sleep 30")
    };
    assert!(
        eventually(Duration::from_secs(30), sleeping).await,
        "{:?}",
        seen.updates()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_mid_command_ends_the_turn_cancelled_and_the_session_goes_on() {
    let mut live = Live::start();
    let ws = live.workspace();
    let seen = Seen::default();
    let (cancelled, next) = v2_client(&mut live.acplb, &seen, async |cx| {
        initialize(&cx).await?;
        let id = open(&cx, &ws, "full-access").await?;
        send_prompt(&cx, &id, "scenario:sleep wait").await?;
        until_sleeping(&seen).await;
        cx.send_notification(CancelSessionNotification::new(id.clone()))?;
        let cancelled = seen.idle().await;
        seen.updates.lock().unwrap().clear();
        send_prompt(&cx, &id, "scenario:plain again").await?;
        Ok((cancelled, seen.idle().await))
    })
    .await
    .unwrap();
    assert_eq!(cancelled["stopReason"], "cancelled", "{cancelled}");
    assert_eq!(next["stopReason"], "end_turn", "{next}");
    seen.assert_all_v2();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v2_client_gone_mid_turn_leaves_no_codex_behind() {
    let mut live = Live::start();
    let ws = live.workspace();
    let seen = Seen::default();
    v2_client(&mut live.acplb, &seen, async |cx| {
        initialize(&cx).await?;
        let id = open(&cx, &ws, "full-access").await?;
        send_prompt(&cx, &id, "scenario:sleep wait").await?;
        until_sleeping(&seen).await;
        Ok(())
    })
    .await
    .unwrap();
    // The client returned: acplb's stdin is closed mid-turn.
    let (code, _) = live.acplb.wait_exit(Duration::from_secs(10)).await;
    assert_eq!(code, Some(0), "{}", live.acplb.stderr());
    let left = live.codex_left();
    assert!(left.is_empty(), "Codex left behind: {left:?}");
}
