//! One inbox file as text: parse it without re-serialising, append or mark read by byte edits,
//! and replace it atomically.
//!
//! Foreign records are kept as their original bytes: appending only inserts text before the
//! closing `]`, and marking read only rewrites the `read` value. Claude marks messages read by
//! array index, so records are never reordered or removed.

pub(crate) mod lock;
pub(crate) mod splice;

use std::io::{ErrorKind, Write};
use std::ops::Range;
use std::path::Path;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::MailError;

/// A parsed inbox: its exact text and the byte range of every array element.
#[derive(Debug)]
pub(crate) struct InboxText {
    text: String,
    records: Vec<Range<usize>>,
}

impl InboxText {
    /// Reads and parses `path`; a missing or whitespace-only file is an empty inbox.
    ///
    /// `known` is an earlier validated version of the same file: when the new text still starts
    /// with all of its records byte for byte (other writers only appended), only the rest is
    /// parsed. Appending to a large inbox then costs a `memcmp`, not a full parse.
    pub(crate) fn load(path: &Path, known: Option<&InboxText>) -> Result<Self, MailError> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(MailError::io("read inbox", path, e)),
        };
        let text = String::from_utf8(bytes).map_err(|e| MailError::CorruptInbox {
            path: path.to_owned(),
            reason: format!("not utf-8: {e}"),
        })?;
        Self::parse(path, text, known)
    }

    fn parse(path: &Path, text: String, known: Option<&InboxText>) -> Result<Self, MailError> {
        if text.trim_start_matches(is_json_ws).is_empty() {
            return Ok(Self {
                text,
                records: Vec::new(),
            });
        }
        if let Some(records) = known.and_then(|k| k.continued_by(&text)) {
            return Ok(Self { text, records });
        }
        let records = element_ranges(&text, 0).map_err(|e| MailError::CorruptInbox {
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
        Ok(Self { text, records })
    }

    /// The record ranges of `text` when it is this inbox plus zero or more appended records,
    /// validated; `None` when it is anything else (then the caller parses it all).
    fn continued_by(&self, text: &str) -> Option<Vec<Range<usize>>> {
        let head = self.records.last()?.end;
        if text.len() < head || text.as_bytes()[..head] != self.text.as_bytes()[..head] {
            return None;
        }
        // The prefix is `[` and our records, already valid; what follows must be `]` or
        // `, element, ... ]`, then whitespace.
        let rest = text[head..].trim_start_matches(is_json_ws);
        let at = text.len() - rest.len();
        let mut records = self.records.clone();
        if let Some(after) = rest.strip_prefix(']') {
            return after.trim_start_matches(is_json_ws).is_empty().then_some(records);
        }
        rest.strip_prefix(',')?;
        // Re-read `, a, b ]` as `[ a, b ]`: the comma's position holds the `[`.
        let tail = format!("[{}", &text[at + 1..]);
        let added = element_ranges(&tail, at).ok().filter(|r| !r.is_empty())?;
        records.extend(added);
        Some(records)
    }

    /// Each record's raw JSON, in file order.
    pub(crate) fn raw_records(&self) -> impl Iterator<Item = &str> {
        self.records.iter().map(|r| &self.text[r.clone()])
    }

    /// Whether a record whose key is `key` is present (a substring test first, so appending to a
    /// large inbox does not parse every record).
    pub(crate) fn contains_key(&self, key: &str) -> bool {
        self.text.contains(key)
            && self
                .raw_records()
                .filter(|raw| raw.contains(key))
                .filter_map(crate::record::RecordView::parse)
                .any(|v| v.key == key)
    }

    /// The whole file text.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// This inbox with `record` appended as the last element, in Claude's 2-space layout.
    pub(crate) fn appended(&self, record: &Value) -> Self {
        let element = pretty_element(record);
        let (head, sep, close) = match self.text.rfind(']') {
            Some(close) => {
                let sep = if self.records.is_empty() { "" } else { "," };
                (
                    self.text[..close].trim_end_matches(is_json_ws),
                    sep,
                    &self.text[close..],
                )
            }
            None => ("[", "", "]"),
        };
        let start = head.len() + sep.len() + 3;
        let text = format!("{head}{sep}\n  {element}\n{close}");
        let mut records = self.records.clone();
        records.push(start..start + element.len());
        Self { text, records }
    }

    /// The file text with the records at `indices` marked `"read": true`, touching only those bytes.
    pub(crate) fn marked_read(&self, indices: &[usize]) -> String {
        let mut edits: Vec<(Range<usize>, String)> = indices
            .iter()
            .filter_map(|&i| self.records.get(i).cloned())
            .filter_map(|r| self.read_edit(r))
            .collect();
        edits.sort_by_key(|(r, _)| r.start);
        edits.dedup_by_key(|(r, _)| r.start);
        let mut out = String::with_capacity(self.text.len() + 16 * edits.len());
        let mut at = 0;
        for (range, replacement) in edits {
            out.push_str(&self.text[at..range.start]);
            out.push_str(&replacement);
            at = range.end;
        }
        out.push_str(&self.text[at..]);
        out
    }

    /// The edit that marks the record at `r` read, or `None` when it already is.
    fn read_edit(&self, r: Range<usize>) -> Option<(Range<usize>, String)> {
        let raw = &self.text[r.clone()];
        if let Some(v) = splice::top_level_value(raw, "read") {
            return (&raw[v.clone()] != "true")
                .then(|| (r.start + v.start..r.start + v.end, "true".to_owned()));
        }
        // No plain `read` key (absent, or spelled with escapes): re-serialise just this record.
        let mut map: Map<String, Value> = serde_json::from_str(raw).ok()?;
        map.insert("read".to_owned(), Value::Bool(true));
        Some((r, pretty_element(&Value::Object(map))))
    }
}

fn is_json_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// Parses `text` as a JSON array and returns each element's byte range, shifted by `offset`.
pub(crate) fn element_ranges(text: &str, offset: usize) -> Result<Vec<Range<usize>>, serde_json::Error> {
    let raws: Vec<&RawValue> = serde_json::from_str(text)?;
    let base = text.as_ptr().addr();
    Ok(raws
        .iter()
        .map(|raw| {
            // Borrowed raw values point into `text`, so their address gives their offset.
            let start = raw.get().as_ptr().addr() - base + offset;
            start..start + raw.get().len()
        })
        .collect())
}

/// `value` pretty-printed with 2-space indent and indented one level, as an array element.
fn pretty_element(value: &Value) -> String {
    let mut buf = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(
        &mut buf,
        serde_json::ser::PrettyFormatter::with_indent(b"  "),
    );
    // Serialising a `Value` into memory cannot fail.
    if serde::Serialize::serialize(value, &mut ser).is_err() {
        return value.to_string();
    }
    // JSON strings escape newlines, so every raw newline is layout and can take the indent.
    String::from_utf8_lossy(&buf).replace('\n', "\n  ")
}

/// Replaces `path` with `contents`: a temp file in the same directory (named so it never ends in
/// `.json`, which readers would take for an inbox), fsync, rename, fsync the directory.
///
/// A symlinked inbox stays a symlink: the file it points to is what gets replaced.
pub(crate) fn write_atomic(path: &Path, contents: &str) -> Result<(), MailError> {
    let target = follow_links(path)?;
    let path = target.as_path();
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.tmp.{}.{}",
        std::process::id(),
        ulid::Ulid::new()
    ));
    let result = write_then_rename(&tmp, path, contents);
    if result.is_err() {
        let _ignored = std::fs::remove_file(&tmp);
    }
    result?;
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| MailError::io("fsync directory", dir, e))
}

