//! The scenario: one recorded session (client side, provider side, expected ACP output), its
//! validated form, and loading it from TOML with file and line in every error.
//!
//! The format is described in `dev-docs/scenarios.md`; [`toml_out`] writes it, [`lint`] finds
//! suspicious provider streams.

pub mod lint;
mod raw;

pub(crate) use raw::is_relative_inside;
pub mod toml_out;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::PlaybackError;

/// The only format version this playback reads and writes.
pub const VERSION: u32 = 1;

/// One recorded session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scenario {
    /// A short name (the file stem in the corpus).
    pub name: String,
    /// One or two sentences: what the scenario covers and how it was recorded.
    pub description: String,
    /// Arguments acplb ran with (no `--codex`, no `--transcript-dir`: playback sets those).
    pub acplb_args: Vec<String>,
    /// The Codex transport acplb used (a replay starts acplb with the same `--transport`).
    pub transport: Transport,
    /// The model Codex's own configuration named when the session was recorded (acplb shows it
    /// as the current model); a replay gives its Codex home that configuration. `None`: Codex's
    /// built-in default.
    pub codex_model: Option<String>,
    /// The files the session's workspace must hold when it starts.
    pub workspace: Workspace,
    /// What the client sends, in order.
    pub client: Vec<Step>,
    /// Answers to the agent's requests (e.g. `session/request_permission`), in order per method.
    pub answers: Vec<Answer>,
    /// Each Codex process acplb started, in the order it started them (`exec` transport).
    pub codex: Vec<ProviderRun>,
    /// Each `codex app-server` process acplb started, in order, with the turns it served
    /// (`app-server` transport).
    pub app_servers: Vec<AppServerRun>,
    /// The expected output of a replay: normalized JSON lines.
    pub expect: Vec<String>,
    /// Where the scenario was loaded from, for messages.
    pub source: Option<Source>,
}

/// The file a scenario came from and the lines of its parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// The file.
    pub path: PathBuf,
    /// Line of the `[expect]` table (where `--bless` rewrites), if present.
    pub expect_line: Option<usize>,
}

/// The workspace the session starts in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Workspace {
    /// Whether it is a git repository (acplb snapshots git workspaces for diffs).
    pub git: bool,
    /// Files relative to the workspace, with their contents.
    pub files: BTreeMap<String, String>,
}

/// One client action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// What must have arrived before the action.
    pub after: Option<After>,
    /// The action.
    pub action: Action,
    /// Line in the scenario file (0 when built in memory).
    pub line: usize,
}

/// A condition on what the agent has sent so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum After {
    /// The response to the client's request with this id.
    Response(Value),
    /// A `tool_call` update with this title (placeholders allowed).
    ToolCall(String),
    /// At least this many messages from the agent.
    Messages(usize),
    /// At least `count` requests with this method from the agent (e.g. permission requests).
    Request {
        /// The request's method.
        method: String,
        /// How many must have arrived.
        count: usize,
    },
    /// The text of the agent's messages so far (every `agent_message_chunk`, joined) contains
    /// this: unlike a message count, this holds whatever else a decoder sends around it.
    Text(String),
    /// The inner condition, then this many milliseconds more (live recordings only, e.g. so a
    /// command has started before a cancel; never written to a scenario file).
    Paused(Box<After>, u64),
}

/// What the client does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Writes this JSON-RPC message (placeholders such as `<cwd>` and `<session-1>` replaced).
    Send(String),
    /// Closes acplb's stdin (the client disconnects).
    Close,
}

/// An answer to a request from the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The request's method.
    pub method: String,
    /// What to send back.
    pub reply: Reply,
    /// Line in the scenario file.
    pub line: usize,
}

/// How the client answers a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// This JSON `result`.
    Result(String),
    /// No answer at all (the client left a permission prompt open, e.g. until it cancelled).
    Never,
    /// The permission option of this kind among those offered (live recordings only).
    Pick(Pick),
}

/// Which permission option a scripted client picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// `allow_once`.
    AllowOnce,
    /// The option allowing for the rest of the session (its id or name says "session"), else
    /// the first `allow_always`.
    AllowSession,
    /// `reject_once`, else `reject_always`.
    Reject,
}

/// One Codex process: what it printed, when, and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderRun {
    /// The ACP session it belonged to (`<session-1>`, ...).
    pub session: String,
    /// The turn number within that session (1-based).
    pub turn: u64,
    /// What it did, in order.
    pub events: Vec<ProviderEvent>,
    /// How it ended.
    pub end: End,
    /// Line of its `[[codex]]` header.
    pub line: usize,
}

/// How acplb ran Codex.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Transport {
    /// One `codex exec --json` per turn (the format's only transport before app-server).
    #[default]
    Exec,
    /// One long-lived `codex app-server` shared by the sessions, spoken to over JSON-RPC.
    AppServer,
}

