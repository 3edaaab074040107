//! A running worker: its session opened, then mail and queue messages turned into turns as
//! its policy says, answered, and marked read — until it is stopped, asked to restart, or
//! its Codex goes away.

use std::collections::{HashSet, VecDeque};
use std::path::Path;
use std::rc::Rc;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use acplb_core::provider::ProviderAdapter;
use acplb_core::sessions::queue::{Queue, QueueWatcher};
use agent_client_protocol::v1::schema::SessionId;
use futures::StreamExt as _;
use futures::future::LocalBoxFuture;
use futures::stream::FuturesUnordered;
use tokio::sync::mpsc::UnboundedReceiver;

use super::intake::{release_all, take_mail, take_queued};
use super::link::{Link, TurnEnd};
use super::mail::Mailbox;
use super::wake::{ATM_POLL, MailWake};
use super::work::{self, Settled, Work};
use super::{Ctl, Ctx, Exit, session_file};
use crate::config::Policy;
use crate::status::WorkerState;

/// How long the runtime has to answer a health check.
const HEALTH_ANSWER: Duration = Duration::from_secs(10);
/// The input queue's tick (a missed file event is picked up then).
const QUEUE_TICK: Duration = acplb_core::sessions::queue::TICK;

type Running<'a> = FuturesUnordered<LocalBoxFuture<'a, (usize, Work, TurnEnd)>>;

/// The sessions turns run in: the worker's own, and for `concurrent` up to `max_concurrent`
/// more, opened when first needed as forks of the worker's own (each its own Codex thread that
/// starts with the worker's conversation so far).
struct Lanes {
    sessions: Vec<SessionId>,
    busy: Vec<bool>,
    limit: usize,
}

impl Lanes {
    fn free(&self) -> Option<usize> {
        self.busy.iter().position(|b| !b)
    }

    fn any_busy(&self) -> bool {
        self.busy.iter().any(|b| *b)
    }

    fn running(&self) -> usize {
        self.busy.iter().filter(|b| **b).count()
    }
}

/// What a ready worker watches.
struct Ready {
    session: SessionId,
    mail_watch: MailWake,
    queue: Arc<Mutex<Queue>>,
    queue_watch: QueueWatcher,
}

/// Opens the worker's session and its watchers.
async fn open(ctx: &Ctx, link: &Link, mailbox: &Mailbox) -> Result<Ready, String> {
    let agent = &ctx.agent;
    link.initialize()
        .await
        .map_err(|e| format!("the worker's runtime refused `initialize`: {}", e.message))?;
    let previous = session_file::read(&ctx.state_dir, &agent.name);
    let session = link
        .open(&agent.cwd, previous.as_deref())
        .await
        .map_err(|e| format!("cannot open the worker's session: {}", e.message))?;
    session_file::write(&ctx.state_dir, &agent.name, &session.to_string());
    configure(link, &session, agent).await?;
    ctx.status.borrow_mut().session_id = Some(session.to_string());
    let mail_watch = watch_mail(agent, mailbox)?;
    let queue = open_queue(&ctx.state_dir, &agent.name.to_string())?;
    let queue_watch = {
        let q = queue.lock().unwrap_or_else(PoisonError::into_inner);
        QueueWatcher::new(q.dir()).map_err(|e| format!("cannot watch the input queue: {e}"))?
    };
    Ok(Ready {
        session,
        mail_watch,
        queue,
        queue_watch,
    })
}

/// What wakes the worker for mail: a watcher on the inbox folder (created if missing, in a
/// team folder that must exist), or polls of `atm list` on the `atm-cli` backend.
fn watch_mail(agent: &crate::config::AgentConfig, mailbox: &Mailbox) -> Result<MailWake, String> {
    let inbox_dir = match mailbox {
        Mailbox::AtmCli(cli, _) => return Ok(MailWake::poll(cli.clone(), ATM_POLL)),
        Mailbox::Files(_) => mailbox.inbox_dir().ok_or("the worker's inbox has no folder")?,
    };
    if let Some(team_dir) = inbox_dir.parent()
        && !team_dir.is_dir()
    {
        return Err(format!(
            "team `{}` has no folder at {} (create the team first)",
            agent.name.team(),
            team_dir.display()
        ));
    }
    acplb_core::sessions::state::create_private_dir(&inbox_dir)
        .map_err(|e| format!("cannot create the inbox folder {}: {e}", inbox_dir.display()))?;
    QueueWatcher::with_tick(&inbox_dir, QUEUE_TICK)
        .map(MailWake::Files)
        .map_err(|e| format!("cannot watch the inbox: {e}"))
}

