//! `acplb sessions prune`: deletes sessions last active before a limit, and session folders
//! the registry no longer lists. Ids are checked before anything is deleted and no symbolic
//! link is ever followed, so nothing outside `<state>/sessions/` can go.

use std::collections::HashSet;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use acplb_core::sessions::files::SessionDir;
use acplb_core::sessions::hold::{Hold, HoldError};
use acplb_core::sessions::registry::{Listed, Registry, Status};
use acplb_core::sessions::state::{check_session_id, journal_path, session_dir, sessions_dir};
use anyhow::Context as _;
use clap::Args;

/// Options of `acplb sessions prune`.
#[derive(Debug, Args)]
pub(crate) struct PruneArgs {
    /// Delete sessions last active longer ago than this: `30d`, `12h`, `2w`, `90min`.
    #[arg(long, value_name = "DURATION", default_value = "30d", value_parser = parse_age)]
    older_than: Duration,

    /// Only show what would be deleted.
    #[arg(long)]
    dry_run: bool,
}

pub(super) const HELP: &str = concat!(
    "\
A session is deleted when it was last active before the limit and is not open in a running
acplb (an `active` session whose acplb is gone counts as interrupted). Its folder goes with it:
sessions/<id>/ (journal, summary). Folders under sessions/ that the registry does not list are
deleted when their journal was last written before the limit. Symbolic links are never followed.

Examples:
  acplb sessions prune --dry-run
  acplb sessions prune --older-than 7d

",
    super::where_kept!()
);

fn parse_age(s: &str) -> Result<Duration, String> {
    humantime::parse_duration(s).map_err(|e| format!("`{s}` is not a duration such as `30d` or `12h` ({e})"))
}

/// What one run deleted (or would delete).
struct Prune<'a> {
    registry: Registry,
    state: &'a Path,
    cutoff: SystemTime,
    now: SystemTime,
    dry_run: bool,
    /// Whether session folders may be touched (`sessions/` is a real folder).
    folders: bool,
    removed: usize,
    bytes: u64,
    failed: bool,
}

pub(super) fn run(args: &PruneArgs) -> anyhow::Result<bool> {
    let state = super::state_dir()?;
    let mut out = std::io::stdout().lock();
    if !state.exists() {
        writeln!(
            out,
            "nothing to prune (state dir {} does not exist)",
            state.display()
        )?;
        return Ok(true);
    }
    let now = SystemTime::now();
    let registry = Registry::new(&state);
    let listing = registry.all().context("reading the session registry")?;
    for problem in &listing.problems {
        super::warn(&format!("skipped {problem}"));
    }
    let mut prune = Prune {
        registry,
        state: &state,
        cutoff: now.checked_sub(args.older_than).unwrap_or(SystemTime::UNIX_EPOCH),
        now,
        dry_run: args.dry_run,
        folders: sessions_folder_is_real(&state),
        removed: 0,
        bytes: 0,
        failed: false,
    };
    let known: HashSet<String> = listing
        .entries
        .iter()
        .map(|l| l.entry.session_id.clone())
        .collect();
    for listed in &listing.entries {
        prune.session(&mut out, listed)?;
    }
    if !listing.problems.is_empty() {
        super::warn("not deleting unlisted session folders: the registry has files it cannot read");
    } else if prune.folders {
        prune.orphans(&mut out, &known)?;
    }
    prune.summary(&mut out, args.older_than)?;
    Ok(!prune.failed)
}

/// `sessions/` is a folder of its own (or absent), not a link leading elsewhere.
fn sessions_folder_is_real(state: &Path) -> bool {
    let dir = sessions_dir(state);
    match std::fs::symlink_metadata(&dir) {
        Ok(m) if m.file_type().is_symlink() => {
            super::warn(&format!(
                "{} is a symbolic link: no session folder is deleted",
                dir.display()
            ));
            false
        }
        _ => true,
    }
}

