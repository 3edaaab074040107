//! Which threads a server message says were spawned, and by which thread: Codex's subagents
//! run on threads of their own that no session started, so their messages reach a session
//! only through the thread that spawned them. Read by the router (which routes a child's
//! messages to its ancestor's session) and by the session (which shows each child as a tool
//! call).

use serde_json::Value;

use crate::appserver::protocol::methods;

/// The threads one message names as spawned by `parent`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Spawned<'a> {
    pub(crate) parent: &'a str,
    pub(crate) children: Vec<&'a str>,
}

/// What `method` with `params` says was spawned: a `thread/started` of a thread with a parent
/// (`parentThreadId`, or `source.subAgent.thread_spawn.parent_thread_id`), or an item of the
/// spawning thread naming its children (`subAgentActivity.agentThreadId`,
/// `collabAgentToolCall.receiverThreadIds`). Anything missing or oddly typed names nothing.
pub(crate) fn spawned<'a>(method: &str, params: &'a Value) -> Option<Spawned<'a>> {
    match method {
        methods::THREAD_STARTED => {
            let thread = params.get("thread")?;
            let child = thread.get("id")?.as_str()?;
            let parent = thread.get("parentThreadId").and_then(Value::as_str).or_else(|| {
                thread
                    .pointer("/source/subAgent/thread_spawn/parent_thread_id")
                    .and_then(Value::as_str)
            })?;
            Some(Spawned {
                parent,
                children: vec![child],
            })
        }
        methods::ITEM_STARTED | methods::ITEM_COMPLETED => {
            let parent = params.get("threadId")?.as_str()?;
            let item = params.get("item")?;
            let children = match item.get("type")?.as_str()? {
                SUBAGENT_ACTIVITY => vec![item.get("agentThreadId")?.as_str()?],
                COLLAB_CALL => item
                    .get("receiverThreadIds")?
                    .as_array()?
                    .iter()
                    .filter_map(Value::as_str)
                    .collect(),
                _ => return None,
            };
            (!children.is_empty()).then_some(Spawned { parent, children })
        }
        _ => None,
    }
}

/// Whether what `method` with `params` says of its children starts them working: a new thread,
/// a spawn (`spawnAgent`, an activity `started`). A wait, a close, a message queued for a child
/// (`interacted`, `sendInput`) or a resume name children without surely starting a turn of
/// theirs: such a child counts as working once its turn starts.
pub(crate) fn gives_work(method: &str, params: &Value) -> bool {
    if method == methods::THREAD_STARTED {
        return true;
    }
    let Some(item) = params.get("item") else {
        return false;
    };
    match item.get("type").and_then(Value::as_str) {
        Some(SUBAGENT_ACTIVITY) => item.get("kind").and_then(Value::as_str) == Some("started"),
        Some(COLLAB_CALL) => item.get("tool").and_then(Value::as_str) == Some("spawnAgent"),
        _ => false,
    }
}

/// A spawned agent's life as its parent sees it (`started`, `interacted`, `interrupted`,
/// `completed`): Codex's multi-agent v2.
pub(crate) const SUBAGENT_ACTIVITY: &str = "subAgentActivity";
/// A collaboration tool call (`spawnAgent`, `sendInput`, `wait`, `closeAgent`, …): Codex's
/// multi-agent v1, and v2's waits.
pub(crate) const COLLAB_CALL: &str = "collabAgentToolCall";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_shape_names_its_children_and_odd_ones_name_none() {
        let activity = json!({"threadId": "p", "item": {"type": "subAgentActivity", "agentThreadId": "c1"}});
        assert_eq!(
            spawned("item/started", &activity),
            Some(Spawned {
                parent: "p",
                children: vec!["c1"]
            })
        );
        let collab = json!({"threadId": "p", "item": {"type": "collabAgentToolCall", "receiverThreadIds": ["a", 3, "b"]}});
        assert_eq!(spawned("item/completed", &collab).unwrap().children, ["a", "b"]);
        let started = json!({"thread": {"id": "c", "parentThreadId": null,
            "source": {"subAgent": {"thread_spawn": {"parent_thread_id": "p", "depth": 1}}}}});
        assert_eq!(spawned("thread/started", &started).unwrap().parent, "p");
        for (method, params) in [
            (
                "thread/started",
                json!({"thread": {"id": "c", "parentThreadId": null, "source": "appServer"}}),
            ),
            (
                "item/started",
                json!({"threadId": "p", "item": {"type": "collabAgentToolCall", "receiverThreadIds": []}}),
            ),
            (
                "item/started",
                json!({"threadId": "p", "item": {"type": "subAgentActivity"}}),
            ),
            (
                "item/started",
                json!({"threadId": "p", "item": {"type": "commandExecution"}}),
            ),
            ("turn/started", json!({"threadId": "p"})),
        ] {
            assert_eq!(spawned(method, &params), None, "{method} {params}");
        }
    }
}
