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
        // The status as it is now, as the table shows it: a script must not take a session
        // whose acplb is gone for a running one.
        let entries: Vec<Entry> = entries
            .into_iter()
            .map(|mut e| {
                e.status = e.effective_status();
                e
            })
            .collect();
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
                e.title
                    .as_deref()
                    .map(|t| crate::table::one_line(t, TITLE_WIDTH))
                    .unwrap_or_default(),
            ]
        })
        .collect();
    crate::table::write(out, ["ID", "STATUS", "LAST ACTIVE", "CWD", "TITLE"], &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_dirs_are_resolved_by_name() {
        let here = std::env::current_dir().unwrap();
        assert_eq!(absolute(Path::new(".")).unwrap(), here);
        assert_eq!(absolute(Path::new("a/../b/./c")).unwrap(), here.join("b/c"));
        assert_eq!(absolute(Path::new("/x/y/../z/")).unwrap(), Path::new("/x/z"));
    }
}
