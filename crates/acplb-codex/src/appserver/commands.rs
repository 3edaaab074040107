//! The slash commands the app-server transport offers the editor (`available_commands_update`),
//! how a prompt names one, and the text of `/status` (`/terminals`' own text: `terminals.rs`).

use agent_client_protocol::v1::schema::{AvailableCommand, AvailableCommandInput, UnstructuredCommandInput};
use serde_json::Value;

/// A slash command in a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Slash {
    /// `/review [instructions]`: Codex reviews the uncommitted changes, or what the
    /// instructions say.
    Review(Option<String>),
    /// `/compact`: Codex summarises the conversation to free context.
    Compact,
    /// `/init`: Codex writes an `AGENTS.md` for the repository.
    Init,
    /// `/status`: model, mode, context used and rate limits, answered by acplb.
    Status,
    /// `/mcp [reload]`: the session's MCP servers and their state (after Codex read its MCP
    /// configuration again).
    Mcp { reload: bool },
    /// `/mcp login <server>`: an OAuth login to one MCP server (empty: the usage is shown).
    McpLogin(String),
    /// `/terminals [stop <id>|stop all|clean]`: the commands Codex left running in the
    /// background, listed or stopped (answered by acplb).
    Terminals(super::terminals::Ask),
    /// `/goal [<objective>|pause|resume|clear]`: Codex's goal for the thread, shown or changed
    /// (setting or resuming it starts Codex working: a turn).
    Goal(super::goals::Ask),
}

/// What `/init` asks Codex.
pub(crate) const INIT_PROMPT: &str = "Create an AGENTS.md file in the repository root for \
future coding agents: how the project is laid out, how to build, test and lint it, the coding \
conventions it follows, and anything a newcomer would trip over. Read the repository first; keep \
the file short and concrete. If an AGENTS.md exists, improve it instead.";

/// The commands, for `available_commands_update`.
pub(crate) fn available() -> Vec<AvailableCommand> {
    vec![
        AvailableCommand::new("review", "Review the uncommitted changes (or what you describe)").input(
            AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(
                "optional: what to review, e.g. the error handling in src/",
            )),
        ),
        AvailableCommand::new("compact", "Summarise the conversation so far to free context"),
        AvailableCommand::new("init", "Create an AGENTS.md with instructions for agents"),
        AvailableCommand::new(
            "status",
            "Show the model, mode, account, context used and rate limits",
        ),
        AvailableCommand::new("mcp", "Show the MCP servers, their state and tools").input(
            AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(
                "optional: reload, to read the MCP configuration again first; login <server>, to log in to a server by OAuth",
            )),
        ),
        AvailableCommand::new(
            "terminals",
            "List the commands running in the background, or stop them",
        )
        .input(AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(
            "optional: stop <id>, stop all, or clean",
        ))),
        AvailableCommand::new(
            "goal",
            "Show the goal Codex works toward, or set, budget, pause, resume or clear it",
        )
        .input(AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(
            "optional: the objective, or pause, resume, clear, budget <tokens>",
        )))
        // AIR's command action, as the TS peer gives its `/goal` (ADR 0049; only AIR gets it).
        .meta(acplb_core::capabilities::air_meta(
            "commandAction",
            serde_json::json!({ "kind": "prefixPrompt", "presentation": "state" }),
        )),
    ]
}

/// The command a prompt starts with, if it is one of ours; `/other` is plain text for Codex.
pub(crate) fn parse(text: &str) -> Option<Slash> {
    let rest = text.trim_start().strip_prefix('/')?;
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let args = args.trim();
    match name {
        "review" => Some(Slash::Review((!args.is_empty()).then(|| args.to_owned()))),
        "compact" if args.is_empty() => Some(Slash::Compact),
        "init" if args.is_empty() => Some(Slash::Init),
        "status" if args.is_empty() => Some(Slash::Status),
        "mcp" if args.is_empty() => Some(Slash::Mcp { reload: false }),
        "mcp" if args == "reload" => Some(Slash::Mcp { reload: true }),
        "mcp" => match args.split_once(char::is_whitespace).unwrap_or((args, "")) {
            ("login", server) => Some(Slash::McpLogin(server.trim().to_owned())),
            _ => None,
        },
        "terminals" => Some(Slash::Terminals(super::terminals::Ask::parse(args))),
        "goal" => Some(Slash::Goal(super::goals::Ask::parse(args))),
        _ => None,
    }
}

/// What `/status` shows.
#[derive(Debug, Default)]
pub(crate) struct Status<'a> {
    pub(crate) model: Option<&'a str>,
    pub(crate) mode: &'a str,
    pub(crate) thread: Option<&'a str>,
    /// `thread/tokenUsage/updated` params, last seen.
    pub(crate) usage: Option<&'a Value>,
    /// `account/rateLimits/updated` params, last seen.
    pub(crate) rate_limits: Option<&'a Value>,
    /// Who is signed in (never a key), or why Codex could not say.
    pub(crate) account: Option<&'a str>,
}

