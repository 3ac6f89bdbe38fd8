//! Which tool wrote a transcript, from its first records.

use serde_json::{Map, Value};

use super::records::{parse_object, str_field};
use super::ImportError;

/// The transcript formats clawctx reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// pi-coding-agent / OpenClaw: a `{"type":"session",…}` header, then entries.
    #[default]
    Pi,
    /// Claude Code: `user`/`assistant`/`summary`/`system`/… lines.
    ClaudeCode,
    /// OpenAI Codex CLI: `{"timestamp","type","payload"}` rollout lines.
    Codex,
}

impl Format {
    /// The name used by the Python API and the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Pi => "pi",
            Format::ClaudeCode => "claude-code",
            Format::Codex => "codex",
        }
    }

    pub fn parse(name: &str) -> Option<Format> {
        match name {
            "pi" => Some(Format::Pi),
            "claude-code" => Some(Format::ClaudeCode),
            "codex" => Some(Format::Codex),
            _ => None,
        }
    }
}

/// Records looked at before giving up: a real file's first recognisable record comes within
/// the first few lines; a long run of unknown objects means another format.
const MAX_RECORDS: usize = 64;

/// `RolloutItem` tags (openai/codex `codex-rs/protocol/src/protocol.rs`).
const CODEX_TYPES: &[&str] = &[
    "session_meta",
    "response_item",
    "compacted",
    "turn_context",
    "event_msg",
];

/// Claude Code line types, message and non-message (see the README's mapping section).
const CLAUDE_TYPES: &[&str] = &[
    "user",
    "assistant",
    "summary",
    "system",
    "file-history-snapshot",
    "queue-operation",
    "progress",
    "attachment",
    "ai-title",
    "last-prompt",
    "permission-mode",
    "custom-title",
];

fn classify(record: &Map<String, Value>) -> Option<Format> {
    let kind = str_field(record, "type")?;
    if kind == "session" && record.contains_key("id") {
        return Some(Format::Pi);
    }
    if CODEX_TYPES.contains(&kind) && record.contains_key("payload") {
        return Some(Format::Codex);
    }
    let claude_fields = ["uuid", "parentUuid", "sessionId", "leafUuid", "messageId"]
        .iter()
        .any(|k| record.contains_key(*k));
    if CLAUDE_TYPES.contains(&kind) && (claude_fields || kind == "summary") {
        return Some(Format::ClaudeCode);
    }
    None
}

/// The format of a transcript, from the first of its first records that only one format
/// writes. Damaged lines are skipped. An empty or blank file is Claude Code's: of the three tools only Claude Code leaves message-less
/// files behind (pi writes its header together with the first message, Codex starts with its
/// `session_meta` line), and it imports as an empty transcript.
pub fn detect_format(bytes: &[u8]) -> Result<Format, ImportError> {
    let (mut seen, mut damaged) = (0usize, 0usize);
    for line in bytes.split(|&b| b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let Some(record) = parse_object(line) else {
            damaged += 1;
            if damaged >= MAX_RECORDS {
                break;
            }
            continue;
        };
        if let Some(format) = classify(&record) {
            return Ok(format);
        }
        seen += 1;
        if seen >= MAX_RECORDS {
            break;
        }
    }
    if seen == 0 && damaged == 0 {
        return Ok(Format::ClaudeCode);
    }
    let reason = if seen == 0 {
        "no line is a JSON object".to_owned()
    } else {
        format!("none of the first {seen} records is a pi header, a Codex rollout line or a Claude Code line")
    };
    Err(ImportError::UnknownFormat { reason })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detect(text: &str) -> Format {
        detect_format(text.as_bytes()).unwrap()
    }

    #[test]
    fn each_format_by_its_first_record() {
        assert_eq!(
            detect(r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}"#),
            Format::Pi
        );
        assert_eq!(
            detect(r#"{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}"#),
            Format::Codex
        );
        assert_eq!(
            detect(r#"{"parentUuid":null,"type":"user","uuid":"u","message":{}}"#),
            Format::ClaudeCode
        );
    }

    #[test]
    fn message_less_claude_files_are_claude() {
        assert_eq!(detect(""), Format::ClaudeCode);
        assert_eq!(detect("\n \n"), Format::ClaudeCode);
        assert_eq!(
            detect(r#"{"type":"summary","summary":"Title","leafUuid":"u"}"#),
            Format::ClaudeCode
        );
        assert_eq!(
            detect(
                r#"{"type":"file-history-snapshot","messageId":"m","snapshot":{},"isSnapshotUpdate":false}"#
            ),
            Format::ClaudeCode
        );
        // A damaged first line is skipped, the next record decides.
        assert_eq!(
            detect(
                "{\"type\":\"sess\n{\"timestamp\":\"t\",\"type\":\"event_msg\",\"payload\":{}}\n"
            ),
            Format::Codex
        );
    }

    #[test]
    fn unknown_objects_are_an_error_not_a_guess() {
        let err = detect_format(b"{\"hello\":1}\n{\"type\":\"message\"}\n").unwrap_err();
        assert!(matches!(err, ImportError::UnknownFormat { .. }), "{err}");
        // Binary data, a JSON array, a lone torn line: not an empty file either.
        for bytes in [
            &b"\x00\x01\xff"[..],
            b"[{\"type\":\"session\"}]\n",
            b"{\"type\":\"us",
        ] {
            assert!(detect_format(bytes).is_err());
        }
    }

    #[test]
    fn names_round_trip() {
        for f in [Format::Pi, Format::ClaudeCode, Format::Codex] {
            assert_eq!(Format::parse(f.as_str()), Some(f));
        }
        assert_eq!(Format::parse("auto"), None);
    }
}
