//! `session/set_title` and the `/rename <title>` slash command (ADR 0036): the title checked,
//! then stored where acplb keeps it (an open session's actor: a `session_info_update` to the
//! editor, its journal and the registry; a kept session open nowhere: its journal and registry
//! entry, held meanwhile; one another acplb has open is refused), then the provider's
//! conversation renamed (Codex's thread name), whose failure is told in `_meta`.

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, ContentBlock, PromptRequest, PromptResponse, SessionId,
    SetSessionTitleRequest, SetSessionTitleResponse, StopReason, UnstructuredCommandInput,
};

use super::durable::{self, READ_LIMIT};
use super::shelf::{not_found, refusal};
use super::store::{Store, send};
use crate::error::Reason;
use crate::error::wire::{self, reply};
use crate::session::SessionMsg;
use crate::sessions::shelf;

/// The longest title, in characters.
pub const TITLE_LIMIT: usize = 256;

/// The `_meta` key of a title's answer saying why the provider's conversation kept its name.
pub const THREAD_NOT_RENAMED: &str = "acplb/threadNotRenamed";

/// The `/rename` command, offered beside the provider's.
pub(crate) fn rename_command() -> AvailableCommand {
    AvailableCommand::new("rename", "Give this session a title").input(AvailableCommandInput::Unstructured(
        UnstructuredCommandInput::new("the new title"),
    ))
}

/// The provider's capabilities with `/rename` among its commands.
pub(crate) fn with_rename(
    mut capabilities: crate::provider::ProviderCapabilities,
) -> crate::provider::ProviderCapabilities {
    capabilities.commands.push(rename_command());
    capabilities
}

/// The title a prompt asks for, when it is `/rename ...` (one text block): `Some(text)`, the
/// text after the command (checked later, so a bare `/rename` gets the empty-title error).
pub(super) fn renames(prompt: &[ContentBlock]) -> Option<String> {
    let [ContentBlock::Text(text)] = prompt else {
        return None;
    };
    let rest = text.text.trim_start().strip_prefix("/rename")?;
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
        return None;
    }
    Some(rest.to_owned())
}

/// A title as stored: whitespace runs (newlines too) made one space, trimmed; empty, over
/// [`TITLE_LIMIT`] characters, or holding other control characters is refused (`-32602`).
pub(crate) fn normalize(title: &str) -> Result<String, String> {
    if let Some(c) = title.chars().find(|c| c.is_control() && !c.is_whitespace()) {
        return Err(format!(
            "the title holds a control character ({c:?}); use plain text"
        ));
    }
    let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
    if title.is_empty() {
        return Err("the title is empty; give the session a title of at least one visible character".into());
    }
    let count = title.chars().count();
    if count > TITLE_LIMIT {
        return Err(format!(
            "the title is {count} characters long; at most {TITLE_LIMIT} are kept"
        ));
    }
    Ok(title)
}

/// Where a title is answered: `session/set_title`, or a `/rename` prompt.
enum Titled {
    Request(Responder<SetSessionTitleResponse>),
    Prompt(Responder<PromptResponse>),
}

impl Titled {
    fn error(self, e: agent_client_protocol::Error) {
        match self {
            Titled::Request(r) => reply(r.respond_with_error(e)),
            Titled::Prompt(r) => reply(r.respond_with_error(e)),
        }
    }

    fn ok(self, title: String, meta: serde_json::Map<String, serde_json::Value>) {
        let meta = (!meta.is_empty()).then_some(meta);
        match self {
            Titled::Request(r) => reply(r.respond(SetSessionTitleResponse::new(title).meta(meta))),
            Titled::Prompt(r) => reply(r.respond(PromptResponse::new(StopReason::EndTurn).meta(meta))),
        }
    }
}

impl Store {
    /// `session/set_title`.
    pub(super) fn set_title(
        &mut self,
        req: SetSessionTitleRequest,
        responder: Responder<SetSessionTitleResponse>,
    ) {
        self.retitle(req.session_id, &req.title, Titled::Request(responder));
    }

