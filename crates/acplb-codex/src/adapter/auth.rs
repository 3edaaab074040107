//! Signing in to Codex from the editor (ADR 0030): the ways in `initialize` offers, and
//! `authenticate` and `logout` carried out through a `codex app-server` (the shared one on
//! app-server; on exec one of acplb's own, started for the question and stopped after it, as
//! for the model list).
//!
//! - `chatgpt-device-code`: Codex's ChatGPT sign-in by device code (no browser callback, so it
//!   works over SSH). The page and the code reach the user as a URL-mode elicitation when the
//!   client takes them (then `elicitation/complete` when Codex says the sign-in ended), else in
//!   the `auth_required` error itself; choosing the method again then waits for that sign-in.
//! - `api-key`: the key is `_meta["api-key"]` of the request, else `OPENAI_API_KEY` of acplb's
//!   environment; it goes to Codex over the app-server's stdin, never on a command line.
//! - `codex-login` (terminal auth, only for clients that declare it): the client runs
//!   `acplb login`, which runs `codex login` in the user's terminal.

use std::cell::RefCell;

use acplb_core::auth::{AuthFailure, SignInUi, UrlAnswer};
use agent_client_protocol::v1::schema::{
    AuthMethod, AuthMethodAgent, AuthMethodTerminal, ClientCapabilities,
};
use serde_json::{Map, Value, json};

use crate::appserver::AppServer;
use crate::appserver::account::{self, DeviceCode};
use crate::options::CodexOptions;

/// The ChatGPT sign-in by device code.
pub(crate) const DEVICE_CODE: &str = "chatgpt-device-code";
/// An OpenAI API key.
pub(crate) const API_KEY: &str = "api-key";
/// `codex login` in the client's terminal.
pub(crate) const TERMINAL: &str = "codex-login";
/// The methods a client passes to `authenticate`, as an `auth_required` error names them.
pub(crate) const CALLABLE: [&str; 2] = [DEVICE_CODE, API_KEY];
/// Where an `authenticate` request carries the API key.
const KEY_META: &str = "api-key";
/// The environment variable read when the request carries no key.
const KEY_ENV: &str = "OPENAI_API_KEY";

/// The ways in offered to a client with these capabilities.
pub(crate) fn methods(client: &ClientCapabilities) -> Vec<AuthMethod> {
    let mut methods = vec![
        AuthMethod::Agent(
            AuthMethodAgent::new(DEVICE_CODE, "Sign in with ChatGPT").description(
                "Opens a page where you enter a one-time code; works over SSH and in containers".to_owned(),
            ),
        ),
        AuthMethod::Agent(
            AuthMethodAgent::new(API_KEY, "Use an OpenAI API key").description(format!(
                "The key in the request's `_meta[\"{KEY_META}\"]`, else `{KEY_ENV}` of acplb's environment"
            )),
        ),
    ];
    if client.auth.terminal {
        methods.push(AuthMethod::Terminal(
            AuthMethodTerminal::new(TERMINAL, "Run `codex login` in a terminal")
                .args(vec!["login".to_owned()]),
        ));
    }
    methods
}

/// A device-code sign-in whose code went out in an error, waiting for the user.
#[derive(Debug)]
struct Pending {
    code: DeviceCode,
    server: AppServer,
    /// Whether `server` is acplb's own for the sign-in (stopped when it ends).
    own: bool,
}

/// Sign-ins and sign-outs of one acplb.
#[derive(Debug)]
pub(super) struct Auth {
    options: CodexOptions,
    pending: RefCell<Option<Pending>>,
}

impl Auth {
    pub(super) fn new(options: CodexOptions) -> Self {
        Self {
            options,
            pending: RefCell::new(None),
        }
    }

    /// The shared server, else one of acplb's own (`true`).
    fn server(&self, shared: Option<&AppServer>) -> (AppServer, bool) {
        match shared {
            Some(server) => (server.clone(), false),
            None => (
                AppServer::new(CodexOptions {
                    transcript_dir: None,
                    ..self.options.clone()
                }),
                true,
            ),
        }
    }

