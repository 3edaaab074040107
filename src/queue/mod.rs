//! `acplb queue`: messages for a session or a worker, dropped into its input queue (`send`) and
//! shown while they wait (`list`). Each subcommand has its arguments and code in a file of its
//! own.

mod list;
mod send;

use clap::Subcommand;

/// `acplb queue ...`.
#[derive(Debug, Subcommand)]
pub(crate) enum QueueCommand {
    /// Send a message to a session or a worker: prints the message's id.
    #[command(after_help = send::HELP)]
    Send(send::SendArgs),
    /// Show the messages waiting for a target, and those being delivered (claimed).
    #[command(after_help = list::HELP)]
    List(list::ListArgs),
}

/// Where queues are kept and what delivery promises, for `--help` (a macro, so help texts can
/// `concat!` it).
macro_rules! layout {
    () => {
        "\
TARGET is a session id (as `acplb sessions list` shows it) or a worker identity name@team.
Queues are kept in the state directory ($ACPLB_STATE_DIR, else $XDG_STATE_HOME/acplb, else
~/.local/state/acplb): queue/<target>/<id>.json is a message waiting, <id>.claimed one being
delivered, <id>.bad a damaged file (or anything that is not a regular file) set aside. Any program may drop a message there: write
{\"id\", \"from\", \"text\", \"sentAt\"} to a temporary name in that folder, then rename it.

Delivery: a message is claimed by exactly one consumer (a rename) and deleted only after
delivery: at least once, never twice at the same time. The model always sees it inside a
<queued-message from=\"...\" time=\"...\" id=\"...\"> envelope, never as bare instructions.
- An editor session (TARGET a session id) reads its queue while it is open in an acplb. While
  a turn runs on the app-server transport, the message is steered into that turn. Otherwise
  (the session is idle, or the exec transport) the editor shows a notice that it arrived, and
  it goes with the next prompt you send. A closed session's messages wait for session/load.
- A worker (TARGET name@team) runs each message as a turn of its own, one after another.
A consumer that dies mid-delivery leaves a claim that is put back later, so such a message may
arrive twice."
    };
}
use layout;

/// The `--help` text after `acplb queue`'s own.
pub(crate) const HELP: &str = concat!(
    layout!(),
    "

Examples:
  acplb queue send bob@core 'please rebase onto main'
  git diff | acplb queue send SESSION_ID - --from ci
  acplb queue list bob@core --json"
);

/// Runs a `queue` subcommand.
pub(crate) fn run(command: &QueueCommand) -> anyhow::Result<bool> {
    match command {
        QueueCommand::Send(args) => send::run(args),
        QueueCommand::List(args) => list::run(args),
    }
}
