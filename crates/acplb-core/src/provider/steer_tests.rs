//! A closed steer inbox refuses new prompts and keeps the ones it had.

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
