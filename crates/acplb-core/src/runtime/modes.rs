//! The mode a session opens in (ADR 0038): a new one in the catalog's initial mode, a loaded or
//! resumed one in what its journal recorded. The provider learns its own modes behind the
//! opening; the opening waits for them (within [`MODES_WAIT`]) only when the session opens in a
//! mode that is not one of acplb's own, so every other opening is answered at once. A mode the
//! session cannot open in leaves it where it is, and the user is told why.

use std::time::Duration;

use agent_client_protocol::v1::schema::SessionConfigOptionValue;

use super::durable::Loaded;
use crate::permission::Mode;
use crate::plugin::SessionNotice;
use crate::provider::{ProviderSession, SessionSettings};
use crate::session::modes::ProviderModes;
use crate::session::options::OptionCatalog;
use crate::sessions::journal::Facts;

/// The longest an opening waits for the provider's modes, when it opens in one of them.
pub(super) const MODES_WAIT: Duration = Duration::from_secs(10);

/// The mode a kept session was last in, as its journal says (its last `mode` setting).
fn journal_mode(facts: &Facts) -> Option<String> {
    facts
        .settings
        .iter()
        .rev()
        .find(|(id, _)| id == crate::session::options::MODE)
        .and_then(|(_, value)| match value {
            SessionConfigOptionValue::ValueId { value } => Some(value.to_string()),
            _ => None,
        })
}

/// What the provider knows of its modes for a session opening: a loaded one in its journal's
/// last mode, a new one in its catalog's initial mode (else `initial`: the provider's for any
/// session).
pub(super) async fn at_opening(
    provider: &dyn ProviderSession,
    loaded: Option<&Loaded>,
    initial: Option<String>,
) -> ProviderModes {
    let wanted = match loaded {
        Some(loaded) => journal_mode(&loaded.facts),
        None => provider.catalog().map_or(initial, |c| c.initial_mode),
    };
    opening_in(provider, wanted.as_deref()).await
}

/// What the provider knows of its modes for a session opening in `wanted`: what it knows now,
/// unless `wanted` is not one of acplb's own and the provider is still asking; then what it
/// learns within [`MODES_WAIT`] (still asking after that is [`ProviderModes::Unavailable`]).
async fn opening_in(provider: &dyn ProviderSession, wanted: Option<&str>) -> ProviderModes {
    let Some(mut updates) = provider.mode_updates() else {
        return ProviderModes::Listed(Vec::new());
    };
    let own = wanted.is_none_or(|id| Mode::from_id(id).is_some());
    if own || *updates.borrow() != ProviderModes::Asking {
        return updates.borrow_and_update().clone();
    }
    let asked = tokio::time::timeout(MODES_WAIT, updates.wait_for(|m| *m != ProviderModes::Asking)).await;
    match asked {
        Ok(Ok(known)) => known.clone(),
        Ok(Err(_)) => ProviderModes::Unavailable("the provider stopped asking for its modes".into()),
        Err(_) => ProviderModes::Unavailable(format!(
            "the provider did not list its modes within {MODES_WAIT:?}"
        )),
    }
}

/// What a session opens set to: a loaded one (`facts`: its journal's) as it was, a new one in
/// its initial mode; what it cannot be set to is what the user is told.
pub(super) fn settle(
    catalog: &OptionCatalog,
    facts: Option<&Facts>,
    known: &ProviderModes,
    notices: &mut Vec<SessionNotice>,
) -> (SessionSettings, Mode) {
    let (mut settings, mut mode) = (SessionSettings::default(), Mode::default());
    let set = (&mut settings, &mut mode);
    match facts {
        Some(facts) => restore(catalog, facts, known, set, notices),
        None => start(catalog, known, set, notices),
    }
    (settings, mode)
}

/// Puts a new session in the catalog's initial mode; one it cannot start in leaves it as it
/// is, and is what the user is told.
fn start(
    catalog: &OptionCatalog,
    known: &ProviderModes,
    (settings, mode): (&mut SessionSettings, &mut Mode),
    notices: &mut Vec<SessionNotice>,
) {
    let Some(id) = catalog.initial_mode.as_deref() else {
        return;
    };
    match catalog.mode(id) {
        Ok(chosen) => crate::session::modes::enter(chosen, settings, mode),
        Err(unknown) => {
            let why = unavailable(known, unknown);
            tracing::warn!(mode = %id, error = %why, "the initial mode is not offered; the session starts in {mode}");
            notices.push(SessionNotice {
                title: format!("This session starts in mode `{mode}`, not `{id}`"),
                detail: why,
            });
        }
    }
}

