//! `systemPrompt` and `additionalDirectories` refused, end to end: a relative or missing
//! directory, a file given as a directory, a system prompt that would replace Codex's own or
//! has no text; on `session/new` and on `session/load` alike, and nothing opens. AIR custom
//! instructions that are not text fail `session/new` (the only request they are read from).

use agent_client_protocol::v1::schema::{
    LoadSessionRequest, NewSessionRequest, SystemPrompt, SystemPromptMode,
};

use crate::live::Live;
use crate::sessions::{initialize, one_turn_then_exit};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_directories_and_system_prompts_are_refused_with_what_is_wrong() {
    let mut live = Live::start();
    let id = one_turn_then_exit(&mut live, "scenario:plain first").await;
    live.respawn();
    let ws = live.workspace();
    let file = ws.join("a-file.txt");
    std::fs::write(&file, "x").unwrap();
    let updates = live.updates.clone();
    let errors = live
        .acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            let new = |f: fn(NewSessionRequest) -> NewSessionRequest| f(NewSessionRequest::new(&ws));
            let mut requests = vec![
                new(|r| r.additional_directories(vec!["relative/dir".into()])),
                new(|r| r.additional_directories(vec!["/no/such/dir/acplb".into()])),
                new(|r| {
                    r.system_prompt(SystemPrompt::new(vec!["x".into()]).mode(SystemPromptMode::Override))
                }),
                new(|r| r.system_prompt(SystemPrompt::new(vec![]))),
            ];
            requests.push(NewSessionRequest::new(&ws).additional_directories(vec![file.clone()]));
            let mut errors = Vec::new();
            for r in requests {
                let e = cx.send_request(r).block_task().await.expect_err("refused");
                assert_eq!(e.data.as_ref().unwrap()["reason"], "invalid_params", "{e:?}");
                errors.push(e.message);
            }
            let load =
                LoadSessionRequest::new(id.clone(), &ws).additional_directories(vec!["relative/dir".into()]);
            let e = cx.send_request(load).block_task().await.expect_err("refused");
            errors.push(e.message);
            Ok(errors)
        })
        .await
        .unwrap();
    assert!(
        errors[0].contains("`relative/dir` must be an absolute path"),
        "{errors:?}"
    );
    assert!(
        errors[1].contains("`/no/such/dir/acplb` is not accessible"),
        "{errors:?}"
    );
    assert!(
        errors[2].contains("mode \"override\" is not supported"),
        "{errors:?}"
    );
    assert!(errors[3].contains("systemPrompt has no content"), "{errors:?}");
    assert!(errors[4].contains("is not a directory"), "{errors:?}");
    assert!(
        errors[5].contains("`relative/dir` must be an absolute path"),
        "{errors:?}"
    );
    assert!(
        live.mock.requests().len() == 1,
        "nothing ran but the first session's turn"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn air_custom_instructions_that_are_not_text_are_refused_and_nothing_opens() {
    let mut live = Live::start();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let errors = live
        .acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            let mut errors = Vec::new();
            for bad in [serde_json::json!(42), serde_json::json!(["a", "b"])] {
                let meta = serde_json::json!({"jetbrains": {"air": {"customInstructions": bad}}});
                let new = NewSessionRequest::new(&ws).meta(meta.as_object().cloned().unwrap());
                let e = cx.send_request(new).block_task().await.expect_err("refused");
                errors.push(e.message);
            }
            Ok(errors)
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert!(
        errors[0].contains(
            "`_meta.jetbrains.air.customInstructions` must be a string of instructions, not a number"
        ),
        "{errors:?}"
    );
    assert!(errors[1].contains("not an array"), "{errors:?}");
    assert!(live.mock.requests().is_empty(), "nothing ran");
}
