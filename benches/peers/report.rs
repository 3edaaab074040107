//! Medians per agent, medians of pairwise ratios, the targets, as text or JSON.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::agent::AgentSpec;
use crate::run::{Sample, Scenario};

/// One measured run.
#[derive(Debug)]
pub(crate) struct Record {
    /// The pair it belongs to (0-based, warm-up runs excluded).
    pub(crate) pair: usize,
    pub(crate) scenario: Scenario,
    /// Index into the agents.
    pub(crate) agent: usize,
    pub(crate) sample: Sample,
}

/// A figure taken from each run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Metric {
    Launch,
    FirstChunk,
    EndOfTurn,
    FirstRequest,
    AfterLastRequest,
    PeakRss,
    Chunks,
}

impl Metric {
    const ALL: [Metric; 7] = [
        Metric::Launch,
        Metric::FirstChunk,
        Metric::EndOfTurn,
        Metric::FirstRequest,
        Metric::AfterLastRequest,
        Metric::PeakRss,
        Metric::Chunks,
    ];

    fn key(self) -> &'static str {
        match self {
            Metric::Launch => "launch_to_session_new_ms",
            Metric::FirstChunk => "prompt_to_first_chunk_ms",
            Metric::EndOfTurn => "prompt_to_end_of_turn_ms",
            Metric::FirstRequest => "prompt_to_first_model_request_ms",
            Metric::AfterLastRequest => "last_model_request_to_end_of_turn_ms",
            Metric::PeakRss => "peak_rss_mib",
            Metric::Chunks => "message_chunks",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Metric::Launch => "launch -> session/new reply (ms)",
            Metric::FirstChunk => "prompt -> first message chunk (ms)",
            Metric::EndOfTurn => "prompt -> end of turn (ms)",
            Metric::FirstRequest => "  of it: prompt -> 1st model request (ms)",
            Metric::AfterLastRequest => "  of it: last model request -> end (ms)",
            Metric::PeakRss => "agent's own peak RSS, VmHWM (MiB)",
            Metric::Chunks => "agent_message_chunk per turn",
        }
    }

    fn value(self, s: &Sample) -> f64 {
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
        match self {
            Metric::Launch => ms(s.launch),
            Metric::FirstChunk => ms(s.first_chunk),
            Metric::EndOfTurn => ms(s.end_of_turn),
            // NaN when the mock saw no request (left out of medians and ratios).
            Metric::FirstRequest => s.model_requests.first().map_or(f64::NAN, |d| ms(*d)),
            Metric::AfterLastRequest => s
                .model_requests
                .last()
                .map_or(f64::NAN, |d| ms(s.end_of_turn.saturating_sub(*d))),
            // MiB, as issue 18's "peak RSS at or below 10 MiB" says.
            #[allow(clippy::cast_precision_loss, reason = "KiB counts are far below 2^52")]
            Metric::PeakRss => s.peak_rss_kib as f64 / 1024.0,
            #[allow(clippy::cast_precision_loss, reason = "small counts")]
            Metric::Chunks => s.chunks as f64,
        }
    }
}

/// A target checked on the figures (issue 18's per-prompt ratios, issue 8's launch and memory).
#[derive(Debug)]
struct Target {
    agent: String,
    scenario: Option<Scenario>,
    what: String,
    value: f64,
    limit: f64,
}

/// Everything measured in one benchmark run.
#[derive(Debug)]
pub(crate) struct Report<'a> {
    pub(crate) agents: &'a [AgentSpec],
    /// Index of the agent the ratios are taken against.
    pub(crate) baseline: usize,
    pub(crate) scenarios: &'a [Scenario],
    pub(crate) records: &'a [Record],
    /// Free-form facts printed after the tables and put under `"setup"` in JSON.
    pub(crate) setup: Vec<(String, Value)>,
}

