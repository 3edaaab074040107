//! AIR's file change report for the session's turns (`session/file_report.rs`): armed when a
//! prompt asks for one, sent once, right before that prompt is answered, however the turn ends.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

use agent_client_protocol::v1::schema::PromptRequest;

use super::SessionActor;
use crate::session::file_report::{self, FileChanges, Unavailable};

/// A session's reports: the changes its sink shows, and the folders a reported path must be in.
pub(crate) struct Reports {
    changes: Rc<RefCell<FileChanges>>,
    roots: Vec<PathBuf>,
}

impl Reports {
    pub(crate) fn new(roots: Vec<PathBuf>) -> Self {
        Self {
            changes: Rc::default(),
            roots,
        }
    }

    /// What the session's sink shows its updates to.
    pub(crate) fn changes(&self) -> Rc<RefCell<FileChanges>> {
        Rc::clone(&self.changes)
    }
}

impl SessionActor {
    /// The report `req` asks for, armed for the turn it starts (`None`: it asks for none, or
    /// the client did not declare reports).
    pub(super) fn arm_report(&self, req: &PromptRequest) -> Option<String> {
        let reports = self.file_report.as_ref()?;
        let id = file_report::requested(req.meta.as_ref())?;
        reports.changes.borrow_mut().arm();
        Some(id)
    }

    /// Sends the report `id` of the turn that ended so (`Ok`: it ran to its end).
    pub(super) fn send_report(&self, id: Option<String>, ending: Result<(), Unavailable>) {
        let (Some(id), Some(reports)) = (id, self.file_report.as_ref()) else {
            return;
        };
        let report = reports.changes.borrow_mut().report(&id, ending, &reports.roots);
        tracing::debug!(session = %self.id, request = %id, status = %report["status"], "AIR file change report sent");
        self.sink().aside(file_report::update(report));
    }

    /// A prompt answered without a turn (withdrawn, or acplb stopping): the report it asked
    /// for, if any, says why there is none.
    pub(super) fn report_unasked(&self, req: &PromptRequest, why: Unavailable) {
        if self.file_report.is_some() {
            self.send_report(file_report::requested(req.meta.as_ref()), Err(why));
        }
    }
}
