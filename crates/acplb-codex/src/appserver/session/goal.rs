//! A session's Codex goal (ADR 0045): `/goal`, `/goal budget`, `/goal pause` and `/goal clear`
//! answered here; in a turn, the goal Codex reports shown to the editor as it changes, and the
//! next turn Codex starts on its own while the goal stays active followed as part of the prompt;
//! a cancelled prompt pauses the active goal, so Codex does not take it up again unasked.

use std::time::Duration;

use tokio::time::Instant;

use super::super::commands::{self, Slash};
use super::super::goals::{self, Ask, Goal, News};
use super::super::rpc::RpcFailure;
use super::finish::Start;
use super::turn::TurnRun;
use super::{AppSession, ContentBlock, ContentChunk, ProviderError, SessionUpdate, Value};

/// How long a prompt waits for the turn Codex starts for a goal it set or resumed (Codex
/// starts it at once: tens of milliseconds).
pub(super) const GOAL_START_WAIT: Duration = Duration::from_secs(10);

/// How long a prompt whose turn ended with the goal active waits for Codex's next turn (Codex
/// starts it within tens of milliseconds; codex-acp waits a second).
const NEXT_TURN_WAIT: Duration = Duration::from_secs(2);

/// How long a cancel waits for Codex to pause the goal.
const PAUSE_WAIT: Duration = Duration::from_secs(1);

impl AppSession {
    /// `/goal`, `/goal budget`, `/goal pause`, `/goal clear` (and a too long objective or a
    /// budget that is no number), answered from the
    /// server for this session's thread; what Codex refuses (pausing no goal) fails the prompt.
    pub(super) async fn goal_here(
        &mut self,
        ask: &Ask,
    ) -> Result<(String, Option<SessionUpdate>), ProviderError> {
        if *ask == Ask::TooLong {
            return Err(ProviderError::Prepare(format!(
                "the objective is too long: at most {} characters",
                goals::MAX_OBJECTIVE
            )));
        }
        if *ask == Ask::BadBudget {
            return Err(ProviderError::Prepare(
                "`/goal budget` takes a whole number of tokens above zero, e.g. `/goal budget 200000`"
                    .to_owned(),
            ));
        }
        let conn = self.server.connect().await?;
        let Some(thread) = self.thread_on(&conn) else {
            return match ask {
                Ask::Pause => Err(ProviderError::Prepare(goals::refused(
                    "pause the goal",
                    "no goal exists",
                ))),
                Ask::Budget(_) => Err(ProviderError::Prepare(goals::refused(
                    "budget the goal",
                    "no goal exists",
                ))),
                Ask::Clear => Ok(("There was no goal to clear.\n".to_owned(), None)),
                _ => Ok((goals::NO_THREAD.to_owned(), None)),
            };
        };
        let rpc = &conn.rpc;
        let (now, text) = match ask {
            Ask::Clear => {
                let cleared = goals::clear(rpc, &thread).await.map_err(ProviderError::Prepare)?;
                let text = if cleared {
                    "Goal cleared.\n"
                } else {
                    "There was no goal to clear.\n"
                };
                (None, text.to_owned())
            }
            Ask::Pause => {
                let now = goals::pause(rpc, &thread).await.map_err(ProviderError::Prepare)?;
                let text = goals::render(Some(&now));
                (Some(now), text)
            }
            Ask::Budget(tokens) => {
                let now = goals::budget(rpc, &thread, *tokens)
                    .await
                    .map_err(ProviderError::Prepare)?;
                let text = goals::render(Some(&now));
                (Some(now), text)
            }
            _ => {
                let now = goals::get(rpc, &thread).await.map_err(ProviderError::Prepare)?;
                let text = goals::render(now.as_ref());
                (now, text)
            }
        };
        let changed = self.goal != now;
        self.goal = now;
        let air = self.setup.client_air.is_some();
        Ok((text, changed.then(|| goals::info_update(self.goal.as_ref(), air))))
    }

    /// The error for a turn's start Codex refused: a goal's in words (its goals off, no goal
    /// to resume), any other as [`AppSession::failed`] says.
    pub(super) fn start_failed(&self, start: &Start, failure: &RpcFailure) -> ProviderError {
        match (start, failure) {
            (Start::Goal(set), RpcFailure::Error { message, .. }) => {
                let what = if set.objective.is_some() {
                    "set the goal"
                } else {
                    "resume the goal"
                };
                ProviderError::Prepare(goals::refused(what, message))
            }
            _ => self.failed(failure),
        }
    }
}

