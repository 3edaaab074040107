//! The `atm` CLI backend, for ATM ≥ 1.2 whose mail lives in its daemon rather than in files.
//!
//! Every call runs `atm … --json` directly (no shell) with `ATM_IDENTITY` and `ATM_TEAM` set, so
//! the sender is always this backend's identity, and is killed when it outlives its time limit.
//! Reading is at-least-once: `list` and `peek` do not mark anything; `commit` runs
//! `read --message-id` per delivered message.

mod child;

use std::ffi::OsString;
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;

use crate::error::MailError;
use crate::mail::{
    BroadcastReport, MailBackend, MailEnvelope, ReadBatch, ReadOptions, ReadReceipt, SentMessage,
};
use crate::names::Recipient;
use crate::record::{auto_summary, truncate};
use crate::text;

/// How long one `atm` call may take unless [`AtmCli::with_time_limit`] says otherwise.
pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(10);

/// Runs the `atm` binary as one identity of one team.
#[derive(Debug, Clone)]
pub struct AtmCli {
    program: OsString,
    identity: String,
    team: String,
    env: Vec<(OsString, OsString)>,
    limit: Duration,
}

impl AtmCli {
    /// `atm` (looked up on `PATH`) acting as `identity` in `team`.
    pub fn new(identity: &str, team: &str) -> Self {
        Self {
            program: "atm".into(),
            identity: identity.to_owned(),
            team: team.to_owned(),
            env: Vec::new(),
            limit: DEFAULT_TIME_LIMIT,
        }
    }

    /// Stops (kills) any call that takes longer than `limit`.
    #[must_use]
    pub fn with_time_limit(mut self, limit: Duration) -> Self {
        self.limit = limit;
        self
    }

    /// Runs this program instead of `atm`.
    #[must_use]
    pub fn with_program(mut self, program: impl Into<OsString>) -> Self {
        self.program = program.into();
        self
    }

    /// Sets an extra variable in the child's environment (a `PATH` set here is also used to
    /// find the program).
    #[must_use]
    pub fn with_env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    fn mailbox_name(&self) -> String {
        format!("atm:{}@{}", self.identity, self.team)
    }

    /// `atm <args>` with this backend's identity and team; stdin is empty.
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.args(args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env("ATM_IDENTITY", &self.identity)
            .env("ATM_TEAM", &self.team)
            .stdin(std::process::Stdio::null());
        cmd
    }

    /// Runs `atm <args>` (blocking, within the time limit) and parses its stdout as JSON.
    fn run(&self, args: &[&str]) -> Result<Value, MailError> {
        let output = child::output_blocking(self.command(args), self.limit);
        self.finish(args, output)
    }

    /// [`AtmCli::run`] without blocking the thread: for callers on the async runtime.
    async fn run_async(&self, args: &[&str]) -> Result<Value, MailError> {
        let output = child::output_async(self.command(args), self.limit).await;
        self.finish(args, output)
    }

    fn finish(&self, args: &[&str], output: std::io::Result<Option<Output>>) -> Result<Value, MailError> {
        let command = args.first().copied().unwrap_or_default().to_owned();
        let output = output
            .map_err(|source| MailError::CliSpawn {
                program: self.program.to_string_lossy().into_owned(),
                source,
            })?
            .ok_or_else(|| MailError::CliTimeout {
                command: command.clone(),
                limit: self.limit,
            })?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let tail: String = stderr
                .trim()
                .chars()
                .rev()
                .take(2000)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            return Err(MailError::Cli {
                command,
                message: format!("{}: {tail}", output.status),
            });
        }
        serde_json::from_slice(&output.stdout).map_err(|e| MailError::Cli {
            command,
            message: format!("unreadable json output: {e}"),
        })
    }

    /// [`MailBackend::pending_count`] without blocking the thread: `atm list` runs as an async
    /// child, killed when the limit passes or the future is dropped.
    pub async fn pending_count_async(&self) -> Result<usize, MailError> {
        unread_count(&self.run_async(&["list", "--json"]).await?)
    }

    fn peek(&self, id: &str) -> Result<Option<Value>, MailError> {
        let out = self.run(&["peek", "--message-id", id, "--json"])?;
        Ok(out.get("message").filter(|m| m.is_object()).cloned())
    }
}

