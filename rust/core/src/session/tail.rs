//! Reading a session file from its end (pi-mono 0.58.3
//! `packages/coding-agent/src/core/session-manager.ts`, `buildSessionContext`): the backward
//! walk that [`super::LeafContextReader`] and a cold [`Session`](crate::Session)
//! (`Session::open_cold`) share. Below the session type: it uses the header, never a
//! [`Session`](crate::Session), so the two readers above it depend on it one way.
//!
//! A session file only grows, while the context sent to a model is bounded by its window: after
//! a compaction, the messages start at the compaction's first kept entry, usually a few MB
//! before the end of a file of hundreds. `buildSessionContext` needs only the path from the
//! leaf (the last entry, as `_buildIndex` sets it) back to that entry, and a parent is always
//! found at or after
//! the first line that holds its id. So the file is read backwards in growing chunks cut at
//! line ends, every chunk parsed exactly as [`Session::open`](crate::Session::open) parses its
//! lines (fast path, salvage of damaged lines), and the walk up the parents advances as far as
//! the entries read so far allow:
//!
//! - the messages are settled once the walk passes the latest compaction (or OpenClaw `reset`,
//!   the same boundary without a summary) on the path and then reaches its `firstKeptEntryId`
//!   (or the boundary keeps nothing before it), or reaches the root;
//! - the thinking level and model are settled by the first `thinking_level_change` (and
//!   `model_change` or assistant message) the walk meets, or the root. They are read on
//!   request only, since a thinking level set once at the start of a session means reading
//!   all of it.
//!
//! Ids: the index keeps the first occurrence met reading backwards, which is the last in the
//! file, as `Map.set` does on a forward load. When a parent id is in the index it is final
//! (every later line has been read); when it is not, it can only be earlier in the file.
//!
//! What a full open would do differently falls back to it: a header that is missing, invalid,
//! damaged or shares its line with an entry, a file needing migration (v1/v2 rewrite ids
//! and roles of every entry), an empty file. Lines before the part read are not looked at, so
//! damage there is neither reported nor salvaged (it cannot change this context: no entry of

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::context::{ContextState, SessionContext};
use super::entry::{types, Entry};
use super::header::{Header, CURRENT_SESSION_VERSION};
use super::persist::{file_identity, open_session_file, Access, FileIdentity};
use super::read::{is_valid_header, read_shared_at, scan_records, LineAction, TAIL_PROBE_LEN};
use super::tree::IdIndex;
use crate::base::{Error, Result};
use crate::transcript::Message;

/// How much is read at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TailOptions {
    /// Bytes read by the first read from the end; each further read doubles it.
    pub first_chunk: usize,
    /// The largest read (a single longer line is still read whole).
    pub max_chunk: usize,
}

impl Default for TailOptions {
    fn default() -> Self {
        TailOptions {
            first_chunk: 256 << 10,
            max_chunk: 16 << 20,
        }
    }
}

/// The start of the file read to find the header. A header is one short line; a file whose
/// header is not within it is opened in full.
const HEADER_PROBE_BYTES: usize = 64 << 10;

/// Where the entries start (the offset after the header's line), or `None` when the file must
/// be opened in full to get what [`Session::open`] gets.
pub(super) fn find_header_end(
    file: &fs::File,
    file_len: u64,
) -> std::io::Result<Option<(u64, Entry)>> {
    let probe_len = usize::try_from(file_len)
        .unwrap_or(usize::MAX)
        .min(HEADER_PROBE_BYTES);
    let probe = read_shared_at(file, 0, probe_len)?;
    if probe.len() < probe_len {
        return Ok(None);
    }
    let whole_file = probe_len as u64 == file_len;
    let complete = if whole_file {
        probe.len()
    } else {
        match memchr::memrchr(b'\n', &probe) {
            Some(p) => p + 1,
            None => return Ok(None),
        }
    };
    let scan = scan_records(Arc::from(&probe[..complete]), 1, false);
    let Some(first) = scan.records.first() else {
        return Ok(None);
    };
    let header_line = first.line;
    let shares_line = scan.records.get(1).is_some_and(|r| r.line == header_line);
    let damaged = scan.skipped.iter().any(|s| s.line == header_line);
    if !is_valid_header(first)
        || shares_line
        || damaged
        || Header::from_record(first.clone()).version() < CURRENT_SESSION_VERSION
    {
        return Ok(None);
    }
    let end = memchr::memchr_iter(b'\n', &probe[..complete])
        .nth(header_line - 1)
        .map_or(complete, |p| p + 1);
    Ok(Some((end as u64, first.clone())))
}

