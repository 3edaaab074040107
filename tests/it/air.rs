//! `JetBrains` AIR's metadata (ADR 0049), end to end with the real Codex 0.169.0 and the mock
//! model on the transport of this run: a client declaring `_meta.jetbrains.air` gets each mode's
//! AIR kind, the command action of `/goal` (app-server) and the path of each skill command, and,
//! having declared `diffPatch`, each file of an edit as an AIR Git patch (app-server; exec's
//! edits keep their plain diffs), having declared `asyncTasks`, a command left running in the
//! background marked as such (app-server); a plain client gets none of it, as before.

use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{ClientCapabilities, InitializeRequest, NewSessionRequest};
use serde_json::{Value, json};

use crate::harness::{eventually, transport};
use crate::live::{Live, assert_end_turn, set_mode};
use crate::skills::{offers, write_skill};
use crate::terminal_output::caps;

/// What one client saw: the `initialize` answer, the `session/new` answer and every update.
pub(crate) struct Seen {
    pub(crate) init: Value,
    pub(crate) session: Value,
    pub(crate) updates: Vec<Value>,
}

/// An AIR client that declares `capabilities`.
pub(crate) fn air(capabilities: &[&str]) -> ClientCapabilities {
    caps(json!({ "jetbrains": { "air": { "version": 1, "capabilities": capabilities } } }))
}

/// `initialize` with `client`, a session in `auto`, its commands (with the skill `demo-skill`)
/// and, when `text` is given, one prompt; the workspace's `README.md` is put back and
/// `hello.txt` removed afterwards, so `scenario:patch` can run again.
pub(crate) async fn run(live: &mut Live, client: ClientCapabilities, text: Option<&str>) -> Seen {
    let home = live.env.home();
    write_skill(&home.join("skills"), "demo-skill", "A demo skill", "SKILL-MARKER");
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let readme = std::fs::read_to_string(ws.join("README.md")).unwrap();
    let text = text.map(str::to_owned);
    let (init, session) = live
        .acplb
        .client(&updates, async |cx| {
            let init = cx
                .send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(client))
                .block_task()
                .await?;
            let s = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
            assert!(
                eventually(Duration::from_secs(30), || offers(&updates, "$demo-skill")).await,
                "the skill is offered"
            );
            set_mode(&cx, &s.session_id, "auto").await?;
            if let Some(text) = text {
                let answer = crate::harness::prompt(&cx, &s.session_id, &text).await?;
                assert_end_turn(&answer.stop_reason);
            }
            Ok((
                serde_json::to_value(init).unwrap(),
                serde_json::to_value(s).unwrap(),
            ))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    std::fs::write(ws.join("README.md"), readme).unwrap();
    std::fs::remove_file(ws.join("hello.txt")).ok();
    let updates = live.updates.json();
    live.respawn();
    Seen {
        init,
        session,
        updates,
    }
}

/// Every `diff` content of the tool calls and their updates.
pub(crate) fn diffs(updates: &[Value]) -> Vec<Value> {
    updates
        .iter()
        .filter(|u| {
            matches!(
                u["sessionUpdate"].as_str(),
                Some("tool_call" | "tool_call_update")
            )
        })
        .flat_map(|u| u["content"].as_array().cloned().unwrap_or_default())
        .filter(|c| c["type"] == "diff")
        .collect()
}

/// The last offered command called `name`.
fn command(updates: &[Value], name: &str) -> Value {
    updates
        .iter()
        .rev()
        .filter(|u| u["sessionUpdate"] == "available_commands_update")
        .flat_map(|u| u["availableCommands"].as_array().cloned().unwrap_or_default())
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("`{name}` is offered: {updates:?}"))
}

