//! Requests no ACP handler took (ADR 0046): the TS codex-acp's vendor methods that `JetBrains`
//! AIR sends, answered with what acplb already does (`_session/rename`, `_session/archive`,
//! `_session/unarchive`, `session/set_model`, `authentication/status`, `authentication/logout`,
//! `_session/steering`) and `_session/list/subscribe`/`unsubscribe` (`list_watch.rs`); any other
//! `_`-method goes to the provider with the open session it names; anything else is a method
//! acplb does not have.

use agent_client_protocol::Client;
use agent_client_protocol::UntypedMessage;
use agent_client_protocol::v1::schema::{
    ArchiveSessionRequest, AuthStatusResponse, ClientCapabilities, ContentBlock, PromptRequest,
    SessionConfigOptionValue, SessionId, SetSessionConfigOptionRequest, SetSessionTitleRequest,
    UnarchiveSessionRequest,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::auth_updates::Signed;
use super::list_watch::{self, Ask};
use super::shelf::ShelfCommand;
use super::store::{Command, Store, send};
use crate::error::Reason;
use crate::error::wire::{self, reply};
use crate::provider::VendorFailure;
use crate::session::SessionMsg;

/// `{sessionId}`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Named {
    session_id: String,
}

/// `_session/rename {sessionId, title}`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Rename {
    session_id: String,
    title: String,
}

/// `session/set_model {sessionId, modelId}` (the TS peer's legacy model switch).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SetModel {
    session_id: String,
    model_id: String,
}

/// `_session/steering {sessionId, prompt, _meta?: {steering: {idleBehavior}}}`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Steering {
    session_id: String,
    prompt: Vec<ContentBlock>,
    #[serde(rename = "_meta", default)]
    meta: Option<Value>,
}

/// The `_meta` of `initialize`'s answer: `steering.supported`, whether `_session/steering` can
/// join a running turn (the TS peer's key); for a client that declares `JetBrains` AIR's
/// extension (`clientCapabilities._meta.jetbrains.air`), the AIR capabilities acplb answers as
/// the peer does (the runtime's own, then the provider's `provider_air`), and the goal control
/// when the provider offers goals (`goals`).
pub(super) fn initialize_meta(
    steer: bool,
    goals: bool,
    provider_air: &[&str],
    client: &ClientCapabilities,
) -> serde_json::Map<String, Value> {
    let mut meta = serde_json::Map::new();
    meta.insert("steering".to_owned(), json!({ "supported": steer }));
    if crate::capabilities::air(client).is_some() {
        let listed: Vec<&str> = AIR_CAPABILITIES.iter().chain(provider_air).copied().collect();
        let mut air = json!({ "version": 1, "capabilities": listed });
        if goals {
            air["goal"] = super::goal::capability_meta();
        }
        meta.insert("jetbrains".to_owned(), json!({ "air": air }));
    }
    meta
}

/// The AIR extensions acplb answers in the peer's shapes: vendor methods, the recommended
/// model and effort on their options (`session/options.rs`), file change reports
/// (`session/file_report.rs`) and typed session failures (`session/actor/failure.rs`).
const AIR_CAPABILITIES: [&str; 8] = [
    "codexHooks",
    "sessionBatchGet",
    "sessionArchive",
    "sessionRename",
    "sessionListSubscribe",
    crate::session::options::AIR_RECOMMENDED_VALUE,
    crate::session::file_report::CAPABILITY,
    crate::provider::AIR_SESSION_FAILURE,
];

/// `_session/list/subscribe {cwd}`.
#[derive(Deserialize)]
struct Subscribe {
    cwd: std::path::PathBuf,
}

/// `_session/list/unsubscribe {subscriptionId}`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Unsubscribe {
    subscription_id: String,
}

/// `{}`, the answer of the vendor methods that answer nothing.
fn nothing<T>(
    _: &str,
    answer: Result<T, agent_client_protocol::Error>,
) -> Result<Value, agent_client_protocol::Error> {
    answer.map(|_| json!({}))
}

