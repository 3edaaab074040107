//! `_session/list/subscribe {cwd}` and `_session/list/unsubscribe {subscriptionId}` (the TS
//! peer's vendor methods; ADR 0046): a client watching the session list of a directory is sent
//! `_session/list/changes {subscriptionId, sessions, removed}` whenever a row of it changes (a
//! session opened, titled, its turn ended, archived, deleted), whichever acplb changed it: one task
//! per connection watches the registry's folder, waits for it to settle, reads it off the runtime
//! thread and sends each subscription the rows that differ from what it was last sent.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Client, UntypedMessage};
use notify::{RecursiveMode, Watcher as _};
use serde_json::{Value, json};
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tokio::sync::oneshot;

use super::durable;
use crate::sessions::registry::{Registry, Status};

/// The most subscriptions one connection holds.
pub(super) const MAX: usize = 16;

/// How long the registry must be quiet before it is read (writes come in bursts).
const QUIET: Duration = Duration::from_millis(150);

/// A subscription's rows as last sent: session id → row.
type Rows = HashMap<String, Value>;

/// What the runtime asks the connection's watcher.
#[derive(Debug)]
pub(super) enum Ask {
    /// Watch `cwd` for subscription `id`; `ready` once its current rows are read (changes from
    /// then on go out).
    Subscribe {
        id: String,
        cwd: PathBuf,
        ready: oneshot::Sender<()>,
    },
    Unsubscribe(String),
}

/// Starts the watcher of one connection; it ends when the sender is dropped.
pub(super) fn start(state_dir: PathBuf, cx: ConnectionTo<Client>) -> UnboundedSender<Ask> {
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::task::spawn_local(watch(state_dir, cx, rx));
    tx
}

async fn watch(state_dir: PathBuf, cx: ConnectionTo<Client>, mut asks: UnboundedReceiver<Ask>) {
    let (wake_tx, mut wake) = mpsc::channel::<()>(1);
    let dir = Registry::new(&state_dir).dir().to_path_buf();
    // Creating the folder and its watch touch the disk: off the runtime thread.
    let _watcher = tokio::task::spawn_blocking(move || watch_folder(&dir, wake_tx))
        .await
        .ok()
        .flatten();
    let mut subs: HashMap<String, (PathBuf, Rows)> = HashMap::new();
    loop {
        tokio::select! {
            biased;
            ask = asks.recv() => match ask {
                None => return,
                Some(ask) => on_ask(&mut subs, ask, &state_dir).await,
            },
            Some(()) = wake.recv() => {
                // Settle: more writes in the burst only extend the wait.
                while tokio::time::timeout(QUIET, wake.recv()).await.is_ok_and(|w| w.is_some()) {}
                // What was asked meanwhile holds first: no changes for a subscription ended.
                while let Ok(ask) = asks.try_recv() {
                    on_ask(&mut subs, ask, &state_dir).await;
                }
                if subs.is_empty() {
                    continue;
                }
                let Some(all) = read(&state_dir).await else { continue };
                for (id, (cwd, sent)) in &mut subs {
                    let now = in_cwd(&all, cwd);
                    if let Some(changes) = changes(id, sent, &now) {
                        let note = UntypedMessage::new("_session/list/changes", changes)
                            .and_then(|n| cx.send_notification(n));
                        if let Err(e) = note {
                            tracing::debug!(error = %e, "session list changes not sent: the client is gone");
                            return;
                        }
                    }
                    *sent = now;
                }
            }
        }
    }
}

async fn on_ask(subs: &mut HashMap<String, (PathBuf, Rows)>, ask: Ask, state_dir: &Path) {
    match ask {
        Ask::Subscribe { id, cwd, ready } => {
            let rows = read(state_dir)
                .await
                .map(|all| in_cwd(&all, &cwd))
                .unwrap_or_default();
            subs.insert(id, (cwd, rows));
            ready.send(()).ok();
        }
        Ask::Unsubscribe(id) => {
            subs.remove(&id);
        }
    }
}

