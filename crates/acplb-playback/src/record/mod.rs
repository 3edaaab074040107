//! `playback record`: a proxy between a real ACP client and a live acplb that passes bytes
//! through unchanged, keeps every line of both directions, has acplb write Codex's stream to a
//! transcript directory, and writes the scenario when the client disconnects. The secrets a
//! client gave its MCP servers are redacted (`secrets.rs`) and scenario files are created `0600`:
//! they hold the conversation.

mod app;
mod build;
mod effects;
mod secrets;
mod transcript;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};

pub use build::Captured;

use crate::error::PlaybackError;
use crate::scenario::{Scenario, Transport, toml_out};

/// Time acplb gets to exit after its stdin closed before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(10);

/// What to record.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// Where the scenario goes.
    pub out: PathBuf,
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// The acplb command: program, then arguments.
    pub command: Vec<OsString>,
    /// The playback binary (normalized to `<playback>` where it appears).
    pub playback: PathBuf,
}

/// Runs the proxy between the client (`client_in`, `client_out`) and acplb until the client
/// disconnects (or `disconnect` completes, e.g. on SIGTERM) or acplb exits, then writes the
/// scenario; returns it.
pub async fn record<I, O>(
    opts: &RecordOptions,
    client_in: I,
    client_out: O,
    disconnect: impl Future<Output = ()>,
) -> Result<Scenario, PlaybackError>
where
    I: AsyncRead + Unpin,
    O: AsyncWrite + Unpin,
{
    let Some((program, args)) = opts.command.split_first() else {
        return Err(PlaybackError::Session(
            "no acplb command given after `--`".to_owned(),
        ));
    };
    let transcripts = tempfile::Builder::new()
        .prefix("playback-record-")
        .tempdir()
        .map_err(PlaybackError::io(std::env::temp_dir()))?;
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .env("ACPLB_TRANSCRIPT_DIR", transcripts.path())
        // Transcripts hold a session's thread, not `model/list` or `skills/list`: a replay could not answer them,
        // so the recording offers the compiled-in models, as its replay will.
        .env("ACPLB_CODEX_MODEL_LIST", "off")
        .env("ACPLB_CODEX_SKILL_LIST", "off")
        .env("ACPLB_CODEX_PROFILE_LIST", "off")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        // Its own group: a Ctrl-C in the terminal reaches only playback, which then closes
        // acplb's stdin as a client would.
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| PlaybackError::Spawn {
            program: PathBuf::from(program),
            source,
        })?;
    let (Some(to_agent), Some(from_agent)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(PlaybackError::Session("acplb's stdio was not piped".to_owned()));
    };
    let mut captured = proxy(client_in, client_out, to_agent, from_agent, disconnect).await?;
    let exit = wait_exit(&mut child).await;
    let mut found = transcript::read_all(transcripts.path())?;
    secrets::redact(&mut captured, &mut found);
    let args: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let scenario = build::scenario(&build::Recording {
        name: opts.name.clone(),
        description: opts.description.clone(),
        transport: transport(&args, &found),
        args,
        captured,
        exit,
        transcripts: found,
        playback: &opts.playback,
    });
    write_scenario(&opts.out, &scenario)?;
    Ok(scenario)
}

/// The transport acplb ran with: what its transcripts show, else its `--transport`, else
/// `$ACPLB_TRANSPORT` (which it inherited), else acplb's default, app-server.
fn transport(args: &[String], found: &transcript::Transcripts) -> Transport {
    if !found.runs.is_empty() {
        return Transport::Exec;
    }
    if !found.servers.is_empty() {
        return Transport::AppServer;
    }
    let from_args = args.iter().enumerate().find_map(|(i, a)| {
        a.strip_prefix("--transport=")
            .map(str::to_owned)
            .or_else(|| (a == "--transport").then(|| args.get(i + 1).cloned()).flatten())
    });
    from_args
        .or_else(|| std::env::var("ACPLB_TRANSPORT").ok())
        .and_then(|t| t.parse().ok())
        .unwrap_or(Transport::AppServer)
}

/// Writes `scenario` to `path` (through a temporary file, so a failed write leaves no half file),
/// readable by its owner only.
pub fn write_scenario(path: &Path, scenario: &Scenario) -> Result<(), PlaybackError> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let tmp = path.with_extension("toml.tmp");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(PlaybackError::io(&tmp))?;
    file.write_all(toml_out::to_toml(scenario).as_bytes())
        .map_err(PlaybackError::io(&tmp))?;
    std::fs::rename(&tmp, path).map_err(PlaybackError::io(path))
}

