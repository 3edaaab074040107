//! `acplb sessions list`: the registry as a table or JSON, newest first.

use std::io::Write as _;
use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

use acplb_core::sessions::registry::{Entry, Registry, page};
use anyhow::Context as _;
use clap::Args;

/// Options of `acplb sessions list`.
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Only sessions whose working directory is DIR (exactly; a relative DIR is taken from the
    /// current directory).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,

    /// Only sessions of this ATM identity: `name` (any team) or `name@team`.
    #[arg(long, value_name = "NAME")]
    identity: Option<String>,

    /// Print the registry entries as a JSON array instead of a table.
    #[arg(long)]
    json: bool,
}

pub(super) const HELP: &str = concat!(
    super::where_kept!(),
    "

Examples:
  acplb sessions list
  acplb sessions list --identity arch@core
  acplb sessions list --cwd ~/src/project --json"
);

/// The longest title shown in the table, in characters.
const TITLE_WIDTH: usize = 48;

pub(super) fn run(args: &ListArgs) -> anyhow::Result<bool> {
    let state = super::state_dir()?;
    let mut out = std::io::stdout().lock();
    if !state.exists() {
        let note = format!("no sessions yet (state dir {} does not exist)", state.display());
        if args.json {
            writeln!(out, "[]")?;
            writeln!(std::io::stderr(), "{note}")?;
        } else {
            writeln!(out, "{note}")?;
        }
        return Ok(true);
    }
    let registry = Registry::new(&state);
    let listing = registry.all().context("reading the session registry")?;
    for problem in &listing.problems {
        super::warn(&format!("skipped {problem}"));
    }
    let cwd = args.cwd.as_deref().map(absolute).transpose()?;
    let entries: Vec<Entry> = listing
        .into_entries()
        .into_iter()
        .filter(|e| {
            args.identity
                .as_deref()
                .is_none_or(|wanted| e.has_identity(wanted))
        })
        .collect();
    let limit = entries.len();
    let entries = page(entries, cwd.as_deref(), None, limit)?.entries;
    if args.json {
        serde_json::to_writer_pretty(&mut out, &entries)?;
        writeln!(out)?;
    } else if entries.is_empty() {
        let filtered = if args.cwd.is_some() || args.identity.is_some() {
            " matching"
        } else {
            ""
        };
        writeln!(
            out,
            "no{filtered} sessions (they are kept in {})",
            registry.dir().display()
        )?;
    } else {
        table(&mut out, &entries, SystemTime::now())?;
    }
    Ok(true)
}

/// `dir` made absolute against the current directory, `.` and `..` resolved by their names (as
/// a shell's `cd` does), never through the file system: the filter is an exact match.
fn absolute(dir: &Path) -> anyhow::Result<PathBuf> {
    let full = std::path::absolute(dir).with_context(|| format!("resolving `{}`", dir.display()))?;
    let mut clean = PathBuf::new();
    for part in full.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                clean.pop();
            }
            other => clean.push(other),
        }
    }
    Ok(clean)
}

fn table(out: &mut impl std::io::Write, entries: &[Entry], now: SystemTime) -> std::io::Result<()> {
    let rows: Vec<[String; 5]> = entries
        .iter()
        .map(|e| {
            [
                e.session_id.clone(),
                e.effective_status().to_string(),
                super::ago(now, e.last_active_time()),
                e.cwd.display().to_string(),
                e.title.as_deref().map(one_line).unwrap_or_default(),
            ]
        })
        .collect();
    let header = ["ID", "STATUS", "LAST ACTIVE", "CWD", "TITLE"].map(str::to_owned);
    let mut widths = [0usize; 4];
    for row in std::iter::once(&header).chain(&rows) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in std::iter::once(&header).chain(&rows) {
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

/// A title on one line, cut to [`TITLE_WIDTH`] characters.
fn one_line(title: &str) -> String {
    let flat: String = title
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= TITLE_WIDTH {
        return flat;
    }
    let mut cut: String = flat.chars().take(TITLE_WIDTH - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_one_line_and_cut() {
        assert_eq!(one_line("fix\nthe bug"), "fix the bug");
        let long = one_line(&"é".repeat(100));
        assert_eq!(long.chars().count(), TITLE_WIDTH);
        assert!(long.ends_with('…'));
    }

    #[test]
    fn relative_dirs_are_resolved_by_name() {
        let here = std::env::current_dir().unwrap();
        assert_eq!(absolute(Path::new(".")).unwrap(), here);
        assert_eq!(absolute(Path::new("a/../b/./c")).unwrap(), here.join("b/c"));
        assert_eq!(absolute(Path::new("/x/y/../z/")).unwrap(), Path::new("/x/z"));
    }
}
