//! The editor's side of the wire: JSON-RPC lines on stdin and stdout, hardened.
//!
//! The SDK's own `Stdio` ends the whole connection on one invalid UTF-8 byte and buffers a line
//! of any length. Here stdin goes through [`BoundedLines`]: a line that is not UTF-8, or longer
//! than the limit, is answered with a JSON-RPC parse error (-32700) and skipped, and the next
//! line is served as usual. Stdout is written by one task that also counts the
//! `session/update` notifications it has written, for [`OutputFlow`], and puts the reason of
//! the SDK's own errors into their message (`explain.rs`).

use std::pin::Pin;

use agent_client_protocol::Lines;
use futures::channel::mpsc;
use futures::{Sink, SinkExt as _, Stream, StreamExt as _};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt as _};
use tokio::task::JoinHandle;
use tokio_util::codec::FramedRead;

use super::flow::{DEFAULT_BYTES_IN_FLIGHT, DEFAULT_UPDATES_IN_FLIGHT, OutputFlow};
use super::lines::{BoundedLines, Frame};

/// Longest line accepted from the client: a prompt with large images fits with room to spare.
pub const DEFAULT_MAX_INPUT_LINE: usize = 64 * 1024 * 1024;

/// How the stdio wire is bounded.
#[derive(Debug, Clone, Copy)]
pub struct WireLimits {
    /// Longest accepted input line, in bytes.
    pub max_line_bytes: usize,
    /// `session/update` notifications and permission requests that may wait for the client
    /// before providers pause.
    pub updates_in_flight: i64,
    /// Bytes of those that may wait for the client before providers pause.
    pub bytes_in_flight: i64,
}

impl Default for WireLimits {
    fn default() -> Self {
        Self {
            max_line_bytes: DEFAULT_MAX_INPUT_LINE,
            updates_in_flight: DEFAULT_UPDATES_IN_FLIGHT,
            bytes_in_flight: DEFAULT_BYTES_IN_FLIGHT,
        }
    }
}

/// Lines the SDK writes.
pub type OutgoingLines = Pin<Box<dyn Sink<String, Error = std::io::Error> + Send>>;
/// Lines the SDK reads.
pub type IncomingLines = Pin<Box<dyn Stream<Item = std::io::Result<String>> + Send>>;

/// A connected wire: lines for the SDK, the flow gate for session sinks, and the writer task.
pub struct Wire {
    outgoing: OutgoingLines,
    incoming: IncomingLines,
    flow: OutputFlow,
    writer: JoinHandle<()>,
}

impl std::fmt::Debug for Wire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wire")
            .field("flow", &self.flow)
            .finish_non_exhaustive()
    }
}

/// What a [`Wire`] splits into.
#[allow(
    missing_debug_implementations,
    reason = "the SDK's line transport has no Debug"
)]
pub struct WireParts {
    /// Hand this to `Server::serve`.
    pub transport: Lines<OutgoingLines, IncomingLines>,
    /// Hand this to the server options, so providers wait for a slow client.
    pub flow: OutputFlow,
    /// The stdout writer: it ends once the transport is dropped and every line it was given is
    /// written, so await it (with a time limit) before exiting.
    pub writer: JoinHandle<()>,
}

/// What the JSON-RPC method names of counted messages look like on an outgoing line: the
/// updates and permission requests that session sinks count for [`OutputFlow`].
const COUNTED_METHODS: [&str; 2] = [
    r#""method":"session/update""#,
    r#""method":"session/request_permission""#,
];

impl Wire {
    /// The process's stdin and stdout. Must be called inside a tokio runtime.
    pub fn stdio(limits: WireLimits) -> Self {
        Self::new(tokio::io::stdin(), tokio::io::stdout(), limits)
    }

    /// Any byte streams (tests use in-memory pipes).
    pub fn new(
        input: impl AsyncRead + Send + 'static,
        output: impl AsyncWrite + Send + Unpin + 'static,
        limits: WireLimits,
    ) -> Self {
        let flow = OutputFlow::bounded(limits.updates_in_flight, limits.bytes_in_flight);
        // Small: a backlog here waits for stdout, and the SDK's own queue is behind it.
        let (to_writer, from_sdk) = mpsc::channel::<String>(16);
        let (replies_tx, replies) = mpsc::channel::<String>(64);
        let writer = tokio::spawn(write_lines(output, from_sdk, replies, flow.clone()));
        let outgoing: OutgoingLines = Box::pin(
            to_writer
                .sink_map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdout is closed")),
        );
        let incoming: IncomingLines = Box::pin(read_lines(input, limits.max_line_bytes, replies_tx));
        Self {
            outgoing,
            incoming,
            flow,
            writer,
        }
    }

