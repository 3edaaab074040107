//! The stand-in's stdout and stderr: line writes, and waiting until the reader emptied the pipe.

use std::io::{self, Write};
use std::os::fd::{AsRawFd as _, RawFd};
use std::time::Duration;

/// Past this, a reader that never empties the pipe (gone, or stuck) is no longer waited for.
const DRAIN_LIMIT: Duration = Duration::from_secs(30);

/// One of the process's output pipes.
pub struct FdPipe {
    fd: RawFd,
    writer: Box<dyn Write + Send>,
}

impl FdPipe {
    /// File descriptor 1.
    pub fn stdout() -> Self {
        let out = io::stdout();
        Self {
            fd: out.as_raw_fd(),
            writer: Box::new(out),
        }
    }

    /// File descriptor 2.
    pub fn stderr() -> Self {
        let err = io::stderr();
        Self {
            fd: err.as_raw_fd(),
            writer: Box::new(err),
        }
    }

    /// Writes `line` and a newline, and flushes.
    pub fn write_line(&mut self, line: &str) -> io::Result<()> {
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        self.writer.write_all(&bytes)?;
        self.writer.flush()
    }

    /// Flushes buffered output.
    pub fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }

    /// Waits until the reader has taken every byte written so far. Not a pipe (a file, a
    /// terminal): returns at once.
    pub async fn wait_drained(&self) -> io::Result<()> {
        let started = std::time::Instant::now();
        for spin in 0u32.. {
            match unread_bytes(self.fd) {
                Some(0) | None => return Ok(()),
                Some(_) if spin < 50 => std::thread::yield_now(),
                Some(_) if started.elapsed() > DRAIN_LIMIT => return Ok(()),
                Some(_) => tokio::time::sleep(Duration::from_millis(1)).await,
            }
        }
        Ok(())
    }
}

/// Bytes written to the pipe `fd` and not read yet (`FIONREAD`), `None` when `fd` is no pipe.
#[allow(
    unsafe_code,
    reason = "FIONREAD has no safe wrapper in the workspace's dependencies"
)]
fn unread_bytes(fd: RawFd) -> Option<usize> {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one c_int through the pointer, which points at `n`, a live,
    // aligned c_int; an invalid or non-pipe fd makes ioctl fail without touching it.
    let rc = unsafe { libc::ioctl(fd, libc::FIONREAD, &raw mut n) };
    if rc == 0 { usize::try_from(n).ok() } else { None }
}

impl std::fmt::Debug for FdPipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FdPipe")
            .field("fd", &self.fd)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unread_bytes_of_a_pipe() {
        let (reader, mut writer) = std::io::pipe().unwrap();
        assert_eq!(unread_bytes(writer.as_raw_fd()), Some(0));
        writer.write_all(b"abc\n").unwrap();
        assert_eq!(unread_bytes(writer.as_raw_fd()), Some(4));
        assert_eq!(unread_bytes(reader.as_raw_fd()), Some(4));
        drop(reader);
    }

    #[test]
    fn a_file_is_not_a_pipe_with_unread_bytes() {
        let file = tempfile::tempfile().unwrap();
        // Regular files answer FIONREAD with the bytes left to read, 0 for a fresh one.
        assert_eq!(unread_bytes(file.as_raw_fd()), Some(0));
    }
}
