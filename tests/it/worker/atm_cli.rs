//! Workers on the `atm-cli` backend (ATM ≥ 1.2, mail in ATM's daemon): bob's own composer
//! file selects it, a fake `atm` on `PATH` keeps the mail, and bob's worker polls it, answers
//! through `atm send` and marks the message read with `atm read`.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use super::rig::{PATIENCE, Rig};
use crate::harness::eventually;

/// A stateful stand-in for ATM 1.6's `atm`. Mail for `<agent>` is `<store>/<agent>/<id>.row`
/// (the `list` row) beside `<id>.msg` (the `peek` message); `read` adds `<id>.read`; `send`
/// writes a `sent.*` folder with `from`, `to`, `summary` and `text`; `members` lists the rig's
/// roster (alice, bob, carol, dave). Every call is logged.
const FAKE_ATM: &str = r#"#!/bin/sh
store="$FAKE_ATM_STORE"
me="$ATM_IDENTITY"
echo "$ATM_IDENTITY $ATM_TEAM $1" >> "$store/calls.log"
case "$1" in
  list)
    n=0; rows=""
    for row in "$store/$me"/*.row; do
      [ -e "$row" ] || continue
      id=$(basename "$row" .row)
      [ -e "$store/$me/$id.read" ] && continue
      n=$((n+1))
      [ -n "$rows" ] && rows="$rows,"
      rows="$rows$(cat "$row")"
    done
    printf '{"action":"list","rows":[%s],"bucket_counts":{"unread":%d,"pending_ack":0,"history":0}}\n' "$rows" "$n" ;;
  peek)
    printf '{"action":"peek","message":%s}\n' "$(cat "$store/$me/$3.msg")" ;;
  read)
    touch "$store/$me/$3.read"
    printf '{"action":"read","mutation_applied":true,"message":%s}\n' "$(cat "$store/$me/$3.msg")" ;;
  members)
    printf '{"action":"members","team":"%s","members":[{"name":"alice"},{"name":"bob"},{"name":"carol"},{"name":"dave"}]}\n' "$ATM_TEAM" ;;
  send)
    out=$(mktemp -d "$store/sent.XXXXXX")
    printf '%s' "$me" > "$out/from"
    printf '%s' "${3#--summary=}" > "$out/summary"
    printf '%s' "$5" > "$out/to"
    printf '%s' "$6" > "$out/text"
    printf '{"action":"send","agent":"%s","team":"%s","message_id":"01M80K2RX5P1DEJQ80SWWDXH8H","outcome":"sent"}\n' "$5" "$ATM_TEAM" ;;
  *) echo "unknown command $1" >&2; exit 2 ;;
esac
"#;

/// The fake ATM's mail store.
pub struct FakeAtm {
    pub store: PathBuf,
}

/// A reply the fake `atm send` took.
#[derive(Debug)]
pub struct Sent {
    pub from: String,
    pub to: String,
    pub summary: String,
    pub text: String,
}

impl FakeAtm {
    /// Puts the fake `atm` first on the daemon's `PATH` and its store in the daemon's env.
    pub fn install(rig: &mut Rig) -> FakeAtm {
        let atm = rig.env.bin_dir().join("atm");
        std::fs::write(&atm, FAKE_ATM).unwrap();
        std::fs::set_permissions(&atm, std::fs::Permissions::from_mode(0o755)).unwrap();
        let store = rig.atm_home().join("atm-store");
        std::fs::create_dir_all(&store).unwrap();
        rig.set_var("FAKE_ATM_STORE", &store.display().to_string());
        FakeAtm { store }
    }

    /// Delivers `text` from `from` to `to`; returns the message id.
    pub fn deliver(&self, from: &str, to: &str, text: &str) -> String {
        let nanos = std::time::UNIX_EPOCH.elapsed().unwrap().as_nanos();
        let id = format!("01FAKEATM{nanos}");
        let timestamp = acplb_atm::time::format_millis(acplb_atm::time::now_millis());
        let dir = self.store.join(to);
        std::fs::create_dir_all(&dir).unwrap();
        let message = serde_json::json!({
            "bucket": "unread", "from": from, "text": text, "timestamp": timestamp,
            "read": false, "source_team": "demo", "summary": text, "message_id": id,
            "requires_ack": false,
        });
        let row = serde_json::json!({
            "message_id": id, "summary": text, "from": from, "timestamp": timestamp,
            "read": false, "pending_ack": false, "task_id": null,
        });
        std::fs::write(dir.join(format!("{id}.msg")), message.to_string()).unwrap();
        // The row last, whole: `list` sees the message only once `peek` can read it.
        let tmp = dir.join(format!("{id}.tmp"));
        std::fs::write(&tmp, row.to_string()).unwrap();
        std::fs::rename(&tmp, dir.join(format!("{id}.row"))).unwrap();
        id
    }

    pub fn is_read(&self, to: &str, id: &str) -> bool {
        self.store.join(to).join(format!("{id}.read")).exists()
    }

    /// Every reply sent through the fake `atm`.
    pub fn sent(&self) -> Vec<Sent> {
        let read = |dir: &Path, name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        let mut all: Vec<Sent> = std::fs::read_dir(&self.store)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with("sent."))
            .map(|e| {
                let dir = e.path();
                Sent {
                    from: read(&dir, "from"),
                    to: read(&dir, "to"),
                    summary: read(&dir, "summary"),
                    text: read(&dir, "text"),
                }
            })
            // A folder `mktemp` made but `send` has not filled yet is not a reply yet.
            .filter(|s| !s.text.is_empty())
            .collect();
        all.sort_by(|a, b| a.text.cmp(&b.text));
        all
    }

    /// The `composer = PATH` line of an agent whose mail goes through this `atm` (its composer
    /// file written in the store).
    pub fn composer_line(&self) -> String {
        let composer = self.store.join("atm-cli.composer.toml");
        std::fs::write(
            &composer,
            "[[plugin]]\nid = \"atm-mail\"\nbackend = \"atm-cli\"\n",
        )
        .unwrap();
        format!("composer = \"{}\"", composer.display())
    }

    /// The calls logged, as `identity team command`.
    pub fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.store.join("calls.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bob_on_the_atm_cli_backend_answers_through_atm_and_marks_the_message_read() {
    let mut rig = Rig::new();
    let atm = FakeAtm::install(&mut rig);
    rig.write_config(&rig.agent("bob", &atm.composer_line()));
    rig.start();
    rig.wait_state("bob@demo", "idle").await;

    // Delivered after bob is ready: only the poll of `atm list` can find it.
    let first = atm.deliver("alice", "bob", "please check the build scenario:answer");
    assert!(
        eventually(PATIENCE, || atm.is_read("bob", &first)).await,
        "never marked read; calls: {:?}\n{}",
        atm.calls(),
        rig.stderr()
    );
    let sent = atm.sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(
        (sent[0].from.as_str(), sent[0].to.as_str(), sent[0].text.as_str()),
        ("bob", "alice", "bob here: answered turn 1"),
        "the reply goes through atm, as bob, to the sender"
    );
    assert!(sent[0].summary.contains(&first), "{sent:?}");
    let bob = rig.wait_state("bob@demo", "idle").await;
    assert_eq!(bob["answered"], 1);

    // A second message, on the same thread.
    let second = atm.deliver("alice", "bob", "again scenario:answer");
    assert!(
        eventually(PATIENCE, || atm.is_read("bob", &second)).await,
        "{}",
        rig.stderr()
    );
    let texts: Vec<String> = atm.sent().into_iter().map(|s| s.text).collect();
    assert_eq!(texts, ["bob here: answered turn 1", "bob here: answered turn 2"]);

    // Every `atm` run acted as bob of team demo; the inbox files were not used.
    let calls = atm.calls();
    assert!(calls.iter().all(|c| c.starts_with("bob demo ")), "{calls:?}");
    assert!(
        rig.mail_from("alice", "bob").is_empty(),
        "no reply in the inbox files"
    );
    assert!(rig.inbox("bob").is_empty(), "nothing read from the inbox files");
    let members = rig.team_config()["members"].clone();
    let bob_entry = members
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "bob")
        .unwrap()
        .clone();
    assert!(
        bob_entry.get("lastActive").is_none(),
        "activity is shown in config.json only on the files backend: {bob_entry}"
    );

    let (code, _) = rig.stop().await;
    assert_eq!(code, Some(0), "{}", rig.stderr());
    // The last message had one turn (the turn's request carries the thread's earlier turns,
    // so only the last one is counted this way), and no reply was sent twice.
    assert_eq!(rig.requests_with("again scenario:answer"), 1, "one turn for it");
    assert_eq!(atm.sent().len(), 2);

    // As if bob had died between `atm send` and `atm read`: the second message is unread again.
    // The worker's ledger knows it was answered: it is only marked read, with no new turn and
    // no second reply.
    std::fs::remove_file(atm.store.join("bob").join(format!("{second}.read"))).unwrap();
    let ledger = rig.state_dir().join("workers/agents/bob@demo.replied");
    assert_eq!(
        std::fs::read_to_string(&ledger).unwrap().lines().count(),
        2,
        "both replies recorded"
    );
    rig.start();
    assert!(
        eventually(PATIENCE, || atm.is_read("bob", &second)).await,
        "{}",
        rig.stderr()
    );
    let (code, _) = rig.stop().await;
    assert_eq!(code, Some(0), "{}", rig.stderr());
    assert_eq!(atm.sent().len(), 2, "never answered twice");
    assert_eq!(rig.requests_with("again scenario:answer"), 1, "no new turn");
}
