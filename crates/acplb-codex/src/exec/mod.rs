//! The `codex exec --json` provider: one Codex process per turn, `exec resume <thread>` for
//! later turns, its JSONL decoded into session updates as it streams. It cannot fork a thread:
//! a forked session starts a new thread from the source's summary or digest.
//!
//! Everything here is only `codex exec`'s: the command line of a turn (`args.rs`), the decoder
//! of its JSONL (`decode.rs`) with what its stderr says Codex refused (`refusals.rs`), one
//! turn's stream (`turn.rs`) and the workspace snapshot that gives its diffs old texts
//! (`files.rs`). It stands on the crate's floor (options, prepare, outcome, render, items) and
//! knows nothing of `appserver/`.

use std::process::ExitStatus;
use std::time::Duration;

use acplb_core::CancellationToken;
use acplb_core::error::ProviderError;
use acplb_core::permission::Mode;
use acplb_core::provider::{
    ProviderCapabilities, ProviderSession, SessionSetup, SessionSink, TurnOutcome, TurnRequest, tell_user,
};
use acplb_core::secrets::KnownSecrets;
use acplb_core::transport::{Process, ProcessSpec, StdinMode};
use agent_client_protocol::v1::schema::{ContentBlock, ContentChunk, SessionUpdate, StopReason};
use async_trait::async_trait;

use self::args::TurnArgs;
use self::decode::{DecoderOptions, Totals};
use self::turn::{End, TurnStream};
use crate::caller::{BaseInstructions, Caller};
use crate::images::ImageFiles;
use crate::mcp;
use crate::options::{CodexOptions, SSE_REFUSAL, child_env};
use crate::outcome::{Ending, cancelled, outcome};
use crate::prepare::{Continuation, check_prompt, developer_instructions};
use crate::routing::Gateway;
use crate::transcript::Transcript;

mod args;
pub mod decode;
mod files;
mod refusals;
mod turn;

/// Opens the `codex exec` side of a session.
/// Sessions opened after an editor set a gateway (`providers/set`) send the model's traffic to it.
pub(crate) fn open_session(
    options: &CodexOptions,
    mut setup: SessionSetup,
    gateway: Option<Gateway>,
) -> Box<dyn ProviderSession> {
    // `codex exec` cannot fork a thread: a forked session starts a new one whose developer
    // instructions carry what the source conversation was (its summary or digest).
    let continuation = Continuation::take(&mut setup, false);
    let mut secrets = KnownSecrets::from_mcp_servers(&setup.mcp_servers);
    if let Some(gateway) = &gateway {
        secrets.extend(&gateway.secrets());
    }
    Box::new(CodexSession {
        options: options.clone(),
        secrets,
        gateway,
        setup,
        thread_id: continuation.thread,
        fallback: continuation.fallback,
        totals: Totals::default(),
        turns: 0,
    })
}

/// The capabilities of the exec transport: it cannot ask (Codex runs with approval `never`)
/// nor steer.
pub(crate) fn capabilities(catalog: acplb_core::session::options::OptionCatalog) -> ProviderCapabilities {
    ProviderCapabilities {
        catalog,
        refuses_sse_mcp: Some(SSE_REFUSAL.into()),
        commands: Vec::new(),
        // Exec shows a subagent's task only in `rawInput`, never as text.
        air: vec![
            crate::render::air::RAW_INPUT_RENDERING,
            crate::caller::AIR_INSTRUCTIONS,
        ],
    }
}

/// One ACP session's Codex thread.
#[derive(Debug)]
struct CodexSession {
    options: CodexOptions,
    setup: SessionSetup,
    /// The values of the session's MCP `env` and headers (and its gateway's), kept out of
    /// transcripts and logs.
    secrets: KnownSecrets,
    /// Where the model is reached, when the editor set it.
    gateway: Option<Gateway>,
    thread_id: Option<String>,
    /// While the thread of a loaded session has not been resumed yet: what the conversation
    /// was, for a new thread if Codex no longer has it.
    fallback: Option<String>,
    /// Codex reports token totals for the whole thread; the previous turn's, to subtract.
    totals: Totals,
    turns: u64,
}