/// Copies bytes both ways until acplb's stdout ends; returns what crossed, line by line.
async fn proxy<I, O, W, R>(
    mut client_in: I,
    mut client_out: O,
    to_agent: W,
    mut from_agent: R,
    disconnect: impl Future<Output = ()>,
) -> Result<Vec<Captured>, PlaybackError>
where
    I: AsyncRead + Unpin,
    O: AsyncWrite + Unpin,
    W: AsyncWrite + Unpin,
    R: AsyncRead + Unpin,
{
    let mut to_agent = Some(to_agent);
    let mut captured = Vec::new();
    let (mut from_client_lines, mut from_agent_lines) = (Lines::default(), Lines::default());
    let (mut up, mut down) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    let mut disconnect = std::pin::pin!(disconnect);
    loop {
        tokio::select! {
            // Cancel-safe: a pinned future polled again resumes where it was.
            () = &mut disconnect, if to_agent.is_some() => {
                from_client_lines.finish(&mut captured, Captured::Client);
                captured.push(Captured::ClientClosed);
                to_agent = None;
            }
            // Cancel-safe: a read that loses the race has taken no bytes.
            read = client_in.read(&mut up), if to_agent.is_some() => {
                let n = read.map_err(PlaybackError::process("reading from the client"))?;
                if n == 0 {
                    from_client_lines.finish(&mut captured, Captured::Client);
                    captured.push(Captured::ClientClosed);
                    // Dropping acplb's stdin is how the disconnect reaches it.
                    to_agent = None;
                    continue;
                }
                if let Some(w) = to_agent.as_mut() {
                    // acplb may have exited already; its output's end will stop the loop.
                    if let Err(e) = write_all(w, &up[..n]).await {
                        tracing::debug!(error = %e, "acplb's stdin is closed");
                    }
                }
                from_client_lines.push(&up[..n], &mut captured, Captured::Client);
            }
            // Cancel-safe for the same reason.
            read = from_agent.read(&mut down) => {
                let n = read.map_err(PlaybackError::process("reading acplb's output"))?;
                if n == 0 {
                    break;
                }
                write_all(&mut client_out, &down[..n])
                    .await
                    .map_err(PlaybackError::process("writing to the client"))?;
                from_agent_lines.push(&down[..n], &mut captured, Captured::Agent);
            }
        }
    }
    from_agent_lines.finish(&mut captured, Captured::Agent);
    if to_agent.is_some() {
        from_client_lines.finish(&mut captured, Captured::Client);
        captured.push(Captured::ClientClosed);
    }
    Ok(captured)
}

async fn write_all<W: AsyncWrite + Unpin>(w: &mut W, bytes: &[u8]) -> std::io::Result<()> {
    w.write_all(bytes).await?;
    w.flush().await
}

async fn wait_exit(child: &mut tokio::process::Child) -> Option<ExitStatus> {
    if let Ok(Ok(status)) = tokio::time::timeout(EXIT_GRACE, child.wait()).await {
        return Some(status);
    }
    tracing::warn!("acplb did not exit {EXIT_GRACE:?} after its stdin closed; killing it");
    if let Err(e) = child.kill().await {
        tracing::debug!(error = %e, "killing acplb failed");
    }
    None
}

/// Splits a byte stream into lines.
#[derive(Debug, Default)]
struct Lines {
    buf: Vec<u8>,
}

impl Lines {
    fn push(&mut self, bytes: &[u8], out: &mut Vec<Captured>, wrap: fn(String) -> Captured) {
        self.buf.extend_from_slice(bytes);
        while let Some(i) = self.buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.buf.drain(..=i).collect();
            let text = String::from_utf8_lossy(&line).trim_end().to_owned();
            if !text.is_empty() {
                out.push(wrap(text));
            }
        }
    }

    fn finish(&mut self, out: &mut Vec<Captured>, wrap: fn(String) -> Captured) {
        let text = String::from_utf8_lossy(&self.buf).trim().to_owned();
        self.buf.clear();
        if !text.is_empty() {
            out.push(wrap(text));
        }
    }
}
