//! The method table of the app-server protocol: one constant per method acplb sends, answers
//! or reads, so that what acplb speaks is listed in one place (no method name is written
//! anywhere else). Names as `codex app-server` 0.169.0 spells them.

// Requests acplb sends (their params: `super::requests`).
/// The handshake: acplb's name and capabilities.
pub(crate) const INITIALIZE: &str = "initialize";
/// The notification that ends the handshake.
pub(crate) const INITIALIZED: &str = "initialized";
/// Starts a thread.
pub(crate) const THREAD_START: &str = "thread/start";
/// Loads a thread Codex saved (from an earlier server or acplb).
pub(crate) const THREAD_RESUME: &str = "thread/resume";
/// A new thread with another thread's history.
pub(crate) const THREAD_FORK: &str = "thread/fork";
/// The threads loaded on the server (a cheap health check).
pub(crate) const THREAD_LOADED_LIST: &str = "thread/loaded/list";
/// Adds items (developer messages) to a thread's history.
pub(crate) const THREAD_INJECT_ITEMS: &str = "thread/inject_items";
/// `/compact`: compacts a thread's history.
pub(crate) const THREAD_COMPACT_START: &str = "thread/compact/start";
/// Deletes a saved thread (its rollout) for good.
pub(crate) const THREAD_DELETE: &str = "thread/delete";
pub(crate) const THREAD_NAME_SET: &str = "thread/name/set";
pub(crate) const THREAD_ARCHIVE: &str = "thread/archive";
pub(crate) const THREAD_UNARCHIVE: &str = "thread/unarchive";
/// Starts a turn.
pub(crate) const TURN_START: &str = "turn/start";
/// Adds input to the running turn.
pub(crate) const TURN_STEER: &str = "turn/steer";
/// Stops the running turn.
pub(crate) const TURN_INTERRUPT: &str = "turn/interrupt";
/// `/review`: a review turn.
pub(crate) const REVIEW_START: &str = "review/start";
/// One page of the models Codex offers.
pub(crate) const MODEL_LIST: &str = "model/list";
/// `/mcp`: one page of the MCP servers and their state.
pub(crate) const MCP_SERVER_STATUS_LIST: &str = "mcpServerStatus/list";
/// `/mcp reload`: Codex reads its MCP server configuration again.
pub(crate) const MCP_SERVER_RELOAD: &str = "config/mcpServer/reload";
/// Starts an MCP server's OAuth login: Codex answers with the page to open.
pub(crate) const MCP_OAUTH_LOGIN: &str = "mcpServer/oauth/login";
/// Who is signed in, and whether the model provider needs an OpenAI sign-in at all.
pub(crate) const ACCOUNT_READ: &str = "account/read";
/// Starts a sign-in (an API key, a ChatGPT device code).
pub(crate) const LOGIN_START: &str = "account/login/start";
/// Stops a sign-in under way.
pub(crate) const LOGIN_CANCEL: &str = "account/login/cancel";
/// Signs out.
pub(crate) const LOGOUT: &str = "account/logout";
/// The skills Codex finds for some directories.
pub(crate) const SKILLS_LIST: &str = "skills/list";
/// `/terminals`: one page of a thread's background terminals (experimental API).
pub(crate) const BACKGROUND_TERMINALS_LIST: &str = "thread/backgroundTerminals/list";
/// `/terminals stop`: stops one background terminal by its process id.
pub(crate) const BACKGROUND_TERMINALS_TERMINATE: &str = "thread/backgroundTerminals/terminate";
/// `/terminals clean`: stops every background terminal of a thread.
pub(crate) const BACKGROUND_TERMINALS_CLEAN: &str = "thread/backgroundTerminals/clean";
/// `/goal <objective>` and `/goal resume`: sets a thread's goal, or its status (experimental
/// API); an active goal on an idle thread has Codex start a turn on its own.
pub(crate) const THREAD_GOAL_SET: &str = "thread/goal/set";
/// `/goal`: a thread's goal, if it has one.
pub(crate) const THREAD_GOAL_GET: &str = "thread/goal/get";
/// `/goal clear`: forgets a thread's goal.
pub(crate) const THREAD_GOAL_CLEAR: &str = "thread/goal/clear";
/// One page of the permission profiles Codex's configuration defines for a directory.
pub(crate) const PERMISSION_PROFILE_LIST: &str = "permissionProfile/list";

// Requests the server sends acplb.
/// Asks to run a command.
pub(crate) const COMMAND_APPROVAL: &str = "item/commandExecution/requestApproval";
/// Asks to apply a patch.
pub(crate) const FILE_CHANGE_APPROVAL: &str = "item/fileChange/requestApproval";
/// Asks for more permissions.
pub(crate) const PERMISSIONS_APPROVAL: &str = "item/permissions/requestApproval";
/// An MCP server asks the user (a tool call's approval, or a form).
pub(crate) const MCP_ELICITATION: &str = "mcpServer/elicitation/request";
/// A tool asks the user questions.
pub(crate) const TOOL_USER_INPUT: &str = "item/tool/requestUserInput";

