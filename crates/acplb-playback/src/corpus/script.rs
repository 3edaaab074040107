//! Building the client side of a corpus scenario: JSON-RPC messages with placeholders, each
//! request waiting for the previous one's response, as an editor would send them.

use serde_json::{Value, json};

use crate::scenario::{Action, After, Step};

/// The MCP server the corpus registers: playback's own `mcp-echo` (the mock model's `mcp`
/// scenarios call server `mockmcp`).
pub(crate) fn mcp_server() -> Value {
    json!({ "name": "mockmcp", "command": "<playback>", "args": ["mcp-echo"], "env": [] })
}

/// A client script under construction.
#[derive(Debug)]
pub(crate) struct Script {
    steps: Vec<Step>,
    next_id: u64,
    last_request: Option<u64>,
}

impl Script {
    /// `initialize`, then `session/new` in `<cwd>` with `mcp_servers`.
    pub(crate) fn new_session(mcp_servers: &[Value]) -> Script {
        let script = Script {
            steps: Vec::new(),
            next_id: 0,
            last_request: None,
        };
        script
            .request(
                "initialize",
                json!({
                    "protocolVersion": 1,
                    "clientCapabilities": { "fs": { "readTextFile": false, "writeTextFile": false }, "terminal": false },
                    "clientInfo": { "name": "playback-drive", "version": env!("CARGO_PKG_VERSION") },
                }),
            )
            .request(
                "session/new",
                json!({ "cwd": "<cwd>", "mcpServers": mcp_servers }),
            )
    }

    /// A request sent once the previous request's response arrived.
    pub(crate) fn request(mut self, method: &str, params: Value) -> Script {
        let after = self.last_request.map(|id| After::Response(json!(id)));
        let id = self.push(after, method, params);
        self.last_request = Some(id);
        self
    }

    /// A request sent right after the previous message, without waiting (a queued prompt).
    pub(crate) fn request_now(mut self, method: &str, params: Value) -> Script {
        let after = self.steps.last().and_then(|s| s.after.clone());
        let id = self.push(after, method, params);
        self.last_request = Some(id);
        self
    }

    /// A request sent once `after` holds, without waiting for earlier responses (a prompt
    /// steered into a running turn).
    pub(crate) fn request_after(mut self, after: After, method: &str, params: Value) -> Script {
        let id = self.push(Some(after), method, params);
        self.last_request = Some(id);
        self
    }

    /// A notification sent once `after` holds (e.g. `session/cancel`).
    pub(crate) fn notify_after(mut self, after: After, method: &str, params: Value) -> Script {
        let mut message = json!({ "jsonrpc": "2.0", "method": method });
        message["params"] = params;
        self.steps.push(Step {
            after: Some(after),
            action: Action::Send(message.to_string()),
            line: 0,
        });
        self
    }

    /// A text prompt in the first session.
    pub(crate) fn prompt(self, text: &str) -> Script {
        self.request("session/prompt", prompt_params(text))
    }

    /// A text prompt sent without waiting for the previous response.
    pub(crate) fn prompt_now(self, text: &str) -> Script {
        self.request_now("session/prompt", prompt_params(text))
    }

    /// `session/set_mode`.
    pub(crate) fn set_mode(self, mode: &str) -> Script {
        self.request(
            "session/set_mode",
            json!({ "sessionId": "<session-1>", "modeId": mode }),
        )
    }

    /// `session/cancel` as soon as a tool call titled `title` appears (the prompt goes on).
    pub(crate) fn cancel_after_tool_call(mut self, title: &str) -> Script {
        let message = json!({ "jsonrpc": "2.0", "method": "session/cancel",
            "params": { "sessionId": "<session-1>" } });
        self.steps.push(Step {
            after: Some(After::ToolCall(title.to_owned())),
            action: Action::Send(message.to_string()),
            line: 0,
        });
        self
    }

    /// Disconnects once the last request was answered.
    pub(crate) fn close(mut self) -> Vec<Step> {
        self.steps.push(Step {
            after: self.last_request.map(|id| After::Response(json!(id))),
            action: Action::Close,
            line: 0,
        });
        self.steps
    }

    fn push(&mut self, after: Option<After>, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({ "jsonrpc": "2.0", "id": id, "method": method });
        message["params"] = params;
        self.steps.push(Step {
            after,
            action: Action::Send(message.to_string()),
            line: 0,
        });
        id
    }
}

fn prompt_params(text: &str) -> Value {
    json!({ "sessionId": "<session-1>", "prompt": [{ "type": "text", "text": text }] })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_wait_for_the_previous_response() {
        let steps = Script::new_session(&[]).prompt("hi").close();
        let afters: Vec<Option<After>> = steps.iter().map(|s| s.after.clone()).collect();
        assert_eq!(
            afters,
            [
                None,
                Some(After::Response(json!(0))),
                Some(After::Response(json!(1))),
                Some(After::Response(json!(2)))
            ]
        );
        let Action::Send(prompt) = &steps[2].action else {
            panic!()
        };
        assert!(prompt.contains(r#""sessionId":"<session-1>""#), "{prompt}");
    }
}
