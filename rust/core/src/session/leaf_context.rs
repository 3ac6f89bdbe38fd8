//! The leaf's context read from the end of the file (pi-mono 0.58.3
//! `packages/coding-agent/src/core/session-manager.ts`, `buildSessionContext`), for callers
//! that need one request's messages and not the whole session.
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
//! - the messages are settled once the walk passes the latest compaction on the path and then
//!   reaches its `firstKeptEntryId` (or the compaction keeps nothing before it), or reaches
//!   the root;
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
//! the path lives there).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::context::{model_of, ContextState, LeafSelector, SessionContext};
use super::entry::{types, Entry};
use super::manager::{Header, OpenOptions, Session, CURRENT_SESSION_VERSION};
use super::persist::{file_identity, open_session_file, Access, FileIdentity};
use super::read::{is_valid_header, read_shared_at, scan_records, TAIL_PROBE_LEN};
use super::tree::IdIndex;
use crate::base::RandomIds;
use crate::base::{Error, Result};
use crate::transcript::{Message, Transcript};

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

/// A leaf's context, read from the end of a session file as far as needed.
#[derive(Debug)]
pub struct LeafContextReader {
    source: Source,
}

#[derive(Debug)]
enum Source {
    /// The file was opened in full (see the module docs for when).
    Loaded {
        context: SessionContext,
        file_len: u64,
    },
    Tail(Box<TailWalk>),
}

impl LeafContextReader {
    /// Reads the file from its end until the leaf's messages are settled.
    pub fn open(path: &Path, options: &TailOptions) -> Result<LeafContextReader> {
        let file = open_session_file(path, Access::Read)?;
        let file_len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        let source = match find_header_end(&file, file_len).map_err(|e| Error::io(path, e))? {
            Some((header_end, _)) => {
                let mut walk = TailWalk::new(path, file, file_len, header_end, options);
                walk.read_until(TailWalk::messages_settled)?;
                walk.settle_messages();
                Source::Tail(Box::new(walk))
            }
            None => {
                drop(file);
                let options = OpenOptions {
                    read_only: true,
                    ..OpenOptions::default()
                };
                let session = Session::open(path, &options, &mut RandomIds, 0)?;
                let context = session.context(LeafSelector::Last);
                Source::Loaded { context, file_len }
            }
        };
        Ok(LeafContextReader { source })
    }

    /// The messages of the leaf's context (settled when the reader was opened).
    pub fn messages(&self) -> Transcript {
        match &self.source {
            Source::Loaded { context, .. } => context.messages.clone(),
            Source::Tail(walk) => Transcript::from_messages(walk.messages.clone()),
        }
    }

    /// The thinking level on the path (`"off"` without a change), reading on if needed.
    pub fn thinking_level(&mut self) -> Result<Value> {
        match &mut self.source {
            Source::Loaded { context, .. } => Ok(context.thinking_level.clone()),
            Source::Tail(walk) => {
                walk.read_until(|w| w.facts.thinking_source.is_some())?;
                Ok(walk.thinking_level())
            }
        }
    }

    /// The model `{provider, modelId}` on the path, reading on if needed (only as far as the
    /// latest model change or assistant message, not to the thinking level).
    pub fn model(&mut self) -> Result<Option<Value>> {
        match &mut self.source {
            Source::Loaded { context, .. } => Ok(context.model.clone()),
            Source::Tail(walk) => {
                walk.read_until(|w| w.facts.model_source.is_some())?;
                Ok(walk.facts.model_source.map(|i| model_of(&walk.entries[i])))
            }
        }
    }

    /// The whole context, as [`Session::context`] builds it for the last entry.
    pub fn context(&mut self) -> Result<SessionContext> {
        match &mut self.source {
            Source::Loaded { context, .. } => Ok(context.clone()),
            Source::Tail(walk) => {
                walk.read_until(|w| {
                    w.facts.thinking_source.is_some() && w.facts.model_source.is_some()
                })?;
                Ok(walk.to_context())
            }
        }
    }

    /// Bytes of the file read so far (the whole file when it was opened in full).
    pub fn bytes_read(&self) -> u64 {
        match &self.source {
            Source::Loaded { file_len, .. } => *file_len,
            Source::Tail(walk) => walk.reader.bytes_read,
        }
    }

    /// The file's length when it was opened (appends after that are not read).
    pub fn file_len(&self) -> u64 {
        match &self.source {
            Source::Loaded { file_len, .. } => *file_len,
            Source::Tail(walk) => walk.file_len,
        }
    }

    /// Whether the file was opened in full instead of read from the end.
    pub fn read_in_full(&self) -> bool {
        matches!(self.source, Source::Loaded { .. })
    }
}