/// Reads a session file's lines backwards from a line start, in chunks cut at line ends.
#[derive(Debug, Clone)]
pub(super) struct BackReader {
    path: PathBuf,
    /// Shared so that a cloned [`Session`] keeps reading the same inode.
    file: Arc<fs::File>,
    header_end: u64,
    /// Where the unread part of the file ends (a line start; everything after it is read).
    cursor: u64,
    next_chunk: usize,
    max_chunk: usize,
    pub(super) bytes_read: u64,
}

impl BackReader {
    fn new(
        path: &Path,
        file: fs::File,
        file_len: u64,
        header_end: u64,
        options: &TailOptions,
    ) -> BackReader {
        BackReader {
            path: path.to_path_buf(),
            file: Arc::new(file),
            header_end,
            cursor: file_len,
            next_chunk: options.first_chunk.max(1),
            max_chunk: options.max_chunk.max(options.first_chunk).max(1),
            bytes_read: 0,
        }
    }

    /// Whether every line after the header has been read.
    fn at_header(&self) -> bool {
        self.cursor <= self.header_end
    }

    /// Bytes of the file read so far.
    pub(super) fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// Whether the next chunk would reach the header (the rest of the file is read in one go).
    pub(super) fn next_reaches_header(&self) -> bool {
        self.cursor.saturating_sub(self.next_chunk as u64) <= self.header_end
    }

    /// Reads the lines just before `cursor` (at least one, unless all are read) and returns
    /// their records in file order, without second session headers (as `Session::open`
    /// ignores them).
    pub(super) fn read_chunk(&mut self) -> Result<Vec<Entry>> {
        let mut size = self.next_chunk;
        loop {
            let start = self.cursor.saturating_sub(size as u64).max(self.header_end);
            let len = (self.cursor - start) as usize;
            if len == 0 {
                return Ok(Vec::new());
            }
            let mut bytes = read_shared_at(&self.file, start as usize, len)
                .map_err(|e| Error::io(&self.path, e))?;
            self.bytes_read += bytes.len() as u64;
            if bytes.len() < len {
                return Err(Error::Conflict {
                    path: self.path.clone(),
                    reason: "the file shrank while its end was read; open it again".into(),
                });
            }
            // The first line starts after the first "\n" that is not the chunk's last byte
            // (that one ends the line before `start`, whose start is further back).
            let line_start = if start == self.header_end {
                0
            } else {
                match memchr::memchr(b'\n', &bytes[..len - 1]) {
                    Some(p) => p + 1,
                    None => {
                        // One line longer than the chunk: read it whole.
                        size = size.saturating_mul(2);
                        continue;
                    }
                }
            };
            // Blank the partial line in front (it is read again with the next chunk): a blank
            // line is skipped, and the chunk needs no copy to start at a line.
            if line_start > 0 {
                let target = Arc::get_mut(&mut bytes).expect("a new Arc is unique");
                target[..line_start - 1].fill(b' ');
            }
            self.cursor = start + line_start as u64;
            self.next_chunk = size.saturating_mul(2).min(self.max_chunk);
            let mut records = scan_records(bytes, 1, false).records;
            records.retain(|r| !r.is_type(types::SESSION));
            return Ok(records);
        }
    }

    /// Whether `needle` occurs in the part not read yet (a byte search, no parsing).
    pub(super) fn unread_contains(&self, needle: &[u8]) -> Result<bool> {
        const PIECE: u64 = 16 << 20;
        if needle.is_empty() {
            return Ok(true);
        }
        let finder = memchr::memmem::Finder::new(needle);
        let overlap = needle.len() as u64 - 1;
        let mut start = self.header_end;
        while start < self.cursor {
            let end = (start + PIECE).min(self.cursor);
            let from = start.saturating_sub(overlap).max(self.header_end);
            let bytes = read_shared_at(&self.file, from as usize, (end - from) as usize)
                .map_err(|e| Error::io(&self.path, e))?;
            if finder.find(&bytes).is_some() {
                return Ok(true);
            }
            start = end;
        }
        Ok(false)
    }
}

