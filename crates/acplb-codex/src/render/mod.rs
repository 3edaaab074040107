//! What both decoders draw with: the options of a rendering, and the renderers of ACP updates
//! (`emit`: the update constructors; `tools`: commands, MCP and web calls; `edits`: file
//! changes; `usage`: token totals; `live`: a command's output as it streams, to a terminal or
//! as text). They know Codex's items ([`crate::items`]), not a transport.

pub(crate) mod edits;
pub(crate) mod emit;
pub(crate) mod live;
pub(crate) mod names;
pub(crate) mod tools;
pub(crate) mod usage;

use std::path::PathBuf;

use agent_client_protocol::v1::schema::SessionUpdate;

use crate::output::DEFAULT_MAX_OUTPUT_BYTES;

/// How a decoder (exec's or app-server's) renders updates.
#[derive(Debug, Clone)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "each bool is one capability the client advertised, read on its own"
)]
pub struct DecoderOptions {
    /// Absolute working directory of the session: commands' relative paths resolve against it
    /// and titles show paths relative to it.
    pub cwd: PathBuf,
    /// Whether the client shows `notice` updates; otherwise warnings become thoughts.
    pub notices: bool,
    /// Bound on the output text of one tool call, in bytes.
    pub max_output_bytes: usize,
    /// Prefix of every tool call and message id, unique per turn (Codex numbers items per
    /// process, so `item_0` comes back on every resumed turn).
    pub id_prefix: String,
    /// Whether the client renders commands as Zed's live terminals (`_meta.terminal_output`):
    /// their output is then appended through `_meta` instead of replacing text content (`live`).
    pub terminal: bool,
    /// Whether the client advertised `session.compaction`: Codex compacting its context is
    /// then shown as `compaction_update`s instead of a notice (ADR 0037).
    pub compaction: bool,
    /// Whether the client advertised `clientCapabilities.plan`: a plan mode turn's proposed
    /// plan then streams as a markdown `plan_update` instead of message text (ADR 0053).
    pub plan_updates: bool,
    /// What a `JetBrains` AIR client declared (ADR 0049), `None` for any other client: with
    /// `diffPatch`, the app-server decoder gives each changed file as an AIR Git patch where it
    /// can.
    pub air: Option<acplb_core::capabilities::Air>,
}

impl DecoderOptions {
    /// Options for `cwd` with defaults: no notices, 64 KiB of output, no id prefix, text
    /// (not terminal) output.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        Self {
            cwd: cwd.into(),
            notices: false,
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            id_prefix: String::new(),
            terminal: false,
            compaction: false,
            plan_updates: false,
            air: None,
        }
    }
}

/// The `JetBrains` AIR extension capabilities the Codex provider answers when a client declares
/// them (ADR 0049), by the names the TS peer gives them.
pub(crate) mod air {
    /// File changes as Git patches (`_meta.jetbrains.air.diffPatch`), app-server only.
    pub(crate) const DIFF_PATCH: &str = "diffPatch";
    /// The client shows a tool call's `rawInput`: readable input (a subagent's task) is not
    /// repeated as text content.
    pub(crate) const RAW_INPUT_RENDERING: &str = "rawInputRendering";
    /// A command left running in the background is AIR's async task: marked, announced and
    /// ended (`appserver/decode/background.rs`), app-server only.
    pub(crate) const ASYNC_TASKS: &str = "asyncTasks";
    /// A proposed plan's `plan_update`s after the first carry only the new text, in
    /// `_meta.jetbrains.air.contentDelta` (`appserver/decode/plan.rs`), app-server only.
    pub(crate) const PLAN_CONTENT_DELTA: &str = acplb_core::capabilities::AIR_PLAN_CONTENT_DELTA;
}

impl DecoderOptions {
    /// Whether the client is AIR and declared the AIR capability `name` (see [`air`]).
    pub(crate) fn air_declares(&self, name: &str) -> bool {
        self.air.as_ref().is_some_and(|air| air.declares(name))
    }
}

/// Codex's warnings as the user sees them: a notice where the client shows notices, else a
/// thought the decoder draws; the same warning twice in a row (a retry loop) is shown once.
#[derive(Debug, Default)]
pub(crate) struct Warnings {
    last: Option<String>,
}

impl Warnings {
    /// Shows `message`: pushed to `out` as a notice when the client shows them (`None`), or
    /// the text of the thought the decoder draws (`Some`); `None` for a repeat.
    pub(crate) fn show(
        &mut self,
        message: &str,
        notices: bool,
        out: &mut Vec<SessionUpdate>,
    ) -> Option<String> {
        if self.last.as_deref() == Some(message) {
            tracing::debug!(message, "repeated codex warning not shown again");
            return None;
        }
        self.last = Some(message.to_owned());
        let text = format!("Codex warning: {message}");
        if notices {
            emit::warning_notice(out, text);
            None
        } else {
            Some(text)
        }
    }

    /// Something else came between: the next warning shows even if it repeats the last.
    pub(crate) fn forget(&mut self) {
        self.last = None;
    }
}

/// `text` on one line (runs of white space as one space), cut to `chars` characters with an
/// ellipsis: titles and summary lines.
pub(crate) fn one_line(text: &str, chars: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= chars {
        return one_line;
    }
    let mut cut: String = one_line.chars().take(chars.saturating_sub(1)).collect();
    cut.push('…');
    cut
}
