//! `acplb queue send`: one message into a target's queue, its text from the command line or
//! stdin.

use std::io::{Read as _, Write as _};

use acplb_core::sessions::queue::{self, MAX_TEXT_BYTES};
use anyhow::{Context as _, bail};
use clap::Args;

/// Options of `acplb queue send`.
#[derive(Debug, Args)]
pub(crate) struct SendArgs {
    /// The session id or worker identity (name@team) the message is for.
    #[arg(value_name = "TARGET")]
    target: String,

    /// The message; `-` reads it from stdin (at most 1 MiB).
    #[arg(value_name = "MESSAGE", allow_hyphen_values = true)]
    message: String,

    /// Who sends it (shown to the recipient), e.g. your ATM identity.
    #[arg(long, value_name = "NAME")]
    from: Option<String>,
}

pub(super) const HELP: &str = concat!(
    super::layout!(),
    "

Examples:
  acplb queue send bob@core 'please rebase onto main' --from arch@core
  acplb queue send 0b6a3f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b 'also run the tests'
  cat notes.md | acplb queue send bob@core -"
);

pub(super) fn run(args: &SendArgs) -> anyhow::Result<bool> {
    // Refuse a bad target before waiting on stdin.
    queue::check_target(&args.target)?;
    let state = crate::sessions::state_dir()?;
    let text = if args.message == "-" {
        read_stdin()?
    } else {
        args.message.clone()
    };
    let id = queue::send(&state, &args.target, args.from.as_deref(), &text)
        .with_context(|| format!("sending to `{}`", args.target))?;
    warn_if_no_such_session(&state, &args.target)?;
    writeln!(std::io::stdout().lock(), "{id}")?;
    Ok(true)
}

/// A target without `@` names a session: when none of that id is kept, says so on stderr (a
/// mistyped id would otherwise wait forever, unseen). The message stays queued: the session
/// may be one another state directory keeps, or be opened later.
fn warn_if_no_such_session(state: &std::path::Path, target: &str) -> anyhow::Result<()> {
    if target.contains('@') {
        return Ok(());
    }
    let journal = acplb_core::sessions::state::journal_path(state, target);
    if !journal.is_file() {
        writeln!(
            std::io::stderr().lock(),
            "acplb: warning: no session `{target}` is kept in {}; the message waits in its queue until a session of that id opens (`acplb sessions list` shows the ids, a worker is name@team)",
            state.display()
        )?;
    }
    Ok(())
}

/// Stdin as text, refused past [`MAX_TEXT_BYTES`] without reading the rest.
fn read_stdin() -> anyhow::Result<String> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_TEXT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .context("reading the message from stdin")?;
    if bytes.len() > MAX_TEXT_BYTES {
        bail!("the message on stdin is more than the {MAX_TEXT_BYTES} bytes a queue message may hold");
    }
    String::from_utf8(bytes).context("the message on stdin is not UTF-8")
}