/// What the backward walk reads from: a file ([`BackReader`]) or lines handed over by the
/// caller ([`PulledReader`]).
pub(super) trait Backward {
    /// The records of the lines just before those read, in file order (none once all are).
    fn read_chunk(&mut self) -> Result<Vec<Entry>>;
    /// Whether every line after the header has been read.
    fn at_header(&self) -> bool;
}

impl Backward for BackReader {
    fn read_chunk(&mut self) -> Result<Vec<Entry>> {
        BackReader::read_chunk(self)
    }
    fn at_header(&self) -> bool {
        BackReader::at_header(self)
    }
}

/// Where a backward read gets its lines when they are not in a file: the caller hands over
/// complete lines, newest first, one chunk at a time (the rows of an OpenClaw SQLite store
/// read in descending `seq`, `clawctx.history.store`).
pub trait LineSource: Send {
    /// The complete lines just before those handed over so far, in file order, each ended by
    /// `"\n"`: about `hint` bytes (at least one line), or `None` when none are left. The
    /// session header is not one of them (it is given to
    /// [`LeafContextReader::from_source`](super::LeafContextReader::from_source)).
    fn older_lines(&mut self, hint: usize) -> Result<Option<Vec<u8>>>;

    /// Called for each line of the chunk just handed over that the reader skips or salvages
    /// (`line` is 1-based within that chunk; `reason` says what is wrong). An `Err` ends the
    /// read with it; `Ok` reads on with the damage salvaged, as a file read does.
    fn damaged(&mut self, line: usize, reason: &str) -> Result<()>;
}

/// Reads lines a [`LineSource`] hands over, in chunks that double up to the largest read,
/// parsed exactly as [`BackReader`] parses a file's chunks.
pub(super) struct PulledReader {
    source: Box<dyn LineSource>,
    next_chunk: usize,
    max_chunk: usize,
    pub(super) bytes_read: u64,
    exhausted: bool,
}

impl std::fmt::Debug for PulledReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PulledReader")
            .field("bytes_read", &self.bytes_read)
            .field("exhausted", &self.exhausted)
            .finish_non_exhaustive()
    }
}

impl PulledReader {
    pub(super) fn new(source: Box<dyn LineSource>, options: &TailOptions) -> PulledReader {
        PulledReader {
            source,
            next_chunk: options.first_chunk.max(1),
            max_chunk: options.max_chunk.max(options.first_chunk).max(1),
            bytes_read: 0,
            exhausted: false,
        }
    }
}

impl Backward for PulledReader {
    fn read_chunk(&mut self) -> Result<Vec<Entry>> {
        if self.exhausted {
            return Ok(Vec::new());
        }
        let Some(bytes) = self.source.older_lines(self.next_chunk)? else {
            self.exhausted = true;
            return Ok(Vec::new());
        };
        self.bytes_read += bytes.len() as u64;
        self.next_chunk = self.next_chunk.saturating_mul(2).min(self.max_chunk);
        let scan = scan_records(Arc::from(bytes), 1, false);
        for skipped in &scan.skipped {
            if matches!(skipped.action, LineAction::Skipped | LineAction::Salvaged) {
                self.source.damaged(skipped.line, &skipped.reason)?;
            }
        }
        let mut records = scan.records;
        records.retain(|r| !r.is_type(types::SESSION));
        Ok(records)
    }

    fn at_header(&self) -> bool {
        self.exhausted
    }
}

/// The header record of a source's session when a backward read can start from it (a valid
/// v3 header alone on its line), as [`find_header_end`] checks a file's; `None` when only a
/// full open gets what [`Session::open`](crate::Session::open) gets.
pub(super) fn checked_header(line: &[u8]) -> Option<Entry> {
    let scan = scan_records(Arc::from(line), 1, false);
    let first = scan.records.first()?;
    let usable = scan.records.len() == 1
        && scan.skipped.is_empty()
        && is_valid_header(first)
        && Header::from_record(first.clone()).version() >= CURRENT_SESSION_VERSION;
    usable.then(|| first.clone())
}

