//! A prompt sent while a turn runs: steered into it with `while_busy` = `steer` (where the
//! provider can steer), else queued as the next turn.

use std::time::Duration;

use crate::editor::{Editor, options, options_with_turn_limit, serve};
use crate::scripted::{Gate, Scripted, Step, say, stop_name};
use crate::timeline::{Timeline, within};

#[tokio::test(start_paused = true)]
async fn a_steered_prompt_joins_the_running_turn_and_is_answered_when_it_ends() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    let gate = Gate::new();
    provider.script(
        "one",
        vec![
            say("one begins"),
            Step::ReadSteer,
            Step::Wait(gate.clone()),
            say("one ends"),
        ],
    );
    serve(&provider, &timeline, options(), async |editor| {
        let session = editor.start().await;
        let options = editor.set_config(&session, "while_busy", "steer").await.unwrap();
        let json = serde_json::to_value(&options.config_options).unwrap();
        let while_busy = json
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["id"] == "while_busy")
            .unwrap();
        assert_eq!(while_busy["currentValue"], "steer");
        let mut one = editor.prompt(&session, "one");
        timeline.wait_for("provider start one").await;
        let mut two = editor.prompt(&session, "look at the tests too");
        timeline
            .wait_for("provider one steered by look at the tests too")
            .await;
        editor.barrier(&session).await;
        assert!(
            !one.is_finished() && !two.is_finished(),
            "both wait for the turn to end"
        );
        gate.open();
        let one = within("the turn", &mut one).await.unwrap().unwrap();
        let two = within("the steered prompt", &mut two).await.unwrap().unwrap();
        assert_eq!(stop_name(one.stop_reason), "end_turn");
        assert_eq!(two.stop_reason, one.stop_reason);
    })
    .await;
    assert!(
        !timeline.has("provider start look at the tests too"),
        "no turn of its own"
    );
    let ended = timeline.position("provider end one: end_turn");
    assert!(ended < timeline.position("client answered look at the tests too: end_turn"));
}

#[tokio::test(start_paused = true)]
async fn a_steered_prompt_is_cancelled_with_its_turn() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    provider.script("one", vec![Step::ReadSteer, Step::Wait(Gate::new())]);
    serve(&provider, &timeline, options(), async |editor| {
        let session = editor.start().await;
        editor.set_config(&session, "while_busy", "steer").await.unwrap();
        let one = editor.prompt(&session, "one");
        timeline.wait_for("provider start one").await;
        let two = editor.prompt(&session, "two");
        timeline.wait_for("provider one steered by two").await;
        editor.cancel(&session);
        for turn in [one, two] {
            let answer = within("a cancelled prompt", turn).await.unwrap().unwrap();
            assert_eq!(stop_name(answer.stop_reason), "cancelled");
        }
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn with_queue_a_prompt_sent_while_busy_runs_as_the_next_turn() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    let gate = Gate::new();
    provider.script("one", vec![Step::Wait(gate.clone()), Step::CheckInbox]);
    serve(&provider, &timeline, options(), async |editor| {
        let session = editor.start().await;
        editor.set_config(&session, "while_busy", "queue").await.unwrap();
        let one = editor.prompt(&session, "one");
        timeline.wait_for("provider start one").await;
        let two = editor.prompt(&session, "two");
        editor.barrier(&session).await;
        gate.open();
        for turn in [one, two] {
            let answer = within("a queued turn", turn).await.unwrap().unwrap();
            assert_eq!(stop_name(answer.stop_reason), "end_turn");
        }
    })
    .await;
    assert!(timeline.has("provider one inbox empty"));
    assert!(timeline.position("provider end one: end_turn") < timeline.position("provider start two"));
}

#[tokio::test(start_paused = true)]
async fn steering_is_refused_with_a_clear_error_where_the_provider_cannot_steer() {
    let timeline = Timeline::default();
    let provider = Scripted::without_steer(&timeline);
    let gate = Gate::new();
    provider.script("one", vec![Step::Wait(gate.clone()), Step::CheckInbox]);
    serve(&provider, &timeline, options(), async |editor| {
        editor.initialize().await;
        let opened = within("session/new", editor.new_session())
            .await
            .unwrap()
            .unwrap();
        let offered = serde_json::to_value(&opened.config_options).unwrap();
        assert!(
            offered
                .as_array()
                .unwrap()
                .iter()
                .all(|o| o["id"] != "while_busy"),
            "no while_busy option is offered: {offered}"
        );
        let session = opened.session_id;
        let err = editor
            .set_config(&session, "while_busy", "steer")
            .await
            .unwrap_err();
        assert_eq!(i32::from(err.code), -32602);
        assert!(
            err.message
                .starts_with("unknown config option `while_busy`; the options are one of: mode,"),
            "{}",
            err.message
        );
        assert!(!err.message.contains("while_busy,"), "{}", err.message);
        // The session still queues.
        let one = editor.prompt(&session, "one");
        timeline.wait_for("provider start one").await;
        let two = editor.prompt(&session, "two");
        editor.barrier(&session).await;
        gate.open();
        within("both turns", async {
            one.await.unwrap().unwrap();
            two.await.unwrap().unwrap();
        })
        .await;
    })
    .await;
    assert!(timeline.has("provider one inbox empty"));
    assert!(timeline.has("provider end two: end_turn"));
}

/// Runs `one` (which reads a steered prompt, then follows `rest`) with `two` steered into it;
/// returns both answers' error messages.
async fn steer_into_failing_turn(editor: &Editor, timeline: &Timeline) -> [String; 2] {
    let session = editor.start().await;
    editor.set_config(&session, "while_busy", "steer").await.unwrap();
    let one = editor.prompt(&session, "one");
    timeline.wait_for("provider start one").await;
    let two = editor.prompt(&session, "two");
    let one = within("the turn", one).await.unwrap().unwrap_err();
    let two = within("the steered prompt", two).await.unwrap().unwrap_err();
    assert!(timeline.has("provider one steered by two"));
    [one.message, two.message]
}

#[tokio::test(start_paused = true)]
async fn a_steered_prompt_gets_the_error_its_turn_ends_with() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    provider.script(
        "one",
        vec![Step::ReadSteer, Step::Fail("the model crashed".into())],
    );
    let messages = serve(&provider, &timeline, options(), async |editor| {
        steer_into_failing_turn(&editor, &timeline).await
    })
    .await;
    assert_eq!(messages, ["the model crashed", "the model crashed"]);
}

