//! The subcommands: argument handling, runtimes, and what each prints.

mod check;

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use acplb_playback::corpus::{self, CorpusOptions};
use acplb_playback::decode::{self, DecodeOptions};
use acplb_playback::mock_model::codex_env::codex_binary;
use acplb_playback::mock_model::{MockConfig, MockModel, Script};
use acplb_playback::record::{self, RecordOptions};
use acplb_playback::replay::{self, ReplayOptions};
use acplb_playback::scenario::{Scenario, lint};
use acplb_playback::standin::Speed;
use acplb_playback::{locate, mcp_echo};
use anyhow::Context as _;

pub(crate) use check::check;

use crate::{CorpusArgs, DecodeArgs, MockModelArgs, RecordArgs, ReplayArgs, RunArgs, SpeedArg};

/// The binary's own lines go to stderr: stdout stays free for a protocol or for output.
#[allow(clippy::print_stderr, reason = "the user-facing status lines of a binary")]
pub(crate) fn report(line: &str) {
    eprintln!("{line}");
}

/// A line of a command's output on stdout.
#[allow(clippy::print_stdout, reason = "the output of a command such as `check`")]
pub(crate) fn say(line: &str) {
    println!("{line}");
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("failed to start the tokio runtime")
}

fn replay_options(args: &ReplayArgs, speed: Speed) -> anyhow::Result<ReplayOptions> {
    Ok(ReplayOptions {
        acplb: locate::acplb(args.acplb.as_deref())?,
        playback: locate::playback()?,
        speed,
        wait: Duration::from_secs(args.timeout),
    })
}

pub(crate) fn record(args: RecordArgs) -> anyhow::Result<ExitCode> {
    let name = args.name.unwrap_or_else(|| {
        args.out
            .file_stem()
            .map_or_else(|| "scenario".to_owned(), |s| s.to_string_lossy().into_owned())
    });
    let opts = RecordOptions {
        out: args.out,
        name,
        description: args.description,
        command: args.command,
        playback: locate::playback()?,
    };
    let rt = runtime()?;
    let scenario = rt.block_on(async {
        // An editor that stops its agent with a signal instead of closing stdin still gets its
        // session written: the signal counts as the disconnect.
        let disconnect = async {
            use tokio::signal::unix::{SignalKind, signal};
            match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
                (Ok(mut term), Ok(mut int)) => {
                    tokio::select! {
                        _ = term.recv() => {}
                        _ = int.recv() => {}
                    }
                }
                _ => std::future::pending().await,
            }
        };
        record::record(&opts, tokio::io::stdin(), tokio::io::stdout(), disconnect).await
    })?;
    // The stdin reader thread may still wait for input the client never sends.
    rt.shutdown_timeout(Duration::from_millis(50));
    report(&format!(
        "playback: wrote {} ({} client steps, {} codex runs)",
        opts.out.display(),
        scenario.client.len(),
        scenario.codex.len()
    ));
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let speed = match args.speed {
        SpeedArg::Max => Speed::Max,
        SpeedArg::Real => Speed::Real,
    };
    let opts = replay_options(&args.replay, speed)?;
    let scenario = Scenario::load(&args.file)?;
    for w in lint::warnings(&scenario) {
        report(&format!(
            "{}:{}: warning: {}",
            args.file.display(),
            w.line,
            w.message
        ));
    }
    let replay = runtime()?.block_on(replay::replay(&scenario, &opts))?;
    let mut out = std::io::stdout().lock();
    for line in &replay.output {
        writeln!(out, "{line}").context("writing to stdout")?;
    }
    out.flush().context("writing to stdout")?;
    for note in &replay.notes {
        report(&format!("playback: {note}"));
    }
    Ok(if replay.notes.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub(crate) fn decode(args: DecodeArgs) -> anyhow::Result<ExitCode> {
    let file =
        std::fs::File::open(&args.file).with_context(|| format!("cannot open `{}`", args.file.display()))?;
    let input = std::io::BufReader::with_capacity(1 << 20, file);
    // `Stdout`, not its lock: the writing happens on a thread of its own.
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout());
    let report_ = decode::decode(
        &args.file,
        input,
        &mut out,
        DecodeOptions {
            cwd: args.cwd,
            notices: args.notices,
        },
    )?;
    drop(out);
    for w in &report_.warnings {
        report(w);
    }
    Ok(if report_.failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

pub(crate) fn mcp_echo() -> anyhow::Result<ExitCode> {
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    mcp_echo::serve(stdin, stdout).context("mcp-echo stdio failed")?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn record_corpus(args: CorpusArgs) -> anyhow::Result<ExitCode> {
    if args.list {
        for spec in corpus::specs::all() {
            report(&format!("{:<26} {}", spec.name, spec.description));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let codex = match args.codex {
        Some(path) => path,
        None => codex_binary()?,
    };
    let transport = args
        .transport
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(|e: String| anyhow::anyhow!(e))?;
    let opts = CorpusOptions {
        out: args.out,
        only: args.only,
        transport,
        acplb: locate::acplb(args.acplb.as_deref())?,
        codex,
        playback: locate::playback()?,
    };
    let written = runtime()?.block_on(corpus::record_corpus(&opts, &mut |line| report(line)))?;
    report(&format!(
        "playback: recorded {} scenario(s) into {}",
        written.len(),
        opts.out.display()
    ));
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn mock_model(args: MockModelArgs) -> anyhow::Result<()> {
    let mut script = Script::builtin();
    if let Some(path) = &args.script {
        script = script.layered_with(Script::load(path)?);
    }
    let mut config = MockConfig::default()
        .with_port(args.port)
        .with_script(script)
        .with_delay(Duration::from_millis(args.delay_ms));
    if let Some(log) = args.log {
        config = config.with_log_file(log);
    }
    let handle = MockModel::start(config)?;
    report(&format!("listening on {}", handle.base_url()));
    runtime()?.block_on(async {
        let lifetime = async {
            match args.lifetime {
                Some(secs) => tokio::time::sleep(Duration::from_secs(secs)).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            signal = tokio::signal::ctrl_c() => signal.context("failed to wait for Ctrl-C"),
            () = lifetime => Ok(()),
        }
    })?;
    handle.shutdown();
    Ok(())
}
