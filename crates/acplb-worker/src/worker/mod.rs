//! One worker: an acplb session with the agent's team identity, driven by the daemon over an
//! in-process ACP connection, restarted when it fails (ADR 0014).

mod drive;
mod error;
mod intake;
mod ledger;
mod link;
mod mail;
mod open;
mod prompt;
mod sender;
mod session_file;
mod supervise;
mod wake;
mod work;

#[cfg(test)]
mod tests;

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    RequestPermissionRequest, RequestPermissionResponse, SessionNotification,
};
use agent_client_protocol::{Client, on_receive_notification, on_receive_request};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;

use crate::config::{AgentConfig, WorkerSettings};
use crate::host::{Host, Started};
use crate::status::{StatusCell, WorkerStatus};

pub use error::WorkerError;
pub use mail::Mailbox;
pub use session_file::read as session_of;

/// What the daemon tells a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ctl {
    /// Stop and start again (`acplb worker restart`; also ends `failed`).
    Restart,
    /// Stop for good: running turns are interrupted, their messages stay unread.
    Stop,
}

/// Why one run of a worker ended.
#[derive(Debug)]
pub(crate) enum Exit {
    Stopped,
    Restart,
    Crashed(WorkerError),
}

/// What one worker works with.
pub(crate) struct Ctx {
    pub(crate) agent: AgentConfig,
    pub(crate) settings: WorkerSettings,
    pub(crate) host: Rc<dyn Host>,
    pub(crate) status: StatusCell,
    pub(crate) state_dir: PathBuf,
    /// The replies sent through a backend that cannot find them again (`atm-cli`).
    pub(crate) ledger: ledger::Ledger,
    /// The team folder whose `config.json` shows the worker's activity: set at each run's
    /// start from its mailbox (files backend only), so a busy/idle flip reads no file.
    pub(crate) team_dir: RefCell<Option<PathBuf>>,
}

impl Ctx {
    /// Shows the worker active or not in its team's `config.json`, off the runtime thread.
    /// Only on the files backend: with `atm-cli` the roster is ATM's, not a file of ours.
    pub(crate) fn activity(&self, active: bool) {
        if active {
            self.status.borrow_mut().last_active =
                Some(acplb_atm::time::format_millis(acplb_atm::time::now_millis()));
        }
        let Some(team_dir) = self.team_dir.borrow().clone() else {
            return;
        };
        let name = self.agent.name.name().to_owned();
        tokio::task::spawn_blocking(move || {
            match acplb_atm::activity::set_member_activity(
                &team_dir,
                &name,
                active,
                std::time::SystemTime::now(),
            ) {
                Ok(outcome) => tracing::debug!(?outcome, active, "team activity"),
                Err(e) => tracing::warn!(error = %e, "cannot show the worker's activity in the team config"),
            }
        });
    }
}

/// A running worker, as the daemon holds it.
#[derive(Debug)]
pub struct WorkerHandle {
    ctl: UnboundedSender<Ctl>,
    task: JoinHandle<()>,
    status: StatusCell,
}

impl WorkerHandle {
    /// Starts `agent` on the current `LocalSet`.
    pub fn spawn(agent: AgentConfig, settings: WorkerSettings, host: Rc<dyn Host>) -> Self {
        let status: StatusCell = Rc::new(RefCell::new(WorkerStatus::new(agent.name.to_string())));
        let (ctl, rx) = tokio::sync::mpsc::unbounded_channel();
        let ctx = Ctx {
            ledger: ledger::Ledger::new(host.state_dir(), &agent.name.to_string()),
            state_dir: host.state_dir().to_owned(),
            agent,
            settings,
            host,
            status: status.clone(),
            team_dir: RefCell::new(None),
        };
        let span = tracing::info_span!("worker", worker = %ctx.agent.name);
        let task = tokio::task::spawn_local(tracing::Instrument::instrument(
            supervise::supervise(ctx, rx),
            span,
        ));
        Self { ctl, task, status }
    }

    /// Its status now.
    pub fn status(&self) -> WorkerStatus {
        self.status.borrow().clone()
    }

    /// Asks it to restart.
    pub fn restart(&self) {
        if self.ctl.send(Ctl::Restart).is_err() {
            tracing::debug!("restart: the worker has ended");
        }
    }

    /// Stops it and waits until it has (its server stopped, its Codex gone).
    pub async fn stop(self) {
        if self.ctl.send(Ctl::Stop).is_err() {
            tracing::debug!("stop: the worker has ended");
        }
        if let Err(e) = self.task.await {
            tracing::warn!(error = %e, "the worker's task failed");
        }
    }
}

/// One run: a new server for the agent, the worker as its client, until the run ends.
pub(crate) async fn run_once(ctx: &Ctx, ctl: &mut UnboundedReceiver<Ctl>) -> Exit {
    let Started {
        server,
        provider,
        mail,
    } = match ctx.host.start(&ctx.agent).await {
        Ok(s) => s,
        Err(reason) => return Exit::Crashed(WorkerError::Host { reason }),
    };
    let mailbox = mail;
    *ctx.team_dir.borrow_mut() = mailbox.team_dir(ctx.agent.name.team());
    let (agent_end, client_end) = acplb_core::client::duplex();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::task::spawn_local(tracing::Instrument::in_current_span(server.serve(
        agent_end,
        async move {
            let _stopped = stop_rx.await;
        },
    )));
    let answers = link::Answers::default();
    let heard = answers.clone();
    let result = Client
        .v1()
        .name("acplb-worker")
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                heard.on_update(&n);
                Ok(())
            },
            on_receive_notification!(),
        )
        .on_receive_request(
            async move |req: RequestPermissionRequest,
                        responder: Responder<RequestPermissionResponse>,
                        _cx| { responder.respond(link::decline(&req)) },
            on_receive_request!(),
        )
        .connect_with(client_end, async |cx| {
            Ok(drive::drive(ctx, link::Link::new(cx, answers), provider, mailbox, ctl).await)
        })
        .await;
    let _sent = stop_tx.send(());
    match tokio::time::timeout(ctx.settings.shutdown_timeout, serving).await {
        Ok(Ok(Ok(()))) => {}
        Ok(Ok(Err(e))) => tracing::warn!(error = %e, "the worker's server ended with an error"),
        Ok(Err(e)) => tracing::warn!(error = %e, "the worker's server task failed"),
        Err(_) => {
            tracing::warn!(timeout = ?ctx.settings.shutdown_timeout, "the worker's server did not stop in time");
        }
    }
    result.unwrap_or_else(|e| Exit::Crashed(WorkerError::Connection { message: e.message }))
}
