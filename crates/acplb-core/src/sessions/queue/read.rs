//! Opening one queue file without ever blocking or following a link: `O_NONBLOCK | O_NOFOLLOW`,
//! then `fstat`. Anything but a regular file (a directory, a FIFO, a socket, a device, a
//! symlink) is damage, to be set aside like a file that is not a message.

use std::fs::{File, FileType, OpenOptions};
use std::io::{self, Read as _};
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::Path;

use super::error::Damage;
use super::message::{MAX_FILE_BYTES, Message, MessageId};

/// Why a file was not read as a message.
pub(super) enum Unread {
    /// It is no longer there (another consumer took it).
    Gone,
    /// It is damaged: not a regular file, too large, not JSON, not a message.
    Damaged(Damage),
    /// It could not be read for a reason of the system's (permissions, resources).
    Io(io::Error),
}

/// How a file is opened.
#[derive(Clone, Copy)]
pub(super) enum Access {
    /// To read it.
    Read,
    /// To set its modification time (a claim's age starts at the claim).
    Touch,
}

/// Opens `path` if it is a regular file. A FIFO never blocks the open (`O_NONBLOCK`), a
/// symlink is never followed (`O_NOFOLLOW`), and what the open found is checked with `fstat`,
/// so a swap between a check and the open changes nothing.
pub(super) fn open_regular(path: &Path, access: Access) -> Result<File, Unread> {
    let mut options = OpenOptions::new();
    match access {
        Access::Read => options.read(true),
        Access::Touch => options.write(true),
    };
    options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY);
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(Unread::Gone),
        // ELOOP (a symlink), EISDIR (a folder), ENXIO (a FIFO nobody reads): say what it is.
        Err(e) => {
            return match std::fs::symlink_metadata(path) {
                Ok(meta) if !meta.is_file() => Err(not_a_file(meta.file_type())),
                Err(gone) if gone.kind() == io::ErrorKind::NotFound => Err(Unread::Gone),
                Ok(_) | Err(_) => Err(Unread::Io(e)),
            };
        }
    };
    let meta = file.metadata().map_err(Unread::Io)?;
    if meta.is_file() {
        Ok(file)
    } else {
        Err(not_a_file(meta.file_type()))
    }
}

fn not_a_file(kind: FileType) -> Unread {
    let what = if kind.is_dir() {
        "a directory"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "a device"
    };
    Unread::Damaged(Damage::NotAFile { what })
}

/// The message in `path`, whose name gives `id`.
pub(super) fn read_message(path: &Path, id: MessageId) -> Result<Message, Unread> {
    let bytes = read_limited(path)?;
    Message::parse(&bytes, id).map_err(Unread::Damaged)
}

/// A file's bytes, refused past [`MAX_FILE_BYTES`] without reading them all.
pub(super) fn read_limited(path: &Path) -> Result<Vec<u8>, Unread> {
    let file = open_regular(path, Access::Read)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(Unread::Io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(Unread::Damaged(Damage::FileTooLarge { max: MAX_FILE_BYTES }));
    }
    Ok(bytes)
}
