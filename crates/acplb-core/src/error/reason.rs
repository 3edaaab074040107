//! The stable reasons of acplb's JSON-RPC errors: every error acplb sends carries one as
//! `data.reason`, so editors and scripts match on it instead of on the message's words (the
//! README's "Error reasons" lists them). A reason's string never changes once released.

/// Why a request failed, as `data.reason` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    /// A request's parameters are wrong: a cwd that is not an absolute directory, an unknown
    /// mode or option value, prompt content acplb cannot pass on, a malformed session id.
    InvalidParams,
    /// The request names a session that is neither open here nor kept.
    UnknownSession,
    /// The session is still opening (or closing) in this acplb: try again once it has.
    SessionOpening,
    /// Another acplb process has the kept session open.
    SessionHeld,
    /// The kept session is archived (`session/archive`): unarchive it before loading it.
    SessionArchived,
    /// This acplb keeps no sessions (no state directory), so it cannot load, resume or fork one.
    NotKept,
    /// The session has stopped (its actor ended); start a new one.
    SessionStopped,
    /// acplb is shutting down.
    Stopping,
    /// The composer file (`composer.toml`) for the session could not be loaded.
    Composer,
    /// A required plugin failed (at session start or on a prompt).
    PluginRefused,
    /// The provider needs the user to log in.
    AuthRequired,
    /// A sign-in (`authenticate`) or sign-out did not succeed: declined, cancelled, expired or
    /// refused by the provider.
    AuthFailed,
    /// The provider's program could not be started.
    ProviderNotStarted,
    /// The session's working directory is gone.
    WorkDirGone,
    /// The provider process exited during the turn (a crash: `data.exitStatus` says how).
    ProviderExited,
    /// The provider did not answer a request in time; acplb stopped it.
    Unresponsive,
    /// The provider reported that the turn failed (it ran on).
    TurnFailed,
    /// The turn hit the turn time limit (`--turn-timeout`).
    TurnTimeout,
    /// The turn could not be prepared (its prompt input, its temporary files).
    PrepareFailed,
    /// Reading from or writing to the provider failed.
    ProviderIo,
    /// Reading or writing the session's files (journal, registry, lock) failed.
    Storage,
    /// The session's files did not answer within the time limit (a stalled disk).
    StorageStalled,
    /// Starting the session took longer than its limit (a plugin's files on a stalled disk).
    OpenStalled,
    /// The line was not JSON.
    ParseError,
    /// The line was JSON but not a JSON-RPC request, notification or response.
    InvalidRequest,
    /// acplb has no such method.
    MethodNotFound,
    /// An error of acplb itself.
    Internal,
}

impl Reason {
    /// Every reason, in the README's order.
    pub const ALL: [Reason; 27] = [
        Reason::InvalidParams,
        Reason::UnknownSession,
        Reason::SessionOpening,
        Reason::SessionHeld,
        Reason::SessionArchived,
        Reason::NotKept,
        Reason::SessionStopped,
        Reason::Stopping,
        Reason::Composer,
        Reason::PluginRefused,
        Reason::AuthRequired,
        Reason::AuthFailed,
        Reason::ProviderNotStarted,
        Reason::WorkDirGone,
        Reason::ProviderExited,
        Reason::Unresponsive,
        Reason::TurnFailed,
        Reason::TurnTimeout,
        Reason::PrepareFailed,
        Reason::ProviderIo,
        Reason::Storage,
        Reason::StorageStalled,
        Reason::OpenStalled,
        Reason::ParseError,
        Reason::InvalidRequest,
        Reason::MethodNotFound,
        Reason::Internal,
    ];

    /// The string in `data.reason`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Reason::InvalidParams => "invalid_params",
            Reason::UnknownSession => "unknown_session",
            Reason::SessionOpening => "session_opening",
            Reason::SessionHeld => "session_held",
            Reason::SessionArchived => "session_archived",
            Reason::NotKept => "not_kept",
            Reason::SessionStopped => "session_stopped",
            Reason::Stopping => "stopping",
            Reason::Composer => "composer",
            Reason::PluginRefused => "plugin_refused",
            Reason::AuthRequired => "auth_required",
            Reason::AuthFailed => "auth_failed",
            Reason::ProviderNotStarted => "provider_not_started",
            Reason::WorkDirGone => "work_dir_gone",
            Reason::ProviderExited => "provider_exited",
            Reason::Unresponsive => "unresponsive",
            Reason::TurnFailed => "turn_failed",
            Reason::TurnTimeout => "turn_timeout",
            Reason::PrepareFailed => "prepare_failed",
            Reason::ProviderIo => "provider_io",
            Reason::Storage => "storage",
            Reason::StorageStalled => "storage_stalled",
            Reason::OpenStalled => "open_stalled",
            Reason::ParseError => "parse_error",
            Reason::InvalidRequest => "invalid_request",
            Reason::MethodNotFound => "method_not_found",
            Reason::Internal => "internal",
        }
    }

    /// The reason whose string is `s` (what a client of acplb reads back from `data.reason`).
    pub fn parse(s: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// The reason of an ACP error, when it carries one acplb knows.
    pub fn of(error: &agent_client_protocol::Error) -> Option<Reason> {
        Reason::parse(error.data.as_ref()?.get("reason")?.as_str()?)
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn every_reason_has_a_distinct_stable_snake_case_string() {
        let strings: HashSet<&str> = Reason::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(strings.len(), Reason::ALL.len(), "two reasons share a string");
        for r in Reason::ALL {
            let s = r.as_str();
            assert!(
                !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{s}"
            );
            assert_eq!(Reason::parse(s), Some(r));
        }
        assert_eq!(Reason::parse("no_such_reason"), None);
    }
}
