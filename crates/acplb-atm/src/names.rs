//! Agent and team names as path segments: Claude's sanitising rule, `agent@team` parsing, and
//! what a recipient name may look like.

use crate::error::MailError;

/// The longest recipient name accepted (an inbox file name must stay well under 255 bytes).
pub const MAX_NAME_LEN: usize = 128;

/// Whether `name` is a plain member name: 1 to [`MAX_NAME_LEN`] ASCII letters, digits, `-` and
/// `_`, i.e. a name that is its own inbox file name. Paths (`/etc/passwd`), file names
/// (`bob.json`) and everything Claude's sanitising would change are not.
pub fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Turns a name into a path segment the way Claude Code does: `[^A-Za-z0-9_-]` becomes `-`.
///
/// Rejects empty names and names containing `..` before sanitising, so a traversal attempt is
/// reported instead of silently becoming `--`.
pub fn sanitize(name: &str) -> Result<String, MailError> {
    let trimmed = name.trim();
    if trimmed.is_empty() || trimmed.contains("..") {
        return Err(MailError::InvalidName {
            name: name.to_owned(),
        });
    }
    Ok(trimmed
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect())
}

/// A parsed `agent` or `agent@team` address, both parts sanitised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    /// The agent's inbox name.
    pub agent: String,
    /// The team, or the sender's own team when the address had none.
    pub team: String,
}

impl Address {
    /// Parses `to`, defaulting the team to `own_team`.
    pub fn parse(to: &str, own_team: &str) -> Result<Self, MailError> {
        let (agent, team) = match to.trim().rsplit_once('@') {
            Some((agent, team)) => (agent, team),
            None => (to, own_team),
        };
        Ok(Self {
            agent: sanitize(agent)?,
            team: sanitize(team)?,
        })
    }
}

/// A recipient as written: `agent` or `agent@team`, trimmed, nothing sanitised yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recipient<'a> {
    /// The agent part.
    pub agent: &'a str,
    /// The team part, or `None` for the sender's own team.
    pub team: Option<&'a str>,
}

impl<'a> Recipient<'a> {
    /// Splits `to` at its last `@`.
    pub fn split(to: &'a str) -> Self {
        let to = to.trim();
        match to.rsplit_once('@') {
            Some((agent, team)) => Self {
                agent: agent.trim(),
                team: Some(team.trim()),
            },
            None => Self {
                agent: to,
                team: None,
            },
        }
    }

    /// Refuses a recipient whose parts are not plain names (see [`is_plain_name`]).
    pub fn check_plain(&self, to: &str) -> Result<(), MailError> {
        if is_plain_name(self.agent) && self.team.is_none_or(is_plain_name) {
            Ok(())
        } else {
            Err(MailError::InvalidRecipient { name: to.to_owned() })
        }
    }
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@{}", self.agent, self.team)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitises_like_claude() {
        assert_eq!(sanitize("arch.ctm").unwrap(), "arch-ctm");
        assert_eq!(sanitize("a/b c_d-e").unwrap(), "a-b-c_d-e");
        assert_eq!(sanitize("ünï").unwrap(), "-n-");
    }

    #[test]
    fn rejects_empty_and_dotdot() {
        assert!(sanitize("").is_err());
        assert!(sanitize("  ").is_err());
        assert!(sanitize("..").is_err());
        assert!(sanitize("../etc").is_err());
    }

    #[test]
    fn plain_names_are_their_own_file_names() {
        for ok in ["bob", "team-lead", "arch_ctm-2", "A1"] {
            assert!(is_plain_name(ok), "{ok}");
        }
        let long = "x".repeat(MAX_NAME_LEN + 1);
        for bad in [
            "",
            "bob.json",
            "/etc/passwd",
            "../x",
            "a b",
            "ünï",
            "a\nb",
            long.as_str(),
        ] {
            assert!(!is_plain_name(bad), "{bad}");
        }
    }

    #[test]
    fn recipients_split_at_the_last_at() {
        assert_eq!(
            Recipient::split(" bob "),
            Recipient {
                agent: "bob",
                team: None
            }
        );
        assert_eq!(
            Recipient::split("bob@other"),
            Recipient {
                agent: "bob",
                team: Some("other")
            }
        );
        assert!(Recipient::split("bob@").check_plain("bob@").is_err());
        assert!(Recipient::split("bob@../x").check_plain("bob@../x").is_err());
        assert!(Recipient::split("bob@t-1").check_plain("bob@t-1").is_ok());
    }

    #[test]
    fn parses_addresses() {
        assert_eq!(
            Address::parse("bob", "demo").unwrap(),
            Address {
                agent: "bob".into(),
                team: "demo".into()
            }
        );
        let a = Address::parse("bob@other", "demo").unwrap();
        assert_eq!(a.to_string(), "bob@other");
        assert!(Address::parse("bob@", "demo").is_err());
        assert!(Address::parse("@x", "demo").is_err());
    }
}
