//! What the binary gives the server ([`McpCodexConfig`]) and what every call shares.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use acplb_atm::audit::AuditLog;
use acplb_atm::mail::MailBackend;
use tokio::sync::{mpsc, oneshot};

/// The default of `--request-timeout` (FR-14).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// How `acplb mcp codex` runs.
#[derive(Debug)]
pub struct McpCodexConfig {
    /// The working directory of a `codex` call without `cwd`.
    pub cwd: PathBuf,
    /// The longest one call's turn may run (`--request-timeout`).
    pub request_timeout: Duration,
    /// acplb's state directory (the session registry), if sessions are kept.
    pub state_dir: Option<PathBuf>,
    /// The identity `codex_threads` lists and `codex_status` shows (`--identity`, else resolved
    /// as the team-mail plugins resolve it).
    pub identity: Option<String>,
    /// Its team.
    pub team: Option<String>,
    /// Every `codex` / `codex-reply` call is recorded here (`--audit`).
    pub audit: Option<AuditLog>,
    /// The team-mail tools, when the composer enables team mail.
    pub mail: Option<acplb_atm::mcp::AtmServer>,
    /// The Codex program, whose `--version` `codex_status` shows.
    pub codex_program: Option<PathBuf>,
    /// The Codex transport, for `codex_status`.
    pub transport: String,
    /// `--resume [THREAD]`: `Some("")` for this identity's most recent thread.
    pub resume: Option<String>,
    /// The `--role`'s sandbox: the mode of a thread whose call names none.
    pub default_mode: Option<acplb_core::permission::Mode>,
    /// The `--role`'s approval policy is `never`: approvals are declined unless a call says
    /// otherwise.
    pub never_ask: bool,
    /// The `--role`, for `codex_status`.
    pub role: Option<String>,
}

/// A health question for the provider (which lives on the runtime thread).
pub(crate) type HealthAsk = oneshot::Sender<Result<(), String>>;

/// What every call shares.
pub(crate) struct Shared {
    pub(crate) cwd: PathBuf,
    pub(crate) request_timeout: Duration,
    pub(crate) state_dir: Option<PathBuf>,
    pub(crate) identity: Option<String>,
    pub(crate) team: Option<String>,
    pub(crate) audit: Option<Arc<AuditLog>>,
    pub(crate) codex_program: Option<PathBuf>,
    pub(crate) transport: String,
    pub(crate) default_mode: Option<acplb_core::permission::Mode>,
    pub(crate) never_ask: bool,
    pub(crate) role: Option<String>,
    pub(crate) mail_backend: Option<Arc<dyn MailBackend>>,
    pub(crate) health: mpsc::UnboundedSender<HealthAsk>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

impl Shared {
    /// Is the provider's Codex alive and answering?
    pub(crate) async fn health(&self) -> Result<(), String> {
        let (tx, rx) = oneshot::channel();
        self.health
            .send(tx)
            .map_err(|_| "the server is stopping".to_owned())?;
        rx.await.map_err(|_| "the server is stopping".to_owned())?
    }

    /// `codex --version` (its first line), within 5 s; `None` when it does not answer.
    pub(crate) async fn codex_version(&self) -> Option<String> {
        let program = self.codex_program.as_ref()?;
        let run = tokio::process::Command::new(program)
            .arg("--version")
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .output();
        let out = tokio::time::timeout(Duration::from_secs(5), run)
            .await
            .ok()?
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout);
        out.status
            .success()
            .then(|| text.lines().next().unwrap_or_default().trim().to_owned())
    }

    /// Unread team mail, on the blocking pool.
    pub(crate) async fn pending_mail(&self) -> Result<usize, String> {
        let Some(backend) = self.mail_backend.clone() else {
            return Ok(0);
        };
        tokio::task::spawn_blocking(move || backend.pending_count().map_err(|e| e.to_string()))
            .await
            .map_err(|e| format!("the mail count stopped: {e}"))?
    }
}
