//! The end-to-end harness: the real `acplb` binary over real stdio, driven by the ACP SDK's
//! client role, with its stderr kept for failure messages.

use std::any::Any;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CreateElicitationResponse, InitializeRequest, InitializeResponse, NewSessionRequest, NewSessionResponse,
    PromptRequest, PromptResponse, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SessionId, SessionNotification, SessionUpdate,
};
use agent_client_protocol::{Agent, ByteStreams, Client, on_receive_notification, on_receive_request};
use tokio::io::AsyncReadExt as _;
use tokio::process::{Child, Command};
use tokio_util::compat::{TokioAsyncReadCompatExt as _, TokioAsyncWriteCompatExt as _};

/// The Codex transport acplb runs with in this test run (`ACPLB_TRANSPORT`, else the default,
/// as for acplb an empty value names none): `scripts/test` runs the end-to-end suite once on each.
pub fn transport() -> String {
    std::env::var("ACPLB_TRANSPORT")
        .ok()
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| "app-server".into())
}

/// A test's client body with its types erased (see [`Acplb::client`]).
type ErasedMain<'a> = Box<
    dyn FnOnce(
            ConnectionTo<Agent>,
        )
            -> Pin<Box<dyn Future<Output = Result<Box<dyn Any>, agent_client_protocol::Error>> + 'a>>
        + 'a,
>;

/// Every `session/update` the client received, in order.
#[derive(Clone, Default)]
pub struct Updates(Arc<Mutex<Vec<SessionNotification>>>);

impl Updates {
    pub fn all(&self) -> Vec<SessionUpdate> {
        self.0.lock().unwrap().iter().map(|n| n.update.clone()).collect()
    }

    pub fn json(&self) -> Vec<serde_json::Value> {
        self.all()
            .iter()
            .map(|u| serde_json::to_value(u).unwrap())
            .collect()
    }

    /// Updates of one `sessionUpdate` kind, as JSON.
    pub fn of_kind(&self, kind: &str) -> Vec<serde_json::Value> {
        self.json()
            .into_iter()
            .filter(|u| u["sessionUpdate"] == kind)
            .collect()
    }

    /// The concatenated agent message text.
    pub fn agent_text(&self) -> String {
        self.of_kind("agent_message_chunk")
            .iter()
            .filter_map(|u| u["content"]["text"].as_str())
            .collect()
    }

    /// The concatenated text of the user's messages (a loaded session's prompts).
    pub fn user_text(&self) -> String {
        self.of_kind("user_message_chunk")
            .iter()
            .filter_map(|u| u["content"]["text"].as_str())
            .collect()
    }

    /// Whether the tool call titled `title` was shown and then closed as failed.
    pub fn closed_as_failed(&self, title: &str) -> bool {
        let Some(call) = self
            .of_kind("tool_call")
            .into_iter()
            .find(|c| c["title"] == title)
        else {
            return false;
        };
        self.of_kind("tool_call_update")
            .into_iter()
            .any(|u| u["toolCallId"] == call["toolCallId"] && u["status"] == "failed")
    }

    pub fn clear(&self) {
        self.0.lock().unwrap().clear();
    }

    /// Every update with the id of its session, as JSON.
    pub fn all_with_sessions(&self) -> Vec<(String, serde_json::Value)> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|n| (n.session_id.to_string(), serde_json::to_value(&n.update).unwrap()))
            .collect()
    }
}

/// How the test client answers `session/request_permission`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The first option offered (what most editors highlight).
    First,
    /// The first option of this kind (`allow_once`, `allow_always`, `reject_once`, ...).
    Kind(agent_client_protocol::v1::schema::PermissionOptionKind),
    /// Never answers (the request stays pending until the session is cancelled).
    Never,
    /// Answers with a JSON-RPC error.
    Error,
}

/// The permission requests the client received, and how it answers them.
#[derive(Clone)]
pub struct Permissions {
    answer: Arc<Mutex<Answer>>,
    seen: Arc<Mutex<Vec<RequestPermissionRequest>>>,
    /// Requests held unanswered: each one's first option, and where its answer goes.
    held: Arc<Mutex<HeldPermissions>>,
}

type HeldPermissions = Vec<(
    Option<agent_client_protocol::v1::schema::PermissionOptionId>,
    agent_client_protocol::v1::Responder<RequestPermissionResponse>,
)>;

impl Default for Permissions {
    fn default() -> Self {
        Self {
            answer: Arc::new(Mutex::new(Answer::First)),
            seen: Arc::default(),
            held: Arc::default(),
        }
    }
}