/// The AIR kind of each mode of a `session/new` answer, as `(id, kind)`, from the modes and
/// from the values of the `mode` option (which must agree).
fn kinds(session: &Value) -> Vec<(String, Value)> {
    let modes: Vec<(String, Value)> = session["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["id"].as_str().unwrap().to_owned(),
                m["_meta"]["jetbrains"]["air"]["kind"].clone(),
            )
        })
        .collect();
    let option = session["configOptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == "mode")
        .unwrap();
    let values: Vec<(String, Value)> = option["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["value"].as_str().unwrap().to_owned(),
                m["_meta"]["jetbrains"]["air"]["kind"].clone(),
            )
        })
        .collect();
    assert_eq!(modes, values, "{session}");
    modes
}

/// Whether `value` holds a `jetbrains` key anywhere.
pub(crate) fn has_air_keys(value: &Value) -> bool {
    value.to_string().contains("\"jetbrains\"")
}

/// `initialize` lists the AIR capabilities acplb answers: `diffPatch` and `asyncTasks` on
/// app-server only, `rawInputRendering` on both, never `planContentDelta`.
fn assert_lists(init: &Value, app_server: bool) {
    let listed = init["_meta"]["jetbrains"]["air"]["capabilities"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let lists = |name: &str| listed.iter().any(|c| c == name);
    assert_eq!(
        lists("diffPatch"),
        app_server,
        "diffPatch is answered on app-server only: {listed:?}"
    );
    assert_eq!(
        lists("asyncTasks"),
        app_server,
        "asyncTasks is answered on app-server only: {listed:?}"
    );
    assert!(lists("rawInputRendering"), "{listed:?}");
    assert!(lists("recommendedValue"), "{listed:?}");
    assert_eq!(
        lists("planContentDelta"),
        app_server,
        "planContentDelta is answered on app-server only (plan mode): {listed:?}"
    );
    assert!(lists("sessionFailure"), "{listed:?}");
}

/// Whether the model's answer says its phase (app-server: Codex's items carry it).
fn phased(updates: &[Value]) -> bool {
    updates.iter().any(|u| {
        u["sessionUpdate"] == "agent_message_chunk"
            && u["_meta"]["jetbrains"]["air"]["phase"] == "final_answer"
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_air_client_gets_air_metadata_and_a_plain_client_none() {
    let mut live = Live::start();
    let app_server = transport() == "app-server";
    let for_air = run(&mut live, air(&["diffPatch"]), Some("scenario:patch edit")).await;
    let plain = run(&mut live, ClientCapabilities::new(), Some("scenario:patch edit")).await;

    assert_lists(&for_air.init, app_server);
    assert_eq!(phased(&for_air.updates), app_server, "{:?}", for_air.updates);

    let kinds = kinds(&for_air.session);
    let kind = |id: &str| kinds.iter().find(|(m, _)| m == id).map(|(_, k)| k.clone());
    assert_eq!(kind("read-only"), Some(json!("standard")));
    assert_eq!(kind("auto"), Some(json!("standard")));
    assert_eq!(kind("full-access"), Some(json!("full_access")));
    assert!(kind("plan").is_none_or(|k| k.is_null()), "{kinds:?}");

    let skill = command(&for_air.updates, "$demo-skill");
    let skill_path = skill["_meta"]["jetbrains"]["air"]["skillPath"]
        .as_str()
        .unwrap_or_default();
    assert!(skill_path.ends_with("demo-skill/SKILL.md"), "{skill}");
    if app_server {
        let goal = command(&for_air.updates, "goal");
        assert_eq!(
            goal["_meta"]["jetbrains"]["air"]["commandAction"],
            json!({ "kind": "prefixPrompt", "presentation": "state" }),
            "{goal}"
        );
    }

    let diffs = diffs(&for_air.updates);
    let hello = diffs
        .iter()
        .find(|d| d["path"].as_str().is_some_and(|p| p.ends_with("hello.txt")))
        .unwrap_or_else(|| panic!("a diff of hello.txt: {diffs:?}"));
    let readme = diffs
        .iter()
        .find(|d| d["path"].as_str().is_some_and(|p| p.ends_with("README.md")))
        .unwrap_or_else(|| panic!("a diff of README.md: {diffs:?}"));
    if app_server {
        let patch = |d: &Value| d["_meta"]["jetbrains"]["air"]["diffPatch"].clone();
        assert_eq!(patch(hello)["format"], "git_patch", "{hello}");
        assert_eq!(patch(hello)["version"], 1, "{hello}");
        let text = patch(hello)["text"].as_str().unwrap().to_owned();
        assert!(text.starts_with("diff --git a/"), "{text}");
        assert!(text.contains("\nnew file mode 100644\n--- /dev/null\n"), "{text}");
        assert!(text.contains("\n+Hello from the mock model.\n"), "{text}");
        assert_eq!(hello["newText"], "", "the patch is the content: {hello}");
        assert_eq!(hello["_meta"]["kind"], "add");
        let text = patch(readme)["text"].as_str().unwrap().to_owned();
        assert!(
            text.contains("README.md\n--- a/") && text.contains("\n+++ b/"),
            "{text}"
        );
        assert!(text.contains("\n@@ -"), "{text}");
        assert_eq!(readme["_meta"]["kind"], "update");
    } else {
        assert!(
            !has_air_keys(&Value::Array(diffs.clone())),
            "exec's edits stay plain diffs: {diffs:?}"
        );
        assert!(
            hello["newText"]
                .as_str()
                .unwrap()
                .contains("Hello from the mock model.")
        );
    }

    assert!(!has_air_keys(&plain.init), "{}", plain.init);
    assert!(!has_air_keys(&plain.session), "{}", plain.session);
    assert!(
        !has_air_keys(&Value::Array(plain.updates.clone())),
        "{:?}",
        plain.updates
    );
    let plain_diffs = crate::air::diffs(&plain.updates);
    assert!(
        plain_diffs.iter().any(|d| d["newText"]
            .as_str()
            .is_some_and(|t| t.contains("Hello from the mock model."))),
        "a plain client keeps its plain diff: {plain_diffs:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_air_client_that_did_not_declare_diff_patch_keeps_plain_diffs() {
    let mut live = Live::start();
    let seen = run(
        &mut live,
        air(&["rawInputRendering"]),
        Some("scenario:patch edit"),
    )
    .await;
    let diffs = diffs(&seen.updates);
    assert!(!diffs.is_empty(), "{:?}", seen.updates);
    assert!(!has_air_keys(&Value::Array(diffs.clone())), "{diffs:?}");
    assert!(
        diffs.iter().any(|d| d["newText"]
            .as_str()
            .is_some_and(|t| t.contains("Hello from the mock model."))),
        "{diffs:?}"
    );
    assert!(has_air_keys(&seen.session), "still AIR: its modes have kinds");
}

/// The updates of `scenario:background`'s command for a client with `client` (app-server),
/// and the AIR task updates it was sent (`air_tasks.rs`).
async fn backgrounded(live: &mut Live, client: ClientCapabilities) -> (Vec<Value>, Vec<Value>) {
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    live.acplb
        .client(&updates, async |cx| {
            let id = crate::background::open(&cx, &cwd, client).await?;
            let answer = crate::harness::prompt(&cx, &id, "scenario:background go").await?;
            assert_end_turn(&answer.stop_reason);
            Ok(())
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let (_, calls) = crate::background::command_updates(&live.updates);
    let tasks = crate::air_tasks::task_notes(live);
    live.respawn();
    (calls, tasks)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_command_is_marked_as_an_async_task_for_an_air_client_that_asked() {
    let mut live = crate::background::live();
    let marked = |calls: &[Value]| {
        calls
            .iter()
            .filter(|u| u["_meta"]["jetbrains"]["air"]["asyncTasks"] == json!({ "backgrounded": true }))
            .count()
    };
    let (for_air, tasks) = backgrounded(&mut live, air(&["asyncTasks"])).await;
    assert_eq!(marked(&for_air), 1, "{for_air:?}");
    assert_eq!(tasks.len(), 1, "announced as a task: {tasks:?}");
    assert_eq!(tasks[0]["update"]["sessionUpdate"], "async_task_spawned");
    let noted = for_air
        .iter()
        .find(|u| marked(std::slice::from_ref(u)) == 1)
        .unwrap();
    assert!(
        noted["content"].to_string().contains("Runs in the background"),
        "{noted}"
    );
    let (undeclared, tasks) = backgrounded(&mut live, air(&["diffPatch"])).await;
    assert!(!undeclared.is_empty());
    assert!(tasks.is_empty(), "{tasks:?}");
    assert!(!has_air_keys(&Value::Array(undeclared.clone())), "{undeclared:?}");
    let (plain, tasks) = backgrounded(&mut live, ClientCapabilities::new()).await;
    assert!(tasks.is_empty(), "{tasks:?}");
    assert!(
        plain
            .iter()
            .any(|u| u["content"].to_string().contains("Runs in the background")),
        "{plain:?}"
    );
    assert!(!has_air_keys(&Value::Array(plain.clone())), "{plain:?}");
}

/// `initialize` with `client`, then a session in `ws`; its id.
async fn opened(
    cx: &agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>,
    ws: &std::path::Path,
    client: ClientCapabilities,
) -> Result<agent_client_protocol::v1::schema::SessionId, agent_client_protocol::Error> {
    cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(client))
        .block_task()
        .await?;
    Ok(cx
        .send_request(NewSessionRequest::new(ws))
        .block_task()
        .await?
        .session_id)
}

/// `initialize` with `client`, a session (in `read-only`) and one prompt, which ends its turn.
async fn one_prompt(live: &mut Live, client: ClientCapabilities, text: &str) {
    let (ws, updates) = (live.workspace(), live.updates.clone());
    live.acplb
        .client(&updates, async |cx| {
            let id = opened(&cx, &ws, client).await?;
            assert_end_turn(&crate::harness::prompt(&cx, &id, text).await?.stop_reason);
            Ok(())
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagent_call_is_marked_for_an_air_client_only() {
    if transport() == "exec" {
        return; // exec shows no subagent of its own (tests/it/subagents.rs)
    }
    let mut live = crate::subagents::live();
    let mut calls = Vec::new();
    for client in [air(&[]), ClientCapabilities::new()] {
        one_prompt(&mut live, client, "scenario:subagent ask a helper").await;
        calls.push(crate::subagents::subagent(&live.updates, "Subagent: lister"));
        live.respawn();
    }
    let [(air_call, air_last), (plain_call, plain_last)] = calls.try_into().unwrap();
    for marked in [&air_call, &air_last] {
        assert_eq!(
            marked["_meta"]["jetbrains"]["air"],
            json!({ "version": 1, "subagent": true }),
            "{marked}"
        );
    }
    assert_eq!(air_last["status"], "completed");
    assert!(
        !has_air_keys(&plain_call) && !has_air_keys(&plain_last),
        "{plain_call} {plain_last}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_air_client_sees_the_goal_where_the_peer_puts_it_too() {
    let mut live = crate::goals::live_on("app-server", &[]);
    let mut seen = Vec::new();
    for client in [air(&[]), ClientCapabilities::new()] {
        let (cwd, updates) = (live.workspace(), live.updates.clone());
        live.acplb
            .client(&updates, async |cx| {
                let id = &crate::background::open(&cx, &cwd, client).await?;
                let text = "/goal Ship the release scenario:goal_done";
                assert_end_turn(&crate::harness::prompt(&cx, id, text).await?.stop_reason);
                Ok(())
            })
            .await
            .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
        seen.push(live.updates.of_kind("session_info_update"));
        live.respawn();
    }
    let [for_air, plain] = seen.try_into().unwrap();
    assert!(!for_air.is_empty(), "the goal is shown");
    for info in &for_air {
        assert_eq!(
            info["_meta"]["jetbrains"]["air"]["goal"], info["_meta"]["goal"],
            "{info}"
        );
        assert_eq!(info["_meta"]["jetbrains"]["air"]["version"], 1, "{info}");
    }
    let objective = |i: &Value| i["_meta"]["goal"]["objective"].as_str().map(str::to_owned);
    assert!(
        for_air
            .iter()
            .any(|i| objective(i).is_some_and(|o| o.starts_with("Ship the release"))),
        "{for_air:?}"
    );
    assert!(!plain.is_empty(), "the goal is shown");
    assert!(
        plain
            .iter()
            .all(|i| !has_air_keys(i) && i["_meta"].get("goal").is_some()),
        "{plain:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_air_client_is_asked_with_the_peers_permission_title() {
    if transport() == "exec" {
        return; // exec never asks (Codex runs with approval `never`)
    }
    let mut live = Live::start();
    let mut asked = Vec::new();
    for client in [air(&["diffPatch"]), ClientCapabilities::new()] {
        use agent_client_protocol::v1::schema::PermissionOptionKind;
        let allow = crate::harness::Answer::Kind(PermissionOptionKind::AllowOnce);
        live.acplb.permissions.answer(allow);
        let ws = live.workspace();
        let readme = std::fs::read_to_string(ws.join("README.md")).unwrap();
        one_prompt(&mut live, client, "scenario:patch edit").await;
        asked.push(live.acplb.permissions.seen());
        std::fs::write(ws.join("README.md"), readme).unwrap();
        std::fs::remove_file(ws.join("hello.txt")).ok();
        live.respawn();
    }
    let [for_air, plain] = asked.try_into().unwrap();
    assert!(!for_air.is_empty(), "the edit in read-only is asked for");
    let permission = &for_air[0]["_meta"]["jetbrains"]["air"]["permission"];
    assert_eq!(permission["version"], 1, "{}", for_air[0]);
    assert_eq!(permission["title"], "Make edits?", "{}", for_air[0]);
    let patched = &for_air[0]["toolCall"]["content"];
    assert!(
        patched.to_string().contains("\"diffPatch\""),
        "the request shows the patch: {patched}"
    );
    assert!(!plain.is_empty(), "the edit in read-only is asked for");
    assert!(!has_air_keys(&Value::Array(plain.clone())), "{plain:?}");
}

/// Plan mode, `scenario:ask` (one question, its options and another answer) put to a client with
/// forms and `client`'s `_meta`; the form it was shown.
async fn asked_form(live: &mut Live, meta: Value) -> Value {
    use agent_client_protocol::v1::schema::{ElicitationCapabilities, ElicitationFormCapabilities};
    live.acplb
        .forms
        .answer(crate::harness::FormAnswer::Accept(json!({"color": "Red"})));
    let (ws, updates, forms) = (live.workspace(), live.updates.clone(), live.acplb.forms.clone());
    let client =
        caps(meta).elicitation(ElicitationCapabilities::new().form(ElicitationFormCapabilities::new()));
    live.acplb
        .client(&updates, async |cx| {
            let id = opened(&cx, &ws, client).await?;
            set_mode(&cx, &id, "plan").await?;
            let answer = crate::harness::prompt(&cx, &id, "scenario:ask which color").await?;
            assert_end_turn(&answer.stop_reason);
            Ok(())
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let seen = forms.seen();
    live.respawn();
    seen.first().cloned().unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_air_client_sees_the_questions_other_answer_marked_as_its_custom_answer() {
    let mut live = crate::plan_mode::live();
    let custom = |form: &Value| -> Vec<Value> {
        form["requestedSchema"]["properties"]
            .as_object()
            .map(|all| all.values().filter_map(|p| p.get("_meta").cloned()).collect())
            .unwrap_or_default()
    };
    let for_air = asked_form(
        &mut live,
        json!({ "jetbrains": { "air": { "version": 1, "capabilities": [] } } }),
    )
    .await;
    assert_eq!(
        custom(&for_air),
        [
            json!({"jetbrains": {"air": {"version": 1, "customAnswer": true}}, "_askUserQuestionCustomAnswer": true})
        ],
        "one free-text field, marked: {for_air}"
    );
    let plain = asked_form(&mut live, json!({})).await;
    assert!(plain["requestedSchema"]["properties"].is_object(), "{plain}");
    assert!(custom(&plain).is_empty(), "{plain}");
}