impl Store {
    pub(super) fn vendor(
        &mut self,
        req: UntypedMessage,
        responder: Responder<Value>,
        cx: ConnectionTo<Client>,
    ) {
        let (method, params) = req.into_parts();
        match method.as_str() {
            "_session/rename" => self.with_params(&method, &params, responder, |store, p: Rename, r| {
                let req = SetSessionTitleRequest::new(p.session_id, p.title);
                store.on_shelf(ShelfCommand::Title {
                    req,
                    responder: r.wrap_params(nothing),
                });
            }),
            "_session/archive" => self.with_params(&method, &params, responder, |store, p: Named, r| {
                let req = ArchiveSessionRequest::new(p.session_id);
                store.on_shelf(ShelfCommand::Archive {
                    req,
                    responder: r.wrap_params(nothing),
                });
            }),
            "_session/unarchive" => self.with_params(&method, &params, responder, |store, p: Named, r| {
                let req = UnarchiveSessionRequest::new(p.session_id);
                store.on_shelf(ShelfCommand::Unarchive {
                    req,
                    responder: r.wrap_params(nothing),
                });
            }),
            "session/set_model" => self.with_params(&method, &params, responder, |store, p: SetModel, r| {
                let value = SessionConfigOptionValue::value_id(p.model_id);
                let req =
                    SetSessionConfigOptionRequest::new(p.session_id, crate::session::options::MODEL, value);
                store.on_command(Command::SetConfig {
                    req,
                    responder: r.wrap_params(nothing),
                });
            }),
            "authentication/status" => self.auth_status(
                responder
                    .wrap_params(|_, answer: Result<AuthStatusResponse, _>| answer.map(|s| peer_status(&s))),
            ),
            "authentication/logout" => self.logout(responder.wrap_params(nothing)),
            "_session/steering" => self.with_params(&method, &params, responder, |store, p: Steering, r| {
                store.steering(p, r);
            }),
            "_session/list/subscribe" => {
                self.with_params(&method, &params, responder, |store, p: Subscribe, r| {
                    store.subscribe_list(p.cwd, r, cx);
                });
            }
            "_session/list/unsubscribe" => {
                self.with_params(&method, &params, responder, |store, p: Unsubscribe, r| {
                    store.list_subs.remove(&p.subscription_id);
                    if let Some(watch) = &store.list_watch {
                        watch.send(Ask::Unsubscribe(p.subscription_id)).ok();
                    }
                    reply(r.respond(json!({})));
                });
            }
            m if m.starts_with('_') => self.to_provider(method, params, responder),
            _ => reply(responder.respond_with_error(wire::method_not_found(&method))),
        }
    }

    /// Runs `then` with the params read as `P`, or refuses them saying what is wrong.
    fn with_params<P: DeserializeOwned>(
        &mut self,
        method: &str,
        params: &Value,
        responder: Responder<Value>,
        then: impl FnOnce(&mut Self, P, Responder<Value>),
    ) {
        match P::deserialize(params) {
            Ok(p) => then(self, p, responder),
            Err(e) => reply(responder.respond_with_error(wire::invalid_params(
                Reason::InvalidParams,
                format!("invalid params for `{method}`: {e}"),
            ))),
        }
    }

    /// Starts a subscription of `cwd`'s session list (`list_watch.rs`), answered with its id once
    /// the rows it starts from are read.
    fn subscribe_list(
        &mut self,
        cwd: std::path::PathBuf,
        responder: Responder<Value>,
        cx: ConnectionTo<Client>,
    ) {
        if !cwd.is_absolute() {
            return reply(responder.respond_with_error(wire::invalid_params(
                Reason::InvalidParams,
                format!("`cwd` must be an absolute path, not `{}`", cwd.display()),
            )));
        }
        let Some(durability) = self.options.durability.clone() else {
            return reply(responder.respond_with_error(wire::internal(
                Reason::NotKept,
                "this acplb keeps no sessions, so there is no session list to watch",
            )));
        };
        if self.list_subs.len() >= list_watch::MAX {
            let error = wire::invalid_params(
                Reason::InvalidParams,
                format!(
                    "at most {} session list subscriptions per connection; unsubscribe one first",
                    list_watch::MAX
                ),
            );
            return reply(responder.respond_with_error(error));
        }
        let watch = self
            .list_watch
            .get_or_insert_with(|| list_watch::start(durability.state_dir.clone(), cx))
            .clone();
        let id = uuid::Uuid::new_v4().to_string();
        self.list_subs.insert(id.clone());
        let (ready, started) = tokio::sync::oneshot::channel();
        let asked = Ask::Subscribe {
            id: id.clone(),
            cwd,
            ready,
        };
        if watch.send(asked).is_err() {
            return reply(responder.respond_with_error(wire::internal(
                Reason::Internal,
                "the session list watcher has stopped",
            )));
        }
        tokio::task::spawn_local(async move {
            match started.await {
                Ok(()) => reply(responder.respond(json!({ "subscriptionId": id }))),
                Err(_) => reply(responder.respond_with_error(wire::internal(
                    Reason::Internal,
                    "the session list watcher has stopped",
                ))),
            }
        });
    }

