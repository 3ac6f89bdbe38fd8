//! Session file repair before load: OpenClaw 2026.3.13 `src/agents/session-file-repair.ts`
//! (`repairSessionFileIfNeeded`).
//!
//! Whether a file is rewritten is upstream's decision: only when some non-blank line fails
//! `JSON.parse` (after a lossy UTF-8 decode) and the first parsed entry is a session header
//! with a non-empty id. A file upstream leaves alone (no final newline, blank lines, valid
//! non-object JSON lines, a BOM or CR-only header, invalid UTF-8 inside strings) is never
//! touched. The later release's message fixes (fallback text for empty errored assistant
//! turns, "(continue)" for blank user content, dropping role-less messages) run only with
//! [`RepairOptions::fix_messages`].
//!
//! Differences from upstream when a file is rewritten, kept for data safety: lines that need
//! no change keep their exact bytes (upstream re-serializes every entry, turning CRLF into LF
//! and invalid UTF-8 into U+FFFD, also in the backup); records glued to a torn line, hidden
//! behind NUL bytes, a BOM or invalid UTF-8 are recovered instead of dropped with the line;
//! the report lists every changed line. The file is read twice as a stream (check, then rewrite only if needed),
//! so memory is bounded by the longest line, and the exclusive session lock is held
//! throughout so no concurrent append is lost.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::Value;

use super::entry::types;
use super::lines::{
    clean_record, is_blank, nested_deeper_than, salvage_line, too_deep_reason, MAX_RECORD_DEPTH,
};
use super::persist::{replace_atomically, write_backup, LockedFile};
use crate::base::{js_trim, parse_value, raw_as_str, to_js_string, RawObject};
use crate::base::{Error, Result};

/// `STREAM_ERROR_FALLBACK_TEXT` (G3): the content given to an empty errored assistant.
pub const STREAM_ERROR_FALLBACK_TEXT: &str = "[assistant turn failed before producing content]";
/// `BLANK_USER_FALLBACK_TEXT` (G3): the text of a blank user message.
pub const BLANK_USER_FALLBACK_TEXT: &str = "(continue)";

/// The change of a kept last line that lacked its `"\n"` (upstream adds it silently too).
const FINAL_NEWLINE_ADDED: &str = "missing final newline added";

/// Keep the backup of the original after a successful repair, or delete it (upstream G3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackupPolicy {
    #[default]
    Keep,
    Delete,
}

#[derive(Debug, Clone)]
pub struct RepairOptions {
    pub backup: BackupPolicy,
    pub lock_timeout: Duration,
    /// Used in the backup and temp file names.
    pub now_ms: i64,
    /// The later release's message fixes (off in 2026.3.13): an empty errored assistant turn
    /// gets fallback text, blank user content becomes "(continue)", a message entry without a
    /// role is dropped. Each such fix is also a reason to rewrite the file.
    pub fix_messages: bool,
}

impl Default for RepairOptions {
    fn default() -> Self {
        RepairOptions {
            backup: BackupPolicy::Keep,
            lock_timeout: Duration::from_secs(10),
            now_ms: crate::base::system_now_ms(),
            fix_messages: false,
        }
    }
}

/// What happened to one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// The whole line was removed.
    Dropped,
    /// The line was replaced by a corrected version of its record(s).
    Rewritten,
    /// Records were cut out of a damaged line; the rest of it was removed.
    Salvaged,
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Dropped => "dropped",
            ChangeKind::Rewritten => "rewritten",
            ChangeKind::Salvaged => "salvaged",
        }
    }
}

crate::base::python_class! {
    (name = "LineChange", module = "clawctx._core.session")
    /// One changed line of a repaired file (`kind`: dropped, rewritten or salvaged).
    // Its Python attributes are the getters in `repair_py.rs` (`kind` as its name).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct LineChange {
        /// 1-based line number in the original file.
        pub line: usize,
        pub kind: ChangeKind,
        pub reason: String,
    }
}

