//! `/terminals`: the commands of a session's thread that outlived their tool call (Codex's
//! background terminals: `exec_command` returned a process id to the model while the command
//! ran on), listed page by page (`thread/backgroundTerminals/list`), stopped one at a time
//! (`…/terminate`, by Codex's process id) or all at once (`…/clean`).

use std::fmt::Write as _;

use serde_json::Value;

use super::protocol::requests::{
    BackgroundTerminalsClean, BackgroundTerminalsList, BackgroundTerminalsTerminate,
};
use super::rpc::Rpc;

/// The most pages read of one list.
const MAX_PAGES: usize = 10;

/// What `/terminals` was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ask {
    /// `/terminals`: list them.
    List,
    /// `/terminals stop <id>`: stop one, named by its process id, its tool call id or Codex's item id.
    Stop(String),
    /// `/terminals stop all`: stop each listed one.
    StopAll,
    /// `/terminals clean`: have Codex stop every one of the thread.
    Clean,
    /// Anything else: the usage is shown.
    Usage,
}

impl Ask {
    /// The arguments after `/terminals`.
    pub(crate) fn parse(args: &str) -> Self {
        let mut words = args.split_whitespace();
        match (words.next(), words.next(), words.next()) {
            (None, _, _) => Self::List,
            (Some("clean"), None, _) => Self::Clean,
            (Some("stop"), Some("all"), None) => Self::StopAll,
            (Some("stop"), Some(id), None) => Self::Stop(id.to_owned()),
            _ => Self::Usage,
        }
    }
}

/// How to use the command.
pub(crate) const USAGE: &str = "Usage: `/terminals` lists the commands Codex left running in \
the background; `/terminals stop <id>` stops one (its id as listed), `/terminals stop all` \
stops each, `/terminals clean` has Codex stop every one of this session.\n";

/// What the session says when it has no thread on the running server.
pub(crate) const NO_THREAD: &str = "**Background terminals**\n\nNone: this session has no \
conversation running in Codex yet (or Codex restarted, which stopped its commands).\n";

/// One background terminal, as Codex lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Terminal {
    /// Codex's id of the command's item (the tool call's id without acplb's turn prefix).
    pub(crate) item_id: String,
    /// Codex's process id: what the model polls, and what stops it.
    pub(crate) process_id: String,
    pub(crate) command: String,
    pub(crate) cwd: String,
    /// The operating system's pids: Codex's `osPid` when it says, else the processes that
    /// carry the command's tool call and thread in their environment (see [`find_pids`]).
    pub(crate) pids: Vec<u64>,
}

impl Terminal {
    fn read(entry: &Value) -> Option<Self> {
        let text = |key: &str| entry.get(key).and_then(Value::as_str).map(str::to_owned);
        Some(Self {
            item_id: text("itemId")?,
            process_id: text("processId")?,
            command: text("command").unwrap_or_default(),
            cwd: text("cwd").unwrap_or_default(),
            pids: entry.get("osPid").and_then(Value::as_u64).into_iter().collect(),
        })
    }

    /// Whether `id` names this terminal: its process id, Codex's item id, or a tool call id
    /// (acplb's turn prefix, `t<n>-`, then the item id).
    pub(crate) fn named(&self, id: &str) -> bool {
        id == self.process_id
            || id == self.item_id
            || id
                .strip_suffix(self.item_id.as_str())
                .and_then(|prefix| prefix.strip_prefix('t'))
                .and_then(|n| n.strip_suffix('-'))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    }
}

/// Where the commands of one server run: the thread, and the marker everything the server
/// starts carries.
#[derive(Debug, Clone, Copy)]
pub(crate) struct On<'a> {
    pub(crate) rpc: &'a Rpc,
    pub(crate) thread: &'a str,
    pub(crate) marker: &'a str,
}

/// The background terminals of `thread`, every page, with their pids.
pub(crate) async fn list_with_pids(on: On<'_>) -> Result<Vec<Terminal>, String> {
    let mut terminals = list(on.rpc, on.thread).await?;
    for terminal in terminals.iter_mut().filter(|t| t.pids.is_empty()) {
        terminal.pids = find_pids(on, &terminal.item_id).await;
    }
    Ok(terminals)
}

