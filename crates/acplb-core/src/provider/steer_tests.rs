//! A closed steer inbox refuses new prompts and keeps the ones it had; cancels of subagent
//! sessions come through the same inbox.

use super::*;

#[tokio::test]
async fn a_closed_inbox_refuses_new_prompts_and_keeps_what_it_had() {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let inbox = SteerInbox::new(rx);
    let input = |t: &str| PromptInput {
        text: t.to_owned(),
        ..PromptInput::default()
    };
    tx.send(input("before")).unwrap();
    inbox.close();
    assert!(
        tx.send(input("after")).is_err(),
        "a prompt after the close is refused"
    );
    assert_eq!(inbox.next().await.text, "before");
    // An inbox of a provider that cannot steer closes without harm.
    SteerInbox::default().close();
}

#[tokio::test]
async fn cancels_of_subagent_sessions_arrive_in_order_and_an_inbox_without_them_waits() {
    let (_prompts, rx) = tokio::sync::mpsc::unbounded_channel();
    let (tx, cancels) = tokio::sync::mpsc::unbounded_channel();
    let inbox = SteerInbox::new(rx).with_child_cancels(cancels);
    tx.send("s:subagent:a".to_owned()).unwrap();
    tx.send("s:subagent:b".to_owned()).unwrap();
    assert_eq!(inbox.next_child_cancel().await, "s:subagent:a");
    assert_eq!(inbox.next_child_cancel().await, "s:subagent:b");
    // Closing the prompts leaves the cancels open.
    inbox.close();
    tx.send("s:subagent:c".to_owned()).unwrap();
    assert_eq!(inbox.next_child_cancel().await, "s:subagent:c");
    let none = SteerInbox::default();
    let waited = tokio::time::timeout(std::time::Duration::from_millis(20), none.next_child_cancel()).await;
    assert!(waited.is_err(), "an inbox with no cancels has none to give");
}
