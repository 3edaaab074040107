//! AIR's file change report for the session's turns (`session/file_report.rs`): every turn is
//! looked at when the client declared reports; each prompt that asked (the turn's own, and those
//! steered into it) gets one, right before the turn's prompts are answered, however it ends.

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
    /// A turn starts for `req`: the tracker looks at its updates (a prompt steered into it may
    /// ask too) when the client declared reports; the report `req` asks for, if any.
    pub(super) fn arm_report(&self, req: &PromptRequest) -> Vec<String> {
        let Some(reports) = self.file_report.as_ref() else {
            return Vec::new();
        };
        reports.changes.borrow_mut().arm();
        file_report::requested(req.meta.as_ref()).into_iter().collect()
    }

    /// The report `req`, steered into the running turn, asks for: sent when the turn ends.
    pub(super) fn report_steered(&mut self, req: &PromptRequest) {
        if self.file_report.is_none() {
            return;
        }
        if let (Some(id), Some(running)) = (file_report::requested(req.meta.as_ref()), self.running.as_mut())
        {
            running.reports.push(id);
        }
    }

    /// Sends the reports `ids` of the turn that ended so (`Ok`: it ran to its end).
    pub(super) fn send_reports(&self, ids: &[String], ending: Result<(), Unavailable>) {
        let Some(reports) = self.file_report.as_ref() else {
            return;
        };
        let sent = reports.changes.borrow_mut().reports(ids, ending, &reports.roots);
        for report in sent {
            self.send_report(report);
        }
    }

    /// A prompt answered without a turn (withdrawn, refused, or acplb stopping): the report it
    /// asked for, if any, says why there is none. What the running turn's tracker saw stays.
    pub(super) fn report_unasked(&self, req: &PromptRequest, why: Unavailable) {
        if self.file_report.is_some()
            && let Some(id) = file_report::requested(req.meta.as_ref())
        {
            self.send_report(file_report::unavailable(&id, why));
        }
    }

    fn send_report(&self, report: serde_json::Value) {
        tracing::debug!(session = %self.id, request = %report["requestId"], status = %report["status"], "AIR file change report sent");
        self.sink().aside(file_report::update(report));
    }
}
