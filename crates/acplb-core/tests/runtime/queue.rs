//! Prompts of one session run one turn at a time, in the order sent; `session/cancel` ends the
//! running turn and every queued prompt.

use crate::editor::{options, serve};
use crate::scripted::{Gate, Scripted, Step, say, stop_name};
use crate::timeline::{Timeline, within};

const NAMES: [&str; 3] = ["one", "two", "three"];

/// Each of `one`, `two`, `three` says it begins, waits for its gate, says it ends.
fn three_gated_turns(provider: &Scripted) -> Vec<Gate> {
    NAMES
        .iter()
        .map(|name| {
            let gate = Gate::new();
            provider.script(
                name,
                vec![
                    say(&format!("{name} begins")),
                    Step::Wait(gate.clone()),
                    say(&format!("{name} ends")),
                ],
            );
            gate
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn prompts_run_one_turn_at_a_time_in_the_order_sent() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    let gates = three_gated_turns(&provider);
    let session = serve(&provider, &timeline, options(), async |editor| {
        let session = editor.start().await;
        let mut turns: Vec<_> = NAMES.iter().map(|p| editor.prompt(&session, p)).collect();
        for (i, name) in NAMES.iter().enumerate() {
            timeline.wait_for(&format!("provider start {name}")).await;
            // Every prompt has reached the session by now; the later ones must still wait.
            editor.barrier(&session).await;
            for later in &NAMES[i + 1..] {
                assert!(
                    !timeline.has(&format!("provider start {later}")),
                    "{later} started during {name}"
                );
            }
            assert!(
                turns[i..].iter().all(|t| !t.is_finished()),
                "answered before {name} ended"
            );
            gates[i].open();
            let answer = within("a turn whose gate opened", &mut turns[i])
                .await
                .unwrap()
                .unwrap();
            assert_eq!(stop_name(answer.stop_reason), "end_turn");
        }
        session
    })
    .await;
    assert_eq!(
        timeline.of("provider "),
        [
            &format!("provider open {session}"),
            "provider start one",
            "provider end one: end_turn",
            "provider start two",
            "provider end two: end_turn",
            "provider start three",
            "provider end three: end_turn",
            &format!("provider session shutdown {session}"),
            "provider shutdown",
        ]
    );
    let said: Vec<String> = timeline
        .of("client update:")
        .into_iter()
        .filter(|e| e.ends_with("begins") || e.ends_with("ends"))
        .collect();
    assert_eq!(
        said,
        [
            "client update: one begins",
            "client update: one ends",
            "client update: two begins",
            "client update: two ends",
            "client update: three begins",
            "client update: three ends",
        ],
        "the updates of the turns never interleave"
    );
}

#[tokio::test(start_paused = true)]
async fn cancel_answers_the_running_and_every_queued_prompt_as_cancelled() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    // The gates are never opened: only the cancel ends `one`.
    let _gates = three_gated_turns(&provider);
    serve(&provider, &timeline, options(), async |editor| {
        let session = editor.start().await;
        let turns: Vec<_> = NAMES.iter().map(|p| editor.prompt(&session, p)).collect();
        timeline.wait_for("provider start one").await;
        editor.barrier(&session).await;
        editor.cancel(&session);
        for (name, turn) in NAMES.iter().zip(turns) {
            let answer = within("a cancelled prompt's answer", turn)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(stop_name(answer.stop_reason), "cancelled", "{name}");
        }
        // The session goes on as usual after a cancel.
        let after = within("a prompt after the cancel", editor.prompt(&session, "four")).await;
        assert_eq!(stop_name(after.unwrap().unwrap().stop_reason), "end_turn");
    })
    .await;
    let turns: Vec<String> = timeline
        .of("provider ")
        .into_iter()
        .filter(|e| e.starts_with("provider start ") || e.starts_with("provider end "))
        .collect();
    assert_eq!(
        turns,
        [
            "provider start one",
            "provider end one: cancelled",
            "provider start four",
            "provider end four: end_turn",
        ],
        "the queued prompts never reached the provider"
    );
    assert!(timeline.has("client update: reply to four"));
}

#[tokio::test(start_paused = true)]
async fn a_cancel_is_answered_within_a_second_while_the_provider_is_slow_to_stop() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    let stall = Gate::new();
    provider.script(
        "one",
        vec![say("one begins"), Step::Stall(stall.clone()), say("one ends")],
    );
    serve(&provider, &timeline, options(), async |editor| {
        let session = editor.start().await;
        let one = editor.prompt(&session, "one");
        let two = editor.prompt(&session, "two");
        let three = editor.prompt(&session, "three");
        timeline.wait_for("provider start one").await;
        editor.barrier(&session).await;
        let cancelled_at = tokio::time::Instant::now();
        editor.cancel(&session);
        for queued in [two, three] {
            let answer = within("a queued prompt's cancel", queued).await.unwrap().unwrap();
            assert_eq!(stop_name(answer.stop_reason), "cancelled");
        }
        // The provider has not stopped, and need not have: the prompt is answered anyway.
        let answer = within("the stalled turn's cancel", one).await.unwrap().unwrap();
        assert_eq!(stop_name(answer.stop_reason), "cancelled");
        let took = cancelled_at.elapsed();
        assert!(took < std::time::Duration::from_secs(1), "{took:?}");
        assert!(!timeline.has("provider end one: cancelled"));
        // The next turn waits for the provider to finish stopping the last.
        let four = editor.prompt(&session, "four");
        editor.barrier(&session).await;
        assert!(!timeline.has("provider start four"));
        stall.open();
        let four = within("the turn after it", four).await.unwrap().unwrap();
        assert_eq!(stop_name(four.stop_reason), "end_turn");
    })
    .await;
    assert!(!timeline.has("provider start two") && !timeline.has("provider start three"));
    assert!(timeline.position("provider end one: cancelled") < timeline.position("provider start four"));
    assert!(
        !timeline.has("client update: one ends"),
        "the provider saw the cancel after its stall"
    );
}

