//! `_session/goal` (and its legacy name `_codex/session/goal_control`), the TS codex-acp's
//! vendor method for a session's goal (ADR 0045): `{sessionId, action: "set", objective}` or
//! `{sessionId, action: "pause" | "resume" | "clear"}`, answered `{}`. The runtime knows no
//! goals: the request becomes the prompt `/goal …` of the session, which the provider answers
//! as it answers the editor's own `/goal` (a set or resume runs the goal's turns, streamed as
//! any prompt's, and is answered when they end; a pause or clear sent while a turn runs goes
//! into it, where the provider steers, and is answered when it ends). Only a provider that offers the `goal` slash
//! command takes it; the checks of the params are made here, before anything runs.

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{ContentBlock, PromptRequest, PromptResponse, SessionId, StopReason};
use agent_client_protocol::{JsonRpcRequest, JsonRpcResponse};
use serde::{Deserialize, Serialize};

use super::store::{Store, send};
use crate::error::Reason;
use crate::error::wire::{self, reply};
use crate::session::SessionMsg;

/// The method, and its legacy name.
const METHOD: &str = "_session/goal";
const LEGACY_METHOD: &str = "_codex/session/goal_control";

/// The name of the slash command a provider offers for goals.
const COMMAND: &str = "goal";

/// The longest objective taken (codex-acp's limit).
pub(crate) const MAX_OBJECTIVE: usize = 4000;

/// `_session/goal`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcRequest)]
#[request(method = "_session/goal", response = GoalResponse)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GoalRequest {
    pub(crate) session_id: SessionId,
    pub(crate) action: String,
    #[serde(default)]
    pub(crate) objective: Option<String>,
}

/// `_codex/session/goal_control`: the same request under codex-acp's older name.
#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcRequest)]
#[request(method = "_codex/session/goal_control", response = GoalResponse)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LegacyGoalRequest {
    pub(crate) session_id: SessionId,
    pub(crate) action: String,
    #[serde(default)]
    pub(crate) objective: Option<String>,
}

impl From<LegacyGoalRequest> for GoalRequest {
    fn from(req: LegacyGoalRequest) -> Self {
        Self {
            session_id: req.session_id,
            action: req.action,
            objective: req.objective,
        }
    }
}

/// `{}` as codex-acp answers, with how the goal's prompt ended.
#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcResponse)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GoalResponse {
    pub(crate) stop_reason: StopReason,
}

/// The actions, for the error that names them and for `initialize`'s `_meta.goal`.
pub(crate) const ACTIONS: [&str; 4] = ["set", "pause", "resume", "clear"];

/// What `initialize` advertises in `agentCapabilities._meta` when the provider offers goals.
pub(crate) fn capability_meta() -> serde_json::Value {
    serde_json::json!({
        "version": 1,
        "controlMethod": METHOD,
        "legacyControlMethod": LEGACY_METHOD,
        "actions": ACTIONS,
    })
}

/// Whether a provider offering `commands` takes goals.
pub(crate) fn offered(commands: &[agent_client_protocol::v1::schema::AvailableCommand]) -> bool {
    commands.iter().any(|c| c.name == COMMAND)
}

/// The prompt text the request stands for, or why the params are refused.
fn prompt_text(req: &GoalRequest) -> Result<String, String> {
    let objective = req.objective.as_deref();
    match req.action.as_str() {
        "set" => {
            let Some(objective) = objective else {
                return Err("`set` needs an `objective`: what Codex should work toward".into());
            };
            let objective = objective.trim();
            if objective.is_empty() {
                return Err("`objective` must not be blank".into());
            }
            if objective.chars().count() > MAX_OBJECTIVE {
                return Err(format!(
                    "`objective` is too long: at most {MAX_OBJECTIVE} characters"
                ));
            }
            if ACTIONS.contains(&objective.to_ascii_lowercase().as_str()) {
                return Err(format!(
                    "`objective` `{objective}` is an action's name; use `action: \"{}\"` for it",
                    objective.to_ascii_lowercase()
                ));
            }
            Ok(format!("/{COMMAND} {objective}"))
        }
        action @ ("pause" | "resume" | "clear") => match objective {
            Some(_) => Err(format!("`{action}` takes no `objective`")),
            None => Ok(format!("/{COMMAND} {action}")),
        },
        other => Err(format!(
            "unknown `action` `{other}`; it is one of: {}",
            ACTIONS.join(", ")
        )),
    }
}

impl Store {
    /// `_session/goal`: checked, then queued as the session's prompt `/goal …`; answered when
    /// that prompt is.
    pub(super) fn goal(&mut self, req: GoalRequest, responder: Responder<GoalResponse>) {
        let invalid = |why: String| wire::invalid_params(Reason::InvalidParams, why);
        if self.opening.contains_key(&req.session_id) {
            let why = format!(
                "session `{}` is still opening; send the goal once it has opened",
                req.session_id
            );
            return reply(responder.respond_with_error(wire::invalid_params(Reason::SessionOpening, why)));
        }
        let Some(handle) = self.sessions.get(&req.session_id) else {
            let why = format!("Unknown session: {}", req.session_id);
            return reply(responder.respond_with_error(invalid(why)));
        };
        if !offered(&self.capabilities.commands) {
            return reply(
                responder.respond_with_error(invalid(
                    "this session's agent offers no goals here (Codex: they need the app-server transport)"
                        .into(),
                )),
            );
        }
        let text = match prompt_text(&req) {
            Ok(text) => text,
            Err(why) => return reply(responder.respond_with_error(invalid(why))),
        };
        let responder = responder.wrap_params(|_, answer: Result<PromptResponse, _>| {
            answer.map(|done| GoalResponse {
                stop_reason: done.stop_reason,
            })
        });
        // A pause or clear acts on the goal's running turn, if one runs (steered into it, where
        // the provider steers); a set or resume waits for it, as a prompt does.
        let acts_now = matches!(req.action.as_str(), "pause" | "clear");
        let req = PromptRequest::new(req.session_id, vec![ContentBlock::from(text)]);
        send(
            &handle.tx,
            if acts_now {
                SessionMsg::Control { req, responder }
            } else {
                SessionMsg::Prompt { req, responder }
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(action: &str, objective: Option<&str>) -> GoalRequest {
        GoalRequest {
            session_id: SessionId::new("s"),
            action: action.into(),
            objective: objective.map(str::to_owned),
        }
    }

    #[test]
    fn actions_become_the_goal_command() {
        assert_eq!(
            prompt_text(&req("set", Some(" ship it "))).unwrap(),
            "/goal ship it"
        );
        assert_eq!(prompt_text(&req("pause", None)).unwrap(), "/goal pause");
        assert_eq!(prompt_text(&req("resume", None)).unwrap(), "/goal resume");
        assert_eq!(prompt_text(&req("clear", None)).unwrap(), "/goal clear");
    }

    #[test]
    fn bad_params_say_what_is_wrong() {
        let err = |a: &str, o: Option<&str>| prompt_text(&req(a, o)).unwrap_err();
        assert!(err("set", None).contains("needs an `objective`"));
        assert!(err("set", Some("  ")).contains("must not be blank"));
        let long = "x".repeat(MAX_OBJECTIVE + 1);
        assert!(err("set", Some(&long)).contains("too long"));
        assert!(err("set", Some("Pause")).contains("use `action: \"pause\"`"));
        assert!(err("pause", Some("x")).contains("takes no `objective`"));
        assert_eq!(
            err("stop", None),
            "unknown `action` `stop`; it is one of: set, pause, resume, clear"
        );
    }
}
