//! Opening acplb's own files under its state directory: never through a symbolic link (a link
//! would send conversation text somewhere else) and never anything but a regular file (opening
//! or reading a FIFO blocks until someone writes to it, which may be never).
//!
//! A session's files are opened relative to its folder ([`SessionDir`]), which is itself opened
//! without following a link, so nothing can swap a link in between the check and the open.

use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag};
use nix::sys::stat::Mode;

use super::state;

/// The journal's name in its session's folder.
pub const JOURNAL: &str = "journal.jsonl";
/// The summary's name in its session's folder.
pub const SUMMARY: &str = "summary.md";

/// How a file is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// For reading.
    Read,
    /// For appending, created `0600` when `create` and missing.
    Append {
        /// Create it when it is missing.
        create: bool,
    },
    /// For reading and writing, created `0600` when missing (a lock file).
    ReadWriteCreate,
}

impl Access {
    fn flags(self) -> OFlag {
        // Not following a link is the point; not blocking lets a FIFO be refused after the open
        // instead of hanging in it (for writing, a FIFO nobody reads fails at once, `ENXIO`).
        let base = OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
        base | match self {
            Access::Read => OFlag::O_RDONLY,
            Access::Append { create: false } => OFlag::O_WRONLY | OFlag::O_APPEND,
            Access::Append { create: true } => OFlag::O_WRONLY | OFlag::O_APPEND | OFlag::O_CREAT,
            Access::ReadWriteCreate => OFlag::O_RDWR | OFlag::O_CREAT,
        }
    }
}

/// Opens the file at `path` as `access` says, refusing a link and anything but a regular file.
pub fn open(path: &Path, access: Access) -> io::Result<File> {
    let fd = nix::fcntl::open(path, access.flags(), private()).map_err(explain)?;
    regular(fd)
}

/// Reads the regular file at `path`, at most `limit` bytes of it (a link or a FIFO is refused).
pub fn read_limited(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    use io::Read as _;
    let mut bytes = Vec::new();
    open(path, Access::Read)?.take(limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// One session's folder, opened without following a link; its files are opened in it.
#[derive(Debug)]
pub struct SessionDir {
    fd: OwnedFd,
    path: PathBuf,
    id: String,
}

impl SessionDir {
    /// Opens the folder of session `id` under the state directory `state`. A missing folder is
    /// `NotFound`; a link or a file in its place is refused.
    pub fn open(state: &Path, id: &str) -> io::Result<Self> {
        state::check_session_id(id).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let path = state::session_dir(state, id);
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = nix::fcntl::open(&path, flags, Mode::empty()).map_err(|e| match e {
            // A link to a folder is `ENOTDIR` too (`O_DIRECTORY` is checked first).
            Errno::ENOTDIR if path.symlink_metadata().is_ok_and(|m| m.is_symlink()) => explain(Errno::ELOOP),
            Errno::ENOTDIR => io::Error::new(io::ErrorKind::InvalidInput, "it is not a folder"),
            other => explain(other),
        })?;
        Ok(Self {
            fd,
            path,
            id: id.to_owned(),
        })
    }

    /// Creates the folder of session `id` (`0700`, and the folders above it) unless it is
    /// there, then opens it as [`SessionDir::open`] does.
    pub fn create(state: &Path, id: &str) -> io::Result<Self> {
        state::check_session_id(id).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        state::create_private_dir(&state::sessions_dir(state))?;
        // `mkdir` never follows a link in the last place: a link there is `EEXIST`, then refused
        // by the open.
        match nix::unistd::mkdir(&state::session_dir(state, id), Mode::S_IRWXU) {
            Ok(()) | Err(Errno::EEXIST) => {}
            Err(e) => return Err(e.into()),
        }
        Self::open(state, id)
    }

    /// Opens the file `name` in this folder as `access` says, refusing a link and anything but
    /// a regular file.
    pub fn file(&self, name: &str, access: Access) -> io::Result<File> {
        let fd = nix::fcntl::openat(&self.fd, name, access.flags(), private()).map_err(explain)?;
        regular(fd)
    }

    /// Where the folder is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The session's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Where the journal is.
    pub fn journal_path(&self) -> PathBuf {
        self.path.join(JOURNAL)
    }
}

fn private() -> Mode {
    Mode::S_IRUSR | Mode::S_IWUSR
}

/// The file behind `fd` if it is a regular one, back in blocking mode.
fn regular(fd: OwnedFd) -> io::Result<File> {
    let file = File::from(fd);
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        use std::os::unix::fs::FileTypeExt as _;
        let what = if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_dir() {
            "a folder"
        } else if kind.is_socket() {
            "a socket"
        } else {
            "a device"
        };
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is {what}, not a regular file"),
        ));
    }
    let flags = OFlag::from_bits_truncate(nix::fcntl::fcntl(&file, FcntlArg::F_GETFL)?);
    nix::fcntl::fcntl(&file, FcntlArg::F_SETFL(flags - OFlag::O_NONBLOCK))?;
    Ok(file)
}