#[async_trait(?Send)]
impl ProviderSession for CodexSession {
    async fn run_turn(
        &mut self,
        turn: TurnRequest,
        sink: &dyn SessionSink,
        cancel: CancellationToken,
    ) -> Result<TurnOutcome, ProviderError> {
        let app_server_only = if names(&turn.prompt.text, "/terminals") {
            Some(NO_TERMINALS)
        } else if names(&turn.prompt.text, "/goal") {
            Some(NO_GOALS)
        } else {
            None
        };
        if let Some(why) = app_server_only {
            // Offered on app-server only; typed here it says why instead of reaching the model.
            sink.update(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                ContentBlock::from(why.to_owned()),
            )));
            return Ok(TurnOutcome {
                stop_reason: StopReason::EndTurn,
                usage: None,
            });
        }
        let Some(context) = self.fallback.take() else {
            return self.run_once(turn, sink, cancel).await;
        };
        match self.run_once(turn.clone(), sink, cancel.clone()).await {
            Err(ProviderError::TurnFailed { message, .. }) if message.contains(NO_ROLLOUT) => {
                tracing::warn!(session = %self.setup.session_id, error = %message, "codex no longer has this session's thread; starting a new one");
                tell_user(
                    sink,
                    self.setup.client_shows_notices,
                    "Codex no longer has this conversation's thread; it continues in a new thread that starts from a summary of the earlier turns.",
                );
                self.thread_id = None;
                self.setup.developer_instructions.push(context);
                self.run_once(turn, sink, cancel).await
            }
            other => other,
        }
    }

    fn thread_id(&self) -> Option<String> {
        self.thread_id.clone()
    }
}

/// What `/terminals` answers on this transport.
pub(crate) const NO_TERMINALS: &str = "`/terminals` needs the app-server transport: with \
`--transport exec` every prompt runs in a `codex exec` of its own that ends with the turn, and \
every command with it, so no command runs in the background.\n";

/// What `/goal` answers on this transport.
pub(crate) const NO_GOALS: &str = "`/goal` needs the app-server transport: a goal is something \
Codex keeps working toward across turns of a running `codex app-server`, and with \
`--transport exec` every prompt runs in a `codex exec` of its own that ends with the turn.\n";

/// Whether a prompt is the slash command `command` (with or without arguments).
fn names(text: &str, command: &str) -> bool {
    text.trim_start()
        .strip_prefix(command)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(char::is_whitespace))
}

/// What `codex exec resume` says when it has no thread of that id (0.169.0).
const NO_ROLLOUT: &str = "no rollout found";

impl CodexSession {
    async fn run_once(
        &mut self,
        mut turn: TurnRequest,
        sink: &dyn SessionSink,
        cancel: CancellationToken,
    ) -> Result<TurnOutcome, ProviderError> {
        self.turns += 1;
        if self.thread_id.is_some() {
            // `codex exec resume` (0.169.0) replays the thread's first developer message and
            // ignores a changed `developer_instructions`: the prompt is the one channel a
            // resumed turn has for news.
            turn.prompt.text = with_notes(&turn.prompt.text, &turn.notes);
        }
        check_prompt(&turn.prompt.text)?;
        let images = ImageFiles::write(&turn.prompt.images).await?;
        let caller = Caller::of(&self.setup)?;
        let base = BaseInstructions::write(caller.base_instructions.clone()).await?;
        let mut transcript = Transcript::open(
            self.options.transcript_dir.as_deref(),
            &self.setup.session_id,
            self.turns,
            self.secrets.clone(),
        );
        let mut process = self.spawn(&turn, &images, (&caller, &base), &mut transcript)?;
        // Snapshot only when the turn may write; it runs while Codex starts up.
        let snapshot = (turn.mode != Mode::ReadOnly).then(|| {
            let cwd = self.setup.cwd.clone();
            tokio::task::spawn_local(async move { files::snapshot(&cwd, Duration::from_secs(5)).await })
        });
        let mut stream = TurnStream::new(
            DecoderOptions {
                cwd: self.setup.cwd.clone(),
                notices: self.setup.client_shows_notices,
                max_output_bytes: self.options.max_output_bytes,
                id_prefix: format!("t{}-", self.turns),
                terminal: self.setup.client_terminal_output,
                compaction: self.setup.client_compaction,
                plan_updates: self.setup.client_plan_updates,
                air: self.setup.client_air.clone(),
            },
            snapshot,
            transcript,
            self.secrets.clone(),
        );
        let status = loop {
            let event = tokio::select! {
                biased;
                () = cancel.cancelled() => {
                    process.stop(self.options.interrupt_grace).await;
                    if let Some(id) = stream.cancelled(sink) {
                        self.remember_thread(id);
                    }
                    tracing::info!(session = %self.setup.session_id, "turn cancelled; codex stopped");
                    return Ok(cancelled());
                }
                // Cancel-safe: waiting for the client to catch up holds no state, and
                // Process::next_event is cancel-safe. While the client is behind, Codex's
                // stdout is not read, so Codex blocks instead of acplb buffering its output.
                event = async {
                    sink.ready().await;
                    process.next_event().await
                } => event,
            };
            if let Some(status) = stream.on_event(event, sink).await {
                break status;
            }
        };
        let (end, thread) = stream.finish(sink);
        if end.is_none() {
            // Codex died without finishing the turn: what it started must not outlive it.
            process.kill_descendants().await;
        }
        if let Some(id) = thread {
            self.remember_thread(id);
        }
        self.outcome(end, status, &process)
    }

