//! Running `codex exec` to the end under a timeout, and reading its JSONL events.

use std::ffi::OsStr;
use std::fmt;
use std::io;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt};

use super::{CodexEnvError, CodexTestEnv};

impl CodexTestEnv {
    /// Runs `codex exec` to the end; past `timeout` the process group is killed and an error returned.
    pub async fn run_exec<I, S>(&self, args: I, timeout: Duration) -> Result<CodexRun, CodexEnvError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let started = Instant::now();
        let mut child = self
            .exec_command(args)
            .spawn()
            .map_err(|source| CodexEnvError::Spawn {
                program: self.codex_path().to_path_buf(),
                source,
            })?;
        let pid = child.id();
        let mut stdout_pipe = child.stdout.take();
        let mut stderr_pipe = child.stderr.take();
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        let finished = tokio::time::timeout(timeout, async {
            let (out, err, status) = tokio::join!(
                read_all(stdout_pipe.as_mut(), &mut stdout),
                read_all(stderr_pipe.as_mut(), &mut stderr),
                child.wait()
            );
            out.and(err).and(status)
        })
        .await;
        let lossy = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
        match finished {
            Ok(Ok(status)) => Ok(CodexRun::new(
                status,
                lossy(&stdout),
                lossy(&stderr),
                started.elapsed(),
            )),
            Ok(Err(source)) => Err(CodexEnvError::Wait(source)),
            Err(_elapsed) => {
                kill_group(pid);
                // Reap it; the group is already killed, so this returns at once.
                child.wait().await.map_err(CodexEnvError::Wait)?;
                Err(CodexEnvError::Timeout {
                    timeout,
                    stdout: lossy(&stdout),
                    stderr: lossy(&stderr),
                })
            }
        }
    }
}

/// The outcome of one `codex exec --json` run.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CodexRun {
    /// The exit status.
    pub status: ExitStatus,
    /// Stdout as text.
    pub stdout: String,
    /// Stderr as text.
    pub stderr: String,
    /// Each stdout line parsed as JSON (a line that is not JSON is kept as a JSON string).
    pub events: Vec<Value>,
    /// Spawn to exit.
    pub elapsed: Duration,
}

impl CodexRun {
    fn new(status: ExitStatus, stdout: String, stderr: String, elapsed: Duration) -> CodexRun {
        let events = stdout
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| serde_json::from_str(line).unwrap_or_else(|_| Value::String(line.to_owned())))
            .collect();
        CodexRun {
            status,
            stdout,
            stderr,
            events,
            elapsed,
        }
    }

    /// The `type` of each event, in order.
    pub fn event_types(&self) -> Vec<&str> {
        self.events
            .iter()
            .map(|e| e.get("type").and_then(Value::as_str).unwrap_or(""))
            .collect()
    }

    /// The `thread_id` of `thread.started`.
    pub fn thread_id(&self) -> Option<&str> {
        self.events
            .iter()
            .find_map(|e| e.get("thread_id").and_then(Value::as_str))
    }

    /// The items of events of `event_type` (e.g. `item.completed`) whose item has `item_type`.
    pub fn items(&self, event_type: &str, item_type: &str) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|e| e.get("type").and_then(Value::as_str) == Some(event_type))
            .filter_map(|e| e.get("item"))
            .filter(|item| item.get("type").and_then(Value::as_str) == Some(item_type))
            .collect()
    }

    /// The texts of the completed `agent_message` items.
    pub fn agent_messages(&self) -> Vec<&str> {
        self.items("item.completed", "agent_message")
            .into_iter()
            .filter_map(|i| i["text"].as_str())
            .collect()
    }

    /// The message of `turn.failed`, if the turn failed.
    pub fn turn_failed_message(&self) -> Option<&str> {
        self.events
            .iter()
            .find(|e| e.get("type").and_then(Value::as_str) == Some("turn.failed"))
            .and_then(|e| e.pointer("/error/message"))
            .and_then(Value::as_str)
    }
}

impl fmt::Display for CodexRun {
    /// Everything a failing assertion needs: status, stdout and stderr.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "codex exited with {} after {:?}\n--- stdout\n{}--- stderr\n{}",
            self.status, self.elapsed, self.stdout, self.stderr
        )
    }
}

async fn read_all<R: AsyncRead + Unpin>(pipe: Option<&mut R>, buf: &mut Vec<u8>) -> io::Result<()> {
    if let Some(pipe) = pipe {
        pipe.read_to_end(buf).await?;
    }
    Ok(())
}

/// Kills the process group led by `pid` (Codex and the commands it spawned in the group).
fn kill_group(pid: Option<u32>) {
    let Some(pid) = pid.and_then(|pid| i32::try_from(pid).ok()) else {
        return;
    };
    if let Err(error) =
        nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL)
    {
        tracing::debug!(%error, pid, "killpg failed (the group may be gone already)");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_events_are_parsed_per_line() {
        let stdout = "{\"type\":\"thread.started\",\"thread_id\":\"t1\"}\nnot json\n\n{\"type\":\"turn.failed\",\"error\":{\"message\":\"boom\"}}\n";
        let status = std::process::Command::new("true").status().unwrap();
        let run = CodexRun::new(status, stdout.into(), String::new(), Duration::ZERO);
        assert_eq!(run.event_types(), ["thread.started", "", "turn.failed"]);
        assert_eq!(run.thread_id(), Some("t1"));
        assert_eq!(run.turn_failed_message(), Some("boom"));
        assert_eq!(run.events[1], Value::String("not json".into()));
    }
}
