//! Skills and custom prompts that go wrong (ADR 0032): a malformed `SKILL.md` beside good
//! ones, a skill deleted between its listing and its use, a `skills/list` that fails or answers
//! garbage, hundreds of skills with huge descriptions, prompt files with unsafe names and a
//! prompt given arguments that do not fit. The session keeps working, the good ones are still
//! offered, and what went wrong shows in acplb's log or in the prompt's error.

use std::path::Path;
use std::time::Duration;

use agent_client_protocol::v1::schema::SessionId;

use super::stand_in::{NO_MODEL_LIST, app_server_answering, spawn_app_server};
use crate::harness::{Acplb, Updates, eventually, open_session, prompt};
use crate::live::{Live, assert_end_turn};
use crate::skills::{command_lists, offers, write_skill};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_skill_leaves_the_others_offered_and_says_why_in_the_log() {
    let mut live = Live::start();
    let skills = live.env.home().join("skills");
    write_skill(&skills, "good-skill", "Fine", "GOOD-MARKER");
    std::fs::create_dir_all(skills.join("broken")).unwrap();
    std::fs::write(
        skills.join("broken/SKILL.md"),
        "---\nname: [bad\n--\nno front matter end\n",
    )
    .unwrap();
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let stderr = live.acplb.stderr_reader();
    live.acplb
        .client(&updates, async |cx| {
            let (_, session) = open_session(&cx, &cwd).await?;
            assert!(
                eventually(Duration::from_secs(30), || offers(&updates, "$good-skill")).await,
                "the good skill is offered"
            );
            eventually(Duration::from_secs(10), || stderr().contains("broken/SKILL.md")).await;
            assert_end_turn(
                &prompt(&cx, &session.session_id, "/$good-skill go")
                    .await?
                    .stop_reason,
            );
            Ok(())
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let log = live.acplb.stderr();
    assert!(
        log.contains("broken/SKILL.md` could not be loaded"),
        "the malformed skill is named in the log: {log}"
    );
    assert!(
        !command_lists(&updates)
            .concat()
            .iter()
            .any(|n| n.contains("broken"))
    );
    assert!(live.mock.requests()[0].body.to_string().contains("GOOD-MARKER"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_deleted_after_its_listing_fails_its_prompt_clearly() {
    let mut live = Live::start();
    let skills = live.env.home().join("skills");
    write_skill(&skills, "doomed", "Soon gone", "DOOMED-MARKER");
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let (error, after) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, session) = open_session(&cx, &cwd).await?;
            let id: SessionId = session.session_id;
            assert!(eventually(Duration::from_secs(30), || offers(&updates, "$doomed")).await);
            std::fs::remove_dir_all(skills.join("doomed")).unwrap();
            let error = prompt(&cx, &id, "/$doomed go")
                .await
                .expect_err("a skill that is gone");
            // The session goes on.
            assert_end_turn(&prompt(&cx, &id, "hello").await?.stop_reason);
            Ok((error, prompt(&cx, &id, "/$doomed again").await))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let message = error.message.clone() + &format!("{:?}", error.data);
    assert!(
        message.contains("doomed") && (message.contains("is gone") || message.contains("names no skill")),
        "{error:?}"
    );
    assert!(after.is_err(), "still gone: {after:?}");
    assert!(
        live.mock
            .requests()
            .iter()
            .all(|r| !r.body.to_string().contains("DOOMED-MARKER")),
        "the deleted skill never ran"
    );
}

/// The session's command lists with a stand-in app-server whose `skills/list` runs `on_skills`,
/// and acplb's log once it said `why`.
/// (Waiting also for a command list naming `expect`, when given.)
async fn commands_with(
    dir: &Path,
    on_skills: &str,
    why: &str,
    expect: Option<&str>,
) -> (Vec<Vec<String>>, String) {
    let codex = app_server_answering(dir, "", NO_MODEL_LIST, on_skills);
    let mut acplb: Acplb = spawn_app_server(dir, &codex, &[]);
    let cwd = dir.to_owned();
    let stderr = acplb.stderr_reader();
    let updates = Updates::default();
    let seen = updates.clone();
    acplb
        .client(&updates, async |cx| {
            open_session(&cx, &cwd).await?;
            eventually(Duration::from_secs(20), || {
                stderr().contains(why) && expect.is_none_or(|c| offers(&seen, c))
            })
            .await;
            Ok(())
        })
        .await
        .expect("session/new opens although the skills could not be listed");
    (command_lists(&seen), acplb.stderr())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_list_that_fails_or_is_garbage_leaves_the_builtins() {
    let answers = [
        (
            r#"echo "{\"id\":$i,\"error\":{\"code\":-32603,\"message\":\"skills exploded\"}}""#,
            "skills exploded",
        ),
        (
            r#"echo "{\"id\":$i,\"result\":{\"data\":\"all of them\"}}""#,
            "without a list of skills",
        ),
        (
            r#"echo "{\"id\":$i,\"result\":{\"data\":[{\"skills\":[{\"name\":\"no path\"},{\"name\":\"ok\",\"path\":\"/p/SKILL.md\",\"enabled\":true,\"description\":7}]}]}}""#,
            "left out",
        ),
    ];
    for (on_skills, why) in answers {
        let dir = tempfile::tempdir().unwrap();
        let expect = (why == "left out").then_some("$ok");
        let (lists, stderr) = commands_with(dir.path(), on_skills, why, expect).await;
        assert!(stderr.contains(why), "{why}\n{stderr}");
        let last = lists.last().cloned().unwrap_or_default();
        assert!(
            last.iter().any(|n| n == "review"),
            "the built-ins stay: {lists:?}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        if why == "left out" {
            assert!(
                last.iter().any(|n| n == "$ok"),
                "the sound entry is offered: {lists:?}\n{stderr}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundreds_of_skills_and_unsafe_prompt_names_are_capped_and_left_out() {
    let mut live = Live::start();
    let home = live.env.home();
    let long = "very long description ".repeat(300);
    for n in 0..230 {
        write_skill(&home.join("skills"), &format!("bulk-{n:03}"), &long, "BULK");
    }
    let prompts = home.join("prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    for name in ["fine", "has space", "-dash", "ünicode", "tab\tname", "dot..dot"] {
        std::fs::write(prompts.join(format!("{name}.md")), "Say $1.\n").unwrap();
    }
    std::fs::write(prompts.join("named.md"), "Review $FILE.\n").unwrap();
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let error = live
        .acplb
        .client(&updates, async |cx| {
            let (_, session) = open_session(&cx, &cwd).await?;
            assert!(
                eventually(Duration::from_secs(60), || offers(&updates, "prompts:fine")).await,
                "the prompts are offered"
            );
            Ok(prompt(&cx, &session.session_id, "/prompts:named oops").await)
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let stderr = live.acplb.stderr();
    let update = updates.of_kind("available_commands_update").pop().unwrap();
    let commands = update["availableCommands"].as_array().unwrap();
    let skills = commands
        .iter()
        .filter(|c| c["name"].as_str().unwrap().starts_with('$'))
        .count();
    assert_eq!(skills, 200, "at most 200 skills are offered\n{stderr}");
    assert!(stderr.contains("more skills are not offered"), "{stderr}");
    for c in commands {
        let description = c["description"].as_str().unwrap();
        assert!(description.chars().count() <= 220, "{description}");
    }
    let names: Vec<&str> = commands
        .iter()
        .filter_map(|c| c["name"].as_str()?.strip_prefix("prompts:"))
        .collect();
    assert_eq!(names, ["dot..dot", "fine", "named"], "{stderr}");
    for unsafe_name in ["has space", "-dash", "ünicode"] {
        assert!(
            stderr.contains(unsafe_name),
            "left out, and said so: {unsafe_name}\n{stderr}"
        );
    }
    let error = error.expect_err("arguments that do not fit");
    assert!(
        error.message.contains("KEY=value") || format!("{error:?}").contains("KEY=value"),
        "{error:?}"
    );
    assert!(live.mock.requests().is_empty(), "nothing reached the model");
}
