//! What a panic does (ADR 0050): acplb says what happened on stderr and stops at once with exit
//! status 101, in every build. Release builds do not unwind (`panic = "abort"`), so nothing would
//! be left to catch a panic anyway; this hook makes the end the same in debug builds and tests,
//! and makes it a plain exit instead of `SIGABRT` (no core file, which could hold conversation
//! text and secrets).

use std::backtrace::{Backtrace, BacktraceStatus};
use std::io::Write as _;
use std::panic::PanicHookInfo;
use std::sync::mpsc;
use std::time::Duration;

/// The exit status after a panic (what Rust's own runtime uses when `main` panics).
pub const PANIC_EXIT_STATUS: i32 = 101;

/// How long the report gets to reach stderr; a reader that stopped reading does not keep a
/// broken acplb alive.
const WRITE_LIMIT: Duration = Duration::from_millis(500);

/// Installs the hook. Call it first thing in `main`.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let thread = std::thread::current();
        let backtrace = Backtrace::capture();
        let trace = (backtrace.status() == BacktraceStatus::Captured).then(|| backtrace.to_string());
        let text = report(thread.name().unwrap_or("<unnamed>"), info, trace.as_deref());
        write_bounded(text.into_bytes());
        exit_now();
    }));
}

/// The words a user sees: the panic as Rust prints it (with `backtrace`, when one was
/// captured), then what it means for their sessions.
fn report(thread: &str, info: &PanicHookInfo<'_>, backtrace: Option<&str>) -> String {
    let place = info.location().map_or_else(String::new, |l| {
        format!(" at {}:{}:{}", l.file(), l.line(), l.column())
    });
    let message = info
        .payload()
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| info.payload().downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)");
    let backtrace = backtrace.map_or_else(
        || "run with RUST_BACKTRACE=1 to see where it came from\n".to_owned(),
        |b| format!("{b}\n"),
    );
    format!(
        "acplb: internal error, a bug in acplb: thread '{thread}' panicked{place}:\n{message}\n\
         {backtrace}acplb stops here; Codex processes it started are stopped with it. Sessions are \
         kept in their journals: start the agent again and open them (session/load, or the \
         editor's history). Please report this with the lines above.\n"
    )
}

/// Writes to stderr from a thread of its own and waits for it at most [`WRITE_LIMIT`].
fn write_bounded(text: Vec<u8>) {
    let (done, wait) = mpsc::channel();
    let writer = std::thread::Builder::new()
        .name("acplb-panic-report".into())
        .spawn(move || {
            let mut err = std::io::stderr().lock();
            // Best effort: the process ends right after, whatever this returns.
            err.write_all(&text).and_then(|()| err.flush()).ok();
            let _ = done.send(());
        });
    if writer.is_ok() {
        let _ = wait.recv_timeout(WRITE_LIMIT);
    }
}

fn exit_now() -> ! {
    #[expect(
        unsafe_code,
        reason = "_exit ends the process without running destructors or atexit handlers, which \
                  could wait on a lock the panicking code holds"
    )]
    // SAFETY: `_exit` takes no pointers and never returns.
    unsafe {
        libc::_exit(PANIC_EXIT_STATUS)
    }
}

#[cfg(test)]
#[path = "panic_tests.rs"]
mod tests;
