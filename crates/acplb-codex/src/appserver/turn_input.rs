//! A prompt as app-server input items: text plus local images (and a skill the prompt invoked)
//! for `turn/start` and `turn/steer`, and plugin notes as developer messages for `thread/inject_items`.

use std::path::PathBuf;

use serde_json::{Value, json};

/// The `input` array of `turn/start` / `turn/steer`.
pub(crate) fn user_input(text: &str, images: &[PathBuf]) -> Value {
    let mut items = vec![json!({ "type": "text", "text": text, "text_elements": [] })];
    items.extend(
        images
            .iter()
            .map(|path| json!({ "type": "localImage", "path": path })),
    );
    Value::Array(items)
}

/// Puts skill `name` (its `SKILL.md` at `path`) first in `input`, as Codex's own composer
/// sends a skill the user picked; the text still mentions it (`$name`).
pub(crate) fn add_skill(input: &mut Value, name: &str, path: &std::path::Path) {
    if let Value::Array(items) = input {
        items.insert(0, json!({ "type": "skill", "name": name, "path": path }));
    }
}

/// Responses API developer messages carrying the plugins' notes for one turn.
pub(crate) fn developer_items(notes: &[String]) -> Vec<Value> {
    notes
        .iter()
        .map(|text| {
            json!({
                "type": "message",
                "role": "developer",
                "content": [{ "type": "input_text", "text": text }],
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_comes_first_then_images_and_notes_are_developer_messages() {
        let input = user_input("hi", &[PathBuf::from("/tmp/a.png")]);
        assert_eq!(input[0]["type"], "text");
        assert_eq!(input[0]["text"], "hi");
        assert_eq!(input[1], json!({ "type": "localImage", "path": "/tmp/a.png" }));
        let notes = developer_items(&["mail waiting".into()]);
        assert_eq!(notes[0]["role"], "developer");
        assert_eq!(notes[0]["content"][0]["text"], "mail waiting");
    }

    #[test]
    fn a_picked_skill_goes_first() {
        let mut input = user_input("$demo go", &[]);
        add_skill(
            &mut input,
            "demo",
            std::path::Path::new("/h/skills/demo/SKILL.md"),
        );
        assert_eq!(
            input[0],
            json!({ "type": "skill", "name": "demo", "path": "/h/skills/demo/SKILL.md" })
        );
        assert_eq!(input[1]["text"], "$demo go");
    }
}
