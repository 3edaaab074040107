//! ACP behaviour that needs no Codex: initialize, session/new validation, modes and config
//! options, a missing Codex, and shutting down when the client leaves or on SIGTERM.

use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    InitializeRequest, NewSessionRequest, SessionConfigOptionValue, SetSessionConfigOptionRequest,
    SetSessionModeRequest,
};

use crate::harness::{Acplb, Updates, open_session, prompt};

fn missing_codex_env() -> Vec<(String, String)> {
    vec![("ACPLB_CODEX".into(), "/definitely/not/codex".into())]
}

#[tokio::test]
async fn initialize_reports_version_info_and_honest_capabilities() {
    let dir = tempfile::tempdir().unwrap();
    let mut acplb = Acplb::spawn(&[], &missing_codex_env(), dir.path());
    let init = acplb
        .client(&Updates::default(), async |cx| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await
        })
        .await
        .unwrap();
    let json = serde_json::to_value(&init).unwrap();
    assert_eq!(json["protocolVersion"], 1);
    assert_eq!(json["agentInfo"]["name"], "acplb");
    assert_eq!(json["agentInfo"]["version"], env!("CARGO_PKG_VERSION"));
    // Sessions are kept (the harness gives acplb a state directory of its own).
    assert_eq!(json["agentCapabilities"]["loadSession"], true);
    assert_eq!(json["agentCapabilities"]["promptCapabilities"]["image"], true);
    assert_eq!(
        json["agentCapabilities"]["promptCapabilities"]["embeddedContext"],
        true
    );
    assert_eq!(json["agentCapabilities"]["promptCapabilities"]["audio"], false);
    assert_eq!(json["agentCapabilities"]["mcpCapabilities"]["sse"], false);
    let (code, _) = acplb.wait_exit(Duration::from_secs(5)).await;
    assert_eq!(code, Some(0));
}

#[tokio::test]
async fn session_new_validates_cwd_and_offers_modes_and_options() {
    let dir = tempfile::tempdir().unwrap();
    let mut acplb = Acplb::spawn(&[], &missing_codex_env(), dir.path());
    let cwd = dir.path().to_owned();
    let (relative, missing, ok) = acplb
        .client(&Updates::default(), async |cx| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            let relative = cx
                .send_request(NewSessionRequest::new("relative/dir"))
                .block_task()
                .await;
            let missing = cx
                .send_request(NewSessionRequest::new(cwd.join("nope")))
                .block_task()
                .await;
            let ok = cx
                .send_request(NewSessionRequest::new(cwd.clone()))
                .block_task()
                .await?;
            Ok((relative, missing, ok))
        })
        .await
        .unwrap();
    let relative = relative.unwrap_err();
    assert_eq!(i32::from(relative.code), -32602);
    assert!(
        relative
            .data
            .unwrap()
            .to_string()
            .contains("must be an absolute path")
    );
    let missing = missing.unwrap_err();
    assert_eq!(i32::from(missing.code), -32602);
    assert!(missing.data.unwrap().to_string().contains("not accessible"));
    let json = serde_json::to_value(&ok).unwrap();
    assert_eq!(json["modes"]["currentModeId"], "read-only");
    let modes: Vec<_> = json["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].clone())
        .collect();
    let mut want_modes = vec!["read-only", "auto", "full-access"];
    if crate::harness::transport() == "app-server" {
        // Only app-server can plan.
        want_modes.push("plan");
    }
    assert_eq!(modes, want_modes);
    let ids: Vec<_> = json["configOptions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].clone())
        .collect();
    let mut want = vec!["mode", "model", "reasoning_effort", "network_access"];
    if crate::harness::transport() == "app-server" {
        // Only app-server can steer a running turn.
        want.push("while_busy");
    }
    assert_eq!(ids, want);
    assert_eq!(json["configOptions"][0]["currentValue"], "read-only");
}

#[tokio::test]
async fn mode_and_config_changes_are_confirmed_and_validated() {
    let dir = tempfile::tempdir().unwrap();
    let mut acplb = Acplb::spawn(&[], &missing_codex_env(), dir.path());
    let cwd = dir.path().to_owned();
    let updates = Updates::default();
    let (bad_mode, bad_value, options) = acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &cwd).await?;
            let id = s.session_id;
            cx.send_request(SetSessionModeRequest::new(id.clone(), "auto"))
                .block_task()
                .await?;
            let bad_mode = cx
                .send_request(SetSessionModeRequest::new(id.clone(), "yolo"))
                .block_task()
                .await;
            let bad_value = cx
                .send_request(SetSessionConfigOptionRequest::new(
                    id.clone(),
                    "model",
                    SessionConfigOptionValue::ValueId {
                        value: "gpt-1".into(),
                    },
                ))
                .block_task()
                .await;
            let ok = cx
                .send_request(SetSessionConfigOptionRequest::new(
                    id.clone(),
                    "network_access",
                    SessionConfigOptionValue::boolean(true),
                ))
                .block_task()
                .await?;
            Ok((bad_mode, bad_value, ok))
        })
        .await
        .unwrap();
    assert!(
        bad_mode
            .unwrap_err()
            .data
            .unwrap()
            .to_string()
            .contains("unknown mode `yolo`")
    );
    assert!(
        bad_value
            .unwrap_err()
            .data
            .unwrap()
            .to_string()
            .contains("`gpt-1` is not a value")
    );
    let json = serde_json::to_value(&options).unwrap();
    assert_eq!(
        json["configOptions"][0]["currentValue"], "auto",
        "the mode option follows set_mode"
    );
    assert_eq!(
        json["configOptions"][3]["currentValue"], "true",
        "a select for a client without booleans"
    );
    let mode_updates = updates.of_kind("current_mode_update");
    assert_eq!(mode_updates.len(), 1);
    assert_eq!(mode_updates[0]["currentModeId"], "auto");
    // One for the mode change (its config option changed too), one for the network toggle.
    assert_eq!(updates.of_kind("config_option_update").len(), 2);
}

