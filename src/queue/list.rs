//! `acplb queue list`: a target's waiting and claimed messages, as a table or JSON.

use std::io::Write as _;
use std::time::SystemTime;

use acplb_core::sessions::queue::{self, Message, Queue};
use clap::Args;

/// Options of `acplb queue list`.
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// The session id or worker identity (name@team).
    #[arg(value_name = "TARGET")]
    target: String,

    /// Print `{"target", "pending": [...], "claimed": [...]}` (the message files as they are).
    #[arg(long)]
    json: bool,
}

pub(super) const HELP: &str = concat!(
    super::layout!(),
    "

Damaged files, and anything named like a message that is not a regular file (a directory, a
FIFO, a symlink), are not listed (a warning names each); the next claim sets them aside as
<id>.bad. Listing never blocks on what it finds."
);

/// The longest text shown in the table, in characters.
const TEXT_WIDTH: usize = 60;

pub(super) fn run(args: &ListArgs) -> anyhow::Result<bool> {
    queue::check_target(&args.target)?;
    let state = crate::sessions::state_dir()?;
    // Listing creates nothing: a queue nobody sent to has no folder yet.
    let (pending, claimed) = if queue::queue_dir(&state, &args.target).is_dir() {
        let q = Queue::open(&state, &args.target)?;
        (q.pending()?, q.claimed()?)
    } else {
        (Vec::new(), Vec::new())
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let doc = serde_json::json!({
            "target": args.target,
            "pending": pending,
            "claimed": claimed,
        });
        serde_json::to_writer_pretty(&mut out, &doc)?;
        writeln!(out)?;
    } else if pending.is_empty() && claimed.is_empty() {
        writeln!(out, "no messages for {}", args.target)?;
    } else {
        let now = SystemTime::now();
        let rows = pending
            .iter()
            .map(|m| row(m, "pending", now))
            .chain(claimed.iter().map(|m| row(m, "claimed", now)));
        let rows: Vec<[String; 5]> = rows.collect();
        crate::table::write(&mut out, ["ID", "STATE", "SENT", "FROM", "TEXT"], &rows)?;
    }
    Ok(true)
}

fn row(m: &Message, state: &str, now: SystemTime) -> [String; 5] {
    [
        m.id.to_string(),
        state.to_owned(),
        crate::sessions::ago(now, Some(m.sent_at)),
        m.from.clone().unwrap_or_else(|| "-".to_owned()),
        crate::table::one_line(&m.text, TEXT_WIDTH),
    ]
}
