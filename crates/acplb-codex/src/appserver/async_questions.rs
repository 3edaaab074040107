//! Codex's async questions: its `request_user_input_async` tool (offered to a model whose
//! catalog entry lists it in `experimental_supported_tools`) returns to the model at once and
//! shows the user an agent message (`item/completed`, `delivery: "async"`) that carries
//! `questions: [{title, options?}]`; the turn does not stop for them. Here, pure: reading such
//! a message ([`asked`]), the form that asks its questions (made by the blocking questions' own
//! [`user_input::form`]), and the answer as the text steered into the turn ([`reply`]): the
//! tagged block Codex's own apps send, `<send_user_message_question_reply>` around a JSON array
//! of `{answer, question, questionItemId}`.

use acplb_core::provider::{ElicitAnswer, ElicitAsk};
use serde_json::{Value, json};

use super::user_input;

/// The tool that asks async questions.
pub(crate) const TOOL: &str = "request_user_input_async";
const REPLY_START: &str = "<send_user_message_question_reply>";
const REPLY_END: &str = "</send_user_message_question_reply>";
/// The longest question text sent back with an answer (characters).
const MAX_QUESTION_CHARS: usize = 512;
/// What the form says beside the questions.
const KEEPS_WORKING: &str =
    "Codex keeps working while you answer; an answer sent after it finishes is not delivered.";

/// The questions of one async message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Asked {
    /// The message's item id (the tool call's id).
    pub(crate) item_id: String,
    /// Each question's title and suggested answers, in order.
    pub(crate) questions: Vec<(String, Vec<String>)>,
}

/// The questions of an `item/completed` that is an async agent message; `None` for any other
/// message, and for one whose questions are all unreadable (no title).
pub(crate) fn asked(params: &Value) -> Option<Asked> {
    let item = params.get("item")?;
    if item.get("type").and_then(Value::as_str) != Some("agentMessage")
        || item.get("delivery").and_then(Value::as_str) != Some("async")
    {
        return None;
    }
    let questions: Vec<(String, Vec<String>)> = item
        .get("questions")
        .and_then(Value::as_array)?
        .iter()
        .filter_map(|q| {
            let title = q.get("title").and_then(Value::as_str)?.trim();
            let options = q
                .get("options")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .filter(|o| !o.trim().is_empty())
                .map(str::to_owned)
                .collect();
            (!title.is_empty()).then(|| (title.to_owned(), options))
        })
        .collect();
    if questions.is_empty() {
        return None;
    }
    let item_id = item
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    Some(Asked { item_id, questions })
}

/// The questions in the shape of a blocking `item/tool/requestUserInput`: one field per
/// question (`question_<n>`), a choice of its suggested answers with room for another answer
/// (Codex always takes one), else free text.
fn as_user_input(asked: &Asked) -> Value {
    let questions: Vec<Value> = asked
        .questions
        .iter()
        .enumerate()
        .map(|(n, (title, options))| {
            let labels: Vec<Value> = options
                .iter()
                .map(|o| json!({"label": o, "description": ""}))
                .collect();
            json!({"id": format!("question_{n}"), "header": "", "question": title,
                   "isOther": !labels.is_empty(), "isSecret": false, "options": labels})
        })
        .collect();
    json!({ "questions": questions })
}

/// The form asking the questions (with AIR's marks for an AIR client, `air`); it says that
/// Codex works on meanwhile.
pub(crate) fn form(asked: &Asked, air: bool) -> Option<ElicitAsk> {
    let mut ask = user_input::form(&as_user_input(asked), air)?;
    ask.message = format!("{} {KEEPS_WORKING}", ask.message);
    Some(ask)
}