    fn steering(&self, p: Steering, responder: Responder<Value>) {
        let idle = p
            .meta
            .as_ref()
            .and_then(|m| m.pointer("/steering/idleBehavior"))
            .and_then(Value::as_str);
        let Some(handle) = self.sessions.get(&SessionId::new(p.session_id.as_str())) else {
            return reply(responder.respond_with_error(wire::unknown_session(&p.session_id)));
        };
        if p.prompt.is_empty() {
            return reply(responder.respond_with_error(wire::invalid_params(
                Reason::InvalidParams,
                "`prompt` is empty; send at least one content block",
            )));
        }
        send(
            &handle.tx,
            SessionMsg::Steer {
                req: PromptRequest::new(p.session_id, p.prompt),
                prompt_required: idle == Some("promptRequired"),
                responder,
            },
        );
    }

    /// A `_`-method acplb does not answer itself: the provider's, with the session it names.
    fn to_provider(&self, method: String, params: Value, responder: Responder<Value>) {
        let named = match params.get("sessionId") {
            None => None,
            Some(Value::String(id)) => match self.sessions.get(&SessionId::new(id.as_str())) {
                Some(handle) => Some(handle.tx.clone()),
                None => return reply(responder.respond_with_error(wire::unknown_session(id))),
            },
            Some(_) => {
                return reply(responder.respond_with_error(wire::invalid_params(
                    Reason::InvalidParams,
                    format!("invalid params for `{method}`: `sessionId` must be a string"),
                )));
            }
        };
        let provider = self.provider.clone();
        tokio::task::spawn_local(async move {
            let session = match named {
                None => None,
                Some(tx) => {
                    let (answer, described) = tokio::sync::oneshot::channel();
                    send(&tx, SessionMsg::Describe { answer });
                    let Ok(s) = described.await else {
                        let stopped = wire::internal(Reason::SessionStopped, "this session has stopped");
                        return reply(responder.respond_with_error(stopped));
                    };
                    Some(s)
                }
            };
            let answer = provider.vendor_request(&method, &params, session.as_ref()).await;
            reply(match answer {
                Ok(value) => responder.respond(value),
                Err(VendorFailure::NotMine(m)) => responder.respond_with_error(wire::method_not_found(&m)),
                Err(VendorFailure::InvalidParams(why)) => responder.respond_with_error(wire::invalid_params(
                    Reason::InvalidParams,
                    format!("invalid params for `{method}`: {why}"),
                )),
                Err(VendorFailure::Failed(why)) => {
                    responder.respond_with_error(wire::internal(Reason::TurnFailed, &why))
                }
            });
        });
    }
}

/// `authentication/status` as the TS peer answers it: `{type}` of `unauthenticated`,
/// `api-key`, `chat-gpt` (with `email`) or `gateway` (with `name`).
fn peer_status(status: &AuthStatusResponse) -> Value {
    match Signed::of(status) {
        Signed::ApiKey(_) => json!({ "type": "api-key" }),
        Signed::Account(_, email) => json!({ "type": "chat-gpt", "email": email.unwrap_or_default() }),
        Signed::External(label) => json!({ "type": "gateway", "name": label }),
        Signed::Gateway => json!({ "type": "gateway", "name": "custom model provider" }),
        Signed::Nobody => json!({ "type": "unauthenticated" }),
    }
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::{AuthAccount, AuthState};

    use super::*;

    #[test]
    fn authentication_status_speaks_the_peers_shape() {
        let signed = |account: AuthAccount| {
            peer_status(&AuthStatusResponse::new(AuthState::Authenticated).accounts(vec![account]))
        };
        assert_eq!(
            peer_status(&AuthStatusResponse::new(AuthState::Unauthenticated)),
            json!({ "type": "unauthenticated" })
        );
        assert_eq!(
            signed(AuthAccount::new("OpenAI API key").active(true)),
            json!({ "type": "api-key" })
        );
        assert_eq!(
            signed(AuthAccount::new("ChatGPT Plus").email("a@example.org".to_owned())),
            json!({ "type": "chat-gpt", "email": "a@example.org" })
        );
        assert_eq!(
            signed(AuthAccount::new("Amazon Bedrock")),
            json!({ "type": "gateway", "name": "Amazon Bedrock" })
        );
        assert_eq!(
            peer_status(&AuthStatusResponse::new(AuthState::NotRequired)),
            json!({ "type": "gateway", "name": "custom model provider" })
        );
    }
}
