//! The scripted ACP client: sends a scenario's client steps to an agent over JSON-RPC lines,
//! waiting for each step's condition, and answers the agent's requests from the recorded answers.
//!
//! It speaks raw JSON-RPC instead of using the SDK's client role on purpose: a replay must send
//! exactly the recorded bytes (ids, field order, even odd messages), which a typed client would
//! rebuild its own way. The same engine drives live sessions for `playback record-corpus`.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};

use crate::scenario::{Action, After, Answer, Pick, Reply, Step};

/// Values for the placeholders in client messages.
#[derive(Debug, Clone)]
pub struct Substitutions {
    /// The workspace, for `<cwd>`.
    pub cwd: String,
    /// The playback binary, for `<playback>`.
    pub playback: String,
}

/// What the client saw.
#[derive(Debug, Default)]
pub struct ClientRun {
    /// Every line the agent sent, in order.
    pub received: Vec<String>,
    /// The session ids `session/new` returned, in order (for `<session-N>`).
    pub sessions: Vec<String>,
    /// Why the script stopped before its end, if it did.
    pub error: Option<String>,
}

/// Runs `steps` against an agent; stops at the first step that cannot be done within `wait`.
pub async fn drive<W, R>(
    steps: &[Step],
    answers: &[Answer],
    subst: &Substitutions,
    to_agent: W,
    from_agent: R,
    wait: Duration,
) -> ClientRun
where
    W: AsyncWrite + Unpin,
    R: AsyncRead + Unpin,
{
    let mut client = Client {
        to_agent: Some(to_agent),
        from_agent: BufReader::with_capacity(256 * 1024, from_agent),
        buf: Vec::new(),
        answers,
        answers_used: HashMap::new(),
        subst,
        pending: HashMap::new(),
        responses: HashSet::new(),
        titles: Vec::new(),
        text: String::new(),
        requests: HashMap::new(),
        run: ClientRun::default(),
        eof: false,
    };
    if let Err(error) = client.steps(steps, wait).await {
        client.run.error = Some(error);
    }
    // Whatever happened, the agent's stdin closes and the rest of its output is collected.
    if let Some(mut w) = client.to_agent.take()
        && let Err(e) = w.shutdown().await
    {
        tracing::debug!(error = %e, "closing the agent's stdin failed (it may be gone)");
    }
    let deadline = Instant::now() + wait;
    while !client.eof {
        match client.next_line(deadline).await {
            Ok(()) => {}
            Err(e) => {
                client.run.error.get_or_insert(e);
                break;
            }
        }
    }
    client.run
}

struct Client<'a, W, R> {
    to_agent: Option<W>,
    from_agent: BufReader<R>,
    buf: Vec<u8>,
    answers: &'a [Answer],
    answers_used: HashMap<String, usize>,
    subst: &'a Substitutions,
    /// Requests sent and not answered: id (as JSON text) → method.
    pending: HashMap<String, String>,
    responses: HashSet<String>,
    titles: Vec<String>,
    /// The text of every `agent_message_chunk` so far, joined.
    text: String,
    /// Requests from the agent so far, per method.
    requests: HashMap<String, usize>,
    run: ClientRun,
    eof: bool,
}

