//! An MCP client (rmcp's) of `acplb mcp codex` over the real binary's stdio: it records
//! progress notifications and log messages, and answers elicitations as the test says.
#![allow(
    deprecated,
    reason = "MCP logging is deprecated in rmcp, and what the server sends warnings as"
)]

use std::sync::{Arc, Mutex};

use acplb_playback::mock_model::MockConfig;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, ElicitRequestParams, ElicitResult,
    LoggingMessageNotificationParam, ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ErrorData, ServiceExt as _};
use serde_json::{Value, json};

use crate::live::Live;

/// How the client answers `elicitation/create`; `None`: it declares no elicitation support.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elicit {
    Accept,
    AcceptForSession,
    Decline,
    /// Accepts a form with `{"table": "b"}`.
    FillTable,
    /// Accepts a form with `{"a": "x"}`.
    PickX,
}

#[derive(Clone, Default)]
pub struct Recorder {
    pub elicit: Option<Elicit>,
    pub progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    pub logs: Arc<Mutex<Vec<LoggingMessageNotificationParam>>>,
    pub asked: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Recorder {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.elicit.is_some() {
            json!({"elicitation": {}})
        } else {
            json!({})
        };
        serde_json::from_value(json!({
            "protocolVersion": "2025-06-18",
            "capabilities": capabilities,
            "clientInfo": {"name": "acplb-e2e", "version": "1"},
        }))
        .unwrap()
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let v = serde_json::to_value(&request).unwrap();
        self.asked
            .lock()
            .unwrap()
            .push(v["message"].as_str().unwrap_or_default().to_owned());
        let answer = match self.elicit {
            Some(Elicit::Accept) => json!({"action": "accept", "content": {"decision": "accept"}}),
            Some(Elicit::AcceptForSession) => {
                json!({"action": "accept", "content": {"decision": "accept-for-session"}})
            }
            Some(Elicit::FillTable) => json!({"action": "accept", "content": {"table": "b"}}),
            Some(Elicit::PickX) => json!({"action": "accept", "content": {"a": "x"}}),
            _ => json!({"action": "decline"}),
        };
        Ok(serde_json::from_value(answer).unwrap())
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.logs.lock().unwrap().push(params);
    }
}

pub type Mcp = RunningService<RoleClient, Recorder>;

/// `acplb [-c …] mcp codex [extra]` with the mock model and real Codex.
pub fn start(config: MockConfig, extra: &[&str], env: &[(String, String)]) -> Live {
    let mut args = vec!["mcp", "codex"];
    args.extend(extra);
    Live::start_with(config, &args, env)
}

/// An MCP client on `live`'s acplb (its stdio, taken).
pub async fn connect(live: &mut Live, recorder: Recorder) -> Mcp {
    let stdin = live.acplb.child.stdin.take().expect("stdin not taken yet");
    let stdout = live.acplb.child.stdout.take().expect("stdout not taken yet");
    recorder.serve((stdout, stdin)).await.expect("the MCP handshake")
}

/// A tool call with these arguments (and a progress token when `progress` is set).
pub fn call(name: &str, args: Value, progress: Option<&str>) -> CallToolRequestParams {
    let mut v = serde_json::Map::new();
    v.insert("name".into(), name.into());
    v.insert("arguments".into(), args);
    let mut v = Value::Object(v);
    if let Some(token) = progress {
        v["_meta"] = json!({"progressToken": token});
    }
    serde_json::from_value(v).unwrap()
}

/// The text of a result's first content block.
pub fn text(result: &CallToolResult) -> String {
    let v = serde_json::to_value(result).unwrap();
    v["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

/// Every text of a result.
pub fn all_text(result: &CallToolResult) -> String {
    let v = serde_json::to_value(result).unwrap();
    v["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `structuredContent.threadId`.
pub fn thread_of(result: &CallToolResult) -> String {
    result.structured_content.as_ref().expect("structured content")["threadId"]
        .as_str()
        .expect("a threadId")
        .to_owned()
}

pub fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

/// Calls `name` with `args` (no progress token of ours) and returns its result.
pub async fn tool(mcp: &Mcp, name: &str, args: Value) -> CallToolResult {
    mcp.call_tool(call(name, args, None)).await.unwrap()
}