crate::base::python_class! {
    (name = "RepairReport", module = "clawctx._core.session", get_all)
    /// What `repair_session_file` did (OpenClaw's report plus the changed lines).
    // Its Python methods are in `repair_py.rs`.
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct RepairReport {
        /// Whether the file was rewritten (OpenClaw 2026.3.13 `src/agents/session-file-repair.ts`).
        pub repaired: bool,
        /// Malformed lines dropped.
        pub dropped_lines: usize,
        /// Assistant messages rewritten to a valid shape.
        pub rewritten_assistant_messages: usize,
        /// User messages with no content dropped.
        // Present in upstream's report but never incremented there either.
        pub dropped_blank_user_messages: usize,
        /// User messages rewritten to a valid shape.
        pub rewritten_user_messages: usize,
        /// Entries recovered from lines that held more than one record.
        pub salvaged_records: usize,
        /// Where the original was copied before the rewrite, or `None`.
        pub backup_path: Option<PathBuf>,
        /// Why the file was not repaired (missing, not a session, nothing to fix), or `None`.
        pub reason: Option<String>,
        /// Every changed line, as `LineChange`s.
        pub changes: Vec<LineChange>,
    }
}

impl RepairReport {
    fn with_reason(reason: impl Into<String>) -> Self {
        RepairReport {
            reason: Some(reason.into()),
            ..Default::default()
        }
    }

    /// Upstream's log summary: `"dropped N malformed line(s), rewrote N assistant message(s), …"`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        for (count, verb, what) in [
            (self.dropped_lines, "dropped", "malformed line(s)"),
            (
                self.salvaged_records,
                "salvaged",
                "record(s) from damaged line(s)",
            ),
            (
                self.rewritten_assistant_messages,
                "rewrote",
                "assistant message(s)",
            ),
            (
                self.dropped_blank_user_messages,
                "dropped",
                "blank user message(s)",
            ),
            (self.rewritten_user_messages, "rewrote", "user message(s)"),
        ] {
            if count > 0 {
                parts.push(format!("{verb} {count} {what}"));
            }
        }
        let other = self
            .changes
            .iter()
            .filter(|c| {
                c.kind == ChangeKind::Rewritten
                    && !c.reason.contains("message")
                    && c.reason != FINAL_NEWLINE_ADDED
            })
            .count();
        if other > 0 {
            parts.push(format!("normalized {other} line(s)"));
        }
        parts.join(", ")
    }
}

