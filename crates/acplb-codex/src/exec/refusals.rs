//! What `codex exec` reports only on its stderr: a patch Codex refused or failed to verify, a
//! command it refused before running it. Each becomes one finished (failed) tool call.

use agent_client_protocol::v1::schema::{ToolCall, ToolCallId, ToolCallLocation, ToolCallStatus, ToolKind};
use serde_json::json;

use crate::render::DecoderOptions;
use crate::render::edits::display_path;
use crate::render::names;

/// A patch Codex refused or failed to verify, seen on stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PatchRefusal {
    /// `rejected` or `failed`.
    pub(crate) rejected: bool,
    /// Codex's reason.
    pub(crate) reason: String,
    /// The file named in the reason, when there is one.
    pub(crate) path: Option<String>,
}

/// Recognises `ERROR codex_core::tools::router: error=<patch refusal>` lines.
pub(crate) fn patch_refusal(line: &str) -> Option<PatchRefusal> {
    const MARKER: &str = "ERROR codex_core::tools::router:";
    let line = strip_ansi(line);
    let rest = line[line.find(MARKER)? + MARKER.len()..].trim();
    let reason = rest.strip_prefix("error=").unwrap_or(rest).trim();
    let rejected = reason.starts_with("patch rejected");
    if !rejected && !reason.contains("apply_patch") {
        return None;
    }
    let path = reason
        .split_whitespace()
        .find(|w| w.starts_with('/') && w.len() > 1)
        .map(|w| w.trim_end_matches([':', ',', ';', '.']).to_owned());
    Some(PatchRefusal {
        rejected,
        reason: reason.to_owned(),
        path,
    })
}

/// A refused patch as one finished (failed) Edit tool call.
pub(crate) fn refused_call(id: ToolCallId, refusal: PatchRefusal, opts: &DecoderOptions) -> ToolCall {
    let verb = if refusal.rejected {
        "Edit rejected"
    } else {
        "Edit failed"
    };
    let title = match &refusal.path {
        Some(path) => format!("{verb}: {}", display_path(path, &opts.cwd)),
        None => verb.to_owned(),
    };
    let locations = refusal.path.iter().map(ToolCallLocation::new).collect();
    ToolCall::new(id, title)
        .name(names::APPLY_PATCH.to_owned())
        .kind(ToolKind::Edit)
        .status(ToolCallStatus::Failed)
        .locations(locations)
        .raw_output(json!({ "error": refusal.reason }))
        .content(vec![refusal.reason.into()])
}

/// Removes ANSI colour sequences (`ESC [ … m`), in case Codex logs with colours.
fn strip_ansi(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains('\u{1b}') {
        return line.into();
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out.into()
}

/// A command Codex refused before running it (reported only on stderr, e.g. an escalation
/// request under approval policy `never`): the reason, or `None` for any other line.
pub(crate) fn command_refusal(line: &str) -> Option<String> {
    let at = line.find("codex_core::tools::router:")?;
    if !line[..at].contains("ERROR") {
        return None;
    }
    let reason = line[at + "codex_core::tools::router:".len()..].trim();
    let reason = reason.strip_prefix("error=").unwrap_or(reason).trim();
    reason.contains("reject command").then(|| reason.to_owned())
}

/// A refused command as one finished (failed) Execute tool call.
pub(crate) fn refused_command_call(id: ToolCallId, reason: String) -> ToolCall {
    ToolCall::new(id, "Command refused")
        .name(names::EXEC_COMMAND.to_owned())
        .kind(ToolKind::Execute)
        .status(ToolCallStatus::Failed)
        .raw_output(json!({ "error": reason }))
        .content(vec![reason.into()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_from_stderr() {
        let line = "2026-11-22T02:54:28.187449Z ERROR codex_core::tools::router: error=patch rejected: writing is blocked by read-only sandbox; rejected by user approval settings";
        let refusal = patch_refusal(line).unwrap();
        assert!(refusal.rejected);
        assert_eq!(refusal.path, None);
        assert!(refusal.reason.starts_with("patch rejected: writing is blocked"));

        let line = "\u{1b}[2m2026-11-22T02:54:28.600242Z\u{1b}[0m \u{1b}[31mERROR\u{1b}[0m codex_core::tools::router: error=apply_patch verification failed: Failed to read file to update /workspace/does-not-exist.txt: No such file or directory (os error 2)";
        let refusal = patch_refusal(line).unwrap();
        assert!(!refusal.rejected);
        assert_eq!(refusal.path.as_deref(), Some("/workspace/does-not-exist.txt"));
    }

    #[test]
    fn other_stderr_lines_are_not_refusals() {
        for line in [
            "Reading additional input from stdin...",
            "2026-11-22T02:54:52.675477Z ERROR codex_core::tools::router: error=approval policy is Never; reject command",
            "2026-11-22T02:55:03.689418Z ERROR codex_core::session: failed to record rollout items: apply_patch",
        ] {
            assert_eq!(patch_refusal(line), None, "{line}");
        }
    }
}
