//! The writing side of `decode`: serializes what the decoder produced, one JSON object per line.

use std::io::Write;
use std::sync::mpsc::Receiver;

use acplb_codex::exec::decode::Signal;
use agent_client_protocol::v1::schema::SessionUpdate;

/// The envelope every update is printed in.
const PREFIX: &[u8] =
    br#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"<session>","update":"#;
const SUFFIX: &[u8] = b"}}\n";

/// One line of output.
#[derive(Debug)]
#[allow(
    clippy::large_enum_variant,
    reason = "updates are most items; boxing would cost an allocation each"
)]
pub(super) enum Out {
    /// A `session/update` notification.
    Update(SessionUpdate),
    /// A turn signal.
    Signal(Signal),
    /// A line already serialized.
    Line(String),
}

/// Writes every batch from `rx` to `out`, then flushes.
pub(super) fn lines<W: Write>(rx: &Receiver<Vec<Out>>, out: &mut W) -> std::io::Result<()> {
    for batch in rx {
        write_batch(batch, out)?;
    }
    out.flush()
}

/// Writes one batch.
pub(super) fn write_batch<W: Write>(batch: Vec<Out>, out: &mut W) -> std::io::Result<()> {
    {
        for item in batch {
            match item {
                Out::Update(update) => {
                    out.write_all(PREFIX)?;
                    serde_json::to_writer(&mut *out, &update)?;
                    out.write_all(SUFFIX)?;
                }
                Out::Signal(signal) => {
                    serde_json::to_writer(&mut *out, &signal)?;
                    out.write_all(b"\n")?;
                }
                Out::Line(line) => {
                    out.write_all(line.as_bytes())?;
                    out.write_all(b"\n")?;
                }
            }
        }
    }
    Ok(())
}