// Notifications acplb reads.
/// A turn started (its id).
pub(crate) const TURN_STARTED: &str = "turn/started";
/// A thread started (a subagent's, too: `thread.parentThreadId`).
pub(crate) const THREAD_STARTED: &str = "thread/started";
/// A turn ended.
pub(crate) const TURN_COMPLETED: &str = "turn/completed";
/// The turn's plan.
pub(crate) const TURN_PLAN_UPDATED: &str = "turn/plan/updated";
/// An item started.
pub(crate) const ITEM_STARTED: &str = "item/started";
/// An item completed.
pub(crate) const ITEM_COMPLETED: &str = "item/completed";
/// A piece of an agent message.
pub(crate) const AGENT_MESSAGE_DELTA: &str = "item/agentMessage/delta";
/// A piece of a plan mode turn's proposed plan (a `plan` item).
pub(crate) const PLAN_DELTA: &str = "item/plan/delta";
/// A piece of a reasoning summary.
pub(crate) const REASONING_SUMMARY_DELTA: &str = "item/reasoning/summaryTextDelta";
/// A new part of a reasoning summary.
pub(crate) const REASONING_SUMMARY_PART_ADDED: &str = "item/reasoning/summaryPartAdded";
/// What a command printed.
pub(crate) const COMMAND_OUTPUT_DELTA: &str = "item/commandExecution/outputDelta";
/// A patch as it stands.
pub(crate) const PATCH_UPDATED: &str = "item/fileChange/patchUpdated";
/// An MCP tool call's progress.
pub(crate) const MCP_TOOL_PROGRESS: &str = "item/mcpToolCall/progress";
/// The thread's token usage.
pub(crate) const TOKEN_USAGE_UPDATED: &str = "thread/tokenUsage/updated";
/// The thread's name.
pub(crate) const THREAD_NAME_UPDATED: &str = "thread/name/updated";
/// An error (retried, or the turn's failure).
pub(crate) const ERROR: &str = "error";
/// A warning.
pub(crate) const WARNING: &str = "warning";
/// A warning of the guardian reviewer.
pub(crate) const GUARDIAN_WARNING: &str = "guardianWarning";
/// Codex moved the turn to another model.
pub(crate) const MODEL_REROUTED: &str = "model/rerouted";
/// An MCP server started (or failed to).
pub(crate) const MCP_STARTUP_STATUS: &str = "mcpServer/startupStatus/updated";
/// The account's rate limits (naming no thread).
pub(crate) const RATE_LIMITS_UPDATED: &str = "account/rateLimits/updated";
/// Codex settled one of its requests itself (the turn that asked was interrupted, say).
pub(crate) const SERVER_REQUEST_RESOLVED: &str = "serverRequest/resolved";
/// A sign-in ended (its `loginId`, success or error; naming no thread).
pub(crate) const LOGIN_COMPLETED: &str = "account/login/completed";
/// An MCP server's OAuth login ended (its `loginId`, success or error).
pub(crate) const MCP_OAUTH_LOGIN_COMPLETED: &str = "mcpServer/oauthLogin/completed";
/// Who is signed in changed (naming no thread).
pub(crate) const ACCOUNT_UPDATED: &str = "account/updated";
/// A skill file changed (naming no thread): the skills are listed again.
pub(crate) const SKILLS_CHANGED: &str = "skills/changed";
/// A thread's goal changed (set, its status, or what it has used so far).
pub(crate) const THREAD_GOAL_UPDATED: &str = "thread/goal/updated";
/// A thread's goal was cleared.
pub(crate) const THREAD_GOAL_CLEARED: &str = "thread/goal/cleared";

/// Notifications that need no update: thread and account state, facts other updates already
/// show, and streams the decoder does not show (raw reasoning).
pub(crate) const IGNORED: &[&str] = &[
    THREAD_STARTED,
    "thread/status/changed",
    "thread/compacted",
    THREAD_GOAL_UPDATED,
    THREAD_GOAL_CLEARED,
    "thread/settings/updated",
    SERVER_REQUEST_RESOLVED,
    RATE_LIMITS_UPDATED,
    ACCOUNT_UPDATED,
    "remoteControl/status/changed",
    "deprecationNotice",
    "configWarning",
    "turn/diff/updated",
    "turn/moderationMetadata",
    "item/reasoning/textDelta",
    "item/fileChange/outputDelta",
    "item/commandExecution/terminalInteraction",
    "item/autoApprovalReview/started",
    "item/autoApprovalReview/completed",
    "hook/started",
    "hook/completed",
    "rawResponseItem/completed",
    "rawResponse/completed",
    "model/safetyBuffering/updated",
    "skills/changed",
    // Codex 0.169 also sends these, none of which an ACP update could say: read markers,
    // its own input queue, predictions, projects, environments, attachments, sections, file
    // watching, what acplb (or another client) did to a thread, processes and searches acplb
    // never starts, realtime audio, Windows setup. `thread/closed` is not here: acplb closes
    // no thread, so one closed is worth a warning.
    "thread/readState/changed",
    "thread/queue/changed",
    "thread/prediction/updated",
    "thread/section/changed",
    "thread/attachment/updated",
    "thread/archived",
    "thread/unarchived",
    "thread/deleted",
    "thread/reverted",
    "project/changed",
    "thread/project/updated",
    "thread/environment/connected",
    "thread/environment/disconnected",
    "autoApprovalReview/strictReviewRequired",
    "command/exec/outputDelta",
    "process/outputDelta",
    "process/exited",
    "mcpServer/event/stream/notification",
    "account/gatewayOAuth/changed",
    "app/list/updated",
    "externalAgentConfig/import/progress",
    "externalAgentConfig/import/completed",
    "fs/changed",
    "model/verification",
    "modelProvider/authRecoveryStarted",
    "modelProvider/authRecoveryCompleted",
    "fuzzyFileSearch/sessionUpdated",
    "fuzzyFileSearch/sessionCompleted",
    "thread/realtime/started",
    "thread/realtime/itemAdded",
    "thread/realtime/item/started",
    "thread/realtime/item/transcript/delta",
    "thread/realtime/item/completed",
    "thread/realtime/transcript/delta",
    "thread/realtime/transcript/done",
    "thread/realtime/outputAudio/delta",
    "thread/realtime/sdp",
    "thread/realtime/error",
    "thread/realtime/closed",
    "windows/worldWritableWarning",
    "windowsSandbox/setupCompleted",
];
