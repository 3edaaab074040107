//! The file mail store: Claude Code's team inboxes under `<root>/teams/<team>/inboxes/`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::Value;
use ulid::Ulid;

use crate::env::EnvSource;
use crate::error::MailError;
use crate::inbox::lock::{InboxLock, LockPolicy};
use crate::inbox::{InboxText, write_atomic};
use crate::mail::{BroadcastReport, MailBackend, ReadBatch, ReadOptions, ReadReceipt, SentMessage};
use crate::names::{Address, Recipient, is_plain_name, sanitize};
use crate::record::{self, RecordView};

/// Lock-free reads that hit a half-written file (Claude writes in place) retry this often.
const READ_RETRIES: u32 = 3;
const READ_RETRY_DELAY: Duration = Duration::from_millis(20);
/// Inboxes whose last validated text is kept; beyond this the memory is dropped.
const KNOWN_INBOXES: usize = 64;

/// The file-based mailbox of one identity in one team.
#[derive(Debug, Clone)]
pub struct MailStore {
    root: PathBuf,
    identity: String,
    team: String,
    policy: LockPolicy,
    known: KnownInboxes,
}

/// The last validated text of each inbox this store touched, shared by clones, so the next load
/// parses only what other writers appended since.
#[derive(Clone, Default)]
struct KnownInboxes(Arc<Mutex<HashMap<PathBuf, Arc<InboxText>>>>);

impl std::fmt::Debug for KnownInboxes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0.lock().unwrap_or_else(PoisonError::into_inner).len();
        write!(f, "KnownInboxes({n})")
    }
}

impl KnownInboxes {
    fn get(&self, path: &Path) -> Option<Arc<InboxText>> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(path)
            .cloned()
    }

    fn put(&self, path: &Path, inbox: Arc<InboxText>) {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if map.len() >= KNOWN_INBOXES && !map.contains_key(path) {
            map.clear();
        }
        map.insert(path.to_owned(), inbox);
    }
}

impl MailStore {
    /// A store under the Claude root `root` (the directory holding `teams/`), sending as
    /// `identity` of `team`; both names are sanitised Claude's way.
    pub fn new(root: impl Into<PathBuf>, identity: &str, team: &str) -> Result<Self, MailError> {
        Ok(Self {
            root: root.into(),
            identity: sanitize(identity)?,
            team: sanitize(team)?,
            policy: LockPolicy::default(),
            known: KnownInboxes::default(),
        })
    }

    /// A store under `$ATM_HOME/.claude`, else `$HOME/.claude`.
    pub fn from_env(env: &dyn EnvSource, identity: &str, team: &str) -> Result<Self, MailError> {
        Self::new(
            crate::env::claude_root(env).ok_or(MailError::NoHome)?,
            identity,
            team,
        )
    }

