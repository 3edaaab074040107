//! Codex's thread goals (ADR 0045): `/goal` and its arguments, the goal as the editor sees it
//! (a snapshot in a `session_info_update`'s `_meta.goal`, and a line when its status changes),
//! and the requests that read, pause and clear it. Setting or resuming a goal starts Codex
//! working (its turn is the prompt's: `session/finish.rs`); the turn follows the goals Codex
//! reports ([`Watch`]) and Codex's next turns while the goal stays active (`session/turn.rs`).

use std::fmt::Write as _;

use agent_client_protocol::v1::schema::{SessionInfoUpdate, SessionUpdate};
use serde_json::{Map, Value, json};

use super::protocol::methods;
use super::protocol::requests::{ThreadGoalClear, ThreadGoalGet, ThreadGoalSet};
use super::rpc::Rpc;

/// The vendor method that controls a goal, named in the snapshot as codex-acp names it.
pub(crate) const CONTROL_METHOD: &str = "_session/goal";

/// The longest objective taken (codex-acp's limit too).
pub(crate) const MAX_OBJECTIVE: usize = 4000;

/// What `/goal` was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ask {
    /// `/goal`: show the goal.
    Show,
    /// `/goal <objective>`: set it; Codex starts working toward it.
    Set(String),
    /// `/goal pause`.
    Pause,
    /// `/goal resume`: Codex works toward it again.
    Resume,
    /// `/goal clear`.
    Clear,
    /// `/goal budget <tokens>`: the goal's token budget.
    Budget(u64),
    /// `/goal budget` without a whole number of tokens above zero.
    BadBudget,
    /// An objective too long: the reason, shown.
    TooLong,
}

impl Ask {
    /// The arguments after `/goal`.
    pub(crate) fn parse(args: &str) -> Self {
        let args = args.trim();
        let mut words = args.splitn(2, char::is_whitespace);
        if words.next().is_some_and(|w| w.eq_ignore_ascii_case("budget")) {
            let rest = words.next().unwrap_or("").trim();
            // One word after `budget` is meant as a budget; more words are an objective.
            if !rest.contains(char::is_whitespace) {
                return match rest.replace(['_', ','], "").parse::<u64>() {
                    Ok(tokens) if tokens > 0 => Self::Budget(tokens),
                    _ => Self::BadBudget,
                };
            }
        }
        match args.to_ascii_lowercase().as_str() {
            "" => Self::Show,
            "pause" => Self::Pause,
            "resume" => Self::Resume,
            "clear" => Self::Clear,
            _ if args.chars().count() > MAX_OBJECTIVE => Self::TooLong,
            _ => Self::Set(args.to_owned()),
        }
    }

    /// Whether Codex starts a turn for it (its turn is the prompt's).
    pub(crate) fn starts_work(&self) -> bool {
        matches!(self, Self::Set(_) | Self::Resume)
    }
}

/// How to use the command.
pub(crate) const USAGE: &str = "Usage: `/goal` shows the goal Codex works toward; `/goal <objective>` \
sets one (Codex then works on until it is complete, paused or out of budget); `/goal budget \
<tokens>` caps the tokens Codex may spend on it; `/goal pause`, `/goal resume` and `/goal clear` \
do what they say.\n";

/// What `/goal` says when the session has no thread on the running server.
pub(crate) const NO_THREAD: &str = "**Goal**\n\nNone: this session has no conversation running in \
Codex yet. `/goal <objective>` sets one.\n";

/// A goal as Codex reports it (`ThreadGoal`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Goal {
    pub(crate) objective: String,
    /// `active`, `paused`, `blocked`, `usageLimited`, `budgetLimited` or `complete`.
    pub(crate) status: String,
    pub(crate) token_budget: Option<u64>,
    pub(crate) tokens_used: u64,
    pub(crate) time_used_seconds: u64,
    /// Unix seconds.
    pub(crate) created_at: i64,
    pub(crate) updated_at: i64,
}

