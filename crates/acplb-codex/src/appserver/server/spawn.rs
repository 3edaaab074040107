//! Starting one `codex app-server` process (its arguments, environment, transcript, writer,
//! reader and liveness watch) and stopping it with everything it started.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use acplb_core::error::ProviderError;
use acplb_core::transport::{Process, ProcessSpec, StdinMode};
use tokio::sync::{mpsc, oneshot};

use super::super::liveness;
use super::super::pipes::{self, Reader};
use super::super::rpc::Rpc;
use super::{AppServer, Conn, Running, Started};
use crate::options::child_env;
use crate::transcript::Transcript;

impl AppServer {
    /// Spawns server number `generation` with its writer, reader and liveness watch.
    pub(super) fn start(&self, generation: u64) -> Result<Started, ProviderError> {
        let options = &self.inner.options;
        let mut args: Vec<std::ffi::OsString> = vec!["app-server".into()];
        for o in &options.overrides {
            args.push("-c".into());
            args.push(o.into());
        }
        // Plans reach the editor only when Codex's plan tool is on; it is off by default.
        args.push("-c".into());
        args.push("tools.update_plan.enabled=true".into());
        let cwd = std::env::current_dir()
            .ok()
            .filter(|d| d.is_dir())
            .unwrap_or_else(std::env::temp_dir);
        tracing::debug!(?args, generation, "starting codex app-server");
        let transcript = Rc::new(RefCell::new(Transcript::open_process(
            options.transcript_dir.as_deref(),
            generation,
            &args,
        )));
        let mut process = Process::spawn(ProcessSpec {
            program: options.program.clone(),
            args,
            cwd,
            env: child_env(Vec::new()),
            env_remove: vec!["RUST_LOG".into()],
            stdin: StdinMode::Pipe,
            max_line_bytes: options.max_line_bytes,
            stderr_tail_bytes: 8 * 1024,
        })?;
        let stdin = process
            .take_stdin()
            .ok_or_else(|| ProviderError::Prepare("codex app-server has no stdin".into()))?;
        let marker: Rc<str> = Rc::from(process.marker());
        let (out_tx, out_rx) = mpsc::unbounded_channel();
        let limits = self.inner.limits;
        let rpc = Rpc::new(out_tx, limits.request, self.inner.served.clone());
        rpc.report_account_changes(self.inner.account.clone());
        tokio::task::spawn_local(pipes::write_lines(stdin, out_rx));
        let (stop_tx, stop_rx) = oneshot::channel();
        let task = tokio::task::spawn_local(pipes::read_loop(Reader {
            process,
            rpc: rpc.clone(),
            stop: stop_rx,
            flow: options.output_flow.clone(),
            grace: options.interrupt_grace,
            transcript: Rc::clone(&transcript),
        }));
        tokio::task::spawn_local(liveness::watch(rpc.clone(), limits.request));
        Ok(Started {
            conn: Conn {
                rpc,
                generation,
                marker,
            },
            stop: stop_tx,
            task,
            transcript,
        })
    }
}

/// Stops a server and everything it started (its reader kills the process tree), within 3 s.
pub(super) async fn stop(mut running: Running) {
    if let Some(stop) = running.stop.take() {
        let _ignored = stop.send(());
    }
    if tokio::time::timeout(Duration::from_secs(3), &mut running.task)
        .await
        .is_err()
    {
        running.task.abort();
    }
}
