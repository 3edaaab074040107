//! Following a journal as it grows (`acplb sessions show --follow`, `acplb worker attach`):
//! print what is there, then each record as it is appended, rendered as `sessions show` does.
//!
//! Blocking, on a thread of its own: a [`Follower`] reads complete new lines from where it left
//! off and sleeps until a file event (inotify on the journal's folder) or a short poll says the
//! file may have grown; the poll also covers systems without events and a folder that does not
//! exist yet.

use std::fmt::{self, Write as _};
use std::fs::File;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use notify::{RecursiveMode, Watcher as _};

use crate::sessions::files::{self, Access};
use crate::transport::Frame;

use super::history::{JournalError, header, not_a_journal, too_long, too_long_detail};
use super::lines::{Lines, MAX_LINE};
use super::record::Record;
use super::render::Renderer;

/// How long a [`Follower`] sleeps without a file event before looking again, which is also how
/// soon [`follow`] notices its stop flag.
pub const FOLLOW_POLL: Duration = Duration::from_millis(250);

/// Prints the journal at `path` to `out` as `acplb sessions show` renders it, then each record
/// appended after, until `stop` is set (by a signal handler, say); then returns `Ok(())`.
///
/// Waits for a journal that does not exist yet. A torn last line is held back until its newline
/// arrives; a damaged line is noted in place (`! skipped line N: ...`) rather than at the end.
/// Records already on disk when `stop` is seen are still printed, and a streamed message left
/// open is ended with a newline. Errors: the first line is not a journal header
/// ([`JournalError::NotAJournal`], [`JournalError::Newer`]), the file cannot be read
/// ([`JournalError::Io`]), `out` is closed ([`JournalError::Output`]).
pub fn follow(path: &Path, out: &mut dyn std::io::Write, stop: &AtomicBool) -> Result<(), JournalError> {
    let mut follower = Follower::new(path);
    let mut view = View::new(path);
    loop {
        // Read after seeing `stop`, so whatever was written before it was set is printed.
        let stopping = stop.load(Ordering::SeqCst);
        let lines = follower.next_lines()?;
        let mut text = String::new();
        for line in &lines {
            view.line(&mut text, line)?;
        }
        if stopping {
            view.renderer.finish(&mut text);
        }
        if !text.is_empty() {
            out.write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .map_err(JournalError::Output)?;
        }
        if stopping {
            return Ok(());
        }
        if lines.is_empty() {
            follower.wait(FOLLOW_POLL);
        }
    }
}

/// What [`follow`] has printed so far: the header yet or not, the line count, the renderer.
struct View<'a> {
    path: &'a Path,
    lines: usize,
    renderer: Renderer,
}

impl<'a> View<'a> {
    fn new(path: &'a Path) -> Self {
        Self {
            path,
            lines: 0,
            renderer: Renderer::new(),
        }
    }

    /// Renders one complete line of the journal.
    fn line(&mut self, text: &mut String, line: &Frame) -> Result<(), JournalError> {
        self.lines += 1;
        let line = match line {
            Frame::Line(line) => line.as_bytes(),
            Frame::NotUtf8 { lossy, .. } => lossy.as_bytes(),
            Frame::Oversized { bytes } if self.lines > 1 => {
                self.renderer.finish(text);
                let _ = writeln!(text, "! skipped {}", too_long(self.lines, *bytes, MAX_LINE));
                return Ok(());
            }
            Frame::Oversized { .. } => return Err(not_a_journal(self.path, &too_long_detail(MAX_LINE))),
        };
        if self.lines == 1 {
            let history = header(self.path, line)?;
            Renderer::header(text, &history.session_id, &history.cwd, &history.started_at);
            return Ok(());
        }
        if line.is_empty() {
            return Ok(());
        }
        match serde_json::from_slice::<Record>(line) {
            Ok(record) => self.renderer.record(text, &record),
            Err(e) => {
                self.renderer.finish(text);
                let _ = writeln!(text, "! skipped line {}: {e}", self.lines);
            }
        }
        Ok(())
    }
}