#[tokio::test]
async fn a_missing_codex_fails_the_prompt_clearly_and_the_bridge_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let mut acplb = Acplb::spawn(&[], &missing_codex_env(), dir.path());
    let cwd = dir.path().to_owned();
    let (first, second) = acplb
        .client(&Updates::default(), async |cx| {
            let (_, s) = open_session(&cx, &cwd).await?;
            let first = prompt(&cx, &s.session_id, "hello").await;
            let second = prompt(&cx, &s.session_id, "hello again").await;
            Ok((first, second))
        })
        .await
        .unwrap();
    for result in [first, second] {
        let err = result.unwrap_err();
        let data = err.data.unwrap().to_string();
        assert!(data.contains("/definitely/not/codex"), "{data}");
        assert!(data.contains("No such file"), "{data}");
    }
    let (code, took) = acplb.wait_exit(Duration::from_secs(5)).await;
    assert_eq!(code, Some(0));
    assert!(took < Duration::from_secs(1), "exit took {took:?}");
}

#[tokio::test]
async fn unknown_sessions_and_empty_prompts_are_invalid_params() {
    let dir = tempfile::tempdir().unwrap();
    let mut acplb = Acplb::spawn(&[], &missing_codex_env(), dir.path());
    let cwd = dir.path().to_owned();
    let (unknown, empty) = acplb
        .client(&Updates::default(), async |cx| {
            let (_, s) = open_session(&cx, &cwd).await?;
            let unknown = prompt(&cx, &"no-such-session".into(), "hi").await;
            let empty = prompt(&cx, &s.session_id, "   ").await;
            Ok((unknown, empty))
        })
        .await
        .unwrap();
    let unknown = unknown.unwrap_err();
    assert_eq!(i32::from(unknown.code), -32602);
    let data = unknown.data.unwrap();
    assert!(data.to_string().contains("unknown session"));
    assert_eq!(data["reason"], "unknown_session");
    let data = empty.unwrap_err().data.unwrap();
    assert!(data.to_string().contains("the prompt is empty"));
    assert_eq!(data["reason"], "invalid_params");
}

