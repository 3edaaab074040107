//! `acplb sessions show ID` and `acplb sessions summary ID`: one kept session as readable text
//! (the way the editor showed it), and its shutdown summary.

use std::io::Write as _;

use acplb_core::sessions::state;
use acplb_core::sessions::{files, journal};
use anyhow::{Context as _, bail};
use clap::Args;

/// The session to show.
#[derive(Debug, Args)]
pub(crate) struct IdArgs {
    /// The session id (as `acplb sessions list` shows it).
    pub(crate) id: String,
}

/// `sessions show`'s arguments.
#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    #[command(flatten)]
    session: IdArgs,
    /// Keep printing what the session does as it happens, until Ctrl-C (or SIGTERM, SIGHUP).
    #[arg(short, long)]
    follow: bool,
}

pub(crate) const SHOW_HELP: &str = "\
Prints each prompt (`> `), the agent's text, `(thinking)` for its reasoning, each tool call
(`⏺ title [kind]`, then the end of its output and its final status), plans, and how each turn
ended. A turn cut short by a crash ends `interrupted`.

With --follow, it goes on printing each record as the session writes it, like `tail -f`; a
damaged line is noted where it is. Ctrl-C ends it (exit 0).";

/// `sessions show`.
pub(crate) fn show(args: &ShowArgs) -> anyhow::Result<bool> {
    let state = super::state_dir()?;
    if args.follow {
        return follow(&state, &args.session.id);
    }
    let args = &args.session;
    let history = history(&state, &args.id)?;
    for skipped in &history.skipped {
        super::warn(&format!("journal of {}: skipped {skipped}", args.id));
    }
    let mut out = std::io::stdout().lock();
    out.write_all(journal::render(&history).as_bytes())
        .context("writing to stdout")?;
    Ok(true)
}

/// `sessions show --follow`: the session must exist; then it is printed until a signal.
pub(crate) fn follow(state: &std::path::Path, id: &str) -> anyhow::Result<bool> {
    state::check_session_id(id)?;
    let path = state::journal_path(state, id);
    if !state.exists() {
        bail!(
            "no sessions yet: the state directory {} does not exist",
            state.display()
        );
    }
    if !path.exists() {
        let missing = journal::JournalError::Missing {
            id: id.to_owned(),
            path,
        };
        return Err(missing.into());
    }
    let stop = crate::stop_flag::on_signals()?;
    match journal::follow(&path, &mut std::io::stdout().lock(), &stop) {
        // The reader went away (`| head`): nothing left to show it.
        Err(journal::JournalError::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(true),
        other => other.map(|()| true).map_err(Into::into),
    }
}

/// `sessions summary`.
pub(crate) fn summary(args: &IdArgs) -> anyhow::Result<bool> {
    let state = super::state_dir()?;
    // The session must exist; then its summary may or may not.
    history(&state, &args.id)?;
    let path = state::summary_path(&state, &args.id);
    // Not through a link, and never a FIFO (which would wait for a writer for ever).
    let read = files::open(&path, files::Access::Read).and_then(|mut f| {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut f, &mut text).map(|_| text)
    });
    match read {
        Ok(text) => {
            std::io::stdout()
                .lock()
                .write_all(text.as_bytes())
                .context("writing to stdout")?;
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "session {} has no summary: summaries are written when acplb shuts down with the \
             `session-summary` plugin in composer.toml",
            args.id
        ),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

fn history(state: &std::path::Path, id: &str) -> anyhow::Result<journal::History> {
    state::check_session_id(id)?;
    if !state.exists() {
        bail!(
            "no sessions yet: the state directory {} does not exist",
            state.display()
        );
    }
    Ok(journal::read(state, id)?)
}