/// Wakes the watcher on any event in the registry's folder; `None` without file events (the
/// subscription then sees no changes, which the log says).
fn watch_folder(dir: &Path, wake: mpsc::Sender<()>) -> Option<notify::RecommendedWatcher> {
    if let Err(e) = std::fs::create_dir_all(dir) {
        tracing::warn!(dir = %dir.display(), "no session list changes: cannot create the registry folder: {e}");
        return None;
    }
    let handler = move |_event: notify::Result<notify::Event>| {
        // A full channel already holds a wake-up.
        wake.try_send(()).ok();
    };
    let started = notify::recommended_watcher(handler).and_then(|mut w| {
        w.watch(dir, RecursiveMode::NonRecursive)?;
        Ok(w)
    });
    started
        .inspect_err(|e| tracing::warn!(dir = %dir.display(), "no session list changes: {e}"))
        .ok()
}

/// Every listed row of the registry (status known), read off the runtime thread.
async fn read(state_dir: &Path) -> Option<Vec<(PathBuf, bool, Value)>> {
    let registry = Registry::new(state_dir);
    let read = tokio::task::spawn_blocking(move || registry.all()).await;
    match read {
        Ok(Ok(listing)) => Some(
            listing
                .into_entries()
                .into_iter()
                .filter(|e| e.effective_status() != Status::Unknown)
                .map(|e| {
                    let (cwd, archived) = (e.cwd.clone(), e.archived);
                    (
                        cwd,
                        archived,
                        serde_json::to_value(durable::row(e)).unwrap_or(Value::Null),
                    )
                })
                .collect(),
        ),
        Ok(Err(e)) => {
            tracing::warn!("session list changes: reading the registry failed: {e}");
            None
        }
        Err(e) => {
            tracing::warn!("session list changes: the registry read did not finish: {e}");
            None
        }
    }
}

/// The unarchived rows of `cwd`, by session id.
fn in_cwd(all: &[(PathBuf, bool, Value)], cwd: &Path) -> Rows {
    all.iter()
        .filter(|(c, archived, _)| c == cwd && !archived)
        .filter_map(|(_, _, row)| Some((row.get("sessionId")?.as_str()?.to_owned(), row.clone())))
        .collect()
}

/// `_session/list/changes` for subscription `id` going from `sent` to `now`, if anything changed.
fn changes(id: &str, sent: &Rows, now: &Rows) -> Option<Value> {
    let mut sessions: Vec<&Value> = now
        .iter()
        .filter(|(k, row)| sent.get(*k) != Some(*row))
        .map(|(_, row)| row)
        .collect();
    sessions.sort_by_key(|r| r.get("sessionId").and_then(Value::as_str).map(str::to_owned));
    let mut removed: Vec<&String> = sent.keys().filter(|k| !now.contains_key(*k)).collect();
    removed.sort();
    (!sessions.is_empty() || !removed.is_empty())
        .then(|| json!({ "subscriptionId": id, "sessions": sessions, "removed": removed }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(list: &[(&str, &str)]) -> Rows {
        list.iter()
            .map(|(id, title)| ((*id).to_owned(), json!({ "sessionId": id, "title": title })))
            .collect()
    }

    #[test]
    fn only_what_changed_goes_out_and_nothing_when_nothing_did() {
        let sent = rows(&[("a", "one"), ("b", "two")]);
        assert_eq!(changes("s", &sent, &sent.clone()), None);
        let now = rows(&[("a", "one"), ("b", "renamed"), ("c", "new")]);
        let out = changes("s", &sent, &now).unwrap();
        assert_eq!(out["subscriptionId"], "s");
        let ids: Vec<&str> = out["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["sessionId"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["b", "c"]);
        assert_eq!(out["removed"], json!([]));
        let gone = changes("s", &now, &rows(&[("c", "new")])).unwrap();
        assert_eq!(gone["sessions"], json!([]));
        assert_eq!(gone["removed"], json!(["a", "b"]));
    }
}
