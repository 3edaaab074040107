//! A running worker as a loop over events: it waits for the next [`Wake`] (mail, a queue
//! message, a turn done, the daemon, the health tick, idleness) and hands it to that event's
//! handler, which says whether the run goes on. Between events, waiting work is started as
//! the agent's policy allows.

use std::collections::{HashSet, VecDeque};
use std::ops::ControlFlow;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acplb_core::provider::ProviderAdapter;
use acplb_core::sessions::queue::{Queue, QueueWatcher};
use agent_client_protocol::v1::schema::SessionId;
use futures::StreamExt as _;
use futures::future::LocalBoxFuture;
use futures::stream::FuturesUnordered;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::{Instant, Interval};

use super::error::WorkerError;
use super::intake::{release_all, take_mail, take_queued};
use super::link::{Link, TurnEnd};
use super::mail::Mailbox;
use super::open::{Ready, configure, open};
use super::wake::MailWake;
use super::work::{self, Settled, Work};
use super::{Ctl, Ctx, Exit};
use crate::config::Policy;
use crate::status::WorkerState;

/// How long the runtime has to answer a health check.
const HEALTH_ANSWER: Duration = Duration::from_secs(10);

/// A turn that ended: its lane, its work, how it ended.
type Done = (usize, Work, TurnEnd);

/// What wakes a running worker.
enum Wake {
    /// The mailbox may hold new mail.
    Mail,
    /// The input queue may hold new messages.
    Queue,
    /// A turn ended.
    TurnDone(Done),
    /// The daemon spoke (`None`: it is gone, which stops the worker).
    Control(Option<Ctl>),
    /// Time for a health check.
    HealthTick,
    /// No turn for `inactivity_timeout`: the worker is shown inactive.
    Idle,
}

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

/// One run of a worker, between its start and its exit.
struct Worker<'a> {
    ctx: &'a Ctx,
    link: Rc<Link>,
    provider: Rc<dyn ProviderAdapter>,
    mailbox: Mailbox,
    ctl: &'a mut UnboundedReceiver<Ctl>,
    mail_watch: MailWake,
    queue: Arc<Mutex<Queue>>,
    queue_watch: QueueWatcher,
    lanes: Lanes,
    /// Work taken in, waiting for a lane.
    pending: VecDeque<Work>,
    /// The keys of the work pending or running (one message never runs twice at once).
    known: HashSet<String>,
    running: FuturesUnordered<LocalBoxFuture<'static, Done>>,
    health: Interval,
    last_turn: Instant,
    shown_active: bool,
    read_mail: bool,
    read_queue: bool,
}

/// Runs the worker on `link` until it must stop.
pub(crate) async fn drive(
    ctx: &Ctx,
    link: Link,
    provider: Rc<dyn ProviderAdapter>,
    mailbox: Mailbox,
    ctl: &mut UnboundedReceiver<Ctl>,
) -> Exit {
    let ready = match open(ctx, &link, &mailbox).await {
        Ok(r) => r,
        Err(e) => return Exit::Crashed(e),
    };
    let mut worker = Worker::new(ctx, link, provider, mailbox, ctl, ready).await;
    loop {
        worker.take_in().await;
        worker.start_turns().await;
        worker.show_status();
        let wake = worker.next_wake().await;
        if let ControlFlow::Break(exit) = worker.handle(wake).await {
            return exit;
        }
    }
}

