//! The leaf's context read from the end of the file (pi-mono 0.58.3
//! `packages/coding-agent/src/core/session-manager.ts`, `buildSessionContext`), for callers
//! that need one request's messages and not the whole session. The backward walk is
//! [`super::tail`]'s (see there for what is read and when a file is opened in full instead).

use std::path::Path;

use serde_json::Value;

use super::context::{model_of, LeafSelector, SessionContext};
use super::manager::{OpenOptions, Session};
use super::persist::{open_session_file, Access};
use super::tail::{
    checked_header, find_header_end, Backward, LineSource, PulledReader, TailOptions, TailWalk,
};
use crate::base::RandomIds;
use crate::base::{Error, Result};
use crate::transcript::Transcript;

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
    /// Lines handed over by a [`LineSource`].
    Pulled(Box<TailWalk<PulledReader>>),
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

    /// Reads the lines `source` hands over, newest first, until the leaf's messages are
    /// settled, as [`LeafContextReader::open`] reads a file whose first line is `header` (the
    /// session header, without its `"\n"`). `None` when the header is one only a full open
    /// handles (missing, invalid, damaged, v1/v2 to migrate): the caller then opens the
    /// records in full. An error of the source (see [`LineSource::damaged`]) ends the read.
    pub fn from_source(
        header: &[u8],
        source: Box<dyn LineSource>,
        options: &TailOptions,
    ) -> Result<Option<LeafContextReader>> {
        if checked_header(header).is_none() {
            return Ok(None);
        }
        let mut walk = TailWalk::over(PulledReader::new(source, options), 0);
        walk.read_until(TailWalk::messages_settled)?;
        walk.settle_messages();
        Ok(Some(LeafContextReader {
            source: Source::Pulled(Box::new(walk)),
        }))
    }

    /// The messages of the leaf's context (settled when the reader was opened).
    pub fn messages(&self) -> Transcript {
        match &self.source {
            Source::Loaded { context, .. } => context.messages.clone(),
            Source::Tail(walk) => Transcript::from_messages(walk.messages.clone()),
            Source::Pulled(walk) => Transcript::from_messages(walk.messages.clone()),
        }
    }

    /// The thinking level on the path (`"off"` without a change), reading on if needed.
    pub fn thinking_level(&mut self) -> Result<Value> {
        match &mut self.source {
            Source::Loaded { context, .. } => Ok(context.thinking_level.clone()),
            Source::Tail(walk) => thinking_level(walk),
            Source::Pulled(walk) => thinking_level(walk),
        }
    }

    /// The model `{provider, modelId}` on the path, reading on if needed (only as far as the
    /// latest model change or assistant message, not to the thinking level).
    pub fn model(&mut self) -> Result<Option<Value>> {
        match &mut self.source {
            Source::Loaded { context, .. } => Ok(context.model.clone()),
            Source::Tail(walk) => model(walk),
            Source::Pulled(walk) => model(walk),
        }
    }

    /// The whole context, as [`Session::context`] builds it for the last entry.
    pub fn context(&mut self) -> Result<SessionContext> {
        match &mut self.source {
            Source::Loaded { context, .. } => Ok(context.clone()),
            Source::Tail(walk) => context(walk),
            Source::Pulled(walk) => context(walk),
        }
    }

    /// Bytes of the file read so far (the whole file when it was opened in full; the lines
    /// handed over so far by a [`LineSource`]).
    pub fn bytes_read(&self) -> u64 {
        match &self.source {
            Source::Loaded { file_len, .. } => *file_len,
            Source::Tail(walk) => walk.reader.bytes_read,
            Source::Pulled(walk) => walk.reader.bytes_read,
        }
    }

    /// The file's length when it was opened (appends after that are not read). A
    /// [`LineSource`] has no length known in advance: the bytes handed over so far.
    pub fn file_len(&self) -> u64 {
        match &self.source {
            Source::Loaded { file_len, .. } => *file_len,
            Source::Tail(walk) => walk.file_len,
            Source::Pulled(walk) => walk.reader.bytes_read,
        }
    }

    /// Whether the file was opened in full instead of read from the end.
    pub fn read_in_full(&self) -> bool {
        matches!(self.source, Source::Loaded { .. })
    }
}

fn thinking_level<R: Backward>(walk: &mut TailWalk<R>) -> Result<Value> {
    walk.read_until(|w| w.facts.thinking_source.is_some())?;
    Ok(walk.thinking_level())
}

