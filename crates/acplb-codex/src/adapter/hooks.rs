//! `/hooks` and `/hooks trust` on both transports (ADR 0044): Codex runs a configured hook only
//! once the user trusted it, which until now took Codex's own terminal UI. `/hooks` lists the
//! session directory's hooks with what each runs, where it comes from and its trust; `/hooks
//! trust` trusts exactly the hooks that listing showed, each only if Codex still has it
//! unchanged, so nothing the user has not seen is ever trusted.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::path::PathBuf;

use acplb_core::provider::{SessionSink, TurnOutcome};
use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, ContentBlock, ContentChunk, SessionUpdate, StopReason,
    UnstructuredCommandInput,
};
use tokio_util::sync::CancellationToken;

use super::on_server::OnServer;
use crate::appserver::hooks::{self, Hook};

/// The command, for `available_commands_update`.
pub(super) fn command() -> AvailableCommand {
    AvailableCommand::new(
        "hooks",
        "Show Codex's hooks for this directory and whether they are trusted",
    )
    .input(AvailableCommandInput::Unstructured(
        UnstructuredCommandInput::new("optional: trust, to trust the hooks the last /hooks showed"),
    ))
}

/// What a prompt asks, if it is `/hooks`.
#[derive(Debug, PartialEq, Eq)]
enum Ask {
    List,
    Trust,
    Usage,
}

fn parse(text: &str) -> Option<Ask> {
    let rest = text.trim_start().strip_prefix("/hooks")?;
    if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
        return None;
    }
    Some(match rest.trim() {
        "" => Ask::List,
        "trust" => Ask::Trust,
        _ => Ask::Usage,
    })
}

const USAGE: &str = "`/hooks` lists Codex's hooks for this session's directory; `/hooks trust` then trusts the hooks it showed.\n";

/// One session's `/hooks`.
#[derive(Debug)]
pub(super) struct HooksCommand {
    server: OnServer,
    cwd: PathBuf,
    /// The hooks the last `/hooks` showed that waited for trust: key and hash.
    shown: RefCell<Option<Vec<(String, String)>>>,
}

impl HooksCommand {
    pub(super) fn new(server: OnServer, cwd: PathBuf) -> Self {
        Self {
            server,
            cwd,
            shown: RefCell::new(None),
        }
    }

    /// Answers the prompt if it is `/hooks`; `None` for any other prompt.
    pub(super) async fn answer(
        &self,
        text: &str,
        sink: &dyn SessionSink,
        cancel: &CancellationToken,
    ) -> Option<TurnOutcome> {
        let ask = parse(text)?;
        let reply = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                return Some(TurnOutcome { stop_reason: StopReason::Cancelled, usage: None });
            }
            reply = self.reply(ask) => reply,
        };
        sink.update(SessionUpdate::AgentMessageChunk(ContentChunk::new(
            ContentBlock::from(reply),
        )));
        Some(TurnOutcome {
            stop_reason: StopReason::EndTurn,
            usage: None,
        })
    }

    async fn reply(&self, ask: Ask) -> String {
        let cwd = &self.cwd;
        match ask {
            Ask::Usage => USAGE.to_owned(),
            Ask::List => {
                let listed = self
                    .server
                    .ask(async |s| hooks::list(&s.connect_or_say().await?.rpc, cwd).await)
                    .await;
                match listed {
                    Ok(listed) => {
                        let waiting = listed
                            .hooks
                            .iter()
                            .filter(|h| h.needs_trust())
                            .map(|h| (h.key.clone(), h.hash.clone()))
                            .collect();
                        *self.shown.borrow_mut() = Some(waiting);
                        hooks::render(cwd, &listed)
                    }
                    Err(why) => format!("{why}\n"),
                }
            }
            Ask::Trust => {
                let Some(wanted) = self.shown.borrow_mut().take() else {
                    return "Send `/hooks` first: it shows what each hook runs, and `/hooks trust` then trusts exactly those.\n".to_owned();
                };
                if wanted.is_empty() {
                    return "No hook the last `/hooks` showed waits for trust.\n".to_owned();
                }
                let done = self
                    .server
                    .ask(async |s| hooks::trust(&s.connect_or_say().await?.rpc, cwd, &wanted).await)
                    .await;
                match done {
                    Ok(trusted) => trusted_text(&trusted),
                    Err(why) => format!("{why}.\n"),
                }
            }
        }
    }
}

fn trusted_text(trusted: &[Hook]) -> String {
    if trusted.is_empty() {
        return "Those hooks were trusted already.\n".to_owned();
    }
    let mut out = String::from("Trusted; Codex runs these from now on:\n");
    for h in trusted {
        let _ = writeln!(out, "- `{}` runs `{}`", h.event, h.action);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_commands_are_recognised_and_other_text_is_not() {
        assert_eq!(parse("/hooks"), Some(Ask::List));
        assert_eq!(parse("  /hooks  trust "), Some(Ask::Trust));
        assert_eq!(parse("/hooks everything"), Some(Ask::Usage));
        assert_eq!(parse("/hookshot"), None);
        assert_eq!(parse("tell me about /hooks"), None);
    }
}
