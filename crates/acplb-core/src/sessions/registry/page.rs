//! One page of sessions, newest first, for `session/list` and `acplb sessions list`.
//!
//! Order: `lastActive` descending, then session id descending (timestamps sort as strings).
//! The cursor is the sort key of the last entry returned (base64url of `[1, lastActive, id]`),
//! and the next page holds the entries strictly after it: sessions added (or touched) since
//! then sort before it and never push an entry onto a second page or out of the list.

use std::cmp::Ordering;
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::entry::Entry;

/// The page size when the caller names none.
pub const DEFAULT_PAGE_SIZE: usize = 50;

/// One page of entries.
#[derive(Clone, Debug, PartialEq)]
pub struct Page<T = Entry> {
    /// The entries, newest first.
    pub entries: Vec<T>,
    /// The cursor of the next page, `None` on the last.
    pub next_cursor: Option<String>,
}

/// A cursor this module did not hand out.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid cursor `{cursor}`: {reason} (pass a `nextCursor` back exactly as it was returned)")]
pub struct BadCursor {
    /// The cursor (its first 100 characters).
    pub cursor: String,
    /// What is wrong with it.
    pub reason: String,
}

/// The page after `cursor` (the first page without one) of the entries whose cwd is `cwd`
/// (exact match; all without), at most `limit` entries (at least 1).
pub fn page<T: AsRef<Entry>>(
    entries: Vec<T>,
    cwd: Option<&Path>,
    cursor: Option<&str>,
    limit: usize,
) -> Result<Page<T>, BadCursor> {
    let after = cursor.map(decode).transpose()?;
    let limit = limit.max(1);
    let mut kept: Vec<T> = entries
        .into_iter()
        .filter(|e| cwd.is_none_or(|c| e.as_ref().in_cwd(c)))
        .filter(|e| {
            after
                .as_ref()
                .is_none_or(|(la, id)| newest_first(sort_key(e.as_ref()), (la, id)) == Ordering::Greater)
        })
        .collect();
    sort_newest_first(&mut kept);
    let next_cursor = (kept.len() > limit).then(|| encode(kept[limit - 1].as_ref()));
    kept.truncate(limit);
    Ok(Page {
        entries: kept,
        next_cursor,
    })
}

/// Sorts entries newest first, the order of every page.
pub fn sort_newest_first<T: AsRef<Entry>>(entries: &mut [T]) {
    entries.sort_unstable_by(|a, b| newest_first(sort_key(a.as_ref()), sort_key(b.as_ref())));
}

fn sort_key(e: &Entry) -> (&str, &str) {
    (&e.last_active, &e.session_id)
}

/// `Less` when `a` comes first (is newer).
fn newest_first(a: (&str, &str), b: (&str, &str)) -> Ordering {
    b.cmp(&a)
}

const CURSOR_VERSION: u32 = 1;

fn encode(last: &Entry) -> String {
    let key = (CURSOR_VERSION, &last.last_active, &last.session_id);
    // A tuple of a number and two strings always serialises.
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(&key).unwrap_or_default())
}

fn decode(cursor: &str) -> Result<(String, String), BadCursor> {
    let bad = |reason: &str| BadCursor {
        cursor: cursor.chars().take(100).collect(),
        reason: reason.to_owned(),
    };
    let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| bad("not base64url"))?;
    let (version, last_active, id): (u32, String, String) =
        serde_json::from_slice(&bytes).map_err(|_| bad("not a session list position"))?;
    if version != CURSOR_VERSION {
        return Err(bad("made by another acplb version"));
    }
    Ok((last_active, id))
}
