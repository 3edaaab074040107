//! Running the configured plugins in order, each hook inside its own `plugin` span, with
//! required plugins failing the operation and optional ones logged and skipped.

use agent_client_protocol::v1::schema::{SessionId, SessionUpdate};
use tracing::Instrument as _;

use super::{Plugin, PluginError, PromptContext, SessionStart};
use crate::provider::TurnRequest;

/// One configured plugin.
pub struct PluginEntry {
    /// The plugin id from `composer.toml`.
    pub id: String,
    /// Whether a failure of this plugin fails the prompt (or session).
    pub required: bool,
    /// The plugin.
    pub plugin: Box<dyn Plugin>,
}

impl std::fmt::Debug for PluginEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginEntry")
            .field("id", &self.id)
            .field("required", &self.required)
            .finish_non_exhaustive()
    }
}

/// The plugins of a runtime, in order.
#[derive(Debug, Default)]
pub struct Pipeline {
    entries: Vec<PluginEntry>,
}

impl Pipeline {
    /// A pipeline running `entries` in order.
    pub fn new(entries: Vec<PluginEntry>) -> Self {
        Self { entries }
    }

    /// Plugin ids in order.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.id.as_str())
    }

    /// Runs every `session_start` hook.
    pub fn on_session_start(&self, start: &mut SessionStart) -> Result<(), PluginError> {
        self.run_fallible(|p| p.session_start(start))
    }

    /// Runs every `prompt` hook, awaiting each in order.
    pub async fn on_prompt(&self, ctx: &PromptContext, turn: &mut TurnRequest) -> Result<(), PluginError> {
        for entry in &self.entries {
            let span = tracing::debug_span!("plugin", id = %entry.id, hook = "prompt");
            let result = entry.plugin.prompt_async(ctx, turn).instrument(span).await;
            settle(entry, result)?;
        }
        Ok(())
    }

    /// Runs every `update` hook; `None` when a plugin dropped the update.
    pub fn on_update(&self, session: &SessionId, mut update: SessionUpdate) -> Option<SessionUpdate> {
        for entry in &self.entries {
            let _span = tracing::trace_span!("plugin", id = %entry.id, hook = "update").entered();
            update = entry.plugin.update(session, update)?;
        }
        Some(update)
    }

    /// Runs every `turn_finished` hook.
    pub fn on_turn_finished(&self, session: &SessionId) {
        for entry in &self.entries {
            let _span = tracing::debug_span!("plugin", id = %entry.id, hook = "turn_finished").entered();
            entry.plugin.turn_finished(session);
        }
    }

    /// The summary question of the first plugin that asks for one on shutdown.
    pub fn summary_prompt(&self) -> Option<String> {
        self.entries.iter().find_map(|e| e.plugin.summary_prompt())
    }

    /// Runs every `session_closed` hook; the releases they left running.
    pub fn on_session_closed(&self, session: &SessionId) -> Vec<tokio::task::JoinHandle<()>> {
        let mut releasing = Vec::new();
        for entry in &self.entries {
            let _span = tracing::debug_span!("plugin", id = %entry.id, hook = "session_closed").entered();
            releasing.extend(entry.plugin.session_closed(session));
        }
        releasing
    }

    fn run_fallible(
        &self,
        mut hook: impl FnMut(&dyn Plugin) -> Result<(), String>,
    ) -> Result<(), PluginError> {
        for entry in &self.entries {
            let _span = tracing::debug_span!("plugin", id = %entry.id).entered();
            settle(entry, hook(entry.plugin.as_ref()))?;
        }
        Ok(())
    }
}

