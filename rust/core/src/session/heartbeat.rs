//! Removing an acknowledged heartbeat exchange from the session file after the run (mirrors
//! OpenClaw 2026.3.13 `src/auto-reply/heartbeat.ts`); which messages are heartbeat prompts and
//! acknowledgements is decided by the hygiene stage's [`HeartbeatMatcher`].
//!
//! Upstream truncates the file back to the byte size it had before the run, which also cuts
//! whatever another writer appended meanwhile. [`prune_heartbeat_transcript`] removes only the
//! lines of the heartbeat exchange ([`ExchangeRule`] says which those are), under the session's
//! exclusive lock: a plain truncation when the exchange is everything after the mark, an atomic
//! rewrite of the tail (every other line keeps its bytes) when other lines are interleaved, and
//! nothing at all when that would be unsafe (the file shrank, was replaced, changed before the
//! mark, or a kept line descends from a removed one).

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::lines::{clean_record, split_lines};
use super::persist::{replace_atomically, LockedFile, WriteOptions};
use crate::base::{parse_value, RawObject};
use crate::base::{Error, Result};
use crate::hygiene::HeartbeatMatcher;

/// How many bytes before the mark are compared to detect a file changed in place.
const MARK_FINGERPRINT_BYTES: u64 = 4096;

// ---- on-disk pruning (OpenClaw src/infra/heartbeat-runner.ts: pruneHeartbeatTranscript) ----

crate::base::python_class! {
    (name = "HeartbeatMark", module = "clawctx._core.session")
    /// The size of a session file recorded (under its lock) before a heartbeat run.
    // With the file's identity and last bytes, to notice a replacement or an in-place change. Its
    // Python attributes are the getters in `heartbeat_py.rs`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct TranscriptMark {
        pub path: PathBuf,
        /// The file's byte size before the run.
        pub size: u64,
        /// The size is at a line boundary (0, or the byte before it is `"\n"`). Nothing is pruned
        /// from a mark inside a line.
        pub at_line_boundary: bool,
        /// `(device, inode)` of the file, to notice a replacement.
        file_id: Option<(u64, u64)>,
        /// The last bytes before the mark, to notice a file changed in place.
        fingerprint: Vec<u8>,
    }
}

#[cfg(unix)]
fn file_id(file: &File) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    file.metadata().ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_id(_file: &File) -> Option<(u64, u64)> {
    None
}

fn read_range(file: &File, path: &Path, start: u64, len: u64) -> Result<Vec<u8>> {
    let mut reader = file;
    reader
        .seek(io::SeekFrom::Start(start))
        .map_err(|e| Error::io(path, e))?;
    let mut buf = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    reader
        .take(len)
        .read_to_end(&mut buf)
        .map_err(|e| Error::io(path, e))?;
    Ok(buf)
}

impl TranscriptMark {
    /// Records the size of `path` under the session's exclusive lock, so no locked writer is
    /// in the middle of a line. Fails with [`Error::NotFound`] for a missing file and
    /// [`Error::Lock`] when the lock cannot be taken in time.
    pub fn capture(path: &Path, options: WriteOptions) -> Result<TranscriptMark> {
        let lock = LockedFile::open(path, false, options.lock_timeout)?;
        let file = lock.try_clone_file().map_err(|e| Error::io(path, e))?;
        let size = lock.len()?;
        let start = size.saturating_sub(MARK_FINGERPRINT_BYTES);
        let fingerprint = read_range(&file, path, start, size - start)?;
        Ok(TranscriptMark {
            path: path.to_path_buf(),
            size,
            at_line_boundary: size == 0 || fingerprint.last() == Some(&b'\n'),
            file_id: file_id(&file),
            fingerprint,
        })
    }
}

