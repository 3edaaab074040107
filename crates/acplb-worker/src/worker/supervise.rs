//! Keeping a worker up: a run that fails is started again after a pause that doubles each
//! time, at most `max_restart_attempts` times in a row; then the worker is `failed` until
//! `acplb worker restart`. A run that answered something, or stayed up a while, resets the count.

use std::time::{Duration, Instant};

use tokio::sync::mpsc::UnboundedReceiver;

use super::{Ctl, Ctx, Exit, run_once};
use crate::status::WorkerState;

/// A run that lasted this long counts as healthy: the next failure starts counting anew.
const HEALTHY_RUN: Duration = Duration::from_secs(60);

pub(crate) async fn supervise(ctx: Ctx, mut ctl: UnboundedReceiver<Ctl>) {
    let mut failures: u32 = 0;
    loop {
        ctx.status.borrow_mut().state = WorkerState::Starting;
        let started = Instant::now();
        let answered_before = ctx.status.borrow().answered;
        tracing::info!("worker starting");
        let exit = run_once(&ctx, &mut ctl).await;
        ctx.status.borrow_mut().running = 0;
        let why = match exit {
            Exit::Stopped => {
                ctx.status.borrow_mut().state = WorkerState::Stopped;
                ctx.activity(false);
                tracing::info!("worker stopped");
                return;
            }
            Exit::Restart => {
                failures = 0;
                tracing::info!("worker restarting on request");
                continue;
            }
            Exit::Crashed(why) => why,
        };
        if started.elapsed() >= HEALTHY_RUN || ctx.status.borrow().answered > answered_before {
            failures = 0;
        }
        failures += 1;
        ctx.status.borrow_mut().last_error = Some(why.to_string());
        if failures > ctx.settings.max_restart_attempts {
            ctx.status.borrow_mut().state = WorkerState::Failed;
            ctx.activity(false);
            tracing::error!(error = %why, attempts = ctx.settings.max_restart_attempts, "worker failed; `acplb worker restart` starts it again");
            match ctl.recv().await {
                Some(Ctl::Restart) => {
                    failures = 0;
                    continue;
                }
                Some(Ctl::Stop) | None => {
                    ctx.status.borrow_mut().state = WorkerState::Stopped;
                    return;
                }
            }
        }
        let pause = ctx
            .settings
            .restart_backoff
            .saturating_mul(1 << (failures - 1).min(16));
        {
            let mut status = ctx.status.borrow_mut();
            status.state = WorkerState::Restarting;
            status.restarts += 1;
        }
        tracing::warn!(error = %why, attempt = failures, ?pause, "worker stopped unexpectedly; restarting after a pause");
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            c = ctl.recv() => match c {
                Some(Ctl::Restart) => failures = 0,
                Some(Ctl::Stop) | None => {
                    ctx.status.borrow_mut().state = WorkerState::Stopped;
                    return;
                }
            },
        }
    }
}