impl Goal {
    /// Reads a `ThreadGoal`; `None` when it is not one.
    pub(crate) fn read(goal: &Value) -> Option<Self> {
        let int = |key: &str| goal.get(key).and_then(Value::as_i64);
        let uint = |key: &str| goal.get(key).and_then(Value::as_u64);
        Some(Self {
            objective: goal.get("objective")?.as_str()?.to_owned(),
            status: goal.get("status")?.as_str()?.to_owned(),
            token_budget: uint("tokenBudget"),
            tokens_used: uint("tokensUsed").unwrap_or(0),
            time_used_seconds: uint("timeUsedSeconds").unwrap_or(0),
            created_at: int("createdAt").unwrap_or(0),
            updated_at: int("updatedAt").unwrap_or(0),
        })
    }

    /// Whether Codex works toward it (and so starts its next turn on its own).
    pub(crate) fn active(&self) -> bool {
        self.status == "active"
    }

    /// The snapshot the editor gets in `_meta.goal` (codex-acp's shape: its status names, times
    /// in milliseconds, and the method that controls it).
    pub(crate) fn snapshot(&self) -> Value {
        let status = match self.status.as_str() {
            "usageLimited" | "budgetLimited" => "limited",
            other => other,
        };
        json!({
            "objective": self.objective.trim(),
            "status": status,
            "codexStatus": self.status,
            "tokenBudget": self.token_budget,
            "tokensUsed": self.tokens_used,
            "timeUsedSeconds": self.time_used_seconds,
            "createdAt": self.created_at.saturating_mul(1000),
            "updatedAt": self.updated_at.saturating_mul(1000),
            "controlMethod": CONTROL_METHOD,
        })
    }

    /// What the status means, in words.
    fn status_text(&self) -> &str {
        match self.status.as_str() {
            "active" => "active: Codex works toward it",
            "paused" => "paused",
            "blocked" => "blocked: Codex cannot go on without you",
            "usageLimited" => "stopped: the usage limit was reached",
            "budgetLimited" => "stopped: its token budget is used up",
            "complete" => "complete",
            other => other,
        }
    }
}

/// The `session_info_update` that shows `goal` (`None`: there is none any more); for a
/// `JetBrains` AIR client (`air`) also where the TS peer puts it, `_meta.jetbrains.air.goal`
/// (ADR 0049).
pub(crate) fn info_update(goal: Option<&Goal>, air: bool) -> SessionUpdate {
    let snapshot = goal.map_or(Value::Null, Goal::snapshot);
    let mut meta = if air {
        acplb_core::capabilities::air_meta("goal", snapshot.clone())
    } else {
        Map::new()
    };
    meta.insert("goal".into(), snapshot);
    SessionUpdate::SessionInfoUpdate(SessionInfoUpdate::new().meta(meta))
}

/// Markdown for `/goal`.
pub(crate) fn render(goal: Option<&Goal>) -> String {
    let mut out = String::from("**Goal**\n\n");
    let Some(goal) = goal else {
        out.push_str("None is set.\n\n");
        out.push_str(USAGE);
        return out;
    };
    let _ = writeln!(out, "- Objective: {}", one_line(&goal.objective));
    let _ = writeln!(out, "- Status: {}", goal.status_text());
    let used = match goal.token_budget {
        Some(budget) => format!("{} of {budget} tokens", goal.tokens_used),
        None => format!("{} tokens (no budget)", goal.tokens_used),
    };
    let _ = writeln!(out, "- Used: {used}, {} s", goal.time_used_seconds);
    out.push_str("\n`/goal budget <tokens>`, `/goal pause`, `/goal resume` and `/goal clear` change it.\n");
    out
}

/// The line the editor gets when the goal changed in a way worth saying (set, a new status,
/// cleared); `None` when only its usage moved.
pub(crate) fn change_line(before: Option<&Goal>, after: Option<&Goal>) -> Option<String> {
    match (before, after) {
        (None, None) => None,
        (Some(_), None) => Some("Goal cleared.".to_owned()),
        (Some(old), Some(new)) if old.objective == new.objective && old.status == new.status => None,
        (_, Some(new)) => Some(format!(
            "Goal {}: {}",
            new.status_text(),
            one_line(&new.objective)
        )),
    }
}