/// What a record needs.
enum RecordFix {
    Keep,
    Drop(&'static str),
    RewriteAssistant(String),
    RewriteUser(String),
}

/// The decision for one line; the same function decides in both passes.
enum LineDecision {
    Blank,
    Keep,
    Drop(String),
    Replace(Replacement),
}

/// The records a damaged or fixed line is replaced by, and what the replacement counts.
struct Replacement {
    texts: Vec<String>,
    kind: ChangeKind,
    reason: String,
    /// Assistant and user messages rewritten, and records dropped, inside the line.
    assistant: usize,
    user: usize,
    dropped: usize,
}

impl LineDecision {
    /// One record rewritten in place; `(assistant, user)` counts which message it fixed.
    fn rewritten(text: String, reason: &str, (assistant, user): (usize, usize)) -> Self {
        LineDecision::Replace(Replacement {
            texts: vec![text],
            kind: ChangeKind::Rewritten,
            reason: reason.to_owned(),
            assistant,
            user,
            dropped: 0,
        })
    }
}

struct Decided {
    decision: LineDecision,
    /// Upstream's reading of the line: `None` when `JSON.parse` rejects it (a dropped line),
    /// else whether the parsed value is a session header.
    upstream: Option<bool>,
}

/// Blank as upstream sees it: nothing left after JS `trim()` of the lossily decoded line.
fn is_js_blank(bytes: &[u8]) -> bool {
    is_blank(bytes) || js_trim(&String::from_utf8_lossy(bytes)).is_empty()
}

/// `JSON.parse` of the lossily decoded line: `None` if it throws, else whether the value is a
/// session header (`type: "session"` and a non-empty string `id`).
fn upstream_reading(bytes: &[u8]) -> Option<bool> {
    let text = String::from_utf8_lossy(bytes);
    let value = parse_value(&text).ok()?;
    Some(
        value.get("type").and_then(Value::as_str) == Some(types::SESSION)
            && value
                .get("id")
                .and_then(Value::as_str)
                .is_some_and(|id| !id.is_empty()),
    )
}

fn decide_line(bytes: &[u8], fix_messages: bool) -> Decided {
    if is_js_blank(bytes) {
        return Decided {
            decision: LineDecision::Blank,
            upstream: Some(false),
        };
    }
    let upstream = upstream_reading(bytes);
    let fix = |record: &str| {
        if fix_messages {
            fix_record(record)
        } else {
            RecordFix::Keep
        }
    };
    if let Some(record) = clean_record(bytes) {
        // A record too deep for the readers: the open skips it, so repair removes it (keeping
        // it would report a repair of a file left byte-identical, on every run; issue 33, N2).
        if nested_deeper_than(record.as_bytes(), MAX_RECORD_DEPTH) {
            return Decided {
                decision: LineDecision::Drop(too_deep_reason()),
                upstream,
            };
        }
        let decision = match fix(record) {
            RecordFix::Keep => LineDecision::Keep,
            RecordFix::Drop(reason) => LineDecision::Drop(reason.to_owned()),
            RecordFix::RewriteAssistant(text) => LineDecision::rewritten(
                text,
                "empty errored assistant message given fallback text",
                (1, 0),
            ),
            RecordFix::RewriteUser(text) => {
                LineDecision::rewritten(text, "blank user message content replaced", (0, 1))
            }
        };
        return Decided { decision, upstream };
    }
    if upstream.is_some() {
        // Valid JSON upstream keeps as it is (a non-object value, invalid UTF-8 inside a
        // string): the line keeps its bytes.
        return Decided {
            decision: LineDecision::Keep,
            upstream,
        };
    }
    let salvage = salvage_line(bytes);
    if salvage.records.is_empty() {
        return Decided {
            decision: LineDecision::Drop(salvage.damage.describe()),
            upstream,
        };
    }
    let mut texts = Vec::with_capacity(salvage.records.len());
    let (mut assistant, mut user, mut dropped) = (0, 0, 0);
    for record in salvage.records {
        match fix(&record) {
            RecordFix::Keep => texts.push(record),
            RecordFix::Drop(_) => dropped += 1,
            RecordFix::RewriteAssistant(text) => {
                assistant += 1;
                texts.push(text);
            }
            RecordFix::RewriteUser(text) => {
                user += 1;
                texts.push(text);
            }
        }
    }
    let kind = if salvage.damage.garbage_bytes > 0 {
        ChangeKind::Salvaged
    } else {
        ChangeKind::Rewritten
    };
    let reason = salvage.damage.describe();
    Decided {
        decision: LineDecision::Replace(Replacement {
            texts,
            kind,
            reason,
            assistant,
            user,
            dropped,
        }),
        upstream,
    }
}

/// G3's per-record checks: a message entry without a role is dropped, an empty errored
/// assistant and blank user text get fallback content.
fn fix_record(text: &str) -> RecordFix {
    let Ok(raw) = RawObject::parse(text) else {
        return RecordFix::Keep;
    };
    if raw.get_str("type").as_deref() != Some(types::MESSAGE) {
        return RecordFix::Keep;
    }
    let Some(message) = raw.get("message").filter(|m| m.get().starts_with('{')) else {
        return RecordFix::Drop("message entry without a message object");
    };
    let Ok(message_raw) = RawObject::parse(message.get()) else {
        return RecordFix::Drop("message entry without a message object");
    };
    let role = message_raw.get_str("role");
    match role.as_deref().map(js_trim) {
        None | Some("") => RecordFix::Drop("message entry with a missing or blank role"),
        Some(_) => match role.as_deref() {
            Some("assistant") => {
                let errored = message_raw.get_str("stopReason").as_deref() == Some("error");
                let empty = message_raw.get("content").is_some_and(is_empty_array);
                if errored && empty {
                    let content =
                        serde_json::json!([{"type": "text", "text": STREAM_ERROR_FALLBACK_TEXT}]);
                    RecordFix::RewriteAssistant(with_message_content(text, content))
                } else {
                    RecordFix::Keep
                }
            }
            Some("user") => match message_raw.get("content").and_then(fixed_user_content) {
                Some(content) => RecordFix::RewriteUser(with_message_content(text, content)),
                None => RecordFix::Keep,
            },
            _ => RecordFix::Keep,
        },
    }
}

fn is_empty_array(raw: &RawValue) -> bool {
    raw.get().starts_with('[')
        && serde_json::from_str::<Vec<&RawValue>>(raw.get()).is_ok_and(|v| v.is_empty())
}

/// The corrected content of a user message, or `None` when it is fine (G3).
fn fixed_user_content(raw: &RawValue) -> Option<Value> {
    if let Some(text) = raw_as_str(raw) {
        return js_trim(&text)
            .is_empty()
            .then(|| Value::from(BLANK_USER_FALLBACK_TEXT));
    }
    let blocks: Vec<&RawValue> = serde_json::from_str(raw.get()).ok()?;
    let is_blank_text = |block: &&RawValue| {
        RawObject::parse(block.get()).ok().is_some_and(|b| {
            b.get_str("type").as_deref() == Some("text")
                && b.get("text")
                    .and_then(raw_as_str)
                    .is_some_and(|t| js_trim(&t).is_empty())
        })
    };
    if !blocks.iter().any(is_blank_text) {
        return None;
    }
    let kept: Vec<Value> = blocks
        .iter()
        .filter(|b| !is_blank_text(b))
        .filter_map(|b| parse_value(b.get()).ok())
        .collect();
    if kept.is_empty() {
        Some(serde_json::json!([{"type": "text", "text": BLANK_USER_FALLBACK_TEXT}]))
    } else {
        Some(Value::Array(kept))
    }
}

fn with_message_content(record: &str, content: Value) -> String {
    let mut value = parse_value(record).unwrap_or(Value::Null);
    if let Some(message) = value.get_mut("message").and_then(Value::as_object_mut) {
        message.insert("content".into(), content);
    }
    to_js_string(&value)
}

/// Reads `"\n"`-terminated lines; `f(number, bytes_without_newline, terminated)`.
fn for_each_line(
    mut reader: impl BufRead,
    mut f: impl FnMut(usize, &[u8], bool) -> io::Result<()>,
) -> io::Result<()> {
    let mut buf = Vec::new();
    let mut number = 0;
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf)?;
        if n == 0 {
            return Ok(());
        }
        number += 1;
        let terminated = buf.last() == Some(&b'\n');
        if terminated {
            buf.pop();
        }
        f(number, &buf, terminated)?;
    }
}

