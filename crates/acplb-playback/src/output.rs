//! The output of a replay, as `[expect] output` holds it: acplb's messages (normalized), one line
//! per Codex run (its arguments and prompt size) or, on app-server, per process its arguments
//! and every message acplb sent it, and acplb's exit. Recording and replaying
//! both build it here, so the two can only differ where acplb behaved differently.

use std::path::Path;
use std::process::ExitStatus;

use serde_json::json;

use crate::normalize::Normalizer;

/// What a session looked like from outside, before normalization.
#[derive(Debug, Clone, Default)]
pub struct Observed<'a> {
    /// Workspaces of the sessions, in `session/new` order (`<cwd>`, `<cwd-2>`, ...).
    pub cwds: Vec<String>,
    /// Session ids, in `session/new` order.
    pub sessions: Vec<String>,
    /// Thread ids Codex started, in order.
    pub threads: Vec<String>,
    /// The playback binary (it appears as the MCP server command).
    pub playback: Option<&'a Path>,
    /// acplb's `$HOME`.
    pub home: Option<String>,
    /// The Codex program acplb ran (it appears in errors about its exit).
    pub codex: Option<String>,
}

/// The normalizer for a session: the placeholders of `dev-docs/scenarios.md`.
pub fn normalizer(seen: &Observed<'_>) -> Normalizer {
    let mut n = Normalizer::new();
    for (i, cwd) in seen.cwds.iter().enumerate() {
        n.replace(cwd.clone(), numbered("cwd", i));
    }
    for (i, id) in seen.sessions.iter().enumerate() {
        n.replace(id.clone(), format!("<session-{}>", i + 1));
    }
    for (i, id) in seen.threads.iter().enumerate() {
        n.replace(id.clone(), format!("<thread-{}>", i + 1));
    }
    if let Some(playback) = seen.playback {
        n.replace(playback.display().to_string(), "<playback>");
    }
    if let Some(home) = &seen.home {
        n.replace(home.clone(), "<home>");
    }
    if let Some(codex) = &seen.codex {
        n.replace(codex.clone(), "<codex>");
    }
    n
}

/// `<cwd>` for the first workspace, `<cwd-2>` for the second, ...
pub fn numbered(name: &str, index: usize) -> String {
    if index == 0 {
        format!("<{name}>")
    } else {
        format!("<{name}-{}>", index + 1)
    }
}

/// The line for Codex run `n` (1-based).
pub fn codex_line(n: usize, argv: &[String], stdin_bytes: usize, norm: &Normalizer) -> String {
    let argv: Vec<String> = argv.iter().map(|a| norm.text(a)).collect();
    json!({ "codex": n, "argv": argv, "stdin_bytes": stdin_bytes }).to_string()
}

/// The lines for app-server process `n` (1-based): `{"app_server":n,"argv":[..]}`, then
/// `{"app_server":n,"sent":MSG}` for each message acplb sent it, grouped by stream (0: the
/// process's own `initialize`, `k`: session `k`), in order within a stream.
pub fn app_server_lines(
    n: usize,
    argv: &[String],
    sent: &[(usize, String)],
    norm: &mut Normalizer,
) -> Vec<String> {
    let argv: Vec<String> = argv.iter().map(|a| norm.text(a)).collect();
    let mut lines = vec![json!({ "app_server": n, "argv": argv }).to_string()];
    let mut sorted: Vec<&(usize, String)> = sent.iter().collect();
    sorted.sort_by_key(|(stream, _)| *stream);
    for (_, msg) in sorted {
        let mut value: serde_json::Value =
            serde_json::from_str(msg).unwrap_or_else(|_| serde_json::Value::String(msg.clone()));
        norm.value(&mut value, None);
        lines.push(json!({ "app_server": n, "sent": value }).to_string());
    }
    lines
}

/// The stream of session `<session-k>`: `k`, or past every numbered one when it has no number.
pub fn session_stream(session: &str) -> usize {
    session
        .strip_prefix("<session-")
        .and_then(|s| s.strip_suffix('>'))
        .and_then(|n| n.parse().ok())
        .unwrap_or(usize::MAX)
}

/// The line for acplb's exit.
pub fn exit_line(status: Option<ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    let exit = match status {
        Some(s) => match (s.code(), s.signal()) {
            (Some(code), _) => json!({ "code": code }),
            (None, Some(signal)) => json!({ "signal": signal }),
            (None, None) => json!(null),
        },
        None => json!("killed by playback (timeout)"),
    };
    json!({ "acplb_exit": exit }).to_string()
}