    /// The SDK transport, the flow gate and the writer task.
    pub fn into_parts(self) -> WireParts {
        WireParts {
            transport: Lines::new(self.outgoing, self.incoming),
            flow: self.flow,
            writer: self.writer,
        }
    }
}

/// Input lines for the SDK; bad lines are answered through `replies` and left out.
fn read_lines(
    input: impl AsyncRead + Send + 'static,
    max: usize,
    mut replies: mpsc::Sender<String>,
) -> impl Stream<Item = std::io::Result<String>> + Send {
    let mut line_no = 0u64;
    FramedRead::new(input, BoundedLines::new(max)).filter_map(move |frame| {
        line_no += 1;
        let refusal = match frame {
            Ok(Frame::Line(line)) => return futures::future::ready(Some(Ok(line))),
            Err(e) => return futures::future::ready(Some(Err(e))),
            Ok(Frame::NotUtf8 { valid_up_to, .. }) => format!(
                "Parse error: input line {line_no} is not valid UTF-8 (first invalid byte at offset \
                 {valid_up_to}); the line was ignored"
            ),
            Ok(Frame::Oversized { bytes }) => format!(
                "Parse error: input line {line_no} has {bytes} bytes, more than acplb accepts \
                 ({max} bytes); the line was ignored"
            ),
        };
        tracing::warn!("{refusal}");
        let reply = serde_json::json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": { "code": -32700, "message": refusal },
        });
        // A client that floods bad lines and reads nothing loses some of these replies, not memory.
        if replies.try_send(reply.to_string()).is_err() {
            tracing::debug!("dropping a parse-error reply: the client is not reading");
        }
        futures::future::ready(None)
    })
}

/// The most bytes gathered into one write.
const BATCH_BYTES: usize = 64 * 1024;

/// Writes every line (the SDK's and our own parse-error replies) to `out`, counting updates
/// and permission requests.
///
/// Lines that are already waiting when a write starts go out together in one write (at most
/// [`BATCH_BYTES`]): a write to stdout is a trip through the blocking pool, so a burst (a
/// session's history replayed, a flood of deltas) costs one trip per batch, not per line,
/// while a lone line goes out at once.
async fn write_lines(
    mut out: impl AsyncWrite + Unpin,
    mut from_sdk: mpsc::Receiver<String>,
    mut replies: mpsc::Receiver<String>,
    flow: OutputFlow,
) {
    let mut batch: Vec<u8> = Vec::with_capacity(8 * 1024);
    let mut open = true;
    while open {
        let line = tokio::select! {
            biased;
            // Cancel-safe: a channel receiver loses nothing when its `next` is dropped.
            Some(line) = replies.next() => line,
            // Cancel-safe, as above.
            line = from_sdk.next() => match line {
                Some(line) => line,
                None => break,
            },
        };
        batch.clear();
        let mut counted = Counted::default();
        counted.add(add_line(&mut batch, &line));
        while batch.len() < BATCH_BYTES {
            let more = match replies.try_recv() {
                Ok(line) => line,
                Err(_) => match from_sdk.try_recv() {
                    Ok(line) => line,
                    Err(mpsc::TryRecvError::Closed) => {
                        open = false;
                        break;
                    }
                    Err(mpsc::TryRecvError::Empty) => break,
                },
            };
            counted.add(add_line(&mut batch, &more));
        }
        let written = async {
            out.write_all(&batch).await?;
            out.flush().await
        };
        if let Err(e) = written.await {
            tracing::debug!(error = %e, "stdout closed; the client is gone");
            break;
        }
        flow.written(counted.messages, counted.bytes);
    }
    // Nothing will be written any more: no provider may wait for it.
    flow.close();
}

/// Counted messages in one batch, and their bytes.
#[derive(Debug, Default)]
struct Counted {
    messages: usize,
    bytes: usize,
}

impl Counted {
    fn add(&mut self, line: Option<usize>) {
        if let Some(bytes) = line {
            self.messages += 1;
            self.bytes += bytes;
        }
    }
}