/// A file-backed reader positioned at the start, for one pass.
fn file_lines(file: &File) -> io::Result<BufReader<&File>> {
    let mut reader = BufReader::with_capacity(1 << 20, file);
    reader.seek(io::SeekFrom::Start(0))?;
    Ok(reader)
}

/// Pass 1's verdict.
enum Verdict {
    /// Nothing to write: the report is final (clean, empty or header-less).
    Final(RepairReport),
    /// The content needs a rewrite; the report counts what it will change.
    Rewrite(RepairReport),
}

/// Pass 1: decides every line, counts, and checks the header (upstream's rules).
fn check_lines(reader: impl BufRead, fix_messages: bool) -> io::Result<Verdict> {
    let mut report = RepairReport::default();
    // Upstream's verdict: parsed entries, lines `JSON.parse` rejected, the first entry's kind.
    let mut upstream_entries = 0usize;
    let mut upstream_dropped = 0usize;
    let mut header_ok = false;
    // A reason of clawctx's own to rewrite (only with `fix_messages`).
    let mut message_fixes = false;
    for_each_line(reader, |number, bytes, terminated| {
        let decided = decide_line(bytes, fix_messages);
        match decided.upstream {
            None => upstream_dropped += 1,
            Some(_) if matches!(decided.decision, LineDecision::Blank) => {}
            Some(is_header) => {
                if upstream_entries == 0 {
                    header_ok = is_header;
                }
                upstream_entries += 1;
            }
        }
        match decided.decision {
            LineDecision::Blank => {}
            LineDecision::Keep => {
                if !terminated {
                    // Not damage upstream; recorded in case the file is rewritten anyway.
                    report.changes.push(LineChange {
                        line: number,
                        kind: ChangeKind::Rewritten,
                        reason: FINAL_NEWLINE_ADDED.into(),
                    });
                }
            }
            LineDecision::Drop(reason) => {
                message_fixes = message_fixes || decided.upstream.is_some();
                report.dropped_lines += 1;
                report.changes.push(LineChange {
                    line: number,
                    kind: ChangeKind::Dropped,
                    reason,
                });
            }
            LineDecision::Replace(r) => {
                message_fixes = message_fixes || decided.upstream.is_some();
                report.rewritten_assistant_messages += r.assistant;
                report.rewritten_user_messages += r.user;
                report.dropped_lines += r.dropped;
                if r.kind == ChangeKind::Salvaged {
                    report.salvaged_records += r.texts.len();
                }
                let kind = if r.texts.is_empty() {
                    ChangeKind::Dropped
                } else {
                    r.kind
                };
                report.changes.push(LineChange {
                    line: number,
                    kind,
                    reason: r.reason,
                });
            }
        }
        Ok(())
    })?;
    // No parsed entry at all (even if malformed lines were dropped): upstream reports an
    // empty file before looking at the header.
    if upstream_entries == 0 {
        return Ok(Verdict::Final(RepairReport {
            dropped_lines: upstream_dropped,
            reason: Some("empty session file".into()),
            ..Default::default()
        }));
    }
    if !header_ok {
        return Ok(Verdict::Final(RepairReport {
            dropped_lines: upstream_dropped,
            reason: Some("invalid session header".into()),
            ..Default::default()
        }));
    }
    if upstream_dropped == 0 && !message_fixes {
        return Ok(Verdict::Final(RepairReport::default()));
    }
    Ok(Verdict::Rewrite(report))
}