/// Applies what the journal says the session was set to; a mode it can no longer be in is what
/// the user is told (`wanted`: the mode it was last in).
fn restore(
    catalog: &OptionCatalog,
    facts: &Facts,
    known: &ProviderModes,
    (settings, mode): (&mut SessionSettings, &mut Mode),
    notices: &mut Vec<SessionNotice>,
) {
    for (id, value) in &facts.settings {
        if let Err(e) = catalog.apply(settings, mode, id, value) {
            tracing::warn!(option = %id, error = %e, "a saved setting no longer applies; left as it is");
        }
    }
    // Only a provider's mode can go away (acplb's own are known before any list).
    let Some(wanted) = journal_mode(facts).filter(|id| Mode::from_id(id).is_none()) else {
        return;
    };
    let now = catalog.current_mode_id(settings, *mode);
    if now == wanted {
        return;
    }
    let why = match catalog.mode(&wanted) {
        Ok(_) => return,
        Err(unknown) => unavailable(known, unknown),
    };
    notices.push(SessionNotice {
        title: format!("This session goes on in mode `{now}`, not `{wanted}` as before"),
        detail: why,
    });
}

/// Why a mode cannot be had: the provider's reason when it could not list its modes, else
/// `unknown` (the modes there are).
fn unavailable(known: &ProviderModes, unknown: String) -> String {
    match known {
        ProviderModes::Unavailable(why) => format!("{why}; {unknown}"),
        ProviderModes::Asking | ProviderModes::Listed(_) => unknown,
    }
}

#[cfg(test)]
mod tests {
    use async_trait::async_trait;
    use tokio::sync::watch;
    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::error::ProviderError;
    use crate::provider::{SessionSink, TurnOutcome, TurnRequest};
    use crate::session::modes::ProviderMode;

    /// A provider session whose modes come as a test says.
    struct Listing(watch::Receiver<ProviderModes>);

    #[async_trait(?Send)]
    impl ProviderSession for Listing {
        async fn run_turn(
            &mut self,
            _: TurnRequest,
            _: &dyn SessionSink,
            _: CancellationToken,
        ) -> Result<TurnOutcome, ProviderError> {
            unreachable!("no turn here")
        }

        fn mode_updates(&self) -> Option<watch::Receiver<ProviderModes>> {
            Some(self.0.clone())
        }
    }

    #[tokio::test(start_paused = true)]
    async fn an_opening_waits_for_the_list_only_to_open_in_a_provider_mode_and_not_forever() {
        let (tx, rx) = watch::channel(ProviderModes::Asking);
        let asking = Listing(rx);
        for own in [None, Some("auto"), Some("read-only")] {
            assert_eq!(opening_in(&asking, own).await, ProviderModes::Asking, "{own:?}");
        }
        let listed = ProviderModes::Listed(vec![ProviderMode {
            id: "permission-profile:locked".into(),
            name: "Profile: locked".into(),
            description: "No writes.".into(),
        }]);
        let sent = async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            tx.send_replace(listed.clone());
        };
        let (waited, ()) = tokio::join!(opening_in(&asking, Some("permission-profile:locked")), sent);
        assert_eq!(waited, listed);
        let (_never, rx) = watch::channel(ProviderModes::Asking);
        let started = tokio::time::Instant::now();
        let gave_up = opening_in(&Listing(rx), Some("permission-profile:locked")).await;
        assert_eq!(started.elapsed(), MODES_WAIT);
        assert!(
            matches!(&gave_up, ProviderModes::Unavailable(why) if why.contains("within 10s")),
            "{gave_up:?}"
        );
        let (gone, rx) = watch::channel(ProviderModes::Asking);
        drop(gone);
        let stopped = opening_in(&Listing(rx), Some("permission-profile:locked")).await;
        assert!(matches!(stopped, ProviderModes::Unavailable(_)), "{stopped:?}");
    }
}
