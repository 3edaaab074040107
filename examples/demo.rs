//! `scripts/demo`: one whole ACP session through `acplb` and the real Codex CLI, offline.
//!
//! Starts the project's mock model on 127.0.0.1, a throwaway `CODEX_HOME` and git workspace,
//! then `acplb` (the one built next to this example, or `$ACPLB_BIN`) as an editor would, and
//! drives four prompts (an answer, a shell command, a patch in `auto` mode, a plan), printing
//! the updates the editor receives as an editor would show them.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
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

const INTRO: &str = "\
Each prompt starts with a `scenario:<name>` word: it picks what the mock model does (plain: an
answer; shell: run a command; patch: edit files; plan: a plan, then a command). A real model
reads the prompt instead. Lines below are what an editor receives and shows.";

/// Where acplb is: `$ACPLB_BIN`, else next to the `release`/`debug` folder this example runs
/// from (`<target>/release/examples/demo` → `<target>/release/acplb`), which is right for any
/// `CARGO_TARGET_DIR`.
fn acplb_binary(explicit: Option<PathBuf>, this_exe: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    if let Some(bin) = explicit {
        return Ok(bin);
    }
    let exe = this_exe.context("cannot tell where the demo runs from; set ACPLB_BIN")?;
    let profile_dir = exe
        .parent()
        .filter(|d| d.file_name().is_some_and(|n| n == "examples"))
        .and_then(Path::parent)
        .with_context(|| {
            format!(
                "{} is not in a cargo `examples` folder; set ACPLB_BIN",
                exe.display()
            )
        })?;
    let bin = profile_dir.join("acplb");
    anyhow::ensure!(
        bin.is_file(),
        "{} does not exist: build it first (`cargo build --release --bin acplb`) or set ACPLB_BIN",
        bin.display()
    );
    Ok(bin)
}

/// What the editor knows that updates refer to: tool call titles by id, mode names by id.
#[derive(Default)]
struct Screen {
    tool_titles: HashMap<String, String>,
    mode_names: HashMap<String, String>,
    /// The message or thought being streamed on the current line: its kind and message id.
    open: Option<(String, String)>,
}

impl Screen {
    /// What to print for one update: a streamed chunk continues its line, anything else
    /// starts one of its own.
    fn show(&mut self, n: &SessionNotification) -> Option<String> {
        let v = serde_json::to_value(&n.update).ok()?;
        let kind = v["sessionUpdate"].as_str()?.to_owned();
        if matches!(kind.as_str(), "agent_message_chunk" | "agent_thought_chunk") {
            let id = v["messageId"].as_str().unwrap_or_default().to_owned();
            let key = (kind, id);
            if self.open.as_ref() == Some(&key) {
                return Some(v["content"]["text"].as_str()?.replace('\n', " "));
            }
            let line = self.describe(n)?;
            let start = if self.open.replace(key).is_some() {
                "\n"
            } else {
                ""
            };
            return Some(format!("{start}{line}"));
        }
        let line = self.describe(n)?;
        Some(format!("{}{line}\n", self.close()))
    }

    /// Ends a streamed line, if one is open: what to print first.
    fn close(&mut self) -> &'static str {
        if self.open.take().is_some() { "\n" } else { "" }
    }

    /// One update as an editor would show it, or `None` for bookkeeping updates.
    fn describe(&mut self, n: &SessionNotification) -> Option<String> {
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
            "tool_call" => {
                let title = v["title"].as_str()?;
                self.tool_titles
                    .insert(v["toolCallId"].as_str()?.to_owned(), title.to_owned());
                format!(
                    "  tool     {title} [{}] {}",
                    v["kind"].as_str().unwrap_or("other"),
                    v["status"].as_str().unwrap_or("pending")
                )
            }
            "tool_call_update" => self.tool_update(&v)?,
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
            "current_mode_update" => {
                let id = v["currentModeId"].as_str()?;
                format!(
                    "  mode     {}",
                    self.mode_names.get(id).map_or(id, String::as_str)
                )
            }
            // Menus the editor refreshes silently.
            "available_commands_update" | "config_option_update" | "usage_update" => return None,
            other => format!("  {other}"),
        })
    }

    fn tool_update(&mut self, v: &serde_json::Value) -> Option<String> {
        let id = v["toolCallId"].as_str()?;
        if let Some(title) = v["title"].as_str() {
            self.tool_titles.insert(id.to_owned(), title.to_owned());
        }
        let title = self.tool_titles.get(id).map_or(id, String::as_str);
        let diffs = v["content"]
            .as_array()
            .map_or(0, |c| c.iter().filter(|x| x["type"] == "diff").count());
        let extra = if diffs > 0 {
            format!(" ({diffs} diffs)")
        } else {
            String::new()
        };
        Some(format!(
            "  tool     {title} -> {}{extra}",
            v["status"].as_str().unwrap_or("updated")
        ))
    }
}