/// Reads a growing file line by line: each call returns the complete lines appended since the
/// last one; a last line without its newline waits for it. A link or a FIFO in the journal's
/// place is refused.
pub struct Follower {
    path: PathBuf,
    file: Option<File>,
    /// Splits what is read into lines; the start of a line whose newline has not been written
    /// yet waits in it.
    lines: Lines,
    woken: mpsc::Receiver<()>,
    wake: mpsc::SyncSender<()>,
    watcher: Watch,
}

/// The file-event watcher on the journal's folder, started once the folder exists.
enum Watch {
    NotYet,
    /// Kept only to stay alive: dropping it stops the events.
    Running {
        _watcher: Box<dyn notify::Watcher + Send>,
    },
    /// The system's watcher could not start: only the poll wakes the follower.
    Unavailable,
}

impl fmt::Debug for Follower {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let watch = match self.watcher {
            Watch::NotYet => "not yet",
            Watch::Running { .. } => "running",
            Watch::Unavailable => "unavailable",
        };
        f.debug_struct("Follower")
            .field("path", &self.path)
            .field("open", &self.file.is_some())
            .field("watch", &watch)
            .finish_non_exhaustive()
    }
}

impl Follower {
    /// Follows `path`, from its first byte; the file need not exist yet.
    pub fn new(path: &Path) -> Self {
        // One pending wake-up is enough: the next read takes everything there is.
        let (wake, woken) = mpsc::sync_channel(1);
        Self {
            path: path.to_owned(),
            file: None,
            lines: Lines::new(MAX_LINE),
            woken,
            wake,
            watcher: Watch::NotYet,
        }
    }

    /// The complete lines appended since the last call, in order, each without its newline;
    /// none when the file does not exist yet or has not grown by a whole line. A line over
    /// [`MAX_LINE`] comes as [`Frame::Oversized`], never held whole.
    pub fn next_lines(&mut self) -> Result<Vec<Frame>, JournalError> {
        self.start_watching();
        if !self.open()? {
            return Ok(Vec::new());
        }
        let Some(file) = self.file.as_mut() else {
            return Ok(Vec::new());
        };
        let mut lines = Vec::new();
        // A piece at a time, so a huge journal is not read at once; on past a piece without a
        // newline, so one huge line does not wait a poll per piece.
        loop {
            let read = self.lines.read_from(file).map_err(|source| JournalError::Io {
                path: self.path.clone(),
                source,
            })?;
            lines.extend(std::iter::from_fn(|| self.lines.next_line()));
            if read == 0 || !lines.is_empty() {
                break;
            }
        }
        Ok(lines)
    }

    /// Blocks until the file may have grown (a file event) or `timeout` has passed.
    pub fn wait(&self, timeout: Duration) {
        if self.woken.recv_timeout(timeout).is_ok() {
            // Events that came in a burst are all answered by the next read.
            while self.woken.try_recv().is_ok() {}
        }
    }

    /// Opens the file if it has appeared; `false` while it does not exist.
    fn open(&mut self) -> Result<bool, JournalError> {
        if self.file.is_none() {
            match files::open(&self.path, Access::Read) {
                Ok(file) => self.file = Some(file),
                Err(e) if e.kind() == ErrorKind::NotFound => return Ok(false),
                Err(source) => {
                    return Err(JournalError::Io {
                        path: self.path.clone(),
                        source,
                    });
                }
            }
        }
        Ok(true)
    }

    /// Starts the file-event watcher on the journal's folder once that exists.
    fn start_watching(&mut self) {
        let Watch::NotYet = self.watcher else {
            return;
        };
        let Some(dir) = self.path.parent().filter(|d| d.is_dir()) else {
            return;
        };
        let wake = self.wake.clone();
        let handler = move |_event: notify::Result<notify::Event>| {
            // Any event in the folder may be the journal growing; a full channel already
            // holds a wake-up.
            wake.try_send(()).ok();
        };
        let started = notify::recommended_watcher(handler).and_then(|mut w| {
            w.watch(dir, RecursiveMode::NonRecursive)?;
            Ok(w)
        });
        self.watcher = match started {
            Ok(w) => Watch::Running {
                _watcher: Box::new(w),
            },
            Err(e) => {
                tracing::debug!(dir = %dir.display(), "no file events, polling the journal: {e}");
                Watch::Unavailable
            }
        };
    }
}

#[cfg(test)]
mod tests;
