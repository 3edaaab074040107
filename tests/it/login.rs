//! Signing in from the editor (ADR 0030), with the real Codex: `initialize` offers the ways in,
//! `authenticate` with an API key stores it in Codex (the next prompt carries it to the model),
//! `/status` shows who is signed in and never the key, `logout` signs out, and the key lands in
//! no file acplb wrote, no log and no command line. The ChatGPT device-code sign-in runs
//! against a stand-in for auth.openai.com on 127.0.0.1 (Codex 0.169 takes its address from
//! `CODEX_APP_SERVER_LOGIN_ISSUER`): its page and code reach the user as a URL elicitation, or
//! in the error when the client takes none; a code that expires and a sign-in declined half-way
//! end without anyone signed in.

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use acplb_playback::mock_model::MockConfig;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AuthenticateRequest, ClientCapabilities, CompleteElicitationNotification, CreateElicitationRequest,
    CreateElicitationResponse, ElicitationAcceptAction, ElicitationAction, ElicitationCapabilities,
    ElicitationUrlCapabilities, InitializeRequest, LogoutRequest, NewSessionRequest, StopReason,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, ByteStreams, Client, on_receive_notification, on_receive_request};
use serde_json::{Map, Value, json};
use tokio_util::compat::{TokioAsyncReadCompatExt as _, TokioAsyncWriteCompatExt as _};

use crate::harness::{Acplb, initialize_json, processes_with_env, prompt, transport};
use crate::live::Live;

/// A key no other test uses, shaped like an OpenAI key.
pub fn test_key() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("sk-acplbtest{}x{nanos}", std::process::id())
}

/// The mock provider takes Codex's OpenAI sign-in (an API key stored by `account/login/start`)
/// instead of its own key variable.
pub fn needs_openai_sign_in(home: &Path) {
    let config = home.join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    let text = text.replacen("env_key = \"MOCK_API_KEY\"\n", "requires_openai_auth = true\n", 1);
    assert!(text.contains("requires_openai_auth"), "{text}");
    std::fs::write(config, text).unwrap();
}

/// The `_meta` of an API-key `authenticate`.
pub fn key_meta(key: &str) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert("api-key".into(), json!(key));
    meta
}

/// Every file under `dir` whose bytes contain `needle`.
pub fn files_containing(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_containing(&path, needle));
        } else if std::fs::read(&path).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
        {
            found.push(path);
        }
    }
    found
}

