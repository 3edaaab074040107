//! A digest of a history for a conversation that must start over (its provider thread is
//! gone): what the user asked and what the agent answered, newest kept when it is too long.

use agent_client_protocol::v1::schema::{ContentBlock, SessionUpdate};

use super::history::History;
use super::markdown_plan::{Change, MarkdownPlan};
use super::record::Record;

/// How a digest starts, so the model knows what it is reading.
const HEAD: &str = "This session continues an earlier conversation whose Codex thread is no longer available. \
What was said before, oldest first (earlier parts may be left out):";

/// How a fork's digest starts (ADR 0012: a session forked from another whose thread could not
/// be forked).
const FORK_HEAD: &str = "This session branches off an earlier conversation (a fork) and starts in a new Codex thread. \
What was said before, oldest first (earlier parts may be left out):";

/// The digest of `history` in at most about `max` bytes; `None` when nothing was said.
pub fn digest(history: &History, max: usize) -> Option<String> {
    digest_headed(history, max, HEAD)
}

/// The digest of `history` for a session that forks it, in at most about `max` bytes; `None`
/// when nothing was said.
pub fn fork_digest(history: &History, max: usize) -> Option<String> {
    digest_headed(history, max, FORK_HEAD)
}

fn digest_headed(history: &History, max: usize, head: &str) -> Option<String> {
    let mut turns: Vec<String> = Vec::new();
    let mut answer = String::new();
    // The markdown plans (ADR 0053) of the turn, which the client was shown instead of text:
    // the one being put together, and each one's text so far (a turn can give more than one).
    let mut plan = MarkdownPlan::default();
    let mut plans: Vec<String> = Vec::new();
    let flush =
        |answer: &mut String, plan: &mut MarkdownPlan, plans: &mut Vec<String>, turns: &mut Vec<String>| {
            if !answer.trim().is_empty() {
                turns.push(format!("Agent: {}", answer.trim()));
            }
            for text in plans.drain(..) {
                if !text.trim().is_empty() {
                    turns.push(format!("Agent's plan: {}", text.trim()));
                }
            }
            answer.clear();
            plan.clear();
        };
    for record in &history.records {
        match record {
            Record::Prompt { prompt, .. } => {
                flush(&mut answer, &mut plan, &mut plans, &mut turns);
                let text: Vec<&str> = prompt
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::Text(t) => Some(t.text.as_str()),
                        _ => None,
                    })
                    .collect();
                turns.push(format!("User: {}", text.join("\n").trim()));
            }
            Record::Update { u } => {
                // A subagent's words are its own, not this conversation's.
                if crate::provider::route::is_subagents(u) {
                    continue;
                }
                match plan.apply(u).map(|change| matches!(change, Change::Started(_))) {
                    Some(true) => {
                        plans.push(plan.text().to_owned());
                        continue;
                    }
                    Some(false) => {
                        if let Some(last) = plans.last_mut() {
                            plan.text().clone_into(last);
                        }
                        continue;
                    }
                    None => {}
                }
                if let SessionUpdate::AgentMessageChunk(chunk) = u.as_ref()
                    && let ContentBlock::Text(t) = &chunk.content
                {
                    answer.push_str(&t.text);
                }
            }
            _ => {}
        }
    }
    flush(&mut answer, &mut plan, &mut plans, &mut turns);
    if turns.is_empty() {
        return None;
    }
    let mut kept: Vec<String> = Vec::new();
    let mut size = head.len();
    for turn in turns.into_iter().rev() {
        let turn = clip(&turn, max / 4);
        if size + turn.len() + 2 > max {
            break;
        }
        size += turn.len() + 2;
        kept.push(turn);
    }
    kept.reverse();
    Some(format!("{head}\n\n{}", kept.join("\n\n")))
}

/// `text` cut to at most `max` bytes at a character boundary, marked when cut.
fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max.saturating_sub(3);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}
