//! Codex's account, through the app-server: who is signed in (`account/read`), signing in with
//! an API key or a ChatGPT device code (`account/login/start`, whose end comes as
//! `account/login/completed`), stopping a sign-in (`account/login/cancel`) and signing out
//! (`account/logout`). An API key goes to Codex over the server's stdin only, and joins the
//! secrets cut from whatever the server prints.

use acplb_core::secrets::KnownSecrets;
use serde_json::Value;

use super::protocol::requests::{AccountRead, LoginCancel, LoginStart, Logout};
use super::rpc::LoginEnd;
use super::server::AppServer;
use super::wire;

/// Who is signed in, as `account/read` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Account {
    /// `apiKey`, `chatgpt`, `amazonBedrock`, …; `None` when nobody is signed in.
    pub(crate) kind: Option<String>,
    /// The ChatGPT account's email, when Codex knows it.
    pub(crate) email: Option<String>,
    /// The ChatGPT plan (`plus`, `pro`, …), when Codex knows it.
    pub(crate) plan: Option<String>,
    /// Whether the configured model provider needs an OpenAI sign-in at all (a custom provider
    /// with its own key does not).
    pub(crate) requires_openai_auth: bool,
}

impl Account {
    /// One line for `/status`: the kind of sign-in and the email, never a key.
    pub(crate) fn describe(&self) -> String {
        let signed_in = match (self.kind.as_deref(), &self.email) {
            (None, _) => "not signed in".to_owned(),
            (Some("apiKey"), _) => "signed in with an API key".to_owned(),
            (Some("chatgpt"), Some(email)) => format!("signed in with ChatGPT as {email}"),
            (Some("chatgpt"), None) => "signed in with ChatGPT".to_owned(),
            (Some(other), _) => format!("signed in ({other})"),
        };
        let plan = self
            .plan
            .as_deref()
            .map(|p| format!(", plan {p}"))
            .unwrap_or_default();
        if self.requires_openai_auth {
            format!("{signed_in}{plan}")
        } else {
            format!("{signed_in}{plan}; the configured model provider needs no OpenAI sign-in")
        }
    }
}

impl Account {
    /// As ACP's `auth/status` answer (unstable, ADR 0037): no OpenAI sign-in needed, nobody,
    /// or the one account with its kind and email; never a key.
    pub(crate) fn status(&self) -> agent_client_protocol::v1::schema::AuthStatusResponse {
        use agent_client_protocol::v1::schema::{AuthAccount, AuthState, AuthStatusResponse};
        let Some(kind) = self.kind.as_deref() else {
            let state = if self.requires_openai_auth {
                AuthState::Unauthenticated
            } else {
                AuthState::NotRequired
            };
            return AuthStatusResponse::new(state);
        };
        let label = match kind {
            "apiKey" => "OpenAI API key",
            "chatgpt" => "ChatGPT",
            other => other,
        };
        let account = AuthAccount::new(label)
            .active(true)
            .email(self.email.clone())
            .description(self.plan.as_ref().map(|p| format!("plan {p}")));
        AuthStatusResponse::new(AuthState::Authenticated).accounts(vec![account])
    }
}

/// A device-code sign-in under way: the page to open and the code to enter there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DeviceCode {
    pub(crate) login_id: String,
    pub(crate) url: String,
    pub(crate) code: String,
}

/// Who is signed in.
pub(crate) async fn read(server: &AppServer) -> Result<Account, String> {
    let conn = server.connect_or_say().await?;
    let answer = conn
        .rpc
        .request(&AccountRead { refresh_token: false })
        .await
        .map_err(|e| format!("codex app-server did not say who is signed in: {e}"))?;
    parse_account(&answer)
}

fn parse_account(answer: &Value) -> Result<Account, String> {
    let account = answer
        .get("account")
        .ok_or("codex app-server answered `account/read` without an account")?;
    let text = |key: &str| account.get(key).and_then(Value::as_str).map(str::to_owned);
    Ok(Account {
        kind: text("type"),
        email: text("email"),
        plan: text("planType"),
        requires_openai_auth: answer.get("requiresOpenaiAuth").and_then(Value::as_bool) != Some(false),
    })
}