impl<W: AsyncWrite + Unpin, R: AsyncRead + Unpin> Client<'_, W, R> {
    async fn steps(&mut self, steps: &[Step], wait: Duration) -> Result<(), String> {
        for (index, step) in steps.iter().enumerate() {
            let what = format!("client step {} (line {})", index + 1, step.line);
            if let Some(after) = &step.after {
                self.wait_for(after, Instant::now() + wait)
                    .await
                    .map_err(|e| format!("{what}: {e}"))?;
            }
            match &step.action {
                Action::Send(message) => self.send(message).await.map_err(|e| format!("{what}: {e}"))?,
                Action::Close => return Ok(()),
            }
        }
        // No explicit close: disconnect once every request has its response.
        let deadline = Instant::now() + wait;
        while !self.pending.is_empty() {
            self.next_line(deadline)
                .await
                .map_err(|e| format!("after the last client step: {e}"))?;
        }
        Ok(())
    }

    async fn wait_for(&mut self, after: &After, deadline: Instant) -> Result<(), String> {
        if let After::Paused(inner, ms) = after {
            Box::pin(self.wait_for(inner, deadline)).await?;
            // Reads on meanwhile, so the agent never blocks on a full pipe.
            let until = Instant::now() + Duration::from_millis(*ms);
            while Instant::now() < until && !self.eof {
                match tokio::time::timeout_at(until.into(), self.next_line(deadline)).await {
                    Ok(result) => result?,
                    Err(_) => break,
                }
            }
            return Ok(());
        }
        while !self.satisfied(after) {
            if self.eof {
                return Err(format!(
                    "acplb closed its output while waiting for {}",
                    describe(after)
                ));
            }
            self.next_line(deadline)
                .await
                .map_err(|e| format!("{e} while waiting for {}", describe(after)))?;
        }
        Ok(())
    }

    fn satisfied(&self, after: &After) -> bool {
        match after {
            After::Response(id) => self.responses.contains(&id.to_string()),
            After::ToolCall(title) => {
                let title = self.substitute(title).unwrap_or_else(|_| title.clone());
                self.titles.contains(&title)
            }
            After::Messages(n) => self.run.received.len() >= *n,
            After::Request { method, count } => self.requests.get(method).copied().unwrap_or(0) >= *count,
            After::Text(text) => self.text.contains(text.as_str()),
            After::Paused(inner, _) => self.satisfied(inner),
        }
    }

    /// Reads and handles one line; sets `eof` at end of output.
    async fn next_line(&mut self, deadline: Instant) -> Result<(), String> {
        if self.eof {
            return Ok(());
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let read = tokio::time::timeout(left, self.from_agent.read_until(b'\n', &mut self.buf)).await;
        match read {
            Err(_) => Err(format!("no message from acplb within {left:?}")),
            Ok(Err(e)) => Err(format!("reading acplb's output failed: {e}")),
            Ok(Ok(0)) => {
                self.eof = true;
                Ok(())
            }
            Ok(Ok(_)) => {
                let line = String::from_utf8_lossy(&self.buf).trim_end().to_owned();
                self.buf.clear();
                if !line.is_empty() {
                    self.received(line).await?;
                }
                Ok(())
            }
        }
    }

    async fn received(&mut self, line: String) -> Result<(), String> {
        let value: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        self.run.received.push(line);
        let id = value.get("id").filter(|id| !id.is_null());
        match (value.get("method").and_then(Value::as_str), id) {
            (Some(method), Some(id)) => {
                *self.requests.entry(method.to_owned()).or_default() += 1;
                self.answer(method, id, &value).await
            }
            (Some("session/update"), None) => {
                let update = value.pointer("/params/update");
                if update
                    .and_then(|u| u.get("sessionUpdate"))
                    .and_then(Value::as_str)
                    == Some("agent_message_chunk")
                    && let Some(text) = update
                        .and_then(|u| u.pointer("/content/text"))
                        .and_then(Value::as_str)
                {
                    self.text.push_str(text);
                }
                if update
                    .and_then(|u| u.get("sessionUpdate"))
                    .and_then(Value::as_str)
                    == Some("tool_call")
                    && let Some(title) = update.and_then(|u| u.get("title")).and_then(Value::as_str)
                {
                    self.titles.push(title.to_owned());
                }
                Ok(())
            }
            (None, Some(id)) => {
                let key = id.to_string();
                if self.pending.remove(&key).as_deref() == Some("session/new")
                    && let Some(session) = value.pointer("/result/sessionId").and_then(Value::as_str)
                {
                    self.run.sessions.push(session.to_owned());
                }
                self.responses.insert(key);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Answers a request from the agent with the next recorded answer for its method.
    async fn answer(&mut self, method: &str, id: &Value, request: &Value) -> Result<(), String> {
        let used = self.answers_used.entry(method.to_owned()).or_insert(0);
        let answer = self.answers.iter().filter(|a| a.method == method).nth(*used);
        *used += 1;
        let no_answer = |why: String| {
            serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": why}})
                .to_string()
        };
        let reply = match answer.map(|a| &a.reply) {
            Some(Reply::Result(result)) => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
            Some(Reply::Never) => return Ok(()),
            Some(Reply::Pick(pick)) => match pick_option(request, *pick) {
                Some(option) => serde_json::json!({"jsonrpc": "2.0", "id": id,
                    "result": {"outcome": {"outcome": "selected", "optionId": option}}})
                .to_string(),
                None => no_answer(format!("playback: no option fits {pick:?} in `{method}`")),
            },
            None => no_answer(format!("playback: the scenario has no answer for `{method}`")),
        };
        self.write(&reply).await
    }

    async fn send(&mut self, message: &str) -> Result<(), String> {
        let text = self.substitute(message)?;
        if let Ok(value) = serde_json::from_str::<Value>(&text)
            && let (Some(method), Some(id)) = (value.get("method").and_then(Value::as_str), value.get("id"))
        {
            self.pending.insert(id.to_string(), method.to_owned());
        }
        self.write(&text).await
    }

    async fn write(&mut self, line: &str) -> Result<(), String> {
        let Some(w) = self.to_agent.as_mut() else {
            return Err("acplb's stdin is already closed".to_owned());
        };
        let result = async {
            w.write_all(line.as_bytes()).await?;
            w.write_all(b"\n").await?;
            w.flush().await
        }
        .await;
        result.map_err(|e| format!("writing to acplb failed: {e}"))
    }

    /// Replaces `<cwd>`, `<playback>` and `<session-N>` (JSON-escaped: they sit in strings).
    fn substitute(&self, text: &str) -> Result<String, String> {
        let escaped = |s: &str| {
            let quoted = Value::String(s.to_owned()).to_string();
            quoted[1..quoted.len() - 1].to_owned()
        };
        let mut out = text
            .replace("<cwd>", &escaped(&self.subst.cwd))
            .replace("<playback>", &escaped(&self.subst.playback));
        while let Some(start) = out.find("<session-") {
            let rest = &out[start + "<session-".len()..];
            let Some(end) = rest.find('>') else { break };
            let n: usize = rest[..end]
                .parse()
                .map_err(|_| format!("bad placeholder `<session-{}>`", &rest[..end]))?;
            let id = n
                .checked_sub(1)
                .and_then(|i| self.run.sessions.get(i))
                .ok_or_else(|| {
                    format!(
                        "`<session-{n}>` is used but acplb created {} session(s) so far",
                        self.run.sessions.len()
                    )
                })?;
            out.replace_range(start..=start + "<session-".len() + end, &escaped(id));
        }
        Ok(out)
    }
}

fn describe(after: &After) -> String {
    match after {
        After::Response(id) => format!("the response to request {id}"),
        After::ToolCall(title) => format!("a tool call titled `{title}`"),
        After::Messages(n) => format!("{n} messages from acplb"),
        After::Request { method, count } => format!("{count} `{method}` request(s) from acplb"),
        After::Text(text) => format!("agent text containing `{text}`"),
        After::Paused(inner, _) => describe(inner),
    }
}

/// The `optionId` of the permission option `pick` names among those a request offers.
pub(crate) fn pick_option(request: &Value, pick: Pick) -> Option<String> {
    let options = request.pointer("/params/options")?.as_array()?;
    let kind = |o: &&Value, k: &str| o.get("kind").and_then(Value::as_str) == Some(k);
    let chosen = match pick {
        Pick::AllowOnce => options.iter().find(|o| kind(o, "allow_once")),
        Pick::AllowSession => options
            .iter()
            .find(|o| {
                let says = |key: &str| {
                    o.get(key)
                        .and_then(Value::as_str)
                        .is_some_and(|s| s.to_ascii_lowercase().contains("session"))
                };
                o.get("kind")
                    .and_then(Value::as_str)
                    .is_some_and(|k| k.starts_with("allow"))
                    && (says("optionId") || says("name"))
            })
            .or_else(|| options.iter().find(|o| kind(o, "allow_always"))),
        Pick::Reject => options
            .iter()
            .find(|o| kind(o, "reject_once"))
            .or_else(|| options.iter().find(|o| kind(o, "reject_always"))),
    };
    chosen?.get("optionId")?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests;
