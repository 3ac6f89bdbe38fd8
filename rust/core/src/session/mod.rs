//! Session files (mirrors pi-mono 0.58.3 `packages/coding-agent/src/core/session-manager.ts`):
//! splitting a file into lines and salvaging damaged ones, entries, the id index and tree,
//! opening, migrating and refreshing a session, appends under an advisory lock with backups and
//! atomic replacement, `buildSessionContext` (whole file, or read from its end only as far as
//! the last leaf needs), file repair (OpenClaw 2026.3.13 `src/agents/session-file-repair.ts`),
//! scanning many sessions, and removing a heartbeat exchange from a file.
//!
//! Files, in dependency order: `lines`, `persist`, `entry`, `tree`, `read` (file bytes to
//! records), `context`, `header`, `tail` (reading a file from its end), `manager` (the
//! [`Session`] type: one file per job under `manager/`), then `leaf_context`, `scan`, `repair`,
//! `heartbeat` and `turn` (marks of turns appended whole, cut-short turns). Each uses only
//! files before it (`turn` is a leaf module the writers call).

mod context;
mod entry;
mod header;
mod heartbeat;
#[cfg(feature = "python")]
mod heartbeat_py;
mod leaf_context;
mod lines;
mod manager;
mod persist;
mod read;
mod read_at;
#[cfg(feature = "python")]
mod read_py;
mod repair;
#[cfg(feature = "python")]
mod repair_py;
mod scan;
#[cfg(feature = "python")]
mod scan_py;
mod tail;
mod tree;
mod turn;

pub use context::{
    build_session_context, resolve_leaf, ContextState, LeafSelector, SessionContext,
};
pub use entry::{types, Entry, EntryBody, MessageHead};
pub use header::{new_header_fields, Header, CURRENT_SESSION_VERSION};
pub use heartbeat::{
    prune_heartbeat_transcript, ExchangeRule, PruneAction, PruneReport, TranscriptMark,
};
pub use leaf_context::LeafContextReader;
pub use lines::{
    clean_record, clean_text, is_blank, nested_deeper_than, salvage_line, split_lines, Damage,
    Line, Salvage, MAX_RECORD_DEPTH,
};
pub use manager::{
    join_lines, InvalidHeader, NewEntry, OpenOptions, RefreshMode, RefreshReport, Session,
    TurnAppend,
};
pub use persist::{
    file_identity, replace_atomically, write_backup, AppendOutcome, FileIdentity, LockedFile,
    WriteOptions,
};
pub use read::{LineAction, SkippedLine};
pub use repair::{
    repair_session_bytes, repair_session_file, BackupPolicy, ChangeKind, LineChange, RepairOptions,
    RepairReport, BLANK_USER_FALLBACK_TEXT, STREAM_ERROR_FALLBACK_TEXT,
};
pub use scan::{
    scan_sessions, source_facts, summarize_session, summarize_session_bytes,
    summarize_session_shared, summarize_transcript, ScanStream, SessionSummary, PI_FORMAT,
    SESSION_SUMMARY_FIELDS,
};
pub use tail::{LineSource, TailOptions};
pub use tree::{index_entries, path_to_root, IdIndex, Tree};
pub use turn::{TurnMark, TURN_FIELD};
