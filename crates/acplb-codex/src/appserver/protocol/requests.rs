//! The params of the requests acplb sends, typed: each names its method
//! ([`Request::METHOD`], from the method table), so a request cannot go out under another
//! method's name or with a misspelt field. Nested shapes acplb only passes through (a sandbox
//! policy, user input items, MCP config) stay JSON values.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

use super::methods;

/// The params of a request acplb sends; the type names its method.
pub(crate) trait Request: Serialize {
    /// The method, from [`methods`].
    const METHOD: &'static str;
}

/// `initialize`: who acplb is.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Initialize {
    client_info: ClientInfo,
    capabilities: ClientCapabilities,
}

#[derive(Debug, Serialize)]
struct ClientInfo {
    name: &'static str,
    title: &'static str,
    version: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ClientCapabilities {
    experimental_api: bool,
}

impl Initialize {
    /// acplb, this version, with Codex's experimental API (plan mode's `collaborationMode`
    /// and `item/tool/requestUserInput` need it).
    pub(crate) fn acplb() -> Self {
        Self {
            client_info: ClientInfo {
                name: "acplb",
                title: "acplb",
                version: env!("CARGO_PKG_VERSION"),
            },
            capabilities: ClientCapabilities {
                experimental_api: true,
            },
        }
    }
}

/// `thread/start`: a session's thread, as the session and its mode want it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThreadStart {
    pub(crate) cwd: PathBuf,
    pub(crate) approval_policy: &'static str,
    pub(crate) sandbox: &'static str,
    /// `-c`-style overrides: the session's MCP servers and environment.
    pub(crate) config: serde_json::Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) developer_instructions: Option<String>,
    /// The client's base instructions, in place of the model's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) base_instructions: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<String>,
}

/// `thread/resume`: a saved thread loaded with the session's settings (`excludeTurns`: acplb
/// already showed its history).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThreadResume {
    #[serde(flatten)]
    pub(crate) settings: ThreadStart,
    pub(crate) thread_id: String,
    pub(crate) exclude_turns: bool,
}

/// `thread/fork`: a new thread with the history of thread `thread_id`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThreadFork {
    #[serde(flatten)]
    pub(crate) settings: ThreadStart,
    pub(crate) thread_id: String,
    pub(crate) exclude_turns: bool,
}

/// `thread/loaded/list`: a cheap request, asked to see whether the server answers.
#[derive(Debug, Serialize)]
pub(crate) struct ThreadLoadedList {}

/// `model/list`: one page of the models Codex offers, hidden ones left out.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ModelList {
    /// Where the previous page ended (`nextCursor`); `None` for the first page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cursor: Option<String>,
    pub(crate) include_hidden: bool,
}

/// `permissionProfile/list`: one page of the permission profiles defined for `cwd` (a
/// workspace's own only when Codex trusts it).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PermissionProfileList {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cursor: Option<String>,
    pub(crate) cwd: PathBuf,
}

/// `thread/inject_items`: developer messages added to a thread's history.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThreadInjectItems {
    pub(crate) thread_id: String,
    pub(crate) items: Vec<Value>,
}

/// `thread/compact/start` (`/compact`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThreadCompactStart {
    pub(crate) thread_id: String,
}

/// `thread/delete`: thread `thread_id` deleted (its session was deleted).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThreadDelete {
    pub(crate) thread_id: String,
}

/// `thread/name/set`: thread `thread_id` named (`session/set_title`, `/rename`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThreadNameSet {
    pub(crate) thread_id: String,
    pub(crate) name: String,
}

/// `thread/archive`: thread `thread_id` archived (`session/archive`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThreadArchive {
    pub(crate) thread_id: String,
}

/// `thread/unarchive`: thread `thread_id` unarchived (`session/unarchive`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThreadUnarchive {
    pub(crate) thread_id: String,
}

