//! One session as the registry records it, its status, timestamps, and which file (key) holds it.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

/// A session's registry entry. Every field is always written (`None` as `null`), so an update
/// can keep the fields a newer acplb added that this one does not know.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// The ACP session id.
    pub session_id: String,
    /// The provider's thread (Codex thread id), once known.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// The ATM identity name, when the session has one.
    #[serde(default)]
    pub identity: Option<String>,
    /// The ATM team of that identity.
    #[serde(default)]
    pub team: Option<String>,
    /// The root of the git repository holding `cwd`.
    #[serde(default)]
    pub repo_root: Option<PathBuf>,
    /// That repository's folder name.
    #[serde(default)]
    pub repo_name: Option<String>,
    /// Its checked-out branch (a short hash when detached).
    #[serde(default)]
    pub branch: Option<String>,
    /// The session's working directory, as the client gave it.
    pub cwd: PathBuf,
    /// When the session started, [`timestamp`] format.
    pub started_at: String,
    /// When the session was last used, [`timestamp`] format (sorts as a string).
    pub last_active: String,
    /// Where the session stands.
    pub status: Status,
    /// A title for lists (the first prompt, or one the client set).
    #[serde(default)]
    pub title: Option<String>,
    /// A free label the user gave the session.
    #[serde(default)]
    pub tag: Option<String>,
    /// The acplb process that has the session open.
    #[serde(default)]
    pub pid: Option<u32>,
    /// Archived (`session/archive`): left out of `session/list` unless asked for, refused by
    /// `session/load` and `session/resume` until unarchived.
    #[serde(default)]
    pub archived: bool,
}

/// Where a session stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Open in the acplb process `pid`.
    Active,
    /// Open, nothing running.
    Idle,
    /// Its process ended without closing it: it can be resumed.
    Interrupted,
    /// Closed by the client.
    Closed,
    /// A status written by a newer acplb: treated like `interrupted`.
    #[serde(other)]
    Unknown,
}

impl Status {
    /// The name written in the registry.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::Idle => "idle",
            Status::Interrupted => "interrupted",
            Status::Closed => "closed",
            Status::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Entry {
    /// A new `active` session of this process, started and last active `now`.
    pub fn new(session_id: impl Into<String>, cwd: impl Into<PathBuf>, now: SystemTime) -> Entry {
        let at = timestamp(now);
        Entry {
            session_id: session_id.into(),
            thread_id: None,
            identity: None,
            team: None,
            repo_root: None,
            repo_name: None,
            branch: None,
            cwd: cwd.into(),
            started_at: at.clone(),
            last_active: at,
            status: Status::Active,
            title: None,
            tag: None,
            pid: Some(std::process::id()),
            archived: false,
        }
    }

    /// The registry file this entry belongs in: [`registry_key`] of its identity and team.
    pub fn key(&self) -> String {
        registry_key(self.identity.as_deref(), self.team.as_deref())
    }

    /// `last_active` as a time, `None` when it is not a [`timestamp`].
    pub fn last_active_time(&self) -> Option<SystemTime> {
        humantime::parse_rfc3339(&self.last_active).ok()
    }

    /// Whether a live acplb has the session open: its `pid` runs and it is not `closed`. A pid
    /// the system reused for another process also counts, which errs on the side of keeping.
    pub fn is_held(&self) -> bool {
        self.status != Status::Closed && self.pid.is_some_and(pid_alive)
    }

    /// The status as it is now: an `active` or `idle` session whose process is gone is
    /// `interrupted`. Without a `pid` the recorded status stands.
    pub fn effective_status(&self) -> Status {
        match (self.status, self.pid) {
            (Status::Active | Status::Idle, Some(pid)) if !pid_alive(pid) => Status::Interrupted,
            (status, _) => status,
        }
    }

    /// Whether the session matches an identity given as `name` or `name@team`.
    pub fn has_identity(&self, wanted: &str) -> bool {
        let Some(name) = self.identity.as_deref() else {
            return false;
        };
        match wanted.split_once('@') {
            Some((n, t)) => n == name && self.team.as_deref() == Some(t),
            None => wanted == name,
        }
    }

    /// Whether the session ran in `cwd` (exact path match).
    pub fn in_cwd(&self, cwd: &Path) -> bool {
        self.cwd == cwd
    }
}

impl AsRef<Entry> for Entry {
    fn as_ref(&self) -> &Entry {
        self
    }
}

/// A time as the registry writes it: RFC 3339, UTC, milliseconds (`2026-05-01T09:30:00.125Z`),
/// so that timestamps sort as strings.
pub fn timestamp(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

/// The key of a session's registry file: `name@team` of its ATM identity (`name` without a
/// team), anything outside `[A-Za-z0-9._@-]` replaced by `_`, at most 200 characters; `_local`
/// for a session without identity.
pub fn registry_key(identity: Option<&str>, team: Option<&str>) -> String {
    let Some(name) = identity.filter(|n| !n.is_empty()) else {
        return LOCAL_KEY.to_owned();
    };
    let raw = match team.filter(|t| !t.is_empty()) {
        Some(team) => format!("{name}@{team}"),
        None => name.to_owned(),
    };
    let mut key: String = raw
        .chars()
        .take(MAX_KEY_LEN)
        .map(|c| if key_char(c) { c } else { '_' })
        .collect();
    // A leading dot would hide the file (and could clash with the temporary files).
    if key.starts_with('.') {
        key.replace_range(..1, "_");
    }
    key
}

/// The key of sessions without an identity.
pub const LOCAL_KEY: &str = "_local";

const MAX_KEY_LEN: usize = 200;

fn key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '@' | '-')
}