impl Prune<'_> {
    fn verb(&self) -> &'static str {
        if self.dry_run { "would delete" } else { "deleted" }
    }

    /// Deletes one listed session if it is old and nobody has it open.
    fn session(&mut self, out: &mut impl io::Write, listed: &Listed) -> io::Result<()> {
        let e = &listed.entry;
        if e.is_held() || e.effective_status() == Status::Active {
            return Ok(());
        }
        let Some(last) = e.last_active_time() else {
            super::warn(&format!(
                "kept session {}: its lastActive `{}` is not a time",
                e.session_id, e.last_active
            ));
            return Ok(());
        };
        if last >= self.cutoff {
            return Ok(());
        }
        if let Err(bad) = check_session_id(&e.session_id) {
            super::warn(&format!("kept a registry entry: {bad}"));
            return Ok(());
        }
        let folder = session_dir(self.state, &e.session_id);
        // Held until the folder is gone: no acplb can open the session meanwhile.
        let (size, _hold) = match self.folder(&e.session_id) {
            Folder::Keep => return Ok(()),
            Folder::Missing => (None, None),
            Folder::Size(n, hold) => (Some(n), Some(hold)),
        };
        if !self.dry_run && !self.unregister(listed, last) {
            return Ok(());
        }
        if !self.dry_run && size.is_some() && !self.delete_folder(&folder) {
            return Ok(());
        }
        let status = e.effective_status();
        let ago = super::ago(self.now, Some(last));
        let size_note = size.map_or_else(|| "no folder".to_owned(), bytes);
        writeln!(
            out,
            "{} {}  {status}, last active {ago}, {}  ({size_note})",
            self.verb(),
            e.session_id,
            e.cwd.display()
        )?;
        self.count(size.unwrap_or(0));
        Ok(())
    }

    /// Removes the entry if it is still the one read (not used since, not opened since).
    fn unregister(&mut self, listed: &Listed, last: SystemTime) -> bool {
        let mut removed = false;
        let result = self
            .registry
            .update(&listed.key, &listed.entry.session_id, |current| {
                let unchanged = current.as_ref().is_some_and(|c| {
                    c.last_active_time() == Some(last)
                        && !c.is_held()
                        && c.effective_status() != Status::Active
                });
                removed = unchanged;
                if unchanged { None } else { current }
            });
        match result {
            Err(e) => {
                super::warn(&format!("kept session {}: {e:#}", listed.entry.session_id));
                self.failed = true;
                false
            }
            Ok(()) if !removed => {
                super::warn(&format!(
                    "kept session {}: it was used meanwhile",
                    listed.entry.session_id
                ));
                false
            }
            Ok(()) => true,
        }
    }

    /// Deletes the folders under `sessions/` the registry does not list, by their journal's age.
    fn orphans(&mut self, out: &mut impl io::Write, known: &HashSet<String>) -> io::Result<()> {
        let dir = sessions_dir(self.state);
        let read = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => {
                super::warn(&format!("cannot list {}: {e}", dir.display()));
                self.failed = true;
                return Ok(());
            }
        };
        let mut names: Vec<String> = read
            .filter_map(Result::ok)
            .filter_map(|d| d.file_name().into_string().ok())
            .filter(|n| check_session_id(n).is_ok() && !known.contains(n))
            .collect();
        names.sort();
        for id in names {
            let folder = session_dir(self.state, &id);
            // Before the hold, which may create the lock file and so touch the folder.
            let written = last_written(self.state, &id);
            if written.is_none_or(|t| t >= self.cutoff) {
                continue;
            }
            let Folder::Size(size, _hold) = self.folder(&id) else {
                continue;
            };
            if !self.dry_run && !self.delete_folder(&folder) {
                continue;
            }
            writeln!(
                out,
                "{} {id}  folder without registry entry, last written {}  ({})",
                self.verb(),
                super::ago(self.now, written),
                bytes(size)
            )?;
            self.count(size);
        }
        Ok(())
    }

    /// What session `id`'s folder is, without following a link; one that an acplb has open
    /// (it holds the session) is kept.
    fn folder(&mut self, id: &str) -> Folder {
        let folder = &session_dir(self.state, id);
        let meta = match std::fs::symlink_metadata(folder) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Folder::Missing,
            Err(e) => {
                super::warn(&format!("kept {}: {e}", folder.display()));
                self.failed = true;
                return Folder::Keep;
            }
            Ok(m) => m,
        };
        if !self.folders {
            return Folder::Keep;
        }
        if meta.file_type().is_symlink() || !meta.is_dir() {
            super::warn(&format!(
                "kept {}: not a folder (a symbolic link is never followed)",
                folder.display()
            ));
            return Folder::Keep;
        }
        let hold = match SessionDir::open(self.state, id).map(|dir| dir.hold()) {
            Ok(Ok(hold)) => hold,
            // Open in an acplb: in use, whatever the registry says.
            Ok(Err(HoldError::Elsewhere { .. } | HoldError::Here { .. })) => return Folder::Keep,
            Ok(Err(e)) => {
                super::warn(&format!("kept {}: {e}", folder.display()));
                return Folder::Keep;
            }
            Err(e) => {
                super::warn(&format!("kept {}: {e}", folder.display()));
                return Folder::Keep;
            }
        };
        Folder::Size(tree_size(folder), hold)
    }

    fn delete_folder(&mut self, folder: &Path) -> bool {
        // `remove_dir_all` deletes links inside the folder, never what they point to.
        match std::fs::remove_dir_all(folder) {
            Ok(()) => true,
            Err(e) => {
                super::warn(&format!("could not delete {}: {e}", folder.display()));
                self.failed = true;
                false
            }
        }
    }

    fn count(&mut self, size: u64) {
        self.removed += 1;
        self.bytes += size;
    }

    fn summary(&self, out: &mut impl io::Write, limit: Duration) -> io::Result<()> {
        let limit = humantime::format_duration(limit);
        match (self.removed, self.dry_run) {
            (0, _) => writeln!(out, "nothing to prune (no session unused for {limit})"),
            (n, true) => writeln!(
                out,
                "would delete {n} session(s), freeing {} (dry run: nothing was deleted)",
                bytes(self.bytes)
            ),
            (n, false) => writeln!(out, "deleted {n} session(s), freed {}", bytes(self.bytes)),
        }
    }
}

