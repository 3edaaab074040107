//! `acplb worker status` and `acplb worker restart`: asking the running daemon.

use std::io::Write as _;

use acplb_worker::daemon::control::{self, Answer, Request};
use anyhow::bail;
use clap::Args;

/// Options of `acplb worker status`.
#[derive(Debug, Args)]
pub(super) struct StatusArgs {
    /// Print the status as JSON.
    #[arg(long)]
    json: bool,
}

pub(super) fn status(args: &StatusArgs) -> anyhow::Result<bool> {
    let state = crate::sessions::state_dir()?;
    let status = match control::ask(&state, &Request::Status)? {
        Answer::Status(s) => s,
        Answer::Error { message } => bail!("{message}"),
        Answer::Ok { message } => bail!("unexpected answer: {message}"),
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&status)?)?;
        return Ok(true);
    }
    writeln!(out, "daemon {} ({})", status.pid, status.config)?;
    let rows: Vec<[String; 7]> = status
        .workers
        .iter()
        .map(|w| {
            [
                w.agent.clone(),
                w.state.word().to_owned(),
                w.session_id.clone().unwrap_or_else(|| "-".into()),
                w.answered.to_string(),
                w.restarts.to_string(),
                w.last_active.clone().unwrap_or_else(|| "-".into()),
                crate::table::one_line(w.last_error.as_deref().unwrap_or(""), 80),
            ]
        })
        .collect();
    crate::table::write(
        &mut out,
        [
            "AGENT",
            "STATE",
            "SESSION",
            "ANSWERED",
            "RESTARTS",
            "LAST ACTIVE",
            "LAST ERROR",
        ],
        &rows,
    )?;
    Ok(true)
}

pub(super) fn restart(agent: &str) -> anyhow::Result<bool> {
    let state = crate::sessions::state_dir()?;
    match control::ask(
        &state,
        &Request::Restart {
            agent: agent.to_owned(),
        },
    )? {
        Answer::Ok { message } => {
            writeln!(std::io::stdout().lock(), "{message}")?;
            Ok(true)
        }
        Answer::Error { message } => bail!("{message}"),
        Answer::Status(_) => bail!("unexpected answer"),
    }
}
