//! A provider child process: its own process group, bounded stdout/stderr framing, a stderr
//! tail for error reports, and a kill of the whole group on stop or drop.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use futures::StreamExt;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio_util::codec::FramedRead;

use super::{BoundedLines, Frame, StderrTail};
use crate::error::ProviderError;

/// What the child gets on stdin.
#[derive(Debug, Clone)]
pub enum StdinMode {
    /// `/dev/null`.
    Null,
    /// These bytes, then end of input.
    Bytes(Vec<u8>),
    /// A pipe the caller writes to ([`Process::take_stdin`]), for a long-lived child.
    Pipe,
}

/// How to start a child.
#[derive(Debug, Clone)]
pub struct ProcessSpec {
    /// The program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Variables added to the inherited environment.
    pub env: Vec<(String, String)>,
    /// Inherited variables the child must not see.
    pub env_remove: Vec<String>,
    /// What to put on stdin.
    pub stdin: StdinMode,
    /// Longest stdout/stderr line kept, in bytes.
    pub max_line_bytes: usize,
    /// How much of stderr to keep for error messages.
    pub stderr_tail_bytes: usize,
}

/// Something the child did.
#[derive(Debug)]
pub enum ProcessEvent {
    /// A line on stdout.
    Stdout(String),
    /// A stdout line longer than the limit was dropped.
    StdoutOversized {
        /// Its length in bytes.
        bytes: usize,
    },
    /// A line on stderr (also kept in the tail).
    Stderr(String),
    /// Both pipes closed and the child was reaped.
    Exited(ExitStatus),
}

/// A running child in its own process group.
#[derive(Debug)]
pub struct Process {
    program: PathBuf,
    child: Child,
    pgid: Option<Pid>,
    stdin: Option<ChildStdin>,
    stdout: Option<FramedRead<ChildStdout, BoundedLines>>,
    stderr: Option<FramedRead<ChildStderr, BoundedLines>>,
    tail: StderrTail,
    reaped: Option<ExitStatus>,
    /// Inherited by every descendant; see `sweep`.
    marker: String,
}

/// Why the child did not start: a working directory that vanished fails the spawn with the same
/// "No such file or directory" as a missing program, so it is told apart here.
fn spawn_error(spec: &ProcessSpec, source: std::io::Error) -> ProviderError {
    match std::fs::metadata(&spec.cwd) {
        Ok(m) if m.is_dir() => ProviderError::Spawn {
            program: spec.program.clone(),
            source,
        },
        Ok(_) => ProviderError::WorkDirGone {
            cwd: spec.cwd.clone(),
            source: std::io::Error::other("it is no longer a directory"),
        },
        Err(e) => ProviderError::WorkDirGone {
            cwd: spec.cwd.clone(),
            source: e,
        },
    }
}