impl Transport {
    /// The spelling of acplb's `--transport` and of the scenario file.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Exec => "exec",
            Transport::AppServer => "app-server",
        }
    }
}

impl std::str::FromStr for Transport {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "exec" => Ok(Transport::Exec),
            "app-server" => Ok(Transport::AppServer),
            other => Err(format!(
                "unknown transport `{other}` (expected `exec` or `app-server`)"
            )),
        }
    }
}

/// One `codex app-server` process: its own exchange (`initialize`), its stderr, how it ended,
/// and the turns of each session it served.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppServerRun {
    /// Its arguments (without the program).
    pub argv: Vec<String>,
    /// The `initialize` exchange (`Sent`/`Recv`) and stderr lines, in order.
    pub events: Vec<ProviderEvent>,
    /// How it ended: `Cancelled` when acplb stopped it (written `stopped = true`).
    pub end: End,
    /// The turns it served, in the order they started.
    pub turns: Vec<AppTurn>,
    /// Line of its `[[app_server]]` header.
    pub line: usize,
}

/// One turn of one session on an app-server: the JSON-RPC messages of its thread, both ways.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppTurn {
    /// The ACP session (`<session-1>`, ...).
    pub session: String,
    /// The turn number within that session (1-based).
    pub turn: u64,
    /// The messages (`Sent`, `Recv`) and the file changes, in order; `t_ms` counts from the
    /// turn's start.
    pub events: Vec<ProviderEvent>,
    /// Line of its `[[app_server.turn]]` header.
    pub line: usize,
}

/// One thing a Codex process did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderEvent {
    /// Milliseconds after the process started.
    pub t_ms: u64,
    /// What happened.
    pub kind: EventKind,
    /// Line in the scenario file.
    pub line: usize,
}

/// What a Codex process did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventKind {
    /// A stdout line.
    Stdout(String),
    /// A stderr line.
    Stderr(String),
    /// Wrote a workspace file (relative path) with this content: a patch took effect.
    Write {
        /// Path relative to the workspace.
        path: String,
        /// New content.
        text: String,
    },
    /// Deleted a workspace file (relative path).
    Delete {
        /// Path relative to the workspace.
        path: String,
    },
    /// A JSON-RPC message acplb sent to app-server (transcript form: requests without ids,
    /// answers with the server's id).
    Sent(String),
    /// A JSON-RPC message app-server sent to acplb (results carry the request's `method`).
    Recv(String),
}

/// How a Codex process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum End {
    /// It exited with this code.
    Exit(i32),
    /// It was killed by this signal.
    Signal(i32),
    /// acplb cancelled the turn (interrupted Codex); the stand-in waits for the signal.
    Cancelled,
}

impl Scenario {
    /// Reads and validates a scenario file.
    pub fn load(path: &Path) -> Result<Scenario, PlaybackError> {
        let text = std::fs::read_to_string(path).map_err(PlaybackError::io(path))?;
        Scenario::parse(&text, path)
    }

    /// Parses and validates scenario text; `path` is used in messages.
    pub fn parse(text: &str, path: &Path) -> Result<Scenario, PlaybackError> {
        raw::parse(text, path)
    }

    /// The thread ids the provider side starts (`thread.started`, or the thread of a
    /// `thread/start` or `thread/resume` result), in order of first appearance.
    pub fn thread_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = Vec::new();
        let exec = self.codex.iter().flat_map(|r| &r.events);
        let app = self
            .app_servers
            .iter()
            .flat_map(|s| &s.turns)
            .flat_map(|t| &t.events);
        for event in exec.chain(app) {
            let id = match &event.kind {
                EventKind::Stdout(line) => thread_started(line),
                EventKind::Recv(line) => thread_opened(line),
                _ => None,
            };
            if let Some(id) = id
                && !ids.contains(&id)
            {
                ids.push(id);
            }
        }
        ids
    }

    /// The file name for messages (`<memory>` when not loaded from a file).
    pub fn path(&self) -> PathBuf {
        self.source
            .as_ref()
            .map_or_else(|| PathBuf::from("<memory>"), |s| s.path.clone())
    }
}

/// The thread id of a `thread.started` line.
pub fn thread_started(line: &str) -> Option<String> {
    if !line.contains("thread.started") {
        return None;
    }
    let value: Value = serde_json::from_str(line).ok()?;
    if value.get("type")?.as_str()? != "thread.started" {
        return None;
    }
    Some(value.get("thread_id")?.as_str()?.to_owned())
}

/// The thread id of an app-server `thread/start` or `thread/resume` result (transcript form).
pub fn thread_opened(line: &str) -> Option<String> {
    if !line.contains("\"thread/") {
        return None;
    }
    let value: Value = serde_json::from_str(line).ok()?;
    let method = value.get("method")?.as_str()?;
    if !matches!(method, "thread/start" | "thread/resume") {
        return None;
    }
    Some(value.pointer("/result/thread/id")?.as_str()?.to_owned())
}

#[cfg(test)]
mod tests;
