//! Summarizing many session files in parallel (rayon), streamed in constant memory.
//!
//! A summary has two halves. The format facts are what only the file format knows (entries,
//! damaged lines, compactions, branches, the model, the last activity); [`summarize_transcript`]
//! computes everything else from the transcript the format yields (tokens by role, tool calls
//! and results, pairing), so another format only has to fill the format facts of a
//! [`SessionSummary`] and produce a pi-shaped transcript. [`source_facts`] fills them for a pi
//! session, [`foreign_source_facts`]
//! for a Claude Code session or a Codex rollout (read by the `foreign` stage).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, Sender, SyncSender};
use std::sync::{Arc, Condvar, Mutex};

use rayon::prelude::*;

use super::context::{build_session_context, LeafSelector};
use super::entry::{types, Entry};
use super::manager::{OpenOptions, Session};
use crate::base::{iso_to_ms, RandomIds, Result};
use crate::foreign::{detect_format, import_bytes, Format, ImportedTranscript};
use crate::transcript::{estimate_context_tokens, repair_tool_pairing, PairingOptions, Transcript};

/// The `format` of a pi / OpenClaw session file.
pub const PI_FORMAT: &str = "pi";

crate::base::python_class! {
    (name = "SessionSummary", module = "clawctx._core.session", get_all)
    /// One session file at a glance (see `scan_sessions`).
    // Its Python methods are in `scan_py.rs`.
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct SessionSummary {
        /// The file scanned.
        pub path: PathBuf,
        /// `None` when the file is a usable session; otherwise why not.
        pub error: Option<String>,
        /// `"pi"`, `"claude-code"` or `"codex"`; `None` when the file could not be read.
        pub format: Option<String>,
        /// The file's size in bytes.
        pub size_bytes: u64,
        /// The header's session `id`.
        pub session_id: Option<String>,
        /// The header's `cwd`.
        pub cwd: Option<String>,
        /// The header's `timestamp` (when the session was created).
        pub created: Option<String>,
        /// The latest `session_info` name, if any.
        pub name: Option<String>,
        /// The header's format `version` (pi-mono 0.58.3 `session-manager.ts`).
        pub file_version: u64,
        /// Whether `Session.open` would migrate the file to the current version.
        pub migration_needed: bool,
        /// Entries in the file (the header excluded).
        pub entries: usize,
        /// `message` entries in the file, on every branch.
        pub messages: usize,
        /// The same as `damaged_lines` (its name before the scan records grew).
        pub skipped_lines: usize,
        /// Lines that are not a usable JSON entry (skipped when the session is read).
        pub damaged_lines: usize,
        /// `compaction` entries in the file.
        pub compactions: usize,
        /// Entries with more than one child (where the tree branches).
        pub branches: usize,
        /// The id of the last entry, where the next one would be appended.
        pub leaf_id: Option<String>,
        /// The last model on the leaf's path, as `provider/modelId`.
        pub model: Option<String>,
        /// The timestamp of the last entry.
        pub last_activity: Option<String>,
        /// `last_activity` in milliseconds since the Unix epoch, when it parses.
        pub last_activity_ms: Option<i64>,
        /// Messages of the leaf's context (what the next request would send).
        pub context_messages: usize,
        /// pi's chars/4 estimate of the leaf context (split by role in the `*_tokens` fields).
        pub estimated_tokens: u64,
        /// The user messages' share of `estimated_tokens`.
        pub user_tokens: u64,
        /// The assistant messages' share of `estimated_tokens`.
        pub assistant_tokens: u64,
        /// The tool results' share of `estimated_tokens`.
        pub tool_result_tokens: u64,
        /// Every other role's share of `estimated_tokens` (summaries, bash executions, custom
        /// messages).
        pub other_tokens: u64,
        /// pi's `estimateContextTokens`: the last recorded usage plus the estimate after it.
        pub context_tokens: u64,
        /// Tool calls (with an id) of the context's assistants.
        pub tool_calls: usize,
        /// Tool results in the leaf's context.
        pub tool_results: usize,
        /// Calls pairing repair would answer with a synthetic result (OpenClaw 2026.3.13
        /// `src/agents/session-transcript-repair.ts`).
        pub unpaired_tool_calls: usize,
        /// Tool results pairing repair would drop (orphans and duplicates).
        pub unpaired_tool_results: usize,
    }
}

