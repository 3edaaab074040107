//! `scripts/demo`: one whole ACP session through `acplb` and the real Codex CLI, offline.
//!
//! Starts the project's mock model on 127.0.0.1, a throwaway `CODEX_HOME` and git workspace,
//! then `acplb` (release build) as an editor would, and drives four prompts (an answer, a shell
//! command, a patch in `auto` mode, a plan), printing the updates the editor receives.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use acplb_playback::mock_model::codex_env::CodexTestEnv;
use acplb_playback::mock_model::{MockConfig, MockModel};
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    InitializeRequest, NewSessionRequest, PromptRequest, SessionNotification, SetSessionModeRequest,
};
use agent_client_protocol::{ByteStreams, Client, on_receive_notification};
use anyhow::Context as _;
use tokio_util::compat::{TokioAsyncReadCompatExt as _, TokioAsyncWriteCompatExt as _};

const PROMPTS: [(&str, &str); 4] = [
    ("read-only", "scenario:plain Say hello"),
    ("read-only", "scenario:shell List the files in this repository"),
    ("auto", "scenario:patch Create hello.txt and edit README.md"),
    ("auto", "scenario:plan Make a plan and run one step"),
];

fn describe(n: &SessionNotification) -> Option<String> {
    let v = serde_json::to_value(&n.update).ok()?;
    let text = |v: &serde_json::Value| {
        v["content"]["text"]
            .as_str()
            .unwrap_or_default()
            .replace('\n', " ")
    };
    Some(match v["sessionUpdate"].as_str()? {
        "agent_message_chunk" => format!("  message  {}", text(&v)),
        "agent_thought_chunk" => format!("  thought  {}", text(&v)),
        "tool_call" => format!(
            "  tool     {} [{}] {}",
            v["title"].as_str()?,
            v["kind"].as_str().unwrap_or("other"),
            v["status"].as_str().unwrap_or("pending")
        ),
        "tool_call_update" => {
            let diffs = v["content"]
                .as_array()
                .map_or(0, |c| c.iter().filter(|x| x["type"] == "diff").count());
            let extra = if diffs > 0 {
                format!(" ({diffs} diffs)")
            } else {
                String::new()
            };
            format!(
                "  tool     {} -> {}{extra}",
                v["toolCallId"].as_str()?,
                v["status"].as_str().unwrap_or("updated")
            )
        }
        "plan" => {
            let entries: Vec<String> = v["entries"]
                .as_array()?
                .iter()
                .map(|e| {
                    format!(
                        "{} ({})",
                        e["content"].as_str().unwrap_or(""),
                        e["status"].as_str().unwrap_or("")
                    )
                })
                .collect();
            format!("  plan     {}", entries.join("; "))
        }
        other => format!("  {other}"),
    })
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let acplb = std::env::var("ACPLB_BIN").unwrap_or_else(|_| "target/release/acplb".into());
    let mock = MockModel::start(MockConfig::default()).context("starting the mock model")?;
    let env =
        CodexTestEnv::new(mock.base_url()).context("preparing Codex (run scripts/install-test-deps)")?;
    println!(
        "mock model: {}\nworkspace:  {}\n",
        mock.base_url(),
        env.workspace().display()
    );
    let mut child = tokio::process::Command::new(&acplb)
        .args(["-c", "features.unbounded_connection_retries=false"])
        .envs(env.env_vars())
        .env("ACPLB_CODEX", env.codex_path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("starting {acplb}"))?;
    let transport = ByteStreams::new(
        child.stdin.take().context("stdin")?.compat_write(),
        child.stdout.take().context("stdout")?.compat(),
    );
    let seen = Arc::new(Mutex::new(Vec::<SessionNotification>::new()));
    let sink = seen.clone();
    let ws = env.workspace();
    Client
        .v1()
        .name("acplb-demo")
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                if let Some(line) = describe(&n) {
                    println!("{line}");
                }
                if let Ok(mut v) = sink.lock() {
                    v.push(n);
                }
                Ok(())
            },
            on_receive_notification!(),
        )
        .connect_with(transport, async |cx| {
            let init = cx
                .send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            let info = init
                .agent_info
                .map(|i| format!("{} {}", i.name, i.version))
                .unwrap_or_default();
            println!("initialize: {info}, protocol {}", init.protocol_version);
            let session = cx
                .send_request(NewSessionRequest::new(ws.clone()))
                .block_task()
                .await?;
            let sid = session.session_id;
            println!("session/new: {sid}\n");
            for (mode, text) in PROMPTS {
                cx.send_request(SetSessionModeRequest::new(sid.clone(), mode))
                    .block_task()
                    .await?;
                println!("> [{mode}] {text}");
                let r = cx
                    .send_request(PromptRequest::new(sid.clone(), vec![text.into()]))
                    .block_task()
                    .await?;
                let usage = r
                    .usage
                    .map(|u| format!(", {} tokens in / {} out", u.input_tokens, u.output_tokens))
                    .unwrap_or_default();
                println!("  = {:?}{usage}\n", r.stop_reason);
            }
            Ok(())
        })
        .await
        .map_err(|e| anyhow::anyhow!("ACP session failed: {e}"))?;
    let status = child.wait().await?;
    let count = seen.lock().map_or(0, |v| v.len());
    println!(
        "acplb exited ({status}) after {count} session updates; hello.txt now says: {:?}",
        std::fs::read_to_string(env.workspace().join("hello.txt"))
            .unwrap_or_default()
            .lines()
            .next()
            .unwrap_or("")
    );
    Ok(())
}
