//! The start of a worker's run: `initialize`, its session (the one it had, loaded, else a new
//! one) with the agent's options, and what wakes it: its inbox's watcher and its input queue.
//! Files are read and written on the blocking pool.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use acplb_core::sessions::queue::{Queue, QueueWatcher};
use agent_client_protocol::v1::schema::SessionId;

use super::error::WorkerError;
use super::link::Link;
use super::mail::Mailbox;
use super::wake::{ATM_POLL, MailWake};
use super::{Ctx, session_file};
use crate::config::AgentConfig;

/// The input queue's tick (a missed file event is picked up then).
const QUEUE_TICK: Duration = acplb_core::sessions::queue::TICK;

/// What a ready worker watches.
pub(super) struct Ready {
    pub(super) session: SessionId,
    pub(super) mail_watch: MailWake,
    pub(super) queue: Arc<Mutex<Queue>>,
    pub(super) queue_watch: QueueWatcher,
}

/// Opens the worker's session and its watchers.
pub(super) async fn open(ctx: &Ctx, link: &Link, mailbox: &Mailbox) -> Result<Ready, WorkerError> {
    let agent = &ctx.agent;
    link.initialize()
        .await
        .map_err(|e| WorkerError::Initialize { message: e.message })?;
    let (state, name) = (ctx.state_dir.clone(), agent.name.clone());
    let previous = blocking("reading the worker's session file", move || {
        session_file::read(&state, &name)
    })
    .await?;
    let session = link
        .open(&agent.cwd, previous.as_deref())
        .await
        .map_err(|e| WorkerError::OpenSession { message: e.message })?;
    let (state, name, id) = (ctx.state_dir.clone(), agent.name.clone(), session.to_string());
    blocking("remembering the worker's session", move || {
        session_file::write(&state, &name, &id);
    })
    .await?;
    configure(link, &session, agent).await?;
    ctx.status.borrow_mut().session_id = Some(session.to_string());
    let mail_watch = watch_mail(agent, mailbox).await?;
    let queue = open_queue(ctx.state_dir.clone(), agent.name.to_string()).await?;
    let queue_watch = {
        let dir = queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .dir()
            .to_owned();
        QueueWatcher::new(&dir).map_err(|source| WorkerError::Watch {
            what: "input queue",
            source,
        })?
    };
    Ok(Ready {
        session,
        mail_watch,
        queue,
        queue_watch,
    })
}

/// Sets the agent's `mode` and `model` on `session`.
pub(super) async fn configure(
    link: &Link,
    session: &SessionId,
    agent: &AgentConfig,
) -> Result<(), WorkerError> {
    link.set_option(session, "mode", &agent.mode)
        .await
        .map_err(|e| WorkerError::Configure {
            option: "mode",
            value: agent.mode.clone(),
            message: e.message,
        })?;
    if let Some(model) = &agent.model {
        link.set_option(session, "model", model)
            .await
            .map_err(|e| WorkerError::Configure {
                option: "model",
                value: model.clone(),
                message: e.message,
            })?;
    }
    Ok(())
}

/// What wakes the worker for mail: a watcher on the inbox folder (created if missing, in a
/// team folder that must exist), or polls of `atm list` on the `atm-cli` backend.
async fn watch_mail(agent: &AgentConfig, mailbox: &Mailbox) -> Result<MailWake, WorkerError> {
    let inbox_dir = match mailbox {
        Mailbox::AtmCli(cli) => return Ok(MailWake::poll(cli.clone(), ATM_POLL)),
        Mailbox::Files(_) => mailbox.inbox_dir().ok_or(WorkerError::NoInboxFolder)?,
    };
    let team = agent.name.team().to_owned();
    let dir = inbox_dir.clone();
    blocking("creating the inbox folder", move || inbox_folder(&team, &dir)).await??;
    QueueWatcher::with_tick(&inbox_dir, QUEUE_TICK)
        .map(MailWake::Files)
        .map_err(|source| WorkerError::Watch {
            what: "inbox",
            source,
        })
}

/// Creates the inbox folder `dir` in the folder of `team`, which must exist.
fn inbox_folder(team: &str, dir: &Path) -> Result<(), WorkerError> {
    if let Some(team_dir) = dir.parent()
        && !team_dir.is_dir()
    {
        return Err(WorkerError::NoTeam {
            team: team.to_owned(),
            dir: team_dir.to_owned(),
        });
    }
    acplb_core::sessions::state::create_private_dir(dir).map_err(|source| WorkerError::InboxFolder {
        dir: dir.to_owned(),
        source,
    })
}

/// The worker's input queue, with the claims an earlier daemon left taken back.
async fn open_queue(state: PathBuf, target: String) -> Result<Arc<Mutex<Queue>>, WorkerError> {
    let queue = blocking("opening the input queue", move || {
        let queue = Queue::open(&state, &target).map_err(|source| WorkerError::Queue { source })?;
        // Only this daemon consumes this worker's queue: every claim left is one it died holding.
        if let Err(e) = queue.recover_stale(Duration::ZERO) {
            tracing::warn!(error = %e, "cannot take back earlier claims");
        }
        Ok::<_, WorkerError>(queue)
    })
    .await??;
    Ok(Arc::new(Mutex::new(queue)))
}

/// Runs `f` on the blocking pool.
async fn blocking<T: Send + 'static>(
    what: &'static str,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, WorkerError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| WorkerError::Blocking {
            what,
            reason: e.to_string(),
        })
}
