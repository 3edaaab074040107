//! Subagent threads and the session thread they belong to: a child's messages go where its
//! root ancestor's go. Children are learnt from the messages of a routed thread as they are
//! routed, in the server's order, so a child's first message already finds its way.

use std::collections::HashMap;

use serde_json::Value;

use crate::appserver::subagents::spawned;

/// How many subagent threads the server may have routed at once (over every session): past
/// it, a new child's messages are dropped (its asks refused) like any unknown thread's.
const CHILDREN_LIMIT: usize = 1024;

/// Child thread → the session thread it belongs to.
#[derive(Debug, Default)]
pub(super) struct Children(HashMap<String, String>);

impl Children {
    /// The session thread `thread` belongs to: itself, or its root ancestor.
    pub(super) fn owner<'a>(&'a self, thread: &'a str) -> &'a str {
        self.0.get(thread).map_or(thread, String::as_str)
    }

    /// Learns the children `method` names, when their parent is `routed` or a known child.
    pub(super) fn learn(&mut self, method: &str, params: &Value, routed: impl Fn(&str) -> bool) {
        let Some(spawned) = spawned::spawned(method, params) else {
            return;
        };
        let owner = self.owner(spawned.parent).to_owned();
        if !routed(&owner) {
            return;
        }
        for child in spawned.children {
            if child == owner || self.0.contains_key(child) {
                continue;
            }
            if self.0.len() >= CHILDREN_LIMIT {
                tracing::warn!(
                    limit = CHILDREN_LIMIT,
                    "too many subagent threads; a new one is not shown"
                );
                return;
            }
            self.0.insert(child.to_owned(), owner.clone());
        }
    }

    /// Forgets the children of session thread `owner`.
    pub(super) fn forget(&mut self, owner: &str) {
        self.0.retain(|_, o| o != owner);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn activity(parent: &str, child: &str) -> Value {
        json!({"threadId": parent, "item": {"type": "subAgentActivity", "agentThreadId": child}})
    }

    #[test]
    fn children_and_grandchildren_belong_to_the_routed_root_until_forgotten() {
        let mut children = Children::default();
        let routed = |t: &str| t == "root";
        children.learn("item/started", &activity("root", "child"), routed);
        children.learn("item/started", &activity("child", "grandchild"), routed);
        children.learn("item/started", &activity("stranger", "other"), routed);
        assert_eq!(children.owner("child"), "root");
        assert_eq!(children.owner("grandchild"), "root");
        assert_eq!(children.owner("other"), "other");
        // A thread naming itself is not its own child.
        children.learn("item/started", &activity("root", "root"), routed);
        assert_eq!(children.owner("root"), "root");
        children.forget("root");
        assert_eq!(children.owner("child"), "child");
    }

    #[test]
    fn the_number_of_children_is_bounded() {
        let mut children = Children::default();
        for i in 0..CHILDREN_LIMIT + 10 {
            children.learn("item/started", &activity("root", &format!("c{i}")), |t| {
                t == "root"
            });
        }
        assert_eq!(children.0.len(), CHILDREN_LIMIT);
    }
}