/// [`SessionSummary`]'s field names in declaration order: Python's `SessionSummary.fields`, the
/// order of `to_dict()` and of the scan tables (checked against the struct by a test).
pub const SESSION_SUMMARY_FIELDS: &[&str] = &[
    "path",
    "error",
    "format",
    "size_bytes",
    "session_id",
    "cwd",
    "created",
    "name",
    "file_version",
    "migration_needed",
    "entries",
    "messages",
    "skipped_lines",
    "damaged_lines",
    "compactions",
    "branches",
    "leaf_id",
    "model",
    "last_activity",
    "last_activity_ms",
    "context_messages",
    "estimated_tokens",
    "user_tokens",
    "assistant_tokens",
    "tool_result_tokens",
    "other_tokens",
    "context_tokens",
    "tool_calls",
    "tool_results",
    "unpaired_tool_calls",
    "unpaired_tool_results",
];

/// The summary of a session whose format facts are filled in `facts` (what [`source_facts`] or
/// [`foreign_source_facts`] gives: `format`, `session_id`, `cwd`, `created`, `name`,
/// `file_version`, `migration_needed`, `entries`, `messages`, `damaged_lines`, `compactions`,
/// `branches`, `leaf_id`, `model`, `last_activity`; every other field at its default) and whose
/// context is `transcript`.
pub fn summarize_transcript(
    path: PathBuf,
    size_bytes: u64,
    facts: SessionSummary,
    transcript: &Transcript,
) -> SessionSummary {
    let mut s = SessionSummary {
        path,
        size_bytes,
        skipped_lines: facts.damaged_lines,
        last_activity_ms: facts.last_activity.as_deref().and_then(iso_to_ms),
        context_messages: transcript.len(),
        ..facts
    };
    for message in transcript.messages() {
        let facts = message.facts();
        let tokens = facts.pi_tokens();
        s.estimated_tokens += tokens;
        match facts.role.as_deref() {
            Some("user") => s.user_tokens += tokens,
            Some("assistant") => {
                s.assistant_tokens += tokens;
                s.tool_calls += facts.tool_calls.len();
            }
            Some("toolResult") => {
                s.tool_result_tokens += tokens;
                s.tool_results += 1;
            }
            _ => s.other_tokens += tokens,
        }
    }
    s.context_tokens = estimate_context_tokens(transcript).tokens;
    let pairing = repair_tool_pairing(transcript, &PairingOptions::default());
    s.unpaired_tool_calls = pairing.added.len();
    s.unpaired_tool_results = pairing.dropped_orphan_count + pairing.dropped_duplicate_count;
    s
}