/// The backward walk over a file whose header checked out.
#[derive(Debug)]
pub(super) struct TailWalk<R = BackReader> {
    pub(super) reader: R,
    pub(super) file_len: u64,
    /// Entries in the order read: the last entry of the file first.
    pub(super) entries: Vec<Entry>,
    /// id → first entry read with it (the file's last).
    index: IdIndex,
    /// The path from the leaf towards the root, as far as walked.
    walk: Vec<usize>,
    /// `on_walk[i]`: entry `i` is on the walk (a flag per entry read, not a hash set: a walk
    /// can be millions of entries long).
    on_walk: Vec<bool>,
    /// The root was reached, or a parent is missing, or the path would repeat an entry (the
    /// same ends as [`super::tree::path_to_root`]).
    walk_done: bool,
    pub(super) facts: PathFacts,
    pub(super) messages: Vec<Message>,
}

impl TailWalk {
    pub(super) fn new(
        path: &Path,
        file: fs::File,
        file_len: u64,
        header_end: u64,
        options: &TailOptions,
    ) -> TailWalk {
        let reader = BackReader::new(path, file, file_len, header_end, options);
        TailWalk::over(reader, file_len)
    }
}

impl<R: Backward> TailWalk<R> {
    /// A walk over what `reader` reads (`file_len`: the bytes it can read at most).
    pub(super) fn over(reader: R, file_len: u64) -> TailWalk<R> {
        TailWalk {
            reader,
            file_len,
            entries: Vec::new(),
            index: IdIndex::default(),
            walk: Vec::new(),
            on_walk: Vec::new(),
            walk_done: false,
            facts: PathFacts::default(),
            messages: Vec::new(),
        }
    }

    pub(super) fn messages_settled(&self) -> bool {
        self.facts.messages_from.is_some()
    }

    /// Reads chunks and walks on until `settled` or the walk ends.
    pub(super) fn read_until(&mut self, settled: impl Fn(&TailWalk<R>) -> bool) -> Result<()> {
        self.advance();
        while !self.walk_done && !settled(self) {
            self.read_chunk()?;
            self.advance();
        }
        Ok(())
    }

    /// Reads the lines before the part read and indexes them (newest first).
    fn read_chunk(&mut self) -> Result<()> {
        let records = self.reader.read_chunk()?;
        self.index.reserve(&self.entries, records.len());
        for record in records.into_iter().rev() {
            // Read newest first: the first entry read with an id is the file's last.
            self.entries.push(record);
            self.index
                .insert(&self.entries, self.entries.len() - 1, false);
        }
        Ok(())
    }

    /// Walks up the parents as far as the entries read allow.
    fn advance(&mut self) {
        let everything_read = self.reader.at_header();
        if self.walk.is_empty() {
            if self.entries.is_empty() {
                self.walk_done = everything_read;
                return;
            }
            // The leaf: the file's last entry (`_buildIndex`).
            self.visit(0);
        }
        while !self.walk_done {
            let tip = *self.walk.last().expect("the walk has its leaf");
            let parent = self.entries[tip]
                .parent_id
                .as_deref()
                .filter(|p| !p.is_empty());
            let Some(parent) = parent else {
                self.walk_done = true;
                break;
            };
            match self.index.get(&self.entries, parent) {
                Some(j) if self.on_walk.get(j).copied().unwrap_or(false) => {
                    self.walk_done = true;
                }
                Some(j) => self.visit(j),
                None => {
                    self.walk_done = everything_read;
                    break;
                }
            }
        }
        if self.walk_done && self.facts.messages_from.is_none() && !self.walk.is_empty() {
            // No compaction, or its first kept entry is not on the path: the whole path.
            self.facts.messages_from = Some(self.walk.len() - 1);
        }
    }

    /// Adds entry `i` to the walk and notes what it settles (the model and the
    /// latest compaction, as `buildSessionContext` reads them).
    fn visit(&mut self, i: usize) {
        let position = self.walk.len();
        self.walk.push(i);
        if self.on_walk.len() <= i {
            self.on_walk.resize(self.entries.len().max(i + 1), false);
        }
        self.on_walk[i] = true;
        self.facts.note(&self.entries[i], i, position);
    }

    /// Builds the messages from the walk (once, after they are settled).
    pub(super) fn settle_messages(&mut self) {
        let Some(from) = self.facts.messages_from else {
            return;
        };
        let path: Vec<usize> = self.walk[..=from].iter().rev().copied().collect();
        self.messages = ContextState::for_path(&self.entries, &path).messages;
    }

    pub(super) fn thinking_level(&self) -> Value {
        self.facts.thinking_level(&self.entries)
    }

