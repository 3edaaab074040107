//! What waits in a turn's inbox at its end: a request no child left working can ask is
//! refused; a parked child's is put to the editor.

use std::time::Duration;

use tokio::sync::mpsc;

use super::*;
use crate::appserver::decode::DecoderOptions;
use crate::appserver::served::ServedSecrets;

#[tokio::test]
async fn a_request_left_in_the_inbox_at_the_turns_end_is_refused() {
    let (to_server, mut sent) = mpsc::unbounded_channel();
    let rpc = Rpc::new(to_server, Duration::from_secs(60), ServedSecrets::default());
    let mut inbox = rpc.subscribe("t1");
    rpc.set_active("t1", true);
    rpc.dispatch(r#"{"id":7,"method":"item/commandExecution/requestApproval","params":{"threadId":"t1","itemId":"i"}}"#);
    let mut decoder = AppDecoder::new(DecoderOptions::new("/repo"));
    let mut subagents = Subagents::new("t1", DecoderOptions::new("/repo"));
    let sink = acplb_core::provider::CollectingSink::default();
    take_rest(
        &Shared::default(),
        &mut decoder,
        &mut subagents,
        &mut inbox,
        &rpc,
        &mpsc::unbounded_channel().0,
        &sink,
    );
    let answer = sent.try_recv().expect("answered at once");
    let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["error"]["message"], "no turn of this session is running");
}

#[tokio::test]
async fn a_parked_childs_request_left_in_the_inbox_is_put_to_the_editor() {
    let (to_server, mut sent) = mpsc::unbounded_channel();
    let rpc = Rpc::new(to_server, Duration::from_secs(60), ServedSecrets::default());
    let mut inbox = rpc.subscribe("parent");
    rpc.set_active("parent", true);
    // The router learns the child from its spawn.
    rpc.dispatch(r#"{"method":"item/completed","params":{"threadId":"parent","turnId":"p1","item":{"type":"collabAgentToolCall","id":"s","tool":"spawnAgent","status":"completed","receiverThreadIds":["c"],"senderThreadId":"parent","agentsStates":{}}}}"#);
    rpc.dispatch(r#"{"id":7,"method":"item/commandExecution/requestApproval","params":{"threadId":"c","itemId":"i","command":"echo hi"}}"#);
    let mut decoder = AppDecoder::new(DecoderOptions::new("/repo"));
    let mut subagents = crate::appserver::session::follower::tests::parked_view();
    let (editor, mut asked) = mpsc::unbounded_channel();
    let sink = acplb_core::provider::CollectingSink::default();
    take_rest(
        &Shared::default(),
        &mut decoder,
        &mut subagents,
        &mut inbox,
        &rpc,
        &editor,
        &sink,
    );
    assert!(sent.try_recv().is_err(), "nothing said to Codex yet");
    let question = asked.try_recv().expect("put to the editor");
    assert_eq!(question.ask.session.as_deref(), Some("S1:subagent:c"));
    let shown = serde_json::to_string(&sink.take()).unwrap();
    assert!(shown.contains("requires_action"), "{shown}");
}
