//! The ATM MCP server over an in-memory pipe, driven with raw JSON-RPC lines.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use acplb_atm::audit::AuditLog;
use acplb_atm::mcp::{AtmServer, serve_io};
use acplb_atm::{MailBackend, MailStore};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream, Lines};

use crate::util::{empty_root, inbox, records, store};

/// A writer that fails every write once `fail` is set, counting the failures.
struct Flaky {
    inner: DuplexStream,
    fail: Arc<AtomicBool>,
    failures: Arc<AtomicUsize>,
}

impl AsyncWrite for Flaky {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if self.fail.load(Ordering::SeqCst) {
            self.failures.fetch_add(1, Ordering::SeqCst);
            return Poll::Ready(Err(std::io::Error::other("stdout is gone")));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

struct Client {
    write: DuplexStream,
    lines: Lines<BufReader<DuplexStream>>,
    fail: Arc<AtomicBool>,
    failures: Arc<AtomicUsize>,
}

impl Client {
    fn start(server: AtmServer) -> Self {
        let (write, server_read) = tokio::io::duplex(1 << 16);
        let (server_write, read) = tokio::io::duplex(1 << 16);
        let fail = Arc::new(AtomicBool::new(false));
        let failures = Arc::new(AtomicUsize::new(0));
        let flaky = Flaky {
            inner: server_write,
            fail: Arc::clone(&fail),
            failures: Arc::clone(&failures),
        };
        tokio::spawn(serve_io(server, server_read, flaky));
        Self {
            write,
            lines: BufReader::new(read).lines(),
            fail,
            failures,
        }
    }

    async fn send(&mut self, msg: Value) {
        let line = format!("{msg}\n");
        self.write.write_all(line.as_bytes()).await.unwrap();
    }

    /// Sends a request and returns its response, skipping notifications.
    async fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    }

    async fn tool(&mut self, id: u64, name: &str, args: Value) -> Value {
        let resp = self
            .call(id, "tools/call", json!({"name": name, "arguments": args}))
            .await;
        let result = &resp["result"];
        assert!(result.is_object(), "{resp}");
        let text = result["content"][0]["text"].as_str().unwrap();
        let body = serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()));
        json!({"is_error": result["isError"] == true, "body": body})
    }

    async fn initialize(&mut self) {
        let init = self
            .call(
                0,
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
            )
            .await;
        assert_eq!(init["result"]["serverInfo"]["name"], "acplb-atm", "{init}");
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }
}

async fn wait_until(mut f: impl FnMut() -> bool) -> bool {
    for _ in 0..200 {
        if f() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

fn server(root: &std::path::Path, audit: Option<AuditLog>) -> AtmServer {
    let backend: Arc<dyn MailBackend> = Arc::new(MailStore::new(root, "codex", "demo").unwrap());
    AtmServer::new(backend, "codex", "demo", audit)
}

#[tokio::test]
async fn tools_send_read_and_commit_after_the_response_is_written() {
    let root = empty_root();
    let alice = store(root.path(), "alice");
    alice.send("codex", "first", None).unwrap();
    alice.send("codex", "second", Some("2nd")).unwrap();
    let audit_path = root.path().join("audit.jsonl");
    let mut client = Client::start(server(root.path(), Some(AuditLog::open(&audit_path).unwrap())));
    client.initialize().await;

    let tools = client.call(1, "tools/list", json!({})).await;
    let mut names: Vec<_> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["atm_broadcast", "atm_pending_count", "atm_read", "atm_send"]
    );
    let send_schema = &tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "atm_send")
        .unwrap()["inputSchema"];
    let props: Vec<_> = send_schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(props, ["to", "message", "summary"], "no sender parameter");

    assert_eq!(
        client.tool(2, "atm_pending_count", json!({})).await["body"],
        json!({"unread": 2})
    );
    let read = client.tool(3, "atm_read", json!({"max_messages": 5})).await;
    let texts: Vec<_> = read["body"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["message"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["first", "second"]);
    let own = store(root.path(), "codex");
    assert!(
        wait_until(|| own.pending_count().unwrap() == 0).await,
        "receipt was not committed"
    );

    let sent = client
        .tool(4, "atm_send", json!({"to": "bob", "message": "hi bob"}))
        .await;
    assert!(!sent["is_error"].as_bool().unwrap());
    let rec = records(&inbox(root.path(), "bob")).pop().unwrap();
    assert_eq!(
        (rec["from"].as_str(), rec["text"].as_str()),
        (Some("codex"), Some("hi bob"))
    );
    assert_eq!(sent["body"]["message_id"], rec["metadata"]["atm"]["messageId"]);

    let err = client
        .tool(5, "atm_send", json!({"to": "..", "message": "x"}))
        .await;
    assert_eq!(err["is_error"], true);

    let audit = std::fs::read_to_string(&audit_path).unwrap();
    let events: Vec<String> = audit
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["event_type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(events, ["atm_pending_count", "atm_read", "atm_send", "atm_send"]);
}

#[tokio::test]
async fn unwritten_read_response_leaves_mail_unread() {
    let root = empty_root();
    store(root.path(), "alice")
        .send("codex", "keep me", None)
        .unwrap();
    let mut client = Client::start(server(root.path(), None));
    client.initialize().await;
    client.fail.store(true, Ordering::SeqCst);
    client
        .send(json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "atm_read", "arguments": {}}}))
        .await;
    assert!(
        wait_until(|| client.failures.load(Ordering::SeqCst) > 0).await,
        "the response was never written"
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    let own = store(root.path(), "codex");
    assert_eq!(
        own.pending_count().unwrap(),
        1,
        "a response that was not written must not mark mail read"
    );
    assert!(records(&inbox(root.path(), "codex"))[0]["read"] == false);
}
