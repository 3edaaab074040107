//! `playback check`: replays scenarios on a few worker threads and reports in file order.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use acplb_playback::check::{self, CheckResult, Outcome};
use acplb_playback::standin::Speed;

use super::{replay_options, report, runtime, say};
use crate::CheckArgs;

pub(crate) fn check(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let opts = replay_options(&args.replay, Speed::Max)?;
    let files = check::scenario_files(&args.paths)?;
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .clamp(1, files.len().max(1));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<CheckResult>>> = Mutex::new(vec![None; files.len()]);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| worker(&files, &next, &results, &opts, args.bless));
        }
    });
    let results = results
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (mut passed, mut failed) = (0, 0);
    for result in results.into_iter().flatten() {
        print_result(&result);
        if result.passed() {
            passed += 1;
        } else {
            failed += 1;
        }
    }
    let missing = files.len() - passed - failed;
    say(&format!(
        "{passed} passed, {} failed ({:.1} s)",
        failed + missing,
        started.elapsed().as_secs_f64()
    ));
    Ok(if failed + missing == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn worker(
    files: &[PathBuf],
    next: &AtomicUsize,
    results: &Mutex<Vec<Option<CheckResult>>>,
    opts: &acplb_playback::replay::ReplayOptions,
    bless: bool,
) {
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(e) => {
            report(&format!("playback: {e:#}"));
            return;
        }
    };
    loop {
        let i = next.fetch_add(1, Ordering::SeqCst);
        let Some(path) = files.get(i) else { return };
        let result = rt.block_on(check::check_file(path, opts, bless));
        if let Ok(mut all) = results.lock() {
            all[i] = Some(result);
        }
    }
}

fn print_result(result: &CheckResult) {
    for w in &result.warnings {
        say(&format!("{w} (warning)"));
    }
    let path = result.path.display();
    let ms = result.elapsed.as_millis();
    match &result.outcome {
        Outcome::Passed => say(&format!("ok      {path} ({ms} ms)")),
        Outcome::Blessed { changed: true } => say(&format!("blessed {path} ({ms} ms)")),
        Outcome::Blessed { changed: false } => say(&format!("ok      {path} (unchanged, {ms} ms)")),
        Outcome::Error(message) => {
            say(&format!("ERROR   {path}"));
            say(&format!("  {message}"));
        }
        Outcome::Failed {
            diff,
            notes,
            acplb_stderr,
        } => {
            say(&format!("FAILED  {path} ({ms} ms)"));
            for note in notes {
                say(&format!("  note: {note}"));
            }
            say(diff.trim_end());
            if !acplb_stderr.trim().is_empty() {
                say("  acplb stderr (end):");
                for line in acplb_stderr
                    .lines()
                    .rev()
                    .take(20)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                {
                    say(&format!("    {line}"));
                }
            }
        }
    }
}