impl Process {
    /// Starts the child. Must be called inside a tokio runtime.
    pub fn spawn(spec: ProcessSpec) -> Result<Process, ProviderError> {
        let mut cmd = Command::new(&spec.program);
        let marker = super::sweep::new_marker();
        cmd.env(super::sweep::MARKER_VAR, &marker);
        for key in &spec.env_remove {
            cmd.env_remove(key);
        }
        cmd.args(&spec.args)
            .current_dir(&spec.cwd)
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .stdin(match spec.stdin {
                StdinMode::Null => Stdio::null(),
                StdinMode::Bytes(_) | StdinMode::Pipe => Stdio::piped(),
            })
            .process_group(0)
            .kill_on_drop(true);
        super::parent_death::kill_child_with_parent(&mut cmd);
        super::exit_guard::ensure_started();
        let mut child = cmd.spawn().map_err(|source| spawn_error(&spec, source))?;
        let pgid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw);
        let mut pipe = child.stdin.take();
        if let StdinMode::Bytes(bytes) = spec.stdin
            && let Some(mut stdin) = pipe.take()
        {
            // Written from a task: a child that reads its input lazily must not stall our reads.
            tokio::spawn(async move {
                if let Err(e) = stdin.write_all(&bytes).await {
                    tracing::debug!(error = %e, "child stdin closed before the prompt was written");
                }
                // Dropping `stdin` closes it: the child sees end of input.
            });
        }
        let stdout = child
            .stdout
            .take()
            .map(|s| FramedRead::new(s, BoundedLines::new(spec.max_line_bytes)));
        let stderr = child
            .stderr
            .take()
            .map(|s| FramedRead::new(s, BoundedLines::new(64 * 1024)));
        let stdin = pipe;
        Ok(Process {
            program: spec.program,
            child,
            pgid,
            stdin,
            stdout,
            stderr,
            tail: StderrTail::new(spec.stderr_tail_bytes),
            reaped: None,
            marker,
        })
    }

    /// The child's stdin, for [`StdinMode::Pipe`] (once).
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.stdin.take()
    }

    /// The marker this child and its descendants carry (see `kill_marked_with`).
    pub fn marker(&self) -> &str {
        &self.marker
    }

    /// The program this process runs.
    pub fn program(&self) -> &PathBuf {
        &self.program
    }

    /// The next thing the child did; after [`ProcessEvent::Exited`] it keeps returning that.
    pub async fn next_event(&mut self) -> ProcessEvent {
        loop {
            if let Some(status) = self.reaped {
                return ProcessEvent::Exited(status);
            }
            tokio::select! {
                // Cancel-safe: FramedRead::next keeps partial frames in its buffer.
                frame = next_frame(&mut self.stdout), if self.stdout.is_some() => match frame {
                    // Codex's output is read leniently: a stray byte must not lose the event.
                    Some(Frame::Line(l) | Frame::NotUtf8 { lossy: l, .. }) => return ProcessEvent::Stdout(l),
                    Some(Frame::Oversized { bytes }) => return ProcessEvent::StdoutOversized { bytes },
                    None => self.stdout = None,
                },
                // Cancel-safe for the same reason.
                frame = next_frame(&mut self.stderr), if self.stderr.is_some() => match frame {
                    Some(Frame::Line(l) | Frame::NotUtf8 { lossy: l, .. }) => {
                        self.tail.push(&l);
                        return ProcessEvent::Stderr(l);
                    }
                    Some(Frame::Oversized { bytes }) => {
                        self.tail.push(&format!("[a {bytes}-byte stderr line was dropped]"));
                    }
                    None => self.stderr = None,
                },
                // Cancel-safe: `wait` can be polled again after being dropped.
                status = self.child.wait(), if self.stdout.is_none() && self.stderr.is_none() => {
                    let status = status.unwrap_or_else(|e| {
                        tracing::warn!(error = %e, "waiting for the child failed");
                        std::os::unix::process::ExitStatusExt::from_raw(-1)
                    });
                    self.reaped = Some(status);
                }
            }
        }
    }

    /// The kept end of stderr.
    pub fn stderr_tail(&self) -> String {
        self.tail.text()
    }

    /// Interrupts the whole group, waits up to `grace`, then kills it; returns when reaped.
    pub async fn stop(&mut self, grace: Duration) -> Option<ExitStatus> {
        if self.reaped.is_none() {
            self.signal_group(Signal::SIGINT);
            if let Ok(Ok(status)) = tokio::time::timeout(grace, self.child.wait()).await {
                self.reaped = Some(status);
            }
        }
        // Kill stragglers (sandboxed grandchildren) even when the leader already left.
        self.signal_group(Signal::SIGKILL);
        if self.reaped.is_none() {
            match tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await {
                Ok(Ok(status)) => self.reaped = Some(status),
                Ok(Err(e)) => tracing::warn!(error = %e, "reaping the child failed"),
                Err(_) => tracing::warn!("the child survived SIGKILL for 2 s"),
            }
        }
        self.pgid = None;
        self.kill_descendants().await;
        self.reaped
    }

    /// Kills every process that inherited this child's marker (helpers in other sessions).
    ///
    /// The sweep scans `/proc` and waits for the killed to die, so it runs on a blocking
    /// thread: the runtime thread keeps answering every other session meanwhile.
    pub async fn kill_descendants(&self) {
        let marker = self.marker.clone();
        match tokio::task::spawn_blocking(move || super::sweep::kill_marked(&marker)).await {
            Ok(0) => {}
            Ok(n) => {
                tracing::debug!(program = %self.program.display(), killed = n, "killed processes the child left behind");
            }
            Err(e) => tracing::warn!(error = %e, "the process sweep failed"),
        }
    }

    fn signal_group(&self, signal: Signal) {
        if let Some(pgid) = self.pgid
            && let Err(e) = killpg(pgid, signal)
        {
            tracing::debug!(%pgid, ?signal, error = %e, "signalling the process group failed");
        }
    }
}

