//! The secrets of every session the shared server has served, and the one redaction of what
//! the server prints: a dying server's stderr may hold any of its sessions' MCP values, so
//! each is cut from it before it reaches an editor, a journal, a log or a transcript.

use std::cell::RefCell;
use std::rc::Rc;

use acplb_core::secrets::KnownSecrets;

/// The union of the known secrets of every session opened on the server (cheap to clone).
#[derive(Debug, Clone, Default)]
pub(crate) struct ServedSecrets(Rc<RefCell<KnownSecrets>>);

impl ServedSecrets {
    /// A session's secrets join the set before its thread starts; they stay after it closes,
    /// as what the server printed about it may still come.
    pub(crate) fn add(&self, session: &KnownSecrets) {
        self.0.borrow_mut().extend(session);
    }

    /// `text` without any served session's secret nor any secret shape the pattern redactor
    /// knows.
    pub(crate) fn redact(&self, text: &str) -> String {
        self.0.borrow().redact(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sessions_secrets_are_cut_and_patterns_too() {
        let served = ServedSecrets::default();
        served.add(&KnownSecrets::new(["alpha-value-1"]));
        served.clone().add(&KnownSecrets::new(["beta-value-2"]));
        assert_eq!(
            served.redact("alpha-value-1 beta-value-2 token=abc123 ok"),
            "[REDACTED] [REDACTED] token=[REDACTED] ok"
        );
    }
}
