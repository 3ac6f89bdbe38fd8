//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

use serde_json::{json, Value};

/// `../shared/fixtures/pi/<name>` relative to the workspace, if present.
pub fn pi_fixture(name: &str) -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/fixtures/pi")
        .join(name);
    if path.is_file() {
        Some(path)
    } else {
        eprintln!(
            "skipping: {} not found (the shared fixtures live beside the repository in CI)",
            path.display()
        );
        None
    }
}

pub fn header() -> Value {
    json!({"type":"session","version":3,"id":"sess","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"})
}

pub fn msg(id: &str, parent: Option<&str>, role: &str, text: &str) -> Value {
    let mut message =
        json!({"role": role, "content": [{"type":"text","text":text}], "timestamp": 1});
    if role == "assistant" {
        message["provider"] = json!("anthropic");
        message["model"] = json!("claude-test");
        message["stopReason"] = json!("stop");
    }
    json!({"type":"message","id":id,"parentId":parent,"timestamp":"2026-01-01T00:00:01.000Z","message":message})
}

pub fn to_lines(values: &[Value]) -> String {
    values
        .iter()
        .map(|v| format!("{}\n", clawctx_core::base::to_js_string(v)))
        .collect()
}
