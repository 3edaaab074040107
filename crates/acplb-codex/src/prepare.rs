//! What a session and each of its turns must settle before Codex hears of them, whichever
//! transport: where the conversation continues from (a resumed or forked thread, or the
//! earlier turns as instructions of a new one), the developer instructions, and the checks a
//! prompt and its workspace must pass.

use std::path::Path;

use acplb_core::error::ProviderError;
use acplb_core::provider::SessionSetup;

use crate::instructions;
use crate::options::MAX_PROMPT_CHARS;

/// Where a session's conversation continues from.
#[derive(Debug, Default)]
pub(crate) struct Continuation {
    /// The thread of a loaded session, to resume.
    pub(crate) thread: Option<String>,
    /// The source session's thread of a forked session, to fork.
    pub(crate) fork_from: Option<String>,
    /// While that thread has not been resumed or forked yet: what the conversation was (its
    /// summary or digest), for a new thread if Codex no longer has the old one.
    pub(crate) fallback: Option<String>,
}

impl Continuation {
    /// Takes the resume and fork requests out of `setup`. With nothing to resume or fork, what
    /// was said before becomes a developer instruction of the new thread; a transport that
    /// cannot fork (`forks` false) starts a new thread whose instructions carry what the source
    /// conversation was.
    pub(crate) fn take(setup: &mut SessionSetup, forks: bool) -> Self {
        let resume = setup.resume.take().unwrap_or_default();
        let fork = setup.fork.take().unwrap_or_default();
        let (fork_from, fork_context, unforked) = if forks {
            (fork.thread_id, fork.context, None)
        } else {
            (None, None, fork.context)
        };
        let mut fallback = resume.context.or(fork_context);
        if resume.thread_id.is_none()
            && fork_from.is_none()
            && let Some(context) = fallback.take()
        {
            setup.developer_instructions.push(context);
        }
        if let Some(context) = unforked {
            setup.developer_instructions.push(context);
        }
        Self {
            thread: resume.thread_id,
            fork_from,
            fallback,
        }
    }
}

/// The developer instructions of a thread (or a turn): the session's and the turn's from
/// plugins, after the user's own (from `overrides` or Codex's `config.toml`), or after the
/// client's (`caller`) which take the user's place; none when neither the client nor the
/// plugins add anything. Reads the user's `config.toml`.
pub(crate) fn developer_instructions(
    overrides: &[String],
    caller: Option<&str>,
    session: &[String],
    turn: &[String],
) -> Option<String> {
    let added: Vec<String> = session.iter().chain(turn).cloned().collect();
    if let Some(own) = caller {
        if added.is_empty() {
            return Some(own.to_owned());
        }
        return instructions::merged(Some(own), &added);
    }
    if added.is_empty() {
        return None;
    }
    let home = instructions::codex_home(|k| std::env::var(k).ok());
    let users = instructions::users_own(overrides, home.as_deref());
    instructions::merged(users.as_deref(), &added)
}

/// A prompt Codex accepts: Codex refuses longer input (`input_too_large`), so checking first
/// gives a clear error.
pub(crate) fn check_prompt(text: &str) -> Result<(), ProviderError> {
    let chars = text.chars().count();
    if chars > MAX_PROMPT_CHARS {
        return Err(ProviderError::Prepare(format!(
            "the prompt has {chars} characters; Codex accepts at most {MAX_PROMPT_CHARS}"
        )));
    }
    Ok(())
}

/// A workspace that still exists and is a directory.
pub(crate) fn check_cwd(cwd: &Path) -> Result<(), ProviderError> {
    match std::fs::metadata(cwd) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(ProviderError::WorkDirGone {
            cwd: cwd.to_path_buf(),
            source: std::io::Error::other("it is no longer a directory"),
        }),
        Err(source) => Err(ProviderError::WorkDirGone {
            cwd: cwd.to_path_buf(),
            source,
        }),
    }
}