/// The text that carries the user's answers into the turn; `None` when nothing was answered
/// (declined, dismissed, or every field left blank).
pub(crate) fn reply(asked: &Asked, answer: &ElicitAnswer) -> Option<String> {
    let answers = user_input::answers(&as_user_input(asked), answer);
    let replies: Vec<Value> = asked
        .questions
        .iter()
        .enumerate()
        .filter_map(|(n, (title, _))| {
            let given: Vec<&str> = answers
                .pointer(&format!("/answers/question_{n}/answers"))
                .and_then(Value::as_array)?
                .iter()
                .filter_map(Value::as_str)
                .collect();
            if given.is_empty() {
                return None;
            }
            let question: String = title
                .chars()
                .take(MAX_QUESTION_CHARS)
                .map(|c| if c == '\r' || c == '\n' { ' ' } else { c })
                .collect();
            let id = json!([TOOL, asked.item_id, n]).to_string();
            Some(json!({"answer": given.join(", "), "question": question, "questionItemId": id}))
        })
        .collect();
    if replies.is_empty() {
        return None;
    }
    Some(format!("{REPLY_START}\n{}\n{REPLY_END}", Value::Array(replies)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completed(item: Value) -> Value {
        let mut params = json!({"threadId": "t", "turnId": "u"});
        params["item"] = item;
        params
    }

    fn message() -> Value {
        completed(
            json!({"type": "agentMessage", "id": "call_9", "text": "Which color?\n- Blue\n- Red",
            "phase": "final_answer", "delivery": "async", "questions": [
                {"title": "Which color?", "options": ["Blue", "Red"]},
                {"title": "Anything else?", "options": null}
            ]}),
        )
    }

    #[test]
    fn only_async_messages_with_a_readable_question_ask() {
        let asked = asked(&message()).unwrap();
        assert_eq!(asked.item_id, "call_9");
        assert_eq!(
            asked.questions,
            [
                (
                    "Which color?".to_owned(),
                    vec!["Blue".to_owned(), "Red".to_owned()]
                ),
                ("Anything else?".to_owned(), vec![])
            ]
        );
        for other in [
            completed(json!({"type": "agentMessage", "id": "m", "text": "hi", "delivery": null})),
            completed(
                json!({"type": "reasoning", "id": "r", "delivery": "async", "questions": [{"title": "x"}]}),
            ),
            completed(json!({"type": "agentMessage", "delivery": "async", "questions": []})),
            completed(json!({"type": "agentMessage", "delivery": "async", "questions": "what?"})),
            completed(
                json!({"type": "agentMessage", "delivery": "async", "questions": [7, {"title": " "}, {"options": ["a"]}]}),
            ),
            json!(null),
        ] {
            assert!(super::asked(&other).is_none(), "{other}");
        }
        // Odd entries are left out; the rest still ask.
        let mixed = completed(json!({"type": "agentMessage", "id": "m", "delivery": "async",
            "questions": [7, {"title": "Go?", "options": [3, "yes", " "]}]}));
        assert_eq!(
            super::asked(&mixed).unwrap().questions,
            [("Go?".to_owned(), vec!["yes".to_owned()])]
        );
    }

    #[test]
    fn the_form_offers_the_suggestions_and_room_for_another_answer() {
        let ask = form(&asked(&message()).unwrap(), false).unwrap();
        assert!(
            ask.message.starts_with("Codex has 2 questions for you."),
            "{}",
            ask.message
        );
        assert!(ask.message.contains("keeps working"), "{}", ask.message);
        let schema = serde_json::to_value(&ask.schema).unwrap();
        assert_eq!(schema["properties"]["question_0"]["oneOf"][1]["const"], "Red");
        assert_eq!(schema["properties"]["question_0.other"]["type"], "string");
        assert_eq!(schema["properties"]["question_1"]["title"], "Anything else?");
    }

    #[test]
    fn answers_are_steered_as_codexs_tagged_reply() {
        let asked = asked(&message()).unwrap();
        let content = json!({"question_0": "Blue", "question_1": "ship it"});
        let text = reply(
            &asked,
            &ElicitAnswer::Accepted(content.as_object().unwrap().clone()),
        )
        .unwrap();
        let body = text
            .strip_prefix("<send_user_message_question_reply>\n")
            .and_then(|t| t.strip_suffix("\n</send_user_message_question_reply>"))
            .unwrap();
        let body: Value = serde_json::from_str(body).unwrap();
        assert_eq!(
            body,
            json!([
                {"answer": "Blue", "question": "Which color?",
                 "questionItemId": "[\"request_user_input_async\",\"call_9\",0]"},
                {"answer": "ship it", "question": "Anything else?",
                 "questionItemId": "[\"request_user_input_async\",\"call_9\",1]"}
            ])
        );
        // Only what was answered goes back; nothing answered, nothing to send.
        let one = json!({"question_0": "Red", "question_0.other": "Green", "question_1": " "});
        let text = reply(&asked, &ElicitAnswer::Accepted(one.as_object().unwrap().clone())).unwrap();
        assert!(
            text.contains("\"answer\":\"Green\"") && !text.contains("Anything else"),
            "{text}"
        );
        for nothing in [
            ElicitAnswer::Declined,
            ElicitAnswer::Cancelled,
            ElicitAnswer::Unanswered("gone".into()),
            ElicitAnswer::Accepted(serde_json::Map::new()),
        ] {
            assert_eq!(reply(&asked, &nothing), None);
        }
    }
}