/// The processes of a command when Codex does not say (0.169 leaves `osPid` null for its
/// unified exec): Codex gives each command `CODEX_THREAD_ID` and `CODEX_TOOL_CALL_ID` (the
/// item id) in its environment, beside the server's marker.
async fn find_pids(on: On<'_>, item_id: &str) -> Vec<u64> {
    let entries = vec![
        format!("CODEX_THREAD_ID={}", on.thread),
        format!("CODEX_TOOL_CALL_ID={item_id}"),
    ];
    acplb_core::transport::find_marked_with(on.marker.to_owned(), entries)
        .await
        .into_iter()
        .map(u64::from)
        .collect()
}

/// The background terminals of `thread`, every page.
pub(crate) async fn list(rpc: &Rpc, thread: &str) -> Result<Vec<Terminal>, String> {
    let mut terminals = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let params = BackgroundTerminalsList {
            thread_id: thread.to_owned(),
            cursor: cursor.take(),
        };
        let page = rpc
            .request(&params)
            .await
            .map_err(|e| format!("Codex did not list the background terminals: {e}"))?;
        let Some(data) = page.get("data").and_then(Value::as_array) else {
            return Err("Codex answered `thread/backgroundTerminals/list` without a list.".to_owned());
        };
        terminals.extend(data.iter().filter_map(Terminal::read));
        cursor = super::protocol::next_cursor(&page);
        if cursor.is_none() {
            break;
        }
    }
    Ok(terminals)
}

/// How a stop went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stopped {
    /// Codex stopped it.
    Yes(Terminal),
    /// Codex listed it but says it did not stop it (it ended meanwhile).
    Ended(Terminal),
    /// No terminal of the thread has that id (never had, or it ended and Codex forgot it).
    Unknown,
}

/// Stops the terminal of `thread` named `id` (see [`Terminal::named`]).
pub(crate) async fn stop(rpc: &Rpc, thread: &str, id: &str) -> Result<Stopped, String> {
    let terminals = list(rpc, thread).await?;
    let Some(terminal) = terminals.into_iter().find(|t| t.named(id)) else {
        return Ok(Stopped::Unknown);
    };
    Ok(if terminate(rpc, thread, &terminal).await? {
        Stopped::Yes(terminal)
    } else {
        Stopped::Ended(terminal)
    })
}

async fn terminate(rpc: &Rpc, thread: &str, terminal: &Terminal) -> Result<bool, String> {
    let params = BackgroundTerminalsTerminate {
        thread_id: thread.to_owned(),
        process_id: terminal.process_id.clone(),
    };
    // Noted first: the command's end may come before Codex's answer. A stop already under way
    // keeps its note, whatever this one is answered.
    let noted = rpc.stops().note(thread, &terminal.item_id);
    let answer = rpc.request(&params).await;
    let terminated = answer
        .as_ref()
        .is_ok_and(|a| a.get("terminated").and_then(Value::as_bool) == Some(true));
    if !terminated && noted {
        rpc.stops().forget(thread, &terminal.item_id);
    }
    answer.map_err(|e| format!("Codex did not stop process {}: {e}", terminal.process_id))?;
    Ok(terminated)
}

/// Has Codex stop every background terminal of `thread` (quietly: for a closing session).
pub(crate) async fn clean(rpc: &Rpc, thread: &str) -> Result<(), String> {
    let params = BackgroundTerminalsClean {
        thread_id: thread.to_owned(),
    };
    rpc.request(&params)
        .await
        .map(drop)
        .map_err(|e| format!("Codex did not stop the background terminals: {e}"))
}

/// [`clean`] at the user's word: each terminal it stops is noted as stopped first.
async fn clean_noted(rpc: &Rpc, thread: &str) -> Result<(), String> {
    let terminals = list(rpc, thread).await?;
    let noted: Vec<&str> = terminals
        .iter()
        .filter(|t| rpc.stops().note(thread, &t.item_id))
        .map(|t| t.item_id.as_str())
        .collect();
    let cleaned = clean(rpc, thread).await;
    if cleaned.is_err() {
        for item in noted {
            rpc.stops().forget(thread, item);
        }
    }
    cleaned
}

/// Markdown for the editor: what `ask` did on `on.thread`.
pub(crate) async fn report(on: On<'_>, ask: &Ask) -> String {
    let (rpc, thread) = (on.rpc, on.thread);
    let mut out = String::from("**Background terminals**\n\n");
    let result = match ask {
        Ask::Usage => return USAGE.to_owned(),
        Ask::List => list_with_pids(on).await.map(|t| render(&t)),
        Ask::Stop(id) => stop(rpc, thread, id).await.map(|s| stopped_text(id, &s)),
        Ask::StopAll => stop_all(rpc, thread).await,
        Ask::Clean => clean_noted(rpc, thread)
            .await
            .map(|()| "Codex stopped every background terminal of this session.\n".to_owned()),
    };
    match result {
        Ok(text) => out.push_str(&text),
        Err(why) => {
            out.push_str(&why);
            out.push('\n');
        }
    }
    out
}