/// `bucket_counts.unread` of `atm list --json`.
fn unread_count(list: &Value) -> Result<usize, MailError> {
    let unread = list
        .pointer("/bucket_counts/unread")
        .and_then(Value::as_u64)
        .ok_or_else(|| MailError::Cli {
            command: "list".into(),
            message: "no `bucket_counts.unread` in the output".into(),
        })?;
    Ok(usize::try_from(unread).unwrap_or(usize::MAX))
}

fn str_field<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

impl MailBackend for AtmCli {
    fn send(&self, to: &str, message: &str, summary: Option<&str>) -> Result<SentMessage, MailError> {
        // ATM checks membership itself; what cannot be a member's name is refused here.
        Recipient::split(to).check_plain(to)?;
        let summary = summary.map_or_else(|| auto_summary(message), str::to_owned);
        // Options first and `--` before the positionals, so a message starting with `-` is text.
        let summary_arg = format!("--summary={summary}");
        let stored = text::encode(message);
        let out = self.run(&["send", "--json", &summary_arg, "--", to.trim(), &stored])?;
        let agent = str_field(&out, "agent");
        let team = out.get("team").and_then(Value::as_str).unwrap_or(&self.team);
        Ok(SentMessage {
            recipient: if agent.is_empty() {
                to.to_owned()
            } else {
                format!("{agent}@{team}")
            },
            message_id: str_field(&out, "message_id").to_owned(),
            already_present: false,
        })
    }

    fn read(&self, opts: &ReadOptions) -> Result<ReadBatch, MailError> {
        let list = self.run(&["list", "--json"])?;
        let mut rows: Vec<&Value> = list
            .get("rows")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter(|row| row.get("read") == Some(&Value::Bool(false)))
                    .collect()
            })
            .unwrap_or_default();
        rows.sort_by_cached_key(|row| crate::time::parse_nanos(str_field(row, "timestamp")));
        let mut messages = Vec::new();
        let mut consumed = 0;
        for row in &rows {
            if messages.len() >= opts.max_messages {
                break;
            }
            consumed += 1;
            let id = str_field(row, "message_id");
            let Some(msg) = self.peek(id)? else { continue };
            let stored = str_field(&msg, "text");
            if !opts.include_system && text::is_control_message(stored) {
                continue;
            }
            messages.push(MailEnvelope {
                from: str_field(&msg, "from").to_owned(),
                message: truncate(text::decode(stored), opts.max_message_length),
                timestamp: str_field(&msg, "timestamp").to_owned(),
                message_id: id.to_owned(),
            });
        }
        let keys = messages.iter().map(|m| m.message_id.clone()).collect();
        Ok(ReadBatch {
            messages,
            receipt: ReadReceipt::new(self.mailbox_name(), keys),
            remaining: rows.len() - consumed,
        })
    }

    fn commit(&self, receipt: &ReadReceipt) -> Result<usize, MailError> {
        receipt.check_mailbox(&self.mailbox_name())?;
        for id in receipt.message_ids() {
            self.run(&["read", "--message-id", id, "--json"])?;
        }
        Ok(receipt.message_ids().len())
    }

    fn pending_count(&self) -> Result<usize, MailError> {
        unread_count(&self.run(&["list", "--json"])?)
    }

    fn broadcast(&self, message: &str, summary: Option<&str>) -> Result<BroadcastReport, MailError> {
        // ATM 1.6 has no broadcast command: fan out over `members`.
        let names = self.members()?.unwrap_or_default();
        let mut report = BroadcastReport::default();
        for name in names.into_iter().filter(|n| *n != self.identity) {
            match self.send(&name, message, summary) {
                Ok(sent) => report.sent.push(sent),
                Err(e) => report.failed.push((name, e)),
            }
        }
        Ok(report)
    }

    /// `members[].name` of `atm members --json`; ATM always knows its team's members, so an
    /// answer without a `members` array is an error, not an empty roster.
    fn members(&self) -> Result<Option<Vec<String>>, MailError> {
        let out = self.run(&["members", "--json"])?;
        let members = out
            .get("members")
            .and_then(Value::as_array)
            .ok_or_else(|| MailError::Cli {
                command: "members".into(),
                message: "no `members` array in the output".into(),
            })?;
        let names = members
            .iter()
            .map(|m| str_field(m, "name").to_owned())
            .filter(|n| !n.is_empty())
            .collect();
        Ok(Some(names))
    }
}
