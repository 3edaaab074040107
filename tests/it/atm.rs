//! Agent teams end to end: the composer plugins in the real binary, the real Codex CLI calling
//! `acplb mcp atm` (registered by `atm-mail`, or passed by the client) against the mock model,
//! identity claims across sessions, and the per-turn `<session-context>`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use acplb_atm::MailStore;
use acplb_playback::mock_model::{MockConfig, Script};
use agent_client_protocol::v1::schema::{EnvVariable, McpServer, McpServerStdio, NewSessionRequest};
use serde_json::Value;

use crate::harness::{eventually, open_session, prompt};
use crate::live::{Live, assert_end_turn};

const ACPLB: &str = env!("CARGO_BIN_EXE_acplb");
/// A turn against the mock takes well under a second; this only stops a hang.
pub(crate) const TURN_LIMIT: Duration = Duration::from_secs(60);

/// Scenarios in which the model finds the deferred `atm` tools, calls one, and repeats its
/// output (`{last_output}`) in the final message.
const SCENARIOS: &str = r#"
[scenarios.atm_send]
description = "tool_search, then atm_send to bob on MCP server `atm`, then the tool output"
[[scenarios.atm_send.steps]]
actions = [{ type = "tool_search", query = "atm send message teammate" }]
[[scenarios.atm_send.steps]]
actions = [{ type = "mcp_call", server = "atm", tool = "atm_send", arguments = { to = "bob", message = "hello bob from codex", summary = "greeting" } }]
[[scenarios.atm_send.steps]]
actions = [{ type = "message", text = "sent: {last_output}" }]

[scenarios.atm_read]
description = "tool_search, then atm_read on MCP server `atm`, then the tool output"
[[scenarios.atm_read.steps]]
actions = [{ type = "tool_search", query = "atm read unread team mail" }]
[[scenarios.atm_read.steps]]
actions = [{ type = "mcp_call", server = "atm", tool = "atm_read", arguments = {} }]
[[scenarios.atm_read.steps]]
actions = [{ type = "message", text = "mail: {last_output}" }]
"#;

fn mock_config() -> MockConfig {
    mock_config_with("")
}

/// The built-in scenarios, the ones above, and `more` (TOML in the same format).
pub(crate) fn mock_config_with(more: &str) -> MockConfig {
    let mut script = Script::builtin().layered_with(Script::from_toml_str(SCENARIOS, "atm-test").unwrap());
    if !more.is_empty() {
        script = script.layered_with(Script::from_toml_str(more, "atm-test-more").unwrap());
    }
    MockConfig::default().with_script(script)
}

/// ATM's home for one test (`ATM_HOME`): team `demo` exists, and a composer file next to it.
pub(crate) struct Team {
    dir: tempfile::TempDir,
}

