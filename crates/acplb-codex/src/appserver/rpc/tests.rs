//! The JSON-RPC peer's tests: answers, routing, backpressure, limits, the server going.

use futures::FutureExt as _;

use super::route::BACKLOG_LIMIT;
use super::*;
use crate::appserver::protocol::requests::{ThreadLoadedList, TurnInterrupt};

/// Requests of the tests, without params: `a` and `b`.
#[derive(serde::Serialize)]
struct A {}
#[derive(serde::Serialize)]
struct B {}
impl Request for A {
    const METHOD: &'static str = "a";
}
impl Request for B {
    const METHOD: &'static str = "b";
}

fn interrupt() -> TurnInterrupt {
    TurnInterrupt {
        thread_id: "t1".into(),
        turn_id: "u1".into(),
    }
}

/// The next message of `inbox` if one waits.
fn next(inbox: &mut Inbox) -> Option<Incoming> {
    inbox.recv().now_or_never().flatten()
}

fn peer() -> (Rc<Rpc>, mpsc::UnboundedReceiver<String>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (
        Rpc::new(tx, Duration::from_secs(60), ServedSecrets::default()),
        rx,
    )
}

#[tokio::test]
async fn a_request_gets_its_own_answer_and_errors_carry_the_message() {
    let (rpc, mut out) = peer();
    let first = rpc.request(&A {});
    let second = rpc.request(&B {});
    let both = async {
        let sent: Value = serde_json::from_str(&out.recv().await.unwrap()).unwrap();
        assert_eq!(sent["method"], "a");
        assert_eq!(sent["jsonrpc"], "2.0");
        let sent2: Value = serde_json::from_str(&out.recv().await.unwrap()).unwrap();
        rpc.dispatch(&json!({"id": sent2["id"], "error": {"code": -32600, "message": "bad"}}).to_string());
        rpc.dispatch(&json!({"id": sent["id"], "result": {"ok": 1}}).to_string());
    };
    let (a, b, ()) = tokio::join!(first, second, both);
    assert_eq!(a.unwrap(), json!({"ok": 1}));
    assert_eq!(b.unwrap_err().to_string(), "bad (code -32600)");
}