#[tokio::test(start_paused = true)]
async fn a_steered_prompt_gets_the_time_limit_error_of_its_turn() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    provider.script("one", vec![Step::ReadSteer, Step::Wait(Gate::new())]);
    let limit = options_with_turn_limit(Duration::from_millis(250));
    let messages = serve(&provider, &timeline, limit, async |editor| {
        steer_into_failing_turn(&editor, &timeline).await
    })
    .await;
    for message in messages {
        assert!(message.contains("time limit of 250ms"), "{message}");
    }
}

/// A client that declared AIR's `sessionFailure` (ADR 0054): the failing turn's prompt and the
/// prompt steered into it are both answered `end_turn` with the same typed failure, revision 1
/// of the turn's incident, not with an error.
#[tokio::test(start_paused = true)]
async fn with_typed_failures_a_failing_turn_and_its_steered_prompt_end_with_the_failure() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    provider.script(
        "one",
        vec![Step::ReadSteer, Step::Fail("the model crashed".into())],
    );
    let answers = serve(&provider, &timeline, options(), async |editor| {
        let air =
            serde_json::json!({"jetbrains": {"air": {"version": 1, "capabilities": ["sessionFailure"]}}});
        let caps = agent_client_protocol::v1::schema::ClientCapabilities::new()
            .meta(air.as_object().cloned().unwrap());
        editor.initialize_with(caps).await;
        let session = editor.session().await;
        editor.set_config(&session, "while_busy", "steer").await.unwrap();
        let one = editor.prompt(&session, "one");
        timeline.wait_for("provider start one").await;
        let two = editor.prompt(&session, "two");
        let one = within("the turn", one).await.unwrap().unwrap();
        let two = within("the steered prompt", two).await.unwrap().unwrap();
        (session, [one, two])
    })
    .await;
    let (session, answers) = answers;
    for answer in answers {
        let answer = serde_json::to_value(answer).unwrap();
        assert_eq!(answer["stopReason"], "end_turn", "{answer}");
        let failure = &answer["_meta"]["jetbrains"]["air"]["sessionFailure"];
        assert_eq!(
            *failure,
            serde_json::json!({"id": format!("{session}:1:error"), "revision": 1,
                "category": "service", "severity": "error", "title": "the model crashed",
                "actions": ["retry"]}),
            "{answer}"
        );
    }
}
