//! Token totals as Codex reports them, and the per-turn difference the runtime needs.

use acplb_core::provider::TurnUsage;
use serde::Serialize;

use crate::items::Usage;

/// Token counts as `turn.completed` reports them: cumulative for the whole thread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    /// Input tokens, cached ones included.
    pub input_tokens: u64,
    /// Cached input tokens.
    pub cached_input_tokens: u64,
    /// Input tokens written to the cache.
    pub cache_write_input_tokens: u64,
    /// Output tokens, reasoning included.
    pub output_tokens: u64,
    /// Reasoning output tokens.
    pub reasoning_output_tokens: u64,
}

impl From<Usage> for Totals {
    fn from(usage: Usage) -> Self {
        Self {
            input_tokens: usage.input_tokens,
            cached_input_tokens: usage.cached_input_tokens,
            cache_write_input_tokens: usage.cache_write_input_tokens,
            output_tokens: usage.output_tokens,
            reasoning_output_tokens: usage.reasoning_output_tokens,
        }
    }
}

/// The usage of one turn: `now` minus the thread's totals before the turn (`prev`).
///
/// Saturating, so a thread whose totals went backwards (a fresh thread, a reset) never yields
/// a negative count.
pub fn turn_delta(prev: &Totals, now: &Totals) -> TurnUsage {
    TurnUsage {
        input_tokens: now.input_tokens.saturating_sub(prev.input_tokens),
        cached_input_tokens: now.cached_input_tokens.saturating_sub(prev.cached_input_tokens),
        output_tokens: now.output_tokens.saturating_sub(prev.output_tokens),
        reasoning_output_tokens: now
            .reasoning_output_tokens
            .saturating_sub(prev.reasoning_output_tokens),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn totals(input: u64, cached: u64, output: u64, reasoning: u64) -> Totals {
        Totals {
            input_tokens: input,
            cached_input_tokens: cached,
            cache_write_input_tokens: 0,
            output_tokens: output,
            reasoning_output_tokens: reasoning,
        }
    }

    #[test]
    fn delta_of_resumed_turns() {
        // f-resume-turn2 → f-resume-turn3-last: 2400/400/96/32 → 3600/600/144/48.
        let delta = turn_delta(&totals(2400, 400, 96, 32), &totals(3600, 600, 144, 48));
        assert_eq!(
            delta,
            TurnUsage {
                input_tokens: 1200,
                cached_input_tokens: 200,
                output_tokens: 48,
                reasoning_output_tokens: 16
            }
        );
    }

    #[test]
    fn first_turn_is_its_own_total() {
        let now = totals(1200, 200, 48, 16);
        assert_eq!(turn_delta(&Totals::default(), &now).input_tokens, 1200);
    }

    #[test]
    fn delta_saturates() {
        let delta = turn_delta(&totals(5000, 900, 300, 100), &totals(1200, 200, 48, 16));
        assert_eq!(delta, TurnUsage::default());
    }
}
