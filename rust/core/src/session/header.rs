//! The session header (the first record of a file): pi's `SessionHeader` and
//! `CURRENT_SESSION_VERSION` (pi-mono 0.58.3 `packages/coding-agent/src/core/session-manager.ts`).
//! Below both [`super::manager`] and the tail reader, which checks a header's version.

use serde_json::{Map, Value};

use super::entry::{types, Entry};
use crate::base::{ms_to_iso, to_js_string, JsonText};

/// pi's `CURRENT_SESSION_VERSION`.
pub const CURRENT_SESSION_VERSION: u64 = 3;

/// The session header (first record).
#[derive(Debug, Clone)]
pub struct Header {
    pub text: JsonText,
    pub fields: Map<String, Value>,
    pub line: usize,
    pub modified: bool,
}

impl Header {
    pub(super) fn from_fields(fields: Map<String, Value>, line: usize, modified: bool) -> Header {
        let text = JsonText::owned(to_js_string(&Value::Object(fields.clone())));
        Header {
            text,
            fields,
            line,
            modified,
        }
    }

    /// The header as read from the file.
    pub(crate) fn from_record(record: Entry) -> Header {
        Header {
            fields: record.fields().cloned().unwrap_or_default(),
            text: record.text,
            line: record.line,
            modified: false,
        }
    }

    pub fn id(&self) -> Option<&str> {
        self.fields.get("id").and_then(Value::as_str)
    }

    /// `header.version ?? 1` as a number (absent or non-numeric ⇒ 1).
    pub fn version(&self) -> u64 {
        match self.fields.get("version") {
            Some(Value::Number(n)) => n
                .as_u64()
                .or_else(|| n.as_f64().map(|f| f.max(0.0) as u64))
                .unwrap_or(1),
            Some(Value::String(s)) => s.trim().parse().unwrap_or(1),
            _ => 1,
        }
    }
}

/// A new header, with pi's key order (`SessionManager.newSession`).
pub fn new_header_fields(
    session_id: &str,
    now_ms: i64,
    cwd: &str,
    parent_session: Option<&str>,
) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("type".into(), types::SESSION.into());
    map.insert("version".into(), CURRENT_SESSION_VERSION.into());
    map.insert("id".into(), session_id.into());
    map.insert("timestamp".into(), ms_to_iso(now_ms).into());
    map.insert("cwd".into(), cwd.into());
    if let Some(parent) = parent_session {
        map.insert("parentSession".into(), parent.into());
    }
    map
}
