//! Reading a session file into records: the whole file or a byte range into one shared
//! buffer, split into lines (on all cores for large files), each line parsed or salvaged, and
//! what the loader did with the lines it could not take as they were. Used by the loaded
//! [`Session`](super::Session) and by the reader from the end (`leaf_context`).

use std::collections::HashMap;
use std::fs;
use std::path::Path;
use std::sync::Arc;

use super::entry::{types, Entry};
use super::lines::{
    clean_text, is_blank, nested_deeper_than, salvage_line, split_lines, too_deep_reason, Line,
    MAX_RECORD_DEPTH,
};
use super::persist::{open_session_file, Access};
use crate::base::{Error, JsonText, Result};

/// What the loader did with a line it could not take as it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineAction {
    /// Nothing in the line could be used.
    Skipped,
    /// Some records were recovered from the line; the rest was dropped.
    Salvaged,
    /// The line was read after a lossless-enough fix (BOM, invalid UTF-8, lone surrogates).
    Sanitized,
    /// A valid record the session does not use (a second session header).
    Ignored,
}

impl LineAction {
    pub fn as_str(self) -> &'static str {
        match self {
            LineAction::Skipped => "skipped",
            LineAction::Salvaged => "salvaged",
            LineAction::Sanitized => "sanitized",
            LineAction::Ignored => "ignored",
        }
    }
}

crate::base::python_class! {
    (name = "SkippedLine", module = "clawctx._core.session")
    /// A line the loader skipped or had to fix (`action`: skipped, salvaged, sanitized, ignored).
    // Its Python attributes are the getters in `read_py.rs` (`action` as its name).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct SkippedLine {
        /// The 1-based line number in the file.
        pub line: usize,
        pub action: LineAction,
        pub reason: String,
        /// Records recovered from the line.
        pub records: usize,
    }
}

/// The parsed records of a file before the header check.
pub(crate) struct Scan {
    pub(crate) records: Vec<Entry>,
    pub(crate) skipped: Vec<SkippedLine>,
    pub(crate) lines: usize,
    pub(crate) has_content: bool,
    /// Bytes up to and including the last `"\n"` (what later reads continue after).
    pub(crate) complete_len: usize,
    /// Line number of the last `"\n"`-terminated line.
    pub(crate) complete_lines: usize,
}

/// Reads a whole file into a shared buffer without an intermediate copy (the file is the
/// largest allocation a session makes; copying it would double the peak memory). Large files
/// are read in two halves on two cores (most of a read's time is the kernel mapping fresh
/// pages and copying into them).
/// The file is opened by [`open_session_file`] (regular files only, never blocking).
pub(crate) fn read_shared(path: &Path) -> Result<(Arc<[u8]>, fs::File)> {
    let file = open_session_file(path, Access::Read)?;
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    let bytes = read_shared_at(&file, 0, len).map_err(|e| Error::io(path, e))?;
    Ok((bytes, file))
}

/// [`read_shared`] of the `len` bytes of `file` from `offset` (fewer when the file ends
/// sooner).
pub(crate) fn read_shared_at(
    file: &fs::File,
    offset: usize,
    len: usize,
) -> std::io::Result<Arc<[u8]>> {
    if len == 0 {
        return Ok(Arc::from(Vec::new()));
    }
    // Allocate the shared buffer itself (`Arc::from(Vec)` would copy the whole file once
    // more), zero it (no reading into uninitialized memory) and read into it.
    let mut uninit = Arc::<[u8]>::new_uninit_slice(len);
    let target = Arc::get_mut(&mut uninit).expect("a new Arc is unique");
    let filled = if cfg!(unix) && len >= PARALLEL_SCAN_MIN_BYTES && rayon::current_num_threads() > 1
    {
        let (first, second) = target.split_at_mut(len / 2);
        let (first_filled, second_filled) = rayon::join(
            || zero_and_read_at(file, first, offset),
            || zero_and_read_at(file, second, offset + len / 2),
        );
        let first_filled = first_filled?;
        if first_filled < len / 2 {
            first_filled
        } else {
            len / 2 + second_filled?
        }
    } else {
        zero_and_read_at(file, target, offset)?
    };
    // SAFETY: `zero_and_read_at` initialized every element.
    let mut buf = unsafe { uninit.assume_init() };
    if filled < len {
        // The file shrank while we read: keep what was there.
        buf = Arc::from(&buf[..filled]);
    }
    Ok(buf)
}

