//! `/terminals` misused or unlucky (ADR 0041): an unknown id, a stop twice, a stop of a
//! command that already ended, bad arguments, the exec transport, a cancel while Codex lists,
//! and a Codex whose answers are errors or garbage. Each answer says what happened in words;
//! nothing reaches the model and the running command is left alone unless it was stopped.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use acplb_playback::mock_model::MockConfig;
use agent_client_protocol::v1::schema::{CancelNotification, ClientCapabilities, PromptRequest, StopReason};
use serde_json::json;

use crate::background::{alive, command_updates, listed, live, open};
use crate::harness::{Updates, eventually, open_session, prompt};
use crate::live::{Live, assert_end_turn};
use crate::terminal_output::caps;

use super::stand_in::{fake_codex, spawn_app_server};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_ids_bad_arguments_and_a_second_stop_are_answered_in_words() {
    let mut live = live();
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let (texts, pid) = live
        .acplb
        .client(&updates, async |cx| {
            let id = &open(&cx, &cwd, ClientCapabilities::new()).await?;
            assert_end_turn(&prompt(&cx, id, "scenario:background go").await?.stop_reason);
            updates.clear();
            assert_end_turn(&prompt(&cx, id, "/terminals").await?.stop_reason);
            let (terminal, pid) = listed(&updates.agent_text()).unwrap_or_default();
            let mut texts = Vec::new();
            for command in [
                "/terminals stop 999999999".to_owned(),
                "/terminals stop `rm -rf`\nx".to_owned(),
                "/terminals frobnicate".to_owned(),
                "/terminals stop".to_owned(),
                format!("/terminals stop {terminal}"),
                format!("/terminals stop {terminal}"),
                "/terminals stop all".to_owned(),
            ] {
                updates.clear();
                assert_end_turn(&prompt(&cx, id, &command).await?.stop_reason);
                texts.push((command, updates.agent_text(), alive(pid)));
            }
            Ok((texts, pid))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let said = |i: usize, what: &str| {
        let (command, text, _) = &texts[i];
        assert!(text.contains(what), "{command}: {text}");
    };
    said(0, "No background terminal `999999999` is running in this session");
    // More than one id, an unknown word, no id: the usage.
    said(1, "Usage: `/terminals`");
    said(2, "Usage: `/terminals`");
    said(3, "Usage: `/terminals`");
    assert!(texts[..4].iter().all(|(_, _, alive)| *alive), "{texts:?}");
    said(4, "Stopped process ");
    said(5, "is running in this session (it may have ended)");
    said(6, "None was running.");
    assert!(
        eventually(Duration::from_secs(10), || !alive(pid)).await,
        "pid {pid}"
    );
    assert_eq!(
        live.mock.requests().len(),
        2,
        "only the scenario's steps reached the model"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_a_command_that_ended_by_itself_says_so() {
    let mut live = live();
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let (stop, list) = live
        .acplb
        .client(&updates, async |cx| {
            let id = &open(&cx, &cwd, caps(json!({"terminal_output": true}))).await?;
            assert_end_turn(&prompt(&cx, id, "scenario:background_short go").await?.stop_reason);
            let (_, later) = command_updates(&updates);
            let process = later
                .iter()
                .find_map(|u| {
                    let text = u["content"].to_string();
                    let at = text.find("background as process ")?;
                    Some(text[at + 22..].split(':').next()?.to_owned())
                })
                .unwrap_or_default();
            let ended = || {
                command_updates(&updates)
                    .1
                    .iter()
                    .any(|u| u["status"] == "failed")
            };
            assert!(
                eventually(Duration::from_secs(15), ended).await,
                "{:?}",
                updates.json()
            );
            updates.clear();
            assert_end_turn(
                &prompt(&cx, id, &format!("/terminals stop {process}"))
                    .await?
                    .stop_reason,
            );
            let stop = updates.agent_text();
            updates.clear();
            assert_end_turn(&prompt(&cx, id, "/terminals").await?.stop_reason);
            Ok((stop, updates.agent_text()))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert!(stop.contains("(it may have ended)"), "{stop}");
    assert!(list.contains("None is running."), "{list}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_exec_the_command_is_not_offered_and_says_it_needs_app_server() {
    let mut live = Live::start_with(MockConfig::default(), &["--transport", "exec"], &[]);
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let text = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &cwd).await?;
            assert_end_turn(
                &prompt(&cx, &s.session_id, "/terminals stop all")
                    .await?
                    .stop_reason,
            );
            Ok(updates.agent_text())
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert!(
        text.contains("`/terminals` needs the app-server transport"),
        "{text}"
    );
    let offered = live.updates.of_kind("available_commands_update");
    assert!(
        offered.iter().all(|u| !u.to_string().contains("\"terminals\"")),
        "{offered:?}"
    );
    assert!(live.mock.requests().is_empty(), "nothing reached the model");
}

/// A stand-in Codex whose `thread/backgroundTerminals/list` gets the n-th answer of `answers`
/// (`hang`: none at all; the file `listing` in `dir` says it was asked).
fn stand_in(dir: &std::path::Path, answers: &[&str]) -> std::path::PathBuf {
    let mut cases = String::new();
    for (n, answer) in answers.iter().enumerate() {
        let reply = if *answer == "hang" {
            format!("touch '{}'", dir.join("listing").display())
        } else {
            format!("echo \"{{\\\"id\\\":$i,{answer}}}\"")
        };
        let _ = writeln!(cases, "        {}) {reply} ;;", n + 1);
    }
    let script = format!(
        r#"n=0
while read -r l; do
  i=$(printf '%s\n' "$l" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$l" in
    *'"method":"initialize"'*) echo "{{\"id\":$i,\"result\":{{}}}}" ;;
    *'"method":"thread/start"'*) echo "{{\"id\":$i,\"result\":{{\"thread\":{{\"id\":\"th-1\"}},\"model\":\"m\"}}}}" ;;
    *'"method":"turn/start"'*)
      echo "{{\"id\":$i,\"result\":{{\"turn\":{{\"id\":\"tu-1\"}}}}}}"
      echo '{{"method":"turn/completed","params":{{"threadId":"th-1","turn":{{"id":"tu-1","status":"completed"}}}}}}' ;;
    *'"method":"thread/backgroundTerminals/list"'*)
      n=$((n+1))
      case $n in
{cases}      esac ;;
    *'"method":"thread/backgroundTerminals/terminate"'*) echo "{{\"id\":$i,\"error\":{{\"code\":-32000,\"message\":\"no such process\"}}}}" ;;
  esac
done"#
    );
    fake_codex(dir, &script)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_codex_that_lists_errors_or_garbage_gets_a_sentence_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let codex = stand_in(
        dir.path(),
        &[
            r#"\"error\":{\"code\":-32000,\"message\":\"list broke\"}"#,
            r#"\"result\":{\"data\":\"all of them\"}"#,
            r#"\"result\":{\"data\":[5,{\"itemId\":3},{\"itemId\":\"c\",\"processId\":\"9\",\"command\":\"x\"}],\"nextCursor\":null}"#,
        ],
    );
    let mut acplb = spawn_app_server(dir.path(), &codex, &[]);
    let cwd = dir.path().to_owned();
    let updates = Updates::default();
    let texts = acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &cwd).await?;
            assert_end_turn(&prompt(&cx, &s.session_id, "hello").await?.stop_reason);
            let mut texts = Vec::new();
            for command in ["/terminals", "/terminals", "/terminals stop 9"] {
                updates.clear();
                assert_end_turn(&prompt(&cx, &s.session_id, command).await?.stop_reason);
                texts.push(updates.agent_text());
            }
            Ok(texts)
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", acplb.stderr()));
    assert!(
        texts[0].contains("Codex did not list the background terminals") && texts[0].contains("list broke"),
        "{}",
        texts[0]
    );
    assert!(texts[1].contains("without a list"), "{}", texts[1]);
    assert!(
        texts[2].contains("Codex did not stop process 9") && texts[2].contains("no such process"),
        "{}",
        texts[2]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_while_codex_lists_is_answered_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let codex = stand_in(dir.path(), &["hang"]);
    let mut acplb = spawn_app_server(dir.path(), &codex, &[]);
    let cwd = dir.path().to_owned();
    let updates = Updates::default();
    let (stop, took, after) = acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &cwd).await?;
            assert_end_turn(&prompt(&cx, &s.session_id, "hello").await?.stop_reason);
            let request = cx.send_request(PromptRequest::new(
                s.session_id.clone(),
                vec!["/terminals".into()],
            ));
            // The cancel goes once Codex has the list request: the wait is on its answer.
            let asked = eventually(Duration::from_secs(10), || cwd.join("listing").exists()).await;
            assert!(asked, "codex was asked for the list");
            let at = Instant::now();
            cx.send_notification(CancelNotification::new(s.session_id.clone()))?;
            let stop = request.block_task().await?;
            let took = at.elapsed();
            let after = prompt(&cx, &s.session_id, "hello again").await?;
            Ok((stop.stop_reason, took, after.stop_reason))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", acplb.stderr()));
    assert_eq!(stop, StopReason::Cancelled);
    assert!(took < Duration::from_secs(1), "{took:?}");
    assert_eq!(after, StopReason::EndTurn, "the session goes on");
}
