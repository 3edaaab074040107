//! One queue message: its JSON file (`<uuid>.json`), its id, the limits on what it holds, and
//! how a file's name says what state it is in.

use std::fmt;
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::QueueError;
use super::error::Damage;

/// The largest text a message may hold, in bytes of UTF-8 (1 MiB).
pub const MAX_TEXT_BYTES: usize = 1 << 20;

/// The longest sender's name, in bytes.
pub const MAX_FROM_BYTES: usize = 1024;

/// The largest message file read (a text at the limit, every character escaped as `\uXXXX`,
/// plus room for the other fields); a larger file is damaged.
pub(crate) const MAX_FILE_BYTES: u64 = 6 * MAX_TEXT_BYTES as u64 + 64 * 1024;

/// A message's id: a UUID, written in its lowercase hyphenated form, which is also the stem of
/// its file names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct MessageId(uuid::Uuid);

impl MessageId {
    /// A new random id.
    pub fn new() -> Self {
        Self(uuid::Uuid::new_v4())
    }
}

impl Default for MessageId {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Display for MessageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.hyphenated().fmt(f)
    }
}

/// A string that is not a message id in the form file names use.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[error("`{0}` is not a message id (a lowercase hyphenated UUID)")]
pub struct BadMessageId(pub String);

impl FromStr for MessageId {
    type Err = BadMessageId;

    /// Only the canonical form, so one id has one file name.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match uuid::Uuid::try_parse(s) {
            Ok(u) if u.hyphenated().to_string() == s => Ok(Self(u)),
            _ => Err(BadMessageId(s.chars().take(64).collect())),
        }
    }
}

impl TryFrom<String> for MessageId {
    type Error = BadMessageId;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<MessageId> for String {
    fn from(id: MessageId) -> Self {
        id.to_string()
    }
}

/// A message as its file holds it (`camelCase`; unknown fields are ignored).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Its id, the stem of its file's name.
    pub id: MessageId,
    /// Who sent it, when the sender said so.
    #[serde(default)]
    pub from: Option<String>,
    /// What it says.
    pub text: String,
    /// When it was sent: RFC 3339 in UTC with milliseconds (`2026-01-01T12:00:00.000Z`).
    #[serde(with = "rfc3339")]
    pub sent_at: SystemTime,
}

impl Message {
    /// A new message, sent now, after checking its text and sender.
    pub fn new(from: Option<&str>, text: &str) -> Result<Self, QueueError> {
        check_text(text)?;
        if let Some(from) = from {
            check_from(from)?;
        }
        Ok(Self {
            id: MessageId::new(),
            from: from.map(str::to_owned),
            text: text.to_owned(),
            // Milliseconds are what the file keeps; cut here so a message reads back equal.
            sent_at: whole_millis(SystemTime::now()),
        })
    }

    /// Reads a message file's bytes; `name_id` is the id its file name gives.
    pub(crate) fn parse(bytes: &[u8], name_id: MessageId) -> Result<Self, Damage> {
        let m: Self = serde_json::from_slice(bytes)?;
        if m.id != name_id {
            return Err(Damage::IdMismatch {
                inside: m.id.to_string(),
            });
        }
        if m.text.len() > MAX_TEXT_BYTES {
            return Err(Damage::Invalid(QueueError::TooLarge {
                bytes: m.text.len(),
                max: MAX_TEXT_BYTES,
            }));
        }
        Ok(m)
    }

    /// The order messages are delivered in: oldest first, then by id.
    pub(crate) fn order_key(&self) -> (SystemTime, MessageId) {
        (self.sent_at, self.id)
    }
}

/// Only what ordering needs from a file, without keeping its text.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct OrderKey {
    #[serde(with = "rfc3339")]
    pub(crate) sent_at: SystemTime,
}

/// Checks a message's text: not empty (nor only white space), at most [`MAX_TEXT_BYTES`].
pub fn check_text(text: &str) -> Result<(), QueueError> {
    if text.trim().is_empty() {
        return Err(QueueError::Empty);
    }
    if text.len() > MAX_TEXT_BYTES {
        return Err(QueueError::TooLarge {
            bytes: text.len(),
            max: MAX_TEXT_BYTES,
        });
    }
    Ok(())
}

fn check_from(from: &str) -> Result<(), QueueError> {
    let reason = if from.trim().is_empty() {
        "it is empty"
    } else if from.len() > MAX_FROM_BYTES {
        "it is longer than 1024 bytes"
    } else if from.chars().any(char::is_control) {
        "it holds control characters"
    } else {
        return Ok(());
    };
    Err(QueueError::BadSender {
        from: from.chars().take(200).collect(),
        reason,
    })
}

fn whole_millis(t: SystemTime) -> SystemTime {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let millis = u64::try_from(since.as_millis()).unwrap_or(u64::MAX);
    UNIX_EPOCH + std::time::Duration::from_millis(millis)
}

/// What a file in a queue folder is, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileKind {
    /// `<uuid>.json`: waiting to be claimed.
    Pending(MessageId),
    /// `<uuid>.claimed`: a consumer is delivering it.
    Claimed(MessageId),
    /// `.tmp-<uuid>`: a sender is still writing it.
    Temp,
}

