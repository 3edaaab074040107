//! A session's provider side has opened (`open.rs` started it): its actor starts with the
//! options it offers, a load replays its history, its input queue opens, its registry entry is
//! written, and the request is answered; a failed open is answered with its error.

use std::rc::Rc;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AvailableCommandsUpdate, ContentBlock, ContentChunk, Notice, NoticeSeverity, SessionId,
    SessionNotification, SessionUpdate,
};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use super::modes;
use super::open::{Opened, Reply};
use super::store::{SessionHandle, Store};
use crate::plugin::SessionNotice;
use crate::provider::ProviderSession;
use crate::session::modes::ProviderModes;
use crate::session::options::OptionCatalog;
use crate::session::sink::send_counted;
use crate::session::subagent_wire::{Wire, wire};
use crate::session::{Inbox, SessionActor, SessionMsg, SessionParts};
use crate::sessions::journal;
use crate::sessions::registry::{Entry, Status, Tracked};

impl Store {
    /// The options a session offers: what its provider learned while opening, else what the
    /// provider offers any session, as this client takes them.
    fn session_catalog(&self, provider: &dyn ProviderSession, modes: &ProviderModes) -> Rc<OptionCatalog> {
        let offered = provider
            .catalog()
            .unwrap_or_else(|| self.capabilities.catalog.clone());
        Rc::new(OptionCatalog {
            booleans: self.client_takes_booleans(),
            mode_meta: crate::session::options::ModeMeta::for_client(&self.client),
            recommendations: crate::session::options::Recommendations::for_client(&self.client),
            provider_modes: modes.listed(),
            ..offered
        })
    }

    /// The folders a file change report may name, when the client declared AIR's
    /// `agentFileChangeReport` (ADR 0052): the cwd and the additional directories.
    fn report_roots(
        &self,
        cwd: &std::path::Path,
        directories: Vec<std::path::PathBuf>,
    ) -> Option<Vec<std::path::PathBuf>> {
        crate::capabilities::air_declares(&self.client, crate::session::file_report::CAPABILITY)
            .then(|| std::iter::once(cwd.to_path_buf()).chain(directories).collect())
    }

    /// Whether the client declared AIR's typed session failures (ADR 0054).
    fn air_subagents(&self) -> bool {
        crate::capabilities::subagent_sessions(&self.client)
            == Some(crate::capabilities::SubagentSessions::Air)
    }

    fn typed_failures(&self) -> bool {
        crate::capabilities::air_declares(&self.client, crate::provider::AIR_SESSION_FAILURE)
    }