/// `turn/start`: a prompt, with the turn's mode and settings.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TurnStart {
    pub(crate) thread_id: String,
    pub(crate) input: Value,
    pub(crate) approval_policy: &'static str,
    /// The sandbox of acplb's own modes; absent in a permission profile (Codex takes one or
    /// the other).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) sandbox_policy: Option<Value>,
    /// The permission profile the turn runs in (ADR 0038).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) permissions: Option<String>,
    /// With a profile: the roots its `:workspace` rules name (the cwd and the session's
    /// additional directories).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) runtime_workspace_roots: Option<Vec<PathBuf>>,
    pub(crate) cwd: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) effort: Option<String>,
    /// Codex's collaboration mode (experimental API): plan mode, or back to the default one
    /// after it; absent when the thread stays in the default mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) collaboration_mode: Option<Value>,
}

/// `turn/steer`: input added to the running turn `expected_turn_id`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TurnSteer {
    pub(crate) thread_id: String,
    pub(crate) input: Value,
    pub(crate) expected_turn_id: String,
}

/// `turn/interrupt`: stops turn `turn_id`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TurnInterrupt {
    pub(crate) thread_id: String,
    pub(crate) turn_id: String,
}

/// `review/start` (`/review`): a review of `target`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReviewStart {
    pub(crate) thread_id: String,
    pub(crate) target: Value,
}

/// `mcpServerStatus/list`: one page of the MCP servers (of a thread, when named), with their
/// tools and login state only.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct McpServerStatusList {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cursor: Option<String>,
    pub(crate) detail: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) thread_id: Option<String>,
}

/// `config/mcpServer/reload`: takes no params (sent as `null`).
#[derive(Debug, Serialize)]
pub(crate) struct McpServerReload;

/// `mcpServer/oauth/login`: an OAuth login to MCP server `name` (one of the thread's, when
/// named), with Codex's own discovery, registration and callback.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct McpOauthLogin {
    pub(crate) name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) thread_id: Option<String>,
}
/// `account/read`: the signed-in account, without refreshing its token.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AccountRead {
    pub(crate) refresh_token: bool,
}

/// `account/login/start`. Its `Debug` never shows an API key.
#[derive(Serialize)]
#[serde(tag = "type")]
pub(crate) enum LoginStart {
    /// Stores an API key (Codex answers at once).
    #[serde(rename = "apiKey")]
    ApiKey {
        #[serde(rename = "apiKey")]
        api_key: String,
    },
    /// A ChatGPT sign-in by device code: a page and a code for the user.
    #[serde(rename = "chatgptDeviceCode")]
    ChatgptDeviceCode,
}

impl std::fmt::Debug for LoginStart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoginStart::ApiKey { .. } => f.write_str("LoginStart::ApiKey([REDACTED])"),
            LoginStart::ChatgptDeviceCode => f.write_str("LoginStart::ChatgptDeviceCode"),
        }
    }
}

/// `account/login/cancel`: stops the sign-in `login_id`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LoginCancel {
    pub(crate) login_id: String,
}

/// `account/logout`.
#[derive(Debug, Serialize)]
pub(crate) struct Logout {}

/// `skills/list`: the skills of `cwds`; `force_reload` reads the skill files again.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SkillsList {
    pub(crate) cwds: Vec<PathBuf>,
    pub(crate) force_reload: bool,
}

/// `thread/backgroundTerminals/list`: one page of the commands of `thread_id` that outlived
/// their tool call.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BackgroundTerminalsList {
    pub(crate) thread_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cursor: Option<String>,
}

/// `thread/backgroundTerminals/terminate`: stops the terminal `process_id` (Codex's id, the
/// one the model polls, not the OS pid).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BackgroundTerminalsTerminate {
    pub(crate) thread_id: String,
    pub(crate) process_id: String,
}

/// `thread/backgroundTerminals/clean`: stops every background terminal of `thread_id`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BackgroundTerminalsClean {
    pub(crate) thread_id: String,
}

/// `thread/goal/set`: a new objective (and `status`), or only a new status of the goal there
/// is; `origin: "user"` says the user asked (Codex lets the model pause or complete a goal only
/// at the user's explicit request).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThreadGoalSet {
    pub(crate) thread_id: String,
    pub(crate) origin: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) objective: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) status: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) token_budget: Option<u64>,
}

/// `thread/goal/get`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThreadGoalGet {
    pub(crate) thread_id: String,
}