/// Pass 2: writes the repaired lines; lines that need no change keep their exact bytes.
fn write_lines(reader: impl BufRead, out: &mut impl Write, fix_messages: bool) -> io::Result<()> {
    for_each_line(reader, |_, bytes, terminated| {
        let eol: &[u8] = if bytes.ends_with(b"\r") {
            b"\r\n"
        } else {
            b"\n"
        };
        match decide_line(bytes, fix_messages).decision {
            LineDecision::Blank => {
                out.write_all(bytes)?;
                if terminated {
                    out.write_all(b"\n")?;
                }
            }
            LineDecision::Keep => {
                out.write_all(bytes)?;
                out.write_all(b"\n")?;
            }
            LineDecision::Drop(_) => {}
            LineDecision::Replace(Replacement { texts, .. }) => {
                for text in texts {
                    out.write_all(text.as_bytes())?;
                    out.write_all(eol)?;
                }
            }
        }
        Ok(())
    })
}

/// The same decision and rewrite as [`repair_session_file`] on a session's bytes held in
/// memory (an object read from a store): returns the report and, when a repair is needed, the
/// repaired bytes (`report.repaired` is then true). No file is touched, so there is no lock
/// and no backup; the caller decides whether and where to write the result.
pub fn repair_session_bytes(data: &[u8], fix_messages: bool) -> (RepairReport, Option<Vec<u8>>) {
    // Reading from a slice cannot fail, nor can writing to a Vec.
    let verdict = check_lines(data, fix_messages).expect("reading a byte slice cannot fail");
    match verdict {
        Verdict::Final(report) => (report, None),
        Verdict::Rewrite(mut report) => {
            let mut out = Vec::with_capacity(data.len());
            write_lines(data, &mut out, fix_messages).expect("writing to a Vec cannot fail");
            report.repaired = true;
            (report, Some(out))
        }
    }
}