impl Permissions {
    /// From now on, answers this way.
    pub fn answer(&self, answer: Answer) {
        *self.answer.lock().unwrap() = answer;
    }

    /// Answers every request held unanswered now with its first option, as a user who answers
    /// late; how many there were.
    pub fn allow_held(&self) -> usize {
        let held: Vec<_> = self.held.lock().unwrap().drain(..).collect();
        let n = held.len();
        for (first, responder) in held {
            let outcome = match first {
                Some(id) => RequestPermissionOutcome::Selected(
                    agent_client_protocol::v1::schema::SelectedPermissionOutcome::new(id),
                ),
                None => RequestPermissionOutcome::Cancelled,
            };
            let _late = responder.respond(RequestPermissionResponse::new(outcome));
        }
        n
    }

    /// Whether each request held unanswered ([`Answer::Never`]) was withdrawn by acplb
    /// (`$/cancel_request`), so the editor can close its dialog.
    pub fn held_withdrawn(&self) -> Vec<bool> {
        self.held
            .lock()
            .unwrap()
            .iter()
            .map(|(_, r)| r.cancellation().is_cancelled())
            .collect()
    }

    /// The requests received so far, as JSON.
    pub fn seen(&self) -> Vec<serde_json::Value> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .map(|r| serde_json::to_value(r).unwrap())
            .collect()
    }

    fn respond(
        &self,
        req: RequestPermissionRequest,
        responder: agent_client_protocol::v1::Responder<RequestPermissionResponse>,
    ) -> Result<(), agent_client_protocol::Error> {
        let answer = *self.answer.lock().unwrap();
        let pick = match answer {
            Answer::First => req.options.first(),
            Answer::Kind(kind) => req.options.iter().find(|o| o.kind == kind),
            Answer::Never => {
                let first = req.options.first().map(|o| o.option_id.clone());
                self.seen.lock().unwrap().push(req);
                self.held.lock().unwrap().push((first, responder));
                return Ok(());
            }
            Answer::Error => {
                self.seen.lock().unwrap().push(req);
                return responder.respond_with_error(
                    agent_client_protocol::Error::internal_error().data("the test client refuses"),
                );
            }
        }
        .map(|o| o.option_id.clone());
        self.seen.lock().unwrap().push(req);
        responder.respond(RequestPermissionResponse::new(match pick {
            Some(id) => RequestPermissionOutcome::Selected(
                agent_client_protocol::v1::schema::SelectedPermissionOutcome::new(id),
            ),
            None => RequestPermissionOutcome::Cancelled,
        }))
    }
}

/// How the test client answers `elicitation/create` (when it declared forms).
#[derive(Debug, Clone)]
pub enum FormAnswer {
    /// Accepts with this content (any object of ACP field values: the client may send what
    /// the form did not ask for, a hostile case).
    Accept(serde_json::Value),
    Decline,
    Cancel,
    /// Never answers (the request stays pending until the session is cancelled).
    Never,
    /// Answers with a JSON-RPC error.
    Error,
}

/// The forms the client was asked to fill in, and how it answers them.
#[derive(Clone)]
pub struct Forms {
    answer: Arc<Mutex<FormAnswer>>,
    seen: Arc<Mutex<Vec<serde_json::Value>>>,
    held: Arc<Mutex<Vec<agent_client_protocol::v1::Responder<CreateElicitationResponse>>>>,
}

impl Default for Forms {
    fn default() -> Self {
        Self {
            answer: Arc::new(Mutex::new(FormAnswer::Decline)),
            seen: Arc::default(),
            held: Arc::default(),
        }
    }
}

impl Forms {
    /// From now on, answers this way.
    pub fn answer(&self, answer: FormAnswer) {
        *self.answer.lock().unwrap() = answer;
    }

    /// The `elicitation/create` params received so far.
    pub fn seen(&self) -> Vec<serde_json::Value> {
        self.seen.lock().unwrap().clone()
    }

    /// Whether each form held unanswered ([`FormAnswer::Never`]) was withdrawn by acplb
    /// (`$/cancel_request`).
    pub fn held_withdrawn(&self) -> Vec<bool> {
        self.held
            .lock()
            .unwrap()
            .iter()
            .map(|r| r.cancellation().is_cancelled())
            .collect()
    }

    /// Answers every held form now, as a user who answers late; how many there were.
    pub fn release(&self, content: &serde_json::Value) -> usize {
        let held: Vec<_> = self.held.lock().unwrap().drain(..).collect();
        let count = held.len();
        for responder in held {
            let result = serde_json::json!({"action": "accept", "content": content});
            responder
                .respond(serde_json::from_value(result).expect("an ACP elicitation answer"))
                .expect("the answer is sent");
        }
        count
    }