/// Which lines after the mark belong to the heartbeat exchange.
#[derive(Debug, Clone)]
pub enum ExchangeRule {
    /// The entries appended through the caller's session handle during the run, as they were
    /// written (each with its `"id"`). A line belongs to the exchange when it is a record equal
    /// to one of them. All of them must be found after the mark, or nothing is removed.
    Entries(Vec<Value>),
    /// Without a session handle, by content: the first `message` entry after the mark whose
    /// message is a heartbeat prompt ([`HeartbeatMatcher::is_heartbeat_user`]), followed by its
    /// descendants through `parentId` (one child each, no user message among them) up to and
    /// including the first acknowledging assistant message. Entries of other types in that
    /// chain (a model change, a cache-ttl custom entry) belong to it as well.
    Content(HeartbeatMatcher),
}

/// What [`prune_heartbeat_transcript`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PruneAction {
    /// Nothing was changed (see the reason).
    Unchanged,
    /// The file was truncated back to the mark: the exchange was all that followed it.
    Truncated,
    /// Other writers' lines were interleaved: the file was replaced atomically by the prefix
    /// up to the mark plus every kept line with its original bytes.
    Rewritten,
}

impl PruneAction {
    pub fn as_str(self) -> &'static str {
        match self {
            PruneAction::Unchanged => "unchanged",
            PruneAction::Truncated => "truncated",
            PruneAction::Rewritten => "rewritten",
        }
    }
}

crate::base::python_class! {
    (name = "HeartbeatPruneReport", module = "clawctx._core.session")
    /// What `prune_heartbeat_transcript` did. `action`: `"truncated"`, `"rewritten"` or
    /// `"unchanged"` (then `reason` says why).
    // Its Python attributes are the getters in `heartbeat_py.rs` (`action` as its name).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct PruneReport {
        pub action: PruneAction,
        /// Lines of the heartbeat exchange removed.
        pub removed_lines: usize,
        pub removed_bytes: u64,
        /// The `id`s of the removed entries, in file order.
        pub removed_ids: Vec<String>,
        /// Lines after the mark that were kept (other writers' lines).
        pub kept_lines: usize,
        /// Why nothing was changed (`None` when something was removed).
        pub reason: Option<String>,
    }
}

impl PruneReport {
    fn unchanged(reason: impl Into<String>) -> PruneReport {
        PruneReport {
            action: PruneAction::Unchanged,
            removed_lines: 0,
            removed_bytes: 0,
            removed_ids: Vec::new(),
            kept_lines: 0,
            reason: Some(reason.into()),
        }
    }
}

/// Another writer changed the file while it was being rewritten (the rewrite is abandoned).
#[derive(Debug)]
struct Raced(&'static str);

impl std::fmt::Display for Raced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for Raced {}

/// One line after the mark.
struct TailLine<'a> {
    /// The line with its `"\n"` (absent only for an unterminated last line).
    bytes: &'a [u8],
    /// The record on the line, if it is one clean JSON object.
    record: Option<&'a str>,
}

impl<'a> TailLine<'a> {
    fn object(&self) -> Option<RawObject<'a>> {
        self.record.and_then(|r| RawObject::parse(r).ok())
    }

    fn str_field(&self, key: &str) -> Option<String> {
        self.object()?.get_str(key).map(|s| s.into_owned())
    }
}

fn tail_lines(tail: &[u8]) -> Vec<TailLine<'_>> {
    split_lines(tail)
        .map(|line| {
            let end = line.offset + line.bytes.len() + usize::from(line.terminated);
            TailLine {
                bytes: &tail[line.offset..end],
                record: clean_record(line.bytes),
            }
        })
        .collect()
}

/// The exchange's line indices by [`ExchangeRule::Entries`], or why there is none.
fn select_entries(lines: &[TailLine<'_>], expected: &[Value]) -> Result<Vec<usize>, String> {
    if expected.is_empty() {
        return Err("nothing was appended through the session during the run".into());
    }
    let mut wanted: HashMap<&str, &Value> = HashMap::new();
    for value in expected {
        let Some(id) = value.get("id").and_then(Value::as_str) else {
            return Err("an entry of the run has no string \"id\"".into());
        };
        wanted.insert(id, value);
    }
    let mut selected = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(id) = line.str_field("id") else {
            continue;
        };
        let Some(value) = wanted.get(id.as_str()) else {
            continue;
        };
        if line.record.and_then(|r| parse_value(r).ok()).as_ref() == Some(*value) {
            wanted.remove(id.as_str());
            selected.push(i);
        }
    }
    if !wanted.is_empty() {
        return Err(format!(
            "{} of the run's {} entries were not found after the mark",
            wanted.len(),
            expected.len()
        ));
    }
    Ok(selected)
}

