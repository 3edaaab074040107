//! Codex's skills and custom prompts as slash commands (ADR 0032), on both transports: what
//! they are ([`Skill`], [`Prompt`]), the commands they become beside the built-in ones, and
//! what a prompt that names one runs. A skill is offered as `/$name` (Codex's own mention,
//! `$name`, is what runs it), a custom prompt as `/prompts:name` (as Codex's own composer
//! names it); neither form can be a built-in's. Custom prompts are read from
//! `$CODEX_HOME/prompts/*.md` and expanded here (`prompts.rs`).

pub(crate) mod prompts;

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

use agent_client_protocol::v1::schema::{AvailableCommand, AvailableCommandInput, UnstructuredCommandInput};

/// The most skills, and the most custom prompts, a session offers (the rest are left out,
/// with a warning in the log).
pub(crate) const MAX_EACH: usize = 200;
/// The longest description a command shows, in characters (longer ones are cut, with `…`).
pub(crate) const MAX_DESCRIPTION: usize = 200;
/// The longest name a skill or prompt may have to be offered.
const MAX_NAME: usize = 64;

/// A skill Codex listed for the session's directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Skill {
    pub(crate) name: String,
    pub(crate) description: String,
    /// Its `SKILL.md`.
    pub(crate) path: PathBuf,
}

/// A custom prompt: a Markdown file in `$CODEX_HOME/prompts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Prompt {
    pub(crate) name: String,
    pub(crate) description: String,
    /// What the input field hints (`argument-hint`, else one derived from the placeholders).
    pub(crate) hint: Option<String>,
    /// The text sent, before its placeholders are filled in.
    pub(crate) body: String,
}

/// The skills and prompts a session offers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Extras {
    pub(crate) skills: Vec<Skill>,
    pub(crate) prompts: Vec<Prompt>,
}

/// The skill a prompt invoked, for the transport that passes it to Codex as an input item of
/// its own (app-server); taken by the turn it was set for.
pub(crate) type Picked = Rc<RefCell<Option<Skill>>>;

/// What a prompt's leading `/word` is, as far as skills and prompts go.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Lookup<'a> {
    /// Not a skill's or prompt's command (plain text, or a built-in).
    NotOurs,
    /// `/$name rest`.
    Skill { skill: &'a Skill, rest: &'a str },
    /// `/prompts:name args`.
    Prompt { prompt: &'a Prompt, args: &'a str },
    /// `/$name` or `/prompts:name` naming none the session knows.
    Unknown { command: &'a str },
}

impl Extras {
    /// `builtins`, then a command for each skill, then one for each prompt.
    pub(crate) fn commands(&self, builtins: &[AvailableCommand]) -> Vec<AvailableCommand> {
        let mut out = builtins.to_vec();
        out.extend(self.skills.iter().map(|s| {
            AvailableCommand::new(format!("${}", s.name), format!("Skill: {}", s.description))
                .input(AvailableCommandInput::Unstructured(
                    UnstructuredCommandInput::new("optional: what to do with the skill"),
                ))
                // Where the skill is, for AIR only (ADR 0049), as the TS peer gives it.
                .meta(acplb_core::capabilities::air_meta(
                    "skillPath",
                    s.path.to_string_lossy().into_owned().into(),
                ))
        }));
        out.extend(self.prompts.iter().map(|p| {
            let command = AvailableCommand::new(format!("prompts:{}", p.name), p.description.clone());
            match &p.hint {
                Some(hint) => command.input(AvailableCommandInput::Unstructured(
                    UnstructuredCommandInput::new(hint.clone()),
                )),
                None => command,
            }
        }));
        out
    }

