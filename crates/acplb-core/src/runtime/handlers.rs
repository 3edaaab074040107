//! ACP request and notification handlers. They never block: each forwards a typed command to
//! the runtime loop and returns, keeping the SDK's dispatch loop free (SDK gotchas 4 and 5).

use agent_client_protocol::v1::schema::{
    CancelNotification, CloseSessionRequest, CloseSessionResponse, InitializeRequest, InitializeResponse,
    ListSessionsRequest, ListSessionsResponse, LoadSessionRequest, LoadSessionResponse, NewSessionRequest,
    NewSessionResponse, PromptRequest, PromptResponse, ResumeSessionRequest, ResumeSessionResponse,
    SetSessionConfigOptionRequest, SetSessionConfigOptionResponse, SetSessionModeRequest,
    SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, ConnectTo, on_receive_notification, on_receive_request};
use tokio::sync::mpsc::UnboundedSender;

use super::ServerOptions;
use super::store::Command;

/// Serves ACP on `transport` with handlers that forward to `tx`, until the client hangs up.
#[allow(clippy::too_many_lines)] // One builder chain, one short handler per ACP method.
pub(super) async fn serve(
    tx: UnboundedSender<Command>,
    options: &ServerOptions,
    transport: impl ConnectTo<Agent> + 'static,
) -> Result<(), agent_client_protocol::Error> {
    let (t1, t2, t3, t4, t5) = (tx.clone(), tx.clone(), tx.clone(), tx.clone(), tx.clone());
    let (t6, t7, t8, t9) = (tx.clone(), tx.clone(), tx.clone(), tx.clone());
    Agent
        .v1()
        .name(options.agent_name.clone())
        .on_receive_request(
            async move |req: InitializeRequest,
                        responder: Responder<InitializeResponse>,
                        _cx: ConnectionTo<Client>| {
                forward(
                    &t1,
                    Command::Initialize {
                        req: Box::new(req),
                        responder,
                    },
                );
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: NewSessionRequest,
                        responder: Responder<NewSessionResponse>,
                        cx: ConnectionTo<Client>| {
                forward(&t2, Command::NewSession { req, responder, cx });
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: PromptRequest,
                        responder: Responder<PromptResponse>,
                        _cx: ConnectionTo<Client>| {
                forward(&t3, Command::Prompt { req, responder });
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: SetSessionModeRequest,
                        responder: Responder<SetSessionModeResponse>,
                        _cx: ConnectionTo<Client>| {
                forward(&t4, Command::SetMode { req, responder });
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: SetSessionConfigOptionRequest,
                        responder: Responder<SetSessionConfigOptionResponse>,
                        _cx: ConnectionTo<Client>| {
                forward(&t5, Command::SetConfig { req, responder });
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: LoadSessionRequest,
                        responder: Responder<LoadSessionResponse>,
                        cx: ConnectionTo<Client>| {
                forward(&t6, Command::LoadSession { req, responder, cx });
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ResumeSessionRequest,
                        responder: Responder<ResumeSessionResponse>,
                        cx: ConnectionTo<Client>| {
                forward(&t7, Command::ResumeSession { req, responder, cx });
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ListSessionsRequest,
                        responder: Responder<ListSessionsResponse>,
                        _cx: ConnectionTo<Client>| {
                forward(&t8, Command::ListSessions { req, responder });
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: CloseSessionRequest,
                        responder: Responder<CloseSessionResponse>,
                        _cx: ConnectionTo<Client>| {
                forward(&t9, Command::CloseSession { req, responder });
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            async move |n: CancelNotification, _cx: ConnectionTo<Client>| {
                forward(
                    &tx,
                    Command::Cancel {
                        session_id: n.session_id,
                    },
                );
                Ok(())
            },
            on_receive_notification!(),
        )
        .connect_to(transport)
        .await
}

fn forward(tx: &UnboundedSender<Command>, cmd: Command) {
    if tx.send(cmd).is_err() {
        // Only during shutdown; the dropped responder answers with an internal error.
        tracing::debug!("runtime is shutting down; request dropped");
    }
}
