//! One `atm` run within a time limit: blocking (for callers already off the runtime thread,
//! such as the MCP server's tools) or async (for the prompt hook, which runs on it).
//!
//! Either way a run that outlives its limit is killed and reported as `None`.

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How often the blocking form looks whether the child has exited.
const POLL: Duration = Duration::from_millis(5);

/// The waits before each new try of a spawn the OS refused because the program file was open
/// for writing (`ETXTBSY`: an `atm` being replaced, or another thread's child still holding
/// the file it just wrote between its fork and its exec). It passes in microseconds.
const BUSY_RETRIES: [Duration; 3] = [
    Duration::from_millis(10),
    Duration::from_millis(30),
    Duration::from_millis(90),
];

fn busy(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::ExecutableFileBusy
}

/// Runs `cmd` to completion with stdout and stderr captured; `None` when it took longer than
/// `limit` (the child is killed and reaped).
pub(super) fn output_blocking(mut cmd: Command, limit: Duration) -> std::io::Result<Option<Output>> {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let deadline = Instant::now() + limit;
    let mut spawned = cmd.spawn();
    for wait in BUSY_RETRIES {
        match &spawned {
            Err(e) if busy(e) => {
                std::thread::sleep(wait);
                spawned = cmd.spawn();
            }
            _ => break,
        }
    }
    let mut child = spawned?;
    // Both pipes are drained on threads of their own, so a child writing more than a pipe
    // holds never stalls; the threads end when the pipes close.
    let (tx, rx) = mpsc::channel();
    for (index, pipe) in [
        child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>),
        child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .enumerate()
    {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                // A read error leaves what was read so far, which is all there is to report.
                let _partial = pipe.read_to_end(&mut bytes);
            }
            let _gone = tx.send((index, bytes));
        });
    }
    drop(tx);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() >= deadline {
            let _already_gone = child.kill();
            let _reaped = child.wait();
            return Ok(None);
        }
        std::thread::sleep(POLL);
    };
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    for _ in 0..2 {
        // A grandchild may keep a pipe open after `atm` exited: the limit covers that too.
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((0, bytes)) => stdout = bytes,
            Ok((_, bytes)) => stderr = bytes,
            Err(_) => return Ok(None),
        }
    }
    Ok(Some(Output {
        status,
        stdout,
        stderr,
    }))
}

/// The async form of [`output_blocking`]: the child is killed when the limit passes or when
/// the future is dropped (a cancelled prompt).
pub(super) async fn output_async(cmd: Command, limit: Duration) -> std::io::Result<Option<Output>> {
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut spawned = cmd.spawn();
    for wait in BUSY_RETRIES {
        match &spawned {
            Err(e) if busy(e) => {
                tokio::time::sleep(wait).await;
                spawned = cmd.spawn();
            }
            _ => break,
        }
    }
    let child = spawned?;
    match tokio::time::timeout(limit, child.wait_with_output()).await {
        Ok(output) => output.map(Some),
        Err(_elapsed) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]).stdin(Stdio::null());
        cmd
    }

    #[test]
    fn blocking_run_captures_both_streams() {
        let out = output_blocking(sh("echo out; echo err >&2; exit 3"), Duration::from_secs(10))
            .unwrap()
            .unwrap();
        assert_eq!(out.stdout, b"out\n");
        assert_eq!(out.stderr, b"err\n");
        assert_eq!(out.status.code(), Some(3));
    }

    #[test]
    fn blocking_run_is_stopped_at_its_limit() {
        let start = Instant::now();
        let out = output_blocking(sh("exec sleep 30"), Duration::from_millis(200)).unwrap();
        assert!(out.is_none());
        assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
    }

    #[tokio::test]
    async fn async_run_is_stopped_at_its_limit() {
        let start = Instant::now();
        let out = output_async(sh("exec sleep 30"), Duration::from_millis(200))
            .await
            .unwrap();
        assert!(out.is_none());
        assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
        let out = output_async(sh("printf '{}'"), Duration::from_secs(10))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(out.stdout, b"{}");
    }
}
