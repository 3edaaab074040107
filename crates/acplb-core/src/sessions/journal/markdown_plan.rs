//! A markdown plan as the journal holds it (ADR 0053): `plan_update`s that each give the plan
//! whole, or (for an AIR client that declared `planContentDelta`) only its new text in
//! `_meta.jetbrains.air.contentDelta`. What the history views need is the plan they add up to.

use crate::capabilities::{AIR_CONTENT_DELTA, air_value};
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, PlanUpdate, PlanUpdateContent, SessionUpdate,
};

/// The markdown plan being put together from a history's updates.
#[derive(Debug, Default)]
pub(super) struct MarkdownPlan {
    /// The plan's id and its text so far.
    current: Option<(String, String)>,
}

/// What one update did to the plan.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Change<'a> {
    /// A plan started: all of its text.
    Started(&'a str),
    /// The same plan went on with this text.
    Grew(&'a str),
    /// The same plan was given again, not going on from what was there (its completed text
    /// differed from what streamed): all of its text.
    Replaced(&'a str),
}

impl MarkdownPlan {
    /// Applies `update` when it is a markdown `plan_update`; `None` for any other update.
    pub(super) fn apply(&mut self, update: &SessionUpdate) -> Option<Change<'_>> {
        let SessionUpdate::PlanUpdate(update) = update else {
            return None;
        };
        let PlanUpdateContent::Markdown(plan) = &update.plan else {
            return None;
        };
        let id = plan.plan_id.to_string();
        let delta = content_delta(update);
        if !matches!(&self.current, Some((current, _)) if *current == id) {
            self.current = Some((id, String::new()));
        }
        let text = &mut self.current.as_mut()?.1;
        let before = text.len();
        let grew = if let Some(delta) = delta {
            text.push_str(delta);
            before > 0
        } else {
            let grows = before > 0 && plan.content.starts_with(text.as_str());
            plan.content.clone_into(text);
            grows
        };
        Some(match text.get(before..) {
            Some(rest) if grew => Change::Grew(rest),
            _ if before > 0 => Change::Replaced(text),
            _ => Change::Started(text),
        })
    }

    /// The plan's text so far (empty when none).
    pub(super) fn text(&self) -> &str {
        self.current.as_ref().map_or("", |(_, text)| text)
    }

    /// Forgets the plan: the next update starts one.
    pub(super) fn clear(&mut self) {
        self.current = None;
    }
}

/// A replay's `updates` for a client that takes plan updates or not (`plan_updates`), and AIR's
/// content deltas or not (`deltas`): what the journal holds, made what such a client is sent
/// live.
pub fn plans_for(updates: Vec<SessionUpdate>, plan_updates: bool, deltas: bool) -> Vec<SessionUpdate> {
    match (plan_updates, deltas) {
        (false, _) => without_plan_updates(updates),
        (true, false) => with_whole_plans(updates),
        (true, true) => updates,
    }
}

/// `updates` for a client that did not advertise `clientCapabilities.plan` (a journal written
/// for one that did): a markdown plan becomes the message text such a client is shown live
/// (what streamed stands when the completed plan differs from it, as live), and any other
/// `plan_update` or `plan_removed` is left out.
fn without_plan_updates(updates: Vec<SessionUpdate>) -> Vec<SessionUpdate> {
    let mut plan = MarkdownPlan::default();
    updates
        .into_iter()
        .filter_map(|update| {
            let text = match plan.apply(&update) {
                Some(Change::Started(text)) => format!("\n\n{text}"),
                Some(Change::Grew(text)) => text.to_owned(),
                Some(Change::Replaced(_)) => return None,
                None if matches!(
                    update,
                    SessionUpdate::PlanUpdate(_) | SessionUpdate::PlanRemoved(_)
                ) =>
                {
                    return None;
                }
                None => return Some(update),
            };
            let chunk = ContentChunk::new(ContentBlock::from(text));
            Some(SessionUpdate::AgentMessageChunk(chunk))
        })
        .collect()
}

/// `updates` for a client that takes `plan_update` but did not declare AIR's
/// `planContentDelta` (a journal written for one that did): every markdown plan update gives
/// the plan whole.
fn with_whole_plans(updates: Vec<SessionUpdate>) -> Vec<SessionUpdate> {
    let mut plan = MarkdownPlan::default();
    updates
        .into_iter()
        .map(|update| {
            let markdown = plan.apply(&update).is_some();
            let delta = matches!(&update, SessionUpdate::PlanUpdate(u) if content_delta(u).is_some());
            match &plan.current {
                // acplb's delta updates carry nothing else in `_meta`.
                Some((id, text)) if markdown && delta => SessionUpdate::PlanUpdate(PlanUpdate::new(
                    PlanUpdateContent::markdown(id.clone(), text.clone()),
                )),
                _ => update,
            }
        })
        .collect()
}

/// The new text an AIR delta update carries.
fn content_delta(update: &PlanUpdate) -> Option<&str> {
    air_value(update.meta.as_ref(), AIR_CONTENT_DELTA)?.as_str()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn update(value: serde_json::Value) -> SessionUpdate {
        serde_json::from_value(value).unwrap()
    }

    fn whole(id: &str, text: &str) -> SessionUpdate {
        update(json!({"sessionUpdate": "plan_update",
            "plan": {"type": "markdown", "planId": id, "content": text}}))
    }

    fn delta(id: &str, text: &str) -> SessionUpdate {
        update(json!({"sessionUpdate": "plan_update",
            "plan": {"type": "markdown", "planId": id, "content": ""},
            "_meta": {"jetbrains": {"air": {"version": 1, "contentDelta": text}}}}))
    }

    #[test]
    fn whole_updates_and_deltas_add_up_to_the_plan() {
        let mut plan = MarkdownPlan::default();
        assert_eq!(plan.apply(&whole("p", "# P")), Some(Change::Started("# P")));
        assert_eq!(plan.apply(&whole("p", "# P\n1. a")), Some(Change::Grew("\n1. a")));
        assert_eq!(plan.apply(&delta("p", "\n2. b")), Some(Change::Grew("\n2. b")));
        assert_eq!(plan.text(), "# P\n1. a\n2. b");
        assert_eq!(
            plan.apply(&whole("p", "# Other")),
            Some(Change::Replaced("# Other"))
        );
        assert_eq!(plan.apply(&whole("q", "# Q")), Some(Change::Started("# Q")));
        plan.clear();
        assert_eq!(plan.text(), "");
        let chunk = update(json!({"sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "x"}}));
        assert_eq!(plan.apply(&chunk), None);
    }

    #[test]
    fn a_client_without_content_deltas_gets_each_plan_update_whole_on_replay() {
        let chunk = update(json!({"sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "Hi."}}));
        let out = with_whole_plans(vec![
            whole("p", "# P"),
            delta("p", "\n1. a"),
            chunk.clone(),
            delta("p", "\n2. b"),
        ]);
        let expected = vec![
            whole("p", "# P"),
            whole("p", "# P\n1. a"),
            chunk,
            whole("p", "# P\n1. a\n2. b"),
        ];
        assert_eq!(out, expected);
    }

    #[test]
    fn a_client_without_plan_updates_gets_the_plan_as_text_on_replay() {
        let items = update(json!({"sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "x", "entries": []}}));
        let chunk = update(json!({"sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "Hi."}}));
        let out = without_plan_updates(vec![
            chunk.clone(),
            whole("p", "# P"),
            whole("p", "# P\n1. a"),
            delta("p", "\n2. b"),
            // The completed plan differed: what streamed stands, as live.
            whole("p", "# Other"),
            items,
        ]);
        let out: Vec<serde_json::Value> = out.iter().map(|u| serde_json::to_value(u).unwrap()).collect();
        assert_eq!(out[0], serde_json::to_value(&chunk).unwrap());
        let texts: Vec<&str> = out[1..]
            .iter()
            .map(|u| {
                assert_eq!(u["sessionUpdate"], "agent_message_chunk");
                u["content"]["text"].as_str().unwrap()
            })
            .collect();
        assert_eq!(texts, ["\n\n# P", "\n1. a", "\n2. b"]);
    }
}