/// Stores `key` as Codex's API key.
pub(crate) async fn login_api_key(server: &AppServer, key: &str) -> Result<(), String> {
    // Whatever the server prints from now on is cleared of the key.
    server.serve(&KnownSecrets::new([key]));
    let conn = server.connect_or_say().await?;
    let start = LoginStart::ApiKey {
        api_key: key.to_owned(),
    };
    conn.rpc
        .request(&start)
        .await
        .map(drop)
        .map_err(|e| format!("Codex refused the API key: {e}"))
}

/// Starts a ChatGPT sign-in by device code.
pub(crate) async fn start_device_code(server: &AppServer) -> Result<DeviceCode, String> {
    let conn = server.connect_or_say().await?;
    let answer = conn
        .rpc
        .request(&LoginStart::ChatgptDeviceCode)
        .await
        .map_err(|e| format!("Codex could not start a device-code sign-in: {e}"))?;
    let text = |key: &str| wire::text(&answer, key).map(str::to_owned);
    match (text("loginId"), text("verificationUrl"), text("userCode")) {
        (Some(login_id), Some(url), Some(code)) => Ok(DeviceCode { login_id, url, code }),
        _ => Err("codex app-server started a device-code sign-in without a page or a code".into()),
    }
}

/// Waits for sign-in `login_id` to end; `Err` says why it did not succeed.
pub(crate) async fn ended(server: &AppServer, login_id: &str) -> Result<(), String> {
    let conn = server.connect_or_say().await?;
    match conn.rpc.login_ended(login_id).await {
        Ok(LoginEnd::Success) => Ok(()),
        Ok(LoginEnd::Failure(why)) => Err(format!("the sign-in did not succeed: {why}")),
        Err(gone) => Err(format!(
            "codex app-server stopped during the sign-in ({})",
            gone.status
        )),
    }
}

/// Stops sign-in `login_id`; whether Codex still had it.
pub(crate) async fn cancel(server: &AppServer, login_id: &str) -> Result<bool, String> {
    let Some(conn) = server.live() else {
        return Ok(false);
    };
    let answer = conn
        .rpc
        .request(&LoginCancel {
            login_id: login_id.to_owned(),
        })
        .await
        .map_err(|e| format!("Codex could not stop the sign-in: {e}"))?;
    Ok(answer.get("status").and_then(Value::as_str) == Some("canceled"))
}

/// Signs out.
pub(crate) async fn logout(server: &AppServer) -> Result<(), String> {
    let conn = server.connect_or_say().await?;
    conn.rpc
        .request(&Logout {})
        .await
        .map(drop)
        .map_err(|e| format!("Codex could not sign out: {e}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_account_reads_as_who_is_signed_in_never_a_key() {
        let chatgpt = parse_account(&json!({
            "account": {"type": "chatgpt", "email": "a@example.com", "planType": "plus"},
            "requiresOpenaiAuth": true
        }))
        .unwrap();
        assert_eq!(
            chatgpt.describe(),
            "signed in with ChatGPT as a@example.com, plan plus"
        );
        let key = parse_account(&json!({"account": {"type": "apiKey"}, "requiresOpenaiAuth": true})).unwrap();
        assert_eq!(key.describe(), "signed in with an API key");
        let nobody = parse_account(&json!({"account": null, "requiresOpenaiAuth": false})).unwrap();
        assert_eq!(
            nobody.describe(),
            "not signed in; the configured model provider needs no OpenAI sign-in"
        );
        assert!(parse_account(&json!({"userId": null})).is_err());
    }

    #[test]
    fn an_account_as_acps_auth_status() {
        let status = |answer: Value| serde_json::to_value(parse_account(&answer).unwrap().status()).unwrap();
        let chatgpt = status(
            json!({"account": {"type": "chatgpt", "email": "a@example.com", "planType": "plus"},
            "requiresOpenaiAuth": true}),
        );
        assert_eq!(
            chatgpt,
            json!({"state": "authenticated", "accounts": [{"label": "ChatGPT", "description": "plan plus",
                "active": true, "email": "a@example.com"}]})
        );
        let key = status(json!({"account": {"type": "apiKey"}, "requiresOpenaiAuth": true}));
        assert_eq!(key["accounts"][0]["label"], "OpenAI API key");
        let nobody = status(json!({"account": null, "requiresOpenaiAuth": true}));
        assert_eq!(nobody, json!({"state": "unauthenticated"}));
        let custom = status(json!({"account": null, "requiresOpenaiAuth": false}));
        assert_eq!(custom["state"], "not_required");
    }
}