/// Runs the worker on `link` until it must stop.
#[expect(
    clippy::too_many_lines,
    reason = "one select loop; its arms are short and read in order"
)]
pub(crate) async fn drive(
    ctx: &Ctx,
    link: Link,
    provider: Rc<dyn ProviderAdapter>,
    mailbox: Mailbox,
    ctl: &mut UnboundedReceiver<Ctl>,
) -> Exit {
    let agent = &ctx.agent;
    let Ready {
        session,
        mut mail_watch,
        queue,
        mut queue_watch,
    } = match open(ctx, &link, &mailbox).await {
        Ok(r) => r,
        Err(e) => return Exit::Crashed(e),
    };
    let link = Rc::new(link);
    let mut lanes = Lanes {
        sessions: vec![session],
        busy: vec![false],
        limit: if agent.policy == Policy::Concurrent {
            agent.max_concurrent.max(1)
        } else {
            1
        },
    };
    let mut pending: VecDeque<Work> = VecDeque::new();
    let mut known: HashSet<String> = HashSet::new();
    let mut running: Running<'_> = FuturesUnordered::new();
    let mut health = tokio::time::interval(ctx.settings.health_check_interval);
    health.tick().await;
    let mut last_turn = Instant::now();
    let mut shown_active = false;
    ctx.status.borrow_mut().state = WorkerState::Idle;
    tracing::info!(session = %lanes.sessions[0], "worker ready");
    let mut read_mail = true;
    let mut read_queue = true;
    loop {
        if read_mail {
            read_mail = false;
            take_mail(ctx, &mailbox, &mut pending, &mut known, lanes.any_busy()).await;
        }
        if read_queue {
            read_queue = false;
            take_queued(&queue, &mut pending, &mut known).await;
        }
        while !pending.is_empty() {
            let lane = match lanes.free() {
                Some(l) => l,
                None if lanes.sessions.len() < lanes.limit => {
                    match link.fork(&agent.cwd, &lanes.sessions[0]).await {
                        Ok(s) => {
                            let _configured = configure(&link, &s, agent).await;
                            lanes.sessions.push(s);
                            lanes.busy.push(false);
                            lanes.sessions.len() - 1
                        }
                        Err(e) => {
                            tracing::warn!(error = %e.message, "cannot open another session for concurrent mail");
                            break;
                        }
                    }
                }
                None => break,
            };
            let Some(work) = pending.pop_front() else { break };
            lanes.busy[lane] = true;
            last_turn = Instant::now();
            if !shown_active {
                shown_active = true;
                ctx.activity(true);
            }
            match work.prompt(agent) {
                Ok(text) => {
                    let (link, session) = (link.clone(), lanes.sessions[lane].clone());
                    tracing::info!(work = %work.key(), lane, "turn started");
                    running.push(Box::pin(async move {
                        let end = link.prompt(&session, text).await;
                        (lane, work, end)
                    }));
                }
                // No turn: it ends at once as a failed one, and is settled (answered) as such.
                Err(why) => {
                    tracing::warn!(work = %work.key(), error = %why, "no turn for it");
                    running.push(Box::pin(async move { (lane, work, TurnEnd::Failed(why)) }));
                }
            }
        }
        {
            let mut status = ctx.status.borrow_mut();
            status.running = lanes.running();
            status.state = if lanes.any_busy() {
                WorkerState::Busy
            } else {
                WorkerState::Idle
            };
        }
        let idle_for = ctx
            .settings
            .inactivity_timeout
            .saturating_sub(last_turn.elapsed());
        tokio::select! {
            () = mail_watch.wait() => read_mail = true,
            _ = queue_watch.wait() => read_queue = true,
            Some((lane, work, end)) = running.next(), if !running.is_empty() => {
                lanes.busy[lane] = false;
                known.remove(&work.key());
                last_turn = Instant::now();
                if let TurnEnd::Crashed(why) = &end {
                    tracing::warn!(error = %why, "Codex went away mid-turn; the message stays unread");
                    drop(work);
                    return Exit::Crashed(why.clone());
                }
                if work::settle(agent, &mailbox, work, &end).await == Settled::Answered {
                    ctx.status.borrow_mut().answered += 1;
                }
                // Mail that came while busy (reject policy) or a batch cut short.
                read_mail = true;
            }
            c = ctl.recv() => {
                release_all(pending).await;
                return match c {
                    Some(Ctl::Restart) => Exit::Restart,
                    Some(Ctl::Stop) | None => Exit::Stopped,
                };
            }
            _ = health.tick() => {
                if let Err(why) = check_health(&link, provider.as_ref()).await {
                    release_all(pending).await;
                    return Exit::Crashed(why);
                }
            }
            () = tokio::time::sleep(idle_for), if shown_active && !lanes.any_busy() => {
                shown_active = false;
                ctx.activity(false);
            }
        }
    }
}

/// The health check: the worker's runtime answers, and so does its Codex.
async fn check_health(link: &Link, provider: &dyn ProviderAdapter) -> Result<(), String> {
    match tokio::time::timeout(HEALTH_ANSWER, link.ping()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            return Err(format!(
                "health check: the worker's runtime refused: {}",
                e.message
            ));
        }
        Err(_) => {
            return Err(format!(
                "health check: the worker's runtime did not answer within {HEALTH_ANSWER:?}"
            ));
        }
    }
    provider.health().await.map_err(|e| format!("health check: {e}"))
}

async fn configure(
    link: &Link,
    session: &SessionId,
    agent: &crate::config::AgentConfig,
) -> Result<(), String> {
    link.set_option(session, "mode", &agent.mode)
        .await
        .map_err(|e| format!("cannot set mode `{}`: {}", agent.mode, e.message))?;
    if let Some(model) = &agent.model {
        link.set_option(session, "model", model)
            .await
            .map_err(|e| format!("cannot set model `{model}`: {}", e.message))?;
    }
    Ok(())
}

fn open_queue(state: &Path, target: &str) -> Result<Arc<Mutex<Queue>>, String> {
    let queue = Queue::open(state, target).map_err(|e| format!("cannot open the input queue: {e}"))?;
    // Only this daemon consumes this worker's queue: every claim left is one it died holding.
    if let Err(e) = queue.recover_stale(Duration::ZERO) {
        tracing::warn!(error = %e, "cannot take back earlier claims");
    }
    Ok(Arc::new(Mutex::new(queue)))
}
