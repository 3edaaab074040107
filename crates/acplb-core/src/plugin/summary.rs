//! The `session-summary` plugin (off unless `composer.toml` names it): when acplb shuts down
//! (the editor hangs up, SIGTERM, SIGINT), each session that had a turn asks its provider for a
//! short summary, all sessions at once within [`SUMMARY_LIMIT`] in all, and keeps it beside
//! its journal (`summary.md`, shown by `acplb sessions summary ID`). A session whose summary
//! did not come in time is marked interrupted. A later load of a session whose provider thread
//! is gone starts its new thread from this summary.

use std::time::Duration;

use super::Plugin;
use super::registry::{BuildContext, Built, ParamKind, ParamSpec, PluginFactory, PluginParams, Resolved};

/// The plugin id.
pub const SESSION_SUMMARY: &str = "session-summary";

/// How long all of a shutdown's summaries may take together.
pub const SUMMARY_LIMIT: Duration = Duration::from_secs(10);

/// The question asked when `prompt` is not set.
pub const DEFAULT_PROMPT: &str = "acplb is shutting down. Summarise this conversation for whoever continues it: \
the goal, what was done (files changed, commands run), decisions taken, and what is left to do. \
At most 200 words, plain Markdown. Do not run commands or change files.";

const PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "prompt",
    kind: ParamKind::String,
    doc: "the question that asks for the summary (default: a short summary of goal, work done, decisions and what is left)",
}];

/// Builds [`SessionSummary`] plugins.
#[derive(Debug, Default)]
pub struct SessionSummaryFactory;

impl PluginFactory for SessionSummaryFactory {
    fn id(&self) -> &'static str {
        SESSION_SUMMARY
    }

    fn description(&self) -> &'static str {
        "on shutdown, asks each session for a short summary and keeps it beside the session's journal"
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn build(&self, params: &PluginParams, _ctx: &BuildContext) -> Result<Built, String> {
        let (prompt, origin) = match params.str("prompt") {
            Some(p) if p.trim().is_empty() => {
                return Err("`prompt` of plugin `session-summary` is empty".into());
            }
            Some(p) => (
                p.to_owned(),
                params.origin("prompt").unwrap_or("composer.toml").to_owned(),
            ),
            None => (DEFAULT_PROMPT.to_owned(), "default".to_owned()),
        };
        Ok(Built {
            plugin: Box::new(SessionSummary {
                prompt: prompt.clone(),
            }),
            resolved: vec![Resolved {
                key: "prompt".into(),
                value: prompt,
                origin,
            }],
        })
    }
}

/// Asks for a summary when acplb shuts down.
#[derive(Debug)]
pub struct SessionSummary {
    prompt: String,
}

impl Plugin for SessionSummary {
    fn summary_prompt(&self) -> Option<String> {
        Some(self.prompt.clone())
    }
}