    /// A prompt, to its open session; one that is `/rename ...` answered here, as a title,
    /// without a turn.
    pub(super) fn route_prompt(&mut self, req: PromptRequest, responder: Responder<PromptResponse>) {
        let Some(handle) = self.sessions.get(&req.session_id) else {
            return self.unknown(&req.session_id, responder);
        };
        match renames(&req.prompt) {
            Some(title) => self.retitle(req.session_id, &title, Titled::Prompt(responder)),
            None => send(&handle.tx, SessionMsg::Prompt { req, responder }),
        }
    }

    fn retitle(&mut self, id: SessionId, title: &str, answer: Titled) {
        let said = matches!(answer, Titled::Prompt(_));
        let title = match normalize(title) {
            Ok(t) => t,
            Err(e) => return answer.error(wire::invalid_params(Reason::InvalidParams, e)),
        };
        if self.opening.contains_key(&id) {
            return answer.error(wire::invalid_params(
                Reason::SessionOpening,
                format!("session `{id}` is still opening; set its title once it has opened"),
            ));
        }
        let provider = self.provider.clone();
        if let Some(handle) = self.sessions.get(&id) {
            let (tx, rx) = tokio::sync::oneshot::channel();
            send(
                &handle.tx,
                SessionMsg::SetTitle {
                    title: title.clone(),
                    said,
                    answer: tx,
                },
            );
            let registry = self.options.durability.as_ref().and_then(|d| d.registry.clone());
            tokio::task::spawn_local(async move {
                let Ok(thread) = rx.await else {
                    return answer.error(wire::internal(
                        Reason::SessionStopped,
                        "the session stopped before its title was set",
                    ));
                };
                if let Some(registry) = registry {
                    // Answered once stored: a `session/list` after the answer shows it.
                    registry.flush().await;
                }
                let meta = rename_thread(provider.as_ref(), thread, &title).await;
                answer.ok(title, meta);
            });
            return;
        }
        let Some(durability) = self.options.durability.clone() else {
            return answer.error(not_found(&id.to_string(), &format!("unknown session `{id}`")));
        };
        tokio::task::spawn_local(async move {
            let (state, owned, kept) = (durability.state_dir.clone(), id.to_string(), title.clone());
            let limit = durability.journal_limit;
            let stored = durable::off_loop("setting the session's title", READ_LIMIT, move || {
                shelf::retitle(&state, &owned, &kept, limit).map_err(|e| refusal(&e))
            })
            .await;
            match stored {
                Ok(thread) => {
                    tracing::info!(session = %id, "title set");
                    let meta = rename_thread(provider.as_ref(), thread, &title).await;
                    answer.ok(title, meta);
                }
                Err(e) => answer.error(e),
            }
        });
    }
}

/// The provider's conversation renamed, when there is one; its failure as `_meta`.
async fn rename_thread(
    provider: &dyn crate::provider::ProviderAdapter,
    thread: Option<String>,
    title: &str,
) -> serde_json::Map<String, serde_json::Value> {
    let mut meta = serde_json::Map::new();
    if let Some(thread) = thread
        && let Err(e) = provider.rename_thread(&thread, title).await
    {
        tracing::warn!(%thread, error = %e, "the provider's conversation kept its name");
        meta.insert(THREAD_NOT_RENAMED.into(), e.to_string().into());
    }
    meta
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_trimmed_and_bounded() {
        assert_eq!(normalize("  Fix\n the   bug ").unwrap(), "Fix the bug");
        assert!(normalize(" \n\t ").unwrap_err().contains("empty"));
        assert!(
            normalize(&"x".repeat(TITLE_LIMIT + 1))
                .unwrap_err()
                .contains("at most 256")
        );
        assert_eq!(
            normalize(&"é".repeat(TITLE_LIMIT)).unwrap().chars().count(),
            TITLE_LIMIT
        );
        assert!(
            normalize("a\u{1b}[31mb")
                .unwrap_err()
                .contains("control character")
        );
    }

    #[test]
    fn only_a_lone_rename_command_renames() {
        let p = |t: &str| vec![ContentBlock::from(t)];
        assert_eq!(renames(&p("/rename  Pelicans")).as_deref(), Some("  Pelicans"));
        assert_eq!(renames(&p("/rename")).as_deref(), Some(""));
        assert_eq!(renames(&p("/renamed x")), None);
        assert_eq!(renames(&p("please /rename x")), None);
        assert_eq!(
            renames(&[ContentBlock::from("/rename x"), ContentBlock::from("y")]),
            None
        );
    }
}