impl Team {
    pub(crate) fn new(composer: &str) -> Team {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".claude/teams/demo/inboxes")).unwrap();
        std::fs::write(dir.path().join("composer.toml"), composer).unwrap();
        Team { dir }
    }

    pub(crate) fn home(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn composer(&self) -> String {
        self.home().join("composer.toml").display().to_string()
    }

    /// `ATM_HOME`, and a user config dir of the test's own so no real composer file applies.
    pub(crate) fn env(&self) -> Vec<(String, String)> {
        vec![
            ("ATM_HOME".into(), self.home().display().to_string()),
            (
                "XDG_CONFIG_HOME".into(),
                self.home().join("xdg").display().to_string(),
            ),
        ]
    }

    pub(crate) fn inbox(&self, agent: &str) -> Vec<Value> {
        let path = self
            .home()
            .join(format!(".claude/teams/demo/inboxes/{agent}.json"));
        std::fs::read_to_string(path).map_or_else(|_| Vec::new(), |t| serde_json::from_str(&t).unwrap())
    }

    pub(crate) fn lock(&self, name: &str) -> PathBuf {
        self.home()
            .join(format!(".config/atm/agent-sessions/demo/{name}.lock"))
    }

    pub(crate) fn audit(&self) -> Vec<Value> {
        let path = self.home().join(".config/atm/agent-sessions/demo/audit.jsonl");
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

pub(crate) const TEAM_PLUGINS: &str = r#"
[[plugin]]
id = "atm-identity"
required = true
identity = "arch-ctm"
team = "demo"

[[plugin]]
id = "atm-mail"
required = true

[[plugin]]
id = "audit"
required = true
"#;

/// The request bodies the mock received, as JSON text, in order.
fn bodies(live: &Live) -> Vec<String> {
    live.mock.requests().iter().map(|r| r.body.to_string()).collect()
}

#[tokio::test]
async fn codex_sends_and_reads_team_mail_through_the_server_atm_mail_registers() {
    let team = Team::new(TEAM_PLUGINS);
    let lead = MailStore::new(team.home().join(".claude"), "team-lead", "demo").unwrap();
    lead.send("arch-ctm", "status report please", Some("status"))
        .unwrap();
    let composer = team.composer();
    let mut live = Live::start_with(mock_config(), &["--composer", &composer], &team.env());
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let (sent, read) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, session) = open_session(&cx, &cwd).await?;
            let id = session.session_id;
            assert!(team.lock("arch-ctm").is_file(), "claimed for the session");
            let sent = tokio::time::timeout(TURN_LIMIT, prompt(&cx, &id, "scenario:atm_send"))
                .await
                .unwrap()?;
            let sent_text = updates.agent_text();
            updates.clear();
            let read = tokio::time::timeout(TURN_LIMIT, prompt(&cx, &id, "scenario:atm_read"))
                .await
                .unwrap()?;
            assert_end_turn(&sent.stop_reason);
            assert_end_turn(&read.stop_reason);
            Ok((sent_text, updates.agent_text()))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));

    // atm_send: the message is in bob's inbox, from the claimed identity, and the tool's
    // envelope came back to the model.
    let bob = team.inbox("bob");
    assert_eq!(bob.len(), 1, "{bob:?}\n{}", live.acplb.stderr());
    assert_eq!(bob[0]["from"], "arch-ctm");
    assert_eq!(bob[0]["text"], "hello bob from codex");
    assert_eq!(bob[0]["summary"], "greeting");
    let id = bob[0]["metadata"]["atm"]["messageId"].as_str().unwrap();
    assert!(sent.starts_with("sent: "), "{sent}");
    assert!(sent.contains(id) && sent.contains("bob@demo"), "{sent}");

    // The waiting mail was announced as a count, never as its text.
    let first_turn = bodies(&live)[0].clone();
    assert!(
        first_turn.contains("You have 1 unread team message. Call the `atm_read` tool"),
        "{first_turn}"
    );
    assert!(!first_turn.contains("status report please"));

    // atm_read: the envelope came back, and the message is marked read after delivery.
    assert!(read.starts_with("mail: "), "{read}");
    assert!(
        read.contains("team-lead") && read.contains("status report please"),
        "{read}"
    );
    assert!(
        eventually(Duration::from_secs(5), || team.inbox("arch-ctm")[0]["read"]
            == true)
        .await
    );

    // Audit: both prompts (the second with its Codex thread) and both tool calls.
    let audit = team.audit();
    let events: Vec<&str> = audit.iter().filter_map(|l| l["event_type"].as_str()).collect();
    assert_eq!(events, ["prompt", "atm_send", "prompt", "atm_read"], "{audit:?}");
    assert_eq!(audit[0]["prompt_summary"], "scenario:atm_send");
    assert!(audit[0].get("thread_id").is_none());
    assert!(
        audit[2]["thread_id"].as_str().is_some_and(|t| !t.is_empty()),
        "{audit:?}"
    );
    assert_eq!(audit[1]["identity"], "arch-ctm");
    assert_eq!(audit[1]["recipient"], "bob@demo");
    assert_eq!(audit[1]["message_summary"], "greeting");

    // The claim ends with acplb (the client has closed its stdin).
    assert_eq!(live.acplb.wait_exit(Duration::from_secs(10)).await.0, Some(0));
    assert!(
        !team.lock("arch-ctm").exists(),
        "the identity lock is released on exit"
    );
}

