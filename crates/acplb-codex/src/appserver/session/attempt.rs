//! One try of a turn on the server as it is now: the connection and the thread, the turn's
//! views (its decoder, its subagents, taken up from the last turn when some still work), the
//! request that starts it, the drive to its end, and what the session keeps after it.

use super::super::rpc::Inbox;
use super::background;
use super::turn::{Ended, TurnRun};
use super::{
    AppDecoder, AppSession, CancellationToken, Conn, ImageFiles, ProviderError, RpcFailure, SessionSink,
    SessionUpdate, Slash, Start, Subagents, Totals, TurnOutcome, TurnRequest, cancelled, inject_instructions,
    start_request, turn_input,
};
use crate::transcript::Transcript;

impl AppSession {
    /// Runs the turn on the server as it is now; `None` (only when `may_retry`) when the server
    /// turned out to have exited before the turn started, so nothing of it ran. A server acplb
    /// stopped for not answering is not tried again: the turn fails, as it waited long enough.
    pub(super) async fn attempt(
        &mut self,
        turn: &TurnRequest,
        slash: Option<Slash>,
        skill: Option<crate::skills::Skill>,
        sink: &dyn SessionSink,
        cancel: &CancellationToken,
        may_retry: bool,
    ) -> Result<Option<TurnOutcome>, ProviderError> {
        let mut transcript = self.transcript(!may_retry);
        let conn = tokio::select! {
            biased;
            () = cancel.cancelled() => return Ok(Some(cancelled())),
            conn = self.server.connect() => conn?,
        };
        transcript.start_app_server(
            self.known_thread.as_deref(),
            &self.setup.cwd,
            turn.prompt.text.len(),
            conn.generation,
        );
        let found = tokio::select! {
            biased;
            () = cancel.cancelled() => return Ok(Some(cancelled())),
            started = self.thread(&conn, turn, sink, &mut transcript) => started?,
        };
        let images = ImageFiles::write(&turn.prompt.images).await?;
        let collaboration = self.collaboration(slash.as_ref(), turn);
        let Some(thread_id) = self.thread.as_ref().map(|t| t.id.clone()) else {
            return Err(ProviderError::Prepare("no codex thread".into()));
        };
        if let Some(thread) = self.thread.as_mut() {
            // Stale messages of an earlier turn (after an interrupt) are of no use now.
            thread.inbox.drain();
        }
        conn.rpc.set_active(&thread_id, true);
        // The subagents the last turn left working go on in this one, once the follower has
        // shown what came of them before (what comes now is this turn's).
        let mut taken_up = Vec::new();
        let fresh = self.fresh_subagents(&thread_id);
        let subagents = background::take_up(
            &self.parked,
            self.idle.as_ref(),
            fresh,
            self.decoder_options(),
            &mut taken_up,
        )
        .await;
        inject_instructions(&conn.rpc, &mut transcript, &thread_id, found, turn).await;
        let mut start = start_request(
            slash,
            &thread_id,
            turn,
            &self.setup.cwd,
            images.paths(),
            &self.setup.additional_directories,
            collaboration,
        );
        if let (Start::Turn(start), Some(skill)) = (&mut start, skill) {
            turn_input::add_skill(&mut start.input, &skill.name, &skill.path);
        }
        let start_totals = self.totals;
        let mut run = self.turn_run(&conn, &thread_id, transcript, subagents, taken_up);
        let parked = self.parked.clone();
        let Some(thread) = self.thread.as_mut() else {
            return Err(ProviderError::Prepare("no codex thread".into()));
        };
        let inbox = &mut thread.inbox;
        let started = tokio::select! {
            biased;
            () = cancel.cancelled() => None,
            started = start.send(&conn.rpc, &mut run.transcript) => Some(started),
        };
        let end = match started {
            None => Ended::Cancelled,
            // It exited on its own (not stopped by acplb for not answering) and said nothing
            // of this turn: the turn never began there.
            Some(Err(RpcFailure::Gone(gone)))
                if may_retry && gone.unanswered.is_none() && !cancel.is_cancelled() && inbox.only_gone() =>
            {
                tracing::info!(session = %self.setup.session_id, status = %gone.status, "codex app-server was gone when the turn started; starting it on a new one");
                self.announced = run.never_began(&parked, &self.background, inbox, &self.editor, sink);
                return Ok(None);
            }
            Some(Err(failure)) => {
                self.announced = run.never_began(&parked, &self.background, inbox, &self.editor, sink);
                return Err(self.start_failed(&start, &failure));
            }
            Some(Ok(result)) => {
                run.started(&start, &result);
                run.drive(inbox, sink, cancel, &turn.steer).await
            }
        };
        drop(images);
        conn.rpc.set_active(&thread_id, false);
        background::take_rest(
            &self.background,
            &mut run.decoder,
            &mut run.subagents,
            inbox,
            &conn.rpc,
            &self.editor,
            sink,
        );
        self.after(run, end, &start_totals, sink)
    }