impl Status<'_> {
    /// Markdown for the editor.
    pub(crate) fn render(&self) -> String {
        let mut lines = vec![
            "**Status**\n".to_owned(),
            format!("- Model: {}", self.model.unwrap_or("Codex's default")),
            format!("- Mode: {}", self.mode),
            format!("- Conversation: {}", self.thread.unwrap_or("not started yet")),
            format!("- Account: {}", self.account.unwrap_or("unknown")),
        ];
        let usage = self.usage.and_then(|u| u.get("tokenUsage"));
        let used = usage
            .and_then(|u| u.pointer("/last/totalTokens"))
            .and_then(Value::as_u64);
        let window = usage
            .and_then(|u| u.get("modelContextWindow"))
            .and_then(Value::as_u64);
        lines.push(match (used, window) {
            (Some(used), Some(window)) if window > 0 => {
                format!("- Context: {used} of {window} tokens ({}%)", used * 100 / window)
            }
            (Some(used), _) => format!("- Context: {used} tokens"),
            _ => "- Context: nothing used yet".to_owned(),
        });
        let limits = self.rate_limits.and_then(|r| r.get("rateLimits"));
        let windows: Vec<String> = ["primary", "secondary"]
            .iter()
            .filter_map(|w| limits.and_then(|l| l.get(*w)).filter(|v| !v.is_null()))
            .map(window_text)
            .collect();
        lines.push(if windows.is_empty() {
            "- Rate limits: not reported".to_owned()
        } else {
            format!("- Rate limits: {}", windows.join("; "))
        });
        let mut out = lines.join("\n");
        out.push('\n');
        out
    }
}

fn window_text(window: &Value) -> String {
    let used = window.get("usedPercent").and_then(Value::as_f64).unwrap_or(0.0);
    let mut parts = vec![format!("{used:.0}% used")];
    if let Some(mins) = window.get("windowDurationMins").and_then(Value::as_u64) {
        parts.push(match mins {
            m if m % 1440 == 0 => format!("of {} d", m / 1440),
            m if m % 60 == 0 => format!("of {} h", m / 60),
            m => format!("of {m} min"),
        });
    }
    let mut text = parts.join(" ");
    if let Some(at) = window.get("resetsAt").and_then(Value::as_i64) {
        text = format!("{text}, resets {}", time_text(at));
    }
    text
}

/// A Unix time as `YYYY-MM-DD HH:MM UTC`.
fn time_text(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn commands_are_recognised_and_other_slashes_are_text() {
        assert_eq!(parse("/review"), Some(Slash::Review(None)));
        assert_eq!(
            parse("  /review the tests please"),
            Some(Slash::Review(Some("the tests please".into())))
        );
        assert_eq!(parse("/compact"), Some(Slash::Compact));
        assert_eq!(parse("/status"), Some(Slash::Status));
        assert_eq!(parse("/init"), Some(Slash::Init));
        assert_eq!(parse("/mcp"), Some(Slash::Mcp { reload: false }));
        assert_eq!(parse("/mcp reload"), Some(Slash::Mcp { reload: true }));
        assert_eq!(
            parse("/mcp login  linear "),
            Some(Slash::McpLogin("linear".into()))
        );
        assert_eq!(parse("/mcp login"), Some(Slash::McpLogin(String::new())));
        assert_eq!(parse("/mcp please"), None);
        assert_eq!(parse("/mcp servers please"), None);
        assert_eq!(parse("/usr/bin/env is broken"), None);
        assert_eq!(parse("/statusbar"), None);
        assert_eq!(parse("no slash"), None);
        assert_eq!(
            parse("/terminals stop 12"),
            Some(Slash::Terminals(super::super::terminals::Ask::Stop("12".into())))
        );
        assert_eq!(
            parse("/terminals"),
            Some(Slash::Terminals(super::super::terminals::Ask::List))
        );
        assert_eq!(
            parse("/goal ship it"),
            Some(Slash::Goal(super::super::goals::Ask::Set("ship it".into())))
        );
        assert_eq!(parse("/goals"), None);
        assert_eq!(available().len(), 7);
    }

    #[test]
    fn status_shows_model_mode_context_and_limits() {
        let usage = json!({"tokenUsage": {"last": {"totalTokens": 25_840}, "modelContextWindow": 258_400}});
        let limits = json!({"rateLimits": {"primary": {"usedPercent": 42.0, "windowDurationMins": 300, "resetsAt": 1_795_316_108}, "secondary": null}});
        let text = Status {
            model: Some("gpt-5.5"),
            mode: "read-only",
            thread: Some("th-1"),
            usage: Some(&usage),
            rate_limits: Some(&limits),
            account: Some("signed in with an API key"),
        }
        .render();
        assert!(text.contains("- Model: gpt-5.5"), "{text}");
        assert!(text.contains("- Account: signed in with an API key"), "{text}");
        assert!(text.contains("- Mode: read-only"), "{text}");
        assert!(text.contains("25840 of 258400 tokens (10%)"), "{text}");
        assert!(
            text.contains("42% used of 5 h, resets 2026-11-22 02:55 UTC"),
            "{text}"
        );
        let empty = Status {
            mode: "auto",
            ..Status::default()
        }
        .render();
        assert!(
            empty.contains("nothing used yet") && empty.contains("not reported"),
            "{empty}"
        );
    }
}
