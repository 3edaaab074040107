//! Plan mode on app-server: Codex's `plan` collaboration mode (experimental API) for a turn in
//! the ACP `plan` mode, the default mode set back on the turn after it, and the proposed plan
//! (a `plan` item's markdown) as ACP plan entries.

use acplb_core::permission::Mode;
use acplb_core::provider::SessionSettings;
use agent_client_protocol::v1::schema::PlanEntryStatus;
use serde_json::{Value, json};

/// `turn/start.collaborationMode` for a turn in `mode`: Codex's plan mode for the `plan`
/// mode, its default mode for the first turn after one in plan mode (`planning`), else
/// nothing (the thread stays as it is). Codex wants the model named; `model` is the one the
/// turn runs (`None` when unknown: then nothing is sent, and the turn says so in the log).
/// `developer_instructions: null` keeps Codex's own instructions for the mode.
pub(crate) fn collaboration_mode(
    mode: Mode,
    planning: bool,
    model: Option<&str>,
    settings: &SessionSettings,
) -> Option<Value> {
    let kind = match (mode, planning) {
        (Mode::Plan, _) => "plan",
        (_, true) => "default",
        (_, false) => return None,
    };
    let Some(model) = model else {
        tracing::warn!(
            kind,
            "the thread's model is unknown; Codex's collaboration mode is left as it is"
        );
        return None;
    };
    Some(json!({
        "mode": kind,
        "settings": {
            "model": model,
            "reasoning_effort": settings.reasoning_effort,
            "developer_instructions": null,
        },
    }))
}

/// The steps of a proposed plan: its list items (`- `, `* `, `1. `), unindented or indented
/// once, each as a pending entry; a plan without a list is one entry, its first line.
pub(crate) fn entries(markdown: &str) -> Vec<(String, PlanEntryStatus)> {
    let mut steps: Vec<(String, PlanEntryStatus)> = markdown
        .lines()
        .filter_map(|line| list_item(line.trim_start()))
        .map(|step| (step.to_owned(), PlanEntryStatus::Pending))
        .collect();
    if steps.is_empty()
        && let Some(first) = markdown.lines().map(str::trim).find(|l| !l.is_empty())
    {
        steps.push((
            first.trim_start_matches('#').trim().to_owned(),
            PlanEntryStatus::Pending,
        ));
    }
    steps
}

/// The text of a markdown list item, `None` for any other line.
fn list_item(line: &str) -> Option<&str> {
    if let Some(rest) = line.strip_prefix("- ").or_else(|| line.strip_prefix("* ")) {
        return Some(rest.trim()).filter(|s| !s.is_empty());
    }
    let digits = line.find(|c: char| !c.is_ascii_digit())?;
    let rest = line.get(digits..)?;
    let rest = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") "))?;
    (digits > 0).then(|| rest.trim()).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_mode_is_sent_and_the_default_set_back_once() {
        let s = SessionSettings::default();
        let plan = collaboration_mode(Mode::Plan, false, Some("m"), &s).unwrap();
        assert_eq!(
            plan,
            json!({"mode": "plan", "settings": {"model": "m", "reasoning_effort": null, "developer_instructions": null}})
        );
        assert_eq!(
            collaboration_mode(Mode::Auto, true, Some("m"), &s).unwrap()["mode"],
            "default"
        );
        assert_eq!(collaboration_mode(Mode::Auto, false, Some("m"), &s), None);
        assert_eq!(collaboration_mode(Mode::Plan, false, None, &s), None);
    }

    #[test]
    fn list_items_become_pending_entries() {
        let md = "# Plan\n\nSome words.\n\n1. Read the code\n2) Write the test\n  - nested step\n- \n* last\n10 apples\n";
        let steps: Vec<String> = entries(md).into_iter().map(|(s, _)| s).collect();
        assert_eq!(steps, ["Read the code", "Write the test", "nested step", "last"]);
        assert_eq!(
            entries("## Only a title\nmore"),
            [("Only a title".to_owned(), PlanEntryStatus::Pending)]
        );
        assert!(entries("  \n").is_empty());
    }
}