    /// Replaces the lock timeout and staleness rule.
    #[must_use]
    pub fn with_lock_policy(mut self, policy: LockPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The sender name every message from this store carries.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// The store's team.
    pub fn team(&self) -> &str {
        &self.team
    }

    /// `<root>/teams/<team>`.
    pub fn team_dir(&self, team: &str) -> PathBuf {
        self.root.join("teams").join(team)
    }

    /// The inbox file of `agent` in `team` (names already sanitised).
    pub fn inbox_path(&self, agent: &str, team: &str) -> PathBuf {
        self.team_dir(team).join("inboxes").join(format!("{agent}.json"))
    }

    /// This identity's own inbox.
    pub fn own_inbox(&self) -> PathBuf {
        self.inbox_path(&self.identity, &self.team)
    }

    /// Sends a new message; `to` is `agent` or `agent@team` (see [`MailStore::recipient`]).
    pub fn send(&self, to: &str, message: &str, summary: Option<&str>) -> Result<SentMessage, MailError> {
        let address = self.recipient(to)?;
        // A fresh ULID (80 random bits) cannot be in the inbox yet, so the duplicate scan of the
        // whole file is skipped.
        self.deliver(&address, message, summary, Ulid::new(), false)
    }

    /// Sends with a caller-chosen id; retrying with the same id never duplicates the message.
    pub fn send_with_id(
        &self,
        to: &str,
        message: &str,
        summary: Option<&str>,
        id: Ulid,
    ) -> Result<SentMessage, MailError> {
        let address = self.recipient(to)?;
        self.deliver(&address, message, summary, id, true)
    }

    /// Whether a message with `id` is already in `to`'s inbox (one this store sent with
    /// [`MailStore::send_with_id`]): a worker that crashed after replying finds its reply
    /// there and does not answer again.
    pub fn has_message(&self, to: &str, id: Ulid) -> Result<bool, MailError> {
        let address = self.recipient(to)?;
        let path = self.inbox_path(&address.agent, &address.team);
        if !path.exists() {
            return Ok(false);
        }
        Ok(self.load(&path)?.contains_key(&id.to_string()))
    }

    /// The inbox `to` (`agent` or `agent@team`) names, refusing anyone who is not a member.
    ///
    /// The team must exist. When it has a roster (`members` in its `config.json`), the agent
    /// must be one of the names listed there, or that name's inbox name; without a roster it
    /// must be a plain name (letters, digits, `-`, `_`). Paths and file names are never members.
    pub fn recipient(&self, to: &str) -> Result<Address, MailError> {
        let parts = Recipient::split(to);
        let team = match parts.team {
            None => self.team.clone(),
            Some(team) if is_plain_name(team) => team.to_owned(),
            Some(_) => return Err(MailError::InvalidRecipient { name: to.to_owned() }),
        };
        let team_dir = self.team_dir(&team);
        if !team_dir.is_dir() {
            return Err(MailError::UnknownTeam { team, path: team_dir });
        }
        let Some(members) = self.roster(&team)? else {
            parts.check_plain(to)?;
            return Ok(Address {
                agent: parts.agent.to_owned(),
                team,
            });
        };
        let member = members.iter().find(|m| m.as_str() == parts.agent).or_else(|| {
            members
                .iter()
                .find(|m| sanitize(m).is_ok_and(|s| s == parts.agent))
        });
        match member {
            Some(name) => Ok(Address {
                agent: sanitize(name)?,
                team,
            }),
            None => Err(MailError::UnknownRecipient {
                name: to.to_owned(),
                team,
                members,
            }),
        }
    }

    fn deliver(
        &self,
        to: &Address,
        message: &str,
        summary: Option<&str>,
        id: Ulid,
        may_exist: bool,
    ) -> Result<SentMessage, MailError> {
        let team_dir = self.team_dir(&to.team);
        if !team_dir.is_dir() {
            return Err(MailError::UnknownTeam {
                team: to.team.clone(),
                path: team_dir,
            });
        }
        let path = self.inbox_path(&to.agent, &to.team);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| MailError::io("create inbox directory", dir, e))?;
        }
        // Everything that does not need the file is prepared before taking the lock: Claude
        // drops its own message when it finds the lock busy.
        let record = record::build(&self.identity, message, summary, id, &self.team);
        let key = id.to_string();
        let sent = |already_present| SentMessage {
            recipient: to.to_string(),
            message_id: key.clone(),
            already_present,
        };
        let _lock = InboxLock::acquire(&path, self.policy)?;
        let inbox = self.load(&path)?;
        if may_exist && inbox.contains_key(&key) {
            return Ok(sent(true));
        }
        let next = inbox.appended(&record);
        write_atomic(&path, next.text())?;
        self.known.put(&path, Arc::new(next));
        Ok(sent(false))
    }

    /// Unread mail of the own inbox, oldest first, without marking anything read.
    pub fn read(&self, opts: &ReadOptions) -> Result<ReadBatch, MailError> {
        let inbox = self.load_for_read()?;
        let mut unread: Vec<RecordView> = inbox
            .raw_records()
            .filter_map(RecordView::parse)
            .filter(|v| !v.read && (opts.include_system || !v.is_system()))
            .collect();
        // A stable sort on the parsed instant; records without a readable time keep file order
        // at the front rather than being lost.
        unread.sort_by_cached_key(|v| crate::time::parse_nanos(&v.timestamp));
        let taken = unread.len().min(opts.max_messages);
        let messages: Vec<_> = unread[..taken]
            .iter()
            .map(|v| v.envelope(opts.max_message_length))
            .collect();
        let keys = messages.iter().map(|m| m.message_id.clone()).collect();
        Ok(ReadBatch {
            messages,
            receipt: ReadReceipt::new(self.mailbox_name(), keys),
            remaining: unread.len() - taken,
        })
    }

    /// Marks the receipt's messages read (`"read": true`, matched by key, never by index).
    pub fn commit(&self, receipt: &ReadReceipt) -> Result<usize, MailError> {
        receipt.check_mailbox(&self.mailbox_name())?;
        if receipt.is_empty() {
            return Ok(0);
        }
        let keys: HashSet<&str> = receipt.message_ids().iter().map(String::as_str).collect();
        // Records with an explicit id contain it verbatim, so a substring test skips parsing
        // most of a large inbox; content-hash keys need every record parsed.
        let full_scan = keys.iter().any(|k| k.starts_with("fnv-"));
        let path = self.own_inbox();
        let _lock = InboxLock::acquire(&path, self.policy)?;
        let inbox = self.load(&path)?;
        let indices: Vec<usize> = inbox
            .raw_records()
            .enumerate()
            .filter(|(_, raw)| full_scan || keys.iter().any(|k| raw.contains(k)))
            .filter_map(|(i, raw)| RecordView::parse(raw).map(|v| (i, v)))
            .filter(|(_, v)| !v.read && keys.contains(v.key.as_str()))
            .map(|(i, _)| i)
            .collect();
        if !indices.is_empty() {
            write_atomic(&path, &inbox.marked_read(&indices))?;
        }
        Ok(indices.len())
    }

    /// Unread, non-system messages in the own inbox.
    pub fn pending_count(&self) -> Result<usize, MailError> {
        let inbox = self.load_for_read()?;
        Ok(inbox
            .raw_records()
            .filter_map(RecordView::parse)
            .filter(|v| !v.read && !v.is_system())
            .count())
    }

    /// Sends to every member of the team's `config.json` except this identity.
    pub fn broadcast(&self, message: &str, summary: Option<&str>) -> Result<BroadcastReport, MailError> {
        let mut report = BroadcastReport::default();
        for name in self.team_members()? {
            let to = match sanitize(&name) {
                Ok(agent) if agent == self.identity => continue,
                Ok(agent) => Address {
                    agent,
                    team: self.team.clone(),
                },
                Err(e) => {
                    report.failed.push((name, e));
                    continue;
                }
            };
            match self.deliver(&to, message, summary, Ulid::new(), false) {
                Ok(sent) => report.sent.push(sent),
                Err(e) => report.failed.push((name, e)),
            }
        }
        Ok(report)
    }

    /// `members[].name` of this store's team's `config.json`, in file order.
    pub fn team_members(&self) -> Result<Vec<String>, MailError> {
        let path = self.team_dir(&self.team).join("config.json");
        let text = std::fs::read_to_string(&path).map_err(|e| MailError::TeamConfig {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        members_of(&path, &text)
    }

    /// The roster of `team`: `None` when it has no `config.json` or lists nobody (teams that
    /// only ATM >= 1.2 manages have none).
    fn roster(&self, team: &str) -> Result<Option<Vec<String>>, MailError> {
        let path = self.team_dir(team).join("config.json");
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(MailError::TeamConfig {
                    path,
                    reason: e.to_string(),
                });
            }
        };
        let members = members_of(&path, &text)?;
        Ok((!members.is_empty()).then_some(members))
    }

    fn mailbox_name(&self) -> String {
        self.own_inbox().display().to_string()
    }

    /// Loads the own inbox without the lock (every writer but Claude replaces it atomically);
    /// a parse failure may be Claude mid-write, so retry, then read under the lock.
    fn load_for_read(&self) -> Result<Arc<InboxText>, MailError> {
        let path = self.own_inbox();
        for _ in 0..READ_RETRIES {
            match self.load(&path) {
                Err(MailError::CorruptInbox { .. }) => std::thread::sleep(READ_RETRY_DELAY),
                other => return other,
            }
        }
        let _lock = InboxLock::acquire(&path, self.policy)?;
        self.load(&path)
    }

    /// Loads and validates `path`, reusing the last version this store saw.
    fn load(&self, path: &Path) -> Result<Arc<InboxText>, MailError> {
        let known = self.known.get(path);
        let inbox = Arc::new(InboxText::load(path, known.as_deref())?);
        self.known.put(path, Arc::clone(&inbox));
        Ok(inbox)
    }
}

