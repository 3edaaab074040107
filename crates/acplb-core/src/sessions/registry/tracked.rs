//! One session's registry entry as the runtime keeps it current: every change goes to the
//! writer thread, so nothing here waits.

use std::time::SystemTime;

use super::entry::{Entry, Status};
use super::repo::RepoInfo;
use super::writer::{Change, Op, RegistryWriter};

/// The registry entry of one open session.
#[derive(Debug, Clone)]
pub struct Tracked {
    writer: RegistryWriter,
    key: String,
    id: String,
}

impl Tracked {
    /// Writes `entry` (the session opened in this process, `active`) and fills in its
    /// repository on the writer thread (it reads `.git`); later changes go to the same file.
    pub fn open(writer: RegistryWriter, entry: Entry) -> Tracked {
        let (key, id) = (entry.key(), entry.session_id.clone());
        let cwd = entry.cwd.clone();
        writer.send(Change::upsert(entry));
        let repo = Op::Edit(Box::new(move |e: &mut Entry| {
            if let Some(repo) = RepoInfo::find(&cwd) {
                e.repo_root = Some(repo.root);
                e.repo_name = Some(repo.name);
                e.branch = repo.branch;
            }
        }));
        writer.send(Change::new(key.clone(), id.clone(), repo));
        Tracked { writer, key, id }
    }

    fn send(&self, op: Op) {
        self.writer
            .send(Change::new(self.key.clone(), self.id.clone(), op));
    }

    /// A turn started (`active`) or ended (`idle`); either way the session was just used.
    pub fn busy(&self, busy: bool) {
        self.send(Op::Status(if busy { Status::Active } else { Status::Idle }));
        self.send(Op::Touch(SystemTime::now()));
    }

    /// The session's title.
    pub fn title(&self, title: String) {
        self.send(Op::Title(Some(title)));
    }

    /// The provider's thread id.
    pub fn thread(&self, id: &str) {
        self.send(Op::ThreadId(id.to_owned()));
    }

    /// The session is no longer open in this process: `closed`, `idle` (acplb stopped) or
    /// `interrupted` (acplb stopped without its summary); the process no longer holds it.
    pub fn released(&self, status: Status) {
        self.send(Op::Edit(Box::new(move |e: &mut Entry| {
            e.status = status;
            e.pid = None;
        })));
    }

    /// The writer, to flush it.
    pub fn writer(&self) -> &RegistryWriter {
        &self.writer
    }
}
