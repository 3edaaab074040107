//! A member's busy hint in the team roster: `isActive` and `lastActive` in `config.json`.
//!
//! `isActive` is a busy hint (`true` while the member works), not liveness; `lastActive` is the
//! time of its last activity in milliseconds since the Unix epoch (ATM's `AgentMember` fields).
//! The file belongs to Claude Code, so it is edited like an inbox: under Claude's `mkdir` lock
//! (`config.json.lock`), touching only the two values, and replaced atomically.

use std::io::ErrorKind;
use std::ops::Range;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use crate::error::MailError;
use crate::inbox::lock::{InboxLock, LockPolicy};
use crate::inbox::splice::top_level_value;
use crate::inbox::{element_ranges, write_atomic};

/// What [`set_member_activity`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ActivityOutcome {
    /// The member's `isActive` and `lastActive` now hold the new values.
    Updated,
    /// The roster does not list the member (or there is no `members` array); nothing changed.
    NoSuchMember,
    /// The team has no `config.json` (a team without a roster); nothing changed.
    NoConfig,
}

/// Sets `isActive` to `active` and `lastActive` to `now` (ms since the epoch) on the member
/// `name` of `<team_dir>/config.json`, with the default lock policy.
///
/// Every other byte of the file is kept: unknown fields, key order, number spellings and
/// layout. The first member whose `name` is `name` is the one updated. A missing file or member
/// is not an error: teams managed only by ATM ≥ 1.2 have no roster.
pub fn set_member_activity(
    team_dir: &Path,
    name: &str,
    active: bool,
    now: SystemTime,
) -> Result<ActivityOutcome, MailError> {
    set_member_activity_with(team_dir, name, active, now, LockPolicy::default())
}

/// [`set_member_activity`] with a lock timeout and staleness rule of the caller's choosing.
pub fn set_member_activity_with(
    team_dir: &Path,
    name: &str,
    active: bool,
    now: SystemTime,
    policy: LockPolicy,
) -> Result<ActivityOutcome, MailError> {
    let path = team_dir.join("config.json");
    // Checked before locking, so a team without a roster gets no lock directory either.
    if !path.exists() {
        return Ok(ActivityOutcome::NoConfig);
    }
    let millis = now
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let _lock = InboxLock::acquire(&path, policy)?;
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(ActivityOutcome::NoConfig),
        Err(e) => return Err(MailError::io("read team config", &path, e)),
    };
    let bad = |reason: String| MailError::TeamConfig {
        path: path.clone(),
        reason,
    };
    serde_json::from_str::<serde::de::IgnoredAny>(&text).map_err(|e| bad(e.to_string()))?;
    let Some((range, member)) = find_member(&text, name) else {
        return Ok(ActivityOutcome::NoSuchMember);
    };
    let fields = [
        ("isActive", Value::Bool(active)),
        ("lastActive", Value::from(millis)),
    ];
    let edited = with_fields(&text[range.clone()], &member, &fields);
    if edited != text[range.clone()] {
        let mut next = String::with_capacity(text.len() + 48);
        next.push_str(&text[..range.start]);
        next.push_str(&edited);
        next.push_str(&text[range.end..]);
        write_atomic(&path, &next)?;
    }
    Ok(ActivityOutcome::Updated)
}

/// The byte range and parsed fields of the first member called `name` in the valid JSON `text`.
fn find_member(text: &str, name: &str) -> Option<(Range<usize>, Map<String, Value>)> {
    let members = top_level_value(text, "members")?;
    // Not an array (`null`, say): no roster to update.
    let ranges = element_ranges(&text[members.clone()], members.start).ok()?;
    ranges.into_iter().find_map(|range| {
        let member: Map<String, Value> = serde_json::from_str(&text[range.clone()]).ok()?;
        (member.get("name").and_then(Value::as_str) == Some(name)).then_some((range, member))
    })
}