/// Where the entries start (the offset after the header's line), or `None` when the file must
/// be opened in full to get what [`Session::open`] gets.
fn find_header_end(file: &fs::File, file_len: u64) -> std::io::Result<Option<(u64, Entry)>> {
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
    bytes_read: u64,
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

/// The backward walk over a file whose header checked out.
#[derive(Debug)]
struct TailWalk {
    reader: BackReader,
    file_len: u64,
    /// Entries in the order read: the last entry of the file first.
    entries: Vec<Entry>,
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
    facts: PathFacts,
    messages: Vec<Message>,
}

impl TailWalk {
    fn new(
        path: &Path,
        file: fs::File,
        file_len: u64,
        header_end: u64,
        options: &TailOptions,
    ) -> TailWalk {
        TailWalk {
            reader: BackReader::new(path, file, file_len, header_end, options),
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

    fn messages_settled(&self) -> bool {
        self.facts.messages_from.is_some()
    }

    /// Reads chunks and walks on until `settled` or the walk ends.
    fn read_until(&mut self, settled: impl Fn(&TailWalk) -> bool) -> Result<()> {
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
    fn settle_messages(&mut self) {
        let Some(from) = self.facts.messages_from else {
            return;
        };
        let path: Vec<usize> = self.walk[..=from].iter().rev().copied().collect();
        self.messages = ContextState::for_path(&self.entries, &path).messages;
    }

    fn thinking_level(&self) -> Value {
        self.facts.thinking_level(&self.entries)
    }

    fn to_context(&self) -> SessionContext {
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
/// context's messages start (at the latest compaction's first kept entry) and which entries
/// give the thinking level and the model. Both the backward reader and a cold session's walk
/// note their entries here, so the two read a path by the same rules.
#[derive(Debug, Default)]
struct PathFacts {
    /// The latest compaction on the path was reached.
    compaction_seen: bool,
    /// Its `firstKeptEntryId`, while the walk has not reached that entry.
    first_kept: Option<String>,
    /// Walk position of the oldest entry whose message belongs to the context.
    messages_from: Option<usize>,
    thinking_source: Option<usize>,
    model_source: Option<usize>,
}

impl PathFacts {
    /// Notes `entry` (index `i` of the entries), reached at walk `position`.
    fn note(&mut self, entry: &Entry, i: usize, position: usize) {
        if !self.compaction_seen && entry.is_type(types::COMPACTION) {
            self.compaction_seen = true;
            self.first_kept = entry
                .field("firstKeptEntryId")
                .and_then(Value::as_str)
                .map(str::to_owned);
            if self.first_kept.is_none() {
                // Nothing before the compaction can match: it is the context's start.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// SplitMix64: a small deterministic generator (each failing case names its seed).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn chance(&mut self, percent: usize) -> bool {
            self.below(100) < percent
        }
    }

    const HEADER: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;

    /// One random record line: every entry type that matters to a context, ids drawn from a
    /// small pool (duplicates, parents after children, cycles), long texts now and then.
    fn random_entry(rng: &mut Rng, ids: &[String], serial: usize) -> String {
        let id = if rng.chance(10) && !ids.is_empty() {
            ids[rng.below(ids.len())].clone()
        } else {
            format!("e{serial}")
        };
        let parent = match rng.below(20) {
            0 => "null".to_owned(),
            1 => r#""missing""#.to_owned(),
            // The header's id: a second header must not become an entry.
            4 => r#""s1""#.to_owned(),
            2 => format!("\"{id}\""),
            3 if !ids.is_empty() => format!("\"{}\"", ids[rng.below(ids.len())]),
            _ => ids
                .last()
                .map_or_else(|| "null".to_owned(), |p| format!("\"{p}\"")),
        };
        let text = if rng.chance(5) {
            "x".repeat(rng.below(3000))
        } else {
            format!("text {serial} é 中")
        };
        let base = format!(
            r#""id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:{:02}.000Z""#,
            serial % 60
        );
        match rng.below(12) {
            0 => {
                let kept = match rng.below(4) {
                    0 => "null".to_owned(),
                    1 if !ids.is_empty() => format!("\"{}\"", ids[rng.below(ids.len())]),
                    2 => r#""nowhere""#.to_owned(),
                    _ => ids
                        .get(ids.len().saturating_sub(1 + rng.below(4)))
                        .map_or_else(|| "7".to_owned(), |k| format!("\"{k}\"")),
                };
                format!(
                    r#"{{"type":"compaction",{base},"summary":"sum {serial}","firstKeptEntryId":{kept},"tokensBefore":{serial}}}"#
                )
            }
            1 => format!(
                r#"{{"type":"thinking_level_change",{base},"thinkingLevel":"level{serial}"}}"#
            ),
            2 => format!(
                r#"{{"type":"model_change",{base},"provider":"p{serial}","modelId":"m{serial}"}}"#
            ),
            3 => format!(
                r#"{{"type":"branch_summary",{base},"fromId":"e1","summary":"{}"}}"#,
                if rng.chance(30) { "" } else { "branch" }
            ),
            4 => format!(
                r#"{{"type":"custom_message",{base},"customType":"c","content":"{text}","display":true}}"#
            ),
            5 => format!(r#"{{"type":"label",{base},"targetId":"e1","label":"l"}}"#),
            6 => format!(r#"{{"type":"custom",{base},"customType":"x","data":{{"n":{serial}}}}}"#),
            7 | 8 => format!(
                r#"{{"type":"message",{base},"message":{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"provider":"p{serial}","model":"m{serial}"}}}}"#
            ),
            _ => format!(
                r#"{{"type":"message",{base},"message":{{"role":"user","content":"{text}","timestamp":{serial}}}}}"#
            ),
        }
    }

    /// A random session file: mostly valid v3, with damage of every kind the loader salvages.
    fn random_file(rng: &mut Rng) -> Vec<u8> {
        let mut out = Vec::new();
        match rng.below(30) {
            0 => out.extend_from_slice(b"{\"type\":\"session\",\"version\":2,\"id\":\"s\"}\n"),
            1 => out.extend_from_slice(b"garbage\n"),
            2 => {}
            3 => out.extend_from_slice(format!("\n  \n{HEADER}\n").as_bytes()),
            4 => out.extend_from_slice(format!("{HEADER}{HEADER}\n").as_bytes()),
            _ => out.extend_from_slice(format!("{HEADER}\n").as_bytes()),
        }
        let mut ids: Vec<String> = Vec::new();
        for serial in 1..=rng.below(60) {
            let line = random_entry(rng, &ids, serial);
            if let Some(start) = line.find("\"id\":\"") {
                let id = &line[start + 6..];
                ids.push(id[..id.find('"').unwrap()].to_owned());
            }
            match rng.below(40) {
                // A torn write followed by the next record on the same line.
                0 => out.extend_from_slice(format!("{{\"type\":\"mess{line}").as_bytes()),
                1 => out.extend_from_slice(b"not json at all\n"),
                2 => out.extend_from_slice(b"\xff\xfe bad utf8\n"),
                3 => out.extend_from_slice(format!("{HEADER}\n").as_bytes()),
                4 => out.extend_from_slice(b"\r\n   \n"),
                5 => out.extend_from_slice(b"\xEF\xBB\xBF"),
                6 => out.extend_from_slice(b"\0\0\0\0"),
                _ => {}
            }
            out.extend_from_slice(line.as_bytes());
            out.extend_from_slice(if rng.chance(5) { b"\r\n" } else { b"\n" });
        }
        match rng.below(6) {
            0 => out.extend_from_slice(br#"{"type":"message","id":"torn","par"#),
            1 => {
                out.pop();
            }
            2 => out.extend_from_slice(format!("{HEADER}\n").as_bytes()),
            _ => {}
        }
        out
    }

    fn full_context(path: &Path) -> Result<SessionContext> {
        let options = OpenOptions {
            read_only: true,
            ..OpenOptions::default()
        };
        let session = Session::open(path, &options, &mut RandomIds, 0)?;
        Ok(session.context(LeafSelector::Last))
    }

    fn write_temp(bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        fs::write(&path, bytes).unwrap();
        (dir, path)
    }

    #[test]
    fn reading_from_the_end_builds_the_full_open_context() {
        for seed in 0..3000u64 {
            let mut rng = Rng(seed);
            let bytes = random_file(&mut rng);
            let options = TailOptions {
                first_chunk: 1 + rng.below(400),
                max_chunk: 1 + rng.below(2000),
            };
            let (_dir, path) = write_temp(&bytes);
            let expected = full_context(&path);
            let reader = LeafContextReader::open(&path, &options);
            let describe = || {
                format!(
                    "seed {seed}, {options:?}:\n{}",
                    String::from_utf8_lossy(&bytes)
                )
            };
            match (expected, reader) {
                (Ok(expected), Ok(mut reader)) => {
                    assert_eq!(reader.messages(), expected.messages, "{}", describe());
                    assert_eq!(
                        reader.thinking_level().unwrap(),
                        expected.thinking_level,
                        "{}",
                        describe()
                    );
                    assert_eq!(reader.context().unwrap(), expected, "{}", describe());
                    assert!(reader.bytes_read() <= 3 * bytes.len() as u64 + 65536);
                }
                (Err(_), Err(_)) => {}
                (expected, reader) => {
                    panic!("{}: {expected:?} vs {:?}", describe(), reader.map(|_| ()))
                }
            }
        }
    }

    fn message_line(id: &str, parent: &str, text: &str) -> String {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
        )
    }

    /// A long history, then a compaction keeping the last two turns: only the end is read.
    fn compacted_file(history: usize) -> String {
        let mut file = format!("{HEADER}\n");
        file.push_str(r#"{"type":"thinking_level_change","id":"t0","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","thinkingLevel":"high"}"#);
        file.push('\n');
        let mut parent = "\"t0\"".to_owned();
        for i in 0..history {
            file.push_str(&message_line(&format!("m{i}"), &parent, &"old ".repeat(50)));
            file.push('\n');
            parent = format!("\"m{i}\"");
        }
        let kept = history - 2;
        file.push_str(&format!(
            r#"{{"type":"compaction","id":"c","parentId":{parent},"timestamp":"2026-01-01T00:00:00.000Z","summary":"s","firstKeptEntryId":"m{kept}","tokensBefore":9}}"#
        ));
        file.push('\n');
        file.push_str(&message_line("new", "\"c\"", "latest"));
        file.push('\n');
        file
    }

    #[test]
    fn a_compacted_session_is_read_only_back_to_the_first_kept_entry() {
        let file = compacted_file(2000);
        let (_dir, path) = write_temp(file.as_bytes());
        let options = TailOptions {
            first_chunk: 1024,
            max_chunk: 4096,
        };
        let mut reader = LeafContextReader::open(&path, &options).unwrap();
        assert!(!reader.read_in_full());
        let messages = reader.messages();
        assert_eq!(messages.len(), 4, "summary, two kept, the latest");
        assert!(
            reader.bytes_read() < 4096,
            "read {} of {}",
            reader.bytes_read(),
            file.len()
        );
        assert_eq!(reader.file_len(), file.len() as u64);
        // The thinking level was set at the start: asking for it reads the rest.
        assert_eq!(reader.thinking_level().unwrap(), Value::from("high"));
        assert!(reader.bytes_read() >= (file.len() - HEADER.len()) as u64);
        assert_eq!(reader.context().unwrap(), full_context(&path).unwrap());
    }

    #[test]
    fn a_line_longer_than_the_chunks_is_read_whole() {
        let mut file = format!("{HEADER}\n");
        file.push_str(&message_line("a", "null", &"long ".repeat(5000)));
        file.push('\n');
        file.push_str(&message_line("b", "\"a\"", "short"));
        file.push('\n');
        let (_dir, path) = write_temp(file.as_bytes());
        let options = TailOptions {
            first_chunk: 16,
            max_chunk: 64,
        };
        let reader = LeafContextReader::open(&path, &options).unwrap();
        assert_eq!(reader.messages(), full_context(&path).unwrap().messages);
        assert_eq!(reader.messages().len(), 2);
    }

    #[test]
    fn files_a_full_open_must_handle_are_opened_in_full() {
        let migrated = "{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"v1\"}}\n";
        let bom = format!("\u{feff}{HEADER}\n{}\n", message_line("a", "null", "x"));
        for file in [migrated, bom.as_str()] {
            let (_dir, path) = write_temp(file.as_bytes());
            let mut reader = LeafContextReader::open(&path, &TailOptions::default()).unwrap();
            assert!(reader.read_in_full(), "{file}");
            assert_eq!(reader.context().unwrap(), full_context(&path).unwrap());
            assert_eq!(reader.messages().len(), 1);
        }
        let (_dir, path) = write_temp(b"");
        assert!(matches!(
            LeafContextReader::open(&path, &TailOptions::default()),
            Err(Error::Format { .. })
        ));
        let missing = _dir.path().join("missing.jsonl");
        assert!(matches!(
            LeafContextReader::open(&missing, &TailOptions::default()),
            Err(Error::NotFound { .. })
        ));
    }

    fn texts(session: &Session) -> Vec<String> {
        session
            .records()
            .iter()
            .map(|e| e.text.as_str().to_owned())
            .collect()
    }

    #[test]
    fn a_cold_session_reads_refreshes_and_loads_like_a_full_one() {
        let read_only = OpenOptions {
            read_only: true,
            ..OpenOptions::default()
        };
        for seed in 0..1500u64 {
            let mut rng = Rng(seed);
            let bytes = random_file(&mut rng);
            let tail = TailOptions {
                first_chunk: 1 + rng.below(300),
                max_chunk: 1 + rng.below(1000),
            };
            let (_dir, path) = write_temp(&bytes);
            let describe = || {
                format!(
                    "seed {seed}, {tail:?}:\n{}",
                    String::from_utf8_lossy(&bytes)
                )
            };
            let full = Session::open(&path, &read_only, &mut RandomIds, 0);
            let cold = Session::open_cold_with(&path, &read_only, &tail, &mut RandomIds, 0);
            let (mut full, mut cold) = match (full, cold) {
                (Ok(full), Ok(cold)) => (full, cold),
                (Err(_), Err(_)) => continue,
                (full, cold) => panic!("{}: {full:?} vs {cold:?}", describe()),
            };
            let expected = full.context(LeafSelector::Last);
            let messages = cold.leaf_context(None, true).unwrap().messages;
            assert_eq!(messages, expected.messages, "{}", describe());
            assert_eq!(cold.leaf_id(), full.leaf_id(), "{}", describe());
            assert_eq!(
                cold.leaf_context(None, false).unwrap(),
                expected,
                "{}",
                describe()
            );
            // Another writer appends a child of the leaf; both refresh the same way.
            let leaf = full
                .leaf_id()
                .map_or("null".to_owned(), |l| format!("\"{l}\""));
            let line = format!("\n{}\n", message_line("appended", &leaf, "later"));
            let mut file = fs::OpenOptions::new().append(true).open(&path).unwrap();
            std::io::Write::write_all(&mut file, line.as_bytes()).unwrap();
            let report = full.refresh(&mut RandomIds, 0).unwrap();
            assert_eq!(
                cold.refresh(&mut RandomIds, 0).unwrap(),
                report,
                "{}",
                describe()
            );
            let expected = full.context(LeafSelector::Last);
            assert_eq!(
                cold.leaf_context(None, false).unwrap(),
                expected,
                "{}",
                describe()
            );
            // Anything about the past loads the file in full.
            let loaded = cold.load_past().unwrap();
            assert!(!cold.is_cold());
            assert_eq!(texts(&cold), texts(&full), "{}", describe());
            assert_eq!(cold.labels(), full.labels(), "{}", describe());
            // Loaded now, the lines skipped are those of a fresh open (an incremental refresh
            // reports a torn line it reads again in its own way).
            let fresh = Session::open(&path, &read_only, &mut RandomIds, 0).unwrap();
            let skipped = if loaded { &fresh } else { &full }.skipped_lines();
            assert_eq!(cold.skipped_lines(), skipped, "{}", describe());
            assert_eq!(cold.leaf_id(), full.leaf_id(), "{}", describe());
        }
    }

    #[test]
    fn a_cold_session_appends_as_a_full_one_and_moves_its_leaf() {
        let file = compacted_file(3000);
        let (_dir, path) = write_temp(file.as_bytes());
        let (_other_dir, other) = write_temp(file.as_bytes());
        let tail = TailOptions {
            first_chunk: 1024,
            max_chunk: 4096,
        };
        let options = OpenOptions::default();
        let mut cold = Session::open_cold_with(&path, &options, &tail, &mut RandomIds, 0).unwrap();
        let mut full = Session::open(&other, &options, &mut RandomIds, 0).unwrap();
        assert!(cold.is_cold());
        assert!(cold.cold_bytes_read().unwrap() < 8192);
        // An id used only in the unread part is not free for an append.
        assert!(cold.unread_holds_id("m5").unwrap());
        assert!(!cold.unread_holds_id("fresh").unwrap());
        for session in [&mut cold, &mut full] {
            let mut ids = crate::base::SequentialIds::new(1);
            session.branch("c").unwrap();
            let message = serde_json::json!({"role": "user", "content": "again"});
            session
                .append_with_id(super::super::NewEntry::Message(message), "n1".into(), 7)
                .unwrap();
            let level = super::super::NewEntry::ThinkingLevelChange("low".into());
            session.append(level, &mut ids, 8).unwrap();
        }
        assert!(cold.is_cold());
        assert!(fs::read(&path).unwrap() == fs::read(&other).unwrap());
        assert_eq!(
            cold.leaf_context(None, false).unwrap(),
            full.context(LeafSelector::Last)
        );
        cold.branch("m10").unwrap();
        full.branch("m10").unwrap();
        assert!(!cold.is_cold(), "an old id loads the past");
        assert_eq!(cold.leaf_id(), Some("m10"));
        assert_eq!(texts(&cold), texts(&full));
    }
}
