//! The daemon's end of the control socket.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::{UnixListener, UnixStream};

use super::control::{Answer, MAX_REQUEST, Request, socket_path};
use super::{DaemonError, Workers};
use crate::config::AgentName;

/// The bound socket, and the guard that removes it.
pub(crate) struct Bound {
    pub(crate) listener: UnixListener,
    pub(crate) guard: SocketFile,
}

/// Removes the socket file when dropped.
pub(crate) struct SocketFile(PathBuf);

impl Drop for SocketFile {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_file(&self.0) {
            tracing::debug!(error = %e, "cannot remove the control socket");
        }
    }
}

/// Binds `<state>/workers/control.sock`; a socket that answers belongs to a running daemon
/// (refused), one that does not is left over from a killed one (replaced).
pub(crate) fn bind(state: &Path) -> Result<Bound, DaemonError> {
    let path = socket_path(state);
    let err = |source| DaemonError::Socket {
        path: path.clone(),
        source,
    };
    if let Some(dir) = path.parent() {
        acplb_core::sessions::state::create_private_dir(dir).map_err(err)?;
    }
    if std::os::unix::net::UnixStream::connect(&path).is_ok() {
        return Err(DaemonError::AlreadyRunning { path });
    }
    if path.exists() {
        std::fs::remove_file(&path).map_err(err)?;
    }
    let listener = UnixListener::bind(&path).map_err(err)?;
    Ok(Bound {
        listener,
        guard: SocketFile(path),
    })
}

/// Answers connections until aborted.
pub(crate) async fn serve(listener: UnixListener, workers: Rc<RefCell<Workers>>) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                tokio::task::spawn_local(answer(stream, workers.clone()));
            }
            Err(e) => {
                tracing::warn!(error = %e, "control socket accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
    }
}

async fn answer(stream: UnixStream, workers: Rc<RefCell<Workers>>) {
    let (read, mut write) = stream.into_split();
    let mut line = String::new();
    let mut reader = BufReader::new(read.take(MAX_REQUEST as u64));
    let read = tokio::time::timeout(std::time::Duration::from_secs(5), reader.read_line(&mut line)).await;
    let answer = match read {
        Ok(Ok(_)) => match serde_json::from_str::<Request>(&line) {
            Ok(request) => handle(&request, &workers),
            Err(e) => Answer::Error {
                message: format!("not a request: {e}"),
            },
        },
        Ok(Err(e)) => Answer::Error {
            message: e.to_string(),
        },
        Err(_) => return,
    };
    let mut text = serde_json::to_string(&answer).unwrap_or_else(|_| "{}".into());
    text.push('\n');
    if let Err(e) = write.write_all(text.as_bytes()).await {
        tracing::debug!(error = %e, "control client went away");
    }
}

fn handle(request: &Request, workers: &Rc<RefCell<Workers>>) -> Answer {
    match request {
        Request::Status => Answer::Status(workers.borrow().status()),
        Request::Restart { agent } => {
            let Ok(name) = AgentName::parse(agent) else {
                return Answer::Error {
                    message: format!("`{agent}` is not an agent name (`name@team`)"),
                };
            };
            let w = workers.borrow();
            match w.running.get(&name) {
                Some((_, handle)) => {
                    handle.restart();
                    Answer::Ok {
                        message: format!("{name} is restarting"),
                    }
                }
                None => Answer::Error {
                    message: format!(
                        "no worker `{name}` runs here (workers: {})",
                        w.running
                            .keys()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                },
            }
        }
    }
}
