//! PLACEHOLDER (replaced by the real decoder): app-server notifications → ACP updates.

use std::collections::BTreeMap;
use std::path::PathBuf;

use agent_client_protocol::v1::schema::{ContentBlock, ContentChunk, SessionUpdate, ToolCallStatus};
use serde_json::Value;

use crate::decode::Totals;

/// How the decoder renders.
#[derive(Debug, Clone)]
pub struct AppDecoderOptions {
    /// Session cwd.
    pub cwd: PathBuf,
    /// Notices shown.
    pub notices: bool,
    /// Output bound.
    pub max_output_bytes: usize,
    /// Id prefix.
    pub id_prefix: String,
}

/// The decoder.
#[derive(Debug)]
pub struct AppDecoder {
    unknown: BTreeMap<String, u64>,
}

/// A turn-level fact.
#[derive(Debug)]
pub enum AppSignal {
    /// turn/started
    TurnStarted {
        /// id
        turn_id: String,
    },
    /// turn/completed
    TurnCompleted {
        /// id
        turn_id: String,
        /// how
        end: TurnEnd,
    },
    /// usage totals
    Totals(Totals),
    /// thread name
    ThreadName(String),
}

/// How a turn ended.
#[derive(Debug)]
pub enum TurnEnd {
    /// ok
    Completed,
    /// interrupted
    Interrupted,
    /// failed
    Failed {
        /// why
        message: String,
        /// 401
        auth_required: bool,
    },
}

impl AppDecoder {
    /// New.
    pub fn new(_options: AppDecoderOptions) -> Self {
        Self {
            unknown: BTreeMap::new(),
        }
    }

    /// One notification.
    pub fn notification(
        &mut self,
        method: &str,
        params: &Value,
        out: &mut Vec<SessionUpdate>,
    ) -> Option<AppSignal> {
        match method {
            "item/agentMessage/delta" => {
                let delta = params.get("delta").and_then(Value::as_str).unwrap_or_default();
                out.push(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                    ContentBlock::from(delta.to_owned()),
                )));
                None
            }
            "turn/completed" => {
                let turn = params.get("turn")?;
                let id = turn
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let end = match turn.get("status").and_then(Value::as_str) {
                    Some("completed") => TurnEnd::Completed,
                    Some("interrupted") => TurnEnd::Interrupted,
                    _ => TurnEnd::Failed {
                        message: turn
                            .pointer("/error/message")
                            .and_then(Value::as_str)
                            .unwrap_or("failed")
                            .to_owned(),
                        auth_required: false,
                    },
                };
                Some(AppSignal::TurnCompleted { turn_id: id, end })
            }
            other => {
                *self.unknown.entry(other.to_owned()).or_default() += 1;
                None
            }
        }
    }

    /// Close open.
    pub fn close_open_tool_calls_because(
        &mut self,
        _status: ToolCallStatus,
        _reason: Option<&str>,
        _out: &mut Vec<SessionUpdate>,
    ) {
    }

    /// Unknown.
    pub fn unknown_counts(&self) -> BTreeMap<String, u64> {
        self.unknown.clone()
    }
}
