//! Agent and team names as path segments: Claude's sanitising rule plus `agent@team` parsing.

use crate::error::MailError;

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