/// A hook's result: a required plugin's failure stops the operation, an optional one's is
/// logged and skipped.
fn settle(entry: &PluginEntry, result: Result<(), String>) -> Result<(), PluginError> {
    let Err(message) = result else {
        return Ok(());
    };
    let err = PluginError::new(&entry.id, message);
    if entry.required {
        return Err(err);
    }
    tracing::warn!(error = %err, "optional plugin failed; skipped");
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use agent_client_protocol::v1::schema::ContentChunk;

    use super::*;
    use crate::permission::Mode;
    use crate::provider::{PromptInput, SessionSettings};

    struct Recorder {
        name: &'static str,
        log: Arc<Mutex<Vec<String>>>,
        fail: bool,
    }

    impl Plugin for Recorder {
        fn prompt(&self, _c: &PromptContext, turn: &mut TurnRequest) -> Result<(), String> {
            self.log.lock().unwrap().push(self.name.to_owned());
            turn.developer_instructions.push(self.name.to_owned());
            if self.fail { Err("boom".into()) } else { Ok(()) }
        }
        fn update(&self, _s: &SessionId, u: SessionUpdate) -> Option<SessionUpdate> {
            (!self.fail).then_some(u)
        }
    }

    /// A plugin whose prompt hook waits before it writes, as one waiting for a child would.
    struct Waiter {
        name: &'static str,
        log: Arc<Mutex<Vec<String>>>,
    }

    impl Plugin for Waiter {
        fn prompt_async<'a>(
            &'a self,
            _c: &'a PromptContext,
            turn: &'a mut TurnRequest,
        ) -> crate::plugin::HookFuture<'a> {
            Box::pin(async move {
                tokio::task::yield_now().await;
                self.log.lock().unwrap().push(self.name.to_owned());
                turn.developer_instructions.push(self.name.to_owned());
                Ok(())
            })
        }
    }

    fn turn() -> TurnRequest {
        TurnRequest {
            prompt: PromptInput::default(),
            mode: Mode::ReadOnly,
            settings: SessionSettings::default(),
            developer_instructions: vec![],
            env: vec![],
            notes: vec![],
            steer: crate::provider::SteerInbox::default(),
        }
    }

    fn ctx() -> PromptContext {
        PromptContext {
            session_id: SessionId::new("s"),
            cwd: "/w".into(),
            thread_id: None,
        }
    }

    fn entry(name: &'static str, required: bool, fail: bool, log: &Arc<Mutex<Vec<String>>>) -> PluginEntry {
        PluginEntry {
            id: name.into(),
            required,
            plugin: Box::new(Recorder {
                name,
                log: log.clone(),
                fail,
            }),
        }
    }

    #[tokio::test]
    async fn hooks_run_in_order_and_optional_failures_are_skipped() {
        let log = Arc::default();
        let p = Pipeline::new(vec![entry("a", false, true, &log), entry("b", true, false, &log)]);
        let mut t = turn();
        p.on_prompt(&ctx(), &mut t).await.unwrap();
        assert_eq!(*log.lock().unwrap(), vec!["a", "b"]);
        assert_eq!(t.developer_instructions, vec!["a", "b"]);
    }

    #[tokio::test]
    async fn async_hooks_are_awaited_in_order_beside_sync_ones() {
        let log: Arc<Mutex<Vec<String>>> = Arc::default();
        let waiter = |name: &'static str| PluginEntry {
            id: name.into(),
            required: true,
            plugin: Box::new(Waiter {
                name,
                log: log.clone(),
            }),
        };
        let p = Pipeline::new(vec![waiter("w1"), entry("s", true, false, &log), waiter("w2")]);
        let mut t = turn();
        p.on_prompt(&ctx(), &mut t).await.unwrap();
        assert_eq!(*log.lock().unwrap(), vec!["w1", "s", "w2"]);
        assert_eq!(t.developer_instructions, vec!["w1", "s", "w2"]);
    }

    #[tokio::test]
    async fn a_required_failure_names_the_plugin_and_stops() {
        let log = Arc::default();
        let p = Pipeline::new(vec![
            entry("first", true, true, &log),
            entry("second", true, false, &log),
        ]);
        let err = p.on_prompt(&ctx(), &mut turn()).await.unwrap_err();
        assert_eq!(err.plugin, "first");
        assert_eq!(err.to_string(), "plugin `first` failed: boom");
        assert_eq!(*log.lock().unwrap(), vec!["first"]);
    }

    #[test]
    fn update_hooks_can_drop() {
        let log = Arc::default();
        let u = SessionUpdate::AgentMessageChunk(ContentChunk::new("hi".into()));
        let keep = Pipeline::new(vec![entry("k", false, false, &log)]);
        assert!(keep.on_update(&SessionId::new("s"), u.clone()).is_some());
        let drop = Pipeline::new(vec![entry("d", false, true, &log)]);
        assert!(drop.on_update(&SessionId::new("s"), u).is_none());
    }
}