    fn respond(
        &self,
        req: serde_json::Value,
        responder: agent_client_protocol::v1::Responder<CreateElicitationResponse>,
    ) -> Result<(), agent_client_protocol::Error> {
        self.seen.lock().unwrap().push(req);
        let answer = self.answer.lock().unwrap().clone();
        let result = match answer {
            FormAnswer::Accept(content) => serde_json::json!({"action": "accept", "content": content}),
            FormAnswer::Decline => serde_json::json!({"action": "decline"}),
            FormAnswer::Cancel => serde_json::json!({"action": "cancel"}),
            FormAnswer::Never => {
                self.held.lock().unwrap().push(responder);
                return Ok(());
            }
            FormAnswer::Error => {
                return responder.respond_with_error(
                    agent_client_protocol::Error::internal_error().data("the test client refuses"),
                );
            }
        };
        responder.respond(serde_json::from_value(result).expect("an ACP elicitation answer"))
    }
}

/// A running `acplb`.
pub struct Acplb {
    pub child: Child,
    pub pid: u32,
    stderr: Arc<Mutex<String>>,
    /// How this client answers permission requests, and what it was asked.
    pub permissions: Permissions,
    /// How this client answers forms (`elicitation/create`), and what it was asked.
    pub forms: Forms,
    /// The params of every `_auth/status_update` this client received, in order.
    pub auth_updates: Arc<Mutex<Vec<serde_json::Value>>>,
    /// Every other notification no typed handler took: its method and params, in order.
    pub vendor_notes: Arc<Mutex<Vec<(String, serde_json::Value)>>>,
    /// acplb's state directory when the test gave it no home of its own: sessions a test
    /// keeps never land in the user's.
    _state: Option<tempfile::TempDir>,
}

impl Acplb {
    /// Starts `acplb` with `args`, the given extra environment, in `dir`.
    pub fn spawn(args: &[&str], env: &[(String, String)], dir: &Path) -> Acplb {
        Self::spawn_reading(args, env, dir, true)
    }

    /// Like [`Acplb::spawn`], with its stderr held open and never read (a client that does not
    /// drain it); [`Acplb::unread_stderr`] takes it.
    pub fn spawn_stderr_unread(args: &[&str], env: &[(String, String)], dir: &Path) -> Acplb {
        Self::spawn_reading(args, env, dir, false)
    }

    /// The stderr a [`Acplb::spawn_stderr_unread`] left unread.
    pub fn unread_stderr(&mut self) -> Option<tokio::process::ChildStderr> {
        self.child.stderr.take()
    }

    fn spawn_reading(args: &[&str], env: &[(String, String)], dir: &Path, read: bool) -> Acplb {
        let has = |key: &str| env.iter().any(|(k, _)| k == key);
        let state = (!has("HOME") && !has("ACPLB_STATE_DIR"))
            .then(|| tempfile::tempdir().expect("a state directory"));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_acplb"));
        if let Some(state) = &state {
            cmd.env("ACPLB_STATE_DIR", state.path());
        }
        cmd.args(args)
            .env(
                "RUST_LOG",
                std::env::var("ACPLB_TEST_LOG").unwrap_or_else(|_| "info".into()),
            )
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("the acplb binary starts");
        let pid = child.id().expect("a pid");
        let stderr = Arc::new(Mutex::new(String::new()));
        let keep = stderr.clone();
        let pipe = if read { child.stderr.take() } else { None };
        tokio::spawn(async move {
            let Some(mut pipe) = pipe else { return };
            let mut buf = vec![0u8; 8192];
            while let Ok(n) = pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                keep.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Acplb {
            child,
            pid,
            stderr,
            permissions: Permissions::default(),
            forms: Forms::default(),
            auth_updates: Arc::default(),
            vendor_notes: Arc::default(),
            _state: state,
        }
    }

    /// What acplb wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// What acplb writes to stderr, readable while [`client`](Self::client) runs.
    pub fn stderr_reader(&self) -> impl Fn() -> String + Send + 'static {
        let stderr = self.stderr.clone();
        move || stderr.lock().unwrap().clone()
    }

    /// Runs `main` as an ACP client connected to this acplb's stdio; when `main` returns the
    /// client closes acplb's stdin.
    pub async fn client<R: Send + 'static>(
        &mut self,
        updates: &Updates,
        main: impl AsyncFnOnce(ConnectionTo<Agent>) -> Result<R, agent_client_protocol::Error>,
    ) -> Result<R, agent_client_protocol::Error> {
        let main: ErasedMain<'_> =
            Box::new(move |cx| Box::pin(async move { main(cx).await.map(|r| Box::new(r) as Box<dyn Any>) }));
        let out = self.erased_client(updates, main).await?;
        Ok(*out
            .downcast::<R>()
            .expect("erased_client hands back what main returned"))
    }