impl<'a> Worker<'a> {
    async fn new(
        ctx: &'a Ctx,
        link: Link,
        provider: Rc<dyn ProviderAdapter>,
        mailbox: Mailbox,
        ctl: &'a mut UnboundedReceiver<Ctl>,
        ready: Ready,
    ) -> Self {
        let agent = &ctx.agent;
        let limit = if agent.policy == Policy::Concurrent {
            agent.max_concurrent.max(1)
        } else {
            1
        };
        let mut health = tokio::time::interval(ctx.settings.health_check_interval);
        health.tick().await;
        ctx.status.borrow_mut().state = WorkerState::Idle;
        tracing::info!(session = %ready.session, "worker ready");
        Self {
            ctx,
            link: Rc::new(link),
            provider,
            mailbox,
            ctl,
            mail_watch: ready.mail_watch,
            queue: ready.queue,
            queue_watch: ready.queue_watch,
            lanes: Lanes {
                sessions: vec![ready.session],
                busy: vec![false],
                limit,
            },
            pending: VecDeque::new(),
            known: HashSet::new(),
            running: FuturesUnordered::new(),
            health,
            last_turn: Instant::now(),
            shown_active: false,
            read_mail: true,
            read_queue: true,
        }
    }

    /// Waits for the next event. Priority, highest first (`biased`): the daemon (a stop or
    /// restart is never kept waiting by work), a turn done (its lane freed and its answer
    /// sent before new work is taken in), the health tick, mail, the queue, idleness.
    async fn next_wake(&mut self) -> Wake {
        let idle_at = self.last_turn + self.ctx.settings.inactivity_timeout;
        let idle_armed = self.shown_active && !self.lanes.any_busy();
        tokio::select! {
            biased;
            // Cancel-safe: `recv` loses no message when dropped (tokio's documentation).
            c = self.ctl.recv() => Wake::Control(c),
            // Cancel-safe: a turn not yet done stays in the set, running.
            Some(done) = self.running.next(), if !self.running.is_empty() => Wake::TurnDone(done),
            // Cancel-safe: a due tick stays due until `tick` is called again (tokio's documentation).
            _ = self.health.tick() => Wake::HealthTick,
            // Cancel-safe: see `MailWake::wait` (a change seen, or a poll, is kept or redone).
            () = self.mail_watch.wait() => Wake::Mail,
            // Cancel-safe: a change seen while nobody waits is kept for the next call.
            _ = self.queue_watch.wait() => Wake::Queue,
            // Cancel-safe: the deadline is worked out anew from `last_turn` on every call.
            () = tokio::time::sleep_until(idle_at), if idle_armed => Wake::Idle,
        }
    }

    /// Hands `wake` to its handler.
    async fn handle(&mut self, wake: Wake) -> ControlFlow<Exit> {
        match wake {
            Wake::Mail => self.on_mail(),
            Wake::Queue => self.on_queue(),
            Wake::TurnDone(done) => return self.on_turn_done(done).await,
            Wake::Control(c) => return self.on_control(c).await,
            Wake::HealthTick => return self.on_health_tick().await,
            Wake::Idle => self.on_idle(),
        }
        ControlFlow::Continue(())
    }

    fn on_mail(&mut self) {
        self.read_mail = true;
    }

    fn on_queue(&mut self) {
        self.read_queue = true;
    }

    /// Frees the turn's lane and settles its work (answered, marked read); a turn whose Codex
    /// went away ends the run and leaves its message unread.
    async fn on_turn_done(&mut self, (lane, work, end): Done) -> ControlFlow<Exit> {
        self.lanes.busy[lane] = false;
        self.known.remove(&work.key());
        self.last_turn = Instant::now();
        if let TurnEnd::Crashed(message) = end {
            tracing::warn!(error = %message, "Codex went away mid-turn; the message stays unread");
            drop(work);
            return ControlFlow::Break(Exit::Crashed(WorkerError::CodexGone { message }));
        }
        if work::settle(self.ctx, &self.mailbox, work, &end).await == Settled::Answered {
            self.ctx.status.borrow_mut().answered += 1;
        }
        // Mail that came while busy (reject policy) or a batch cut short.
        self.read_mail = true;
        ControlFlow::Continue(())
    }

    /// Stop or restart: the queue messages still waiting go back to the queue.
    async fn on_control(&mut self, ctl: Option<Ctl>) -> ControlFlow<Exit> {
        release_all(std::mem::take(&mut self.pending)).await;
        ControlFlow::Break(match ctl {
            Some(Ctl::Restart) => Exit::Restart,
            Some(Ctl::Stop) | None => Exit::Stopped,
        })
    }

