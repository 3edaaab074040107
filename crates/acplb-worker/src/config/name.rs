//! `name@team`: the identity of one worker agent. Both parts end up in file names and mail
//! headers, so anything that could be a path or break a line is refused.

use std::fmt;

/// The longest name or team, in bytes.
const MAX_PART: usize = 100;

/// A validated `name@team`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AgentName {
    name: String,
    team: String,
}

impl AgentName {
    /// Parses `name@team`; the error says what is wrong (without the file and line, which the
    /// caller adds).
    pub fn parse(s: &str) -> Result<AgentName, String> {
        let mut parts = s.split('@');
        let (Some(name), Some(team), None) = (parts.next(), parts.next(), parts.next()) else {
            let ats = s.matches('@').count();
            return Err(if ats == 0 {
                format!(
                    "agent `{}` has no team: write it as `name@team`",
                    s.escape_debug()
                )
            } else {
                format!(
                    "agent `{}` has {ats} `@`; write it as `name@team` with exactly one",
                    s.escape_debug()
                )
            });
        };
        check_part(s, "name", name)?;
        check_part(s, "team", team)?;
        Ok(AgentName {
            name: name.to_owned(),
            team: team.to_owned(),
        })
    }

    /// The agent's name (before the `@`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The agent's team (after the `@`).
    pub fn team(&self) -> &str {
        &self.team
    }
}

fn check_part(whole: &str, what: &str, part: &str) -> Result<(), String> {
    let whole = whole.escape_debug();
    if part.is_empty() {
        return Err(format!("agent `{whole}` has an empty {what}"));
    }
    if part.chars().any(char::is_control) {
        return Err(format!(
            "the {what} of agent `{whole}` contains a newline or another control character"
        ));
    }
    if part.trim() != part {
        return Err(format!(
            "the {what} of agent `{whole}` starts or ends with whitespace"
        ));
    }
    if part.contains('/') {
        return Err(format!("the {what} of agent `{whole}` contains `/`"));
    }
    if part.contains("..") {
        return Err(format!("the {what} of agent `{whole}` contains `..`"));
    }
    if part.len() > MAX_PART {
        return Err(format!(
            "the {what} of agent `{whole}` is {} bytes long; at most {MAX_PART} are allowed",
            part.len()
        ));
    }
    Ok(())
}

impl fmt::Display for AgentName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.name, self.team)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_good_name_round_trips() {
        let n = AgentName::parse("bob@my-team").unwrap();
        assert_eq!((n.name(), n.team()), ("bob", "my-team"));
        assert_eq!(n.to_string(), "bob@my-team");
        assert!(AgentName::parse(&format!("{}@t", "a".repeat(100))).is_ok());
    }

    #[test]
    fn each_refusal_says_what_is_wrong() {
        let cases = [
            ("bob", "has no team"),
            ("a@b@c", "has 2 `@`"),
            ("@team", "has an empty name"),
            ("bob@", "has an empty team"),
            ("", "has no team"),
            ("bo\nb@t", "newline"),
            ("bob@t\u{7}", "control character"),
            (" bob@t", "name of agent ` bob@t` starts or ends with whitespace"),
            ("bob@t ", "whitespace"),
            ("a/b@t", "contains `/`"),
            ("bob@..", "contains `..`"),
        ];
        for (input, want) in cases {
            let e = AgentName::parse(input).unwrap_err();
            assert!(e.contains(want), "{input:?}: {e}");
        }
        let long = format!("bob@{}", "t".repeat(101));
        assert!(AgentName::parse(&long).unwrap_err().contains("101 bytes long"));
    }

    #[test]
    fn names_order_by_name_then_team() {
        let mut v = [
            AgentName::parse("b@a").unwrap(),
            AgentName::parse("a@z").unwrap(),
            AgentName::parse("a@b").unwrap(),
        ];
        v.sort();
        let shown: Vec<String> = v.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["a@b", "a@z", "b@a"]);
    }
}
