//! A minimal blocking HTTP/1.1 client and SSE parser, so the tests need no runtime and no HTTP crate.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::Value;

/// A parsed response.
#[derive(Debug)]
pub(crate) struct HttpResponse {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
    /// Whether the body was chunked and ended with the terminating zero-length chunk.
    pub(crate) chunked_complete: bool,
}

impl HttpResponse {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {}", self.text()))
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The SSE events of the body; checks that each `event:` name equals the data's `type`.
    pub(crate) fn sse_events(&self) -> Vec<Value> {
        let text = self.text();
        text.split_terminator("\n\n")
            .map(|frame| {
                let mut lines = frame.lines();
                let name = lines
                    .next()
                    .and_then(|l| l.strip_prefix("event: "))
                    .expect("an event: line");
                let data = lines
                    .next()
                    .and_then(|l| l.strip_prefix("data: "))
                    .expect("a data: line");
                assert_eq!(
                    lines.next(),
                    None,
                    "one event and one data line per frame: {frame:?}"
                );
                let value: Value = serde_json::from_str(data).expect("data is JSON");
                assert_eq!(value["type"], name, "event name and data type agree");
                value
            })
            .collect()
    }
}

/// Sends one request with `Connection: close` and reads the whole response.
pub(crate) fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> HttpResponse {
    let mut stream = TcpStream::connect(addr).expect("connect to the mock");
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    let mut message = head.into_bytes();
    message.extend_from_slice(body);
    // The server may answer (413) and close before reading everything: a failed write, or a reset
    // after the response arrived, is then expected.
    let written = stream.write_all(&message);
    let mut raw = Vec::new();
    if let Err(error) = stream.read_to_end(&mut raw) {
        assert!(!raw.is_empty(), "no response (write: {written:?}, read: {error})");
    }
    parse_response(&raw)
}

/// POSTs a JSON body to `/v1/responses` with Codex-like headers.
pub(crate) fn post_responses(addr: SocketAddr, body: &Value) -> HttpResponse {
    let headers = [
        ("Content-Type", "application/json"),
        ("Authorization", "Bearer dummy"),
        ("originator", "codex_exec"),
        ("session-id", "s-1"),
        ("x-not-logged", "x"),
    ];
    request(
        addr,
        "POST",
        "/v1/responses",
        &headers,
        body.to_string().as_bytes(),
    )
}

/// A request body whose input is these user prompts, then `extra` items.
pub(crate) fn body_with(prompts: &[&str], extra: &[Value]) -> Value {
    let mut input: Vec<Value> = prompts
        .iter()
        .map(|p| serde_json::json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": p}]}))
        .collect();
    input.extend_from_slice(extra);
    serde_json::json!({"model": "gpt-5.5", "stream": true, "input": input})
}

fn parse_response(raw: &[u8]) -> HttpResponse {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a header block");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap();
    let status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .map(|l| {
            let (n, v) = l.split_once(':').unwrap();
            (n.trim().to_owned(), v.trim().to_owned())
        })
        .collect();
    let rest = &raw[split + 4..];
    let chunked = headers
        .iter()
        .any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let (body, chunked_complete) = if chunked {
        dechunk(rest)
    } else {
        (rest.to_vec(), false)
    };
    HttpResponse {
        status,
        headers,
        body,
        chunked_complete,
    }
}

fn dechunk(mut rest: &[u8]) -> (Vec<u8>, bool) {
    let mut body = Vec::new();
    loop {
        let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") else {
            return (body, false);
        };
        let size = usize::from_str_radix(std::str::from_utf8(&rest[..eol]).unwrap().trim(), 16).unwrap();
        rest = &rest[eol + 2..];
        if size == 0 {
            return (body, true);
        }
        body.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}
