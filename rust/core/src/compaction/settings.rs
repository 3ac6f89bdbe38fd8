//! Compaction settings and the trigger (pi-mono 0.58.3
//! `packages/coding-agent/src/core/compaction/compaction.ts`: `DEFAULT_COMPACTION_SETTINGS`,
//! `shouldCompact`).

use serde_json::{json, Value};

use crate::base::{Error, Result};

/// pi's `DEFAULT_COMPACTION_SETTINGS.reserveTokens`.
pub const DEFAULT_RESERVE_TOKENS: u64 = 16384;
/// pi's `DEFAULT_COMPACTION_SETTINGS.keepRecentTokens`.
pub const DEFAULT_KEEP_RECENT_TOKENS: u64 = 20000;
/// OpenClaw's `DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR`.
pub const DEFAULT_RESERVE_TOKENS_FLOOR: u64 = 20000;

/// pi's `CompactionSettings` (`DEFAULT_COMPACTION_SETTINGS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionSettings {
    pub enabled: bool,
    /// Tokens kept free for the model's answer (and the summary budget). Signed: pi-mono
    /// 0.58.3 `compaction.ts` (`shouldCompact`) computes with any number, a negative one too.
    pub reserve_tokens: i64,
    /// Tokens of recent messages kept verbatim.
    pub keep_recent_tokens: u64,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        CompactionSettings {
            enabled: true,
            reserve_tokens: DEFAULT_RESERVE_TOKENS as i64,
            keep_recent_tokens: DEFAULT_KEEP_RECENT_TOKENS,
        }
    }
}

impl CompactionSettings {
    /// OpenClaw's `ensurePiCompactionReserveTokens`: `reserve_tokens` raised to at least
    /// `floor` (a larger value is kept).
    pub fn with_reserve_floor(self, floor: u64) -> Self {
        CompactionSettings {
            reserve_tokens: self
                .reserve_tokens
                .max(i64::try_from(floor).unwrap_or(i64::MAX)),
            ..self
        }
    }

    /// `maxTokens` of the history summary: `floor(0.8 × reserveTokens)` (`generateSummary`).
    pub fn summary_max_tokens(&self) -> u64 {
        (0.8 * self.reserve_tokens as f64).floor() as u64
    }

    /// `maxTokens` of the turn-prefix summary: `floor(0.5 × reserveTokens)`.
    pub fn turn_prefix_max_tokens(&self) -> u64 {
        (0.5 * self.reserve_tokens as f64).floor() as u64
    }

    /// The settings in pi's camelCase shape.
    pub fn to_value(&self) -> Value {
        json!({
            "enabled": self.enabled,
            "reserveTokens": self.reserve_tokens,
            "keepRecentTokens": self.keep_recent_tokens,
        })
    }

    /// Settings from pi's shape (`enabled`, `reserveTokens`, `keepRecentTokens`; missing keys
    /// take the defaults) or OpenClaw's `agents.defaults.compaction`, whose
    /// `reserveTokensFloor` is applied when present. Other keys are ignored, so a whole
    /// OpenClaw compaction config can be passed.
    pub fn from_value(value: &Value) -> Result<Self> {
        let Some(map) = value.as_object() else {
            return Err(Error::InvalidArgument(
                "compaction settings must be an object".into(),
            ));
        };
        let count = |key: &str, default: u64| -> Result<u64> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(default),
                Some(v) => v.as_u64().ok_or_else(|| {
                    Error::InvalidArgument(format!("{key} must be a non-negative integer"))
                }),
            }
        };
        let enabled = match map.get("enabled") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(Error::InvalidArgument("enabled must be a boolean".into())),
        };
        let settings = CompactionSettings {
            enabled,
            reserve_tokens: match map.get("reserveTokens") {
                None | Some(Value::Null) => DEFAULT_RESERVE_TOKENS as i64,
                Some(v) => v.as_i64().ok_or_else(|| {
                    Error::InvalidArgument("reserveTokens must be an integer".into())
                })?,
            },
            keep_recent_tokens: count("keepRecentTokens", DEFAULT_KEEP_RECENT_TOKENS)?,
        };
        Ok(match map.get("reserveTokensFloor") {
            None | Some(Value::Null) => settings,
            Some(_) => settings.with_reserve_floor(count("reserveTokensFloor", 0)?),
        })
    }
}

/// `shouldCompact`: enabled and `context_tokens > context_window − reserve`
/// (strictly greater).
pub fn should_compact(
    context_tokens: f64,
    context_window: f64,
    settings: &CompactionSettings,
) -> bool {
    settings.enabled && context_tokens > context_window - settings.reserve_tokens as f64
}