impl TurnRun<'_> {
    /// Takes a goal notification of the thread (whatever turn it names): the editor sees the
    /// new snapshot, and a line when its status changed; `false` when it is not about a goal.
    pub(super) fn take_goal(&mut self, method: &str, params: &Value) -> bool {
        match goals::from_notification(method, params) {
            Some(News::Updated(goal)) => self.see_goal(Some(goal)),
            Some(News::Cleared) => self.see_goal(None),
            None => return false,
        }
        true
    }

    /// The goal is now `now`.
    pub(super) fn see_goal(&mut self, now: Option<Goal>) {
        if self.goal == now {
            return;
        }
        let line = goals::change_line(self.goal.as_ref(), now.as_ref());
        let air = self.decoder.options().air.is_some();
        self.out.push(goals::info_update(now.as_ref(), air));
        if let Some(line) = line {
            self.out.push(self.tell(&line));
        }
        self.goal = now;
    }

    /// Codex answered the request that starts the turn: its turn's id; for a
    /// `thread/goal/set`, the goal (shown), and the turn Codex starts for it awaited (bounded).
    pub(super) fn started(&mut self, start: &Start, result: &Value) {
        self.turn_id = result
            .pointer("/turn/id")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if matches!(start, Start::Goal(_)) {
            self.see_goal(result.get("goal").and_then(Goal::read));
            self.next_turn_by = Some(Instant::now() + GOAL_START_WAIT);
        }
    }

    /// A turn completed: whether the prompt goes on with the turn Codex starts next (its goal
    /// is still active), waiting for it a little.
    pub(super) fn goes_on(&mut self) -> bool {
        if !self.goal.as_ref().is_some_and(Goal::active) {
            return false;
        }
        self.turn_id = None;
        self.next_turn_by = Some(Instant::now() + NEXT_TURN_WAIT);
        true
    }

    /// A prompt sent into the running turn: `/goal pause`, `/goal clear` and `/goal budget` act on the goal at
    /// once (the turn then ends as Codex ends it, and no next one is awaited); anything else is
    /// steered into the turn.
    pub(super) async fn steered(&mut self, text: &str) {
        let rpc = self.rpc;
        let done = match commands::parse(text) {
            Some(Slash::Goal(Ask::Pause)) => goals::pause(rpc, self.thread_id).await.map(Some),
            Some(Slash::Goal(Ask::Clear)) => goals::clear(rpc, self.thread_id).await.map(|_| None),
            Some(Slash::Goal(Ask::Budget(tokens))) => {
                goals::budget(rpc, self.thread_id, tokens).await.map(Some)
            }
            _ => {
                self.steer(text).await;
                return;
            }
        };
        match done {
            Ok(now) => self.see_goal(now),
            Err(why) => {
                let line = self.tell(&why);
                self.out.push(line);
            }
        }
    }

    /// After a cancel: an active goal is paused, so that Codex does not take it up again after
    /// the next prompt.
    pub(super) async fn pause_goal(&mut self) {
        if !self.goal.as_ref().is_some_and(Goal::active) {
            return;
        }
        match tokio::time::timeout(PAUSE_WAIT, goals::pause(self.rpc, self.thread_id)).await {
            Ok(Ok(goal)) => {
                self.see_goal(Some(goal));
                let line = self
                    .tell("The prompt was cancelled, so the goal is paused; `/goal resume` goes on with it.");
                self.out.push(line);
            }
            Ok(Err(why)) => tracing::warn!(%why, "pausing the goal after a cancel failed"),
            Err(_) => tracing::warn!("codex did not pause the goal after a cancel in time"),
        }
    }

    /// A line for the user: a notice where the client shows them, else agent text.
    fn tell(&self, text: &str) -> SessionUpdate {
        use agent_client_protocol::v1::schema::{Notice, NoticeSeverity};
        if self.notices {
            SessionUpdate::Notice(Notice::new(NoticeSeverity::Info, text))
        } else {
            SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(format!("\n\n{text}\n\n"))))
        }
    }
}

/// Resolves at `at`, or never.
pub(super) async fn until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