    pub(super) fn to_context(&self) -> SessionContext {
        if self.walk.is_empty() {
            return SessionContext::empty();
        }
        ContextState {
            leaf: self.walk[0],
            thinking_level: self.thinking_level(),
            model_source: self.facts.model_source,
            messages: self.messages.clone(),
        }
        .to_context(&self.entries)
    }
}

/// The end of a session file, read for a cold [`Session`] (`Session::open_cold`).
#[derive(Debug)]
pub(super) struct ColdStart {
    pub header: Entry,
    /// The entries read, in file order.
    pub entries: Vec<Entry>,
    pub reader: BackReader,
    pub file_len: u64,
    /// The offset after the last complete line (where `refresh` continues).
    pub complete_len: u64,
    /// Up to 64 bytes before `complete_len`, as a full open keeps them.
    pub probe: Vec<u8>,
    pub identity: Option<FileIdentity>,
}

/// Reads the end of the file until the last entry's messages are settled. `None` when the file
/// must be opened in full (see the module docs) or when the walk read every line anyway.
pub(super) fn cold_start(path: &Path, options: &TailOptions) -> Result<Option<ColdStart>> {
    let file = open_session_file(path, Access::Read)?;
    let identity = file_identity(&file);
    let file_len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    let Some((header_end, header)) =
        find_header_end(&file, file_len).map_err(|e| Error::io(path, e))?
    else {
        return Ok(None);
    };
    if file_len <= WHOLE_FILE_CHECK_LEN
        && !has_context_boundary(
            &read_shared_at(&file, 0, file_len as usize).map_err(|e| Error::io(path, e))?,
        )
    {
        // The walk would reach the header (nothing bounds the context) and the full open
        // read every line again: a small file without a boundary is opened in full at once.
        return Ok(None);
    }
    let mut walk = TailWalk::new(path, file, file_len, header_end, options);
    walk.read_until(TailWalk::messages_settled)?;
    if walk.reader.at_header() || walk.entries.is_empty() {
        return Ok(None);
    }
    let complete_len = last_line_end(&walk.reader, file_len).map_err(|e| Error::io(path, e))?;
    let probe_start = complete_len.saturating_sub(TAIL_PROBE_LEN as u64);
    let probe = read_shared_at(
        &walk.reader.file,
        probe_start as usize,
        (complete_len - probe_start) as usize,
    )
    .map_err(|e| Error::io(path, e))?
    .to_vec();
    let mut entries = walk.entries;
    entries.reverse();
    Ok(Some(ColdStart {
        header,
        entries,
        reader: walk.reader,
        file_len,
        complete_len,
        probe,
        identity,
    }))
}

/// Files up to this size are searched whole for a context boundary before a cold open walks
/// back from their end (a search costs about a tenth of the walk over the same bytes).
const WHOLE_FILE_CHECK_LEN: u64 = 4 << 20;

