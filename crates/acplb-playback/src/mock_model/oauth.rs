//! A stand-in OAuth-protected MCP server on the mock's own port, for `/mcp login` tests: the
//! endpoint `/oauth-mcp` answers every request 401 with the resource metadata a client discovers
//! from (RFC 9728), and the authorization server behind it registers any client (RFC 7591) and
//! trades any code for a token, except the code `refused`, which it refuses. No browser is
//! involved: a test opens the callback itself.

use hyper::header::{HOST, WWW_AUTHENTICATE};
use hyper::{HeaderMap, Method, StatusCode};
use serde_json::{Value, json};

/// The path of the protected MCP endpoint (configure `[mcp_servers.x] url = "<base>/oauth-mcp"`).
pub const OAUTH_MCP_PATH: &str = "/oauth-mcp";

/// The code the token endpoint refuses (`invalid_grant`).
pub const REFUSED_CODE: &str = "refused";

/// What the mock answers, if `path` is one of these endpoints.
pub(crate) enum OAuthReply {
    Json(StatusCode, Value),
    Unauthorized { resource_metadata: String },
}

/// Whether `path` is one of this module's.
pub(crate) fn is_oauth_path(path: &str) -> bool {
    path.starts_with(OAUTH_MCP_PATH) || path.starts_with("/.well-known/") || path.starts_with("/oauth/")
}

/// The reply for an OAuth or protected-MCP path; `None` for every other path.
pub(crate) fn answer(method: &Method, path: &str, headers: &HeaderMap, body: &[u8]) -> Option<OAuthReply> {
    let host = headers
        .get(HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    let base = format!("http://{host}");
    let metadata = |what: &str| path.starts_with(&format!("/.well-known/{what}"));
    let reply = if path.starts_with(OAUTH_MCP_PATH) {
        OAuthReply::Unauthorized {
            resource_metadata: format!("{base}/.well-known/oauth-protected-resource"),
        }
    } else if *method == Method::GET && metadata("oauth-protected-resource") {
        OAuthReply::Json(
            StatusCode::OK,
            json!({"resource": format!("{base}{OAUTH_MCP_PATH}"), "authorization_servers": [base]}),
        )
    } else if *method == Method::GET
        && (metadata("oauth-authorization-server") || metadata("openid-configuration"))
    {
        OAuthReply::Json(
            StatusCode::OK,
            json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/oauth/authorize"),
                "token_endpoint": format!("{base}/oauth/token"),
                "registration_endpoint": format!("{base}/oauth/register"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
            }),
        )
    } else if *method == Method::POST && path == "/oauth/register" {
        let asked: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        OAuthReply::Json(
            StatusCode::CREATED,
            json!({"client_id": "mock-client", "redirect_uris": asked.get("redirect_uris").cloned().unwrap_or(json!([]))}),
        )
    } else if *method == Method::POST && path == "/oauth/token" {
        let form = String::from_utf8_lossy(body);
        if form.split('&').any(|pair| pair == format!("code={REFUSED_CODE}")) {
            OAuthReply::Json(
                StatusCode::BAD_REQUEST,
                json!({"error": "invalid_grant", "error_description": "the mock refuses this code"}),
            )
        } else {
            OAuthReply::Json(
                StatusCode::OK,
                json!({"access_token": "mock-access-token", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "mock-refresh-token"}),
            )
        }
    } else {
        return None;
    };
    Some(reply)
}

/// The `WWW-Authenticate` value of a 401 from the protected endpoint.
pub(crate) fn challenge(resource_metadata: &str) -> String {
    format!("Bearer resource_metadata=\"{resource_metadata}\"")
}

/// The header name, for the HTTP layer.
pub(crate) const CHALLENGE_HEADER: hyper::header::HeaderName = WWW_AUTHENTICATE;
