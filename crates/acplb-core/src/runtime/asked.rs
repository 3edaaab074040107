//! What a session request (`session/new`, `load`, `resume`) asks beside its cwd and MCP
//! servers: a system prompt (appended to the provider's developer instructions) and additional
//! directories (writable beside the cwd), checked before anything opens.

use std::path::PathBuf;

use agent_client_protocol::v1::schema::{ContentBlock, SystemPrompt, SystemPromptMode};

use crate::error::Reason;
use crate::error::wire;

/// The request's system prompt and additional directories, as sent.
#[derive(Debug, Default)]
pub(super) struct Asked {
    pub(super) system_prompt: Option<SystemPrompt>,
    pub(super) additional_directories: Vec<PathBuf>,
}

/// What [`Asked`] comes to once checked.
#[derive(Debug, Default)]
pub(super) struct Checked {
    /// The system prompt's text, for the developer instructions.
    pub(super) instructions: Option<String>,
    /// Absolute directories that exist.
    pub(super) directories: Vec<PathBuf>,
}

impl Asked {
    /// Checks what was asked: only `append` system prompts of text, only absolute directories
    /// that exist. Reads the directories' metadata (as the cwd's is read).
    pub(super) fn check(self) -> Result<Checked, agent_client_protocol::Error> {
        let bad = |msg: String| wire::invalid_params(Reason::InvalidParams, msg);
        let instructions = match self.system_prompt {
            None => None,
            Some(prompt) => Some(instructions(prompt).map_err(bad)?),
        };
        for dir in &self.additional_directories {
            check_directory(dir).map_err(bad)?;
        }
        Ok(Checked {
            instructions,
            directories: self.additional_directories,
        })
    }
}

fn instructions(prompt: SystemPrompt) -> Result<String, String> {
    if prompt.mode != SystemPromptMode::Append {
        let mode = serde_json::to_value(&prompt.mode).unwrap_or_default();
        return Err(format!(
            "systemPrompt mode {mode} is not supported: acplb only appends to Codex's instructions (mode \"append\")"
        ));
    }
    if prompt.content.is_empty() {
        return Err("systemPrompt has no content; send at least one text block".into());
    }
    let mut texts = Vec::with_capacity(prompt.content.len());
    for block in prompt.content {
        match block {
            ContentBlock::Text(t) => texts.push(t.text),
            other => {
                let kind = serde_json::to_value(&other)
                    .ok()
                    .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_owned))
                    .unwrap_or_else(|| "unknown".into());
                return Err(format!(
                    "systemPrompt content must be text blocks; a `{kind}` block cannot be passed on"
                ));
            }
        }
    }
    Ok(texts.join("\n\n"))
}

fn check_directory(dir: &std::path::Path) -> Result<(), String> {
    if !dir.is_absolute() {
        return Err(format!(
            "additionalDirectories entry `{}` must be an absolute path",
            dir.display()
        ));
    }
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(format!(
            "additionalDirectories entry `{}` is not a directory",
            dir.display()
        )),
        Err(e) => Err(format!(
            "additionalDirectories entry `{}` is not accessible: {e}",
            dir.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(mode: SystemPromptMode, content: Vec<ContentBlock>) -> Asked {
        Asked {
            system_prompt: Some(SystemPrompt::new(content).mode(mode)),
            additional_directories: Vec::new(),
        }
    }

    #[test]
    fn text_blocks_are_joined_and_other_modes_or_blocks_refused() {
        let ok = prompt(SystemPromptMode::Append, vec!["one".into(), "two".into()]);
        assert_eq!(ok.check().unwrap().instructions.as_deref(), Some("one\n\ntwo"));
        let e = prompt(SystemPromptMode::Override, vec!["x".into()])
            .check()
            .unwrap_err();
        assert!(
            e.message.contains("mode \"override\" is not supported"),
            "{}",
            e.message
        );
        let e = prompt(SystemPromptMode::Append, vec![]).check().unwrap_err();
        assert!(e.message.contains("has no content"), "{}", e.message);
        let link = ContentBlock::ResourceLink(agent_client_protocol::v1::schema::ResourceLink::new(
            "f",
            "file:///f",
        ));
        let e = prompt(SystemPromptMode::Append, vec![link]).check().unwrap_err();
        assert!(e.message.contains("a `resource_link` block"), "{}", e.message);
    }

    #[test]
    fn directories_must_be_absolute_existing_folders() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let check = |d: PathBuf| {
            Asked {
                system_prompt: None,
                additional_directories: vec![d],
            }
            .check()
            .map(|c| c.directories)
            .map_err(|e| e.message)
        };
        assert_eq!(check(dir.path().into()).unwrap(), [dir.path()]);
        assert!(
            check("rel/dir".into())
                .unwrap_err()
                .contains("must be an absolute path")
        );
        assert!(check(file).unwrap_err().contains("is not a directory"));
        assert!(
            check(dir.path().join("gone"))
                .unwrap_err()
                .contains("is not accessible")
        );
    }
}
