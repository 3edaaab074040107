//! A provider's permission ask reaches the editor as `session/request_permission`, and the
//! editor's answer (or its absence) reaches the provider.

use crate::editor::{Answer, options, serve};
use crate::scripted::{Scripted, Step, say, stop_name};
use crate::timeline::{Timeline, within};

/// Runs the prompt `one` (an ask, then a message) with the editor answering `answer`; returns
/// what the provider wrote down about the answer.
async fn ask_once(answer: Answer) -> String {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    provider.script("one", vec![Step::Ask, say("after the ask")]);
    serve(&provider, &timeline, options(), async |editor| {
        editor.answer_permissions(answer);
        let session = editor.start().await;
        let turn = within("a turn with an answered ask", editor.prompt(&session, "one")).await;
        assert_eq!(stop_name(turn.unwrap().unwrap().stop_reason), "end_turn");
    })
    .await;
    assert!(
        timeline.position("client asked: run one") < timeline.position("client update: after the ask"),
        "the turn went on only after the editor was asked"
    );
    let answered: Vec<String> = timeline
        .of("provider ")
        .into_iter()
        .filter_map(|e| e.strip_prefix("provider one was answered ").map(str::to_owned))
        .collect();
    assert_eq!(answered.len(), 1, "{answered:?}");
    answered[0].clone()
}

#[tokio::test(start_paused = true)]
async fn the_option_the_editor_picks_reaches_the_provider() {
    assert_eq!(ask_once(Answer::Pick("allow")).await, r#"Selected("allow")"#);
    assert_eq!(ask_once(Answer::Pick("reject")).await, r#"Selected("reject")"#);
}

#[tokio::test(start_paused = true)]
async fn a_dismissed_dialog_reaches_the_provider_as_cancelled() {
    assert_eq!(ask_once(Answer::Dismiss).await, "Cancelled");
}

#[tokio::test(start_paused = true)]
async fn an_error_from_the_editor_is_unanswered_with_its_message() {
    let seen = ask_once(Answer::Error("the dialog could not be shown")).await;
    assert!(seen.starts_with("Unanswered("), "{seen}");
    assert!(seen.contains("the dialog could not be shown"), "{seen}");
}

#[tokio::test(start_paused = true)]
async fn a_cancel_while_the_editor_is_asked_ends_the_turn_at_once() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    provider.script("one", vec![Step::Ask, say("after the ask")]);
    serve(&provider, &timeline, options(), async |editor| {
        editor.answer_permissions(Answer::Never);
        let session = editor.start().await;
        let turn = editor.prompt(&session, "one");
        timeline.wait_for("client asked: run one").await;
        editor.cancel(&session);
        let answer = within("the cancelled turn", turn).await.unwrap().unwrap();
        assert_eq!(stop_name(answer.stop_reason), "cancelled");
        // The ask is withdrawn, so the editor can close its dialog.
        editor.barrier(&session).await;
        assert_eq!(editor.held_asks_withdrawn(), [true]);
    })
    .await;
    assert!(timeline.has("provider ask of one abandoned"));
    assert!(timeline.has("provider end one: cancelled"));
    assert!(!timeline.has("client update: after the ask"));
}

#[tokio::test(start_paused = true)]
async fn a_hang_up_while_the_editor_is_asked_ends_the_turn_and_the_session() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    provider.script("one", vec![Step::Ask, say("after the ask")]);
    let session = serve(&provider, &timeline, options(), async |editor| {
        editor.answer_permissions(Answer::Never);
        let session = editor.start().await;
        drop(editor.prompt(&session, "one"));
        timeline.wait_for("client asked: run one").await;
        session
    })
    .await;
    // The ask ends with the connection: as a rejection (the request failed) or abandoned
    // (the session's shutdown cancelled the turn first), never left waiting.
    let resolved = timeline.of("provider ").into_iter().find(|e| {
        e.starts_with("provider one was answered Unanswered(") || e == "provider ask of one abandoned"
    });
    assert!(resolved.is_some(), "{:#?}", timeline.entries());
    let ended = timeline.of("provider end one: ").pop().expect("the turn ended");
    assert!(timeline.position(&ended) < timeline.position(&format!("provider session shutdown {session}")));
    assert!(timeline.position(&ended) > timeline.position("client asked: run one"));
}

