//! ACP session modes and what each allows: the permission mapper between the editor's modes
//! and a provider's sandbox.

use std::fmt;

/// A session mode as the editor sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// The agent may read anything but write nothing; commands run in a read-only sandbox,
    /// and it asks before anything more.
    #[default]
    ReadOnly,
    /// The agent may edit the workspace and run commands in a workspace-write sandbox, and asks
    /// before anything more.
    Auto,
    /// No sandbox at all.
    FullAccess,
    /// The agent plans and asks questions but edits nothing: a read-only sandbox, and nothing
    /// beyond it (it never asks to do more). Leaving it for another mode carries the plan out.
    /// Offered only by providers that can plan ([`crate::session::options::OptionCatalog`]).
    Plan,
}

/// When the agent asks the editor before it acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    /// Before anything its sandbox does not allow (an edit in read-only, a command that needs
    /// more than the sandbox, an MCP tool that wants approval).
    OnRequest,
    /// Never: what the sandbox refuses fails.
    Never,
}

/// The sandbox a mode maps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sandbox {
    /// Read-only file system.
    ReadOnly,
    /// Writes allowed inside the workspace; `network` says whether commands may use the network.
    WorkspaceWrite {
        /// Network access for sandboxed commands.
        network: bool,
    },
    /// No sandbox.
    None,
}

impl Mode {
    /// Every mode, in the order editors show them.
    pub const ALL: [Mode; 4] = [Mode::ReadOnly, Mode::Auto, Mode::FullAccess, Mode::Plan];

    /// The ACP mode id.
    pub fn id(self) -> &'static str {
        match self {
            Mode::ReadOnly => "read-only",
            Mode::Auto => "auto",
            Mode::FullAccess => "full-access",
            Mode::Plan => "plan",
        }
    }

    /// Parses an ACP mode id.
    pub fn from_id(id: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.id() == id)
    }

    /// A short name for the mode picker.
    pub fn name(self) -> &'static str {
        match self {
            Mode::ReadOnly => "Read Only",
            Mode::Auto => "Auto",
            Mode::FullAccess => "Full Access",
            Mode::Plan => "Plan",
        }
    }

    /// One sentence for the mode picker; `agent` names the agent ("Codex"), and `asks` says
    /// whether the provider can ask the editor before it acts.
    pub fn description(self, agent: &str, asks: bool) -> String {
        match (self, asks) {
            (Mode::ReadOnly, true) => {
                format!(
                    "{agent} reads files and runs read-only commands; it asks before edits and anything else."
                )
            }
            (Mode::ReadOnly, false) => {
                format!("{agent} can read files and run read-only commands; it cannot edit.")
            }
            (Mode::Auto, true) => format!(
                "{agent} edits files and runs commands inside the workspace sandbox; it asks before anything outside it."
            ),
            (Mode::Auto, false) => {
                format!("{agent} can edit files and run commands inside the workspace sandbox.")
            }
            (Mode::FullAccess, _) => {
                format!(
                    "{agent} runs without a sandbox and never asks: it can edit anything and use the network."
                )
            }
            (Mode::Plan, _) => format!(
                "{agent} plans and asks you questions but edits nothing; switch to another mode to carry the plan out."
            ),
        }
    }

    /// When the agent asks before it acts, in this mode.
    pub fn approval(self) -> Approval {
        match self {
            Mode::ReadOnly | Mode::Auto => Approval::OnRequest,
            Mode::FullAccess | Mode::Plan => Approval::Never,
        }
    }

    /// The sandbox this mode runs under.
    pub fn sandbox(self, network_access: bool) -> Sandbox {
        match self {
            Mode::ReadOnly | Mode::Plan => Sandbox::ReadOnly,
            Mode::Auto => Sandbox::WorkspaceWrite {
                network: network_access,
            },
            Mode::FullAccess => Sandbox::None,
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_unknown_is_none() {
        for m in Mode::ALL {
            assert_eq!(Mode::from_id(m.id()), Some(m));
        }
        assert_eq!(Mode::from_id("yolo"), None);
    }

    #[test]
    fn network_only_matters_in_auto() {
        assert_eq!(Mode::ReadOnly.sandbox(true), Sandbox::ReadOnly);
        assert_eq!(
            Mode::Auto.sandbox(true),
            Sandbox::WorkspaceWrite { network: true }
        );
        assert_eq!(Mode::FullAccess.sandbox(false), Sandbox::None);
        assert_eq!(Mode::Plan.sandbox(true), Sandbox::ReadOnly);
        assert_eq!(Mode::Plan.approval(), Approval::Never);
    }
}