#[tokio::test(start_paused = true)]
async fn a_failed_turn_is_answered_with_the_providers_words_and_the_queue_goes_on() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    let gate = Gate::new();
    provider.script(
        "one",
        vec![
            Step::Wait(gate.clone()),
            Step::Fail("the model refused: quota exceeded".into()),
        ],
    );
    serve(&provider, &timeline, options(), async |editor| {
        let session = editor.start().await;
        let one = editor.prompt(&session, "one");
        let two = editor.prompt(&session, "two");
        timeline.wait_for("provider start one").await;
        gate.open();
        let err = within("the failed turn", one).await.unwrap().unwrap_err();
        assert_eq!(err.message, "the model refused: quota exceeded");
        let two = within("the turn after it", two).await.unwrap().unwrap();
        assert_eq!(stop_name(two.stop_reason), "end_turn");
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_withdrawn_prompt_ends_its_turn_and_a_withdrawn_queued_prompt_never_runs() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    provider.script("one", vec![say("one begins"), Step::Wait(Gate::new())]);
    serve(&provider, &timeline, options(), async |editor| {
        let session = editor.start().await;
        let one = editor.prompt(&session, "one");
        let two = editor.prompt(&session, "two");
        let three = editor.prompt(&session, "three");
        timeline.wait_for("provider start one").await;
        // Dropping a request's future withdraws it (`$/cancel_request`); the barrier comes
        // after the withdrawal on the wire, so acplb has seen it once the barrier is answered.
        two.abort();
        assert!(within("withdrawing two", two).await.unwrap_err().is_cancelled());
        editor.barrier(&session).await;
        one.abort();
        assert!(within("withdrawing one", one).await.unwrap_err().is_cancelled());
        let three = within("the prompt after them", three).await.unwrap().unwrap();
        assert_eq!(stop_name(three.stop_reason), "end_turn");
    })
    .await;
    assert!(timeline.has("provider end one: cancelled"));
    assert!(!timeline.has("provider start two"), "{:#?}", timeline.entries());
}
