//! A session's slash commands beside the transport's built-in ones: Codex's skills of the
//! session's directory and its custom prompts (ADR 0032). They are listed behind the opening
//! (the editor sees them in a second `available_commands_update`): on app-server by the
//! shared server, listed again whenever it says `skills/changed`; on exec by a `codex
//! app-server` of the session's own, started for the question and stopped after it (as the
//! model list is asked). A prompt naming a skill or prompt the session does not know has it
//! listed again first, so one added since shows up then on exec too.
//!
//! Running one: a skill's mention (`$name`, which has Codex read the skill in) leads the
//! user's text, and on app-server the skill also goes as an input item of its own
//! ([`Picked`]); a custom prompt is expanded into the text sent. A skill whose file is gone,
//! an unknown name or arguments that do not fit a prompt fail the prompt with a message that
//! says so.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use acplb_core::error::ProviderError;
use acplb_core::provider::TurnRequest;
use agent_client_protocol::v1::schema::AvailableCommand;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

use super::on_server::OnServer;
use crate::appserver;
use crate::instructions::codex_home;
use crate::options::CodexOptions;
use crate::skills::{Extras, Lookup, Picked, Prompt, Skill, prompts, skill_text};

/// How long one listing waits for Codex (a cold server's start included); at most half the
/// request limit, so an unanswered listing never gets a shared server declared dead.
const WAIT: Duration = Duration::from_secs(10);

fn wait(options: &CodexOptions) -> Duration {
    options.request_limit.map_or(WAIT, |limit| (limit / 2).min(WAIT))
}

/// The skills Codex listed and why any were left out, or why there is no list.
type Listed = Result<(Vec<Skill>, Vec<String>), String>;

#[derive(Debug)]
struct State {
    lister: OnServer,
    wait: Duration,
    cwd: PathBuf,
    builtins: Vec<AvailableCommand>,
    extras: RefCell<Extras>,
    /// The whole command list; the session shows each new one.
    offered: watch::Sender<Vec<AvailableCommand>>,
    /// Counts the listings done, for a prompt waiting on one.
    rounds: watch::Sender<u64>,
    /// Asks for a listing now.
    again: Notify,
}

/// The commands of one session, and the task that keeps them current.
#[derive(Debug)]
pub(super) struct SessionCommands {
    state: Rc<State>,
    task: Option<JoinHandle<()>>,
    updates: Option<watch::Receiver<Vec<AvailableCommand>>>,
    picked: Picked,
}

impl Drop for SessionCommands {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

impl SessionCommands {
    /// `builtins` and, when enabled (`picked`: where an invoked skill goes for the
    /// app-server session), the skills and prompts `lister` finds for `cwd`.
    pub(super) fn start(
        lister: OnServer,
        cwd: PathBuf,
        builtins: Vec<AvailableCommand>,
        picked: Option<Picked>,
    ) -> Self {
        let enabled = picked.is_some();
        let (offered, updates) = watch::channel(builtins.clone());
        let wait = match &lister {
            OnServer::Shared(server) => wait(server.options()),
            OnServer::Own(options) => wait(options),
        };
        let state = Rc::new(State {
            lister,
            wait,
            cwd,
            builtins,
            extras: RefCell::default(),
            offered,
            rounds: watch::Sender::new(0),
            again: Notify::new(),
        });
        let task = enabled.then(|| tokio::task::spawn_local(keep_current(Rc::clone(&state))));
        Self {
            state,
            task,
            updates: Some(updates),
            picked: picked.unwrap_or_default(),
        }
    }

    /// The newer command lists, taken once.
    pub(super) fn updates(&mut self) -> Option<watch::Receiver<Vec<AvailableCommand>>> {
        self.updates.take()
    }

    /// Turns a prompt that names a skill or custom prompt into what Codex is sent; other
    /// prompts stay as they are.
    pub(super) async fn prepare(&self, turn: &mut TurnRequest) -> Result<(), ProviderError> {
        if self.task.is_none() {
            return Ok(());
        }
        let text = turn.prompt.text.clone();
        let mut found = resolve(&self.state.extras.borrow(), &text);
        if let Found::Unknown(_) = found {
            // Added since the last listing? List again (bounded) and look once more.
            self.relist().await;
            found = resolve(&self.state.extras.borrow(), &text);
        }
        match found {
            Found::NotOurs => Ok(()),
            Found::Unknown(command) => Err(ProviderError::Prepare(format!(
                "`/{command}` names no skill or custom prompt of this session; the editor's command list shows those there are"
            ))),
            Found::Prompt(prompt, args) => {
                turn.prompt.text = prompts::expand(&prompt, &args).map_err(ProviderError::Prepare)?;
                Ok(())
            }
            Found::Skill(skill, rest) => {
                if !exists(&skill.path).await {
                    self.state.again.notify_one();
                    return Err(ProviderError::Prepare(format!(
                        "the skill `{}` is gone: `{}` no longer exists; the command list is listed again",
                        skill.name,
                        skill.path.display()
                    )));
                }
                turn.prompt.text = skill_text(&skill.name, &rest);
                if matches!(self.state.lister, OnServer::Shared(_)) {
                    *self.picked.borrow_mut() = Some(skill);
                }
                Ok(())
            }
        }
    }