#[tokio::test]
async fn messages_go_to_the_session_of_their_thread_and_unknown_requests_are_declined() {
    let (rpc, mut out) = peer();
    let mut inbox = rpc.subscribe("t1");
    rpc.dispatch(r#"{"method":"item/started","params":{"threadId":"t1","early":1}}"#);
    rpc.set_active("t1", true);
    rpc.dispatch(r#"{"method":"item/started","params":{"threadId":"t1","x":1}}"#);
    rpc.dispatch(r#"{"method":"item/started","params":{"threadId":"t2"}}"#);
    rpc.dispatch(r#"{"id":0,"method":"item/fileChange/requestApproval","params":{"threadId":"t9"}}"#);
    rpc.dispatch("not json");
    match next(&mut inbox).unwrap() {
        Incoming::Notification { method, params } => {
            assert_eq!(method, "item/started");
            assert_eq!(params["x"], 1);
        }
        other => panic!("{other:?}"),
    }
    assert!(next(&mut inbox).is_none(), "t2's message did not reach t1");
    let refusal: Value = serde_json::from_str(&out.recv().await.unwrap()).unwrap();
    assert_eq!(refusal["id"], 0);
    assert_eq!(refusal["error"]["code"], -32601);
}

#[tokio::test]
async fn the_reader_waits_while_running_turns_have_a_full_backlog() {
    let (rpc, _out) = peer();
    let mut inbox = rpc.subscribe("t1");
    rpc.set_active("t1", true);
    let line = r#"{"method":"item/agentMessage/delta","params":{"threadId":"t1","delta":"x"}}"#;
    for _ in 0..BACKLOG_LIMIT {
        rpc.dispatch(line);
    }
    let room = rpc.room();
    tokio::pin!(room);
    assert!(
        futures::poll!(room.as_mut()).is_pending(),
        "full: the reader waits"
    );
    assert!(next(&mut inbox).is_some());
    assert!(
        futures::poll!(room.as_mut()).is_ready(),
        "one taken (the inbox gave its credit back): room again"
    );
    // Between turns nothing is kept.
    rpc.set_active("t1", false);
    rpc.dispatch(line);
    assert_eq!(inbox.len(), BACKLOG_LIMIT - 1);
}

#[tokio::test]
async fn a_request_not_answered_in_time_has_the_server_declared_dead() {
    let (tx, _out) = mpsc::unbounded_channel();
    let rpc = Rpc::new(tx, Duration::from_millis(30), ServedSecrets::default());
    // The reader's part: stop the server, say why.
    let reader = async {
        let unanswered = rpc.wedged().await;
        rpc.close(&Gone {
            status: "signal: 9 (SIGKILL)".into(),
            stderr_tail: "last words".into(),
            unanswered: Some(unanswered),
        });
    };
    let request = interrupt();
    let (result, ()) = tokio::join!(rpc.request(&request), reader);
    let Err(RpcFailure::Gone(gone)) = result else {
        panic!("{result:?}")
    };
    assert_eq!(gone.unanswered.as_deref(), Some("`turn/interrupt` within 30ms"));
    assert_eq!(gone.stderr_tail, "last words");
}

#[tokio::test]
async fn an_error_answer_reaches_the_caller_without_a_served_secret() {
    let (tx, mut out) = mpsc::unbounded_channel();
    let served = ServedSecrets::default();
    served.add(&acplb_core::secrets::KnownSecrets::new(["value-of-session-a"]));
    let rpc = Rpc::new(tx, Duration::from_secs(60), served);
    let answer = async {
        let sent: Value = serde_json::from_str(&out.recv().await.unwrap()).unwrap();
        rpc.dispatch(
            &json!({"id": sent["id"], "error": {"code": 1, "message": "bad env value-of-session-a"}})
                .to_string(),
        );
    };
    let (result, ()) = tokio::join!(rpc.request(&ThreadLoadedList {}), answer);
    assert_eq!(result.unwrap_err().to_string(), "bad env [REDACTED] (code 1)");
}

#[tokio::test]
async fn when_the_server_goes_every_waiter_and_session_hears_why() {
    let (rpc, _out) = peer();
    let mut inbox = rpc.subscribe("t1");
    rpc.set_active("t1", true);
    let request = interrupt();
    let waiting = rpc.request(&request);
    let gone = Gone {
        status: "exit status: 3".into(),
        stderr_tail: "boom".into(),
        unanswered: None,
    };
    let close = async { rpc.close(&gone) };
    let (result, ()) = tokio::join!(waiting, close);
    assert_eq!(result.unwrap_err(), RpcFailure::Gone(gone.clone()));
    assert!(matches!(next(&mut inbox).unwrap(), Incoming::Gone(g) if g == gone));
    assert!(matches!(rpc.request(&A {}).await, Err(RpcFailure::Gone(_))));
}

#[tokio::test]
async fn between_turns_a_subagents_news_goes_to_the_follower_and_its_pieces_give_way_to_its_ends() {
    let (rpc, _out) = peer();
    let _inbox = rpc.subscribe("t1");
    let (tx, mut idle) = mpsc::channel(8);
    rpc.follow_idle("t1", tx);
    // t1 spawns c1: c1's messages are t1's session's.
    rpc.dispatch(r#"{"method":"thread/started","params":{"thread":{"id":"c1","parentThreadId":"t1"}}}"#);
    rpc.dispatch(r#"{"method":"item/completed","params":{"threadId":"t1","item":{"type":"collabAgentToolCall","id":"s","tool":"spawnAgent","receiverThreadIds":["c1"],"senderThreadId":"t1"}}}"#);
    let mut taken = Vec::new();
    while let Ok(Incoming::Notification { method, .. }) = idle.try_recv() {
        taken.push(method);
    }
    taken.clear();
    // No turn runs: pieces fill the queue until a quarter of it is left; later pieces are
    // shed, and the child's turn end still fits.
    for _ in 0..9 {
        rpc.dispatch(
            r#"{"method":"item/agentMessage/delta","params":{"threadId":"c1","itemId":"m","delta":"x"}}"#,
        );
    }
    rpc.dispatch(
        r#"{"method":"turn/completed","params":{"threadId":"c1","turn":{"id":"u","status":"completed"}}}"#,
    );
    while let Ok(Incoming::Notification { method, params }) = idle.try_recv() {
        taken.push(format!(
            "{method} {}",
            params["threadId"].as_str().unwrap_or_default()
        ));
    }
    assert_eq!(
        taken.iter().filter(|m| m.contains("delta")).count(),
        7,
        "{taken:?}"
    );
    assert_eq!(
        taken.last().map(String::as_str),
        Some("turn/completed c1"),
        "{taken:?}"
    );
}