/// The exchange's line indices by [`ExchangeRule::Content`], or why there is none.
fn select_content(
    lines: &[TailLine<'_>],
    matcher: &HeartbeatMatcher,
) -> Result<Vec<usize>, String> {
    let ids: Vec<Option<String>> = lines.iter().map(|l| l.str_field("id")).collect();
    let mut children: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, line) in lines.iter().enumerate() {
        if let Some(parent) = line.str_field("parentId") {
            children.entry(parent).or_default().push(i);
        }
    }
    // The message of a `message` entry, as a raw object.
    let message = |i: usize| -> Option<RawObject<'_>> {
        let obj = lines[i].object()?;
        if obj.get_str("type").as_deref() != Some("message") {
            return None;
        }
        RawObject::parse(obj.get("message")?.get()).ok()
    };
    for start in 0..lines.len() {
        let is_prompt = message(start).is_some_and(|m| matcher.is_heartbeat_user(&m));
        if !is_prompt {
            continue;
        }
        let mut chain = vec![start];
        let mut current = start;
        let complete = loop {
            let Some(id) = &ids[current] else {
                break false;
            };
            let kids = children.get(id).map(Vec::as_slice).unwrap_or_default();
            let [child] = kids else {
                break false;
            };
            if *child <= current {
                break false;
            }
            chain.push(*child);
            match message(*child) {
                Some(m) if m.get_str("role").as_deref() == Some("user") => break false,
                Some(m) if matcher.is_heartbeat_ack(&m) => break true,
                _ => current = *child,
            }
        };
        if complete {
            return Ok(chain);
        }
    }
    Err("no complete heartbeat exchange (prompt … acknowledgement) after the mark".into())
}