    /// Has the skills listed again and waits (bounded) for the listing.
    async fn relist(&self) {
        let mut rounds = self.state.rounds.subscribe();
        rounds.borrow_and_update();
        self.state.again.notify_one();
        let _ = tokio::time::timeout(self.state.wait * 2, rounds.changed()).await;
    }
}

/// What a prompt names, owned (the list may change while the turn runs).
enum Found {
    NotOurs,
    Unknown(String),
    Skill(Skill, String),
    Prompt(Prompt, String),
}

fn resolve(extras: &Extras, text: &str) -> Found {
    match extras.lookup(text) {
        Lookup::NotOurs => Found::NotOurs,
        Lookup::Unknown { command } => Found::Unknown(command.to_owned()),
        Lookup::Skill { skill, rest } => Found::Skill(skill.clone(), rest.to_owned()),
        Lookup::Prompt { prompt, args } => Found::Prompt(prompt.clone(), args.to_owned()),
    }
}

async fn exists(path: &Path) -> bool {
    let path = path.to_path_buf();
    tokio::task::spawn_blocking(move || path.is_file())
        .await
        .unwrap_or(false)
}

/// Lists the skills and prompts now and whenever they may have changed.
async fn keep_current(state: Rc<State>) {
    let mut reload = false;
    loop {
        let changed = match &state.lister {
            OnServer::Shared(server) => match server.connect_or_say().await {
                Ok(conn) => {
                    let mut changed = conn.rpc.skills_changed();
                    changed.borrow_and_update();
                    let listed = appserver::skills::list(&conn.rpc, &state.cwd, reload);
                    state.store(state.within(listed).await);
                    Some(changed)
                }
                Err(why) => {
                    state.store(Err(why));
                    None
                }
            },
            OnServer::Own(_) => {
                let listed = state
                    .lister
                    .ask(async |own| {
                        state
                            .within(async {
                                let conn = own.connect_or_say().await?;
                                appserver::skills::list(&conn.rpc, &state.cwd, false).await
                            })
                            .await
                    })
                    .await;
                state.store(listed);
                None
            }
        };
        let prompts_read = state.read_prompts().await;
        state.store_prompts(prompts_read);
        match changed {
            // The server is the one that says; a server that went away says nothing more.
            Some(mut changed) => tokio::select! {
                gone = changed.changed() => if gone.is_err() { state.again.notified().await },
                () = state.again.notified() => {}
            },
            None => state.again.notified().await,
        }
        reload = true;
    }
}

impl State {
    async fn within(&self, listed: impl Future<Output = Listed>) -> Listed {
        tokio::time::timeout(self.wait, listed)
            .await
            .unwrap_or_else(|_| Err(format!("codex did not list its skills within {:?}", self.wait)))
    }

    /// Keeps what Codex listed (or, when it could not, what was offered) and says why any
    /// skill is left out.
    fn store(&self, listed: Listed) {
        match listed {
            Ok((skills, notes)) => {
                for note in notes {
                    tracing::warn!(cwd = %self.cwd.display(), "{note}");
                }
                tracing::debug!(skills = skills.len(), "codex listed its skills");
                self.extras.borrow_mut().skills = skills;
            }
            Err(why) => tracing::warn!("{why}; the skills offered stay as they were"),
        }
    }

    async fn read_prompts(&self) -> (Vec<Prompt>, Vec<String>) {
        let Some(dir) = codex_home(|k| std::env::var(k).ok()).map(|home| home.join("prompts")) else {
            return (Vec::new(), Vec::new());
        };
        tokio::task::spawn_blocking(move || prompts::read(&dir))
            .await
            .unwrap_or_default()
    }

    /// Keeps the prompts read, and offers the commands if they changed.
    fn store_prompts(&self, (prompts, warnings): (Vec<Prompt>, Vec<String>)) {
        for warning in warnings {
            tracing::warn!("{warning}");
        }
        self.extras.borrow_mut().prompts = prompts;
        let commands = self.extras.borrow().commands(&self.builtins);
        self.offered.send_if_modified(|offered| {
            let changed = *offered != commands;
            *offered = commands;
            changed
        });
        self.rounds.send_modify(|n| *n = n.wrapping_add(1));
    }
}