#[tokio::test]
async fn sigterm_stops_acplb_with_status_zero_within_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let mut acplb = Acplb::spawn(&[], &missing_codex_env(), dir.path());
    // Wait until it serves: an initialize round trip over raw stdio.
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
    let mut stdin = acplb.child.stdin.take().unwrap();
    let stdout = acplb.child.stdout.take().unwrap();
    stdin
        .write_all(
            b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n",
        )
        .await
        .unwrap();
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let reply = lines.next_line().await.unwrap().unwrap();
    assert!(reply.contains("\"protocolVersion\":1"), "{reply}");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(acplb.pid as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let (code, took) = acplb.wait_exit(Duration::from_secs(5)).await;
    assert_eq!(code, Some(0), "stderr: {}", acplb.stderr());
    assert!(took < Duration::from_secs(1), "exit took {took:?}");
    drop(stdin);
}

#[tokio::test]
async fn stdout_carries_only_json_rpc_even_with_debug_logs() {
    let dir = tempfile::tempdir().unwrap();
    let mut env = missing_codex_env();
    env.push(("RUST_LOG".into(), "trace".into()));
    let mut acplb = Acplb::spawn(&[], &env, dir.path());
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
    let mut stdin = acplb.child.stdin.take().unwrap();
    let stdout = acplb.child.stdout.take().unwrap();
    let cwd = dir.path().display().to_string();
    stdin
        .write_all(
            b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n",
        )
        .await
        .unwrap();
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let first = lines.next_line().await.unwrap().unwrap();
    let new = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\",\"params\":{{\"cwd\":\"{cwd}\",\"mcpServers\":[]}}}}\nnot json at all\n"
    );
    stdin.write_all(new.as_bytes()).await.unwrap();
    // Both answers are read before hanging up: a request still in flight when the client
    // closes its side is not answered (the connection is gone), which is not what this checks.
    let mut all = vec![first];
    let answered = |all: &[String]| {
        all.iter().any(|l| l.contains("\"id\":1")) && all.iter().any(|l| l.contains("-32700"))
    };
    while !answered(&all) {
        match lines.next_line().await.unwrap() {
            Some(l) => all.push(l),
            None => break,
        }
    }
    drop(stdin);
    while let Some(l) = lines.next_line().await.unwrap() {
        all.push(l);
    }
    for l in &all {
        let v: serde_json::Value =
            serde_json::from_str(l).unwrap_or_else(|e| panic!("non-JSON on stdout: {l:?} ({e})"));
        assert_eq!(v["jsonrpc"], "2.0", "{l}");
    }
    assert!(all.iter().any(|l| l.contains("\"sessionId\"")), "{all:?}");
    assert!(
        all.iter().any(|l| l.contains("-32700")),
        "a parse error is answered: {all:?}"
    );
    assert_eq!(acplb.wait_exit(Duration::from_secs(5)).await.0, Some(0));
    let logged =
        crate::harness::eventually(Duration::from_secs(5), || acplb.stderr().contains("DEBUG")).await;
    assert!(logged, "debug logs went to stderr: {}", acplb.stderr());
}