/// Zeroes `target`, then [`read_fully_at`] into it.
fn zero_and_read_at(
    file: &fs::File,
    target: &mut [std::mem::MaybeUninit<u8>],
    offset: usize,
) -> std::io::Result<usize> {
    for byte in target.iter_mut() {
        byte.write(0);
    }
    // SAFETY: every element was initialized just above; `MaybeUninit<u8>` and `u8` have the
    // same layout.
    let target =
        unsafe { std::slice::from_raw_parts_mut(target.as_mut_ptr().cast(), target.len()) };
    read_fully_at(file, target, offset)
}

/// Reads `target.len()` bytes of `file` from `offset`, or up to the end of the file; returns
/// how many were read. (Outside Unix through the file's cursor: not for concurrent use.)
fn read_fully_at(file: &fs::File, target: &mut [u8], offset: usize) -> std::io::Result<usize> {
    #[cfg(not(unix))]
    {
        use std::io::{Seek, SeekFrom};
        let mut file = file;
        file.seek(SeekFrom::Start(offset as u64))?;
    }
    let mut filled = 0;
    while filled < target.len() {
        #[cfg(unix)]
        let read = std::os::unix::fs::FileExt::read_at(
            file,
            &mut target[filled..],
            (offset + filled) as u64,
        );
        #[cfg(not(unix))]
        let read = std::io::Read::read(&mut &*file, &mut target[filled..]);
        match read {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Reinterprets a buffer as `Arc<str>` without copying it.
///
/// # Safety
/// `bytes` must be valid UTF-8.
unsafe fn into_shared_str(bytes: Arc<[u8]>) -> Arc<str> {
    debug_assert!(std::str::from_utf8(&bytes).is_ok());
    // SAFETY: `str` and `[u8]` have the same layout and the caller guarantees valid UTF-8; the
    // Arc's allocation and reference count are carried over unchanged.
    unsafe { Arc::from_raw(Arc::into_raw(bytes) as *const str) }
}

/// Files at least this large are validated and parsed on all cores, in chunks cut after line
/// ends (each line is parsed on its own, so the chunks are independent).
const PARALLEL_SCAN_MIN_BYTES: usize = 4 << 20;

/// Splits a file (or an appended chunk, numbered from `first_line`) into records. Clean lines
/// become slices of one shared buffer; damaged lines go through [`salvage_line`]. With
/// `tail_pending`, an unterminated last line that does not parse is left alone (a writer is
/// probably still writing it; it is read once complete) instead of being salvaged.
pub(crate) fn scan_records(bytes: Arc<[u8]>, first_line: usize, tail_pending: bool) -> Scan {
    // Eight chunks per thread: the chunks' records are moved into the first chunk's vector one
    // chunk at a time, so at the peak the records exist once plus one chunk's worth (with one
    // chunk per thread, half of them twice).
    let parts = if bytes.len() >= PARALLEL_SCAN_MIN_BYTES {
        rayon::current_num_threads() * 8
    } else {
        1
    };
    scan_records_in_parts(bytes, first_line, tail_pending, parts)
}

/// [`scan_records`] in up to `parts` chunks on rayon's pool.
fn scan_records_in_parts(
    bytes: Arc<[u8]>,
    first_line: usize,
    tail_pending: bool,
    parts: usize,
) -> Scan {
    use rayon::prelude::*;
    let chunks = line_chunks(&bytes, parts);
    let valid_utf8 = if chunks.len() > 1 {
        chunks
            .par_iter()
            .all(|range| simdutf8::basic::from_utf8(&bytes[range.clone()]).is_ok())
    } else {
        simdutf8::basic::from_utf8(&bytes).is_ok()
    };
    if valid_utf8 {
        // SAFETY: just validated.
        let buf: Arc<str> = unsafe { into_shared_str(bytes) };
        if chunks.len() == 1 {
            return scan_lines(
                &buf,
                0..buf.len(),
                first_line,
                tail_pending,
                &HashMap::new(),
            );
        }
        let last = chunks.len() - 1;
        let parts: Vec<Scan> = chunks
            .into_par_iter()
            .enumerate()
            .map(|(k, range)| {
                scan_lines(&buf, range, 1, tail_pending && k == last, &HashMap::new())
            })
            .collect();
        let total: usize = parts.iter().map(|part| part.records.len()).sum();
        let mut parts = parts.into_iter();
        let mut scan = parts.next().expect("at least one chunk");
        scan.records.reserve_exact(total - scan.records.len());
        scan.renumber(first_line - 1);
        for part in parts {
            scan.append(part);
        }
        return scan;
    }
    // Keep invalid UTF-8 lines aside and blank them in the buffer, so the buffer is valid
    // UTF-8 with unchanged offsets and every clean line can be a zero-copy slice.
    let mut bytes = bytes;
    let mut invalid: HashMap<usize, Vec<u8>> = HashMap::new();
    let spans: Vec<(usize, usize, usize)> = split_lines(&bytes)
        .filter(|l| std::str::from_utf8(l.bytes).is_err())
        .map(|l| (l.number, l.offset, l.bytes.len()))
        .collect();
    let target = match Arc::get_mut(&mut bytes) {
        Some(target) => target,
        None => {
            bytes = Arc::from(&bytes[..]);
            Arc::get_mut(&mut bytes).expect("a new Arc is unique")
        }
    };
    for (number, offset, len) in spans {
        invalid.insert(number, target[offset..offset + len].to_vec());
        target[offset..offset + len].fill(b' ');
    }
    // SAFETY: every invalid line was blanked with spaces above (the other lines are valid on
    // their own and line breaks are ASCII).
    let buf: Arc<str> = unsafe { into_shared_str(bytes) };
    scan_lines(&buf, 0..buf.len(), first_line, tail_pending, &invalid)
}

/// Up to `parts` ranges covering `bytes`, each but the last ending just after a `\n`, of about
/// equal size.
fn line_chunks(bytes: &[u8], parts: usize) -> Vec<std::ops::Range<usize>> {
    let mut chunks = Vec::with_capacity(parts);
    let mut start = 0;
    for k in 1..parts {
        let target = (bytes.len() / parts * k).max(start);
        match memchr::memchr(b'\n', &bytes[target..]) {
            Some(pos) if target + pos + 1 < bytes.len() => {
                chunks.push(start..target + pos + 1);
                start = target + pos + 1;
            }
            _ => break,
        }
    }
    chunks.push(start..bytes.len());
    chunks
}

/// [`scan_records`] of the lines in `range` of `buf` (which starts a line), numbered from
/// `first_line`; `invalid` holds the original bytes of lines blanked for invalid UTF-8, by
/// number.
fn scan_lines(
    buf: &Arc<str>,
    range: std::ops::Range<usize>,
    first_line: usize,
    tail_pending: bool,
    invalid: &HashMap<usize, Vec<u8>>,
) -> Scan {
    let mut scan = Scan {
        records: Vec::new(),
        skipped: Vec::new(),
        lines: first_line - 1,
        has_content: false,
        complete_len: 0,
        complete_lines: first_line - 1,
    };
    for line in split_lines(&buf.as_bytes()[range.clone()]) {
        let original = invalid.get(&line.number);
        let line = Line {
            number: line.number + first_line - 1,
            offset: line.offset + range.start,
            ..line
        };
        scan.lines = line.number;
        if line.terminated {
            scan.complete_len = line.offset + line.bytes.len() + 1;
            scan.complete_lines = line.number;
        }
        if original.is_none() && is_blank(line.bytes) {
            continue;
        }
        scan.has_content = true;
        // Fast path: one parse per line; only lines that fail it go through salvage.
        if let Some(text) = clean_text(line.bytes).filter(|_| original.is_none()) {
            let start = text.as_ptr() as usize - buf.as_ptr() as usize;
            if let Some(entry) =
                Entry::parse(JsonText::slice(buf, start..start + text.len()), line.number)
            {
                // Inert records on consecutive lines are held as one run (never the first
                // record, which may be the header the caller checks).
                let absorbed = scan.records.len() >= 2
                    && scan
                        .records
                        .last_mut()
                        .is_some_and(|last| last.absorb_inert(&entry));
                if !absorbed {
                    scan.records.push(entry);
                }
                continue;
            }
            // Valid JSON nested too deep for the readers: skipped as a whole, not salvaged
            // (pieces of it are no records of their own). A last line still being written
            // waits, as below.
            if (line.terminated || !tail_pending)
                && nested_deeper_than(text.as_bytes(), MAX_RECORD_DEPTH)
            {
                scan.skipped.push(SkippedLine {
                    line: line.number,
                    action: LineAction::Skipped,
                    reason: too_deep_reason(),
                    records: 0,
                });
                continue;
            }
        }
        if tail_pending && !line.terminated {
            continue;
        }
        let salvage = salvage_line(original.map_or(line.bytes, Vec::as_slice));
        let count = salvage.records.len();
        let action = if count == 0 {
            LineAction::Skipped
        } else if salvage.damage.garbage_bytes > 0 {
            LineAction::Salvaged
        } else {
            LineAction::Sanitized
        };
        scan.skipped.push(SkippedLine {
            line: line.number,
            action,
            reason: salvage.damage.describe(),
            records: count,
        });
        scan.records.extend(
            salvage
                .records
                .into_iter()
                .filter_map(|r| Entry::parse(JsonText::owned(r), line.number)),
        );
    }
    // The last record stays on its own: it may become the leaf, which callers read as an entry.
    if let Some(last) = scan.records.last_mut().and_then(Entry::split_last_record) {
        scan.records.push(last);
    }
    scan
}

impl Scan {
    /// Adds `lines` to every line number.
    fn renumber(&mut self, lines: usize) {
        if lines == 0 {
            return;
        }
        for entry in &mut self.records {
            entry.line += lines;
        }
        for skipped in &mut self.skipped {
            skipped.line += lines;
        }
        self.lines += lines;
        self.complete_lines += lines;
    }

    /// Appends the scan of the lines right after this one's (numbered from 1).
    fn append(&mut self, mut next: Scan) {
        next.renumber(self.lines);
        // Exactly: `append`'s amortized growth could leave up to half of the largest vector of
        // an open (one record per line) unused.
        self.records.reserve_exact(next.records.len());
        self.records.append(&mut next.records);
        self.skipped.append(&mut next.skipped);
        self.lines = next.lines;
        self.has_content |= next.has_content;
        if next.complete_len > 0 {
            self.complete_len = next.complete_len;
            self.complete_lines = next.complete_lines;
        }
    }
}

pub(crate) fn is_valid_header(entry: &Entry) -> bool {
    entry.is_type(types::SESSION) && entry.id.is_some()
}

pub(crate) const TAIL_PROBE_LEN: usize = 64;

/// The up to 64 bytes before `end` in `bytes`.
pub(crate) fn probe_before(bytes: &[u8], end: usize) -> Vec<u8> {
    let end = end.min(bytes.len());
    bytes[end.saturating_sub(TAIL_PROBE_LEN)..end].to_vec()
}

/// Reads exactly `buf.len()` bytes of `file` from `offset`.
pub(crate) fn read_at(file: &fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    let offset = usize::try_from(offset).map_err(|_| std::io::ErrorKind::InvalidInput)?;
    if read_fully_at(file, buf, offset)? < buf.len() {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a scan found, comparable across ways of scanning: (line, text) of every record,
    /// the skipped lines, the line and byte counts, whether there was content.
    type Summary = (Vec<(usize, String)>, Vec<SkippedLine>, [usize; 3], bool);

    /// A small deterministic random source for the generated files.
    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    fn summary(scan: &Scan) -> Summary {
        let records = scan
            .records
            .iter()
            .flat_map(Entry::held_records)
            .map(|e| (e.line, e.text.as_str().to_owned()))
            .collect();
        let counts = [scan.lines, scan.complete_len, scan.complete_lines];
        (records, scan.skipped.clone(), counts, scan.has_content)
    }

    #[test]
    fn session_scan_in_parallel_chunks_matches_the_serial_scan() {
        let kinds = [
            r#"{"type":"message","id":"a1","parentId":null,"message":{"role":"user","content":"hi 中文"}}"#,
            r#"{"type":"model_change","id":"b2","parentId":"a1","provider":"x","modelId":"y"}"#,
            "",
            "   ",
            "not json at all",
            r#"{"type":"message","id":"torn","message":{"role":"assi"#,
            "\0\0\0\0{\"type\":\"label\",\"id\":\"c3\",\"parentId\":\"b2\"}",
            r#"{"type":"custom","id":"d4"}{"type":"custom","id":"e5"}"#,
            "{}",
            " {\"x\":1}\r",
            r#"{"type":"future"}"#,
        ];
        let mut next = xorshift(0x2545_F491_4F6C_DD1Du64);
        for round in 0..60 {
            let lines = (next() % 200) as usize;
            let mut text = String::new();
            for _ in 0..lines {
                text.push_str(kinds[(next() % kinds.len() as u64) as usize]);
                text.push('\n');
            }
            if round % 3 == 1 {
                // An unterminated last line, torn or whole.
                text.push_str(kinds[(next() % 2) as usize * 5]);
            }
            let bytes: Arc<[u8]> = Arc::from(text.as_bytes());
            for tail_pending in [false, true] {
                for first_line in [1, 7] {
                    let serial = scan_records_in_parts(bytes.clone(), first_line, tail_pending, 1);
                    for parts in [2, 3, 5, 8] {
                        let chunked =
                            scan_records_in_parts(bytes.clone(), first_line, tail_pending, parts);
                        assert_eq!(
                            summary(&chunked),
                            summary(&serial),
                            "round {round}, {parts} parts, tail pending {tail_pending}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn session_read_shared_reads_large_files_in_halves_exactly() {
        let dir = std::env::temp_dir().join(format!("clawctx-read-shared-{}", std::process::id()));
        fs::create_dir_all(&dir).expect("temp dir");
        for len in [
            0,
            1,
            4097,
            PARALLEL_SCAN_MIN_BYTES - 1,
            PARALLEL_SCAN_MIN_BYTES + 12_345,
        ] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + i / 4093) as u8).collect();
            let path = dir.join(format!("{len}.bin"));
            fs::write(&path, &bytes).expect("write");
            assert_eq!(
                &read_shared(&path).expect("read").0[..],
                &bytes[..],
                "{len} bytes"
            );
        }
        fs::remove_dir_all(&dir).expect("cleanup");
    }

    #[test]
    fn session_line_chunks_end_after_line_breaks_and_cover_the_buffer() {
        for text in ["", "a", "a\n", "a\nb\nc\n", "abc\ndef\nghi", "\n\n\n\n\n\n"] {
            for parts in 1..6 {
                let chunks = line_chunks(text.as_bytes(), parts);
                assert!(
                    !chunks.is_empty() && chunks.len() <= parts,
                    "{text:?} {parts}"
                );
                assert_eq!(chunks[0].start, 0);
                assert_eq!(chunks[chunks.len() - 1].end, text.len());
                for pair in chunks.windows(2) {
                    assert_eq!(pair[0].end, pair[1].start);
                    assert_eq!(text.as_bytes()[pair[0].end - 1], b'\n', "{text:?} {parts}");
                    assert!(pair[1].start < pair[1].end);
                }
            }
        }
    }

    /// The records a scan holds, taken apart, equal one parse per line; inert records on
    /// consecutive lines are held as runs, never the first or the last record.
    #[test]
    fn inert_records_on_consecutive_lines_are_held_as_runs() {
        let kinds = [
            "{}",
            "  {} \r",
            r#"{"x":[1,2]}"#,
            r#"{"type":"future_thing"}"#,
            r#"{"type":"label","targetId":"a","label":"l"}"#,
            r#"{"id":"i1"}"#,
            r#"{"parentId":"i1"}"#,
            r#"{"timestamp":"2026-01-01T00:00:00.000Z"}"#,
            "",
            "not json",
            "{}{}",
        ];
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15u64);
        for round in 0..200 {
            let lines = (next() % 60) as usize;
            let mut text = String::new();
            for _ in 0..lines {
                // Mostly inert lines, so that runs of every length occur.
                let k = if next().is_multiple_of(3) {
                    (next() % kinds.len() as u64) as usize
                } else {
                    (next() % 4) as usize
                };
                text.push_str(kinds[k]);
                text.push(if next().is_multiple_of(5) { '\r' } else { ' ' });
                text.push('\n');
            }
            let scan = scan_records(Arc::from(text.as_bytes()), 1, false);
            let expected: Vec<(usize, String)> = split_lines(text.as_bytes())
                .flat_map(|line| {
                    let number = line.number;
                    match clean_text(line.bytes)
                        .and_then(|t| Entry::parse(JsonText::owned(t.to_owned()), number))
                    {
                        Some(e) => vec![(number, e.text.as_str().to_owned())],
                        None => salvage_line(line.bytes)
                            .records
                            .into_iter()
                            .filter_map(|r| Entry::parse(JsonText::owned(r), number))
                            .map(|e| (number, e.text.as_str().to_owned()))
                            .collect(),
                    }
                })
                .collect();
            assert_eq!(summary(&scan).0, expected, "round {round}: {text:?}");
            if let (Some(first), Some(last)) = (scan.records.first(), scan.records.last()) {
                assert_eq!((first.records_held(), last.records_held()), (1, 1));
            }
            for run in scan.records.iter().filter(|e| e.records_held() > 1) {
                assert!(run.held_records().iter().all(Entry::is_inert));
                assert_eq!(run.entry_type(), None);
                assert_eq!(run.id, None);
            }
        }
        // A million `{}` lines are a handful of entries.
        let text = "{\"type\":\"session\",\"id\":\"s\"}\n".to_owned() + &"{}\n".repeat(1_000_000);
        let scan = scan_records(Arc::from(text.as_bytes()), 1, false);
        assert_eq!(scan.records.len(), 3, "header, one run, the last record");
        assert_eq!(scan.records[1].records_held(), 999_999);
    }
}