fn model<R: Backward>(walk: &mut TailWalk<R>) -> Result<Option<Value>> {
    walk.read_until(|w| w.facts.model_source.is_some())?;
    Ok(walk.facts.model_source.map(|i| model_of(&walk.entries[i])))
}

fn context<R: Backward>(walk: &mut TailWalk<R>) -> Result<SessionContext> {
    walk.read_until(|w| w.facts.thinking_source.is_some() && w.facts.model_source.is_some())?;
    Ok(walk.to_context())
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::PathBuf;

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
                if rng.chance(40) {
                    // OpenClaw's reset: the same boundary without a summary.
                    format!(r#"{{"type":"reset",{base},"reason":"new","firstKeptEntryId":{kept}}}"#)
                } else {
                    format!(
                        r#"{{"type":"compaction",{base},"summary":"sum {serial}","firstKeptEntryId":{kept},"tokensBefore":{serial}}}"#
                    )
                }
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

    /// Seed `seed`'s random file, written to a temporary file, and tail options with a first
    /// chunk of 1 to `first` bytes and chunks of at most 1 to `max` bytes.
    fn random_case(
        seed: u64,
        first: usize,
        max: usize,
    ) -> (Vec<u8>, TailOptions, tempfile::TempDir, PathBuf) {
        let mut rng = Rng(seed);
        let bytes = random_file(&mut rng);
        let options = TailOptions {
            first_chunk: 1 + rng.below(first),
            max_chunk: 1 + rng.below(max),
        };
        let (dir, path) = write_temp(&bytes);
        (bytes, options, dir, path)
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
            let (bytes, options, _dir, path) = random_case(seed, 400, 2000);
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

    /// A file's lines after its header, handed over from the end a few lines at a time.
    struct Lines {
        lines: Vec<Vec<u8>>,
        chunk: usize,
        damaged: Vec<usize>,
    }

    impl LineSource for Lines {
        fn older_lines(&mut self, hint: usize) -> Result<Option<Vec<u8>>> {
            if self.lines.is_empty() {
                return Ok(None);
            }
            let mut taken = Vec::new();
            let mut size = 0;
            while let Some(line) = self.lines.pop() {
                size += line.len() + 1;
                taken.push(line);
                if size >= hint.min(self.chunk) {
                    break;
                }
            }
            let mut out = Vec::new();
            for line in taken.iter().rev() {
                out.extend_from_slice(line);
                out.push(b'\n');
            }
            Ok(Some(out))
        }

        fn damaged(&mut self, line: usize, _reason: &str) -> Result<()> {
            self.damaged.push(line);
            Ok(())
        }
    }

    #[test]
    fn lines_handed_over_build_the_full_open_context() {
        for seed in 0..2000u64 {
            let mut rng = Rng(seed);
            let bytes = random_file(&mut rng);
            let (_dir, path) = write_temp(&bytes);
            let Ok(expected) = full_context(&path) else {
                continue;
            };
            let mut lines = bytes.split(|b| *b == b'\n').map(<[u8]>::to_vec);
            let header = lines.next().unwrap_or_default();
            let mut rest: Vec<Vec<u8>> = lines.collect();
            if rest.last().is_some_and(Vec::is_empty) {
                rest.pop();
            }
            let source = Lines {
                lines: rest,
                chunk: 1 + rng.below(400),
                damaged: Vec::new(),
            };
            let options = TailOptions {
                first_chunk: 1 + rng.below(400),
                max_chunk: 1 + rng.below(2000),
            };
            let describe = || format!("seed {seed}:\n{}", String::from_utf8_lossy(&bytes));
            // `None`: a header only a full open handles (the caller opens the records in
            // full then).
            let Some(mut reader) =
                LeafContextReader::from_source(&header, Box::new(source), &options).unwrap()
            else {
                continue;
            };
            assert_eq!(reader.messages(), expected.messages, "{}", describe());
            assert_eq!(reader.context().unwrap(), expected, "{}", describe());
        }
    }

    /// A source that refuses damage ends the read with its error.
    struct Strict(Vec<u8>);

    impl LineSource for Strict {
        fn older_lines(&mut self, _hint: usize) -> Result<Option<Vec<u8>>> {
            Ok(Some(std::mem::take(&mut self.0)).filter(|b| !b.is_empty()))
        }

        fn damaged(&mut self, line: usize, reason: &str) -> Result<()> {
            Err(Error::InvalidArgument(format!("line {line}: {reason}")))
        }
    }

    #[test]
    fn a_source_can_refuse_a_damaged_line() {
        let lines = format!(
            "{}\n[1,2]\n{}\n",
            message_line("a", "null", "x"),
            message_line("b", "\"a\"", "y")
        );
        let walk = LeafContextReader::from_source(
            HEADER.as_bytes(),
            Box::new(Strict(lines.into_bytes())),
            &TailOptions::default(),
        );
        assert!(
            matches!(walk, Err(Error::InvalidArgument(ref m)) if m.starts_with("line 2")),
            "{walk:?}"
        );
        let v2 = br#"{"type":"session","version":2,"id":"s"}"#;
        let none = LeafContextReader::from_source(
            v2,
            Box::new(Strict(Vec::new())),
            &TailOptions::default(),
        );
        assert!(matches!(none, Ok(None)));
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

    /// A long history, then an OpenClaw reset (keeping `kept` or nothing), then one message.
    fn reset_file(history: usize, kept: Option<usize>) -> String {
        let mut file = format!("{HEADER}\n");
        let mut parent = "null".to_owned();
        for i in 0..history {
            file.push_str(&message_line(&format!("m{i}"), &parent, &"old ".repeat(50)));
            file.push('\n');
            parent = format!("\"m{i}\"");
        }
        let kept = kept.map_or_else(String::new, |k| format!(r#","firstKeptEntryId":"m{k}""#));
        file.push_str(&format!(
            r#"{{"type":"reset","id":"r","parentId":{parent},"timestamp":"2026-01-01T00:00:00.000Z","reason":"new"{kept}}}"#
        ));
        file.push('\n');
        file.push_str(&message_line("new", "\"r\"", "latest"));
        file.push('\n');
        file
    }

    #[test]
    fn a_reset_session_is_read_only_back_to_the_reset() {
        let options = TailOptions {
            first_chunk: 1024,
            max_chunk: 4096,
        };
        for (kept, expected) in [(None, 1), (Some(1997), 4)] {
            let file = reset_file(2000, kept);
            let (_dir, path) = write_temp(file.as_bytes());
            let mut reader = LeafContextReader::open(&path, &options).unwrap();
            assert!(!reader.read_in_full());
            assert_eq!(reader.messages().len(), expected, "kept {kept:?}");
            assert!(
                reader.bytes_read() < 4096,
                "read {} of {}",
                reader.bytes_read(),
                file.len()
            );
            assert_eq!(reader.context().unwrap(), full_context(&path).unwrap());
        }
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
            let (bytes, tail, _dir, path) = random_case(seed, 300, 1000);
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

    /// A small file is searched for a boundary before the walk: without one (a mention inside
    /// a message's text does not count) it is opened in full at once, as the walk would end
    /// at the header; one spelled with other spacing is opened in full too, the same session.
    #[test]
    fn a_small_file_without_a_boundary_is_opened_in_full_at_once() {
        let compacted = compacted_file(50);
        let spaced = compacted.replace(r#""type":"compaction""#, r#""type": "compaction""#);
        let mentioned = format!(
            "{HEADER}\n{}\n{}\n",
            message_line("m0", "null", r#"a \"type\":\"compaction\" entry"#),
            message_line("m1", "\"m0\"", r#"and \"type\":\"reset\""#),
        );
        let reset = compacted.replace(r#""type":"compaction""#, r#""type":"reset""#);
        assert!(super::super::tail::has_context_boundary(
            compacted.as_bytes()
        ));
        assert!(super::super::tail::has_context_boundary(reset.as_bytes()));
        assert!(!super::super::tail::has_context_boundary(spaced.as_bytes()));
        assert!(!super::super::tail::has_context_boundary(
            mentioned.as_bytes()
        ));
        let read_only = OpenOptions {
            read_only: true,
            ..OpenOptions::default()
        };
        let tail = TailOptions {
            first_chunk: 1024,
            max_chunk: 4096,
        };
        for (file, cold_expected) in [(&compacted, true), (&spaced, false), (&mentioned, false)] {
            let (_dir, path) = write_temp(file.as_bytes());
            let mut cold =
                Session::open_cold_with(&path, &read_only, &tail, &mut RandomIds, 0).unwrap();
            let full = Session::open(&path, &read_only, &mut RandomIds, 0).unwrap();
            assert_eq!(cold.is_cold(), cold_expected, "{file}");
            assert_eq!(
                cold.leaf_context(None, false).unwrap(),
                full.context(LeafSelector::Last),
                "{file}"
            );
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