/// The format facts of an opened pi session (see [`summarize_transcript`]).
pub fn source_facts(session: &Session) -> SessionSummary {
    let header = &session.header().fields;
    let text = |key: &str| {
        header
            .get(key)
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    // Held entries: inert runs have no parent, no id, no type and no timestamp, so they count
    // only as records and as branch ends (nothing can be their child).
    let entries = session.stored_entries();
    let mut has_child = vec![false; entries.len()];
    for entry in entries {
        let parent = entry
            .parent_id
            .as_deref()
            .filter(|p| Some(*p) != entry.id.as_deref())
            .and_then(|p| session.index_of(p));
        if let Some(p) = parent {
            has_child[p] = true;
        }
    }
    let model = entries.iter().rev().find_map(|e| {
        if e.is_type(types::MODEL_CHANGE) {
            e.str_field("modelId").map(str::to_owned)
        } else {
            let head = e
                .message()
                .filter(|m| m.role.as_deref() == Some("assistant"))?;
            head.provider_and_model()
                .1
                .and_then(|m| m.as_str().map(str::to_owned))
        }
    });
    let last_activity = entries
        .iter()
        .rev()
        .find_map(Entry::timestamp)
        .or_else(|| text("timestamp"));
    SessionSummary {
        format: Some(PI_FORMAT.to_owned()),
        session_id: session.session_id().map(str::to_owned),
        cwd: text("cwd"),
        created: text("timestamp"),
        name: session.session_name(),
        file_version: session.file_version(),
        migration_needed: session.needs_migration_rewrite(),
        entries: session.record_count(),
        messages: entries.iter().filter(|e| e.is_type(types::MESSAGE)).count(),
        damaged_lines: session.skipped_lines().len(),
        compactions: entries
            .iter()
            .filter(|e| e.is_type(types::COMPACTION))
            .count(),
        branches: entries
            .iter()
            .zip(&has_child)
            .filter(|(_, has)| !**has)
            .map(|(entry, _)| entry.records_held())
            .sum(),
        leaf_id: session.leaf_id().map(str::to_owned),
        model,
        last_activity,
        ..SessionSummary::default()
    }
}

/// The format facts of a Claude Code session or Codex rollout. Such a file has no pi tree:
/// `entries` counts its non-blank lines, `messages` the main thread's messages, and
/// `branches` is 1 plus the places where a Claude Code thread forks (a rewind or an edit).
pub fn foreign_source_facts(imported: &ImportedTranscript) -> SessionSummary {
    SessionSummary {
        format: Some(imported.format.as_str().to_owned()),
        session_id: imported.session_id.clone(),
        cwd: imported.cwd.clone(),
        created: imported.first_timestamp.clone(),
        name: None,
        file_version: 0,
        migration_needed: false,
        entries: imported.lines,
        messages: imported.messages.len(),
        damaged_lines: imported.damaged_lines,
        compactions: imported.compactions,
        branches: usize::from(!imported.messages.is_empty()) + imported.branches,
        leaf_id: None,
        model: imported.model.clone(),
        last_activity: imported.last_timestamp.clone(),
        ..SessionSummary::default()
    }
}

/// The summary of a file that is not a pi session when it is a Claude Code session or a Codex
/// rollout; `None` otherwise (the pi reader's error stands).
fn summarize_foreign(path: &Path, size_bytes: u64, bytes: &[u8]) -> Option<SessionSummary> {
    // An empty or blank file is no evidence of any format: it stays a pi error record.
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    match detect_format(bytes) {
        Ok(Format::ClaudeCode | Format::Codex) => {}
        _ => return None,
    }
    let imported = import_bytes(bytes, None).ok()?;
    let source = foreign_source_facts(&imported);
    Some(summarize_transcript(
        path.to_path_buf(),
        size_bytes,
        source,
        &imported.messages,
    ))
}

/// The summary of an empty (or blank) file: an empty pi session, as pi starts one in such a
/// file; common in `~/.claude/projects`, where a session that never got a message is left
/// empty. It is not an error, so `scan`, `report` and `clawctx.dask` count it the same way.
fn empty_session(path: PathBuf, size_bytes: u64) -> SessionSummary {
    SessionSummary {
        path,
        format: Some(PI_FORMAT.to_owned()),
        size_bytes,
        ..Default::default()
    }
}

fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(u8::is_ascii_whitespace)
}

fn summarize_opened(path: PathBuf, size_bytes: u64, opened: Result<Session>) -> SessionSummary {
    let session = match opened {
        Ok(session) => session,
        Err(err) => {
            return SessionSummary {
                path,
                error: Some(err.to_string()),
                size_bytes,
                ..Default::default()
            }
        }
    };
    let selector = session
        .leaf_index()
        .map_or(LeafSelector::Null, LeafSelector::Index);
    let context = build_session_context(session.stored_entries(), session.id_index(), selector);
    let source = source_facts(&session);
    // The session (its bytes, index and tree) is not needed for the summary: freed before the
    // per-message facts and the pairing check allocate, so the peak is not their sum.
    drop(session);
    summarize_transcript(path, size_bytes, source, &context.messages)
}