/// The member object `raw` with each of `fields` set: values replaced in place, missing keys
/// appended in the object's own layout.
fn with_fields(raw: &str, member: &Map<String, Value>, fields: &[(&str, Value)]) -> String {
    let mut edits = Vec::new();
    let mut missing = Vec::new();
    for (key, value) in fields {
        match top_level_value(raw, key) {
            Some(range) => edits.push((range, value.to_string())),
            None if member.contains_key(*key) => return reserialized(member, fields),
            None => missing.push((*key, value.to_string())),
        }
    }
    // From the back, so earlier ranges stay valid.
    edits.sort_by_key(|(range, _)| std::cmp::Reverse(range.start));
    let mut out = raw.to_owned();
    for (range, value) in edits {
        out.replace_range(range, &value);
    }
    appended(&out, &missing)
}

/// A member whose key is spelled with escapes (so it cannot be found as bytes), re-serialised
/// whole; `serde_json`'s `preserve_order` keeps its key order.
fn reserialized(member: &Map<String, Value>, fields: &[(&str, Value)]) -> String {
    let mut member = member.clone();
    for (key, value) in fields {
        member.insert((*key).to_owned(), value.clone());
    }
    Value::Object(member).to_string()
}

/// `raw` (an object) with `fields` added before its closing brace: one per line at the last
/// field's indent when the object spans lines, else inline in its own spacing.
fn appended(raw: &str, fields: &[(&str, String)]) -> String {
    let Some(close) = raw.rfind('}').filter(|_| !fields.is_empty()) else {
        return raw.to_owned();
    };
    let end = raw[..close].trim_end_matches(is_json_ws).len();
    let empty = raw[..end].ends_with('{');
    let line = &raw[raw[..end].rfind('\n').map_or(0, |i| i + 1)..end];
    let indent = &line[..line.len() - line.trim_start_matches(is_json_ws).len()];
    let multiline = raw.contains('\n') && !empty;
    let compact = raw.contains("\":") && !raw.contains("\": ");
    let (colon, comma) = if compact { (":", ",") } else { (": ", ", ") };
    let mut out = raw[..end].to_owned();
    for (i, (key, value)) in fields.iter().enumerate() {
        let first = empty && i == 0;
        if multiline {
            out.push_str(",\n");
            out.push_str(indent);
        } else if !first {
            out.push_str(comma);
        }
        for part in ["\"", key, "\"", colon, value] {
            out.push_str(part);
        }
    }
    out.push_str(&raw[end..]);
    out
}

