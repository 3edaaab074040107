//! A plan mode turn's proposed plan (Codex's `plan` item: markdown) as it streams (ADR 0053).
//!
//! A client that takes `plan_update` (`DecoderOptions::plan_updates`) gets one markdown plan,
//! by the item's message id, that each update replaces. An update carries the whole plan so
//! far and is sent when the text has doubled since the last one (as command output is,
//! `render/live.rs`), so a long plan costs bytes in proportion to its length. An AIR client
//! that declared `planContentDelta` gets the first update whole and then each delta alone, as
//! `content: ""` with the new text in `_meta.jetbrains.air.contentDelta`, as the TS peer sends
//! it. The completed item's text is the plan: it replaces what was streamed when they differ.
//!
//! Any other client gets the plan as message text as it streams, and the completed item adds
//! the plan's steps as ACP plan entries (`items.rs`).

use acplb_core::capabilities::{AIR_CONTENT_DELTA, air_meta};
use agent_client_protocol::v1::schema::{PlanUpdate, PlanUpdateContent, SessionUpdate};
use serde_json::Value;

use super::AppDecoder;
use crate::appserver::text::Kind;
use crate::render::air;

/// One proposed plan streaming as `plan_update`s.
#[derive(Debug)]
pub(super) struct Proposed {
    /// The plan's id: its item's message id.
    id: String,
    /// The text Codex streamed so far.
    text: String,
    /// How many bytes of `text` the client has (0: nothing sent yet).
    shown: usize,
}

impl Proposed {
    /// The update that gives the client all of `text`: the whole plan, or with `deltas` and
    /// something already shown, only what is new.
    fn update(&mut self, deltas: bool) -> SessionUpdate {
        let rest = self.text.get(self.shown..).filter(|_| deltas && self.shown > 0);
        let update = match rest {
            Some(rest) => {
                let meta = air_meta(AIR_CONTENT_DELTA, Value::String(rest.to_owned()));
                PlanUpdate::new(PlanUpdateContent::markdown(self.id.clone(), "")).meta(meta)
            }
            None => PlanUpdate::new(PlanUpdateContent::markdown(self.id.clone(), self.text.clone())),
        };
        self.shown = self.text.len();
        SessionUpdate::PlanUpdate(update)
    }
}

impl AppDecoder {
    /// `item/plan/delta`: a piece of the proposed plan `item_id`.
    pub(super) fn plan_delta(&mut self, item_id: &str, delta: &str, out: &mut Vec<SessionUpdate>) {
        if delta.is_empty() {
            return;
        }
        let id = self.id(item_id);
        if !self.opts.plan_updates {
            self.streams.delta(Kind::Message, &id, delta, out);
            return;
        }
        let deltas = self.opts.air_declares(air::PLAN_CONTENT_DELTA);
        let index = if let Some(index) = self.plans.iter().position(|p| p.id == id) {
            index
        } else {
            self.plans.push(Proposed {
                id,
                text: String::new(),
                shown: 0,
            });
            self.plans.len() - 1
        };
        let Some(plan) = self.plans.get_mut(index) else {
            return;
        };
        plan.text.push_str(delta);
        if plan.shown == 0 || deltas || plan.text.len() >= plan.shown.saturating_mul(2) {
            out.push(plan.update(deltas));
        }
    }

    /// The turn ended (or stopped) before its plans completed: the client gets all of what
    /// streamed of each, so a plan stays as far as it came.
    pub(super) fn plans_ended(&mut self, out: &mut Vec<SessionUpdate>) {
        let deltas = self.opts.air_declares(air::PLAN_CONTENT_DELTA);
        for mut plan in self.plans.drain(..) {
            if plan.shown < plan.text.len() {
                out.push(plan.update(deltas));
            }
        }
    }