async fn stop_all(rpc: &Rpc, thread: &str) -> Result<String, String> {
    let terminals = list(rpc, thread).await?;
    if terminals.is_empty() {
        return Ok("None was running.\n".to_owned());
    }
    let mut out = String::new();
    for terminal in terminals {
        let stopped = if terminate(rpc, thread, &terminal).await? {
            Stopped::Yes(terminal)
        } else {
            Stopped::Ended(terminal)
        };
        out.push_str(&stopped_text("", &stopped));
    }
    Ok(out)
}

fn stopped_text(id: &str, stopped: &Stopped) -> String {
    match stopped {
        Stopped::Yes(t) => format!("Stopped process {}: `{}`.\n", t.process_id, one_line(&t.command)),
        Stopped::Ended(t) => format!(
            "Process {} (`{}`) had already ended.\n",
            t.process_id,
            one_line(&t.command)
        ),
        Stopped::Unknown => format!(
            "No background terminal `{}` is running in this session (it may have ended). `/terminals` lists those that run.\n",
            one_line(id)
        ),
    }
}

/// One line per terminal: its id, command, pid and directory.
pub(crate) fn render(terminals: &[Terminal]) -> String {
    if terminals.is_empty() {
        return "None is running.\n".to_owned();
    }
    let mut out = String::new();
    for t in terminals {
        let pids: Vec<String> = t.pids.iter().map(u64::to_string).collect();
        let pid = match pids.len() {
            0 => "pid unknown".to_owned(),
            1 => format!("pid {}", pids[0]),
            _ => format!("pids {}", pids.join(" ")),
        };
        let _ = writeln!(
            out,
            "- `{}`: `{}` ({pid}, in `{}`)",
            t.process_id,
            one_line(&t.command),
            t.cwd
        );
    }
    out.push_str("\n`/terminals stop <id>` stops one, `/terminals stop all` stops each.\n");
    out
}

/// A command or id on one line, without backticks that would break its code span.
pub(crate) fn one_line(text: &str) -> String {
    let mut line: String = text
        .chars()
        .map(|c| if c.is_control() || c == '`' { ' ' } else { c })
        .take(200)
        .collect();
    if text.chars().count() > 200 {
        line.push('…');
    }
    line
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn terminal() -> Terminal {
        Terminal::read(
            &json!({"itemId": "call_7", "processId": "4242", "command": "sleep 30",
            "cwd": "/w", "osPid": 999, "cpuPercent": null, "rssKb": null}),
        )
        .unwrap()
    }

    #[test]
    fn arguments_parse_and_anything_else_is_the_usage() {
        assert_eq!(Ask::parse(""), Ask::List);
        assert_eq!(Ask::parse("  clean "), Ask::Clean);
        assert_eq!(Ask::parse("stop all"), Ask::StopAll);
        assert_eq!(Ask::parse("stop 4242"), Ask::Stop("4242".into()));
        for bad in ["stop", "stop 1 2", "kill 1", "clean up", "list"] {
            assert_eq!(Ask::parse(bad), Ask::Usage, "{bad}");
        }
    }

    #[test]
    fn a_terminal_is_named_by_process_id_item_id_or_tool_call_id() {
        let t = terminal();
        assert_eq!(t.pids, vec![999]);
        for id in ["4242", "call_7", "t1-call_7", "t12-call_7"] {
            assert!(t.named(id), "{id}");
        }
        for id in ["424", "t-call_7", "tx-call_7", "call_", "x1-call_7", "t1call_7"] {
            assert!(!t.named(id), "{id}");
        }
    }

    #[test]
    fn an_entry_without_ids_is_left_out_and_the_render_names_the_pid() {
        assert_eq!(Terminal::read(&json!({"command": "x"})), None);
        let text = render(&[terminal()]);
        assert!(text.contains("- `4242`: `sleep 30` (pid 999, in `/w`)"), "{text}");
        assert_eq!(render(&[]), "None is running.\n");
        let mut two = terminal();
        two.pids = vec![5, 6];
        assert!(render(&[two]).contains("(pids 5 6, in"));
    }

    #[test]
    fn commands_stay_on_one_line_in_their_code_span() {
        assert_eq!(one_line("a\nb`c"), "a b c");
        assert!(one_line(&"x".repeat(300)).ends_with('…'));
    }
}
