//! Codex's skills and custom prompts as slash commands (ADR 0032), end to end with the real
//! Codex 0.169.0 and the mock model, on the transport of this run (`ACPLB_TRANSPORT`): a skill
//! in `CODEX_HOME/skills` and a prompt in `CODEX_HOME/prompts` arrive in an
//! `available_commands_update` beside the built-in commands; `/$skill` has Codex send the
//! skill's instructions to the model, `/prompts:name` sends the expanded prompt; a skill added
//! while the session is open shows up (app-server: when Codex says `skills/changed`; exec: when
//! a prompt names it).

use std::path::Path;
use std::time::Duration;

use agent_client_protocol::v1::schema::SessionId;

use crate::harness::{Updates, eventually, open_session, prompt, transport};
use crate::live::{Live, assert_end_turn};

/// Writes skill `name` under `root` (`<root>/<name>/SKILL.md`) whose instructions say `marker`.
pub fn write_skill(root: &Path, name: &str, description: &str, marker: &str) {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n---\n\n{marker}: answer in one line.\n"),
    )
    .unwrap();
}

/// The command names of every `available_commands_update` so far, the last one last.
pub fn command_lists(updates: &Updates) -> Vec<Vec<String>> {
    updates
        .of_kind("available_commands_update")
        .iter()
        .map(|u| {
            u["availableCommands"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .collect()
}

/// Whether the last command list names `command`.
pub fn offers(updates: &Updates, command: &str) -> bool {
    command_lists(updates)
        .last()
        .is_some_and(|names| names.iter().any(|n| n == command))
}

/// Every request body the mock model received, as text.
fn bodies(live: &Live) -> Vec<String> {
    live.mock.requests().iter().map(|r| r.body.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_and_a_prompt_are_offered_and_run_as_codex_runs_them() {
    let mut live = Live::start();
    let home = live.env.home();
    write_skill(
        &home.join("skills"),
        "demo-skill",
        "A demo skill for tests",
        "SKILL-MARKER-7",
    );
    std::fs::create_dir_all(home.join("prompts")).unwrap();
    std::fs::write(
        home.join("prompts/greet.md"),
        "---\ndescription: Greets someone\n---\nPROMPT-MARKER greet $NAME warmly.\n",
    )
    .unwrap();
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let (offered, after_skill) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, session) = open_session(&cx, &cwd).await?;
            let id: SessionId = session.session_id;
            eventually(Duration::from_secs(30), || offers(&updates, "$demo-skill")).await;
            let offered = command_lists(&updates).last().cloned().unwrap_or_default();
            assert_end_turn(&prompt(&cx, &id, "/$demo-skill say hi").await?.stop_reason);
            let after_skill = updates.agent_text();
            assert_end_turn(&prompt(&cx, &id, "/prompts:greet NAME=Bob").await?.stop_reason);
            Ok((offered, after_skill))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let stderr = live.acplb.stderr();
    assert!(
        offered.contains(&"$demo-skill".to_owned()),
        "{offered:?}\n{stderr}"
    );
    assert!(offered.contains(&"prompts:greet".to_owned()), "{offered:?}");
    if transport() == "app-server" {
        for builtin in ["review", "compact", "status"] {
            assert!(
                offered.contains(&builtin.to_owned()),
                "the built-ins stay: {offered:?}"
            );
        }
    }
    assert!(!after_skill.is_empty(), "the skill's turn answered\n{stderr}");
    let bodies = bodies(&live);
    assert_eq!(bodies.len(), 2, "one request per prompt\n{stderr}");
    assert!(
        bodies[0].contains("SKILL-MARKER-7"),
        "the skill's instructions reached the model: {}",
        bodies[0]
    );
    let texts = live.mock.requests()[1].user_texts();
    assert!(
        texts
            .iter()
            .any(|t| t.contains("PROMPT-MARKER greet Bob warmly.")),
        "the expanded prompt reached the model: {texts:?}"
    );
    assert!(!bodies[1].contains("$NAME"), "no placeholder left");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_added_while_the_session_is_open_shows_up() {
    let mut live = Live::start();
    let skills = live.env.home().join("skills");
    write_skill(&skills, "first-skill", "The first", "FIRST-MARKER");
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let exec = transport() == "exec";
    let (announced, shown_after_prompt) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, session) = open_session(&cx, &cwd).await?;
            let id: SessionId = session.session_id;
            assert!(
                eventually(Duration::from_secs(30), || offers(&updates, "$first-skill")).await,
                "the first listing arrives"
            );
            // A turn first: Codex watches the skill folders of its loaded threads.
            assert_end_turn(&prompt(&cx, &id, "hello").await?.stop_reason);
            write_skill(&skills, "late-skill", "Added later", "LATE-MARKER");
            // app-server: Codex watches the skill folders and says `skills/changed`.
            let announced =
                !exec && eventually(Duration::from_secs(30), || offers(&updates, "$late-skill")).await;
            // Both: a prompt naming it has it listed again first, and it runs.
            assert_end_turn(&prompt(&cx, &id, "/$late-skill go").await?.stop_reason);
            Ok((announced, offers(&updates, "$late-skill")))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let stderr = live.acplb.stderr();
    if !exec {
        assert!(announced, "skills/changed brought a new command list\n{stderr}");
    }
    assert!(
        shown_after_prompt,
        "the editor's list names the new skill\n{stderr}"
    );
    let bodies = bodies(&live);
    assert!(
        bodies.last().is_some_and(|b| b.contains("LATE-MARKER")),
        "the new skill's instructions reached the model\n{stderr}"
    );
}