    /// The subagents of a turn on `thread` that takes up none from the last.
    fn fresh_subagents(&self, thread: &str) -> Subagents {
        Subagents::new(thread, self.decoder_options())
            .with_sessions(self.setup.session_id.clone(), self.setup.client_subagents)
            .knowing(self.announced.clone())
    }

    /// A turn on `thread_id` of `conn`'s server, about to start.
    fn turn_run<'c>(
        &self,
        conn: &'c Conn,
        thread_id: &'c str,
        transcript: Transcript,
        subagents: Subagents,
        out: Vec<SessionUpdate>,
    ) -> TurnRun<'c> {
        TurnRun {
            rpc: &conn.rpc,
            marker: &conn.marker,
            thread_id,
            turn_id: None,
            decoder: AppDecoder::new(self.decoder_options()),
            totals: None,
            title: None,
            out,
            waiting: Vec::new(),
            transcript,
            usage: None,
            subagents,
            notices: self.setup.client_shows_notices,
            background: self.background.clone(),
            goal: self.goal.clone(),
            next_turn_by: None,
            held_end: None,
            children_by: None,
            children_wait: self.server.options().subagent_wait,
            child_asks: Vec::new(),
            editor: self.editor.clone(),
            stopping: false,
        }
    }

    /// What the session keeps of a turn that ran (`end`): its goal, its subagents (those still
    /// working shown on between turns), what it taught; and its outcome.
    fn after(
        &mut self,
        mut run: TurnRun<'_>,
        end: Ended,
        start_totals: &Totals,
        sink: &dyn SessionSink,
    ) -> Result<Option<TurnOutcome>, ProviderError> {
        self.goal = run.goal.take();
        self.announced = run.subagents.announced();
        if matches!(end, Ended::Gone(_)) {
            // Its server went, and its subagents with it: nothing of them goes on to the next
            // server (what they asked belongs to the old one: nobody answers it there).
            let mut out = Vec::new();
            run.subagents
                .close_open("Codex's server stopped, and this subagent with it.", &mut out);
            drop(run.subagents.withdraw_all());
            for update in out {
                sink.update(update);
            }
        }
        if run.subagents.parks() {
            let mut out = Vec::new();
            run.subagents.park(&mut out);
            for update in out {
                sink.update(update);
            }
            let idle = Subagents::new(run.thread_id, self.decoder_options());
            self.parked.keep(std::mem::replace(&mut run.subagents, idle));
        } else {
            // Nobody shows them now: what they asked between turns is answered "cancel".
            super::follower::withdraw_all(&mut run.subagents, run.rpc);
        }
        let failure = self.conclude(run, &end, sink);
        self.outcome(end, start_totals, failure).map(Some)
    }
}

impl TurnRun<'_> {
    /// The turn never began on the server: it is no longer active, and the subagents it took
    /// up go back for the next try, with what came of them meanwhile; what it knows of them.
    fn never_began(
        &mut self,
        parked: &background::Parked,
        shared: &background::Shared,
        inbox: &mut Inbox,
        editor: &background::Editor,
        sink: &dyn SessionSink,
    ) -> Vec<String> {
        self.rpc.set_active(self.thread_id, false);
        let announced = self.subagents.announced();
        // The editor never saw the turn's offer of their cancel, so nothing is said of it.
        self.subagents.park(&mut Vec::new());
        background::take_rest(
            shared,
            &mut self.decoder,
            &mut self.subagents,
            inbox,
            self.rpc,
            editor,
            sink,
        );
        if self.subagents.parks() {
            let empty = Subagents::new(self.thread_id, super::DecoderOptions::new(""));
            parked.keep(std::mem::replace(&mut self.subagents, empty));
        }
        announced
    }
}