/// An open's error, said plainly where the errno alone would puzzle.
fn explain(e: Errno) -> io::Error {
    match e {
        Errno::ELOOP => io::Error::new(
            io::ErrorKind::InvalidInput,
            "it is a symbolic link, and acplb follows no link in its state directory",
        ),
        // Opening a FIFO nobody reads (or a socket) for writing, without blocking.
        Errno::ENXIO => io::Error::new(
            io::ErrorKind::InvalidInput,
            "it is a FIFO or a socket, not a regular file",
        ),
        other => other.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    const ID: &str = "0b6a3f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";

    #[test]
    fn links_and_fifos_are_refused_regular_files_are_not() {
        let root = tempfile::tempdir().unwrap();
        let dir = SessionDir::create(root.path(), ID).unwrap();
        let outside = root.path().join("outside");
        std::fs::write(&outside, "mine\n").unwrap();
        symlink(&outside, dir.path().join(JOURNAL)).unwrap();
        for access in [
            Access::Read,
            Access::Append { create: true },
            Access::ReadWriteCreate,
        ] {
            let e = dir.file(JOURNAL, access).unwrap_err();
            assert!(e.to_string().contains("symbolic link"), "{access:?}: {e}");
            let e = open(&dir.journal_path(), access).unwrap_err();
            assert!(e.to_string().contains("symbolic link"), "{access:?}: {e}");
        }
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "mine\n");
        std::fs::remove_file(dir.journal_path()).unwrap();
        nix::unistd::mkfifo(&dir.journal_path(), Mode::S_IRWXU).unwrap();
        for access in [
            Access::Read,
            Access::Append { create: false },
            Access::ReadWriteCreate,
        ] {
            let e = dir.file(JOURNAL, access).unwrap_err();
            assert!(e.to_string().contains("FIFO"), "{access:?}: {e}");
        }
        std::fs::remove_file(dir.journal_path()).unwrap();
        let mut f = dir.file(JOURNAL, Access::Append { create: true }).unwrap();
        io::Write::write_all(&mut f, b"line\n").unwrap();
        assert_eq!(read_limited(&dir.journal_path(), 3).unwrap(), b"lin");
    }

    #[test]
    fn a_session_folder_that_is_a_link_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let elsewhere = root.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        state::create_private_dir(&state::sessions_dir(root.path())).unwrap();
        symlink(&elsewhere, state::session_dir(root.path(), ID)).unwrap();
        for e in [
            SessionDir::open(root.path(), ID).unwrap_err(),
            SessionDir::create(root.path(), ID).unwrap_err(),
        ] {
            assert!(e.to_string().contains("symbolic link"), "{e}");
        }
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
        let e = SessionDir::open(root.path(), "0b6a3f0e-0000-4000-8000-000000000000").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }
}