    /// The provider side of a session is open: start its actor, replay its history (a load),
    /// answer the request.
    pub(super) fn on_opened(&mut self, opened: Opened) {
        let Opened {
            session_id,
            result,
            pending,
        } = opened;
        self.opening.remove(&session_id);
        let mut parts = match result {
            Ok(p) => p,
            Err(e) => {
                pending.reply.error(e);
                return;
            }
        };
        let shows_notices = self.client.session.as_ref().is_some_and(|s| s.notices.is_some());
        let catalog = self.session_catalog(parts.provider.as_ref(), &parts.modes);
        let facts = parts.loaded.as_ref().map(|l| &l.facts);
        let (settings, mode) = modes::settle(&catalog, facts, &parts.modes, &mut parts.notices);
        let mut entry = Entry::new(
            session_id.to_string(),
            pending.cwd.clone(),
            std::time::SystemTime::now(),
        );
        if let Some(identity) = &parts.identity {
            entry.identity = Some(identity.name.clone());
            entry.team = Some(identity.team.clone());
        }
        let (journal, history, turns) = match parts.loaded {
            Some(loaded) => {
                entry.started_at.clone_from(&loaded.history.started_at);
                entry.title.clone_from(&loaded.facts.title);
                entry.thread_id.clone_from(&loaded.facts.thread_id);
                entry.status = Status::Idle;
                (Some(loaded.journal), Some(loaded.history), loaded.facts.turns)
            }
            None => (parts.journal, None, 0),
        };
        // Indexed only when it is kept: a session without a journal could not be loaded.
        let tracked = journal
            .as_ref()
            .and(self.options.durability.as_ref())
            .and_then(|d| d.registry.clone())
            .map(|writer| Tracked::open(writer, entry));
        let modes = catalog.modes(&settings, mode);
        let options = catalog.options(&settings, mode);
        let (tx, rx) = unbounded_channel();
        let cx = pending.cx.clone();
        let summarises = parts.pipeline.summary_prompt().is_some();
        let inbox = self.inbox(journal.is_some(), &session_id, &tx, shows_notices);
        let actor =
            SessionActor::new(
                session_id.clone(),
                pending.cx,
                SessionParts {
                    cwd: pending.cwd.clone(),
                    provider: parts.provider,
                    catalog,
                    pipeline: parts.pipeline,
                    settings,
                    mode,
                    turns,
                    journal: journal.map(Rc::new),
                    registry: tracked,
                    state_dir: self.options.durability.as_ref().map(|d| d.state_dir.clone()),
                    turn_timeout: self.options.turn_timeout,
                    inbox,
                    forms: self.client.elicitation.as_ref().is_some_and(
                        agent_client_protocol::v1::schema::ElicitationCapabilities::supports_form,
                    ),
                    report_roots: self.report_roots(&pending.cwd, parts.directories),
                    typed_failures: self.typed_failures(),
                    air_subagents: self.air_subagents(),
                },
            )
            .with_output_flow(self.options.output_flow.clone());
        let task = tokio::task::spawn_local(actor.run(rx));
        let how = match pending.reply {
            Reply::New { fork_of: None, .. } => "session created",
            Reply::New { fork_of: Some(_), .. } => "session forked",
            Reply::Load(_) => "session loaded",
            Reply::Resume(_) => "session resumed",
        };
        tracing::info!(session = %session_id, cwd = %pending.cwd.display(), "{how}");
        self.sessions
            .insert(session_id.clone(), SessionHandle { tx, task, summarises });
        if pending.reply.replays()
            && let Some(history) = &history
        {
            self.replay(&cx, &session_id, history, shows_notices);
        }
        pending.reply.ok(session_id.clone(), modes, options);
        // After the response: the client learns the session id from it.
        let flow = &self.options.output_flow;
        for notice in parts.notices {
            let update = notice_update(notice, shows_notices);
            send_counted(&cx, flow, SessionNotification::new(session_id.clone(), update));
        }
        if !self.capabilities.commands.is_empty() {
            let air = crate::capabilities::air(&self.client).is_some();
            let commands = crate::capabilities::commands_for(air, self.capabilities.commands.clone());
            let update = SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands));
            send_counted(&cx, flow, SessionNotification::new(session_id, update));
        }
    }

    /// A kept session's input queue (ADR 0013), watched while it is open here.
    fn inbox(
        &self,
        kept: bool,
        id: &SessionId,
        mailbox: &UnboundedSender<SessionMsg>,
        shows_notices: bool,
    ) -> Option<Inbox> {
        let durability = self.options.durability.as_ref().filter(|_| kept)?;
        Some(Inbox::start(
            durability.state_dir.clone(),
            id.to_string(),
            mailbox,
            shows_notices,
        ))
    }

    /// Shows a loaded session's history again, before the answer, as ACP asks: the editor
    /// shows the history, then the session.
    fn replay(
        &self,
        cx: &ConnectionTo<Client>,
        id: &SessionId,
        history: &journal::History,
        shows_notices: bool,
    ) {
        let terminals = crate::capabilities::terminal_output(&self.client);
        let mut updates = journal::updates(history, shows_notices, terminals);
        if !crate::capabilities::compaction(&self.client) {
            updates = journal::without_compaction(updates, shows_notices);
        }
        updates = journal::plans_for(
            updates,
            crate::capabilities::plan_updates(&self.client),
            crate::capabilities::plan_deltas(&self.client),
        );
        let sessions = crate::capabilities::subagent_sessions(&self.client);
        if sessions.is_none() {
            updates.retain(|u| !crate::provider::route::is_subagents(u));
        }
        tracing::info!(session = %id, updates = updates.len(), "replaying the session's history");
        let air = sessions == Some(crate::capabilities::SubagentSessions::Air);
        for update in updates {
            match wire(id, update, air) {
                Wire::Typed(notification) => send_counted(cx, &self.options.output_flow, *notification),
                Wire::Untyped(message) => send_counted(cx, &self.options.output_flow, message),
                Wire::Nothing => {}
            }
        }
    }
}

/// Something to tell the user about their new session: a `notice` update when the client shows
/// them, else an agent message (which every editor shows).
fn notice_update(notice: SessionNotice, shows_notices: bool) -> SessionUpdate {
    if shows_notices {
        SessionUpdate::Notice(Notice::new(NoticeSeverity::Warning, notice.title).description(notice.detail))
    } else {
        let text = format!("{}.\n\n{}\n\n", notice.title, notice.detail);
        SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(text)))
    }
}