async fn next_frame<R: tokio::io::AsyncRead + Unpin>(
    framed: &mut Option<FramedRead<R, BoundedLines>>,
) -> Option<Frame> {
    let framed = framed.as_mut()?;
    match framed.next().await? {
        Ok(frame) => Some(frame),
        Err(e) => {
            tracing::debug!(error = %e, "reading a child pipe failed");
            None
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // The group is killed, not only the leader; tokio reaps the leader (kill_on_drop).
        if self.reaped.is_none() || self.pgid.is_some() {
            self.signal_group(Signal::SIGKILL);
            let marker = std::mem::take(&mut self.marker);
            let sweep = move || super::sweep::kill_marked(&marker);
            // Off the runtime thread when there is a runtime; inline otherwise (nothing to stall).
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => drop(runtime.spawn_blocking(sweep)),
                Err(_) => {
                    sweep();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, stdin: StdinMode) -> ProcessSpec {
        ProcessSpec {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            cwd: std::env::temp_dir(),
            env: vec![("ACPLB_TEST_VAR".into(), "v".into())],
            env_remove: vec![],
            stdin,
            max_line_bytes: 1024,
            stderr_tail_bytes: 256,
        }
    }

    async fn collect(p: &mut Process) -> (Vec<String>, Vec<String>, ExitStatus) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        loop {
            match p.next_event().await {
                ProcessEvent::Stdout(l) => out.push(l),
                ProcessEvent::StdoutOversized { bytes } => out.push(format!("<oversized {bytes}>")),
                ProcessEvent::Stderr(l) => err.push(l),
                ProcessEvent::Exited(s) => return (out, err, s),
            }
        }
    }

    #[tokio::test]
    async fn reads_both_pipes_and_exit_status() {
        let mut p = Process::spawn(sh(
            "echo a; echo b >&2; echo $ACPLB_TEST_VAR; exit 3",
            StdinMode::Null,
        ))
        .unwrap();
        let (out, err, status) = collect(&mut p).await;
        assert_eq!(out, vec!["a", "v"]);
        assert_eq!(err, vec!["b"]);
        assert_eq!(status.code(), Some(3));
        assert_eq!(p.stderr_tail(), "b\n");
    }

    #[tokio::test]
    async fn stdin_bytes_arrive_then_eof() {
        let big = "x".repeat(1 << 20);
        let mut p = Process::spawn(sh("wc -c", StdinMode::Bytes(big.into_bytes()))).unwrap();
        let (out, _, status) = collect(&mut p).await;
        assert_eq!(out.iter().map(|s| s.trim()).collect::<Vec<_>>(), vec!["1048576"]);
        assert!(status.success());
    }

    #[tokio::test]
    async fn huge_line_is_dropped_not_fatal() {
        let mut p = Process::spawn(sh(
            "head -c 5000000 /dev/zero | tr '\\0' x; echo; echo after",
            StdinMode::Null,
        ))
        .unwrap();
        let (out, _, _) = collect(&mut p).await;
        assert_eq!(out, vec!["<oversized 5000000>", "after"]);
    }

    #[tokio::test]
    async fn stop_kills_the_whole_group() {
        // The shell ignores SIGINT and starts a grandchild; both must be gone after stop().
        let mut p = Process::spawn(sh("trap '' INT; sleep 30 & echo $!; wait", StdinMode::Null)).unwrap();
        let ProcessEvent::Stdout(pid) = p.next_event().await else {
            panic!("expected the pid")
        };
        let grandchild = Pid::from_raw(pid.trim().parse().unwrap());
        let started = std::time::Instant::now();
        p.stop(Duration::from_millis(200)).await.unwrap();
        assert!(started.elapsed() < Duration::from_secs(2));
        // Signal 0 probes for existence; the grandchild may linger as a zombie of init only
        // briefly, so poll its state instead of sleeping a fixed time.
        let gone = (0..200).any(|_| {
            let alive = nix::sys::signal::kill(grandchild, None).is_ok()
                && std::fs::read_to_string(format!("/proc/{grandchild}/stat"))
                    .is_ok_and(|s| !s.contains(") Z "));
            if alive {
                std::thread::sleep(Duration::from_millis(5));
            }
            !alive
        });
        assert!(gone, "grandchild {grandchild} survived");
    }

    #[tokio::test]
    async fn missing_program_is_a_spawn_error() {
        let mut spec = sh("", StdinMode::Null);
        spec.program = "/definitely/not/a/codex".into();
        let err = Process::spawn(spec).unwrap_err();
        assert!(matches!(err, ProviderError::Spawn { .. }), "{err}");
        assert!(err.to_string().contains("/definitely/not/a/codex"));
    }

    #[tokio::test]
    async fn a_deleted_working_directory_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("was-here");
        std::fs::create_dir(&gone).unwrap();
        std::fs::remove_dir(&gone).unwrap();
        let mut spec = sh("", StdinMode::Null);
        spec.cwd.clone_from(&gone);
        let err = Process::spawn(spec).unwrap_err();
        let message = err.to_string();
        assert!(matches!(err, ProviderError::WorkDirGone { .. }), "{message}");
        assert!(message.contains(&gone.display().to_string()), "{message}");
        assert!(message.contains("working directory"), "{message}");
    }
}