/// Symlinks followed before an inbox is replaced; more is a loop (Linux allows 40).
const MAX_LINKS: usize = 40;

/// `path` with every symlink at its end resolved: the file a rename must replace so that the
/// links stay. A link to a missing file resolves to that file, which the write then creates.
fn follow_links(path: &Path) -> Result<std::path::PathBuf, MailError> {
    let mut at = path.to_owned();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = std::fs::read_link(&at).map_err(|e| MailError::io("read symlink", &at, e))?;
                // A relative target is relative to the link's own directory.
                at = match at.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            Ok(_) => return Ok(at),
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(at),
            Err(e) => return Err(MailError::io("inspect inbox", &at, e)),
        }
    }
    Err(MailError::io(
        "follow the symlinks of inbox",
        path,
        std::io::Error::other(format!("more than {MAX_LINKS} symlinks (a loop?)")),
    ))
}

fn write_then_rename(tmp: &Path, path: &Path, contents: &str) -> Result<(), MailError> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(tmp)
        .map_err(|e| MailError::io("create temp file", tmp, e))?;
    file.write_all(contents.as_bytes())
        .map_err(|e| MailError::io("write temp file", tmp, e))?;
    if let Ok(meta) = std::fs::metadata(path) {
        // Keep the inbox's permissions across the replacement.
        file.set_permissions(meta.permissions())
            .map_err(|e| MailError::io("chmod temp file", tmp, e))?;
    }
    file.sync_all()
        .map_err(|e| MailError::io("fsync temp file", tmp, e))?;
    std::fs::rename(tmp, path).map_err(|e| MailError::io("rename temp file over", path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str) -> InboxText {
        InboxText::parse(Path::new("x.json"), text.to_owned(), None).unwrap()
    }

    fn check_ranges(inbox: &InboxText) {
        let full = parse(inbox.text());
        assert_eq!(inbox.records, full.records, "{}", inbox.text());
    }

    #[test]
    fn empty_forms() {
        for text in ["", "  \n", "[]", "[ ]\n"] {
            let inbox = parse(text);
            assert_eq!(inbox.raw_records().count(), 0);
            let out = inbox.appended(&json!({"a": 1}));
            check_ranges(&out);
            let v: Vec<Value> = serde_json::from_str(out.text()).unwrap();
            assert_eq!(v, vec![json!({"a": 1})]);
        }
        assert_eq!(
            parse("").appended(&json!({"a": {"b": 1}})).text(),
            "[\n  {\n    \"a\": {\n      \"b\": 1\n    }\n  }\n]"
        );
    }

    #[test]
    fn append_keeps_foreign_bytes_and_trailing_newline() {
        let text = "[\n  {\"z\":1,\"a\":1.50,\"s\":\"\\u00e9\"}\n]\n";
        let inbox = parse(text).appended(&json!({"n": 2}));
        check_ranges(&inbox);
        let out = inbox.text();
        assert!(out.starts_with("[\n  {\"z\":1,\"a\":1.50,\"s\":\"\\u00e9\"},\n  {"));
        assert!(out.ends_with("}\n]\n"));
        assert_eq!(serde_json::from_str::<Vec<Value>>(out).unwrap().len(), 2);
    }

    #[test]
    fn known_prefix_is_not_reparsed_but_the_rest_is_validated() {
        let known = parse("[\n  {\"a\": 1}\n]");
        let load = |text: &str| InboxText::parse(Path::new("x.json"), text.to_owned(), Some(&known));
        let grown = load("[\n  {\"a\": 1},\n  {\"b\": 2} , [3]\n]\n").unwrap();
        check_ranges(&grown);
        assert_eq!(
            grown.raw_records().collect::<Vec<_>>(),
            ["{\"a\": 1}", "{\"b\": 2}", "[3]"]
        );
        check_ranges(&load("[\n  {\"a\": 1} ]").unwrap());
        for bad in [
            "[\n  {\"a\": 1},\n]",
            "[\n  {\"a\": 1},\n  {\"b\": \n]",
            "[\n  {\"a\": 1}\n] x",
            "[\n  {\"a\": 1}, {}",
        ] {
            assert!(load(bad).is_err(), "{bad}");
        }
        // A rewritten prefix falls back to a full parse.
        check_ranges(&load("[{\"z\": 0}, {\"a\": 1}]").unwrap());
    }

    #[test]
    fn corrupt_is_an_error_naming_the_file() {
        for text in ["[{\"a\":1}", "{}", "nope"] {
            let err = InboxText::parse(Path::new("/t/bob.json"), text.to_owned(), None).unwrap_err();
            assert!(err.to_string().contains("/t/bob.json"), "{err}");
        }
    }

    #[test]
    fn mark_read_edits_only_the_flag() {
        let text = "[{\"read\":false,\"t\":1.0},\n {\"t\": 2, \"read\" : false},{\"t\":3}, {\"read\":true}]";
        let inbox = parse(text);
        let out = inbox.marked_read(&[0, 2, 3]);
        assert_eq!(
            out,
            "[{\"read\":true,\"t\":1.0},\n {\"t\": 2, \"read\" : false},{\n    \"t\": 3,\n    \"read\": true\n  }, {\"read\":true}]"
        );
    }

    #[test]
    fn atomic_write_through_a_symlink_replaces_the_target_and_keeps_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let shared = dir.path().join("shared");
        let inboxes = dir.path().join("inboxes");
        std::fs::create_dir_all(&shared).unwrap();
        std::fs::create_dir_all(&inboxes).unwrap();
        std::fs::write(shared.join("bob.json"), "[]").unwrap();
        let link = inboxes.join("bob.json");
        std::os::unix::fs::symlink("../shared/bob.json", &link).unwrap();
        write_atomic(&link, "[1]").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(shared.join("bob.json")).unwrap(), "[1]");
        // A chain of links, the last one dangling: the missing file is created.
        std::os::unix::fs::symlink(shared.join("ann.json"), shared.join("ann-link.json")).unwrap();
        let chained = inboxes.join("ann.json");
        std::os::unix::fs::symlink(shared.join("ann-link.json"), &chained).unwrap();
        write_atomic(&chained, "[2]").unwrap();
        assert!(
            std::fs::symlink_metadata(&chained)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(shared.join("ann.json")).unwrap(), "[2]");
        // A loop is refused, naming the inbox, and nothing is written.
        let looped = inboxes.join("loop.json");
        std::os::unix::fs::symlink("loop.json", &looped).unwrap();
        let err = write_atomic(&looped, "[3]").unwrap_err().to_string();
        assert!(err.contains("loop.json") && err.contains("symlinks"), "{err}");
        assert_eq!(std::fs::read_dir(&inboxes).unwrap().count(), 3);
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bob.json");
        write_atomic(&path, "[]").unwrap();
        write_atomic(&path, "[1]").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "[1]");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