/// Opens one file read-only and summarizes it; errors become the summary's `error`.
pub fn summarize_session(path: &Path) -> SessionSummary {
    let size_bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let options = OpenOptions {
        read_only: true,
        ..Default::default()
    };
    let opened = Session::open(path, &options, &mut RandomIds, 0);
    if let Err(crate::base::Error::Format { .. }) = &opened {
        // Not a pi session: a Claude Code session or a Codex rollout is read by `foreign`
        // (only regular files: a FIFO was refused by the open above with another error).
        if let Ok(bytes) = crate::foreign::read_transcript_file(path) {
            if is_blank(&bytes) {
                return empty_session(path.to_path_buf(), size_bytes);
            }
            if let Some(summary) = summarize_foreign(path, size_bytes, &bytes) {
                return summary;
            }
        }
    }
    summarize_opened(path.to_path_buf(), size_bytes, opened)
}

/// Summarizes a session from its bytes (an object store, a file object); `name` becomes the
/// summary's path.
pub fn summarize_session_bytes(bytes: &[u8], name: &Path) -> SessionSummary {
    summarize_session_shared(Arc::from(bytes), name)
}

/// [`summarize_session_bytes`] of a buffer the caller already holds shared (no copy: the
/// parsed entries borrow it), such as the rows of a store joined by [`super::join_lines`].
pub fn summarize_session_shared(bytes: Arc<[u8]>, name: &Path) -> SessionSummary {
    let opened = Session::from_bytes(Arc::clone(&bytes), name, &mut RandomIds);
    let bytes: &[u8] = &bytes;
    if let Err(crate::base::Error::Format { .. }) = &opened {
        if is_blank(bytes) {
            return empty_session(name.to_path_buf(), bytes.len() as u64);
        }
        if let Some(summary) = summarize_foreign(name, bytes.len() as u64, bytes) {
            return summary;
        }
    }
    summarize_opened(name.to_path_buf(), bytes.len() as u64, opened)
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
    match pool(workers) {
        Some(pool) => pool.install(run),
        None => run(),
    }
}

fn pool(workers: Option<usize>) -> Option<rayon::ThreadPool> {
    workers.and_then(|n| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()
            .ok()
    })
}

/// How far the workers may run ahead of the consumer.
struct Gate {
    /// (records the consumer has taken, cancelled)
    state: Mutex<(usize, bool)>,
    moved: Condvar,
}

impl Gate {
    fn release(&self, taken: usize, cancel: bool) {
        if let Ok(mut state) = self.state.lock() {
            state.0 = state.0.max(taken);
            state.1 |= cancel;
        }
        self.moved.notify_all();
    }

    /// Waits until file `i` may start; `false` once the scan is cancelled.
    fn admit(&self, i: usize, window: usize) -> bool {
        let Ok(mut state) = self.state.lock() else {
            return false;
        };
        while !state.1 && i >= state.0 + window {
            state = match self.moved.wait(state) {
                Ok(state) => state,
                Err(_) => return false,
            };
        }
        !state.1
    }
}

/// A scan in progress, yielding `(position, summary)` as files finish (in input order when
/// `ordered`). Files are handed to the workers in input order and at most `window` ahead of
/// the last summary taken, so memory holds the sessions being read plus at most `window`
/// summaries, however many files there are. Dropping the stream stops the scan after the
/// files in flight.
pub struct ScanStream {
    rx: Receiver<(usize, SessionSummary)>,
    gate: Arc<Gate>,
    ordered: bool,
    pending: BTreeMap<usize, SessionSummary>,
    taken: usize,
    total: usize,
}

