//! A live setup for end-to-end tests: the project's mock model on 127.0.0.1, a temporary
//! `CODEX_HOME` and git workspace for the real Codex CLI, and `acplb` pointed at that Codex.

use std::path::PathBuf;

use acplb_playback::mock_model::codex_env::{CodexTestEnv, codex_binary};
use acplb_playback::mock_model::{MockConfig, MockModel, MockModelHandle};
use agent_client_protocol::v1::schema::{SessionId, SetSessionModeRequest, StopReason};

use crate::harness::{Acplb, Updates, processes_with_env};

pub struct Live {
    pub mock: MockModelHandle,
    pub env: CodexTestEnv,
    pub acplb: Acplb,
    pub updates: Updates,
    /// How acplb was started, for [`Live::respawn`].
    args: Vec<String>,
    vars: Vec<(String, String)>,
}

impl Live {
    /// Starts everything; fails (not skips) when the pinned Codex is not installed.
    pub fn start() -> Live {
        Live::start_with(MockConfig::default(), &[], &[])
    }

    /// Like [`Live::start`], with this mock configuration (own scenarios, say), extra acplb
    /// arguments and extra environment for acplb.
    pub fn start_with(config: MockConfig, extra_args: &[&str], extra_env: &[(String, String)]) -> Live {
        let mock = MockModel::start(config).expect("the mock model starts");
        Live::start_on(mock, extra_args, extra_env)
    }

    /// For tests that a secret stays out of everything acplb writes: acplb logging at `trace`
    /// (all it can say) and writing transcripts into the returned directory.
    pub fn start_traced() -> (Live, tempfile::TempDir) {
        let transcripts = tempfile::tempdir().expect("a transcript directory");
        let dir = transcripts.path().display().to_string();
        let trace = [("RUST_LOG".to_owned(), "trace".to_owned())];
        let live = Live::start_with(MockConfig::default(), &["--transcript-dir", &dir], &trace);
        (live, transcripts)
    }