    fn spawn(
        &self,
        turn: &TurnRequest,
        images: &ImageFiles,
        (caller, base): (&Caller, &BaseInstructions),
        transcript: &mut Transcript,
    ) -> Result<Process, ProviderError> {
        let mut mcp = mcp::config(&self.setup.mcp_servers, self.options.mcp_launcher.as_ref())
            .map_err(ProviderError::Prepare)?;
        if let Some(gateway) = &self.gateway {
            gateway.add_to_exec(&mut mcp);
        }
        let args = args::build(&TurnArgs {
            user_overrides: &self.options.overrides,
            caller_overrides: &caller.overrides(),
            base_instructions_file: base.path(),
            profile: caller.profile.as_deref(),
            cwd: &self.setup.cwd,
            turn,
            mcp_overrides: &mcp.overrides,
            developer_instructions: developer_instructions(
                &self.options.overrides,
                caller.developer_instructions.as_deref(),
                &self.setup.developer_instructions,
                &turn.developer_instructions,
            ),
            images: images.paths(),
            add_dirs: &self.setup.additional_directories,
            resume_thread: self.thread_id.as_deref(),
        });
        tracing::debug!(session = %self.setup.session_id, ?args, "starting codex");
        transcript.start(&args, &self.setup.cwd, turn.prompt.text.len());
        let mut env = child_env(self.setup.env.iter().chain(&turn.env).cloned().collect());
        // The MCP secrets: in Codex's environment, never in `args` (see `mcp/`).
        env.extend(mcp.env);
        Process::spawn(ProcessSpec {
            program: self.options.program.clone(),
            args,
            cwd: self.setup.cwd.clone(),
            env,
            env_remove: vec!["RUST_LOG".into()],
            stdin: StdinMode::Bytes(turn.prompt.text.clone().into_bytes()),
            max_line_bytes: self.options.max_line_bytes,
            stderr_tail_bytes: 8 * 1024,
        })
    }

    fn remember_thread(&mut self, id: String) {
        if self.thread_id.as_deref() != Some(id.as_str()) {
            tracing::info!(session = %self.setup.session_id, thread = %id, "codex thread started");
        }
        self.thread_id = Some(id);
    }

    /// The turn's result from how its stream ended and how Codex exited.
    fn outcome(
        &mut self,
        end: Option<End>,
        status: ExitStatus,
        process: &Process,
    ) -> Result<TurnOutcome, ProviderError> {
        match end {
            Some(End::Completed(after)) => {
                let before = std::mem::replace(&mut self.totals, after);
                outcome(Ending::Completed { before, after }, &self.secrets)
            }
            Some(End::Failed {
                message,
                auth_required,
            }) => outcome(
                Ending::Failed {
                    message,
                    auth_required,
                    // `codex exec --json` says no more than the message.
                    kind: acplb_core::provider::FailureKind::default(),
                    incident: None,
                },
                &self.secrets,
            ),
            None => {
                // Raw process output: it reaches the editor and the log, so it is redacted.
                let stderr_tail = self.secrets.redact(&process.stderr_tail());
                Err(match headline(&stderr_tail) {
                    Some(message) if status.code() == Some(1) => ProviderError::turn_failed(message),
                    _ => ProviderError::Exited {
                        program: self.options.program.clone(),
                        status: status.to_string(),
                        stderr_tail,
                    },
                })
            }
        }
    }
}

/// The prompt with the plugins' news after the user's text, which stays first and unchanged.
fn with_notes(text: &str, notes: &[String]) -> String {
    let mut out = text.to_owned();
    for note in notes {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(note);
    }
    out
}

/// The most useful line of a failed Codex's stderr: its last `Error: ...` line.
fn headline(stderr_tail: &str) -> Option<String> {
    stderr_tail
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("Error: "))
        .map(|l| l.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn news_goes_after_the_users_text() {
        assert_eq!(with_notes("fix it", &[]), "fix it");
        assert_eq!(
            with_notes("fix it", &["mail waiting".into(), "new branch".into()]),
            "fix it\n\nmail waiting\n\nnew branch"
        );
        assert_eq!(with_notes("", &["x".into()]), "x");
    }

    #[test]
    fn only_the_app_server_commands_are_answered_here() {
        for yes in ["/terminals", "  /terminals stop 3", "/terminals\tclean"] {
            assert!(names(yes, "/terminals"), "{yes}");
        }
        for no in ["/terminalsx", "terminals", "run /terminals", "/status"] {
            assert!(!names(no, "/terminals"), "{no}");
        }
        assert!(names("/goal ship it", "/goal") && names("/goal", "/goal"));
        assert!(!names("/goals", "/goal") && !names("a /goal", "/goal"));
    }
}
