//! What Codex's `model/list` says: the models it offers (hidden ones left out) with the
//! reasoning efforts each supports, page by page. An answer that is not a list of models is an
//! error the caller falls back from; an entry that makes no sense is skipped.

use serde_json::Value;

use super::protocol::requests::ModelList;
use super::server::AppServer;
use crate::catalog::ListedModel;

/// The most pages acplb reads of one list (a server that keeps handing out cursors stops here).
const MAX_PAGES: usize = 20;

/// Every model `server` lists, started if need be; `Err` says why there is no list.
pub(crate) async fn list(server: &AppServer) -> Result<Vec<ListedModel>, String> {
    let conn = server.connect_or_say().await?;
    let mut models = Vec::new();
    let mut cursor = None;
    for _ in 0..MAX_PAGES {
        let params = ModelList {
            cursor: cursor.take(),
            include_hidden: false,
        };
        let page = conn
            .rpc
            .request(&params)
            .await
            .map_err(|e| format!("codex app-server did not list its models: {e}"))?;
        let (mut listed, next) = parse_page(&page)?;
        models.append(&mut listed);
        match next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    if models.is_empty() {
        return Err("codex app-server listed no models".into());
    }
    Ok(models)
}

/// One `model/list` answer: its usable models and the cursor of the next page.
fn parse_page(page: &Value) -> Result<(Vec<ListedModel>, Option<String>), String> {
    let data = page
        .get("data")
        .and_then(Value::as_array)
        .ok_or("codex app-server answered `model/list` without a list of models")?;
    let mut skipped = 0_usize;
    let models = data
        .iter()
        .filter(|m| m.get("hidden").and_then(Value::as_bool) != Some(true))
        .filter_map(|m| {
            let model = listed(m);
            skipped += usize::from(model.is_none());
            model
        })
        .collect();
    if skipped > 0 {
        tracing::warn!(
            skipped,
            "codex app-server listed models acplb cannot read; left out"
        );
    }
    Ok((models, super::protocol::next_cursor(page)))
}

/// One entry of the list; `None` when it names no model.
fn listed(entry: &Value) -> Option<ListedModel> {
    let text = |key: &str| {
        entry
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let slug = text("model").or_else(|| text("id"))?;
    let efforts = entry
        .get("supportedReasoningEfforts")
        .and_then(Value::as_array)
        .map(|all| {
            all.iter()
                .filter_map(|e| e.get("reasoningEffort").and_then(Value::as_str))
                .filter(|e| !e.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    Some(ListedModel {
        slug: slug.to_owned(),
        name: text("displayName").unwrap_or(slug).to_owned(),
        efforts,
        is_default: entry.get("isDefault").and_then(Value::as_bool) == Some(true),
        default_effort: text("defaultReasoningEffort").map(str::to_owned),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_page_keeps_listed_models_and_their_efforts_and_skips_hidden_and_nameless_ones() {
        let page = json!({
            "data": [
                {"id": "a", "model": "mock-alpha", "displayName": "Mock Alpha", "hidden": false,
                 "isDefault": true, "defaultReasoningEffort": "medium", "supportedReasoningEfforts": [
                    {"reasoningEffort": "low", "description": "fast"},
                    {"reasoningEffort": "medium", "description": "balanced"}]},
                {"id": "b", "model": "mock-beta", "displayName": "Mock Beta", "hidden": true},
                {"displayName": "no slug"},
                "not an object",
                {"model": "bare"}
            ],
            "nextCursor": "p2"
        });
        let (models, next) = parse_page(&page).unwrap();
        assert_eq!(next.as_deref(), Some("p2"));
        let slugs: Vec<_> = models.iter().map(|m| m.slug.as_str()).collect();
        assert_eq!(slugs, ["mock-alpha", "bare"]);
        assert_eq!(models[0].name, "Mock Alpha");
        assert_eq!(models[0].efforts, ["low", "medium"]);
        assert!(models[0].is_default);
        assert_eq!(models[0].default_effort.as_deref(), Some("medium"));
        assert_eq!(models[1].name, "bare");
        assert_eq!(models[1].default_effort, None);
        assert!(models[1].efforts.is_empty());
    }

    #[test]
    fn an_answer_without_a_list_is_an_error() {
        for garbage in [json!(null), json!({"data": "all of them"}), json!([1, 2])] {
            let e = parse_page(&garbage).unwrap_err();
            assert!(e.contains("without a list of models"), "{e}");
        }
        let (models, next) = parse_page(&json!({"data": [], "nextCursor": ""})).unwrap();
        assert!(models.is_empty() && next.is_none());
    }
}