    /// The worker's runtime answers, and so does its Codex; else the run ends.
    async fn on_health_tick(&mut self) -> ControlFlow<Exit> {
        match check_health(&self.link, self.provider.as_ref()).await {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                release_all(std::mem::take(&mut self.pending)).await;
                ControlFlow::Break(Exit::Crashed(e))
            }
        }
    }

    fn on_idle(&mut self) {
        self.shown_active = false;
        self.ctx.activity(false);
    }

    /// Reads the mailbox and the queue when an event said so.
    async fn take_in(&mut self) {
        if std::mem::take(&mut self.read_mail) {
            let busy = self.lanes.any_busy();
            take_mail(self.ctx, &self.mailbox, &mut self.pending, &mut self.known, busy).await;
        }
        if std::mem::take(&mut self.read_queue) {
            take_queued(&self.queue, &mut self.pending, &mut self.known).await;
        }
    }

    /// Starts waiting work on free lanes (for `concurrent`, opening lanes up to its limit).
    async fn start_turns(&mut self) {
        while !self.pending.is_empty() {
            let Some(lane) = self.lane().await else { break };
            let Some(work) = self.pending.pop_front() else {
                break;
            };
            self.lanes.busy[lane] = true;
            self.last_turn = Instant::now();
            if !self.shown_active {
                self.shown_active = true;
                self.ctx.activity(true);
            }
            match work.prompt(&self.ctx.agent) {
                Ok(text) => {
                    let (link, session) = (self.link.clone(), self.lanes.sessions[lane].clone());
                    tracing::info!(work = %work.key(), lane, "turn started");
                    self.running.push(Box::pin(async move {
                        let end = link.prompt(&session, text).await;
                        (lane, work, end)
                    }));
                }
                // No turn: it ends at once as a failed one, and is settled (answered) as such.
                Err(why) => {
                    tracing::warn!(work = %work.key(), error = %why, "no turn for it");
                    self.running.push(Box::pin(
                        async move { (lane, work, TurnEnd::Failed(why.to_string())) },
                    ));
                }
            }
        }
    }

    /// A free lane, a new one if the limit allows; `None`: the work waits.
    async fn lane(&mut self) -> Option<usize> {
        if let Some(free) = self.lanes.free() {
            return Some(free);
        }
        if self.lanes.sessions.len() >= self.lanes.limit {
            return None;
        }
        let agent = &self.ctx.agent;
        match self.link.fork(&agent.cwd, &self.lanes.sessions[0]).await {
            Ok(s) => {
                if let Err(e) = configure(&self.link, &s, agent).await {
                    tracing::warn!(error = %e, "a concurrent lane keeps its default options");
                }
                self.lanes.sessions.push(s);
                self.lanes.busy.push(false);
                Some(self.lanes.sessions.len() - 1)
            }
            Err(e) => {
                tracing::warn!(error = %e.message, "cannot open another session for concurrent mail");
                None
            }
        }
    }

    fn show_status(&self) {
        let mut status = self.ctx.status.borrow_mut();
        status.running = self.lanes.running();
        status.state = if self.lanes.any_busy() {
            WorkerState::Busy
        } else {
            WorkerState::Idle
        };
    }
}

/// The health check: the worker's runtime answers, and so does its Codex.
async fn check_health(link: &Link, provider: &dyn ProviderAdapter) -> Result<(), WorkerError> {
    match tokio::time::timeout(HEALTH_ANSWER, link.ping()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(WorkerError::HealthRefused { message: e.message }),
        Err(_) => {
            return Err(WorkerError::HealthSilent {
                waited: HEALTH_ANSWER,
            });
        }
    }
    provider
        .health()
        .await
        .map_err(|reason| WorkerError::HealthProvider { reason })
}
