//! Mail in, reply out: a teammate writes to worker `bob`, bob's answer lands in the sender's
//! inbox as bob, the mail is marked read, and the worker shows its activity.

use super::rig::{PATIENCE, Rig, text};
use crate::harness::eventually;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bob_answers_a_teammates_mail_as_bob_and_marks_it_read() {
    let mut rig = Rig::new();
    rig.write_config(&rig.agent("bob", "prompt_template = \"{from} wrote ({summary}): {message}\""));
    rig.start();
    let bob = rig.wait_state("bob@demo", "idle").await;
    let session = bob["sessionId"].as_str().expect("bob has a session").to_owned();

    let sent = rig
        .teammate("alice")
        .send("bob", "please check the build scenario:answer", None)
        .unwrap();
    let replies = rig.wait_mail("alice", "bob", 1).await;
    assert_eq!(replies.len(), 1);
    assert_eq!(text(&replies[0]), "bob here: answered turn 1");
    assert!(
        replies[0]["summary"].as_str().unwrap().contains(&sent.message_id),
        "the reply's summary names the message it answers: {}",
        replies[0]
    );
    // The mail reached Codex inside the envelope atm_read uses, with the template around it.
    let request = rig
        .mock
        .requests()
        .into_iter()
        .find(|r| r.body.to_string().contains("scenario:answer"))
        .expect("the model saw the mail");
    let body = request.body.to_string();
    assert!(
        body.contains("alice wrote (please check the build scenario:answer)"),
        "{body}"
    );
    assert!(
        body.contains(r#"\"message_id\": \""#) && body.contains(&sent.message_id),
        "{body}"
    );
    assert!(body.contains(r#"\"from\": \"alice\""#), "{body}");

    // Marked read right after the reply, and answered once.
    assert!(eventually(PATIENCE, || rig.inbox("bob")[0]["read"] == true).await);
    assert_eq!(rig.inbox("bob").len(), 1);
    let bob = rig.wait_state("bob@demo", "idle").await;
    assert_eq!(bob["answered"], 1);
    assert_eq!(bob["sessionId"], session.as_str());

    // A second message continues the same Codex thread (turn 2).
    rig.teammate("alice")
        .send("bob", "again scenario:answer", None)
        .unwrap();
    let replies = rig.wait_mail("alice", "bob", 2).await;
    assert_eq!(text(&replies[1]), "bob here: answered turn 2");

    // The session is an ordinary acplb session: listed, and readable.
    let (code, out, err) = rig.acplb(&["sessions", "show", &session]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("bob here: answered turn 2"), "{out}");

    // Activity in the team's config.json, as ATM shows it.
    let members = rig.team_config()["members"].clone();
    let bob_entry = members
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "bob")
        .unwrap()
        .clone();
    assert!(
        bob_entry["lastActive"].is_number() || bob_entry["lastActive"].is_string(),
        "{bob_entry}"
    );
    assert_eq!(bob_entry["agentType"], "codex", "other fields are kept");

    let (code, _) = rig.stop().await;
    assert_eq!(code, Some(0), "{}", rig.stderr());
    assert!(
        rig.codex_processes().is_empty(),
        "Codex left behind: {:?}",
        rig.codex_processes()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_turn_replies_with_the_error() {
    let mut rig = Rig::new();
    rig.write_config(&rig.agent("bob", ""));
    rig.start();
    rig.wait_state("bob@demo", "idle").await;
    rig.teammate("alice")
        .send("bob", "this will fail scenario:http400", None)
        .unwrap();
    let replies = rig.wait_mail("alice", "bob", 1).await;
    let reply = text(&replies[0]);
    assert!(reply.starts_with("I could not answer your message:"), "{reply}");
    assert!(eventually(PATIENCE, || rig.inbox("bob")[0]["read"] == true).await);
    let (code, _) = rig.stop().await;
    assert_eq!(code, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_send_and_the_queue_give_bob_a_turn() {
    let mut rig = Rig::new();
    rig.write_config(&rig.agent("bob", ""));
    // Sent before the daemon runs: it waits in the queue.
    let (code, out, err) = rig.acplb(&[
        "worker",
        "send",
        "bob@demo",
        "from the queue scenario:answer",
        "--from",
        "ci",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.trim().is_empty(), "prints the message id");
    rig.start();
    let start = std::time::Instant::now();
    while rig.requests_with("from the queue scenario:answer") == 0 {
        assert!(start.elapsed() < PATIENCE, "{}", rig.stderr());
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let queue = rig.state_dir().join("queue/bob@demo");
    assert!(
        eventually(PATIENCE, || std::fs::read_dir(&queue)
            .is_ok_and(|d| d.count() == 0))
        .await,
        "the message is deleted once handled"
    );
    let (code, _) = rig.stop().await;
    assert_eq!(code, Some(0));
    assert_eq!(
        rig.requests_with("from the queue scenario:answer"),
        1,
        "one turn for it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_teammates_answer_on_their_own_and_attach_follows_one_live() {
    let mut rig = Rig::new();
    rig.write_config(&format!(
        "{}{}{}",
        rig.agent("bob", ""),
        rig.agent("carol", ""),
        rig.agent("dave", "")
    ));
    rig.start();
    for name in ["bob", "carol", "dave"] {
        rig.wait_state(&format!("{name}@demo"), "idle").await;
    }
    // `attach` follows bob's session as it happens.
    let mut attach = tokio::process::Command::new(env!("CARGO_BIN_EXE_acplb"))
        .args(["worker", "attach", "bob@demo"])
        .env("ACPLB_STATE_DIR", rig.state_dir())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut out = attach.stdout.take().unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let keep = seen.clone();
    tokio::spawn(async move {
        use tokio::io::AsyncReadExt as _;
        let mut buf = vec![0u8; 4096];
        while let Ok(n) = out.read(&mut buf).await {
            if n == 0 {
                break;
            }
            keep.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    let alice = rig.teammate("alice");
    for name in ["bob", "carol", "dave"] {
        alice
            .send(name, &format!("hello {name} scenario:answer"), None)
            .unwrap();
    }
    for name in ["bob", "carol", "dave"] {
        let got = rig.wait_mail("alice", name, 1).await;
        assert_eq!(text(&got[0]), "bob here: answered turn 1", "{name} answered");
    }
    assert!(
        eventually(PATIENCE, || seen
            .lock()
            .unwrap()
            .contains("bob here: answered turn 1"))
        .await,
        "attach showed bob's turn: {}",
        seen.lock().unwrap()
    );
    assert!(
        !seen.lock().unwrap().contains("hello carol"),
        "only bob's session"
    );
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(attach.id().unwrap() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = tokio::time::timeout(PATIENCE, attach.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let (code, _) = rig.stop().await;
    assert_eq!(code, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_worker_is_shown_offline_after_the_inactivity_timeout() {
    let mut rig = Rig::new();
    rig.write_config(&format!(
        "{}\n[workers.agents.\"bob@demo\"]\ncwd = \"{}\"\n",
        "",
        rig.workspace().display()
    ));
    // A short inactivity timeout, in the [workers] table the rig writes.
    let text_now = std::fs::read_to_string(rig.config_path()).unwrap();
    std::fs::write(
        rig.config_path(),
        text_now.replacen("[workers]\n", "[workers]\ninactivity_timeout_ms = 300\n", 1),
    )
    .unwrap();
    rig.start();
    rig.wait_state("bob@demo", "idle").await;
    rig.teammate("alice")
        .send("bob", "are you there scenario:answer", None)
        .unwrap();
    rig.wait_mail("alice", "bob", 1).await;
    let bob = |rig: &Rig| {
        rig.team_config()["members"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "bob")
            .cloned()
            .unwrap()
    };
    assert!(
        eventually(PATIENCE, || bob(&rig)["isActive"] == false
            && bob(&rig)["lastActive"].is_number())
        .await,
        "{}",
        bob(&rig)
    );
    let (code, _) = rig.stop().await;
    assert_eq!(code, Some(0));
}