    /// [`Acplb::client`] without its type parameters, so the SDK's connection and handler
    /// machinery is compiled once for the whole suite instead of once per test (which made
    /// the test binary a gigabyte and its link slow).
    async fn erased_client(
        &mut self,
        updates: &Updates,
        main: ErasedMain<'_>,
    ) -> Result<Box<dyn Any>, agent_client_protocol::Error> {
        let stdin = self.child.stdin.take().expect("stdin not taken yet");
        let stdout = self.child.stdout.take().expect("stdout not taken yet");
        let transport = ByteStreams::new(stdin.compat_write(), stdout.compat());
        let sink = updates.clone();
        let permissions = self.permissions.clone();
        let forms = self.forms.clone();
        let auth_updates = self.auth_updates.clone();
        let vendor_notes = self.vendor_notes.clone();
        let air_tasks = (sink.clone(), vendor_notes.clone());
        Client
            .v1()
            .name("acplb-e2e")
            // First: AIR's own updates (`async_task_*`, `subagent_spawned`,
            // `subagent_state_update`) are no `SessionUpdate` the typed handler could read.
            // Kept with the vendor notes, with how many updates came first.
            .on_receive_notification(
                async move |n: agent_client_protocol::UntypedMessage, cx| {
                    let kind = n.params()["update"]["sessionUpdate"].as_str().unwrap_or_default();
                    let airs = kind.starts_with("async_task_")
                        || matches!(kind, "subagent_spawned" | "subagent_state_update");
                    if n.method() != "session/update" || !airs {
                        return Ok(agent_client_protocol::Handled::No {
                            message: (n, cx),
                            retry: false,
                        });
                    }
                    let mut note = n.params().clone();
                    note["seenAfter"] = serde_json::json!(air_tasks.0.0.lock().unwrap().len());
                    air_tasks.1.lock().unwrap().push((n.method().to_owned(), note));
                    Ok(agent_client_protocol::Handled::Yes)
                },
                on_receive_notification!(),
            )
            .on_receive_notification(
                async move |n: SessionNotification, _cx| {
                    sink.0.lock().unwrap().push(n);
                    Ok(())
                },
                on_receive_notification!(),
            )
            .on_receive_request(
                async move |req: RequestPermissionRequest,
                            responder: agent_client_protocol::v1::Responder<RequestPermissionResponse>,
                            _cx| { permissions.respond(req, responder) },
                on_receive_request!(),
            )
            .on_receive_request(
                async move |req: agent_client_protocol::v1::schema::CreateElicitationRequest,
                            responder: agent_client_protocol::v1::Responder<CreateElicitationResponse>,
                            _cx| {
                    forms.respond(serde_json::to_value(&req).unwrap(), responder)
                },
                on_receive_request!(),
            )
            // Last, so the typed handlers above take their messages first.
            .on_receive_notification(
                async move |n: agent_client_protocol::UntypedMessage, _cx| {
                    if n.method() == "_auth/status_update" {
                        auth_updates.lock().unwrap().push(n.params().clone());
                    } else {
                        let note = (n.method().to_owned(), n.params().clone());
                        vendor_notes.lock().unwrap().push(note);
                    }
                    Ok(())
                },
                on_receive_notification!(),
            )
            .connect_with(transport, async move |cx| main(cx).await)
            .await
    }

    /// Opens a session in `cwd` and sends it one prompt, `hello`; the prompt's result.
    pub async fn hello(&mut self, cwd: &Path) -> Result<PromptResponse, agent_client_protocol::Error> {
        self.client(&Updates::default(), async |cx| {
            let (_, s) = open_session(&cx, cwd).await?;
            Ok(prompt(&cx, &s.session_id, "hello").await)
        })
        .await
        .unwrap()
    }

    /// Waits for acplb to exit, at most `limit`; returns its exit code and how long it took.
    pub async fn wait_exit(&mut self, limit: Duration) -> (Option<i32>, Duration) {
        let start = Instant::now();
        if let Ok(Ok(status)) = tokio::time::timeout(limit, self.child.wait()).await {
            return (status.code(), start.elapsed());
        }
        self.child.start_kill().ok();
        panic!("acplb did not exit within {limit:?}; stderr:\n{}", self.stderr());
    }
}