/// Whether `key` can name a registry file (what [`registry_key`] returns always can).
pub(super) fn check_key(key: &str) -> bool {
    !key.is_empty() && key.len() <= MAX_KEY_LEN && !key.starts_with('.') && key.chars().all(key_char)
}

/// Whether process `pid` exists (`kill(pid, 0)`; a process of another user counts).
pub fn pid_alive(pid: u32) -> bool {
    use nix::errno::Errno;
    // 0 and negative pids name process groups, never one process.
    let Ok(raw) = i32::try_from(pid) else { return false };
    if raw <= 0 {
        return false;
    }
    matches!(
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(raw), None),
        Ok(()) | Err(Errno::EPERM)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn keys_are_sanitised_file_names() {
        assert_eq!(registry_key(None, Some("t")), "_local");
        assert_eq!(registry_key(Some(""), None), "_local");
        assert_eq!(registry_key(Some("arch"), Some("core")), "arch@core");
        assert_eq!(registry_key(Some("arch"), None), "arch");
        assert_eq!(registry_key(Some("../x y"), Some("t/1")), "_._x_y@t_1");
        assert_eq!(registry_key(Some(&"n".repeat(300)), None).len(), 200);
        for k in ["arch@core", "_local", "_._x_y@t_1"] {
            assert!(check_key(k), "{k}");
        }
        for k in ["", ".hidden", "a/b", "a b", "ä"] {
            assert!(!check_key(k), "{k}");
        }
    }

    #[test]
    fn timestamps_have_milliseconds_and_sort_as_strings() {
        let a = UNIX_EPOCH + Duration::from_millis(1_777_000_000_125);
        let b = a + Duration::from_millis(1);
        assert_eq!(timestamp(a), "2026-04-24T03:06:40.125Z");
        assert!(timestamp(a) < timestamp(b));
        let mut e = Entry::new("s", "/w", a);
        assert_eq!(e.last_active_time(), Some(a));
        e.last_active = "yesterday".into();
        assert_eq!(e.last_active_time(), None);
    }

    #[test]
    fn entries_are_camel_case_and_read_unknown_fields_and_statuses() {
        let e = Entry::new("s1", "/w", UNIX_EPOCH);
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["sessionId"], "s1");
        assert_eq!(v["lastActive"], "1970-01-01T00:00:00.000Z");
        assert_eq!(v["status"], "active");
        assert!(v["threadId"].is_null(), "{v}");
        let newer = serde_json::json!({
            "sessionId": "s2", "cwd": "/w", "startedAt": "x", "lastActive": "y",
            "status": "archived", "colour": "blue"
        });
        let read: Entry = serde_json::from_value(newer).unwrap();
        assert_eq!(read.status, Status::Unknown);
        assert_eq!(read.thread_id, None);
    }

    #[test]
    fn identity_matches_name_or_name_at_team() {
        let mut e = Entry::new("s", "/w", UNIX_EPOCH);
        assert!(!e.has_identity("arch"));
        e.identity = Some("arch".into());
        e.team = Some("core".into());
        assert!(e.has_identity("arch"));
        assert!(e.has_identity("arch@core"));
        assert!(!e.has_identity("arch@other"));
        assert!(!e.has_identity("core"));
        assert_eq!(e.key(), "arch@core");
    }

    #[test]
    fn a_dead_holder_makes_an_active_session_interrupted() {
        let mut e = Entry::new("s", "/w", UNIX_EPOCH);
        assert!(e.is_held(), "this process holds it");
        assert_eq!(e.effective_status(), Status::Active);
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        e.pid = Some(dead);
        assert!(!e.is_held());
        assert_eq!(e.effective_status(), Status::Interrupted);
        e.pid = None;
        assert_eq!(e.effective_status(), Status::Active);
        assert!(!pid_alive(0));
        assert!(!pid_alive(u32::MAX));
    }
}