/// What command-line clients such as acpx do: the mode set as a config option, a boolean sent
/// as a string, and the model read from the model option's current value.
#[tokio::test]
async fn config_options_work_the_way_command_line_clients_send_them() {
    let dir = tempfile::tempdir().unwrap();
    let codex_home = dir.path().join("codex-home");
    std::fs::create_dir(&codex_home).unwrap();
    std::fs::write(codex_home.join("config.toml"), "model = \"gpt-5.5\"\n").unwrap();
    let mut env = missing_codex_env();
    env.push(("CODEX_HOME".into(), codex_home.display().to_string()));
    let mut acplb = Acplb::spawn(&[], &env, dir.path());
    let cwd = dir.path().to_owned();
    let updates = Updates::default();
    let (created, mode, network, bad) = acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &cwd).await?;
            let id = s.session_id.clone();
            let set = |option: &str, value: &str| {
                cx.send_request(SetSessionConfigOptionRequest::new(
                    id.clone(),
                    option.to_owned(),
                    SessionConfigOptionValue::ValueId {
                        value: value.to_owned().into(),
                    },
                ))
                .block_task()
            };
            let mode = set("mode", "full-access").await?;
            let network = set("network_access", "true").await?;
            let bad = set("network_access", "sometimes").await;
            Ok((s, mode, network, bad))
        })
        .await
        .unwrap();
    let created = serde_json::to_value(&created).unwrap();
    assert_eq!(
        created["configOptions"][1]["currentValue"], "gpt-5.5",
        "the model Codex will use, from its config.toml"
    );
    let mode = serde_json::to_value(&mode).unwrap();
    assert_eq!(mode["configOptions"][0]["currentValue"], "full-access");
    let mode_updates = updates.of_kind("current_mode_update");
    assert_eq!(mode_updates.len(), 1, "the session mode follows the mode option");
    assert_eq!(mode_updates[0]["currentModeId"], "full-access");
    let network = serde_json::to_value(&network).unwrap();
    assert_eq!(
        network["configOptions"][3]["currentValue"], "true",
        "a select for a client without booleans"
    );
    let bad = bad.unwrap_err();
    assert!(
        bad.message
            .contains("`sometimes` is not a value of config option `network_access`; it takes true or false"),
        "editors show the message: {}",
        bad.message
    );
}

/// ACP lets an agent offer a `boolean` config option only to a client that declared it can
/// show one; any other client gets the toggle as a select (with `true` and `false`, the words
/// command-line clients send), and both set it.
#[tokio::test]
async fn network_access_is_a_boolean_only_for_clients_that_declared_booleans() {
    use agent_client_protocol::v1::schema::{
        BooleanConfigOptionCapabilities, ClientCapabilities, ClientSessionCapabilities,
        SessionConfigOptionsCapabilities,
    };
    let dir = tempfile::tempdir().unwrap();
    let mut options = Vec::new();
    for declares in [false, true] {
        let mut acplb = Acplb::spawn(&[], &missing_codex_env(), dir.path());
        let cwd = dir.path().to_owned();
        let caps = if declares {
            ClientCapabilities::new().session(ClientSessionCapabilities::new().config_options(
                SessionConfigOptionsCapabilities::new().boolean(BooleanConfigOptionCapabilities::new()),
            ))
        } else {
            ClientCapabilities::new()
        };
        let (created, set) = acplb
            .client(&Updates::default(), async |cx| {
                cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
                    .block_task()
                    .await?;
                let s = cx.send_request(NewSessionRequest::new(&cwd)).block_task().await?;
                let value = if declares {
                    SessionConfigOptionValue::boolean(true)
                } else {
                    SessionConfigOptionValue::ValueId {
                        value: "true".to_owned().into(),
                    }
                };
                let set = cx
                    .send_request(SetSessionConfigOptionRequest::new(
                        s.session_id.clone(),
                        "network_access",
                        value,
                    ))
                    .block_task()
                    .await?;
                Ok((s, set))
            })
            .await
            .unwrap();
        let network = |json: serde_json::Value| {
            json["configOptions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|o| o["id"] == "network_access")
                .cloned()
                .unwrap()
        };
        options.push((
            network(serde_json::to_value(&created).unwrap()),
            network(serde_json::to_value(&set).unwrap()),
        ));
    }
    let (plain, plain_set) = &options[0];
    assert_eq!(plain["type"], "select", "{plain}");
    assert_eq!(plain["currentValue"], "false");
    let values: Vec<_> = plain["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["value"].clone())
        .collect();
    assert_eq!(values, ["true", "false"]);
    assert_eq!(plain_set["currentValue"], "true");
    let (declared, declared_set) = &options[1];
    assert_eq!(declared["type"], "boolean", "{declared}");
    assert_eq!(declared["currentValue"], false);
    assert_eq!(declared_set["currentValue"], true);
}