impl FileKind {
    /// The kind of the file named `name`; `None` for anything else (`.bad` files included).
    pub(crate) fn of(name: &str) -> Option<Self> {
        if name.starts_with(".tmp-") {
            return Some(Self::Temp);
        }
        let (stem, ext) = name.rsplit_once('.')?;
        let id = stem.parse().ok()?;
        match ext {
            "json" => Some(Self::Pending(id)),
            "claimed" => Some(Self::Claimed(id)),
            _ => None,
        }
    }
}

/// File names of one message.
pub(crate) fn pending_name(id: MessageId) -> String {
    format!("{id}.json")
}
pub(crate) fn claimed_name(id: MessageId) -> String {
    format!("{id}.claimed")
}
pub(crate) fn bad_name(id: MessageId) -> String {
    format!("{id}.bad")
}
pub(crate) fn temp_name(id: MessageId) -> String {
    format!(".tmp-{id}")
}

/// `sentAt` as RFC 3339 in UTC with milliseconds.
mod rfc3339 {
    use std::time::SystemTime;

    use serde::{Deserialize as _, Deserializer, Serializer, de::Error as _};

    pub(super) fn serialize<S: Serializer>(t: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&humantime::format_rfc3339_millis(*t))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SystemTime, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(d)?;
        humantime::parse_rfc3339_weak(&text)
            .map_err(|e| D::Error::custom(format_args!("`sentAt` `{text}` is not RFC 3339 in UTC: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_file_reads_back_as_written() {
        let m = Message::new(Some("alice@core"), "hello\nworld").unwrap();
        let json = serde_json::to_string(&m).unwrap();
        assert!(json.contains(r#""sentAt":""#), "{json}");
        assert!(json.contains(&format!(r#""id":"{}""#, m.id)), "{json}");
        assert_eq!(Message::parse(json.as_bytes(), m.id).unwrap(), m);
    }

    #[test]
    fn unknown_fields_are_tolerated_and_from_is_optional() {
        let id = MessageId::new();
        let json = format!(r#"{{"id":"{id}","text":"hi","sentAt":"2026-01-01T00:00:00.250Z","priority":3}}"#);
        let m = Message::parse(json.as_bytes(), id).unwrap();
        assert_eq!(m.from, None);
        assert_eq!(
            m.sent_at,
            UNIX_EPOCH + std::time::Duration::from_millis(1_767_225_600_250)
        );
    }

    #[test]
    fn damaged_files_say_why() {
        let id = MessageId::new();
        assert!(matches!(Message::parse(b"{not json", id), Err(Damage::Json(_))));
        let other = MessageId::new();
        let json = format!(r#"{{"id":"{other}","text":"hi","sentAt":"2026-01-01T00:00:00Z"}}"#);
        assert!(matches!(
            Message::parse(json.as_bytes(), id),
            Err(Damage::IdMismatch { .. })
        ));
        let json = format!(r#"{{"id":"{id}","text":"hi","sentAt":"yesterday"}}"#);
        let err = Message::parse(json.as_bytes(), id).unwrap_err().to_string();
        assert!(err.contains("`sentAt` `yesterday`"), "{err}");
        let big = "x".repeat(MAX_TEXT_BYTES + 1);
        let json = format!(r#"{{"id":"{id}","text":"{big}","sentAt":"2026-01-01T00:00:00Z"}}"#);
        assert!(matches!(
            Message::parse(json.as_bytes(), id),
            Err(Damage::Invalid(QueueError::TooLarge { .. }))
        ));
    }

    #[test]
    fn texts_and_senders_are_checked() {
        assert!(matches!(Message::new(None, " \n"), Err(QueueError::Empty)));
        let big = "é".repeat(MAX_TEXT_BYTES / 2 + 1);
        let err = Message::new(None, &big).unwrap_err();
        assert!(matches!(err, QueueError::TooLarge { bytes, .. } if bytes == MAX_TEXT_BYTES + 2));
        assert!(Message::new(None, &"x".repeat(MAX_TEXT_BYTES)).is_ok());
        for bad in ["", "a\nb", &"x".repeat(MAX_FROM_BYTES + 1)] {
            assert!(
                matches!(Message::new(Some(bad), "hi"), Err(QueueError::BadSender { .. })),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn file_names_say_the_state() {
        let id = MessageId::new();
        assert_eq!(FileKind::of(&pending_name(id)), Some(FileKind::Pending(id)));
        assert_eq!(FileKind::of(&claimed_name(id)), Some(FileKind::Claimed(id)));
        assert_eq!(FileKind::of(&temp_name(id)), Some(FileKind::Temp));
        for other in [
            bad_name(id),
            "notes.json".to_owned(),
            id.to_string().to_uppercase() + ".json",
            format!("{id}.json.swp"),
            format!("{}.json", id.0.as_simple()),
        ] {
            assert_eq!(FileKind::of(&other), None, "{other}");
        }
    }
}
