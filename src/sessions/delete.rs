//! `acplb sessions delete ID`: one session's folder (journal, summary) and registry entry
//! deleted, as `session/delete` deletes them; refused while an acplb has it open. Its Codex
//! thread is left to Codex (deleting it needs a Codex process): the id is printed.

use std::io::Write as _;

use acplb_core::sessions::delete::delete;

use super::show::IdArgs;

/// Deletes session `args.id`; an error says why it was not.
pub(crate) fn run(args: &IdArgs) -> anyhow::Result<bool> {
    let state = super::state_dir()?;
    let deleted = delete(&state, &args.id)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "deleted session {}", args.id)?;
    if let Some(thread) = deleted.thread_id {
        writeln!(
            out,
            "its Codex thread {thread} is kept (session/delete from an editor deletes it too)"
        )?;
    }
    Ok(true)
}
