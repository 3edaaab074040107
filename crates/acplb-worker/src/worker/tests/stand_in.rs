//! The stand-in host of the worker's in-process tests: a real acplb server with no plugins
//! over a scripted provider (no Codex), and inbox files in a temporary team folder.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use acplb_atm::MailStore;
use acplb_core::CancellationToken;
use acplb_core::error::ProviderError;
use acplb_core::plugin::NoPlugins;
use acplb_core::provider::{
    ProviderAdapter, ProviderCapabilities, ProviderSession, SessionSetup, SessionSink, TurnOutcome,
    TurnRequest,
};
use acplb_core::runtime::{Durability, Server, ServerOptions};
use acplb_core::session::options::OptionCatalog;
use agent_client_protocol::v1::schema::{ContentChunk, SessionUpdate, StopReason};
use async_trait::async_trait;
use futures::future::LocalBoxFuture;
use tempfile::TempDir;

use crate::config::{AgentConfig, AgentName, Policy, WorkerSettings};
use crate::host::{Host, Started};
use crate::worker::Mailbox;

/// The words a test's messages are made of; a turn is known by the first one its prompt holds.
pub(super) const WORDS: [&str; 7] = ["first", "second", "third", "long", "hello", "crash", "broken"];

/// What the scripted provider does, shared by every server the host makes.
#[derive(Default)]
pub(super) struct Script {
    /// What happened, in order: `<agent> start <word>`, `<agent> end <word>`,
    /// `<agent> cancelled <word>`, `<agent> open`, `<agent> shutdown`.
    log: RefCell<Vec<String>>,
    /// Turns of a word wait for its gate (or their cancel).
    gates: RefCell<HashMap<&'static str, CancellationToken>>,
    /// What the provider's health check says (`None`: healthy).
    sick: RefCell<Option<String>>,
}

impl Script {
    pub(super) fn log(&self) -> Vec<String> {
        self.log.borrow().clone()
    }

    pub(super) fn count(&self, entry: &str) -> usize {
        self.log.borrow().iter().filter(|e| *e == entry).count()
    }

    fn push(&self, entry: String) {
        self.log.borrow_mut().push(entry);
    }

    /// Turns of `word` wait until [`Script::open`].
    pub(super) fn gate(&self, word: &'static str) {
        self.gates.borrow_mut().insert(word, CancellationToken::new());
    }

    pub(super) fn open(&self, word: &str) {
        if let Some(g) = self.gates.borrow().get(word) {
            g.cancel();
        }
    }

    /// From now on the provider's health check fails with `why`.
    pub(super) fn fall_sick(&self, why: &str) {
        *self.sick.borrow_mut() = Some(why.to_owned());
    }

    /// The provider's health check passes again.
    pub(super) fn get_well(&self) {
        *self.sick.borrow_mut() = None;
    }
}

/// The stand-in host.
pub(super) struct StandIn {
    pub(super) script: Rc<Script>,
    pub(super) dir: TempDir,
    state: PathBuf,
    /// When each start of each agent was asked for (tokio's clock).
    pub(super) starts: RefCell<Vec<(String, tokio::time::Instant)>>,
    /// The next starts that fail.
    pub(super) failing_starts: Cell<usize>,
}

impl StandIn {
    /// A host whose team `demo` has alice, bob, carol, dave and erin.
    pub(super) fn new() -> Rc<Self> {
        let dir = tempfile::tempdir().unwrap();
        let team = dir.path().join(".claude/teams/demo");
        std::fs::create_dir_all(team.join("inboxes")).unwrap();
        std::fs::write(
            team.join("config.json"),
            r#"{"name":"demo","members":[{"name":"alice"},{"name":"bob"},{"name":"carol"},{"name":"dave"},{"name":"erin"}]}"#,
        )
        .unwrap();
        let state = dir.path().join("state");
        std::fs::create_dir_all(&state).unwrap();
        Rc::new(Self {
            script: Rc::default(),
            dir,
            state,
            starts: RefCell::default(),
            failing_starts: Cell::new(0),
        })
    }

    /// A member of team `demo`, as Claude Code's file protocol has it.
    pub(super) fn teammate(&self, name: &str) -> MailStore {
        MailStore::new(self.dir.path().join(".claude"), name, "demo").unwrap()
    }

    /// The texts of the mail `to` holds from `from`, with whether each was read.
    pub(super) fn mail(&self, to: &str, from: &str) -> Vec<(String, bool)> {
        let path = self
            .dir
            .path()
            .join(format!(".claude/teams/demo/inboxes/{to}.json"));
        let Ok(text) = std::fs::read_to_string(path) else {
            return Vec::new();
        };
        let records: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
        records
            .iter()
            .filter(|r| r["from"] == from)
            .map(|r| (r["text"].as_str().unwrap().to_owned(), r["read"] == true))
            .collect()
    }

    /// How often `agent` was started.
    pub(super) fn started(&self, agent: &str) -> usize {
        self.starts.borrow().iter().filter(|(a, _)| a == agent).count()
    }

