//! Sessions opening and stopping: a failing or slow `open_session`, the command list, the turn
//! time limit, and the order of shutdown when the editor hangs up.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use acplb_core::plugin::composer::ComposerError;
use acplb_core::plugin::{PipelineSource, SessionPlugins};

use acplb_core::error::ProviderError;
use agent_client_protocol::v1::schema::SessionUpdate;
use tokio::time::Instant;

use crate::editor::{options, options_with_turn_limit, serve, serve_with};
use crate::scripted::{Gate, Open, Scripted, Step, say, stop_name};
use crate::timeline::{Timeline, within};

#[tokio::test(start_paused = true)]
async fn a_failing_open_refuses_session_new_with_the_providers_words() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    provider.next_open(Open::Fail(ProviderError::turn_failed(
        "codex app-server is not logged in; run `codex login`",
    )));
    provider.next_open(Open::Fail(ProviderError::AuthRequired {
        message: "log in with `codex login` first".into(),
        methods: vec!["api-key".into()],
    }));
    serve(&provider, &timeline, options(), async |editor| {
        editor.initialize().await;
        let err = within("session/new", editor.new_session())
            .await
            .unwrap()
            .unwrap_err();
        assert_eq!(
            err.message,
            "codex app-server is not logged in; run `codex login`"
        );
        let err = within("session/new", editor.new_session())
            .await
            .unwrap()
            .unwrap_err();
        assert_eq!(i32::from(err.code), -32000, "auth required");
        assert_eq!(err.message, "log in with `codex login` first");
        let data = err.data.unwrap();
        assert_eq!(data["reason"], "auth_required");
        assert_eq!(data["authMethods"], serde_json::json!(["api-key"]));
        // The next one opens: a failure leaves nothing behind.
        let session = editor.session().await;
        let answer = within("a prompt", editor.prompt(&session, "hello")).await;
        assert_eq!(stop_name(answer.unwrap().unwrap().stop_reason), "end_turn");
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_slow_open_blocks_neither_initialize_nor_another_sessions_prompt() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    let slow = Gate::new();
    provider.next_open(Open::After(slow.clone()));
    serve(&provider, &timeline, options(), async |editor| {
        editor.initialize().await;
        let mut first = editor.new_session();
        timeline.wait_for_prefix("provider opening ").await;
        editor.initialize().await;
        let second = editor.session().await;
        let answer = within("a prompt", editor.prompt(&second, "hello")).await;
        assert_eq!(stop_name(answer.unwrap().unwrap().stop_reason), "end_turn");
        assert!(!first.is_finished(), "the slow session is still opening");
        slow.open();
        let first = within("the slow session/new", &mut first).await.unwrap().unwrap();
        let answer = within("a prompt", editor.prompt(&first.session_id, "hi")).await;
        assert_eq!(stop_name(answer.unwrap().unwrap().stop_reason), "end_turn");
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_hang_up_shuts_every_session_down_and_then_the_provider_once() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    provider.script("busy", vec![say("working"), Step::Wait(Gate::new())]);
    let (busy, idle) = serve(&provider, &timeline, options(), async |editor| {
        let busy = editor.start().await;
        let idle = editor.session().await;
        within("an idle session's turn", editor.prompt(&idle, "hello"))
            .await
            .unwrap()
            .unwrap();
        drop(editor.prompt(&busy, "busy"));
        timeline.wait_for("provider start busy").await;
        (busy, idle)
    })
    .await;
    let hung_up = timeline.position("client hung up");
    let ended = timeline.position("provider end busy: cancelled");
    let busy_down = timeline.position(&format!("provider session shutdown {busy}"));
    let idle_down = timeline.position(&format!("provider session shutdown {idle}"));
    let provider_down = timeline.position("provider shutdown");
    assert!(
        hung_up < ended && ended < busy_down,
        "the running turn was cancelled first"
    );
    assert!(busy_down < provider_down && idle_down < provider_down);
    let provider_side = timeline.of("provider ");
    assert_eq!(
        provider_side.iter().filter(|e| *e == "provider shutdown").count(),
        1
    );
    assert_eq!(
        provider_side.last().unwrap(),
        "provider shutdown",
        "{provider_side:#?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_session_still_opening_at_a_hang_up_never_outlives_the_provider() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    provider.script("busy", vec![Step::Wait(Gate::new())]);
    let slow = Gate::new();
    provider.next_open(Open::Ready);
    provider.next_open(Open::After(slow.clone()));
    serve(&provider, &timeline, options(), async |editor| {
        let busy = editor.start().await;
        drop(editor.prompt(&busy, "busy"));
        timeline.wait_for("provider start busy").await;
        drop(editor.new_session());
        timeline.wait_for_prefix("provider opening ").await;
        // The slow open finishes only once acplb has begun to stop (it cancels the busy turn
        // then).
        let (t, gate) = (timeline.clone(), slow.clone());
        tokio::task::spawn_local(async move {
            t.wait_for("provider end busy: cancelled").await;
            gate.open();
        });
    })
    .await;
    let provider_side = timeline.of("provider ");
    assert_eq!(
        provider_side.last().unwrap(),
        "provider shutdown",
        "{provider_side:#?}"
    );
    for opened in provider_side
        .iter()
        .filter_map(|e| e.strip_prefix("provider open "))
    {
        assert!(
            timeline.has(&format!("provider session shutdown {opened}")),
            "session {opened} was opened but never shut down: {provider_side:#?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn the_command_list_follows_session_new_when_the_provider_has_commands() {
    let timeline = Timeline::default();
    let provider = Scripted::with_commands(
        &timeline,
        &[("review", "Review the changes"), ("compact", "Compact")],
    );
    serve(&provider, &timeline, options(), async |editor| {
        let session = editor.start().await;
        timeline
            .wait_for("client commands: review, compact, rename")
            .await;
        let listed: Vec<_> = editor
            .updates()
            .into_iter()
            .filter(|n| matches!(n.update, SessionUpdate::AvailableCommandsUpdate(_)))
            .collect();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].session_id, session);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_command_list_the_provider_learns_later_reaches_the_open_session() {
    let timeline = Timeline::default();
    let provider = Scripted::with_commands(&timeline, &[("review", "Review the changes")]);
    serve(&provider, &timeline, options(), async |editor| {
        let session = editor.start().await;
        timeline.wait_for("client commands: review, rename").await;
        provider.offer_commands(&[("review", "Review the changes"), ("$demo", "Skill: a demo")]);
        timeline.wait_for("client commands: review, $demo, rename").await;
        let listed: Vec<_> = editor
            .updates()
            .into_iter()
            .filter(|n| matches!(n.update, SessionUpdate::AvailableCommandsUpdate(_)))
            .collect();
        assert_eq!(listed.len(), 2, "the first list, then the whole new one");
        assert!(listed.iter().all(|n| n.session_id == session));
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_command_list_learned_after_a_cancel_waits_for_the_editors_next_request() {
    // ACP (and acp-tck's CANCEL-002): no `session/update` follows a cancelled prompt's answer.
    let timeline = Timeline::default();
    let provider = Scripted::with_commands(&timeline, &[("review", "Review the changes")]);
    let gate = Gate::new();
    provider.script("one", vec![say("one begins"), Step::Wait(gate.clone())]);
    serve(&provider, &timeline, options(), async |editor| {
        let session = editor.start().await;
        timeline.wait_for("client commands: review, rename").await;
        let turn = editor.prompt(&session, "one");
        timeline.wait_for("provider start one").await;
        editor.barrier(&session).await;
        editor.cancel(&session);
        let answer = within("the cancelled answer", turn).await.unwrap().unwrap();
        assert_eq!(stop_name(answer.stop_reason), "cancelled");
        provider.offer_commands(&[("review", "Review the changes"), ("$demo", "Skill: a demo")]);
        // Paused time: the session has long been idle when this returns.
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert!(
            !timeline.has("client commands: review, $demo, rename"),
            "an update followed the cancelled answer"
        );
        let after = within("the next prompt", editor.prompt(&session, "two")).await;
        assert_eq!(stop_name(after.unwrap().unwrap().stop_reason), "end_turn");
        timeline.wait_for("client commands: review, $demo, rename").await;
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn only_acplbs_own_rename_is_listed_when_the_provider_has_no_commands() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    serve(&provider, &timeline, options(), async |editor| {
        let session = editor.start().await;
        // The list is sent before anything the session answers later.
        editor.barrier(&session).await;
        assert_eq!(timeline.of("client commands:"), ["client commands: rename"]);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn the_turn_time_limit_stops_a_turn_with_an_error_naming_the_limit() {
    let limit = Duration::from_millis(250);
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    provider.script("slow", vec![say("working"), Step::Wait(Gate::new())]);
    serve(
        &provider,
        &timeline,
        options_with_turn_limit(limit),
        async |editor| {
            let session = editor.start().await;
            let started = Instant::now();
            let slow = editor.prompt(&session, "slow");
            let next = editor.prompt(&session, "next");
            let err = within("the limit", slow).await.unwrap().unwrap_err();
            assert!(
                started.elapsed() >= limit,
                "stopped after {:?}",
                started.elapsed()
            );
            assert!(err.message.contains("time limit of 250ms"), "{}", err.message);
            let data = err.data.unwrap();
            assert_eq!(data["reason"], "turn_timeout");
            assert_eq!(data["limitSeconds"], 0.25);
            // The queue goes on, each turn with a limit of its own.
            let next = within("the next turn", next).await.unwrap().unwrap();
            assert_eq!(stop_name(next.stop_reason), "end_turn");
        },
    )
    .await;
    assert!(timeline.position("provider end slow: cancelled") < timeline.position("provider start next"));
}

/// Plugins whose start never returns, as on a disk that does not answer: `for_session` says it
/// was called, then blocks until the test lets it go.
struct Stalled {
    entered: Arc<tokio::sync::Notify>,
    release: std::sync::Mutex<std::sync::mpsc::Receiver<()>>,
}

impl PipelineSource for Stalled {
    fn for_session(&self, _cwd: &Path, _session_id: &str) -> Result<SessionPlugins, ComposerError> {
        self.entered.notify_one();
        let _released = self.release.lock().unwrap().recv();
        Ok(SessionPlugins::default())
    }
}

#[tokio::test(start_paused = true)]
async fn plugins_that_never_start_refuse_the_session_after_their_limit() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    let (release, released) = std::sync::mpsc::channel::<()>();
    let entered = Arc::new(tokio::sync::Notify::new());
    let stalled = Arc::new(Stalled {
        entered: entered.clone(),
        release: std::sync::Mutex::new(released),
    });
    serve_with(&provider, stalled, &timeline, options(), async |editor| {
        editor.initialize().await;
        let opening = editor.new_session();
        // The plugins run on the blocking pool: the loop goes on (the clock is moved by hand,
        // as a blocking task holds tokio's paused clock).
        within("the plugins' start", entered.notified()).await;
        tokio::time::advance(Duration::from_secs(59)).await;
        assert!(!opening.is_finished(), "refused before the limit");
        tokio::time::advance(Duration::from_secs(2)).await;
        let err = within("session/new", opening).await.unwrap().unwrap_err();
        let data = err.data.clone().unwrap();
        assert_eq!(data["reason"], "open_stalled", "{err:?}");
        assert!(err.message.contains("did not start within 1m"), "{}", err.message);
    })
    .await;
    drop(release);
}

/// What the provider sent from beside its turns before a turn goes on reaches the editor first
/// (a subagent's news from before the turn took it up, then what the turn says), every time.
#[tokio::test(start_paused = true)]
async fn updates_from_beside_the_turn_reach_the_editor_before_what_the_turn_says_next() {
    const TURNS: usize = 24;
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    for n in 0..TURNS {
        provider.script(
            &format!("p{n}"),
            vec![Step::Beside(format!("news {n}")), say(&format!("turn {n}"))],
        );
    }
    serve(&provider, &timeline, options(), async |editor| {
        let session = editor.start().await;
        for n in 0..TURNS {
            let answer = within("the turn", editor.prompt(&session, &format!("p{n}"))).await;
            assert_eq!(stop_name(answer.unwrap().unwrap().stop_reason), "end_turn");
        }
        editor.barrier(&session).await;
    })
    .await;
    let said: Vec<String> = timeline
        .of("client update: ")
        .into_iter()
        .filter(|e| e.contains(": news ") || e.contains(": turn "))
        .collect();
    let expected: Vec<String> = (0..TURNS)
        .flat_map(|n| {
            [
                format!("client update: news {n}"),
                format!("client update: turn {n}"),
            ]
        })
        .collect();
    assert_eq!(said, expected);
}

/// `session/close` while a turn runs: the turn stops as cancelled and both the prompt and the
/// close are answered (the session's channel closes behind the close, and must not keep its
/// actor from the turn's end).
#[tokio::test(start_paused = true)]
async fn closing_a_session_mid_turn_answers_the_prompt_cancelled_and_the_close() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    provider.script("busy", vec![say("working"), Step::Wait(Gate::new())]);
    serve(&provider, &timeline, options(), async |editor| {
        let session = editor.start().await;
        let turn = editor.prompt(&session, "busy");
        timeline.wait_for("client update: working").await;
        editor.close(&session).await.expect("the close is answered");
        let answer = within("the closed session's prompt", turn)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(stop_name(answer.stop_reason), "cancelled");
    })
    .await;
    assert!(timeline.has("provider end busy: cancelled"));
}

/// A request naming a session this connection closed is told it was closed and how to open it
/// again; one naming a session it never had is told only that it is unknown; closing it again
/// is the same.
#[tokio::test(start_paused = true)]
async fn a_prompt_to_a_closed_session_is_told_it_was_closed_and_how_to_open_it_again() {
    let timeline = Timeline::default();
    let provider = Scripted::new(&timeline);
    serve(&provider, &timeline, options(), async |editor| {
        let session = editor.start().await;
        editor.close(&session).await.expect("the close is answered");
        let closed = within("the closed session's prompt", editor.prompt(&session, "hello"))
            .await
            .unwrap()
            .expect_err("a closed session takes no prompt");
        assert_eq!(
            closed.message,
            format!(
                "unknown session `{session}`: it was closed; session/load or session/resume opens it again"
            )
        );
        let again = editor.close(&session).await.expect_err("closed already");
        assert!(again.message.contains("it was closed"), "{again:?}");
        let other = agent_client_protocol::v1::schema::SessionId::new("never-opened");
        let unknown = within("an unknown session's prompt", editor.prompt(&other, "hello"))
            .await
            .unwrap()
            .expect_err("an unknown session takes no prompt");
        assert_eq!(unknown.message, "unknown session `never-opened`");
    })
    .await;
}