/// What a goal notification of the thread says.
pub(crate) enum News {
    Updated(Goal),
    Cleared,
}

/// The goal news a notification carries; `None` when it is no goal notification (or an
/// update without a goal acplb can read).
pub(crate) fn from_notification(method: &str, params: &Value) -> Option<News> {
    match method {
        methods::THREAD_GOAL_UPDATED => params.get("goal").and_then(Goal::read).map(News::Updated),
        methods::THREAD_GOAL_CLEARED => Some(News::Cleared),
        _ => None,
    }
}

/// The goal of `thread`, if it has one.
pub(crate) async fn get(rpc: &Rpc, thread: &str) -> Result<Option<Goal>, String> {
    let params = ThreadGoalGet {
        thread_id: thread.to_owned(),
    };
    let answer = rpc
        .request(&params)
        .await
        .map_err(|e| format!("Codex did not say what the goal is: {e}"))?;
    Ok(answer.get("goal").and_then(Goal::read))
}

/// The request that sets the goal (`objective`: a new one) or its `status`.
pub(crate) fn set_request(thread: &str, objective: Option<String>, status: &'static str) -> ThreadGoalSet {
    ThreadGoalSet {
        thread_id: thread.to_owned(),
        origin: "user",
        objective,
        status: Some(status),
        token_budget: None,
    }
}

/// Sets the token budget of the goal of `thread`, leaving its objective and status.
pub(crate) async fn budget(rpc: &Rpc, thread: &str, tokens: u64) -> Result<Goal, String> {
    let params = ThreadGoalSet {
        thread_id: thread.to_owned(),
        origin: "user",
        objective: None,
        status: None,
        token_budget: Some(tokens),
    };
    change(rpc, &params, "budget the goal").await
}

/// Pauses the goal of `thread`.
pub(crate) async fn pause(rpc: &Rpc, thread: &str) -> Result<Goal, String> {
    change(rpc, &set_request(thread, None, "paused"), "pause the goal").await
}

/// A `thread/goal/set` that changes the goal in place (`what` it does, in words); the goal
/// Codex says it is now.
async fn change(rpc: &Rpc, params: &ThreadGoalSet, what: &str) -> Result<Goal, String> {
    let answer = rpc
        .request(params)
        .await
        .map_err(|e| refused(what, &e.to_string()))?;
    answer
        .get("goal")
        .and_then(Goal::read)
        .ok_or_else(|| format!("Codex was asked to {what} but did not say what the goal is now."))
}

/// Clears the goal of `thread`; whether there was one.
pub(crate) async fn clear(rpc: &Rpc, thread: &str) -> Result<bool, String> {
    let params = ThreadGoalClear {
        thread_id: thread.to_owned(),
        origin: "user",
    };
    let answer = rpc
        .request(&params)
        .await
        .map_err(|e| refused("clear the goal", &e.to_string()))?;
    Ok(answer.get("cleared").and_then(Value::as_bool) == Some(true))
}

/// Codex's refusal, in words (its "no goal exists" said plainly).
pub(crate) fn refused(what: &str, why: &str) -> String {
    if why.contains("goals feature is disabled") {
        return format!(
            "Codex would not {what}: its goals are turned off (`[features] goals = false` in its config.toml, or `-c features.goals=false`); turn them on to use `/goal`."
        );
    }
    if why.contains("no goal exists") {
        return format!(
            "There is no goal to {}: `/goal <objective>` sets one.",
            what.trim_end_matches(" the goal")
        );
    }
    format!("Codex would not {what}: {why}")
}

