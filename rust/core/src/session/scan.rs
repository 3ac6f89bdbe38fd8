//! Opening, checking and summarizing many session files in parallel (rayon).

use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;

use rayon::prelude::*;

use super::context::{build_session_context, LeafSelector};
use super::entry::types;
use super::manager::{OpenOptions, Session};
use crate::base::RandomIds;

/// A session file at a glance.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionSummary {
    pub path: PathBuf,
    /// `None` when the file could be read as a session; otherwise why not.
    pub error: Option<String>,
    pub size_bytes: u64,
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    pub created: Option<String>,
    pub name: Option<String>,
    pub file_version: u64,
    pub migration_needed: bool,
    pub entries: usize,
    pub messages: usize,
    pub skipped_lines: usize,
    pub leaf_id: Option<String>,
    pub context_messages: usize,
    /// pi's chars/4 estimate of the leaf context.
    pub estimated_tokens: u64,
}

/// Opens one file read-only and summarizes it; errors become the summary's `error`.
pub fn summarize_session(path: &Path) -> SessionSummary {
    let size_bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let options = OpenOptions {
        read_only: true,
        ..Default::default()
    };
    let session = match Session::open(path, &options, &mut RandomIds, 0) {
        Ok(session) => session,
        Err(err) => {
            return SessionSummary {
                path: path.to_path_buf(),
                error: Some(err.to_string()),
                size_bytes,
                ..Default::default()
            }
        }
    };
    let header = &session.header().fields;
    let text = |key: &str| {
        header
            .get(key)
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    let selector = session
        .leaf_index()
        .map_or(LeafSelector::Null, LeafSelector::Index);
    let context = build_session_context(session.entries(), session.id_index(), selector);
    SessionSummary {
        path: path.to_path_buf(),
        error: None,
        size_bytes,
        session_id: session.session_id().map(str::to_owned),
        cwd: text("cwd"),
        created: text("timestamp"),
        name: session.session_name(),
        file_version: session.file_version(),
        migration_needed: session.needs_migration_rewrite(),
        entries: session.entries().len(),
        messages: session
            .entries()
            .iter()
            .filter(|e| e.is_type(types::MESSAGE))
            .count(),
        skipped_lines: session.skipped_lines().len(),
        leaf_id: session.leaf_id().map(str::to_owned),
        context_messages: context.messages.len(),
        estimated_tokens: context
            .messages
            .messages()
            .iter()
            .map(|m| m.facts().pi_tokens())
            .sum(),
    }
}

/// Summarizes `paths` on `workers` threads (default: one per core), in input order. Each
/// finished file sends its position on `progress`, if given.
pub fn scan_sessions(
    paths: &[PathBuf],
    workers: Option<usize>,
    progress: Option<Sender<usize>>,
) -> Vec<SessionSummary> {
    let run = || {
        paths
            .par_iter()
            .enumerate()
            .map_with(progress.clone(), |progress, (i, path)| {
                let summary = summarize_session(path);
                if let Some(tx) = progress {
                    let _ = tx.send(i);
                }
                summary
            })
            .collect()
    };
    match workers.map(|n| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()
    }) {
        Some(Ok(pool)) => pool.install(run),
        _ => run(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_keep_order_and_report_errors() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.jsonl");
        std::fs::write(
            &good,
            concat!(
                r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
                r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1}}"#, "\n",
                "garbage\n",
            ),
        )
        .unwrap();
        let bad = dir.path().join("bad.jsonl");
        std::fs::write(&bad, "not a session\n").unwrap();
        let missing = dir.path().join("missing.jsonl");
        let (tx, rx) = std::sync::mpsc::channel();
        let out = scan_sessions(&[good.clone(), bad, missing], Some(2), Some(tx));
        assert_eq!(out.len(), 3);
        assert_eq!(out[0].path, good);
        assert_eq!(
            (
                out[0].session_id.as_deref(),
                out[0].entries,
                out[0].skipped_lines
            ),
            (Some("s1"), 1, 1)
        );
        assert_eq!((out[0].context_messages, out[0].estimated_tokens), (1, 2));
        assert!(out[1]
            .error
            .as_deref()
            .is_some_and(|e| e.contains("no valid JSON record")));
        assert!(out[2].error.is_some());
        let mut done: Vec<usize> = rx.iter().collect();
        done.sort();
        assert_eq!(done, vec![0, 1, 2]);
    }
}