/// Adds one line (its SDK error explained) to `batch`; its length if it is a counted message.
fn add_line(batch: &mut Vec<u8>, line: &str) -> Option<usize> {
    let explained = super::explain::explain(line);
    let line = explained.as_deref().unwrap_or(line);
    batch.extend_from_slice(line.as_bytes());
    batch.push(b'\n');
    COUNTED_METHODS
        .iter()
        .any(|method| line.contains(method))
        .then_some(line.len())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

    use super::*;

    fn wire(max: usize) -> (Wire, tokio::io::DuplexStream, BufReader<tokio::io::DuplexStream>) {
        let (client_in, agent_in) = tokio::io::duplex(1 << 20);
        let (agent_out, client_out) = tokio::io::duplex(1 << 20);
        let limits = WireLimits {
            max_line_bytes: max,
            updates_in_flight: 4,
            bytes_in_flight: 1 << 20,
        };
        (
            Wire::new(agent_in, agent_out, limits),
            client_in,
            BufReader::new(client_out),
        )
    }

    #[tokio::test]
    async fn bad_lines_get_a_parse_error_and_good_lines_still_arrive() {
        let (wire, mut client_in, mut client_out) = wire(64);
        let mut incoming = wire.incoming;
        client_in.write_all(b"{\"a\":1}\n\xff\xfe\n").await.unwrap();
        client_in.write_all(&[b'x'; 100]).await.unwrap();
        client_in.write_all(b"\n{\"b\":2}\n").await.unwrap();
        drop(client_in);
        let mut got = Vec::new();
        while let Some(line) = incoming.next().await {
            got.push(line.unwrap());
        }
        assert_eq!(got, vec![r#"{"a":1}"#, r#"{"b":2}"#]);
        let mut replies = Vec::new();
        for _ in 0..2 {
            let mut line = String::new();
            tokio::time::timeout(Duration::from_secs(5), client_out.read_line(&mut line))
                .await
                .unwrap()
                .unwrap();
            replies.push(serde_json::from_str::<serde_json::Value>(&line).unwrap());
        }
        assert_eq!(replies[0]["error"]["code"], -32700);
        assert_eq!(replies[0]["id"], serde_json::Value::Null);
        let first = replies[0]["error"]["message"].as_str().unwrap();
        assert!(first.contains("line 2 is not valid UTF-8"), "{first}");
        let second = replies[1]["error"]["message"].as_str().unwrap();
        assert!(second.contains("line 3 has 100 bytes"), "{second}");
    }

    #[tokio::test]
    async fn a_flood_of_bad_lines_queues_a_bounded_number_of_replies() {
        let (mut client_in, agent_in) = tokio::io::duplex(1 << 20);
        let (replies_tx, mut replies) = mpsc::channel::<String>(8);
        let mut incoming = Box::pin(read_lines(agent_in, 64, replies_tx));
        for _ in 0..500 {
            client_in.write_all(b"\xff\n").await.unwrap();
        }
        drop(client_in);
        while incoming.next().await.is_some() {}
        let mut queued = 0;
        while replies.try_recv().is_ok() {
            queued += 1;
        }
        assert!(
            queued <= 9,
            "{queued} replies queued for a client that reads nothing"
        );
    }

    #[tokio::test]
    async fn written_updates_release_the_flow() {
        let (wire, _client_in, mut client_out) = wire(64);
        let flow = wire.flow.clone();
        let mut outgoing = wire.outgoing;
        let update = r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#;
        for _ in 0..4 {
            flow.sent(update.len());
        }
        assert!(
            tokio::time::timeout(Duration::from_millis(50), flow.ready())
                .await
                .is_err(),
            "four updates in flight with a limit of four"
        );
        outgoing.send(update.to_owned()).await.unwrap();
        outgoing
            .send(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_owned())
            .await
            .unwrap();
        let mut line = String::new();
        client_out.read_line(&mut line).await.unwrap();
        assert_eq!(line.trim_end(), update);
        tokio::time::timeout(Duration::from_secs(5), flow.ready())
            .await
            .expect("one update written, so one more may be sent");
        line.clear();
        client_out.read_line(&mut line).await.unwrap();
        assert_eq!(flow.in_flight(), 3, "a response is not an update");
    }
}