/// An objective on one line, at most 200 characters.
fn one_line(text: &str) -> String {
    super::terminals::one_line(text.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn goal(status: &str) -> Goal {
        Goal::read(
            &json!({"threadId": "t", "objective": " ship it ", "status": status,
            "tokenBudget": null, "tokensUsed": 1048, "timeUsedSeconds": 3,
            "createdAt": 1_795_706_156, "updatedAt": 1_795_706_160}),
        )
        .unwrap()
    }

    #[test]
    fn arguments_parse_into_what_to_do() {
        assert_eq!(Ask::parse(""), Ask::Show);
        assert_eq!(Ask::parse("  PAUSE "), Ask::Pause);
        assert_eq!(Ask::parse("resume"), Ask::Resume);
        assert_eq!(Ask::parse("clear"), Ask::Clear);
        assert_eq!(Ask::parse(" fix the tests "), Ask::Set("fix the tests".into()));
        assert_eq!(Ask::parse("pause now"), Ask::Set("pause now".into()));
        assert_eq!(Ask::parse(&"x".repeat(MAX_OBJECTIVE + 1)), Ask::TooLong);
        assert!(Ask::Resume.starts_work() && !Ask::Pause.starts_work());
    }

    #[test]
    fn a_budget_is_a_whole_number_of_tokens_and_other_words_are_an_objective() {
        assert_eq!(Ask::parse("budget 200000"), Ask::Budget(200_000));
        assert_eq!(Ask::parse(" Budget  200_000 "), Ask::Budget(200_000));
        assert_eq!(Ask::parse("budget 1,500"), Ask::Budget(1_500));
        assert_eq!(Ask::parse("budget"), Ask::BadBudget);
        assert_eq!(Ask::parse("budget 0"), Ask::BadBudget);
        assert_eq!(Ask::parse("budget 99999999999999999999999"), Ask::BadBudget);
        assert_eq!(Ask::parse("budget -5"), Ask::BadBudget);
        assert_eq!(Ask::parse("budget lots"), Ask::BadBudget);
        assert_eq!(
            Ask::parse("budget the release notes"),
            Ask::Set("budget the release notes".into())
        );
        assert!(!Ask::Budget(1).starts_work() && !Ask::BadBudget.starts_work());
        let request = serde_json::to_value(ThreadGoalSet {
            thread_id: "t".into(),
            origin: "user",
            objective: None,
            status: None,
            token_budget: Some(7),
        })
        .unwrap();
        assert_eq!(
            request,
            json!({"threadId": "t", "origin": "user", "tokenBudget": 7})
        );
    }

    #[test]
    fn the_snapshot_has_codex_acps_shape() {
        let s = goal("budgetLimited").snapshot();
        assert_eq!(s["objective"], "ship it");
        assert_eq!(s["status"], "limited");
        assert_eq!(s["codexStatus"], "budgetLimited");
        assert_eq!(s["createdAt"], 1_795_706_156_000_i64);
        assert_eq!(s["controlMethod"], "_session/goal");
        assert!(s["tokenBudget"].is_null());
        assert_eq!(Goal::read(&json!({"status": "active"})), None);
    }

    #[test]
    fn a_line_is_said_when_the_status_or_objective_changes() {
        let (active, done) = (goal("active"), goal("complete"));
        let mut more = active.clone();
        more.tokens_used += 10;
        assert_eq!(change_line(Some(&active), Some(&more)), None);
        assert_eq!(
            change_line(Some(&active), Some(&done)).as_deref(),
            Some("Goal complete: ship it")
        );
        assert!(
            change_line(None, Some(&active))
                .unwrap()
                .starts_with("Goal active")
        );
        assert_eq!(change_line(Some(&done), None).as_deref(), Some("Goal cleared."));
        assert_eq!(change_line(None, None), None);
    }

    #[test]
    fn the_render_shows_objective_status_and_usage() {
        let text = render(Some(&goal("paused")));
        assert!(text.contains("- Objective: ship it"), "{text}");
        assert!(text.contains("- Status: paused"), "{text}");
        assert!(text.contains("1048 tokens (no budget), 3 s"), "{text}");
        assert!(render(None).contains("None is set.\n\nUsage: `/goal`"));
        assert_eq!(
            refused(
                "pause the goal",
                "cannot update goal for thread t: no goal exists"
            ),
            "There is no goal to pause: `/goal <objective>` sets one."
        );
    }
}
