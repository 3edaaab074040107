//! `cargo bench --bench worker`: what a running `acplb worker` costs, on the real binary with
//! the real Codex against the mock model.
//!
//! - mail written → turn started (the worker's log line, timestamps of one clock), and mail
//!   written → the model's request, for 30 messages over three workers, one at a time;
//! - an idle daemon with three workers: its CPU over `ACPLB_BENCH_IDLE_SECS` (default 60) and
//!   its own memory (resident set; the Codex children are separate processes, reported apart).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::cast_precision_loss,
    clippy::cast_possible_wrap,
    clippy::format_push_string
)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use acplb_atm::MailStore;
use acplb_playback::mock_model::codex_env::{CodexTestEnv, codex_binary};
use acplb_playback::mock_model::{MockConfig, MockModel, Script};
use acplb_worker::daemon::control::{self, Answer, Request};

const ACPLB: &str = env!("CARGO_BIN_EXE_acplb");
const WORKERS: [&str; 3] = ["bob", "carol", "dave"];
const MESSAGES: usize = 30;

const SCENARIOS: &str = r#"
[scenarios.answer]
[[scenarios.answer.steps]]
actions = [{ type = "message", text = "answered" }]
"#;

fn main() {
    codex_binary().expect("the pinned Codex (scripts/install-test-deps)");
    let script = Script::builtin().layered_with(Script::from_toml_str(SCENARIOS, "bench").unwrap());
    let mock = MockModel::start(MockConfig::default().with_script(script)).unwrap();
    let env = CodexTestEnv::new(mock.base_url()).unwrap();
    let atm = tempfile::tempdir().unwrap();
    let team = atm.path().join(".claude/teams/demo");
    std::fs::create_dir_all(team.join("inboxes")).unwrap();
    // The roster: workers run only their team members' mail.
    let members: Vec<serde_json::Value> = std::iter::once("alice")
        .chain(WORKERS)
        .map(|name| serde_json::json!({ "name": name }))
        .collect();
    let roster = serde_json::json!({ "name": "demo", "members": members });
    std::fs::write(team.join("config.json"), roster.to_string()).unwrap();
    let state = env.root().join(".local/state/acplb");
    let mut config = String::from("[workers]\n");
    for w in WORKERS {
        config.push_str(&format!(
            "[workers.agents.\"{w}@demo\"]\ncwd = \"{}\"\n",
            env.workspace().display()
        ));
    }
    let config_path = atm.path().join("workers.toml");
    std::fs::write(&config_path, config).unwrap();
    let mut daemon = Command::new(ACPLB)
        .args([
            "-c",
            "features.unbounded_connection_retries=false",
            "worker",
            "--workers-config",
        ])
        .arg(&config_path)
        .envs(env.env_vars())
        .env("ACPLB_CODEX", env.codex_path())
        .env("HOME", env.root())
        .env("ATM_HOME", atm.path())
        .env("XDG_CONFIG_HOME", atm.path().join("xdg"))
        .env("ACPLB_STATE_DIR", &state)
        .env("RUST_LOG", "info")
        .current_dir(env.workspace())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = daemon.id();
    wait_idle(&state);

    let alice = MailStore::new(atm.path().join(".claude"), "alice", "demo").unwrap();
    let mut to_turn = Vec::new();
    let mut to_model = Vec::new();
    for n in 0..MESSAGES {
        let worker = WORKERS[n % WORKERS.len()];
        let marker = format!("bench message {n} scenario:answer");
        let before_requests = mock.requests().len();
        let sent_at = SystemTime::now();
        let clock = Instant::now();
        let sent = alice.send(worker, &marker, None).unwrap();
        while !mock.requests()[before_requests..]
            .iter()
            .any(|r| r.body.to_string().contains(&marker))
        {
            std::thread::sleep(Duration::from_micros(200));
            assert!(
                clock.elapsed() < Duration::from_secs(60),
                "no request for message {n}"
            );
        }
        to_model.push(clock.elapsed());
        let log = state.join(format!("workers/logs/{worker}@demo.log"));
        to_turn.push(
            turn_started(&log, &sent.message_id)
                .duration_since(sent_at)
                .unwrap_or_default(),
        );
        wait_reply(&team, worker, n / WORKERS.len() + 1);
    }
    println!(
        "mail written → turn started (worker log), {MESSAGES} messages: {}",
        stats(&mut to_turn)
    );
    println!(
        "mail written → model request, {MESSAGES} messages: {}",
        stats(&mut to_model)
    );

    idle_report(pid);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    daemon.wait().unwrap();
}

/// The idle daemon's CPU over `ACPLB_BENCH_IDLE_SECS` and its memory, its children apart.
fn idle_report(pid: u32) {
    std::thread::sleep(Duration::from_secs(5));
    let idle: u64 = std::env::var("ACPLB_BENCH_IDLE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let (ticks0, t0) = (cpu_ticks(pid), Instant::now());
    std::thread::sleep(Duration::from_secs(idle));
    let (ticks1, elapsed) = (cpu_ticks(pid), t0.elapsed());
    // Clock ticks are 1/100 s on Linux.
    let cpu = (ticks1 - ticks0) as f64 / 100.0 / elapsed.as_secs_f64() * 100.0;
    println!(
        "idle daemon, 3 workers, {idle} s: CPU {cpu:.3} % ({} ticks); own memory: VmRSS {} kB (RssAnon {} kB, RssFile {} kB), VmHWM {} kB, {} threads",
        ticks1 - ticks0,
        status_kb(pid, "VmRSS"),
        status_kb(pid, "RssAnon"),
        status_kb(pid, "RssFile"),
        status_kb(pid, "VmHWM"),
        status_kb(pid, "Threads")
    );
    for child in children(pid) {
        println!(
            "  child {child}: VmRSS {} kB (not counted)",
            status_kb(child, "VmRSS")
        );
    }
}

fn wait_idle(state: &Path) {
    let start = Instant::now();
    loop {
        if let Ok(Answer::Status(s)) = control::ask(state, &Request::Status)
            && s.workers.len() == WORKERS.len()
            && s.workers
                .iter()
                .all(|w| w.state == acplb_worker::WorkerState::Idle)
        {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the workers never became idle"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// When the worker logged the start of the turn for `message_id`.
fn turn_started(log: &Path, message_id: &str) -> SystemTime {
    let needle = format!("work=mail:{message_id}");
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if let Some(line) = text
            .lines()
            .find(|l| l.contains("turn started") && l.contains(&needle))
        {
            let stamp = line.split_whitespace().next().unwrap();
            return humantime::parse_rfc3339_weak(stamp.trim_end_matches('Z')).unwrap();
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no `turn started` for {message_id} in {}",
            log.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn wait_reply(team: &Path, worker: &str, n: usize) {
    let inbox = team.join("inboxes/alice.json");
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(&inbox).unwrap_or_default();
        let count = serde_json::from_str::<Vec<serde_json::Value>>(&text)
            .map_or(0, |v| v.iter().filter(|r| r["from"] == worker).count());
        if count >= n {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no reply {n} from {worker}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn stats(v: &mut [Duration]) -> String {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    format!(
        "median {:.1} ms, min {:.1} ms, p90 {:.1} ms, max {:.1} ms",
        ms(v[v.len() / 2]),
        ms(v[0]),
        ms(v[v.len() * 9 / 10]),
        ms(v[v.len() - 1])
    )
}

fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of stat, 12 and 13 after the command.
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

fn status_kb(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn children(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}
