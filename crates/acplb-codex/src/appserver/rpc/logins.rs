//! The ends of sign-ins: `account/login/completed` (Codex's own account) and
//! `mcpServer/oauthLogin/completed` (an MCP server's OAuth) are about no session's turn, so the
//! server's reader keeps each here until the login it names is asked for ([`Rpc::login_ended`]).

use std::cell::RefCell;

use serde_json::Value;
use tokio::sync::Notify;

use super::{Gone, Rpc};

/// How many ended sign-ins are kept that nobody asked for (a server that sends endless ones
/// cannot grow acplb's memory).
const KEPT: usize = 16;

/// Sign-ins that ended, oldest first.
#[derive(Debug, Default)]
pub(super) struct Logins {
    ended: RefCell<Vec<Value>>,
    news: Notify,
}

impl Logins {
    /// A sign-in ended (the params of `account/login/completed`).
    pub(super) fn ended(&self, params: Value) {
        let mut ended = self.ended.borrow_mut();
        if ended.len() >= KEPT {
            ended.remove(0);
        }
        ended.push(params);
        drop(ended);
        self.news.notify_waiters();
    }

    /// Wakes whoever waits: the server is gone.
    pub(super) fn closed(&self) {
        self.news.notify_waiters();
    }

    fn take(&self, login_id: &str) -> Option<Value> {
        let mut ended = self.ended.borrow_mut();
        let at = ended
            .iter()
            .position(|p| p.get("loginId").and_then(Value::as_str) == Some(login_id))?;
        Some(ended.remove(at))
    }
}

/// How a sign-in ended, as Codex said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LoginEnd {
    /// Signed in.
    Success,
    /// It failed (expired, cancelled, refused): Codex's words.
    Failure(String),
}

impl Rpc {
    /// Waits for the end of sign-in `login_id` (cancel-safe); `Err` when the server went away
    /// first.
    pub(crate) async fn login_ended(&self, login_id: &str) -> Result<LoginEnd, Gone> {
        loop {
            // Created before the check, so an end that comes between the two still wakes it.
            let news = self.logins.news.notified();
            if let Some(params) = self.logins.take(login_id) {
                if params.get("success").and_then(Value::as_bool) == Some(true) {
                    return Ok(LoginEnd::Success);
                }
                let why = params
                    .get("error")
                    .and_then(Value::as_str)
                    .unwrap_or("Codex gave no reason");
                return Ok(LoginEnd::Failure(self.redact(why)));
            }
            if let Some(gone) = self.gone() {
                return Err(gone);
            }
            news.await;
        }
    }
}
