//! The app-server side of a recording: each `codex app-server` process with the turns it
//! served (the JSON-RPC of each session's thread, both ways, plus the file changes a replay
//! makes), and the lines `[expect] output` holds for each process.

use super::effects::Effects;
use super::transcript::Transcripts;
use crate::normalize::Normalizer;
use crate::output;
use crate::scenario::{AppServerRun, AppTurn, EventKind, ProviderEvent};

/// The processes in order, each with its turns in the order they started. `session_dirs` are
/// the sessions' transcript folders in `session/new` order; `norm` keeps Codex's thread ids.
pub(crate) fn servers(
    transcripts: &Transcripts,
    session_dirs: &[String],
    effects: &Effects,
    norm: &Normalizer,
) -> Vec<AppServerRun> {
    let mut servers: Vec<AppServerRun> = transcripts
        .servers
        .iter()
        .map(|s| AppServerRun {
            argv: s.argv.iter().map(|a| norm.text(a)).collect(),
            events: s
                .events
                .iter()
                .map(|(t, kind)| event(*t, normalized(kind, norm)))
                .collect(),
            end: s.end,
            turns: Vec::new(),
            line: 0,
        })
        .collect();
    for (index, turn) in transcripts.turns.iter().enumerate() {
        let Some(server) = transcripts
            .servers
            .iter()
            .position(|s| s.server == turn.server)
            .and_then(|i| servers.get_mut(i))
        else {
            tracing::warn!(session = %turn.session_dir, turn = turn.turn, server = turn.server,
                "an app-server turn names a process without a transcript; left out");
            continue;
        };
        let session = session_dirs
            .iter()
            .position(|d| *d == turn.session_dir)
            .map_or_else(
                || format!("<session-{}>", turn.session_dir),
                |i| format!("<session-{}>", i + 1),
            );
        let mut events = Vec::with_capacity(turn.events.len());
        for (l, (t, kind)) in turn.events.iter().enumerate() {
            for made in effects.before_message.get(&(index, l)).into_iter().flatten() {
                events.push(event(*t, normalized(made, norm)));
            }
            events.push(event(*t, normalized(kind, norm)));
        }
        server.turns.push(AppTurn {
            session,
            turn: turn.turn,
            events,
            line: 0,
        });
    }
    servers
}

/// The expected lines of every process: its arguments and each message acplb sent it.
pub(crate) fn expect_lines(servers: &[AppServerRun], norm: &mut Normalizer) -> Vec<String> {
    let mut lines = Vec::new();
    for (i, server) in servers.iter().enumerate() {
        let own = server.events.iter().map(|e| (0, &e.kind));
        let turns = server.turns.iter().flat_map(|t| {
            t.events
                .iter()
                .map(|e| (output::session_stream(&t.session), &e.kind))
        });
        let sent: Vec<(usize, String)> = own
            .chain(turns)
            .filter_map(|(stream, kind)| match kind {
                EventKind::Sent(msg) => Some((stream, msg.clone())),
                _ => None,
            })
            .collect();
        lines.extend(output::app_server_lines(i + 1, &server.argv, &sent, norm));
    }
    lines
}

fn event(t_ms: u64, kind: EventKind) -> ProviderEvent {
    ProviderEvent { t_ms, kind, line: 0 }
}

fn normalized(kind: &EventKind, norm: &Normalizer) -> EventKind {
    match kind {
        EventKind::Sent(l) => EventKind::Sent(norm.text(l)),
        EventKind::Recv(l) => EventKind::Recv(norm.text(l)),
        EventKind::Stderr(l) => EventKind::Stderr(norm.text(l)),
        EventKind::Write { path, text } => EventKind::Write {
            path: path.clone(),
            text: norm.text(text),
        },
        other => other.clone(),
    }
}
