//! How a session's mode and config options change (`session/set_mode`,
//! `session/set_config_option`): validated, applied from the next turn, and confirmed to the
//! editor with the updates first, so a client that acts on the response has already seen them;
//! and what they are when the open session is loaded or resumed again.

use std::rc::Rc;

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandsUpdate, ConfigOptionUpdate, CurrentModeUpdate,
    SessionConfigOptionValue, SessionModeId, SessionUpdate, SetSessionConfigOptionResponse,
    SetSessionModeResponse,
};

use super::{Attached, SessionActor};
use crate::error::Reason;
use crate::error::wire::{self, reply};
use crate::session::modes::ProviderModes;
use crate::session::options::OptionCatalog;

/// The next thing the provider learned (models and efforts, its modes, slash commands); never, once it
/// can learn no more.
pub(super) async fn next_offer<T: Clone>(updates: &mut Option<tokio::sync::watch::Receiver<T>>) -> T {
    if let Some(rx) = updates {
        if rx.changed().await.is_ok() {
            return rx.borrow_and_update().clone();
        }
        *updates = None;
    }
    std::future::pending().await
}

/// The next thing the provider has between turns (an update, a question); pending forever once
/// it has no more.
pub(super) async fn next_update<T>(updates: &mut Option<tokio::sync::mpsc::UnboundedReceiver<T>>) -> T {
    if let Some(rx) = updates {
        if let Some(update) = rx.recv().await {
            return update;
        }
        *updates = None;
    }
    std::future::pending().await
}

impl SessionActor {
    /// The provider learned newer models and efforts: the editor sees them at once, with the
    /// session's choices kept (a chosen model the list no longer names still runs).
    pub(super) fn catalog_changed(&mut self, offered: OptionCatalog) {
        // What the session learned otherwise stays: the provider's modes, the initial mode.
        let catalog = OptionCatalog {
            booleans: self.catalog.booleans,
            mode_meta: self.catalog.mode_meta,
            recommendations: self.catalog.recommendations,
            provider_modes: self.catalog.provider_modes.clone(),
            initial_mode: self.catalog.initial_mode.clone(),
            ..offered
        };
        if catalog == *self.catalog {
            return;
        }
        self.catalog = Rc::new(catalog);
        tracing::debug!(session = %self.id, "the provider's models changed");
        self.notify(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
            self.catalog.options(&self.settings, self.mode),
        )));
    }

    /// The provider listed its own modes (behind the opening): the editor sees them as values
    /// of the `mode` option at once (ACP offers no update of the session's modes). A provider
    /// mode the session is in stays offered while it is in it, listed or not (the provider
    /// says what is wrong with it when a turn runs).
    pub(super) fn modes_changed(&mut self, known: ProviderModes) {
        let mut listed = match known {
            ProviderModes::Listed(listed) => listed,
            ProviderModes::Asking => return,
            ProviderModes::Unavailable(why) => {
                tracing::debug!(session = %self.id, "{why}; the session offers acplb's own modes");
                return;
            }
        };
        if let Some(current) = &self.settings.provider_mode
            && !listed.iter().any(|m| &m.id == current)
            && let Some(kept) = self.catalog.provider_modes.iter().find(|m| &m.id == current)
        {
            listed.push(kept.clone());
        }
        if listed == self.catalog.provider_modes {
            return;
        }
        tracing::debug!(session = %self.id, modes = listed.len(), "the provider listed its modes");
        self.catalog = Rc::new(OptionCatalog {
            provider_modes: listed,
            ..(*self.catalog).clone()
        });
        self.notify(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
            self.catalog.options(&self.settings, self.mode),
        )));
    }

    /// The provider's slash commands changed (it listed skills, one was added): the editor
    /// sees the whole new list at once.
    pub(super) fn commands_changed(&mut self, mut offered: Vec<AvailableCommand>) {
        offered.push(crate::runtime::rename_command());
        tracing::debug!(session = %self.id, commands = offered.len(), "the provider's commands changed");
        let offered = crate::capabilities::commands_for(
            self.catalog.mode_meta == crate::session::options::ModeMeta::Air,
            offered,
        );
        self.notify(SessionUpdate::AvailableCommandsUpdate(
            AvailableCommandsUpdate::new(offered),
        ));
    }

    pub(super) fn set_mode(&mut self, mode_id: &SessionModeId, responder: Responder<SetSessionModeResponse>) {
        let chosen = match self.catalog.mode(&mode_id.to_string()) {
            Ok(chosen) => chosen,
            Err(message) => {
                reply(responder.respond_with_error(wire::invalid_params(Reason::InvalidParams, message)));
                return;
            }
        };
        crate::session::modes::enter(chosen, &mut self.settings, &mut self.mode);
        let id = self.catalog.current_mode_id(&self.settings, self.mode);
        self.record(|j| j.mode(&id));
        tracing::info!(session = %self.id, mode = %id, "mode changed (applies from the next turn)");
        // The updates go first, so a client that acts on the response has already seen them;
        // the `mode` config option shows the same value.
        self.notify(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(id)));
        self.notify(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
            self.catalog.options(&self.settings, self.mode),
        )));
        reply(responder.respond(SetSessionModeResponse::new()));
    }

    pub(super) fn set_config(
        &mut self,
        id: &str,
        value: &SessionConfigOptionValue,
        responder: Responder<SetSessionConfigOptionResponse>,
    ) {
        let before = self.catalog.current_mode_id(&self.settings, self.mode);
        match self.catalog.apply(&mut self.settings, &mut self.mode, id, value) {
            Ok(()) => {
                self.record(|j| j.setting(id, value));
                let now = self.catalog.current_mode_id(&self.settings, self.mode);
                if now != before {
                    tracing::info!(session = %self.id, mode = %now, "mode changed (applies from the next turn)");
                    self.notify(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(now)));
                }
                let options = self.catalog.options(&self.settings, self.mode);
                self.notify(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
                    options.clone(),
                )));
                reply(responder.respond(SetSessionConfigOptionResponse::new(options)));
            }
            Err(e) => {
                reply(
                    responder.respond_with_error(wire::invalid_params(Reason::InvalidParams, e.to_string())),
                );
            }
        }
    }

    /// A load or resume of this open session: what it is set to, and (a load) its updates
    /// held from here until the load has replayed the journal up to here
    /// ([`SessionMsg::Replayed`](super::SessionMsg::Replayed)). The turn in flight, if any,
    /// goes on.
    pub(super) fn reattach(&mut self, hold: bool, answer: tokio::sync::oneshot::Sender<Attached>) {
        if hold {
            self.hold.start();
        }
        let attached = Attached {
            modes: self.catalog.modes(&self.settings, self.mode),
            options: self.catalog.options(&self.settings, self.mode),
            journal: self.journal.as_ref().map(|j| (j.path().to_owned(), j.bytes())),
        };
        // After the journal's length is taken, so the replay does not show them too: they are
        // held and follow it. A provider away running a turn announces nothing again.
        if hold && let Some(provider) = &self.provider {
            for update in provider.announce_again() {
                self.notify(update);
            }
        }
        if answer.send(attached).is_err() && hold {
            // The request went away: nothing will be replayed, so nothing stays held.
            self.hold.release(&self.cx, &self.flow);
        }
    }
}
