//! `systemPrompt` and `additionalDirectories` on `session/new`, end to end with the real Codex
//! on both transports: the system prompt reaches the model beside the user's own developer
//! instructions (kept), an additional directory reaches Codex as a writable root. Refusals
//! are in `hostile/session_setup.rs`.

use agent_client_protocol::v1::schema::{NewSessionRequest, SystemPrompt};

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
