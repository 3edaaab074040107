//! ACP request and notification handlers. They never block: each forwards a typed command to
//! the runtime loop and returns, keeping the SDK's dispatch loop free (SDK gotchas 4 and 5).

use agent_client_protocol::JsonRpcRequest;
use agent_client_protocol::v1::schema::{
    ArchiveSessionRequest, ForkSessionRequest, SessionStatusRequest, SetSessionTitleRequest,
    UnarchiveSessionRequest,
};
use agent_client_protocol::v1::schema::{
    AuthenticateRequest, CancelNotification, CloseSessionRequest, DeleteSessionRequest, InitializeRequest,
    ListSessionsRequest, LoadSessionRequest, LogoutRequest, NewSessionRequest, PromptRequest,
    ResumeSessionRequest, SetSessionConfigOptionRequest, SetSessionModeRequest,
};
use agent_client_protocol::v1::schema::{DisableProviderRequest, ListProvidersRequest, SetProviderRequest};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, ConnectTo, on_receive_notification, on_receive_request};
use tokio::sync::mpsc::UnboundedSender;

use super::ServerOptions;
use super::routing::RoutingCall;
use super::shelf::ShelfCommand;
use super::store::Command;

/// The one request handler, for every ACP request: `forward!(tx, |req: R, responder, cx| cmd)`
/// is an async closure that wraps the request, its responder and the connection in a runtime
/// [`Command`] and sends it, never awaiting anything. A macro, not a generic function: the SDK's
/// handler bound needs the closure's future to be `Send`, which an `impl AsyncFnMut` return type
/// cannot state.
macro_rules! forward {
    ($tx:ident, |$req:ident: $ty:ty, $responder:ident, $cx:pat_param| $cmd:expr) => {{
        let tx = $tx.clone();
        async move |$req: $ty,
                    $responder: Responder<<$ty as JsonRpcRequest>::Response>,
                    $cx: ConnectionTo<Client>| {
            forward(&tx, $cmd);
            Ok(())
        }
    }};
}

/// Serves ACP on `transport` until the client hangs up: a client asking for protocol v2 gets
/// the v2 face over the same handlers (ADR 0048), any other the handlers themselves.
pub(super) async fn serve(
    tx: UnboundedSender<Command>,
    options: &ServerOptions,
    transport: impl ConnectTo<Agent> + 'static,
) -> Result<(), agent_client_protocol::Error> {
    let name = options.agent_name.clone();
    let v2 = crate::acp2::V2Face::new(v1(&tx, name.clone()), name.clone());
    Agent
        .protocol_router()
        .with_v1(v1(&tx, name))
        .with_v2(v2)
        .connect_to(transport)
        .await
}

