//! ACP protocol v2 (draft; the SDK's `unstable_protocol_v2`) as a face over the v1 runtime
//! (ADR 0048). A client whose `initialize` asks for v2 gets this face; it speaks v2 to the
//! client and v1, over an in-process channel, to the same runtime every v1 client gets. So every
//! session feature acplb has reaches a v2 client the day it reaches a v1 client, and the runtime
//! knows one protocol.

mod content;
mod face;
mod inner;
mod requests;
mod state;
mod updates;

use std::sync::Arc;

use agent_client_protocol::{Agent, Channel, Client, ConnectTo, UntypedMessage};
use agent_client_protocol::{on_receive_notification, on_receive_request};
use serde_json::Value;

use face::{Face, Outer, Responder};

/// The v2 face over `runtime`, the v1 agent that serves it.
pub(crate) struct V2Face<R> {
    runtime: R,
    name: String,
}

impl<R: ConnectTo<Client>> V2Face<R> {
    /// The face over `runtime`, telling clients it is `name`.
    pub(crate) fn new(runtime: R, name: String) -> Self {
        Self { runtime, name }
    }
}

impl<R: ConnectTo<Client>> ConnectTo<Client> for V2Face<R> {
    async fn connect_to(self, client: impl ConnectTo<Agent>) -> Result<(), agent_client_protocol::Error> {
        let (near, far) = Channel::duplex();
        let runtime = self.runtime.connect_to(far);
        let face = Arc::new(Face::default());
        let (for_notes, for_asks) = (face.clone(), face.clone());
        let bridge = Client
            .v1()
            .name(self.name.clone())
            .on_receive_notification(
                async move |n: UntypedMessage, _cx| {
                    let (method, params) = n.into_parts();
                    inner::notification(&for_notes, &method, params);
                    Ok(())
                },
                on_receive_notification!(),
            )
            .on_receive_request(
                async move |r: UntypedMessage,
                            responder: agent_client_protocol::v1::Responder<Value>,
                            _cx| {
                    let (method, params) = r.into_parts();
                    inner::request(&for_asks, &method, params, responder);
                    Ok(())
                },
                on_receive_request!(),
            )
            .connect_with(near, async move |inner| {
                face.set_inner(inner);
                outer(face, self.name).connect_to(client).await
            });
        let (ran, bridged) = futures::join!(runtime, bridge);
        bridged.and(ran)
    }
}

/// The v2 agent the client talks to: every request and notification to the face.
fn outer(face: Arc<Face>, name: String) -> impl ConnectTo<Client> {
    let for_notes = face.clone();
    Agent
        .v2()
        .name(name)
        .on_receive_request(
            async move |r: UntypedMessage, responder: Responder, cx: Outer| {
                face.set_outer(&cx);
                let (method, params) = r.into_parts();
                face::request(&face, &method, params, responder);
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            async move |n: UntypedMessage, cx: Outer| {
                for_notes.set_outer(&cx);
                forward_notification(&for_notes, n);
                Ok(())
            },
            on_receive_notification!(),
        )
}

/// A v2 client notification: `session/cancel` and vendor notifications reach the runtime.
fn forward_notification(face: &Face, n: UntypedMessage) {
    if n.method() == "session/cancel" || n.method().starts_with('_') {
        face.notify_inner(n);
    } else {
        tracing::debug!(
            method = n.method(),
            "a v2 notification acplb does not take is ignored"
        );
    }
}