impl ScanStream {
    pub fn start(paths: Vec<PathBuf>, workers: Option<usize>, ordered: bool) -> ScanStream {
        let threads = workers.unwrap_or_else(rayon::current_num_threads).max(1);
        let window = 4 * threads;
        let total = paths.len();
        let (tx, rx) = sync_channel(window);
        let gate = Arc::new(Gate {
            state: Mutex::new((0, false)),
            moved: Condvar::new(),
        });
        let worker_gate = Arc::clone(&gate);
        std::thread::spawn(move || {
            let run = || produce(&paths, &worker_gate, window, tx);
            match pool(Some(threads)) {
                Some(pool) => pool.install(run),
                None => run(),
            }
        });
        ScanStream {
            rx,
            gate,
            ordered,
            pending: BTreeMap::new(),
            taken: 0,
            total,
        }
    }

    /// The number of files the scan reads.
    pub fn total(&self) -> usize {
        self.total
    }
}

fn produce(paths: &[PathBuf], gate: &Gate, window: usize, tx: SyncSender<(usize, SessionSummary)>) {
    // `par_bridge` pulls from this iterator in order, so the gate bounds how far ahead of
    // the consumer any worker starts.
    let admitted = paths
        .iter()
        .enumerate()
        .take_while(|(i, _)| gate.admit(*i, window));
    let _ = admitted
        .par_bridge()
        .try_for_each_with(tx, |tx, (i, path)| {
            // A send fails only when the consumer is gone: stop.
            tx.send((i, summarize_session(path))).map_err(|_| ())
        });
}

impl Iterator for ScanStream {
    type Item = (usize, SessionSummary);

    fn next(&mut self) -> Option<Self::Item> {
        if self.taken == self.total {
            return None;
        }
        let item = if self.ordered {
            loop {
                if let Some(summary) = self.pending.remove(&self.taken) {
                    break (self.taken, summary);
                }
                let (i, summary) = self.rx.recv().ok()?;
                self.pending.insert(i, summary);
            }
        } else {
            self.rx.recv().ok()?
        };
        self.taken += 1;
        self.gate.release(self.taken, false);
        Some(item)
    }
}

impl Drop for ScanStream {
    fn drop(&mut self) {
        self.gate.release(0, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `SESSION_SUMMARY_FIELDS` names every field once, in the struct's order (read from the
    /// derived `Debug`, which lists them all).
    #[test]
    fn summary_fields_follow_the_struct() {
        let debug = format!("{:?}", SessionSummary::default());
        let names: Vec<&str> = debug
            .split(['{', ','])
            .skip(1)
            .filter_map(|part| part.split(':').next())
            .map(str::trim)
            .filter(|name| !name.is_empty() && !name.contains('}'))
            .collect();
        assert_eq!(names, SESSION_SUMMARY_FIELDS);
    }

    const GOOD: &str = concat!(
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
        "\n",
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1}}"#,
        "\n",
        "garbage\n",
    );