    /// The agent `name@demo` with `policy`, working in the temporary folder.
    pub(super) fn agent(&self, name: &str, policy: Policy) -> AgentConfig {
        AgentConfig {
            name: AgentName::parse(&format!("{name}@demo")).unwrap(),
            enabled: true,
            prompt_template: "{message}".into(),
            policy,
            max_concurrent: 2,
            cwd: self.dir.path().to_owned(),
            mode: "auto".into(),
            model: None,
            transport: None,
            composer: None,
            accept_from_non_members: false,
            origin: String::new(),
        }
    }
}

/// Settings for tests: no check or pause gets in the way unless a test asks for it.
pub(super) fn settings() -> WorkerSettings {
    WorkerSettings {
        health_check_interval: Duration::from_secs(3600),
        shutdown_timeout: Duration::from_secs(5),
        ..WorkerSettings::default()
    }
}

impl Host for StandIn {
    fn start<'a>(&'a self, agent: &'a AgentConfig) -> LocalBoxFuture<'a, Result<Started, String>> {
        Box::pin(async move {
            let name = agent.name.name().to_owned();
            self.starts
                .borrow_mut()
                .push((name.clone(), tokio::time::Instant::now()));
            if self.failing_starts.get() > 0 {
                self.failing_starts.set(self.failing_starts.get() - 1);
                return Err(format!("{name} cannot start (scripted)"));
            }
            let provider: Rc<dyn ProviderAdapter> = Rc::new(Scripted {
                agent: name.clone(),
                script: self.script.clone(),
            });
            let server = Server::new(
                provider.clone(),
                std::sync::Arc::new(NoPlugins),
                ServerOptions {
                    agent_name: "acplb-worker".into(),
                    agent_version: "test".into(),
                    shutdown_grace: Duration::from_secs(2),
                    output_flow: acplb_core::transport::OutputFlow::default(),
                    turn_timeout: None,
                    durability: Some(Durability {
                        state_dir: self.state.clone(),
                        journal_limit: 1 << 20,
                        registry: None,
                    }),
                },
            );
            let store = MailStore::new(self.dir.path().join(".claude"), &name, agent.name.team())
                .map_err(|e| e.to_string())?;
            Ok(Started {
                server,
                provider,
                mail: Mailbox::files(store),
            })
        })
    }

    fn state_dir(&self) -> &Path {
        &self.state
    }
}

/// The provider of one run of one agent.
struct Scripted {
    agent: String,
    script: Rc<Script>,
}

#[async_trait(?Send)]
impl ProviderAdapter for Scripted {
    fn capabilities(&self) -> ProviderCapabilities {
        ProviderCapabilities {
            catalog: OptionCatalog {
                models: vec![("model-a".into(), "Model A".into())],
                efforts: vec!["low".into()],
                model_efforts: Vec::new(),
                default_model: None,
                agent: "Scripted".into(),
                asks: false,
                steer: false,
                booleans: false,
                mode_meta: acplb_core::session::options::ModeMeta::Plain,
                refuses_plan: None,
                provider_modes: Vec::new(),
                initial_mode: None,
                recommended: acplb_core::session::options::Recommended::default(),
                recommendations: acplb_core::session::options::Recommendations::Hidden,
            },
            refuses_sse_mcp: None,
            commands: Vec::new(),
            air: Vec::new(),
        }
    }

    async fn open_session(&self, _setup: SessionSetup) -> Result<Box<dyn ProviderSession>, ProviderError> {
        self.script.push(format!("{} open", self.agent));
        Ok(Box::new(Session {
            agent: self.agent.clone(),
            script: self.script.clone(),
        }))
    }

    async fn shutdown(&self) {
        self.script.push(format!("{} shutdown", self.agent));
    }

    async fn health(&self) -> Result<(), String> {
        match self.script.sick.borrow().clone() {
            Some(why) => Err(why),
            None => Ok(()),
        }
    }
}

struct Session {
    agent: String,
    script: Rc<Script>,
}

#[async_trait(?Send)]
impl ProviderSession for Session {
    async fn run_turn(
        &mut self,
        turn: TurnRequest,
        sink: &dyn SessionSink,
        cancel: CancellationToken,
    ) -> Result<TurnOutcome, ProviderError> {
        let word = WORDS
            .into_iter()
            .find(|w| turn.prompt.text.contains(w))
            .unwrap_or("?");
        let (agent, script) = (&self.agent, &self.script);
        script.push(format!("{agent} start {word}"));
        let gate = script.gates.borrow().get(word).cloned();
        if let Some(gate) = gate {
            tokio::select! {
                biased;
                () = cancel.cancelled() => {
                    script.push(format!("{agent} cancelled {word}"));
                    return Ok(TurnOutcome { stop_reason: StopReason::Cancelled, usage: None });
                }
                () = gate.cancelled() => {}
            }
        }
        // As the runtime sees them: Codex gone mid-turn, and a turn Codex itself failed.
        match word {
            "crash" => {
                return Err(ProviderError::Exited {
                    program: "/stand-in/codex".into(),
                    status: "signal: 9 (SIGKILL)".into(),
                    stderr_tail: String::new(),
                });
            }
            "broken" => {
                return Err(ProviderError::turn_failed("the model refused"));
            }
            _ => {}
        }
        sink.update(SessionUpdate::AgentMessageChunk(ContentChunk::new(
            format!("{agent} answers {word}").into(),
        )));
        script.push(format!("{agent} end {word}"));
        Ok(TurnOutcome {
            stop_reason: StopReason::EndTurn,
            usage: None,
        })
    }
}
