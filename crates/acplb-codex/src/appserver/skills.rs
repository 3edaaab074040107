//! What Codex's `skills/list` says: the enabled skills of a session's directory, each with a
//! name fit for a command and a short description, and the skill files Codex could not read
//! (a malformed `SKILL.md`). An answer that is not a list is an error; an entry that makes no
//! sense is left out, and said why.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::protocol::requests::SkillsList;
use super::rpc::Rpc;
use crate::skills::{MAX_EACH, Skill, one_line, safe_name};

/// The skills of `cwd` and why any were left out; `reload` has Codex read the files again.
pub(crate) async fn list(rpc: &Rpc, cwd: &Path, reload: bool) -> Result<(Vec<Skill>, Vec<String>), String> {
    let params = SkillsList {
        cwds: vec![cwd.to_path_buf()],
        force_reload: reload,
    };
    let answer = rpc
        .request(&params)
        .await
        .map_err(|e| format!("codex app-server did not list its skills: {e}"))?;
    parse(&answer)
}

/// One `skills/list` answer.
pub(crate) fn parse(answer: &Value) -> Result<(Vec<Skill>, Vec<String>), String> {
    let entries = answer
        .get("data")
        .and_then(Value::as_array)
        .ok_or("codex app-server answered `skills/list` without a list of skills")?;
    let mut skills: Vec<Skill> = Vec::new();
    let mut notes = Vec::new();
    let mut over = 0_usize;
    for entry in entries {
        for error in entry
            .get("errors")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let text = |k| error.get(k).and_then(Value::as_str).unwrap_or("?");
            notes.push(format!(
                "skill `{}` could not be loaded: {}",
                text("path"),
                text("message")
            ));
        }
        for listed in entry
            .get("skills")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if listed.get("enabled").and_then(Value::as_bool) == Some(false) {
                continue;
            }
            let skill = match skill(listed) {
                Ok(skill) => skill,
                Err(why) => {
                    notes.push(why);
                    continue;
                }
            };
            if skills.iter().any(|s| s.name == skill.name) {
                // Codex lists the nearer scope first; it is the one a mention runs.
                continue;
            }
            if skills.len() == MAX_EACH {
                over += 1;
                continue;
            }
            skills.push(skill);
        }
    }
    if over > 0 {
        notes.push(format!(
            "{over} more skills are not offered as commands (at most {MAX_EACH})"
        ));
    }
    Ok((skills, notes))
}

fn skill(listed: &Value) -> Result<Skill, String> {
    let text = |pointer| {
        listed
            .pointer(pointer)
            .and_then(Value::as_str)
            .filter(|t| !t.trim().is_empty())
    };
    let name = text("/name").ok_or("a skill without a name was left out")?;
    if !safe_name(name) {
        return Err(format!(
            "skill {:?} was left out: its name is not 1-64 letters, digits, `-`, `_`, `.`, `:`",
            one_line(name)
        ));
    }
    let path = text("/path").ok_or_else(|| format!("skill `{name}` was left out: it has no path"))?;
    let description = text("/interface/shortDescription")
        .or_else(|| text("/shortDescription"))
        .or_else(|| text("/description"))
        .unwrap_or(name);
    Ok(Skill {
        name: name.to_owned(),
        description: one_line(description),
        path: PathBuf::from(path),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn skills_errors_and_odd_entries() {
        let answer = json!({"data": [{"cwd": "/w", "skills": [
            {"name": "demo", "description": "Long text", "shortDescription": "Short", "path": "/h/demo/SKILL.md", "enabled": true},
            {"name": "off", "description": "x", "path": "/h/off/SKILL.md", "enabled": false},
            {"name": "../evil", "description": "x", "path": "/h/e/SKILL.md", "enabled": true},
            {"name": "nopath", "description": "x", "enabled": true},
            {"description": "nameless", "path": "/h/n/SKILL.md"},
            {"name": "demo", "description": "user scope twin", "path": "/u/demo/SKILL.md", "enabled": true},
            {"name": "iface", "description": "x", "interface": {"shortDescription": "From the interface"}, "path": "/h/i/SKILL.md", "enabled": true},
        ], "errors": [{"path": "/h/broken/SKILL.md", "message": "missing YAML frontmatter"}]}]});
        let (skills, notes) = parse(&answer).expect("a list");
        let shown: Vec<(&str, &str)> = skills
            .iter()
            .map(|s| (s.name.as_str(), s.description.as_str()))
            .collect();
        assert_eq!(shown, [("demo", "Short"), ("iface", "From the interface")]);
        assert_eq!(skills[0].path, PathBuf::from("/h/demo/SKILL.md"));
        assert_eq!(notes.len(), 4, "{notes:?}");
        assert!(notes[0].contains("/h/broken/SKILL.md") && notes[0].contains("missing YAML"));
    }

    #[test]
    fn a_wrong_shape_is_an_error_and_many_skills_are_capped() {
        assert!(parse(&json!({"skills": []})).is_err());
        assert!(parse(&json!({"data": "nope"})).is_err());
        assert_eq!(
            parse(&json!({"data": [{"skills": 3}]})),
            Ok((Vec::new(), Vec::new()))
        );
        let many: Vec<Value> = (0..MAX_EACH + 5)
            .map(|i| json!({"name": format!("s{i}"), "description": "d".repeat(5000), "path": "/p", "enabled": true}))
            .collect();
        let (skills, notes) = parse(&json!({"data": [{"skills": many}]})).expect("a list");
        assert_eq!(skills.len(), MAX_EACH);
        assert!(skills[0].description.chars().count() <= crate::skills::MAX_DESCRIPTION);
        assert_eq!(
            notes,
            [format!(
                "5 more skills are not offered as commands (at most {MAX_EACH})"
            )]
        );
    }
}