/// acplb on the demo's Codex; its session is kept with the throwaway Codex home, not among the
/// user's sessions.
fn start_acplb(acplb: &std::path::Path, env: &CodexTestEnv) -> anyhow::Result<tokio::process::Child> {
    tokio::process::Command::new(acplb)
        .args(["-c", "features.unbounded_connection_retries=false"])
        .envs(env.env_vars())
        .env("ACPLB_CODEX", env.codex_path())
        .env("ACPLB_STATE_DIR", env.root().join("acplb-state"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("starting {}", acplb.display()))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let acplb = acplb_binary(
        std::env::var_os("ACPLB_BIN").map(PathBuf::from),
        std::env::current_exe().ok(),
    )?;
    let mock = MockModel::start(MockConfig::default()).context("starting the mock model")?;
    let env =
        CodexTestEnv::new(mock.base_url()).context("preparing Codex (run scripts/install-test-deps)")?;
    println!(
        "acplb:      {}\nmock model: {}\nworkspace:  {}\n\n{INTRO}\n",
        acplb.display(),
        mock.base_url(),
        env.workspace().display()
    );
    let mut child = start_acplb(&acplb, &env)?;
    let transport = ByteStreams::new(
        child.stdin.take().context("stdin")?.compat_write(),
        child.stdout.take().context("stdout")?.compat(),
    );
    let seen = Arc::new(Mutex::new(Vec::<SessionNotification>::new()));
    let sink = seen.clone();
    let screen = Arc::new(Mutex::new(Screen::default()));
    let modes = screen.clone();
    let ws = env.workspace();
    Client
        .v1()
        .name("acplb-demo")
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                if let Some(text) = screen.lock().ok().and_then(|mut s| s.show(&n)) {
                    print!("{text}");
                    // Streamed text shows as it comes.
                    let _ignored = std::io::Write::flush(&mut std::io::stdout());
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
            if let (Some(state), Ok(mut screen)) = (session.modes, modes.lock()) {
                for mode in state.available_modes {
                    screen.mode_names.insert(mode.id.to_string(), mode.name);
                }
            }
            println!("session/new: {sid}\n");
            for (mode, text) in PROMPTS {
                println!("> [{mode}] {text}");
                cx.send_request(SetSessionModeRequest::new(sid.clone(), mode))
                    .block_task()
                    .await?;
                let r = cx
                    .send_request(PromptRequest::new(sid.clone(), vec![text.into()]))
                    .block_task()
                    .await?;
                let usage = r
                    .usage
                    .map(|u| format!(", {} tokens in / {} out", u.input_tokens, u.output_tokens))
                    .unwrap_or_default();
                let end_line = modes.lock().map_or("", |mut s| s.close());
                println!("{end_line}  = {:?}{usage}\n", r.stop_reason);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acplb_is_found_next_to_the_example_in_any_target_dir() {
        let target = tempfile::tempdir().unwrap();
        let release = target.path().join("release");
        std::fs::create_dir_all(release.join("examples")).unwrap();
        std::fs::write(release.join("acplb"), "").unwrap();
        let exe = release.join("examples/demo");
        assert_eq!(
            acplb_binary(None, Some(exe.clone())).unwrap(),
            release.join("acplb")
        );
        assert_eq!(
            acplb_binary(Some("/x/acplb".into()), Some(exe)).unwrap(),
            PathBuf::from("/x/acplb")
        );
    }

    #[test]
    fn a_missing_acplb_says_how_to_build_it() {
        let target = tempfile::tempdir().unwrap();
        let exe = target.path().join("release/examples/demo-0123abcd");
        let err = acplb_binary(None, Some(exe)).unwrap_err().to_string();
        assert!(err.contains("cargo build --release --bin acplb"), "{err}");
        let err = acplb_binary(None, Some("/usr/bin/demo".into()))
            .unwrap_err()
            .to_string();
        assert!(err.contains("ACPLB_BIN"), "{err}");
    }

    fn note(update: &serde_json::Value) -> SessionNotification {
        serde_json::from_value(serde_json::json!({"sessionId": "s", "update": update})).unwrap()
    }

    #[test]
    fn streamed_chunks_continue_their_line_and_the_next_item_starts_a_new_one() {
        let mut screen = Screen::default();
        let chunk = |text: &str, id: &str| {
            note(&serde_json::json!({
                "sessionUpdate": "agent_message_chunk", "messageId": id,
                "content": {"type": "text", "text": text}
            }))
        };
        assert_eq!(
            screen.show(&chunk("Hello! I am ", "m1")).unwrap(),
            "  message  Hello! I am "
        );
        assert_eq!(screen.show(&chunk("the mock.", "m1")).unwrap(), "the mock.");
        assert_eq!(screen.show(&chunk("Next.", "m2")).unwrap(), "\n  message  Next.");
        let tool = note(&serde_json::json!({
            "sessionUpdate": "tool_call", "toolCallId": "t1", "title": "ls",
            "kind": "search", "status": "in_progress"
        }));
        assert_eq!(
            screen.show(&tool).unwrap(),
            "\n  tool     ls [search] in_progress\n"
        );
        assert_eq!(screen.close(), "", "nothing open after a whole line");
    }

    #[test]
    fn tool_updates_show_the_title_and_modes_their_name() {
        let mut screen = Screen::default();
        screen.mode_names.insert("auto".into(), "Auto".into());
        let started = note(&serde_json::json!({
            "sessionUpdate": "tool_call", "toolCallId": "t2-item_2", "title": "ls -la",
            "kind": "search", "status": "in_progress"
        }));
        assert_eq!(
            screen.describe(&started).unwrap(),
            "  tool     ls -la [search] in_progress"
        );
        let done = note(&serde_json::json!({
            "sessionUpdate": "tool_call_update", "toolCallId": "t2-item_2", "status": "completed"
        }));
        assert_eq!(screen.describe(&done).unwrap(), "  tool     ls -la -> completed");
        let mode =
            note(&serde_json::json!({"sessionUpdate": "current_mode_update", "currentModeId": "auto"}));
        assert_eq!(screen.describe(&mode).unwrap(), "  mode     Auto");
    }
}
