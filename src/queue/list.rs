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

Damaged files are not listed (a warning names each); the next claim sets them aside."
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
        table(&mut out, rows)?;
    }
    Ok(true)
}

fn row(m: &Message, state: &str, now: SystemTime) -> [String; 5] {
    [
        m.id.to_string(),
        state.to_owned(),
        crate::sessions::ago(now, Some(m.sent_at)),
        m.from.clone().unwrap_or_else(|| "-".to_owned()),
        one_line(&m.text),
    ]
}

fn table(out: &mut impl std::io::Write, rows: impl Iterator<Item = [String; 5]>) -> std::io::Result<()> {
    let header = ["ID", "STATE", "SENT", "FROM", "TEXT"].map(str::to_owned);
    let rows: Vec<_> = std::iter::once(header).chain(rows).collect();
    let mut widths = [0usize; 4];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in &rows {
        let mut line = String::new();
        for (w, cell) in widths.iter().zip(row) {
            line.push_str(cell);
            line.extend(std::iter::repeat_n(' ', w - cell.chars().count() + 2));
        }
        line.push_str(&row[4]);
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// A text on one line, cut to [`TEXT_WIDTH`] characters.
fn one_line(text: &str) -> String {
    let flat: String = text
        .trim()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= TEXT_WIDTH {
        return flat;
    }
    let mut cut: String = flat.chars().take(TEXT_WIDTH - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_one_line_and_cut() {
        assert_eq!(one_line(" fix\nthe bug\n"), "fix the bug");
        let long = one_line(&"é".repeat(100));
        assert_eq!(long.chars().count(), TEXT_WIDTH);
        assert!(long.ends_with('…'));
    }
}