impl Report<'_> {
    fn values(&self, agent: usize, scenario: Scenario, metric: Metric) -> Vec<f64> {
        self.records
            .iter()
            .filter(|r| r.agent == agent && r.scenario == scenario)
            .map(|r| metric.value(&r.sample))
            .filter(|v| !v.is_nan())
            .collect()
    }

    /// Median over pairs of `agent / reference` for one scenario and metric.
    fn ratio(&self, agent: usize, reference: usize, scenario: Scenario, metric: Metric) -> Option<f64> {
        let of = |a: usize, pair: usize| {
            self.records
                .iter()
                .find(|r| r.agent == a && r.scenario == scenario && r.pair == pair)
                .map(|r| metric.value(&r.sample))
        };
        let pairs = self.records.iter().map(|r| r.pair).max().map_or(0, |p| p + 1);
        let ratios = (0..pairs)
            .filter_map(|p| Some(of(agent, p)? / of(reference, p)?))
            .filter(|r| r.is_finite())
            .collect();
        median(ratios)
    }

    fn others(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.agents.len()).filter(|a| *a != self.baseline)
    }

    /// The targets, for every acplb agent against `ts`, if both ran.
    fn targets(&self) -> Vec<Target> {
        let Some(ts) = self.agents.iter().position(|a| a.name == "ts") else {
            return Vec::new();
        };
        let mut targets = Vec::new();
        for (a, spec) in self.agents.iter().enumerate().filter(|(a, _)| *a != ts) {
            for &scenario in self.scenarios {
                for (metric, limit) in [
                    (Metric::FirstChunk, 0.92),
                    (Metric::EndOfTurn, 0.92),
                    (Metric::Launch, 0.1),
                ] {
                    if let Some(value) = self.ratio(a, ts, scenario, metric) {
                        targets.push(Target {
                            agent: spec.name.clone(),
                            scenario: Some(scenario),
                            what: format!("{} ratio to ts", metric.key()),
                            value,
                            limit,
                        });
                    }
                }
            }
            let rss = self
                .scenarios
                .iter()
                .flat_map(|s| self.values(a, *s, Metric::PeakRss))
                .fold(f64::NAN, f64::max);
            if rss.is_finite() {
                targets.push(Target {
                    agent: spec.name.clone(),
                    scenario: None,
                    what: "peak_rss_mib, largest of all runs".into(),
                    value: rss,
                    limit: 10.0,
                });
            }
        }
        targets
    }

    /// The tables, ratios, targets and setup as text.
    pub(crate) fn text(&self) -> String {
        let mut out = String::new();
        let base = &self.agents[self.baseline].name;
        let mut columns: Vec<String> = self.agents.iter().map(|a| a.name.clone()).collect();
        columns.extend(self.others().map(|a| format!("{}/{base}", self.agents[a].name)));
        let width = columns.iter().map(String::len).max().unwrap_or(0).max(9) + 2;
        for &scenario in self.scenarios {
            let n = self.values(self.baseline, scenario, Metric::EndOfTurn).len();
            let _ = write!(out, "\n{:<36}", format!("scenario {} (n={n})", scenario.name()));
            for c in &columns {
                let _ = write!(out, "{c:>width$}");
            }
            out.push('\n');
            for metric in Metric::ALL {
                let _ = write!(out, "{:<36}", metric.label());
                for a in 0..self.agents.len() {
                    let cell = median(self.values(a, scenario, metric)).map_or("-".into(), fmt_value);
                    let _ = write!(out, "{cell:>width$}");
                }
                for a in self.others() {
                    let cell = self
                        .ratio(a, self.baseline, scenario, metric)
                        .map_or("-".into(), |r| format!("{r:.2}"));
                    let _ = write!(out, "{cell:>width$}");
                }
                out.push('\n');
            }
        }
        let targets = self.targets();
        if !targets.is_empty() {
            out.push_str("\ntargets (medians of pairwise ratios to ts; RSS: largest run):\n");
        }
        for t in &targets {
            let scope = t.scenario.map_or("all runs", Scenario::name);
            let verdict = if t.value <= t.limit { "pass" } else { "FAIL" };
            let _ = writeln!(
                out,
                "  {:<18} {:<6} {:<40} {:>8.2} <= {:<5} {verdict}",
                t.agent, scope, t.what, t.value, t.limit
            );
        }
        out.push('\n');
        for (key, value) in &self.setup {
            let shown = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
            let _ = writeln!(out, "{key}: {shown}");
        }
        out
    }

    /// The same as one JSON document, with every run.
    pub(crate) fn json(&self) -> Value {
        let medians = |a: usize| -> Value {
            self.scenarios
                .iter()
                .map(|&s| {
                    let per_metric = Metric::ALL
                        .iter()
                        .map(|m| (m.key().to_owned(), json!(median(self.values(a, s, *m)))))
                        .collect::<serde_json::Map<_, _>>();
                    (s.name().to_owned(), Value::Object(per_metric))
                })
                .collect::<serde_json::Map<_, _>>()
                .into()
        };
        let agents: Vec<Value> = self
            .agents
            .iter()
            .enumerate()
            .map(|(a, spec)| json!({"name": spec.name, "medians": medians(a)}))
            .collect();
        let mut ratios = Vec::new();
        for a in self.others() {
            for &s in self.scenarios {
                for m in Metric::ALL {
                    ratios.push(json!({
                        "agent": self.agents[a].name,
                        "baseline": self.agents[self.baseline].name,
                        "scenario": s.name(),
                        "metric": m.key(),
                        "median_of_pairwise_ratios": self.ratio(a, self.baseline, s, m),
                    }));
                }
            }
        }
        let targets: Vec<Value> = self
            .targets()
            .iter()
            .map(|t| {
                json!({
                    "agent": t.agent, "scenario": t.scenario.map(Scenario::name), "what": t.what,
                    "value": t.value, "limit": t.limit, "pass": t.value <= t.limit,
                })
            })
            .collect();
        let runs: Vec<Value> = self
            .records
            .iter()
            .map(|r| {
                let mut run = json!({
                    "pair": r.pair, "scenario": r.scenario.name(), "agent": self.agents[r.agent].name,
                    "mode": r.sample.mode, "tool_calls": r.sample.tool_calls,
                    "left_behind": r.sample.left_behind,
                });
                for m in Metric::ALL {
                    run[m.key()] = json!(m.value(&r.sample));
                }
                run
            })
            .collect();
        let setup: serde_json::Map<_, _> = self.setup.iter().cloned().collect();
        json!({"setup": setup, "agents": agents, "ratios": ratios, "targets": targets, "runs": runs})
    }
}

/// The median (mean of the middle two for an even count); `None` when empty.
pub(crate) fn median(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some(f64::midpoint(values[n / 2 - 1], values[n / 2])),
    }
}

fn fmt_value(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}
