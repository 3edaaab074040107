//! `systemPrompt` and `additionalDirectories` on `session/new`, end to end with the real Codex
//! on both transports: the system prompt reaches the model beside the user's own developer
//! instructions (kept), an additional directory reaches Codex as a writable root; a `JetBrains`
//! AIR client's custom instructions take the user's place and the system prompt follows them.
//! Refusals are in `hostile/session_setup.rs`.

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{InitializeRequest, NewSessionRequest, SystemPrompt};
use serde_json::json;

use acplb_playback::mock_model::MockConfig;

use crate::harness::prompt;
use crate::live::{Live, set_mode};
use crate::sessions::initialize;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_system_prompt_reaches_the_model_beside_the_users_instructions() {
    let args = ["-c", "developer_instructions=\"USER-RULE-5521: stay brief.\""];
    let mut live = Live::start_with(MockConfig::default(), &args, &[]);
    let ws = live.workspace();
    let extra = tempfile::tempdir().unwrap();
    let extra_dir = extra.path().to_path_buf();
    let updates = live.updates.clone();
    live.acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            let new = NewSessionRequest::new(&ws)
                .system_prompt(SystemPrompt::new(vec![
                    "CLIENT-PROMPT-8812: speak like a pirate.".into(),
                ]))
                .additional_directories(vec![extra_dir.clone()]);
            let s = cx.send_request(new).block_task().await?;
            // Writable roots are for a sandbox that writes: `auto` (workspace-write).
            set_mode(&cx, &s.session_id, "auto").await?;
            prompt(&cx, &s.session_id, "scenario:plain hello").await
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let body = live.mock.requests()[0].body.to_string();
    assert!(
        body.contains("CLIENT-PROMPT-8812: speak like a pirate."),
        "{body}"
    );
    assert!(
        body.contains("USER-RULE-5521: stay brief."),
        "the user's own stay: {body}"
    );
    assert!(
        body.contains(&extra_dir.display().to_string()),
        "the directory reaches Codex: {body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_air_clients_custom_instructions_take_the_users_place_and_the_system_prompt_follows() {
    let args = ["-c", "developer_instructions=\"USER-RULE-5521: stay brief.\""];
    let mut live = Live::start_with(MockConfig::default(), &args, &[]);
    let ws = live.workspace();
    let updates = live.updates.clone();
    let listed = live
        .acplb
        .client(&updates, async |cx| {
            let init = cx
                .send_request(
                    InitializeRequest::new(ProtocolVersion::V1)
                        .client_capabilities(crate::air::air(&["customInstructions"])),
                )
                .block_task()
                .await?;
            let meta =
                json!({"jetbrains": {"air": {"customInstructions": "AIR-RULE-7301: answer in French."}}});
            let new = NewSessionRequest::new(&ws)
                .system_prompt(SystemPrompt::new(vec![
                    "CLIENT-PROMPT-8812: speak like a pirate.".into(),
                ]))
                .meta(meta.as_object().cloned().unwrap());
            let s = cx.send_request(new).block_task().await?;
            prompt(&cx, &s.session_id, "scenario:plain hello").await?;
            Ok(serde_json::to_value(init).unwrap()["_meta"]["jetbrains"]["air"]["capabilities"].clone())
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert!(
        listed
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == "customInstructions"),
        "listed as the peer lists it: {listed}"
    );
    let body = live.mock.requests()[0].body.to_string();
    let air = body
        .find("AIR-RULE-7301: answer in French.")
        .unwrap_or_else(|| panic!("{body}"));
    let client = body
        .find("CLIENT-PROMPT-8812: speak like a pirate.")
        .unwrap_or_else(|| panic!("{body}"));
    assert!(
        air < client,
        "the system prompt follows the custom instructions: {body}"
    );
    assert!(
        !body.contains("USER-RULE-5521"),
        "the custom instructions take the place of the user's own: {body}"
    );
}