/// `initialize` declaring form elicitation, then `session/new` in `cwd`.
pub async fn open_session_with_forms(
    cx: &ConnectionTo<Agent>,
    cwd: &Path,
) -> Result<NewSessionResponse, agent_client_protocol::Error> {
    use agent_client_protocol::v1::schema::{
        ClientCapabilities, ElicitationCapabilities, ElicitationFormCapabilities,
    };
    let caps = ClientCapabilities::new()
        .elicitation(ElicitationCapabilities::new().form(ElicitationFormCapabilities::new()));
    cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
        .block_task()
        .await?;
    cx.send_request(NewSessionRequest::new(cwd)).block_task().await
}

/// `initialize` then `session/new` in `cwd`.
pub async fn open_session(
    cx: &ConnectionTo<Agent>,
    cwd: &Path,
) -> Result<(InitializeResponse, NewSessionResponse), agent_client_protocol::Error> {
    let init = cx
        .send_request(InitializeRequest::new(ProtocolVersion::V1))
        .block_task()
        .await?;
    let session = cx.send_request(NewSessionRequest::new(cwd)).block_task().await?;
    Ok((init, session))
}

/// `initialize` declaring `caps` (the `clientCapabilities` JSON), then `session/new` in `cwd`;
/// the new session's id.
pub async fn open_session_as(
    cx: &ConnectionTo<Agent>,
    cwd: &Path,
    caps: serde_json::Value,
) -> Result<agent_client_protocol::v1::schema::SessionId, agent_client_protocol::Error> {
    let caps: agent_client_protocol::v1::schema::ClientCapabilities =
        serde_json::from_value(caps).expect("client capabilities");
    cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
        .block_task()
        .await?;
    Ok(cx
        .send_request(NewSessionRequest::new(cwd))
        .block_task()
        .await?
        .session_id)
}

/// `initialize` (protocol v1, no client capabilities); the answer as JSON.
pub async fn initialize_json(
    cx: &ConnectionTo<Agent>,
) -> Result<serde_json::Value, agent_client_protocol::Error> {
    let init = cx
        .send_request(InitializeRequest::new(ProtocolVersion::V1))
        .block_task()
        .await?;
    Ok(serde_json::to_value(&init).unwrap_or_default())
}

/// One text prompt.
pub async fn prompt(
    cx: &ConnectionTo<Agent>,
    session: &SessionId,
    text: &str,
) -> Result<PromptResponse, agent_client_protocol::Error> {
    cx.send_request(PromptRequest::new(session.clone(), vec![text.into()]))
        .block_task()
        .await
}

/// Live processes (not zombies) whose environment contains `marker`, e.g. a test's unique
/// `CODEX_HOME=...`: Codex processes a test left behind.
pub fn processes_with_env(marker: &str) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let has = environ.split(|b| *b == 0).any(|kv| kv == marker.as_bytes());
            let zombie =
                std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| s.contains(") Z "));
            has && !zombie
        })
        .collect()
}

/// Processes of this test's Codex still running, acplb itself and the shared `codex
/// app-server` aside (it lives as long as acplb): the commands and helpers of turns. Waits up
/// to `limit` for them to go (a killed command's wrapper exits a moment after it), and returns
/// what is still there.
pub async fn codex_work_left(marker: &str, acplb_pid: u32, limit: Duration) -> Vec<u32> {
    let list = || -> Vec<u32> {
        processes_with_env(marker)
            .into_iter()
            .filter(|p| *p != acplb_pid)
            .filter(|p| {
                let cmdline = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
                let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
                args.get(1) != Some(&b"app-server".as_slice())
            })
            .collect()
    };
    eventually(limit, || list().is_empty()).await;
    list()
}

/// Waits until the `sleep 30` tool call of `scenario:sleep` has been shown (panics after 30 s).
pub async fn until_sleeping(updates: &Updates) {
    let sleeping = || {
        updates
            .of_kind("tool_call")
            .iter()
            .any(|c| c["title"] == "sleep 30")
    };
    assert!(
        eventually(Duration::from_secs(30), sleeping).await,
        "sleep 30 never started"
    );
}

/// Polls `check` every 10 ms until it holds or `limit` passes; returns whether it held.
pub async fn eventually(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if check() {
            return true;
        }
        if start.elapsed() > limit {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