fn is_json_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use serde_json::json;

    use super::*;

    /// The interop sample's layout (one line per member) with an ATM-style member that already
    /// has both fields, and fields Claude may add later.
    const CONFIG: &str = r#"{
  "name": "demo",
  "createdAt": 1770765919076,
  "futureTopLevel": {"x": [1, 2.50]},
  "members": [
    {"agentId": "team-lead@demo", "name": "team-lead", "joinedAt": 1770765919076, "subscriptions": []},
    {"agentId": "alice@demo", "name": "alice", "isActive": false, "lastActive": 1, "color": "blue"},
    {"agentId": "bob@demo", "name": "bob", "unknown": {"isActive": true}, "note": "a \"name\": \"alice\""}
  ]
}
"#;

    fn at(ms: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(ms)
    }

    fn team(config: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.json"), config).unwrap();
        dir
    }

    fn read(dir: &Path) -> String {
        std::fs::read_to_string(dir.join("config.json")).unwrap()
    }

    #[test]
    fn existing_values_are_replaced_in_place() {
        let dir = team(CONFIG);
        let outcome = set_member_activity(dir.path(), "alice", true, at(1_770_800_000_123)).unwrap();
        assert_eq!(outcome, ActivityOutcome::Updated);
        let expected = CONFIG.replace(
            r#""isActive": false, "lastActive": 1,"#,
            r#""isActive": true, "lastActive": 1770800000123,"#,
        );
        assert_eq!(read(dir.path()), expected);
        assert!(!dir.path().join("config.json.lock").exists());
    }

    #[test]
    fn missing_fields_are_added_to_that_member_only() {
        let dir = team(CONFIG);
        set_member_activity(dir.path(), "bob", true, at(42)).unwrap();
        let expected = CONFIG.replace(
            r#""note": "a \"name\": \"alice\""}"#,
            r#""note": "a \"name\": \"alice\"", "isActive": true, "lastActive": 42}"#,
        );
        assert_eq!(read(dir.path()), expected);
        // Going idle keeps the shape and only flips the values.
        set_member_activity(dir.path(), "bob", false, at(43)).unwrap();
        let v: Value = serde_json::from_str(&read(dir.path())).unwrap();
        assert_eq!(v["members"][2]["isActive"], json!(false));
        assert_eq!(v["members"][2]["lastActive"], json!(43));
        assert_eq!(v["members"][2]["unknown"], json!({"isActive": true}));
    }

    #[test]
    fn layouts_are_kept() {
        for (before, after) in [
            (
                "{\"members\": [\n  {\n    \"name\": \"a\",\n    \"cwd\": \"/r\"\n  }\n]}",
                "{\"members\": [\n  {\n    \"name\": \"a\",\n    \"cwd\": \"/r\",\n    \"isActive\": true,\n    \"lastActive\": 7\n  }\n]}",
            ),
            (
                r#"{"members":[{"name":"a"}]}"#,
                r#"{"members":[{"name":"a","isActive":true,"lastActive":7}]}"#,
            ),
            (
                r#"{"members": [{"name": "a", "is\u0041ctive": false}]}"#,
                r#"{"members": [{"name":"a","isActive":true,"lastActive":7}]}"#,
            ),
        ] {
            let dir = team(before);
            set_member_activity(dir.path(), "a", true, at(7)).unwrap();
            assert_eq!(read(dir.path()), after);
        }
    }

    #[test]
    fn no_config_or_no_member_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let outcome = set_member_activity(dir.path(), "alice", true, at(1)).unwrap();
        assert_eq!(outcome, ActivityOutcome::NoConfig);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

        for config in [CONFIG, r#"{"name": "t"}"#, r#"{"members": null}"#, "[]"] {
            let dir = team(config);
            let outcome = set_member_activity(dir.path(), "carol", true, at(1)).unwrap();
            assert_eq!(outcome, ActivityOutcome::NoSuchMember, "{config}");
            assert_eq!(read(dir.path()), config);
        }
    }

    #[test]
    fn a_corrupt_config_is_an_error_and_left_alone() {
        let dir = team("{\"members\": [");
        let err = set_member_activity(dir.path(), "a", true, at(1)).unwrap_err();
        assert!(matches!(err, MailError::TeamConfig { .. }), "{err}");
        assert_eq!(read(dir.path()), "{\"members\": [");
    }

    #[test]
    fn it_waits_for_claudes_lock() {
        let dir = team(CONFIG);
        std::fs::create_dir(dir.path().join("config.json.lock")).unwrap();
        let policy = LockPolicy {
            timeout: Duration::from_millis(50),
            ..LockPolicy::default()
        };
        let err = set_member_activity_with(dir.path(), "alice", true, at(1), policy).unwrap_err();
        assert!(matches!(err, MailError::LockTimeout { .. }), "{err}");
        assert_eq!(read(dir.path()), CONFIG);
    }

    #[test]
    fn concurrent_writers_lose_no_update() {
        const MEMBERS: usize = 6;
        const ROUNDS: u64 = 40;
        let members: Vec<String> = (0..MEMBERS)
            .map(|i| format!(r#"{{"name": "m{i}", "joinedAt": {i}}}"#))
            .collect();
        let dir = Arc::new(team(&format!(
            "{{\"name\": \"t\", \"members\": [{}]}}",
            members.join(", ")
        )));
        let threads: Vec<_> = (0..MEMBERS)
            .map(|i| {
                let dir = Arc::clone(&dir);
                std::thread::spawn(move || {
                    for round in 1..=ROUNDS {
                        let outcome =
                            set_member_activity(dir.path(), &format!("m{i}"), round % 2 == 1, at(round))
                                .unwrap();
                        assert_eq!(outcome, ActivityOutcome::Updated);
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let v: Value = serde_json::from_str(&read(dir.path())).unwrap();
        for i in 0..MEMBERS {
            let member = &v["members"][i];
            assert_eq!(member["name"], json!(format!("m{i}")));
            assert_eq!(member["joinedAt"], json!(i));
            assert_eq!(member["isActive"], json!(false), "{member}");
            assert_eq!(member["lastActive"], json!(ROUNDS), "{member}");
        }
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no lock or temp file left"
        );
    }
}
