//! The models and reasoning efforts offered in the editor's pickers.
//!
//! These are the user-visible entries of the model catalog bundled with Codex 0.169.0
//! (`codex debug models`), so `session/new` can answer without starting Codex. "Default"
//! (Codex's own configuration) is always offered first, so a newer Codex with other models
//! still works: the user's `config.toml` or `-c model=...` decides.

use acplb_core::session::options::OptionCatalog;

/// The catalog of the pinned Codex version.
pub fn default_catalog() -> OptionCatalog {
    let models = [
        ("gpt-5.5", "GPT-5.5"),
        ("gpt-5.6-sol", "GPT-5.6 Sol"),
        ("gpt-5.6-terra", "GPT-5.6 Terra"),
        ("gpt-5.6-luna", "GPT-5.6 Luna"),
        ("gpt-6-sol", "GPT-6 Sol"),
        ("gpt-6-luna", "GPT-6 Luna"),
        ("gpt-6-astra", "GPT-6 Astra"),
        ("gpt-6.1-sol", "GPT-6.1 Sol"),
        ("gpt-6.1-terra", "GPT-6.1 Terra"),
    ];
    OptionCatalog {
        models: models
            .iter()
            .map(|(s, n)| ((*s).to_owned(), (*n).to_owned()))
            .collect(),
        efforts: ["low", "medium", "high", "xhigh"]
            .iter()
            .map(|e| (*e).to_owned())
            .collect(),
    }
}