#[tokio::test]
async fn an_atm_server_the_client_passes_in_session_new_reaches_codex() {
    let team = Team::new("");
    let mut live = Live::start_with(mock_config(), &[], &team.env());
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let server = McpServer::Stdio(
        McpServerStdio::new("atm", ACPLB)
            .args(
                ["mcp", "atm", "--identity", "solo", "--team", "demo"]
                    .map(String::from)
                    .to_vec(),
            )
            .env(vec![EnvVariable::new(
                "ATM_HOME",
                team.home().display().to_string(),
            )]),
    );
    let text = live
        .acplb
        .client(&updates, async |cx| {
            cx.send_request(agent_client_protocol::v1::schema::InitializeRequest::new(
                agent_client_protocol::schema::ProtocolVersion::V1,
            ))
            .block_task()
            .await?;
            let session = cx
                .send_request(NewSessionRequest::new(&cwd).mcp_servers(vec![server]))
                .block_task()
                .await?;
            let done =
                tokio::time::timeout(TURN_LIMIT, prompt(&cx, &session.session_id, "scenario:atm_send"))
                    .await
                    .unwrap()?;
            assert_end_turn(&done.stop_reason);
            Ok(updates.agent_text())
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let bob = team.inbox("bob");
    assert_eq!(bob.len(), 1, "{text}\n{}", live.acplb.stderr());
    assert_eq!(bob[0]["from"], "solo");
    assert!(text.contains("bob@demo"), "{text}");
    let calls = live.updates.of_kind("tool_call");
    assert!(
        calls.iter().any(|c| c.to_string().contains("atm_send")),
        "{calls:?}"
    );
    // The server claimed `solo` itself for its turn. At turn end acplb kills Codex's process
    // group, the server included, so the lock may remain, but only with a dead holder, which
    // the next claim of `solo` reclaims.
    if let Ok(bytes) = std::fs::read(team.lock("solo")) {
        let holder: Value = serde_json::from_slice(&bytes).unwrap();
        let pid = holder["pid"].as_i64().unwrap();
        assert!(
            eventually(Duration::from_secs(5), || !Path::new(&format!("/proc/{pid}"))
                .exists())
            .await,
            "the server's lock is held by a live process: {holder}"
        );
    }
}

#[tokio::test]
async fn the_context_follows_the_branch_and_the_users_instructions_stay() {
    let team = Team::new(
        "[[plugin]]\nid = \"atm-identity\"\nrequired = true\nidentity = \"arch-ctm\"\nteam = \"demo\"\n",
    );
    let composer = team.composer();
    let args = [
        "--composer",
        &composer,
        "-c",
        "developer_instructions=\"USER-RULE: answer in one line.\"",
    ];
    let mut live = Live::start_with(mock_config(), &args, &team.env());
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let before = git(&cwd, &["branch", "--show-current"]);
    let checkout_in = cwd.clone();
    live.acplb
        .client(&updates, async |cx| {
            let (_, session) = open_session(&cx, &cwd).await?;
            let first = tokio::time::timeout(TURN_LIMIT, prompt(&cx, &session.session_id, "hello"))
                .await
                .unwrap()?;
            git(&checkout_in, &["checkout", "-q", "-b", "feature/atm-refresh"]);
            let second = tokio::time::timeout(TURN_LIMIT, prompt(&cx, &session.session_id, "again"))
                .await
                .unwrap()?;
            assert_end_turn(&first.stop_reason);
            assert_end_turn(&second.stop_reason);
            Ok(())
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let requests = live.mock.requests();
    assert_eq!(requests.len(), 2);
    let developer = |n: usize| -> Vec<String> {
        requests[n]
            .input()
            .iter()
            .filter(|item| item["role"] == "developer")
            .flat_map(|item| item["content"].as_array().cloned().unwrap_or_default())
            .filter_map(|part| part["text"].as_str().map(str::to_owned))
            .collect()
    };
    // The user's own developer instructions come first, the block after them: in one message
    // on exec; on app-server the thread started before the first prompt (with the user's own)
    // and the block follows as a developer message of its own.
    let messages = developer(0);
    let at = messages
        .iter()
        .position(|t| t.contains("<session-context>"))
        .unwrap_or_else(|| panic!("no context block in {messages:?}"));
    let block = if crate::harness::transport() == "exec" {
        let (users, block) = messages[at].split_once("\n\n").unwrap();
        assert_eq!(users, "USER-RULE: answer in one line.");
        block.to_owned()
    } else {
        let users = messages
            .iter()
            .position(|t| t.starts_with("USER-RULE: answer in one line."))
            .unwrap_or_else(|| panic!("no user rule in {messages:?}"));
        assert!(users < at, "the user's own first: {messages:?}");
        messages[at].clone()
    };
    assert!(
        block.starts_with("<session-context>\nIdentity:  arch-ctm\nTeam:      demo\nRepo:      repo ("),
        "{block}"
    );
    assert!(block.contains(&format!("Branch:    {before}\n")), "{block}");
    // Turn 2 continues the thread: Codex keeps the first developer message, so the fresh block
    // is news for this turn. A resumed `codex exec` takes it after the prompt; app-server gets
    // it as a developer message added to the thread, and the prompt stays the user's own.
    assert!(
        developer(1)
            .iter()
            .any(|t| t.starts_with("USER-RULE: answer in one line."))
    );
    let prompt = requests[1].user_texts().pop().unwrap();
    let block = if crate::harness::transport() == "exec" {
        let (text, block) = prompt.split_once("\n\n").unwrap();
        assert_eq!(text, "again");
        block.to_owned()
    } else {
        assert_eq!(prompt, "again");
        developer(1)
            .into_iter()
            .rev()
            .find(|t| t.starts_with("<session-context>"))
            .unwrap_or_else(|| panic!("no fresh block in {:?}", developer(1)))
    };
    assert!(
        block.starts_with("<session-context>\nIdentity:  arch-ctm\n"),
        "{block}"
    );
    assert!(block.contains("Branch:    feature/atm-refresh\n"), "{block}");
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}
