//! What a provider recommends among the model and effort options (Codex: `model/list`'s
//! default model and each model's default effort), and the clients shown it: a `JetBrains` AIR
//! client that declared `recommendedValue`, in the options' `_meta.jetbrains.air.recommendedValue`
//! as the TS peer sends it (ADR 0049).

use super::options::OptionCatalog;
use crate::provider::SessionSettings;

/// The values a provider recommends (Codex: `model/list`'s default model and each model's
/// default reasoning effort).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recommended {
    /// The model the provider recommends.
    pub model: Option<String>,
    /// `(model slug, effort)`: the effort each model recommends.
    pub efforts: Vec<(String, String)>,
}

/// The AIR capability under which a client asks for recommended values.
pub const AIR_RECOMMENDED_VALUE: &str = "recommendedValue";

/// Whether a client is shown the values the provider recommends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Recommendations {
    /// Not shown.
    #[default]
    Hidden,
    /// In the model and effort options' `_meta.jetbrains.air.recommendedValue`, as the TS peer
    /// sends it: a `JetBrains` AIR client that declared `recommendedValue`.
    Air,
}

impl Recommendations {
    /// `Air` for an AIR client that declared `recommendedValue`.
    pub fn for_client(client: &agent_client_protocol::v1::schema::ClientCapabilities) -> Self {
        match crate::capabilities::air(client) {
            Some(air) if air.declares(AIR_RECOMMENDED_VALUE) => Self::Air,
            _ => Self::Hidden,
        }
    }
}

impl OptionCatalog {
    /// `_meta.jetbrains.air.recommendedValue` of `value`, for a client that asked for it.
    pub(super) fn recommend(
        &self,
        value: Option<&str>,
    ) -> Option<serde_json::Map<String, serde_json::Value>> {
        let value = value.filter(|_| self.recommendations == Recommendations::Air)?;
        Some(crate::capabilities::air_meta(AIR_RECOMMENDED_VALUE, value.into()))
    }

    /// The recommended model, if the picker offers it.
    pub(super) fn recommended_model(&self) -> Option<&str> {
        let model = self.recommended.model.as_deref()?;
        let offered =
            self.models.iter().any(|(slug, _)| slug == model) || self.default_model.as_deref() == Some(model);
        offered.then_some(model)
    }

    /// The effort the model `settings` run on recommends, if the picker offers it.
    pub(super) fn recommended_effort(&self, settings: &SessionSettings) -> Option<&str> {
        let model = settings.model.as_deref().or(self.default_model.as_deref())?;
        let (_, effort) = self.recommended.efforts.iter().find(|(slug, _)| slug == model)?;
        self.efforts_of(settings)
            .iter()
            .any(|e| e == effort)
            .then_some(effort.as_str())
    }
}
