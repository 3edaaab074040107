//! Who may give a worker a turn by mail: a member of its team, by the roster its mail backend
//! keeps (`config.json` on files, `atm members` on `atm-cli`), unless the agent sets
//! `accept_from_non_members`. Mail from anyone else is marked read and logged, never run.

use acplb_atm::{MailEnvelope, ReadReceipt};

use super::WorkerError;
use super::mail::Mailbox;
use crate::config::AgentConfig;

/// Whose mail runs, for one read of the inbox.
#[derive(Debug)]
pub(crate) enum Gate {
    /// Anyone's (`accept_from_non_members = true`).
    Open,
    /// Only these members' (none when the team keeps no roster).
    Members(Vec<String>),
}

impl Gate {
    /// `agent`'s gate now; `Err` when the roster cannot be read (the mail then waits unread).
    pub(crate) async fn of(agent: &AgentConfig, mailbox: &Mailbox) -> Result<Gate, WorkerError> {
        if agent.accept_from_non_members {
            return Ok(Gate::Open);
        }
        Ok(Gate::Members(mailbox.members().await?.unwrap_or_default()))
    }

    /// Why mail from `from` does not run in a worker of `team`; `None` when it does.
    pub(crate) fn refuses(&self, from: &str, team: &str) -> Option<String> {
        let Gate::Members(members) = self else {
            return None;
        };
        if is_member(from, team, members) {
            return None;
        }
        let why = if members.is_empty() {
            format!(
                "team `{team}` keeps no roster (no members in its config.json), so {from:?} is not a member of team `{team}`"
            )
        } else {
            format!("{from:?} is not a member of team `{team}`")
        };
        Some(why)
    }
}

/// Whether `from` names a member of `team`, whose roster is `members`: `name` or `name@team`,
/// spelled exactly as the roster has it.
fn is_member(from: &str, team: &str, members: &[String]) -> bool {
    let bare = from.strip_suffix(team).and_then(|n| n.strip_suffix('@'));
    members
        .iter()
        .filter(|m| !m.is_empty())
        .any(|m| m == from || Some(m.as_str()) == bare)
}

/// Marks `mail` (refused because `why`) read without running it, and logs it.
pub(crate) async fn refuse(mailbox: &Mailbox, mail: &MailEnvelope, receipt: ReadReceipt, why: &str) {
    tracing::warn!(
        message = %mail.message_id,
        "mail not run: {why} (`accept_from_non_members = true` in the machine file lets anyone's run); marked read"
    );
    if let Err(e) = mailbox.mark_read(receipt).await {
        tracing::warn!(message = %mail.message_id, error = %e, "cannot mark a refused message read");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roster(names: &[&str]) -> Gate {
        Gate::Members(names.iter().map(|n| (*n).to_owned()).collect())
    }

    #[test]
    fn members_by_name_or_name_at_team_and_nobody_else() {
        let gate = roster(&["alice", "team-lead"]);
        assert_eq!(gate.refuses("alice", "demo"), None);
        assert_eq!(gate.refuses("alice@demo", "demo"), None);
        assert_eq!(gate.refuses("team-lead", "demo"), None);
        for stranger in [
            "mallory",
            "alice@other",
            "Alice",
            " alice",
            "alice\n",
            "",
            "@demo",
            "demo",
        ] {
            let why = gate.refuses(stranger, "demo").expect(stranger);
            assert!(why.contains("is not a member of team `demo`"), "{why}");
        }
        let why = roster(&[]).refuses("alice", "demo").unwrap();
        assert!(why.contains("keeps no roster"), "{why}");
        assert_eq!(Gate::Open.refuses("mallory", "demo"), None);
    }
}