/// `thread/goal/clear`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThreadGoalClear {
    pub(crate) thread_id: String,
    pub(crate) origin: &'static str,
}

macro_rules! methods {
    ($($params:ty => $method:ident),* $(,)?) => {
        $(impl Request for $params {
            const METHOD: &'static str = methods::$method;
        })*
    };
}

methods! {
    Initialize => INITIALIZE,
    ThreadStart => THREAD_START,
    ThreadResume => THREAD_RESUME,
    ThreadFork => THREAD_FORK,
    ThreadLoadedList => THREAD_LOADED_LIST,
    ThreadInjectItems => THREAD_INJECT_ITEMS,
    ThreadCompactStart => THREAD_COMPACT_START,
    ThreadDelete => THREAD_DELETE,
    ThreadNameSet => THREAD_NAME_SET,
    ThreadArchive => THREAD_ARCHIVE,
    ThreadUnarchive => THREAD_UNARCHIVE,
    TurnStart => TURN_START,
    TurnSteer => TURN_STEER,
    TurnInterrupt => TURN_INTERRUPT,
    ReviewStart => REVIEW_START,
    ModelList => MODEL_LIST,
    McpServerStatusList => MCP_SERVER_STATUS_LIST,
    McpServerReload => MCP_SERVER_RELOAD,
    McpOauthLogin => MCP_OAUTH_LOGIN,
    AccountRead => ACCOUNT_READ,
    LoginStart => LOGIN_START,
    LoginCancel => LOGIN_CANCEL,
    Logout => LOGOUT,
    SkillsList => SKILLS_LIST,
    BackgroundTerminalsList => BACKGROUND_TERMINALS_LIST,
    BackgroundTerminalsTerminate => BACKGROUND_TERMINALS_TERMINATE,
    BackgroundTerminalsClean => BACKGROUND_TERMINALS_CLEAN,
    PermissionProfileList => PERMISSION_PROFILE_LIST,
    ThreadGoalSet => THREAD_GOAL_SET,
    ThreadGoalGet => THREAD_GOAL_GET,
    ThreadGoalClear => THREAD_GOAL_CLEAR,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn params_keep_the_field_names_and_order_codex_reads() {
        let settings = ThreadStart {
            cwd: "/w".into(),
            approval_policy: "on-request",
            sandbox: "read-only",
            config: serde_json::Map::new(),
            developer_instructions: None,
            base_instructions: None,
            model: Some("m".into()),
        };
        let resume = ThreadResume {
            settings,
            thread_id: "t".into(),
            exclude_turns: true,
        };
        assert_eq!(
            serde_json::to_string(&resume).ok().as_deref(),
            Some(
                r#"{"cwd":"/w","approvalPolicy":"on-request","sandbox":"read-only","config":{},"model":"m","threadId":"t","excludeTurns":true}"#
            )
        );
        assert_eq!(ThreadResume::METHOD, "thread/resume");
        let key = LoginStart::ApiKey {
            api_key: "sk-secret".into(),
        };
        assert_eq!(
            serde_json::to_string(&key).ok().as_deref(),
            Some(r#"{"type":"apiKey","apiKey":"sk-secret"}"#)
        );
        assert!(!format!("{key:?}").contains("sk-secret"));
        assert_eq!(
            serde_json::to_string(&LoginStart::ChatgptDeviceCode)
                .ok()
                .as_deref(),
            Some(r#"{"type":"chatgptDeviceCode"}"#)
        );
        assert_eq!(
            serde_json::to_string(&LoginCancel { login_id: "l".into() })
                .ok()
                .as_deref(),
            Some(r#"{"loginId":"l"}"#)
        );
        let first = ModelList {
            cursor: None,
            include_hidden: false,
        };
        assert_eq!(
            serde_json::to_string(&first).ok().as_deref(),
            Some(r#"{"includeHidden":false}"#)
        );
        assert_eq!(
            serde_json::to_string(&ThreadLoadedList {}).ok().as_deref(),
            Some("{}")
        );
        let init = serde_json::to_value(Initialize::acplb()).ok();
        assert_eq!(
            init.as_ref()
                .and_then(|v| v.pointer("/capabilities/experimentalApi")),
            Some(&json!(true))
        );
    }
}