    /// What `text` invokes.
    pub(crate) fn lookup<'a>(&'a self, text: &'a str) -> Lookup<'a> {
        let Some(rest) = text.trim_start().strip_prefix('/') else {
            return Lookup::NotOurs;
        };
        let (command, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let args = args.trim();
        if let Some(name) = command.strip_prefix('$') {
            match self.skills.iter().find(|s| s.name == name) {
                Some(skill) => Lookup::Skill { skill, rest: args },
                None => Lookup::Unknown { command },
            }
        } else if let Some(name) = command.strip_prefix("prompts:") {
            match self.prompts.iter().find(|p| p.name == name) {
                Some(prompt) => Lookup::Prompt { prompt, args },
                None => Lookup::Unknown { command },
            }
        } else {
            Lookup::NotOurs
        }
    }
}

/// What Codex is sent for skill `name` with the user's `rest`: its mention, which has Codex
/// read the skill's instructions in, and the user's words.
pub(crate) fn skill_text(name: &str, rest: &str) -> String {
    if rest.is_empty() {
        format!("${name}")
    } else {
        format!("${name} {rest}")
    }
}

/// Whether `name` can be a command: 1 to 64 ASCII letters, digits, `-`, `_`, `.` or `:`,
/// starting with a letter or digit (no paths, spaces, control or look-alike characters).
pub(crate) fn safe_name(name: &str) -> bool {
    name.len() <= MAX_NAME
        && name.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
}

/// `text` on one line, without control characters, at most [`MAX_DESCRIPTION`] characters.
pub(crate) fn one_line(text: &str) -> String {
    // Whitespace (newlines, tabs) separates words; other control characters go.
    let shown: String = text
        .chars()
        .filter(|c| c.is_whitespace() || !c.is_control())
        .collect();
    crate::render::one_line(&shown, MAX_DESCRIPTION)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn extras() -> Extras {
        Extras {
            skills: vec![Skill {
                name: "demo".into(),
                description: "A demo".into(),
                path: PathBuf::from("/h/skills/demo/SKILL.md"),
            }],
            prompts: vec![Prompt {
                name: "greet".into(),
                description: "Greets".into(),
                hint: Some("NAME=<who>".into()),
                body: "Hello $NAME".into(),
            }],
        }
    }

    #[test]
    fn skills_and_prompts_follow_the_builtins_under_names_no_builtin_has() {
        let builtins = vec![AvailableCommand::new("review", "Review")];
        let names: Vec<String> = extras().commands(&builtins).into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["review", "$demo", "prompts:greet"]);
    }

    #[test]
    fn a_prompt_names_a_skill_a_prompt_an_unknown_one_or_none() {
        let extras = extras();
        assert!(matches!(
            extras.lookup("  /$demo fix the tests"),
            Lookup::Skill { skill, rest: "fix the tests" } if skill.name == "demo"
        ));
        assert!(matches!(
            extras.lookup("/prompts:greet NAME=x"),
            Lookup::Prompt { args: "NAME=x", .. }
        ));
        assert_eq!(extras.lookup("/$gone"), Lookup::Unknown { command: "$gone" });
        assert_eq!(
            extras.lookup("/prompts:nope"),
            Lookup::Unknown {
                command: "prompts:nope"
            }
        );
        assert_eq!(extras.lookup("/review"), Lookup::NotOurs);
        assert_eq!(extras.lookup("costs $5"), Lookup::NotOurs);
        assert_eq!(skill_text("demo", ""), "$demo");
        assert_eq!(skill_text("demo", "go"), "$demo go");
    }

    #[test]
    fn names_are_safe_and_descriptions_short() {
        assert!(safe_name("pdf-tools_2.x"));
        for bad in ["", "../etc", "a b", "-x", "é", "a\u{202e}b", &"x".repeat(65)] {
            assert!(!safe_name(bad), "{bad:?}");
        }
        let long = one_line(&format!("line one\nline\ttwo {}", "y".repeat(500)));
        assert_eq!(long.chars().count(), MAX_DESCRIPTION);
        assert!(long.starts_with("line one line two") && long.ends_with('…'));
    }
}