    /// `authenticate` with `method`.
    pub(super) async fn authenticate(
        &self,
        shared: Option<&AppServer>,
        method: &str,
        meta: &Map<String, Value>,
        ui: &dyn SignInUi,
    ) -> Result<(), AuthFailure> {
        match method {
            API_KEY => {
                let key = api_key(meta)?;
                let (server, own) = self.server(shared);
                let done = account::login_api_key(&server, &key).await;
                stop_own(server, own);
                done.map_err(AuthFailure::Failed)
            }
            DEVICE_CODE => self.device_code(shared, ui).await,
            TERMINAL => Err(AuthFailure::InvalidParams(format!(
                "`{TERMINAL}` is a terminal sign-in: the client runs `acplb login` itself instead of sending `authenticate`"
            ))),
            other => Err(AuthFailure::UnknownMethod {
                method: other.to_owned(),
                known: CALLABLE.iter().map(|m| (*m).to_owned()).collect(),
            }),
        }
    }

    async fn device_code(&self, shared: Option<&AppServer>, ui: &dyn SignInUi) -> Result<(), AuthFailure> {
        // Chosen again after its code went out in an error: wait for that sign-in.
        let earlier = self.pending.borrow_mut().take();
        if let Some(pending) = earlier {
            let done = wait(&pending.server, &pending.code, ui).await;
            stop_own(pending.server, pending.own);
            return done;
        }
        let (server, own) = self.server(shared);
        let code = match account::start_device_code(&server).await {
            Ok(code) => code,
            Err(e) => {
                stop_own(server, own);
                return Err(AuthFailure::Failed(e));
            }
        };
        let message = format!(
            "Sign in to ChatGPT: open {} and enter the code {}",
            code.url, code.code
        );
        if !ui.can_open_url() {
            let data = json!({ "verificationUrl": code.url, "userCode": code.code });
            *self.pending.borrow_mut() = Some(Pending { code, server, own });
            return Err(AuthFailure::ActionNeeded {
                message: format!("{message}, then choose \"Sign in with ChatGPT\" again"),
                data,
            });
        }
        let done = shown(&server, &code, &message, ui).await;
        stop_own(server, own);
        done
    }

    /// `logout`; a device-code sign-in waiting for the user is stopped too.
    /// Who is signed in (`auth/status`): `account/read` on the shared server or, on exec, a
    /// `codex app-server` of its own.
    pub(super) async fn status(
        &self,
        shared: Option<&AppServer>,
    ) -> Result<agent_client_protocol::v1::schema::AuthStatusResponse, AuthFailure> {
        let (server, own) = self.server(shared);
        let read = account::read(&server).await;
        stop_own(server, own);
        read.map(|a| a.status()).map_err(AuthFailure::Failed)
    }

    pub(super) async fn logout(&self, shared: Option<&AppServer>) -> Result<(), AuthFailure> {
        let earlier = self.pending.borrow_mut().take();
        if let Some(pending) = earlier {
            if let Err(e) = account::cancel(&pending.server, &pending.code.login_id).await {
                tracing::warn!(error = %e, "stopping a waiting sign-in failed");
            }
            stop_own(pending.server, pending.own);
        }
        let (server, own) = self.server(shared);
        let done = account::logout(&server).await;
        stop_own(server, own);
        done.map_err(AuthFailure::Failed)
    }
}

/// The API key of the request, else of acplb's environment.
fn api_key(meta: &Map<String, Value>) -> Result<String, AuthFailure> {
    let key = match meta.get(KEY_META) {
        Some(Value::String(key)) => key.trim().to_owned(),
        Some(_) => {
            return Err(AuthFailure::InvalidParams(format!(
                "`_meta[\"{KEY_META}\"]` must be a string: the API key"
            )));
        }
        None => std::env::var(KEY_ENV).unwrap_or_default().trim().to_owned(),
    };
    if key.is_empty() {
        return Err(AuthFailure::InvalidParams(format!(
            "no API key: put it in the request's `_meta[\"{KEY_META}\"]`, or set `{KEY_ENV}` where acplb starts"
        )));
    }
    if key.chars().any(char::is_control) {
        return Err(AuthFailure::InvalidParams(
            "the API key holds control characters".into(),
        ));
    }
    Ok(key)
}

