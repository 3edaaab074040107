//! Dropping a message into a queue: written under a temporary name, synced, then renamed into
//! place, so a consumer sees the whole file or none of it.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

use super::message::{Message, MessageId, pending_name, temp_name};
use super::{QueueError, check_target, queue_dir};
use crate::sessions::state::create_private_dir;

/// Sends `text` (from `from`, when given) to `target`'s queue under the state dir `state`, and
/// returns its id. The folder is created `0700` if needed, the file `0600`: `.tmp-<uuid>` is
/// written and synced, then renamed to `<uuid>.json`, and the folder is synced so the rename
/// survives a crash of the machine. Blocking file I/O.
pub fn send(state: &Path, target: &str, from: Option<&str>, text: &str) -> Result<MessageId, QueueError> {
    check_target(target)?;
    let message = Message::new(from, text)?;
    let dir = queue_dir(state, target);
    create_private_dir(&dir).map_err(|e| QueueError::io("create", &dir, e))?;
    let bytes = serde_json::to_vec(&message)
        .map_err(|e| QueueError::io("encode a message for", &dir, std::io::Error::other(e)))?;
    let tmp = dir.join(temp_name(message.id));
    if let Err(e) = write_synced(&tmp, &bytes) {
        // What was written is of no use to anyone; a failure to remove it leaves a temp file
        // that consumers ignore and `recover_stale` removes.
        std::fs::remove_file(&tmp).ok();
        return Err(QueueError::io("write", tmp, e));
    }
    let path = dir.join(pending_name(message.id));
    if let Err(e) = std::fs::rename(&tmp, &path) {
        std::fs::remove_file(&tmp).ok();
        return Err(QueueError::io("rename", tmp, e));
    }
    File::open(&dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| QueueError::io("sync", &dir, e))?;
    tracing::debug!(id = %message.id, target, "queued a message");
    Ok(message.id)
}

fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}