/// Whether `bytes` may hold a compaction or reset entry: the `"type"` member JSON.stringify
/// writes for one. Inside a string value the quotes would be escaped, so text that mentions
/// one does not count; a file that spells it with other spacing is opened in full (the same
/// session, read a little slower).
pub(super) fn has_context_boundary(bytes: &[u8]) -> bool {
    memchr::memmem::find(bytes, br#""type":"compaction""#).is_some()
        || memchr::memmem::find(bytes, br#""type":"reset""#).is_some()
}

/// The offset after the file's last `"\n"` (the header's line ends with one).
fn last_line_end(reader: &BackReader, file_len: u64) -> std::io::Result<u64> {
    const PIECE: u64 = 64 << 10;
    let mut end = file_len;
    while end > reader.header_end {
        let start = end.saturating_sub(PIECE).max(reader.header_end);
        let bytes = read_shared_at(&reader.file, start as usize, (end - start) as usize)?;
        if let Some(p) = memchr::memrchr(b'\n', &bytes) {
            return Ok(start + p as u64 + 1);
        }
        end = start;
    }
    Ok(reader.header_end)
}

/// What a walk from the leaf towards the root settles, entry by entry, as pi's
/// `buildSessionContext` (pi-mono 0.58.3 `session-manager.ts`) reads a path: where the
/// context's messages start (at the latest compaction's or reset's first kept entry) and which entries
/// give the thinking level and the model. Both the backward reader and a cold session's walk
/// note their entries here, so the two read a path by the same rules.
#[derive(Debug, Default)]
pub(super) struct PathFacts {
    /// The latest boundary on the path (a compaction or a reset) was reached.
    compaction_seen: bool,
    /// Its `firstKeptEntryId`, while the walk has not reached that entry.
    first_kept: Option<String>,
    /// Walk position of the oldest entry whose message belongs to the context.
    messages_from: Option<usize>,
    pub(super) thinking_source: Option<usize>,
    pub(super) model_source: Option<usize>,
}

impl PathFacts {
    /// Notes `entry` (index `i` of the entries), reached at walk `position`.
    fn note(&mut self, entry: &Entry, i: usize, position: usize) {
        if !self.compaction_seen && entry.is_boundary() {
            self.compaction_seen = true;
            self.first_kept = entry
                .field("firstKeptEntryId")
                .and_then(Value::as_str)
                .map(str::to_owned);
            if self.first_kept.is_none() {
                // Nothing before the boundary can match: it is the context's start.
                self.messages_from = Some(position);
            }
        } else if self.messages_from.is_none()
            && self.first_kept.is_some()
            && entry.id.as_deref() == self.first_kept.as_deref()
        {
            self.messages_from = Some(position);
        }
        if self.thinking_source.is_none() && entry.is_type(types::THINKING_LEVEL_CHANGE) {
            self.thinking_source = Some(i);
        }
        let is_assistant = entry.is_type(types::MESSAGE)
            && entry
                .message()
                .is_some_and(|m| m.role.as_deref() == Some("assistant"));
        if self.model_source.is_none() && (entry.is_type(types::MODEL_CHANGE) || is_assistant) {
            self.model_source = Some(i);
        }
    }

    /// The thinking level the path gives (`"off"` without a change).
    fn thinking_level(&self, entries: &[Entry]) -> Value {
        match self.thinking_source {
            Some(i) => entries[i]
                .field("thinkingLevel")
                .cloned()
                .unwrap_or(Value::Null),
            None => Value::from("off"),
        }
    }
}

/// The path from a leaf through the entries a cold [`Session`] holds (a suffix of the file's
/// entries, then those refreshed or appended), and what it settles of the leaf's context:
/// the same rules as the backward walk of [`LeafContextReader`].
#[derive(Debug)]
pub(super) struct LoadedPath {
    /// Leaf first.
    path: Vec<usize>,
    /// The walk stopped at a parent id that is not held (it may be in the unread part).
    open: bool,
    facts: PathFacts,
}

impl LoadedPath {
    pub(super) fn walk(entries: &[Entry], index: &IdIndex, leaf: usize) -> LoadedPath {
        let mut walk = LoadedPath {
            path: Vec::new(),
            open: false,
            facts: PathFacts::default(),
        };
        let mut on_walk = vec![false; entries.len()];
        let mut current = leaf;
        loop {
            let position = walk.path.len();
            walk.path.push(current);
            on_walk[current] = true;
            let entry = &entries[current];
            walk.facts.note(entry, current, position);
            let Some(parent) = entry.parent_id.as_deref().filter(|p| !p.is_empty()) else {
                break;
            };
            match index.get(entries, parent) {
                Some(j) if on_walk[j] => break,
                Some(j) => current = j,
                None => {
                    walk.open = true;
                    break;
                }
            }
        }
        if !walk.open && walk.facts.messages_from.is_none() {
            walk.facts.messages_from = Some(walk.path.len() - 1);
        }
        walk
    }

    /// Whether the entries held settle the messages (and, unless `messages_only`, the
    /// thinking level and model).
    pub(super) fn settled(&self, messages_only: bool) -> bool {
        !self.open
            || (self.facts.messages_from.is_some()
                && (messages_only
                    || (self.facts.thinking_source.is_some() && self.facts.model_source.is_some())))
    }

    /// The context (call when [`LoadedPath::settled`]; with `messages_only`, only its
    /// messages are meant).
    pub(super) fn to_context(&self, entries: &[Entry]) -> SessionContext {
        let from = self.facts.messages_from.unwrap_or(self.path.len() - 1);
        let root_first: Vec<usize> = self.path[..=from].iter().rev().copied().collect();
        ContextState {
            leaf: self.path[0],
            thinking_level: self.facts.thinking_level(entries),
            model_source: self.facts.model_source,
            messages: ContextState::for_path(entries, &root_first).messages,
        }
        .to_context(entries)
    }
}
