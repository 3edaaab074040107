//! `item/tool/requestUserInput`: Codex asking the user questions mid-turn. ACP has no way to
//! put them to the user, so they are answered at once (with no answer, so Codex goes on without
//! a choice made for the user) and the editor is shown what was asked.

use std::fmt::Write as _;

use agent_client_protocol::v1::schema::SessionUpdate;
use serde_json::{Map, Value, json};

use crate::render::emit;

/// The `result` that answers the request (an empty answer per question) so the turn never
/// hangs, and an agent message in `out` showing the questions.
pub fn answer_user_input(params: &Value, out: &mut Vec<SessionUpdate>) -> Value {
    let questions = params
        .get("questions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let field = |q: &Value, key: &str| q.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
    let mut answers = Map::new();
    let mut text =
        String::from("\n\nCodex asked a question that acplb cannot put to you, so it went unanswered:\n");
    for question in questions {
        let id = field(question, "id");
        if !id.is_empty() {
            answers.insert(id, json!({ "answers": [] }));
        }
        let header = field(question, "header");
        let asked = field(question, "question");
        text.push_str("\n- ");
        if !header.is_empty() {
            let _ = write!(text, "**{header}** ");
        }
        text.push_str(&asked);
        for option in question
            .get("options")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let (label, description) = (field(option, "label"), field(option, "description"));
            let _ = write!(text, "\n  - {label}");
            if !description.is_empty() {
                let _ = write!(text, ": {description}");
            }
        }
    }
    if questions.is_empty() {
        text.push_str("\n(the request held no question)");
    }
    let item = params.get("itemId").and_then(Value::as_str).unwrap_or("question");
    emit::agent_text(out, text, format!("request_user_input_{item}"));
    json!({ "answers": answers })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_question_gets_an_empty_answer_and_is_shown() {
        let params = json!({"threadId": "t", "turnId": "u", "itemId": "call_1", "isBlocking": true,
        "questions": [
            {"id": "q1", "header": "Scope", "question": "Which files?", "isOther": false, "isSecret": false,
             "options": [{"label": "All", "description": "every file"}, {"label": "Some", "description": ""}]},
            {"id": "q2", "header": "", "question": "Why?", "isOther": true, "isSecret": false, "options": null}
        ]});
        let mut out = Vec::new();
        let result = answer_user_input(&params, &mut out);
        assert_eq!(
            result,
            json!({"answers": {"q1": {"answers": []}, "q2": {"answers": []}}})
        );
        let update = serde_json::to_value(&out[0]).unwrap();
        assert_eq!(update["sessionUpdate"], "agent_message_chunk");
        assert_eq!(update["messageId"], "request_user_input_call_1");
        let text = update["content"]["text"].as_str().unwrap();
        assert!(
            text.contains("- **Scope** Which files?\n  - All: every file\n  - Some"),
            "{text}"
        );
        assert!(text.contains("\n- Why?"), "{text}");
    }

    #[test]
    fn malformed_requests_still_get_an_answer() {
        let mut out = Vec::new();
        for params in [
            json!(null),
            json!({"questions": 5}),
            json!({"questions": [7, {"id": 3}]}),
        ] {
            assert_eq!(answer_user_input(&params, &mut out), json!({"answers": {}}));
        }
        assert_eq!(out.len(), 3);
    }
}