/// A question the provider has between turns (ADR 0059) reaches the editor in the session's
/// name, and the editor's pick reaches the provider.
#[tokio::test(start_paused = true)]
async fn a_question_between_turns_reaches_the_editor_and_its_answer_the_provider() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    let asking = provider.clone();
    serve(&provider, &timeline, options(), async |editor| {
        editor.answer_permissions(Answer::Pick("allow"));
        let _session = editor.start().await;
        let answered = asking.ask_between_turns(crate::scripted::ask("later"));
        let answer = within("the answer between turns", answered).await.unwrap();
        assert_eq!(
            answer,
            acplb_core::provider::PermissionAnswer::Selected("allow".into())
        );
    })
    .await;
    assert!(timeline.has("client asked: run later"));
}

/// A question the provider withdrew before the runtime put it to the editor is not put.
#[tokio::test(start_paused = true)]
async fn a_question_withdrawn_before_it_is_asked_is_not_asked() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    let asking = provider.clone();
    serve(&provider, &timeline, options(), async |editor| {
        editor.answer_permissions(Answer::Pick("allow"));
        let session = editor.start().await;
        drop(asking.ask_between_turns(crate::scripted::ask("withdrawn")));
        let answered = asking.ask_between_turns(crate::scripted::ask("kept"));
        within("the kept question's answer", answered).await.unwrap();
        editor.barrier(&session).await;
    })
    .await;
    assert!(timeline.has("client asked: run kept"));
    assert!(!timeline.has("client asked: run withdrawn"));
}

/// A question the provider withdraws while the editor shows it is withdrawn in the editor too
/// (`$/cancel_request`), so its dialog can close; a question left alone stays open.
#[tokio::test(start_paused = true)]
async fn a_question_withdrawn_while_the_editor_shows_it_is_withdrawn_there() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    let asking = provider.clone();
    serve(&provider, &timeline, options(), async |editor| {
        editor.answer_permissions(Answer::Never);
        let session = editor.start().await;
        let withdrawn = asking.ask_between_turns(crate::scripted::ask("withdrawn"));
        let _kept = asking.ask_between_turns(crate::scripted::ask("kept"));
        timeline.wait_for("client asked: run withdrawn").await;
        timeline.wait_for("client asked: run kept").await;
        drop(withdrawn);
        editor.barrier(&session).await;
        assert_eq!(editor.held_asks_withdrawn(), [true, false]);
    })
    .await;
}

/// A question between turns waits for a client that stopped reading (the output gate shut):
/// it is not put while the gate is shut, and is put, and answered, once the client reads again.
#[tokio::test(start_paused = true)]
async fn a_question_between_turns_waits_until_the_client_reads_again() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    let asking = provider.clone();
    let flow = acplb_core::transport::OutputFlow::bounded(1000, i64::MAX);
    let mut gated = options();
    gated.output_flow = flow.clone();
    serve(&provider, &timeline, gated, async |editor| {
        editor.answer_permissions(Answer::Pick("allow"));
        let _session = editor.start().await;
        // A thousand messages written to the connection and not read: the gate shuts.
        for _ in 0..1000 {
            flow.sent(0);
        }
        let answered = asking.ask_between_turns(crate::scripted::ask("gated"));
        // Every task runs until it waits before the paused clock moves on.
        tokio::time::sleep(std::time::Duration::from_secs(5)).await;
        assert!(
            !timeline.has("client asked: run gated"),
            "asked past the shut gate"
        );
        flow.written(100_000, 0);
        let answer = within("the answer once the client reads", answered)
            .await
            .unwrap();
        assert_eq!(
            answer,
            acplb_core::provider::PermissionAnswer::Selected("allow".into())
        );
    })
    .await;
    assert!(timeline.has("client asked: run gated"));
}