/// The command lines of the live processes carrying `marker` in their environment.
fn command_lines(marker: &str) -> Vec<String> {
    processes_with_env(marker)
        .into_iter()
        .map(|pid| {
            String::from_utf8_lossy(&std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default())
                .replace('\0', " ")
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_key_signs_in_a_prompt_carries_it_status_shows_the_account_and_logout_signs_out() {
    let (mut live, transcripts) = Live::start_traced();
    needs_openai_sign_in(&live.env.home());
    let key = test_key();
    let app_server = transport() == "app-server";
    let (ws, home, marker) = (live.workspace(), live.env.home(), live.codex_marker());
    let updates = live.updates.clone();
    let seen_argv = Arc::new(Mutex::new(Vec::new()));
    let argv = seen_argv.clone();
    let k = key.clone();
    live.acplb
        .client(&updates, async |cx| {
            let init = initialize_json(&cx).await?;
            let ids: Vec<&str> = init["authMethods"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["id"].as_str().unwrap())
                .collect();
            // No terminal sign-in for a client that did not declare it.
            assert_eq!(ids, ["chatgpt-device-code", "api-key"], "{init}");
            assert!(init["agentCapabilities"]["auth"]["logout"].is_object(), "{init}");

            cx.send_request(AuthenticateRequest::new("api-key").meta(key_meta(&k)))
                .block_task()
                .await?;
            // Codex keeps the key in its own auth.json.
            let auth = std::fs::read_to_string(home.join("auth.json")).unwrap();
            assert!(auth.contains(&k), "Codex did not store the key");

            let s = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
            let r = prompt(&cx, &s.session_id, "hello").await?;
            assert_eq!(r.stop_reason, StopReason::EndTurn);
            argv.lock().unwrap().extend(command_lines(&marker));
            if app_server {
                updates.clear();
                prompt(&cx, &s.session_id, "/status").await?;
                let status = updates.agent_text();
                assert!(
                    status.contains("- Account: signed in with an API key"),
                    "{status}"
                );
                assert!(!status.contains(&k), "{status}");
            }
            cx.send_request(LogoutRequest::new()).block_task().await?;
            if app_server {
                updates.clear();
                prompt(&cx, &s.session_id, "/status").await?;
                let status = updates.agent_text();
                assert!(status.contains("- Account: not signed in"), "{status}");
            }
            Ok(())
        })
        .await
        .unwrap();
    // The prompt went to the model with the key Codex was given.
    let sent = live.mock.requests();
    assert!(
        sent.iter()
            .any(|r| r.header("authorization") == Some(&format!("Bearer {key}"))),
        "the model never saw the key"
    );
    let auth = std::fs::read_to_string(home.join("auth.json")).unwrap_or_default();
    assert!(!auth.contains(&key), "logout left the key in auth.json: {auth}");
    // Nowhere acplb writes: its log, its state (journals, registry), its transcripts; on no
    // command line.
    assert!(!live.acplb.stderr().contains(&key), "the key is in acplb's log");
    assert_eq!(files_containing(&live.state_dir(), &key), Vec::<PathBuf>::new());
    assert_eq!(files_containing(transcripts.path(), &key), Vec::<PathBuf>::new());
    let argv = seen_argv.lock().unwrap();
    assert!(!argv.is_empty(), "no Codex process was seen");
    assert!(argv.iter().all(|a| !a.contains(&key)), "{argv:?}");
    assert!(
        !std::fs::read_to_string(format!("/proc/{}/cmdline", live.acplb.pid))
            .unwrap_or_default()
            .contains(&key)
    );
}

/// The stand-in for auth.openai.com's device-code endpoints: hands out a code, answers "not
/// yet" (403) while the user has not entered it, then grants (after `approve`) or refuses with
/// 400, which is how the real one answers a code that expired.
pub struct Issuer {
    pub url: String,
    approved: Arc<AtomicBool>,
    expire: bool,
    polls: Arc<AtomicUsize>,
}

/// A ChatGPT id token for `user@example.com` (plan `plus`); unsigned, which Codex accepts.
const ID_TOKEN: &str = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJlbWFpbCI6InVzZXJAZXhhbXBsZS5jb20iLCJleHAiOjQxMDI0NDQ4MDAsImh0dHBzOi8vYXBpLm9wZW5haS5jb20vYXV0aCI6eyJjaGF0Z3B0X3BsYW5fdHlwZSI6InBsdXMiLCJjaGF0Z3B0X2FjY291bnRfaWQiOiJhY2MtMSIsImNoYXRncHRfdXNlcl9pZCI6InUxIn19.c2ln";

/// The code the stand-in hands out.
pub const USER_CODE: &str = "ACPL-1234";

impl Issuer {
    /// Serves on 127.0.0.1; `expire`: the code expires instead of being granted.
    pub fn start(expire: bool) -> Issuer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let approved = Arc::new(AtomicBool::new(false));
        let polls = Arc::new(AtomicUsize::new(0));
        let (ok, count) = (approved.clone(), polls.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let (path, _) = read_request(&mut stream);
                let (status, body) = if path.ends_with("/deviceauth/usercode") {
                    (
                        200,
                        json!({"device_auth_id": "dev-1", "user_code": USER_CODE, "interval": "1"}),
                    )
                } else if path.ends_with("/deviceauth/token") {
                    count.fetch_add(1, Ordering::SeqCst);
                    if expire {
                        (400, json!({"error": "expired_token"}))
                    } else if ok.load(Ordering::SeqCst) {
                        (
                            200,
                            json!({"authorization_code": "code-1", "code_challenge": "ch", "code_verifier": "ver"}),
                        )
                    } else {
                        (403, json!({"error": "authorization_pending"}))
                    }
                } else if path == "/oauth/token" {
                    (
                        200,
                        json!({"id_token": ID_TOKEN, "access_token": ID_TOKEN, "refresh_token": "rt-1"}),
                    )
                } else {
                    (404, json!({}))
                };
                let body = body.to_string();
                let head = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                stream.write_all(head.as_bytes()).ok();
                stream.write_all(body.as_bytes()).ok();
            }
        });
        Issuer {
            url,
            approved,
            expire,
            polls,
        }
    }

    /// The user entered the code.
    pub fn approve(&self) {
        self.approved.store(true, Ordering::SeqCst);
    }

    /// How often Codex asked whether the code was entered.
    pub fn polls(&self) -> usize {
        self.polls.load(Ordering::SeqCst)
    }

    /// acplb's environment so that its Codex signs in here.
    pub fn env(&self) -> Vec<(String, String)> {
        let _ = self.expire;
        vec![("CODEX_APP_SERVER_LOGIN_ISSUER".into(), self.url.clone())]
    }
}

