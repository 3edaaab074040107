//! `permissionProfile/list` for a session's directory (ADR 0038): the permission profiles
//! Codex's configuration defines there, page by page (a workspace's own `.codex/config.toml`
//! counts only when Codex trusts the workspace: Codex decides, given the cwd). An answer that
//! is not a list is an error the caller falls back from (no profiles); an entry without an id
//! is skipped.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::protocol::requests::PermissionProfileList;
use super::server::AppServer;
use crate::profiles::{ListedProfile, MAX_PROFILES};

/// The most pages read of one list.
const MAX_PAGES: usize = 10;

/// The profiles `server` lists for `cwd`, the server started if need be, each page answered
/// within `answer_limit`; `Err` says why there is no list.
pub(crate) async fn list(
    server: &AppServer,
    cwd: &Path,
    answer_limit: Duration,
) -> Result<Vec<ListedProfile>, String> {
    let conn = server.connect_or_say().await?;
    let mut profiles = Vec::new();
    let mut cursor = None;
    for _ in 0..MAX_PAGES {
        let params = PermissionProfileList {
            cursor: cursor.take(),
            cwd: cwd.to_path_buf(),
        };
        let page = tokio::time::timeout(answer_limit, conn.rpc.request(&params))
            .await
            .map_err(|_| format!("codex did not list its permission profiles within {answer_limit:?}"))?
            .map_err(|e| format!("codex did not list its permission profiles: {e}"))?;
        let (mut listed, next) = parse_page(&page)?;
        profiles.append(&mut listed);
        match next {
            Some(next) if profiles.len() <= MAX_PROFILES * 2 => cursor = Some(next),
            _ => break,
        }
    }
    Ok(profiles)
}

/// One answer: its profiles and the cursor of the next page.
fn parse_page(page: &Value) -> Result<(Vec<ListedProfile>, Option<String>), String> {
    let data = page
        .get("data")
        .and_then(Value::as_array)
        .ok_or("codex answered `permissionProfile/list` without a list of profiles")?;
    let profiles: Vec<ListedProfile> = data.iter().filter_map(listed).collect();
    if profiles.len() < data.len() {
        tracing::warn!(
            skipped = data.len() - profiles.len(),
            "codex listed permission profiles acplb cannot read; left out"
        );
    }
    let next = page
        .get("nextCursor")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map(str::to_owned);
    Ok((profiles, next))
}

/// One entry; `None` when it names no profile.
fn listed(entry: &Value) -> Option<ListedProfile> {
    Some(ListedProfile {
        id: entry.get("id")?.as_str()?.to_owned(),
        description: entry
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_owned),
        // A profile Codex does not say it allows is not offered.
        allowed: entry.get("allowed").and_then(Value::as_bool) == Some(true),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pages_are_read_and_garbage_is_an_error() {
        let page = json!({"data": [
            {"id": "locked", "description": "No writes", "allowed": true},
            {"id": 7},
            {"id": "denied", "description": null, "allowed": false},
            {"id": "vague"},
        ], "nextCursor": "2"});
        let (listed, next) = parse_page(&page).unwrap();
        assert_eq!(next.as_deref(), Some("2"));
        let ids: Vec<(&str, bool)> = listed.iter().map(|p| (p.id.as_str(), p.allowed)).collect();
        assert_eq!(ids, [("locked", true), ("denied", false), ("vague", false)]);
        assert_eq!(listed[0].description.as_deref(), Some("No writes"));
        assert!(
            parse_page(&json!({"data": "nope"}))
                .unwrap_err()
                .contains("without a list")
        );
        assert!(parse_page(&json!([])).is_err());
    }
}
