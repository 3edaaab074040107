//! Commit read receipts only after the tool response carrying the messages has been written.
//!
//! rmcp has no per-response callback: a handler's result goes through the service loop to
//! `Transport::send` in a spawned task. So the hook is the transport itself. `atm_read` parks its
//! receipt under the JSON-RPC request id; this wrapper takes it out when the response with that
//! id is sent, and commits it once the inner send (framed write plus flush to stdout) succeeded.
//! If the write fails, or the response is never sent (the request was cancelled), the receipt
//! is not committed and the next read delivers the messages again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::RoleServer;
use rmcp::model::{JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use crate::mail::{MailBackend, ReadReceipt};

/// Receipts waiting for their response to be written, by request id.
#[derive(Debug, Clone, Default)]
pub(crate) struct PendingReceipts(Arc<Mutex<HashMap<RequestId, ReadReceipt>>>);

impl PendingReceipts {
    pub(crate) fn park(&self, id: RequestId, receipt: ReadReceipt) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, receipt);
    }

    fn take(&self, id: &RequestId) -> Option<ReadReceipt> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).remove(id)
    }
}

/// A server transport that commits parked receipts after their response is written.
pub(crate) struct CommitAfterWrite<T> {
    inner: T,
    pending: PendingReceipts,
    backend: Arc<dyn MailBackend>,
}

impl<T> CommitAfterWrite<T> {
    pub(crate) fn new(inner: T, pending: PendingReceipts, backend: Arc<dyn MailBackend>) -> Self {
        Self {
            inner,
            pending,
            backend,
        }
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for CommitAfterWrite<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let id = match &item {
            JsonRpcMessage::Response(r) => Some(&r.id),
            JsonRpcMessage::Error(e) => e.id.as_ref(),
            JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => None,
        };
        // Taken now, so an error response or a failed write drops it uncommitted.
        let receipt = id.and_then(|id| self.pending.take(id));
        // A receipt left behind by a cancelled read must not ride on a later response that
        // reuses its request id: commit only if this response really carries those messages.
        let receipt = receipt.filter(|r| carries(&item, r));
        let is_result = matches!(item, JsonRpcMessage::Response(_));
        let backend = Arc::clone(&self.backend);
        let send = self.inner.send(item);
        async move {
            let written = send.await;
            if let (Ok(()), true, Some(receipt)) = (&written, is_result, receipt) {
                commit(backend, receipt).await;
            }
            written
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        // Cancellation safety is the inner transport's: we add nothing across the await.
        self.inner.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// Whether the serialised response mentions every message id of `receipt`.
fn carries(item: &TxJsonRpcMessage<RoleServer>, receipt: &ReadReceipt) -> bool {
    serde_json::to_string(item)
        .is_ok_and(|text| receipt.message_ids().iter().all(|id| text.contains(id.as_str())))
}

async fn commit(backend: Arc<dyn MailBackend>, receipt: ReadReceipt) {
    let ids = receipt.message_ids().len();
    match tokio::task::spawn_blocking(move || backend.commit(&receipt)).await {
        Ok(Ok(marked)) => tracing::debug!(
            ids,
            marked,
            "committed read receipt after the response was written"
        ),
        Ok(Err(error)) => {
            tracing::warn!(%error, "marking delivered mail read failed; it will be delivered again");
        }
        Err(error) => tracing::warn!(%error, "commit task failed; the mail will be delivered again"),
    }
}
