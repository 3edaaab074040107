//! Secret redaction (`acplb_core::redact`, run on every audit record, transcript and recording
//! line): a prompt-sized line and a 4 KiB tool output with no secret (the common case), and a
//! prompt-sized line holding two.
//!
//! Run with `cargo bench -p acplb-atm --bench redact`.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use acplb_atm::redact::redact;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const PROMPT: &str = "Please look at the failing test in crates/acplb-atm/src/inbox/lock.rs: the token count \
in the audit summary is off by one after the retry, and max_tokens=4096 is ignored. Keep the fix small.";

fn bench_redact(c: &mut Criterion) {
    let output = "test inbox::lock::tests::retries_then_gives_up ... ok\n".repeat(80);
    let secrets =
        format!("{PROMPT} OPENAI_API_KEY=sk-proj-AbC123dEf456GhI789 and ghp_ABCDEFGHIJKLMNOPqrstuvwxyz0123");
    let mut group = c.benchmark_group("redact");
    group.measurement_time(Duration::from_secs(3));
    for (name, text) in [
        ("prompt_clean", PROMPT),
        ("output_4k_clean", &output[..4096]),
        ("prompt_two_secrets", &secrets),
    ] {
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(name, |b| b.iter(|| redact(black_box(text))));
    }
    group.finish();
}

criterion_group!(benches, bench_redact);
criterion_main!(benches);