    #[test]
    fn summaries_keep_order_and_report_errors() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.jsonl");
        std::fs::write(&good, GOOD).unwrap();
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
        assert_eq!(out[1].format, None);
        assert!(out[2].error.is_some());
        let mut done: Vec<usize> = rx.iter().collect();
        done.sort();
        assert_eq!(done, vec![0, 1, 2]);
    }

    #[test]
    fn a_session_with_branches_compaction_and_unpaired_calls() {
        let lines = [
            r#"{"type":"session","version":3,"id":"s2","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
            r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"abcdefgh","timestamp":1}}"#,
            r#"{"type":"model_change","id":"m1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","provider":"p","modelId":"first"}"#,
            r#"{"type":"message","id":"a1","parentId":"m1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","model":"second","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{}},{"type":"toolCall","id":"c2","name":"ls","arguments":{}}],"stopReason":"toolUse","timestamp":3}}"#,
            r#"{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":"0123456789abcdef","timestamp":4}}"#,
            r#"{"type":"message","id":"r9","parentId":"r1","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"toolResult","toolCallId":"zz","toolName":"x","content":"o","timestamp":5}}"#,
            r#"{"type":"message","id":"b1","parentId":"u1","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"user","content":"fork","timestamp":6}}"#,
            r#"{"type":"compaction","id":"k1","parentId":"r9","timestamp":"2026-01-01T00:00:07.000Z","summary":"sum","firstKeptEntryId":"a1","tokensBefore":10}"#,
            "{\"torn",
        ];
        let bytes = lines.join("\n");
        let s = summarize_session_bytes(bytes.as_bytes(), Path::new("mem/s2.jsonl"));
        assert_eq!(s.error, None);
        assert_eq!(s.format.as_deref(), Some("pi"));
        assert_eq!(s.path, Path::new("mem/s2.jsonl"));
        assert_eq!(s.size_bytes, bytes.len() as u64);
        assert_eq!((s.entries, s.messages, s.damaged_lines), (7, 5, 1));
        assert_eq!((s.compactions, s.branches), (1, 2));
        assert_eq!(s.model.as_deref(), Some("second"));
        assert_eq!(s.last_activity.as_deref(), Some("2026-01-01T00:00:07.000Z"));
        assert_eq!(s.last_activity_ms, Some(1_767_225_607_000));
        // The leaf is the compaction: its summary, then a1, r1, r9 (kept from a1 on).
        assert_eq!(s.context_messages, 4);
        assert_eq!((s.tool_calls, s.tool_results), (2, 2));
        assert_eq!((s.unpaired_tool_calls, s.unpaired_tool_results), (1, 1));
        assert_eq!(s.tool_result_tokens, 4 + 1);
        assert_eq!(s.user_tokens, 0);
        assert!(s.other_tokens > 0 && s.assistant_tokens > 0);
        assert_eq!(
            s.estimated_tokens,
            s.user_tokens + s.assistant_tokens + s.tool_result_tokens + s.other_tokens
        );
        // Neither a pi header nor a Claude Code / Codex record: an error record.
        let from_bytes_error = summarize_session_bytes(b"{\"hello\":1}\n", Path::new("x"));
        assert!(from_bytes_error.error.is_some());
        assert_eq!(from_bytes_error.format, None);
        // A title-only Claude Code file is a (message-less) Claude Code session.
        let title_only = summarize_session_bytes(b"{\"type\":\"summary\"}\n", Path::new("x"));
        assert_eq!(title_only.error, None);
        assert_eq!(title_only.format.as_deref(), Some("claude-code"));
        assert_eq!(title_only.context_messages, 0);
    }

    #[test]
    fn the_stream_yields_every_file_in_order_or_as_finished() {
        let dir = tempfile::tempdir().unwrap();
        let paths: Vec<PathBuf> = (0..40)
            .map(|i| {
                let p = dir.path().join(format!("{i}.jsonl"));
                std::fs::write(&p, if i % 7 == 3 { "bad\n" } else { GOOD }).unwrap();
                p
            })
            .collect();
        let ordered: Vec<(usize, SessionSummary)> =
            ScanStream::start(paths.clone(), Some(2), true).collect();
        assert_eq!(
            ordered.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            (0..40).collect::<Vec<_>>()
        );
        assert!(ordered.iter().all(|(i, s)| s.path == paths[*i]));
        assert_eq!(ordered.iter().filter(|(_, s)| s.error.is_some()).count(), 6);
        let mut any: Vec<usize> = ScanStream::start(paths.clone(), Some(3), false)
            .map(|(i, _)| i)
            .collect();
        any.sort_unstable();
        assert_eq!(any, (0..40).collect::<Vec<_>>());
        // Dropped early: the producer stops instead of blocking forever.
        let mut partial = ScanStream::start(paths, Some(1), true);
        assert_eq!(partial.total(), 40);
        assert!(partial.next().is_some());
        drop(partial);
        assert_eq!(ScanStream::start(Vec::new(), None, true).count(), 0);
    }
}
