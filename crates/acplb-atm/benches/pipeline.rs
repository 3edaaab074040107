//! What the built-in plugins (`atm-identity`, `atm-mail`, `audit`, as in `composer.toml.example`)
//! add to every session update (target: under 5 µs), against an empty pipeline, plus the
//! per-prompt hook for scale.
//!
//! Run with `cargo bench -p acplb-atm --bench pipeline`.
#![allow(missing_docs)]
#![allow(
    clippy::unwrap_used,
    reason = "benchmark setup: any failure should abort the run"
)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use acplb_core::permission::Mode;
use acplb_core::plugin::composer::Source;
use acplb_core::plugin::registry::BuildContext;
use acplb_core::plugin::{ComposerPipelines, Pipeline, PromptContext, SessionStart};
use acplb_core::provider::{PromptInput, SessionSettings, TurnRequest};
use agent_client_protocol::v1::schema::{SessionId, SessionUpdate};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::json;

/// The updates a shell-command turn produces, in the shapes acplb sends them.
fn realistic_updates() -> Vec<(&'static str, SessionUpdate)> {
    let update = |v: serde_json::Value| serde_json::from_value::<SessionUpdate>(v).unwrap();
    vec![
        (
            "agent_message_chunk",
            update(
                json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Let me look at the failing test first."}}),
            ),
        ),
        (
            "tool_call",
            update(
                json!({"sessionUpdate": "tool_call", "toolCallId": "call_1", "title": "cargo test -p acplb-atm",
                "kind": "execute", "status": "in_progress", "rawInput": {"command": "cargo test -p acplb-atm"}}),
            ),
        ),
        (
            "tool_call_update",
            update(
                json!({"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": "completed",
                "content": [{"type": "content", "content": {"type": "text", "text": "test result: ok. 48 passed; 0 failed\n".repeat(20)}}]}),
            ),
        ),
    ]
}

/// The example's plugins, built and started for one session in a temporary home.
fn started_pipeline(home: &Path) -> Pipeline {
    let env = BTreeMap::from([("HOME".to_owned(), home.display().to_string())]);
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../composer.toml.example");
    let registry = acplb_atm::plugins::registry_with_env(Arc::new(env));
    let pipelines = ComposerPipelines::new(registry, Some(Source::Flag(example)), None).unwrap();
    let config = pipelines.config_for(home).unwrap().unwrap();
    let (pipeline, _) = pipelines
        .build(&config, &BuildContext::new(home, "bench"))
        .unwrap();
    let mut start = SessionStart {
        session_id: "bench".into(),
        cwd: home.to_owned(),
        ..SessionStart::default()
    };
    pipeline.on_session_start(&mut start).unwrap();
    pipeline
}

fn bench_pipeline(c: &mut Criterion) {
    let home = tempfile::tempdir().unwrap();
    let pipeline = started_pipeline(home.path());
    let empty = Pipeline::default();
    let session = SessionId::new("bench");

    let mut group = c.benchmark_group("on_update");
    group.measurement_time(Duration::from_secs(3));
    for (name, update) in realistic_updates() {
        for (label, p) in [("builtin_plugins", &pipeline), ("no_plugins", &empty)] {
            group.bench_function(format!("{name}/{label}"), |b| {
                b.iter_batched(
                    || update.clone(),
                    |u| black_box(p.on_update(&session, u)),
                    BatchSize::SmallInput,
                );
            });
        }
    }
    group.finish();

    // Per prompt, not per update: reads `.git/HEAD`, counts the inbox (on the blocking pool),
    // appends to the audit log.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("on_prompt");
    group.measurement_time(Duration::from_secs(3));
    let ctx = PromptContext {
        session_id: session.clone(),
        cwd: home.path().to_owned(),
        thread_id: Some("thread".into()),
    };
    group.bench_function("builtin_plugins", |b| {
        b.iter_batched(
            || TurnRequest {
                prompt: PromptInput {
                    text: "fix the failing test in crates/acplb-atm".into(),
                    images: vec![],
                },
                mode: Mode::ReadOnly,
                settings: SessionSettings::default(),
                developer_instructions: vec![],
                env: vec![],
                notes: vec![],
                steer: acplb_core::provider::SteerInbox::default(),
            },
            |mut turn| {
                runtime.block_on(pipeline.on_prompt(&ctx, &mut turn)).unwrap();
                turn
            },
            BatchSize::SmallInput,
        );
    });
    group.finish();
}

criterion_group!(benches, bench_pipeline);
criterion_main!(benches);