/// `members[].name` of a team's `config.json` text.
fn members_of(path: &Path, text: &str) -> Result<Vec<String>, MailError> {
    let bad = |reason: String| MailError::TeamConfig {
        path: path.to_owned(),
        reason,
    };
    let config: Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    let members = config
        .get("members")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no `members` array".into()))?;
    Ok(members
        .iter()
        .filter_map(|m| m.get("name")?.as_str())
        .map(str::to_owned)
        .collect())
}

impl MailBackend for MailStore {
    fn send(&self, to: &str, message: &str, summary: Option<&str>) -> Result<SentMessage, MailError> {
        MailStore::send(self, to, message, summary)
    }
    fn read(&self, opts: &ReadOptions) -> Result<ReadBatch, MailError> {
        MailStore::read(self, opts)
    }
    fn commit(&self, receipt: &ReadReceipt) -> Result<usize, MailError> {
        MailStore::commit(self, receipt)
    }
    fn pending_count(&self) -> Result<usize, MailError> {
        MailStore::pending_count(self)
    }
    fn broadcast(&self, message: &str, summary: Option<&str>) -> Result<BroadcastReport, MailError> {
        MailStore::broadcast(self, message, summary)
    }
    fn members(&self) -> Result<Option<Vec<String>>, MailError> {
        self.roster(&self.team)
    }
}
