//! `item/tool/requestUserInput`: Codex asking the user questions mid-turn (its
//! `request_user_input` tool, offered in plan mode). A client that shows forms gets them as
//! one ACP `elicitation/create` form ([`form`]) and its answers go back as Codex reads them
//! ([`answers`]); any other client's questions are answered at once with no answer, so the
//! turn never hangs, and the editor is shown what was asked ([`answer_user_input`]).

use std::fmt::Write as _;

use acplb_core::provider::{ElicitAnswer, ElicitAsk};
use agent_client_protocol::v1::schema::{ElicitationSchema, EnumOption, SessionUpdate, StringPropertySchema};
use serde_json::{Map, Value, json};

use crate::render::emit;

/// The suffix of the free-text field beside a question whose options allow another answer.
const OTHER: &str = ".other";

fn questions(params: &Value) -> &[Value] {
    params
        .get("questions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn field(q: &Value, key: &str) -> String {
    q.get(key).and_then(Value::as_str).unwrap_or_default().to_owned()
}

fn options(q: &Value) -> &[Value] {
    q.get("options")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The form asking Codex's questions: one field per question (a choice of its options, else
/// text; beside the choice, a text field for another answer where Codex allows one, marked as
/// the custom answer for a `JetBrains` AIR client (`air`), as the TS peer marks it). `None`
/// when the request holds no question with an id (then [`answer_user_input`] answers it).
pub(crate) fn form(params: &Value, air: bool) -> Option<ElicitAsk> {
    let mut schema = ElicitationSchema::new();
    let mut asked = Vec::new();
    for question in questions(params) {
        let id = field(question, "id");
        if id.is_empty() {
            continue;
        }
        let (header, text) = (field(question, "header"), field(question, "question"));
        let title = if header.is_empty() { text.clone() } else { header };
        asked.push(text.clone());
        let mut property = StringPropertySchema::new().title(title.clone()).description(text);
        let choices: Vec<EnumOption> = options(question)
            .iter()
            .map(|o| (field(o, "label"), field(o, "description")))
            .filter(|(label, _)| !label.is_empty())
            .map(|(label, description)| {
                EnumOption::new(label.clone(), label).description(Some(description).filter(|d| !d.is_empty()))
            })
            .collect();
        let other = question.get("isOther").and_then(Value::as_bool) == Some(true);
        if choices.is_empty() {
            schema = schema.property(id, property, true);
            continue;
        }
        property = property.one_of(choices);
        if other {
            let mut free = StringPropertySchema::new()
                .title(format!("{title}: another answer"))
                .description("Used instead of the choice when filled in.".to_owned());
            if air {
                free.meta = Some(custom_answer());
            }
            schema = schema.property(format!("{id}{OTHER}"), free, false);
        }
        schema = schema.property(id, property, !other);
    }
    if asked.is_empty() {
        return None;
    }
    let message = match asked.as_slice() {
        [one] => format!("Codex asks: {one}"),
        more => format!("Codex has {} questions for you.", more.len()),
    };
    Some(ElicitAsk {
        message,
        schema,
        tool_call_id: None,
    })
}

/// `_meta` of a free-text answer for an AIR client: `jetbrains.air.customAnswer`, and the key
/// AIR read before it (`_askUserQuestionCustomAnswer`), both as the TS peer sends them.
fn custom_answer() -> Map<String, Value> {
    let mut meta = acplb_core::capabilities::air_meta("customAnswer", json!(true));
    meta.insert("_askUserQuestionCustomAnswer".to_owned(), json!(true));
    meta
}

/// The `result` carrying the editor's answer to Codex: each question's answer from its field
/// (another answer, when given, in place of the choice); a declined, cancelled or unanswered
/// form, and any field that is missing or of an odd type, answer the question with nothing.
pub(crate) fn answers(params: &Value, answer: &ElicitAnswer) -> Value {
    let content = match answer {
        ElicitAnswer::Accepted(content) => Some(content),
        ElicitAnswer::Declined | ElicitAnswer::Cancelled | ElicitAnswer::Unanswered(_) => None,
    };
    let mut out = Map::new();
    for question in questions(params) {
        let id = field(question, "id");
        if id.is_empty() {
            continue;
        }
        let given = content.map(|c| {
            let other = c.get(&format!("{id}{OTHER}")).map(texts).unwrap_or_default();
            if other.is_empty() {
                c.get(&id).map(texts).unwrap_or_default()
            } else {
                other
            }
        });
        out.insert(id, json!({ "answers": given.unwrap_or_default() }));
    }
    json!({ "answers": out })
}

/// A field's value as answer texts (blank ones left out).
fn texts(value: &Value) -> Vec<String> {
    let all = match value {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items.iter().flat_map(texts).collect(),
        Value::Number(n) => vec![n.to_string()],
        Value::Bool(b) => vec![b.to_string()],
        Value::Null | Value::Object(_) => Vec::new(),
    };
    all.into_iter().filter(|s| !s.trim().is_empty()).collect()
}

/// The `result` that answers the request (an empty answer per question) so the turn never
/// hangs, and an agent message in `out` showing the questions.
pub fn answer_user_input(params: &Value, out: &mut Vec<SessionUpdate>) -> Value {
    let questions = questions(params);
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
        for option in options(question) {
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

    fn asked() -> Value {
        json!({"threadId": "t", "turnId": "u", "itemId": "call_1", "isBlocking": true,
        "questions": [
            {"id": "scope", "header": "Scope", "question": "Which files?", "isOther": true, "isSecret": false,
             "options": [{"label": "All", "description": "every file"}, {"label": "Some", "description": ""}]},
            {"id": "why", "header": "", "question": "Why?", "isOther": false, "isSecret": false, "options": null}
        ]})
    }

    #[test]
    fn questions_become_one_form() {
        let ask = form(&asked(), false).unwrap();
        assert_eq!(ask.message, "Codex has 2 questions for you.");
        let schema = serde_json::to_value(&ask.schema).unwrap();
        assert_eq!(schema["properties"]["scope"]["oneOf"][0]["const"], "All");
        assert_eq!(
            schema["properties"]["scope"]["oneOf"][0]["description"],
            "every file"
        );
        assert_eq!(schema["properties"]["scope"]["title"], "Scope");
        assert_eq!(schema["properties"]["scope.other"]["type"], "string");
        assert_eq!(schema["properties"]["why"]["title"], "Why?");
        assert_eq!(schema["required"], json!(["why"]));
        assert!(schema["properties"]["scope.other"].get("_meta").is_none());
        assert!(form(&json!({"questions": [{"question": "no id"}]}), false).is_none());
    }

    #[test]
    fn an_air_client_sees_the_other_answer_marked_as_its_custom_answer() {
        let schema = serde_json::to_value(form(&asked(), true).unwrap().schema).unwrap();
        assert_eq!(
            schema["properties"]["scope.other"]["_meta"],
            json!({"jetbrains": {"air": {"version": 1, "customAnswer": true}}, "_askUserQuestionCustomAnswer": true})
        );
        assert!(
            schema["properties"]["why"].get("_meta").is_none(),
            "a plain text question has none"
        );
    }

    #[test]
    fn answers_go_back_as_codex_reads_them() {
        let accepted = |v: Value| ElicitAnswer::Accepted(v.as_object().unwrap().clone());
        assert_eq!(
            answers(&asked(), &accepted(json!({"scope": "Some", "why": "because"}))),
            json!({"answers": {"scope": {"answers": ["Some"]}, "why": {"answers": ["because"]}}})
        );
        // Another answer wins; odd types are read as text; missing and blank ones are empty.
        assert_eq!(
            answers(
                &asked(),
                &accepted(json!({"scope": "All", "scope.other": "src only", "why": 7}))
            ),
            json!({"answers": {"scope": {"answers": ["src only"]}, "why": {"answers": ["7"]}}})
        );
        assert_eq!(
            answers(
                &asked(),
                &accepted(json!({"why": {"x": 1}, "scope": [" ", true]}))
            ),
            json!({"answers": {"scope": {"answers": ["true"]}, "why": {"answers": []}}})
        );
        for nothing in [
            ElicitAnswer::Declined,
            ElicitAnswer::Cancelled,
            ElicitAnswer::Unanswered("x".into()),
        ] {
            assert_eq!(
                answers(&asked(), &nothing),
                json!({"answers": {"scope": {"answers": []}, "why": {"answers": []}}})
            );
        }
    }
}