/// ACP v1: handlers that forward to `tx`.
#[allow(clippy::too_many_lines, reason = "a table: one forward per ACP method")]
fn v1(tx: &UnboundedSender<Command>, name: String) -> impl ConnectTo<Client> + use<> {
    let tx = tx.clone();
    let cancel_tx = tx.clone();
    Agent
        .v1()
        .name(name)
        .on_receive_request(
            forward!(tx, |req: InitializeRequest, responder, cx| Command::Initialize {
                req: Box::new(req),
                responder,
                cx,
            }),
            on_receive_request!(),
        )
        .on_receive_request(
            forward!(tx, |req: NewSessionRequest, responder, cx| Command::NewSession {
                req,
                responder,
                cx,
            }),
            on_receive_request!(),
        )
        .on_receive_request(
            forward!(tx, |req: PromptRequest, responder, _| Command::Prompt {
                req,
                responder,
            }),
            on_receive_request!(),
        )
        .on_receive_request(
            forward!(tx, |req: SetSessionModeRequest, responder, _| Command::SetMode {
                req,
                responder,
            }),
            on_receive_request!(),
        )
        .on_receive_request(
            forward!(tx, |req: SetSessionConfigOptionRequest, responder, _| {
                Command::SetConfig { req, responder }
            }),
            on_receive_request!(),
        )
        .on_receive_request(
            forward!(tx, |req: LoadSessionRequest, responder, cx| {
                Command::LoadSession { req, responder, cx }
            }),
            on_receive_request!(),
        )
        .on_receive_request(
            forward!(tx, |req: ResumeSessionRequest, responder, cx| {
                Command::ResumeSession { req, responder, cx }
            }),
            on_receive_request!(),
        )
        .on_receive_request(
            forward!(tx, |req: ListSessionsRequest, responder, _| {
                Command::ListSessions { req, responder }
            }),
            on_receive_request!(),
        )
        .on_receive_request(
            forward!(tx, |req: CloseSessionRequest, responder, _| {
                Command::CloseSession { req, responder }
            }),
            on_receive_request!(),
        )
        .on_receive_request(
            forward!(tx, |req: AuthenticateRequest, responder, cx| {
                Command::Authenticate { req, responder, cx }
            }),
            on_receive_request!(),
        )
        .on_receive_request(
            forward!(tx, |_req: LogoutRequest, responder, _| Command::Logout {
                responder
            }),
            on_receive_request!(),
        )
        .on_receive_request(
            forward!(
                tx,
                |_req: agent_client_protocol::v1::schema::AuthStatusRequest, responder, _| {
                    Command::AuthStatus { responder }
                }
            ),
            on_receive_request!(),
        )
        .on_receive_request(
            forward!(tx, |req: super::batch_get::BatchGetRequest, responder, _| {
                Command::BatchGet { req, responder }
            }),
            on_receive_request!(),
        )
        .on_receive_request(
            forward!(tx, |req: super::goal::GoalRequest, responder, _| {
                Command::Goal { req, responder }
            }),
            on_receive_request!(),
        )
        .on_receive_request(
            forward!(tx, |req: super::goal::LegacyGoalRequest, responder, _| {
                Command::Goal {
                    req: req.into(),
                    responder,
                }
            }),
            on_receive_request!(),
        )
        .on_receive_request(
            forward!(tx, |req: DeleteSessionRequest, responder, _| {
                Command::DeleteSession { req, responder }
            }),
            on_receive_request!(),
        )
        .on_receive_request(
            forward!(tx, |req: ForkSessionRequest, responder, cx| {
                Command::Shelf(ShelfCommand::Fork {
                    req: Box::new(req),
                    responder,
                    cx,
                })
            }),
            on_receive_request!(),
        )
        .on_receive_request(
            forward!(tx, |req: SetSessionTitleRequest, responder, _| {
                Command::Shelf(ShelfCommand::Title { req, responder })
            }),
            on_receive_request!(),
        )
        .on_receive_request(
            forward!(tx, |req: ArchiveSessionRequest, responder, _| {
                Command::Shelf(ShelfCommand::Archive { req, responder })
            }),
            on_receive_request!(),
        )
        .on_receive_request(
            forward!(tx, |req: UnarchiveSessionRequest, responder, _| {
                Command::Shelf(ShelfCommand::Unarchive { req, responder })
            }),
            on_receive_request!(),
        )
        .on_receive_request(
            forward!(tx, |req: SessionStatusRequest, responder, _| {
                Command::Shelf(ShelfCommand::Status { req, responder })
            }),
            on_receive_request!(),
        )
        .on_receive_request(
            forward!(tx, |_req: ListProvidersRequest, responder, _| {
                Command::Routing(RoutingCall::List(responder))
            }),
            on_receive_request!(),
        )
        .on_receive_request(
            forward!(tx, |req: SetProviderRequest, responder, _| {
                Command::Routing(RoutingCall::Set(Box::new(req), responder))
            }),
            on_receive_request!(),
        )
        .on_receive_request(
            forward!(tx, |req: DisableProviderRequest, responder, _| {
                Command::Routing(RoutingCall::Disable(req, responder))
            }),
            on_receive_request!(),
        )
        // Last: every request no handler above took (vendor methods, unknown ones).
        .on_receive_request(
            forward!(tx, |req: super::unclaimed::Unclaimed, responder, cx| {
                Command::Vendor {
                    req: req.0,
                    responder,
                    cx,
                }
            }),
            on_receive_request!(),
        )
        .on_receive_notification(
            async move |n: CancelNotification, _cx: ConnectionTo<Client>| {
                forward(
                    &cancel_tx,
                    Command::Cancel {
                        session_id: n.session_id,
                    },
                );
                Ok(())
            },
            on_receive_notification!(),
        )
}

fn forward(tx: &UnboundedSender<Command>, cmd: Command) {
    if tx.send(cmd).is_err() {
        // Only during shutdown; the dropped responder answers with an internal error.
        tracing::debug!("runtime is shutting down; request dropped");
    }
}
