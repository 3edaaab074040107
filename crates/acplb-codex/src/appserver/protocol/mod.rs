//! The app-server protocol as acplb speaks it: the method table ([`methods`], every method name
//! in one place) and the typed params of the requests acplb sends ([`requests`], each naming its
//! method). What the server sends is read in `wire.rs` (notification params) and routed by
//! `rpc/`.

pub(crate) mod methods;
pub(crate) mod requests;

pub(crate) use requests::Request;

/// Where the next page of a paged list starts (`nextCursor`); `None` after the last page.
pub(crate) fn next_cursor(page: &serde_json::Value) -> Option<String> {
    page.get("nextCursor")
        .and_then(serde_json::Value::as_str)
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
}