    /// Like [`Live::start_with`], on a mock already started (so that acplb's arguments can name
    /// its address).
    pub fn start_on(mock: MockModelHandle, extra_args: &[&str], extra_env: &[(String, String)]) -> Live {
        if let Err(e) = codex_binary() {
            panic!("{e}");
        }
        let env = CodexTestEnv::new(mock.base_url()).expect("a codex test env");
        let mut vars: Vec<(String, String)> = env
            .env_vars()
            .into_iter()
            .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()))
            .collect();
        vars.push(("ACPLB_CODEX".into(), env.codex_path().display().to_string()));
        // A home of its own: the user's shell profile (which Codex's `bash -lc` reads) and
        // config stay out of the test.
        vars.push(("HOME".into(), env.root().display().to_string()));
        vars.extend(extra_env.iter().cloned());
        // In tests an unreachable model must fail fast instead of retrying forever.
        let mut args = vec!["-c", "features.unbounded_connection_retries=false"];
        args.extend(extra_args);
        let acplb = Acplb::spawn(&args, &vars, &env.workspace());
        Live {
            mock,
            env,
            acplb,
            updates: Updates::default(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            vars,
        }
    }

    /// Starts a new acplb as the last one was started (same Codex, mock model, home and state
    /// directory) in place of the old one, which must have exited or been killed; the updates
    /// seen so far are cleared.
    pub fn respawn(&mut self) {
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        self.acplb = Acplb::spawn(&args, &self.vars, &self.env.workspace());
        self.updates.clear();
    }

    /// Like [`Live::respawn`], with `extra` arguments after the first ones.
    pub fn respawn_with(&mut self, extra: &[&str]) {
        let mut args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        args.extend(extra);
        self.acplb = Acplb::spawn(&args, &self.vars, &self.env.workspace());
        self.updates.clear();
    }

    /// Like [`Live::respawn`], with acplb's stderr never read (`Acplb::spawn_stderr_unread`).
    pub fn respawn_stderr_unread(&mut self) {
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        self.acplb = Acplb::spawn_stderr_unread(&args, &self.vars, &self.env.workspace());
        self.updates.clear();
    }

    /// A second acplb started as this one was (same Codex, mock model, home and state
    /// directory), beside it.
    pub fn another(&self) -> Acplb {
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        Acplb::spawn(&args, &self.vars, &self.env.workspace())
    }

    /// acplb's state directory in this test (under its own home).
    pub fn state_dir(&self) -> PathBuf {
        self.env.root().join(".local/state/acplb")
    }

    pub fn workspace(&self) -> PathBuf {
        self.env.workspace()
    }

    /// The `thread-id` header of every request the mock model received, in order.
    pub fn thread_ids(&self) -> Vec<String> {
        self.mock
            .requests()
            .iter()
            .map(|r| r.header("thread-id").unwrap_or_default().to_owned())
            .collect()
    }

    /// `CODEX_HOME=<this test's home>`: every Codex process of this test has it.
    pub fn codex_marker(&self) -> String {
        format!("CODEX_HOME={}", self.env.home().display())
    }

    /// The warnings acplb logged about messages of Codex it did not know, once the client it
    /// ran has gone (acplb logs that the connection closed after everything a turn made it
    /// log, so none is still on its way).
    pub async fn codex_message_warnings(&self) -> Vec<String> {
        let closed = crate::harness::eventually(std::time::Duration::from_secs(10), || {
            self.acplb.stderr().contains("client connection closed")
        })
        .await;
        let stderr = self.acplb.stderr();
        assert!(closed, "acplb never said the client left; stderr:\n{stderr}");
        stderr
            .lines()
            .filter(|l| l.contains("ignoring unknown or malformed codex"))
            .map(str::to_owned)
            .collect()
    }

    /// Codex processes of this test still alive, with their command lines.
    pub fn codex_left(&self) -> Vec<String> {
        processes_with_env(&self.codex_marker())
            .into_iter()
            .map(|pid| {
                let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let cmd: Vec<String> = cmd
                    .split(|b| *b == 0)
                    .map(|p| String::from_utf8_lossy(p).into_owned())
                    .collect();
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                format!(
                    "{pid} {} [{}]",
                    cmd.join(" "),
                    stat.split_whitespace().take(8).collect::<Vec<_>>().join(" ")
                )
            })
            .collect()
    }
}

impl Live {
    /// Opens a session in `mode`, sends `blocks` as one prompt, closes the client and returns
    /// the prompt's result; the updates are in `self.updates`.
    pub async fn one_turn(
        &mut self,
        mode: &str,
        blocks: Vec<agent_client_protocol::v1::schema::ContentBlock>,
    ) -> Result<agent_client_protocol::v1::schema::PromptResponse, agent_client_protocol::Error> {
        let ws = self.workspace();
        let updates = self.updates.clone();
        self.acplb
            .client(&updates, async |cx| {
                let (_, s) = crate::harness::open_session(&cx, &ws).await?;
                if mode != "read-only" {
                    set_mode(&cx, &s.session_id, mode).await?;
                }
                let request =
                    agent_client_protocol::v1::schema::PromptRequest::new(s.session_id.clone(), blocks);
                Ok(cx.send_request(request).block_task().await)
            })
            .await
            .expect("the ACP session runs")
    }

    /// [`Live::one_turn`] with a text prompt.
    pub async fn one_text_turn(
        &mut self,
        mode: &str,
        text: &str,
    ) -> Result<agent_client_protocol::v1::schema::PromptResponse, agent_client_protocol::Error> {
        self.one_turn(mode, vec![text.into()]).await
    }
}

pub async fn set_mode(
    cx: &agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>,
    session: &SessionId,
    mode: &str,
) -> Result<(), agent_client_protocol::Error> {
    cx.send_request(SetSessionModeRequest::new(session.clone(), mode.to_owned()))
        .block_task()
        .await
        .map(|_| ())
}

pub fn assert_end_turn(stop: &StopReason) {
    assert_eq!(*stop, StopReason::EndTurn);
}