/// Removes the heartbeat exchange recorded after `mark` from the session file, under the
/// session's exclusive lock (see the module docs). Never touches the bytes before the mark,
/// never removes a line [`ExchangeRule`] does not select, and changes nothing when
/// - the file no longer exists, was replaced, shrank below the mark, or its bytes just before
///   the mark changed;
/// - the mark is not at a line boundary;
/// - the exchange is not found (for `Entries`: not all of it);
/// - a kept line names a removed entry as its `parentId` (removing would orphan it).
///
/// Fails with [`Error::Lock`] when the lock cannot be taken in time.
pub fn prune_heartbeat_transcript(
    mark: &TranscriptMark,
    rule: &ExchangeRule,
    options: WriteOptions,
    now_ms: i64,
) -> Result<PruneReport> {
    let path = &mark.path;
    let lock = match LockedFile::open(path, false, options.lock_timeout) {
        Ok(lock) => lock,
        Err(Error::NotFound { .. }) => {
            return Ok(PruneReport::unchanged("the file no longer exists"))
        }
        Err(e) => return Err(e),
    };
    let file = lock.try_clone_file().map_err(|e| Error::io(path, e))?;
    if mark.file_id.is_some() && file_id(&file) != mark.file_id {
        return Ok(PruneReport::unchanged(
            "the file was replaced since the mark",
        ));
    }
    let len = lock.len()?;
    if len < mark.size {
        return Ok(PruneReport::unchanged("the file shrank below the mark"));
    }
    if !mark.at_line_boundary {
        return Ok(PruneReport::unchanged(
            "the mark is not at a line boundary (the file ended in an unterminated line)",
        ));
    }
    let start = mark.size - mark.fingerprint.len() as u64;
    if read_range(&file, path, start, mark.fingerprint.len() as u64)? != mark.fingerprint {
        return Ok(PruneReport::unchanged(
            "the bytes before the mark changed since it was recorded",
        ));
    }
    if len == mark.size {
        return Ok(PruneReport::unchanged("nothing was written after the mark"));
    }
    let tail = read_range(&file, path, mark.size, len - mark.size)?;
    let lines = tail_lines(&tail);
    let selected = match rule {
        ExchangeRule::Entries(expected) => select_entries(&lines, expected),
        ExchangeRule::Content(matcher) => select_content(&lines, matcher),
    };
    let selected: HashSet<usize> = match selected {
        Ok(s) => s.into_iter().collect(),
        Err(reason) => return Ok(PruneReport::unchanged(reason)),
    };
    let removed_ids: Vec<String> = (0..lines.len())
        .filter(|i| selected.contains(i))
        .filter_map(|i| lines[i].str_field("id"))
        .collect();
    let removed: HashSet<&str> = removed_ids.iter().map(String::as_str).collect();
    let orphaned = (0..lines.len()).filter(|i| !selected.contains(i)).any(|i| {
        lines[i]
            .str_field("parentId")
            .is_some_and(|p| removed.contains(p.as_str()))
    });
    if orphaned {
        return Ok(PruneReport::unchanged(
            "a line written by another writer after the mark descends from the heartbeat exchange",
        ));
    }
    let removed_bytes: u64 = selected.iter().map(|&i| lines[i].bytes.len() as u64).sum();
    let kept_lines = lines.len() - selected.len();
    let action = if kept_lines == 0 {
        // Re-checked right before cutting: a writer that ignores the lock may have appended.
        if lock.len()? != len {
            return Ok(PruneReport::unchanged(
                "the file grew while it was being pruned",
            ));
        }
        file.set_len(mark.size).map_err(|e| Error::io(path, e))?;
        if options.fsync {
            file.sync_data().map_err(|e| Error::io(path, e))?;
        }
        PruneAction::Truncated
    } else {
        let replaced = replace_atomically(path, "heartbeat", now_ms, |w| {
            let mut prefix = &file;
            prefix.seek(io::SeekFrom::Start(0))?;
            let copied = io::copy(&mut prefix.take(mark.size), w)?;
            if copied != mark.size {
                return Err(io::Error::other(Raced(
                    "the file shrank while it was copied",
                )));
            }
            for (i, line) in lines.iter().enumerate() {
                if !selected.contains(&i) {
                    w.write_all(line.bytes)?;
                }
            }
            w.flush()?;
            if lock.len().ok() != Some(len) {
                return Err(io::Error::other(Raced(
                    "the file grew while it was being pruned",
                )));
            }
            Ok(())
        });
        match replaced {
            Ok(()) => PruneAction::Rewritten,
            Err(e) if e.get_ref().is_some_and(|r| r.is::<Raced>()) => {
                return Ok(PruneReport::unchanged(e.to_string()))
            }
            Err(e) => return Err(Error::io(path, e)),
        }
    };
    drop(lock);
    Ok(PruneReport {
        action,
        removed_lines: selected.len(),
        removed_bytes,
        removed_ids,
        kept_lines,
        reason: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hygiene::DEFAULT_HEARTBEAT_PROMPT;
    use serde_json::json;
    use std::fs;
    use std::time::Duration;

    fn user(content: Value) -> Value {
        json!({"role": "user", "content": content, "timestamp": 1})
    }

    fn assistant(content: Value) -> Value {
        json!({"role": "assistant", "content": content, "timestamp": 2})
    }

    fn entry(id: &str, parent: Option<&str>, message: Value) -> Value {
        json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:00.000Z", "message": message})
    }

    fn line(v: &Value) -> String {
        format!("{}\n", crate::base::to_js_string(v))
    }

    fn options() -> WriteOptions {
        WriteOptions {
            fsync: false,
            lock_timeout: Duration::from_millis(200),
        }
    }

    #[test]
    fn heartbeat_prune_truncates_or_rewrites_keeping_foreign_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        let prefix = format!(
            "{}{}",
            line(
                &json!({"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/"})
            ),
            line(&entry("a", None, user(json!("hi"))))
        );
        fs::write(&p, &prefix).unwrap();
        let mark = TranscriptMark::capture(&p, options()).unwrap();
        assert_eq!(mark.size, prefix.len() as u64);
        let prompt = entry("h1", Some("a"), user(json!(DEFAULT_HEARTBEAT_PROMPT)));
        let ack = entry(
            "h2",
            Some("h1"),
            assistant(json!([{"type": "text", "text": "HEARTBEAT_OK"}])),
        );
        let foreign = "{\"type\":\"custom\",\"id\":\"f1\",\"parentId\":\"a\"}\r\n";
        let content = ExchangeRule::Content(HeartbeatMatcher::default());

        fs::write(&p, format!("{prefix}{}{}", line(&prompt), line(&ack))).unwrap();
        let report = prune_heartbeat_transcript(&mark, &content, options(), 1).unwrap();
        assert_eq!(report.action, PruneAction::Truncated);
        assert_eq!(report.removed_ids, ["h1", "h2"]);
        assert_eq!(fs::read_to_string(&p).unwrap(), prefix);

        fs::write(
            &p,
            format!("{prefix}{}{foreign}{}", line(&prompt), line(&ack)),
        )
        .unwrap();
        let rule = ExchangeRule::Entries(vec![prompt.clone(), ack.clone()]);
        let report = prune_heartbeat_transcript(&mark, &rule, options(), 2).unwrap();
        assert_eq!(report.action, PruneAction::Rewritten, "{report:?}");
        assert_eq!(report.kept_lines, 1);
        assert_eq!(
            fs::read_to_string(&p).unwrap(),
            format!("{prefix}{foreign}")
        );
    }

    #[test]
    fn heartbeat_prune_refuses_unsafe_cases() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        let prompt = entry("h1", None, user(json!(DEFAULT_HEARTBEAT_PROMPT)));
        let ack = entry("h2", Some("h1"), assistant(json!("HEARTBEAT_OK")));
        let child = entry("c", Some("h2"), user(json!("next")));
        let content = ExchangeRule::Content(HeartbeatMatcher::default());

        // Unterminated last line at the mark.
        fs::write(&p, "{\"type\":\"session\",\"id\":\"s\"}").unwrap();
        let mark = TranscriptMark::capture(&p, options()).unwrap();
        assert!(!mark.at_line_boundary);
        fs::write(
            &p,
            format!(
                "{{\"type\":\"session\",\"id\":\"s\"}}\n{}{}",
                line(&prompt),
                line(&ack)
            ),
        )
        .unwrap();
        let report = prune_heartbeat_transcript(&mark, &content, options(), 1).unwrap();
        assert_eq!(report.action, PruneAction::Unchanged);

        // A foreign entry that descends from the acknowledgement.
        fs::write(&p, "").unwrap();
        let mark = TranscriptMark::capture(&p, options()).unwrap();
        let body = format!("{}{}{}", line(&prompt), line(&ack), line(&child));
        fs::write(&p, &body).unwrap();
        let report = prune_heartbeat_transcript(&mark, &content, options(), 1).unwrap();
        assert_eq!(report.action, PruneAction::Unchanged);
        assert!(report.reason.unwrap().contains("descends"));
        assert_eq!(fs::read_to_string(&p).unwrap(), body);

        // No acknowledgement: nothing is an exchange.
        let body = format!(
            "{}{}",
            line(&prompt),
            line(&entry(
                "x",
                Some("h1"),
                assistant(json!("Alert: disk full"))
            ))
        );
        fs::write(&p, &body).unwrap();
        let report = prune_heartbeat_transcript(&mark, &content, options(), 1).unwrap();
        assert_eq!(report.action, PruneAction::Unchanged);
        assert_eq!(fs::read_to_string(&p).unwrap(), body);

        // Lock held elsewhere.
        let _held = LockedFile::open(&p, false, Duration::from_secs(1)).unwrap();
        let err = prune_heartbeat_transcript(&mark, &content, options(), 1).unwrap_err();
        assert!(matches!(err, Error::Lock { .. }), "{err}");
    }
}