/// Reads one HTTP request: its path and body.
fn read_request(stream: &mut std::net::TcpStream) -> (String, Vec<u8>) {
    let mut head = Vec::new();
    let mut byte = [0_u8; 1];
    while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let path = head.split_whitespace().nth(1).unwrap_or("").to_owned();
    let length = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse().unwrap_or(0))
        })
        .unwrap_or(0);
    let mut body = vec![0_u8; length];
    stream.read_exact(&mut body).ok();
    (path, body)
}

/// What the client did with URL elicitations.
#[derive(Clone, Default)]
pub struct Elicitations {
    pub asked: Arc<Mutex<Vec<Value>>>,
    pub completed: Arc<Mutex<Vec<String>>>,
}

/// Runs `main` as a client that takes URL elicitations, answering each with `accept` (then
/// calling `on_ask`, as a user entering the code would) or declining.
pub async fn eliciting_client<R: Send + 'static>(
    acplb: &mut Acplb,
    seen: &Elicitations,
    accept: bool,
    on_ask: impl Fn() + Send + Sync + 'static,
    main: impl AsyncFnOnce(ConnectionTo<Agent>) -> Result<R, agent_client_protocol::Error>,
) -> Result<R, agent_client_protocol::Error> {
    let stdin = acplb.child.stdin.take().unwrap();
    let stdout = acplb.child.stdout.take().unwrap();
    let (asked, completed) = (seen.asked.clone(), seen.completed.clone());
    Client
        .v1()
        .name("acplb-e2e-elicitation")
        .on_receive_request(
            async move |req: CreateElicitationRequest,
                        responder: Responder<CreateElicitationResponse>,
                        _cx| {
                asked.lock().unwrap().push(serde_json::to_value(&req).unwrap());
                let action = if accept {
                    on_ask();
                    ElicitationAction::Accept(ElicitationAcceptAction::new())
                } else {
                    ElicitationAction::Decline
                };
                responder.respond(CreateElicitationResponse::new(action))
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            async move |n: CompleteElicitationNotification, _cx| {
                completed.lock().unwrap().push(n.elicitation_id.to_string());
                Ok(())
            },
            on_receive_notification!(),
        )
        .connect_with(ByteStreams::new(stdin.compat_write(), stdout.compat()), main)
        .await
}

/// `initialize` with no client capabilities.
pub async fn initialize(cx: &ConnectionTo<Agent>) -> Result<(), agent_client_protocol::Error> {
    cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
        .block_task()
        .await
        .map(drop)
}

/// `initialize` declaring URL elicitation.
pub fn init_with_urls() -> InitializeRequest {
    InitializeRequest::new(ProtocolVersion::V1).client_capabilities(
        ClientCapabilities::new()
            .elicitation(ElicitationCapabilities::new().url(ElicitationUrlCapabilities::new())),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_code_reaches_the_user_as_a_url_elicitation_and_signs_in_with_chatgpt() {
    let issuer = Arc::new(Issuer::start(false));
    let mut live = Live::start_with(MockConfig::default(), &[], &issuer.env());
    let home = live.env.home();
    let seen = Elicitations::default();
    let approving = issuer.clone();
    eliciting_client(
        &mut live.acplb,
        &seen,
        true,
        move || approving.approve(),
        async |cx| {
            cx.send_request(init_with_urls()).block_task().await?;
            cx.send_request(AuthenticateRequest::new("chatgpt-device-code"))
                .block_task()
                .await?;
            Ok(())
        },
    )
    .await
    .unwrap();
    let asked = seen.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["mode"], "url");
    assert_eq!(asked[0]["url"], format!("{}/codex/device", issuer.url));
    assert!(
        asked[0]["message"].as_str().unwrap().contains(USER_CODE),
        "{asked:?}"
    );
    // The editor hears that the sign-in behind the page finished.
    let completed = seen.completed.lock().unwrap().clone();
    assert_eq!(completed, [asked[0]["elicitationId"].as_str().unwrap()]);
    let auth = std::fs::read_to_string(home.join("auth.json")).unwrap();
    assert!(auth.contains("\"auth_mode\": \"chatgpt\""), "{auth}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_elicitation_the_code_comes_in_the_error_and_choosing_again_waits_for_the_user() {
    let issuer = Issuer::start(false);
    let mut live = Live::start_with(MockConfig::default(), &[], &issuer.env());
    let home = live.env.home();
    let updates = live.updates.clone();
    live.acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            let err = cx
                .send_request(AuthenticateRequest::new("chatgpt-device-code"))
                .block_task()
                .await
                .unwrap_err();
            assert_eq!(i32::from(err.code), -32000, "{err:?}");
            assert!(
                err.message.contains(USER_CODE) && err.message.contains(&issuer.url),
                "{err:?}"
            );
            let data = err.data.unwrap();
            assert_eq!(data["reason"], "auth_required");
            assert_eq!(data["userCode"], USER_CODE);
            // The user enters the code; choosing the method again waits for that sign-in.
            issuer.approve();
            cx.send_request(AuthenticateRequest::new("chatgpt-device-code"))
                .block_task()
                .await?;
            Ok(())
        })
        .await
        .unwrap();
    let auth = std::fs::read_to_string(home.join("auth.json")).unwrap();
    assert!(auth.contains("\"auth_mode\": \"chatgpt\""), "{auth}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_with_its_own_key_needs_no_sign_in_and_status_says_so() {
    // The mock provider of the tests takes its key from `MOCK_API_KEY`: no OpenAI sign-in.
    let mut live = Live::start();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let app_server = transport() == "app-server";
    live.acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            let s = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
            // No `authenticate` first: the prompt just works.
            let r = prompt(&cx, &s.session_id, "hello").await?;
            assert_eq!(r.stop_reason, StopReason::EndTurn);
            if app_server {
                updates.clear();
                prompt(&cx, &s.session_id, "/status").await?;
                let status = updates.agent_text();
                assert!(
                    status.contains(
                        "- Account: not signed in; the configured model provider needs no OpenAI sign-in"
                    ),
                    "{status}"
                );
            }
            Ok(())
        })
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminal_sign_in_is_offered_to_clients_that_declare_it_and_acplb_login_runs_codex_login() {
    let mut live = Live::start();
    let updates = live.updates.clone();
    live.acplb
        .client(&updates, async |cx| {
            let mut caps = ClientCapabilities::new();
            caps.auth.terminal = true;
            let init = cx
                .send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
                .block_task()
                .await?;
            let init = serde_json::to_value(&init).unwrap();
            let terminal = &init["authMethods"][2];
            assert_eq!(terminal["id"], "codex-login", "{init}");
            assert_eq!(terminal["type"], "terminal", "{init}");
            assert_eq!(terminal["args"], json!(["login"]), "{init}");
            Ok(())
        })
        .await
        .unwrap();
    // What the client runs: `acplb login` with those args (here `status`, which needs no user).
    let status = |home: &Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_acplb"))
            .args(["login", "status"])
            .envs(live.env.env_vars())
            .env("ACPLB_CODEX", live.env.codex_path())
            .env("HOME", home)
            .output()
            .unwrap()
    };
    let out = status(live.env.root());
    assert!(!out.status.success(), "nobody is signed in yet");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Not logged in"),
        "{out:?}"
    );
    let key = test_key();
    std::fs::write(
        live.env.home().join("auth.json"),
        json!({"OPENAI_API_KEY": key, "auth_mode": "apikey"}).to_string(),
    )
    .unwrap();
    let out = status(live.env.root());
    assert!(out.status.success(), "{out:?}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains(&key));
}