/// The page went to the editor: waits for the sign-in to end, for the user to decline it, or
/// for the client to cancel the request.
async fn shown(
    server: &AppServer,
    code: &DeviceCode,
    message: &str,
    ui: &dyn SignInUi,
) -> Result<(), AuthFailure> {
    let ended = account::ended(server, &code.login_id);
    tokio::pin!(ended);
    let answer = tokio::select! {
        done = &mut ended => {
            ui.completed();
            return done.map_err(AuthFailure::Failed);
        }
        answer = ui.open_url(&code.url, message) => answer,
        () = ui.cancelled() => return stop(server, code, "the client cancelled the sign-in").await,
    };
    match answer {
        UrlAnswer::Accepted => {
            let done = tokio::select! {
                done = ended => done.map_err(AuthFailure::Failed),
                () = ui.cancelled() => stop(server, code, "the client cancelled the sign-in").await,
            };
            ui.completed();
            done
        }
        UrlAnswer::Declined => stop(server, code, "the sign-in was declined").await,
        UrlAnswer::Failed(why) => {
            stop(
                server,
                code,
                &format!("the client could not show the sign-in page ({why})"),
            )
            .await
        }
    }
}

/// Waits for a sign-in whose code went out earlier, or for the client to cancel the request.
async fn wait(server: &AppServer, code: &DeviceCode, ui: &dyn SignInUi) -> Result<(), AuthFailure> {
    tokio::select! {
        done = account::ended(server, &code.login_id) => done.map_err(AuthFailure::Failed),
        () = ui.cancelled() => stop(server, code, "the client cancelled the sign-in").await,
    }
}

/// Stops sign-in `code` (`account/login/cancel`); the failure that says `why`.
async fn stop(server: &AppServer, code: &DeviceCode, why: &str) -> Result<(), AuthFailure> {
    if let Err(e) = account::cancel(server, &code.login_id).await {
        tracing::warn!(error = %e, "stopping a sign-in failed");
    }
    Err(AuthFailure::Failed(format!("{why}; nobody was signed in")))
}

/// Stops acplb's own server behind the answer.
fn stop_own(server: AppServer, own: bool) {
    if own {
        tokio::task::spawn_local(async move { server.shutdown().await });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_comes_from_meta_and_an_empty_or_odd_one_is_refused() {
        let meta = |v: Value| {
            let mut m = Map::new();
            m.insert(KEY_META.into(), v);
            m
        };
        assert_eq!(api_key(&meta(json!(" sk-1 "))).unwrap(), "sk-1");
        for bad in [json!(""), json!("   "), json!(42), json!("sk\n1")] {
            let e = api_key(&meta(bad.clone())).unwrap_err();
            assert!(matches!(e, AuthFailure::InvalidParams(_)), "{bad}: {e:?}");
            assert!(!e.to_string().contains("sk"), "{e}");
        }
    }

    #[test]
    fn terminal_sign_in_is_offered_only_to_clients_that_declare_it() {
        let plain = methods(&ClientCapabilities::default());
        let ids: Vec<_> = plain.iter().map(|m| m.id().to_string()).collect();
        assert_eq!(ids, [DEVICE_CODE, API_KEY]);
        let mut caps = ClientCapabilities::default();
        caps.auth.terminal = true;
        let with_terminal = serde_json::to_value(methods(&caps)).unwrap();
        assert_eq!(with_terminal[2]["type"], "terminal");
        assert_eq!(with_terminal[2]["args"], json!(["login"]));
    }
}