/// Repairs `path` in place if it needs it; see the module docs. Returns a report; errors only
/// when a needed rewrite fails (the original is then untouched) or the lock cannot be taken.
pub fn repair_session_file(path: &Path, options: &RepairOptions) -> Result<RepairReport> {
    // Upstream trims the path it is given (`sessionFile.trim()`).
    let trimmed;
    let path = match path.to_str() {
        Some(text) if js_trim(text).len() != text.len() => {
            trimmed = PathBuf::from(js_trim(text));
            trimmed.as_path()
        }
        _ => path,
    };
    if path.as_os_str().is_empty() {
        return Ok(RepairReport::with_reason("missing session file"));
    }
    if path.is_dir() {
        let err = io::Error::from_raw_os_error(21);
        return Ok(RepairReport::with_reason(format!(
            "failed to read session file: {}",
            Error::io_reason(&err)
        )));
    }
    let lock = match LockedFile::open(path, false, options.lock_timeout) {
        Ok(lock) => lock,
        Err(Error::NotFound { .. }) => {
            return Ok(RepairReport::with_reason("missing session file"))
        }
        Err(Error::Io { source, .. }) => {
            return Ok(RepairReport::with_reason(format!(
                "failed to read session file: {}",
                Error::io_reason(&source)
            )))
        }
        Err(other) => return Err(other),
    };
    lock.remove_stale_temps();
    let file = reopen_for_read(&lock)?;

    // Pass 1: decide, count, and check the header.
    let fix_messages = options.fix_messages;
    let mut report = match file_lines(&file).and_then(|r| check_lines(r, fix_messages)) {
        Ok(Verdict::Final(report)) => return Ok(report),
        Ok(Verdict::Rewrite(report)) => report,
        Err(err) => {
            return Ok(RepairReport::with_reason(format!(
                "failed to read session file: {}",
                Error::io_reason(&err)
            )))
        }
    };

    // Pass 2: write the repaired file next to the original and swap it in.
    let backup = write_backup(path, options.now_ms).map_err(|source| Error::RepairFailed {
        path: path.to_path_buf(),
        source,
    })?;
    let written = replace_atomically(path, "repair", options.now_ms, |out| {
        write_lines(file_lines(&file)?, out, fix_messages)
    });
    drop(lock);
    if let Err(source) = written {
        let _ = std::fs::remove_file(&backup);
        return Err(Error::RepairFailed {
            path: path.to_path_buf(),
            source,
        });
    }
    report.repaired = true;
    report.backup_path = match options.backup {
        BackupPolicy::Keep => Some(backup),
        BackupPolicy::Delete => std::fs::remove_file(&backup).err().map(|_| backup),
    };
    Ok(report)
}

fn reopen_for_read(lock: &LockedFile) -> Result<File> {
    // The locked descriptor itself, so we read exactly the inode we hold the lock on.
    lock.try_clone_file().map_err(|e| Error::io(lock.path(), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_names_every_count_in_upstream_order() {
        let report = RepairReport {
            dropped_lines: 1,
            salvaged_records: 2,
            rewritten_assistant_messages: 3,
            dropped_blank_user_messages: 4,
            rewritten_user_messages: 5,
            changes: vec![
                LineChange {
                    line: 1,
                    kind: ChangeKind::Rewritten,
                    reason: "id normalized".to_owned(),
                },
                LineChange {
                    line: 2,
                    kind: ChangeKind::Rewritten,
                    reason: FINAL_NEWLINE_ADDED.to_owned(),
                },
            ],
            ..RepairReport::default()
        };
        assert_eq!(
            report.summary(),
            "dropped 1 malformed line(s), salvaged 2 record(s) from damaged line(s), rewrote 3 \
             assistant message(s), dropped 4 blank user message(s), rewrote 5 user message(s), \
             normalized 1 line(s)"
        );
        assert_eq!(RepairReport::default().summary(), "");
    }
}
