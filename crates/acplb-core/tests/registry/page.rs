//! Pages of sessions: order, cwd filter, cursors that survive new sessions, bad cursors.

use std::collections::HashSet;
use std::path::Path;

use acplb_core::sessions::registry::{DEFAULT_PAGE_SIZE, Entry, page};

use crate::child::entry;

fn ids<T: AsRef<Entry>>(entries: &[T]) -> Vec<&str> {
    entries.iter().map(|e| e.as_ref().session_id.as_str()).collect()
}

#[test]
fn newest_first_then_by_id() {
    let entries = vec![
        entry("a", "/w", 10),
        entry("b", "/w", 30),
        entry("c", "/w", 20),
        entry("d", "/w", 30),
    ];
    let p = page(entries, None, None, DEFAULT_PAGE_SIZE).unwrap();
    assert_eq!(ids(&p.entries), ["d", "b", "c", "a"]);
    assert_eq!(p.next_cursor, None);
}

#[test]
fn the_cwd_filter_is_an_exact_path() {
    let entries = vec![
        entry("a", "/w/x", 1),
        entry("b", "/w", 2),
        entry("c", "/w/x/y", 3),
        entry("d", "/w/x", 4),
    ];
    let p = page(entries, Some(Path::new("/w/x")), None, 10).unwrap();
    assert_eq!(ids(&p.entries), ["d", "a"]);
}

fn many(n: u64, offset: u64) -> Vec<Entry> {
    (0..n)
        .map(|i| entry(&format!("s{:03}", i + offset), "/w", i + offset))
        .collect()
}

#[test]
fn pages_of_fifty_cover_120_sessions_once() {
    let all = many(120, 0);
    let mut seen = Vec::new();
    let mut cursor = None;
    let mut sizes = Vec::new();
    loop {
        let p = page(all.clone(), None, cursor.as_deref(), 50).unwrap();
        sizes.push(p.entries.len());
        seen.extend(p.entries.into_iter().map(|e| e.session_id));
        match p.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    assert_eq!(sizes, [50, 50, 20]);
    assert_eq!(seen.len(), 120);
    assert_eq!(seen.iter().collect::<HashSet<_>>().len(), 120);
    assert_eq!(seen.first().map(String::as_str), Some("s119"));
    assert_eq!(seen.last().map(String::as_str), Some("s000"));
}

#[test]
fn a_cursor_still_works_after_new_sessions_arrive() {
    let all = many(120, 0);
    let first = page(all.clone(), None, None, 50).unwrap();
    let second_before = page(all.clone(), None, first.next_cursor.as_deref(), 50).unwrap();
    let mut grown = all;
    grown.extend(many(10, 1_000));
    let second_after = page(grown, None, first.next_cursor.as_deref(), 50).unwrap();
    assert_eq!(ids(&second_after.entries), ids(&second_before.entries));
    assert_eq!(second_after.entries[0].session_id, "s069");
}

#[test]
fn a_page_of_listed_entries_keeps_their_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let reg = crate::child::patient(tmp.path());
    reg.update("a", "x", |_| Some(entry("x", "/w", 1))).unwrap();
    reg.update("b", "y", |_| Some(entry("y", "/w", 2))).unwrap();
    let p = page(reg.all().unwrap().entries, None, None, 1).unwrap();
    assert_eq!((p.entries[0].key.as_str(), ids(&p.entries)), ("b", vec!["y"]));
    let p = page(reg.all().unwrap().entries, None, p.next_cursor.as_deref(), 1).unwrap();
    assert_eq!((p.entries[0].key.as_str(), p.next_cursor), ("a", None));
}

#[test]
fn a_bad_cursor_says_what_is_wrong() {
    use base64::Engine as _;
    let all = many(3, 0);
    let err = page(all.clone(), None, Some("not a cursor!"), 50).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid cursor `not a cursor!`: not base64url (pass a `nextCursor` back exactly as it was returned)"
    );
    let junk = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("{\"a\":1}");
    let err = page(all.clone(), None, Some(&junk), 50).unwrap_err();
    assert!(err.to_string().contains("not a session list position"), "{err}");
    let future = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("[2,\"x\",\"y\"]");
    let err = page(all, None, Some(&future), 50).unwrap_err();
    assert!(err.to_string().contains("another acplb version"), "{err}");
}
