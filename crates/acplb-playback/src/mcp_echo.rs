//! `playback mcp-echo`: a tiny MCP server over stdio (newline-delimited JSON-RPC) for recording
//! MCP scenarios. Tools: `echo` (returns its `text`, with structured content), `fail` (always
//! answers `isError: true`) and `getenv` (the value of one of its environment variables, to check
//! what a client's `env` delivered). Hand-rolled: it needs five methods and must start fast.

use std::io::{BufRead, Write};

use serde_json::{Value, json};

/// The protocol version answered when the client names none.
const DEFAULT_PROTOCOL: &str = "2025-06-18";

/// Serves requests from `input` until it ends.
pub fn serve<R: BufRead, W: Write>(input: R, mut output: W) -> std::io::Result<()> {
    for line in input.lines() {
        let line = line?;
        let Ok(request) = serde_json::from_str::<Value>(line.trim()) else {
            continue;
        };
        // Notifications (`notifications/initialized`, ...) need no answer.
        let Some(id) = request.get("id").filter(|id| !id.is_null()) else {
            continue;
        };
        let method = request["method"].as_str().unwrap_or("");
        let reply = match respond(method, &request["params"]) {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err((code, message)) => {
                json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
            }
        };
        writeln!(output, "{reply}")?;
        output.flush()?;
    }
    Ok(())
}

fn respond(method: &str, params: &Value) -> Result<Value, (i64, String)> {
    match method {
        "initialize" => Ok(json!({
            "protocolVersion": params["protocolVersion"].as_str().unwrap_or(DEFAULT_PROTOCOL),
            "capabilities": { "tools": { "listChanged": false } },
            "serverInfo": { "name": "playback-mcp-echo", "version": env!("CARGO_PKG_VERSION") },
        })),
        "tools/list" => Ok(json!({ "tools": [
            { "name": "echo", "description": "Echo the given text back.",
              "inputSchema": { "type": "object", "properties": { "text": { "type": "string" } },
                               "required": ["text"] } },
            { "name": "fail", "description": "Always fails (for error scenarios).",
              "inputSchema": { "type": "object", "properties": {} } },
            { "name": "getenv", "description": "The value of one of this server's environment variables.",
              "inputSchema": { "type": "object", "properties": { "name": { "type": "string" } },
                               "required": ["name"] } },
        ]})),
        "tools/call" => call(params["name"].as_str().unwrap_or(""), &params["arguments"]),
        "ping" => Ok(json!({})),
        "resources/list" => Ok(json!({ "resources": [] })),
        "resources/templates/list" => Ok(json!({ "resourceTemplates": [] })),
        "prompts/list" => Ok(json!({ "prompts": [] })),
        other => Err((-32601, format!("method not found: {other}"))),
    }
}

fn call(tool: &str, arguments: &Value) -> Result<Value, (i64, String)> {
    match tool {
        "echo" => {
            let text = arguments["text"].as_str().unwrap_or("");
            Ok(json!({
                "content": [{ "type": "text", "text": format!("echo: {text}") }],
                "structuredContent": { "echoed": text, "length": text.chars().count() },
                "isError": false,
            }))
        }
        "fail" => Ok(json!({
            "content": [{ "type": "text", "text": "the fail tool always fails" }],
            "isError": true,
        })),
        "getenv" => {
            let name = arguments["name"].as_str().unwrap_or("");
            let text = match std::env::var(name) {
                Ok(value) => format!("{name}={value}"),
                Err(_) => format!("{name} is not set"),
            };
            Ok(json!({ "content": [{ "type": "text", "text": text }], "isError": false }))
        }
        other => Err((-32602, format!("unknown tool `{other}`"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(input: &str) -> Vec<Value> {
        let mut out = Vec::new();
        serve(input.as_bytes(), &mut out).unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn a_session() {
        let replies = exchange(concat!(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "\nnot json\n",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fail","arguments":{}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":4,"method":"nope"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"getenv","arguments":{"name":"PATH"}}}"#,
            "\n",
        ));
        assert_eq!(replies.len(), 6);
        assert!(
            replies[5]["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .starts_with("PATH=/")
        );
        assert_eq!(replies[0]["result"]["protocolVersion"], "2025-03-26");
        assert_eq!(replies[1]["result"]["tools"][0]["name"], "echo");
        assert_eq!(replies[2]["result"]["content"][0]["text"], "echo: hi");
        assert_eq!(replies[2]["result"]["structuredContent"]["length"], 2);
        assert_eq!(replies[3]["result"]["isError"], true);
        assert_eq!(replies[4]["error"]["code"], -32601);
    }
}