/// A session's folder, as `prune` sees it.
enum Folder {
    /// There is none.
    Missing,
    /// A real folder holding this many bytes, and the hold on its session (nobody had it).
    Size(u64, Hold),
    /// A link, a file, or unreadable: it, and the session, stay (a warning says why).
    Keep,
}

/// When an unlisted session folder was last written: its journal's time, else the folder's.
fn last_written(state: &Path, id: &str) -> Option<SystemTime> {
    let modified = |p: PathBuf| std::fs::symlink_metadata(p).and_then(|m| m.modified()).ok();
    modified(journal_path(state, id)).or_else(|| modified(session_dir(state, id)))
}

/// The bytes of the files under `dir`, links counted as themselves, never followed.
fn tree_size(dir: &Path) -> u64 {
    let Ok(read) = std::fs::read_dir(dir) else {
        return 0;
    };
    read.filter_map(Result::ok)
        .map(|d| match d.path().symlink_metadata() {
            Ok(m) if m.is_dir() => tree_size(&d.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// `1.5 KiB`-style sizes.
fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    #[expect(clippy::cast_precision_loss, reason = "a size shown to one decimal")]
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_like_du() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(5 * 1024 * 1024), "5.0 MiB");
    }

    #[test]
    fn ages_are_humantime_durations() {
        assert_eq!(parse_age("30d"), Ok(Duration::from_secs(30 * 86_400)));
        assert_eq!(parse_age("12h"), Ok(Duration::from_secs(12 * 3600)));
        assert!(
            parse_age("soon")
                .unwrap_err()
                .contains("`soon` is not a duration")
        );
    }
}