    /// The proposed plan `item_id` completed with `text` (empty: what streamed stands): the
    /// client gets whatever of it it does not have yet.
    pub(super) fn plan_completed(&mut self, item_id: &str, text: &str, out: &mut Vec<SessionUpdate>) {
        let id = self.id(item_id);
        let streamed = self
            .plans
            .iter()
            .position(|p| p.id == id)
            .map(|index| self.plans.remove(index));
        let mut plan = streamed.unwrap_or(Proposed {
            id,
            text: String::new(),
            shown: 0,
        });
        if !text.is_empty() && text != plan.text {
            let client_has = plan.text.get(..plan.shown).unwrap_or_default();
            if !text.starts_with(client_has) {
                tracing::debug!(plan = %plan.id, "the completed plan differs from its deltas; sent whole");
                plan.shown = 0;
            }
            text.clone_into(&mut plan.text);
        }
        if plan.text.is_empty() || plan.shown == plan.text.len() {
            return;
        }
        let deltas = self.opts.air_declares(air::PLAN_CONTENT_DELTA);
        out.push(plan.update(deltas));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::super::{AppDecoder, DecoderOptions};

    fn decoder(plan_updates: bool, air: &[&str]) -> AppDecoder {
        AppDecoder::new(DecoderOptions {
            id_prefix: "t1/".into(),
            plan_updates,
            air: (!air.is_empty()).then(|| acplb_core::capabilities::Air {
                capabilities: air.iter().map(|&c| c.to_owned()).collect(),
            }),
            ..DecoderOptions::new("/workspace")
        })
    }

    fn run(d: &mut AppDecoder, deltas: &[&str], completed: &str) -> Vec<Value> {
        let mut out = Vec::new();
        let ids = json!({"threadId": "th", "turnId": "tu"});
        let started = json!({"threadId": "th", "turnId": "tu",
            "item": {"type": "plan", "id": "p1", "text": ""}});
        d.notification("item/started", &started, &mut out);
        for delta in deltas {
            let mut params = ids.clone();
            params["itemId"] = json!("p1");
            params["delta"] = json!(delta);
            d.notification("item/plan/delta", &params, &mut out);
        }
        let done = json!({"threadId": "th", "turnId": "tu",
            "item": {"type": "plan", "id": "p1", "text": completed}});
        d.notification("item/completed", &done, &mut out);
        out.iter().map(|u| serde_json::to_value(u).unwrap()).collect()
    }

    fn markdown(update: &Value) -> (&str, &str) {
        assert_eq!(update["sessionUpdate"], "plan_update", "{update}");
        assert_eq!(update["plan"]["type"], "markdown", "{update}");
        assert_eq!(update["plan"]["planId"], "t1/p1", "{update}");
        (
            update["plan"]["content"].as_str().unwrap(),
            update["_meta"]["jetbrains"]["air"]["contentDelta"]
                .as_str()
                .unwrap_or_default(),
        )
    }

    #[test]
    fn a_plan_client_gets_the_whole_plan_each_time_it_doubles_and_no_text() {
        let pieces = ["# Plan", "\n\n1. a", "\n2. b", "\n3. c", "\n4. d"];
        let whole: String = pieces.concat();
        let updates = run(&mut decoder(true, &[]), &pieces, &whole);
        let contents: Vec<&str> = updates.iter().map(|u| markdown(u).0).collect();
        // 6 bytes, then at 12 or more (12), then at 24 or more (27: all of it, which the
        // completion does not repeat).
        assert_eq!(contents, ["# Plan", "# Plan\n\n1. a", whole.as_str()]);
        assert!(updates.iter().all(|u| u["_meta"].is_null()));
    }

    #[test]
    fn nothing_is_sent_again_when_the_last_update_had_it_all() {
        let updates = run(&mut decoder(true, &[]), &["# Plan", " now"], "");
        let contents: Vec<&str> = updates.iter().map(|u| markdown(u).0).collect();
        assert_eq!(contents, ["# Plan", "# Plan now"]);
        let updates = run(&mut decoder(true, &[]), &["# Plan", " now"], "# Plan now");
        assert_eq!(updates.len(), 2, "the completion repeats nothing: {updates:?}");
    }

    #[test]
    fn an_air_client_with_content_deltas_gets_the_first_whole_then_each_piece() {
        let updates = run(
            &mut decoder(true, &["planContentDelta"]),
            &["# Plan", "\n1. a", "\n2. b"],
            "# Plan\n1. a\n2. b\n3. c",
        );
        let got: Vec<(&str, &str)> = updates.iter().map(markdown).collect();
        assert_eq!(
            got,
            [("# Plan", ""), ("", "\n1. a"), ("", "\n2. b"), ("", "\n3. c")]
        );
        assert_eq!(updates[1]["_meta"]["jetbrains"]["air"]["version"], 1);
    }

    #[test]
    fn a_completed_plan_that_differs_from_its_deltas_replaces_them_whole() {
        for air in [&[][..], &["planContentDelta"][..]] {
            let updates = run(&mut decoder(true, air), &["# Draft", " plan"], "# Final plan");
            let last = updates.last().unwrap();
            assert_eq!(markdown(last), ("# Final plan", ""), "{air:?}");
        }
    }

    #[test]
    fn a_plan_that_never_streamed_comes_whole_at_its_end_and_an_empty_one_never() {
        let updates = run(&mut decoder(true, &["planContentDelta"]), &[], "1. a");
        assert_eq!(updates.iter().map(markdown).collect::<Vec<_>>(), [("1. a", "")]);
        assert!(run(&mut decoder(true, &[]), &[""], "").is_empty());
    }

    #[test]
    fn any_other_client_gets_the_plan_as_text_as_it_streams_then_its_steps() {
        let updates = run(
            &mut decoder(false, &["planContentDelta"]),
            &["# Plan", "\n1. a"],
            "# Plan\n1. a\n2. b",
        );
        let kinds: Vec<&str> = updates
            .iter()
            .map(|u| u["sessionUpdate"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "agent_message_chunk",
                "agent_message_chunk",
                "agent_message_chunk",
                "plan"
            ]
        );
        let text: String = updates
            .iter()
            .filter_map(|u| u["content"]["text"].as_str())
            .collect();
        assert_eq!(text, "# Plan\n1. a\n2. b");
        assert_eq!(updates[3]["entries"].as_array().map(Vec::len), Some(2));
    }

    #[test]
    fn a_turn_that_ends_before_its_plan_completed_leaves_all_that_streamed() {
        let mut d = decoder(true, &[]);
        let mut out = Vec::new();
        for delta in ["# Plan", "\n\n1. a", "\n2. b"] {
            let params = json!({"threadId": "th", "turnId": "tu", "itemId": "p1", "delta": delta});
            d.notification("item/plan/delta", &params, &mut out);
        }
        let ended = json!({"threadId": "th", "turn": {"id": "tu", "status": "interrupted"}});
        d.notification("turn/completed", &ended, &mut out);
        let plans: Vec<Value> = out
            .iter()
            .map(|u| serde_json::to_value(u).unwrap())
            .filter(|u| u["sessionUpdate"] == "plan_update")
            .collect();
        assert_eq!(markdown(plans.last().unwrap()).0, "# Plan\n\n1. a\n2. b");
        let mut d = decoder(true, &[]);
        let mut out = Vec::new();
        let params = json!({"threadId": "th", "turnId": "tu", "itemId": "p1", "delta": "# P"});
        d.notification("item/plan/delta", &params, &mut out);
        let params = json!({"threadId": "th", "turnId": "tu", "itemId": "p1", "delta": "lan"});
        d.notification("item/plan/delta", &params, &mut out);
        d.close_open_tool_calls_because(
            agent_client_protocol::v1::schema::ToolCallStatus::Failed,
            Some("Codex exited"),
            &mut out,
        );
        let last = serde_json::to_value(out.last().unwrap()).unwrap();
        assert_eq!(markdown(&last).0, "# Plan", "a crash leaves it too");
    }

    #[test]
    fn a_malformed_delta_is_counted_and_the_completed_plan_still_comes_whole() {
        let mut d = decoder(true, &["planContentDelta"]);
        let mut out = Vec::new();
        let bad = json!({"threadId": "th", "turnId": "tu", "itemId": "p1", "delta": 7});
        d.notification("item/plan/delta", &bad, &mut out);
        assert!(out.is_empty());
        assert_eq!(d.unknown_counts()["malformed:item/plan/delta"], 1);
        let updates = run(&mut d, &[], "1. a");
        assert_eq!(updates.iter().map(markdown).collect::<Vec<_>>(), [("1. a", "")]);
    }
}
