//! The tracing layer: find the worker an event belongs to, format it like `fmt`, write it.

use std::cell::RefCell;
use std::fmt;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::{DefaultFields, Writer};
use tracing_subscriber::fmt::{FormatFields, MakeWriter};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

use super::files::WorkerFiles;
use super::{LogError, WORKER_FIELD};

/// A [`Layer`] that writes every event emitted inside a span with a `worker` field to that
/// worker's own log file, `<log_dir>/<worker>.log`.
///
/// Lines look like those of a non-ANSI `tracing_subscriber::fmt` layer (time, level, span
/// context, target, message and fields), with secrets redacted by [`acplb_core::redact`].
/// Events outside every worker span are left to the other layers. Each file is rotated once it
/// would exceed `max_bytes`, keeping `keep` older files (`<worker>.log.1` is the newest of them).
/// Failures to write are counted ([`WorkerLogs::error_count`]), never printed: the log is where
/// they would be reported.
///
/// ```no_run
/// use tracing_subscriber::layer::SubscriberExt;
/// # fn main() -> Result<(), acplb_worker::logs::LogError> {
/// let logs = acplb_worker::logs::WorkerLogs::new("/tmp/acplb-logs".as_ref(), 10 << 20, 5)?;
/// let subscriber = tracing_subscriber::registry().with(logs);
/// tracing::subscriber::with_default(subscriber, || {
///     let _span = tracing::info_span!("worker", worker = "ada@docs").entered();
///     tracing::info!("answered a message"); // goes to /tmp/acplb-logs/ada@docs.log
/// });
/// # Ok(()) }
/// ```
pub struct WorkerLogs<S> {
    /// Formats like `fmt`; its writer hands the line back through [`LINE`].
    format:
        tracing_subscriber::fmt::Layer<S, PlainFields, tracing_subscriber::fmt::format::Format, LineBuffer>,
    files: WorkerFiles,
}

impl<S> fmt::Debug for WorkerLogs<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkerLogs")
            .field("files", &self.files)
            .finish_non_exhaustive()
    }
}

/// How many lines the layer could not write (see [`WorkerLogs::error_count`]).
#[derive(Debug, Clone)]
pub struct ErrorCount(Arc<AtomicU64>);

impl ErrorCount {
    /// Lines lost so far.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

impl<S> WorkerLogs<S>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    /// A layer writing under `log_dir` (created 0700 if missing), rotating each file at
    /// `max_bytes` and keeping `keep` older files. Production uses 10 MB and 5.
    pub fn new(log_dir: &std::path::Path, max_bytes: u64, keep: usize) -> Result<Self, LogError> {
        let format = tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .fmt_fields(PlainFields::default())
            .log_internal_errors(false)
            .with_writer(LineBuffer);
        Ok(Self {
            format,
            files: WorkerFiles::new(log_dir, max_bytes, keep)?,
        })
    }
}

impl<S> WorkerLogs<S> {
    /// A handle on the count of lines that could not be written; it stays valid after the layer
    /// is moved into a subscriber.
    pub fn error_count(&self) -> ErrorCount {
        ErrorCount(self.files.errors())
    }
}

impl<S> Layer<S> for WorkerLogs<S>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut visitor = WorkerVisitor(None);
        attrs.record(&mut visitor);
        if let (Some(worker), Some(span)) = (visitor.0, ctx.span(id)) {
            span.extensions_mut().insert(WorkerName(worker));
        }
        self.format.on_new_span(attrs, id, ctx);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let mut visitor = WorkerVisitor(None);
        values.record(&mut visitor);
        if let (Some(worker), Some(span)) = (visitor.0, ctx.span(id)) {
            span.extensions_mut().replace(WorkerName(worker));
        }
        self.format.on_record(id, values, ctx);
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let Some(worker) = worker_of(event, &ctx) else {
            return;
        };
        let Some(line) = format_line(|| self.format.on_event(event, ctx)) else {
            return;
        };
        let line = acplb_core::redact::redact(&String::from_utf8_lossy(&line));
        self.files.write_line(&worker, line.as_bytes());
    }

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        self.format.on_enter(id, ctx);
    }

    fn on_exit(&self, id: &Id, ctx: Context<'_, S>) {
        self.format.on_exit(id, ctx);
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        self.format.on_close(id, ctx);
    }
}

/// The innermost worker span around `event`, if any.
fn worker_of<S>(event: &Event<'_>, ctx: &Context<'_, S>) -> Option<String>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    ctx.event_scope(event)?
        .find_map(|span| span.extensions().get::<WorkerName>().map(|w| w.0.clone()))
}

/// The `worker` field of a span, as recorded on it.
#[derive(Debug)]
struct WorkerName(String);

struct WorkerVisitor(Option<String>);

impl Visit for WorkerVisitor {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == WORKER_FIELD {
            self.0 = Some(value.to_owned());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        // `worker = %name` arrives here, as a value whose `Debug` is its `Display`.
        if field.name() == WORKER_FIELD {
            self.0 = Some(format!("{value:?}"));
        }
    }
}

thread_local! {
    /// The line the `fmt` layer just formatted on this thread, on its way to [`WorkerFiles`].
    static LINE: RefCell<Option<Vec<u8>>> = const { RefCell::new(None) };
}

/// Runs `format` (one `fmt` layer `on_event`) and returns the line it wrote to [`LineBuffer`].
fn format_line(format: impl FnOnce()) -> Option<Vec<u8>> {
    // A `try_` borrow: an event emitted while formatting (none today) is dropped, not a panic.
    let started = LINE.with(|cell| {
        cell.try_borrow_mut()
            .map(|mut line| *line = Some(Vec::new()))
            .is_ok()
    });
    if !started {
        return None;
    }
    format();
    LINE.with(|cell| cell.try_borrow_mut().ok().and_then(|mut line| line.take()))
}

/// The `fmt` layer's writer: appends to this thread's [`LINE`].
#[derive(Debug, Clone, Copy)]
struct LineBuffer;

impl io::Write for LineBuffer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        LINE.with(|cell| match cell.try_borrow_mut() {
            Ok(mut line) => {
                if let Some(line) = line.as_mut() {
                    line.extend_from_slice(buf);
                }
                Ok(buf.len())
            }
            Err(_) => Err(io::Error::other("the line buffer is busy")),
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for LineBuffer {
    type Writer = LineBuffer;

    fn make_writer(&'a self) -> Self::Writer {
        *self
    }
}

/// `fmt`'s default field format under a type of our own: span fields formatted by this layer
/// are stored in the span under this type, apart from an ANSI stderr layer's.
#[derive(Debug, Default)]
struct PlainFields(DefaultFields);

impl<'w> FormatFields<'w> for PlainFields {
    fn format_fields<R: tracing_subscriber::field::RecordFields>(
        &self,
        writer: Writer<'w>,
        fields: R,
    ) -> fmt::Result {
        self.0.format_fields(writer, fields)
    }
}
