//! Where a request body stops extending the previous one, as a provider's prompt cache sees it.
//!
//! A prompt cache matches a prefix of the rendered prompt: for Anthropic the tools, then the
//! system prompt, then the messages (`platform.claude.com/docs/en/build-with-claude/
//! prompt-caching`, "tools → system → messages"); for OpenAI the tools and the serialized
//! `instructions` / `input` / `messages`; for Gemini the system instruction, the tools and the
//! contents. [`cache_diff`] walks the two JSON texts side by side in that order, skipping the
//! cache markers (`cache_control`, `prompt_cache_breakpoint`: moving them is how a caller
//! follows the conversation, not a change of the prompt), and names the first place where the
//! next body does not continue the previous one.
//!
//! The walk reads the bytes as they are: no value tree is built, strings are compared as written
//! (with their escapes), and whitespace between tokens is skipped, so pretty-printed and compact
//! bodies compare alike. The next body's top-level members are read once (the item ends of its
//! arrays recorded); the previous body shares its bytes up to where the two part, and so its
//! structure there, and is read only from that point (`read_layout`): two 656 KB bodies of
//! real message text in about half a millisecond. [`cache_diff_after`] keeps the previous
//! body's layout from the call before, for a session's requests compared in turn.

use memchr::memmem;

use crate::token_count::TokenCounter;

/// Why the next body does not extend the previous one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BreakCause {
    /// The `model` differs: nothing is cached across models.
    Model,
    /// A tool definition changed, was added before others, or was removed.
    Tools,
    /// The system prompt (`system`, `instructions`, `systemInstruction`, or a leading
    /// `system` / `developer` message) changed.
    SystemPrompt,
    /// An earlier message was changed, removed or inserted.
    HistoryRewritten,
    /// The history was replaced by a compaction summary or a provider compaction block/item.
    Compaction,
    /// Nothing but the cache markers changed: the breakpoints sit elsewhere on the same prompt.
    BreakpointMoved,
}

impl BreakCause {
    pub const ALL: [BreakCause; 6] = [
        BreakCause::Model,
        BreakCause::Tools,
        BreakCause::SystemPrompt,
        BreakCause::HistoryRewritten,
        BreakCause::Compaction,
        BreakCause::BreakpointMoved,
    ];

    /// The cause's name (`"system_prompt"`, `"breakpoint_moved"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            BreakCause::Model => "model",
            BreakCause::Tools => "tools",
            BreakCause::SystemPrompt => "system_prompt",
            BreakCause::HistoryRewritten => "history_rewritten",
            BreakCause::Compaction => "compaction",
            BreakCause::BreakpointMoved => "breakpoint_moved",
        }
    }
}

/// Where and why the prompt cache breaks between two bodies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheBreak {
    /// The JSON path of the first difference (`system[0].text`, `tools[2].input_schema`,
    /// `messages[14].content[0]`), with the keys of the next body.
    pub path: String,
    /// Byte offset of the difference in the previous body (where the value at `path` starts,
    /// or the first differing byte inside a string or number; where an array or object ends
    /// when the next body has more there; the body's closing brace when the part is absent).
    pub previous_offset: usize,
    /// The same offset in the next body.
    pub next_offset: usize,
    pub cause: BreakCause,
    /// Tokens of the next body's cached parts from the break on: what the provider writes to
    /// the cache again (estimated over the JSON text).
    pub rewrite_tokens: u64,
}

/// A body that is not a JSON object (or not UTF-8).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the {which} body is not a JSON object: {reason} at byte {offset}")]
pub struct CacheDiffError {
    /// `"previous"` or `"next"`.
    pub which: &'static str,
    pub offset: usize,
    pub reason: &'static str,
}

/// The cached parts of a body, in the order a prompt cache reads them. Bodies of one API hold
/// only their own keys, so one list serves every API pi-ai builds: Anthropic (`tools`,
/// `system`, `messages`), OpenAI Chat Completions and Mistral (`tools`, `messages`), OpenAI
/// Responses (`tools`, `instructions`, `input`), Gemini (`config.systemInstruction`,
/// `config.tools`, `contents`) and Cloud Code Assist (the same under `request`).
const SEGMENTS: &[&[&[u8]]] = &[
    &[b"tools"],
    &[b"system"],
    &[b"instructions"],
    &[b"messages"],
    &[b"input"],
    &[b"config", b"systemInstruction"],
    &[b"config", b"tools"],
    &[b"contents"],
    &[b"request", b"systemInstruction"],
    &[b"request", b"tools"],
    &[b"request", b"contents"],
];

/// Keys that mark a cache breakpoint rather than prompt content: Anthropic's `cache_control`
/// and OpenAI Responses' `prompt_cache_breakpoint`.
const MARKERS: &[&[u8]] = &[b"cache_control", b"prompt_cache_breakpoint"];

/// Nesting below this depth is compared as whole values (no path further down).
const MAX_DEPTH: usize = 128;

type Scan<T> = Result<T, (usize, &'static str)>;

fn ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The end (one past the closing quote) of the string starting at `i` (the transcript
/// layout's scan, quote to quote).
fn string_end(b: &[u8], i: usize) -> Scan<usize> {
    crate::transcript::json_string_end(b, i).ok_or((i, "unterminated string"))
}

/// The end of the number or literal starting at `i`.
fn scalar_end(b: &[u8], i: usize) -> Scan<usize> {
    let mut j = i;
    while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
        if matches!(b[j], b'"' | b'{' | b'[' | b':') {
            return Err((j, "unexpected character"));
        }
        j += 1;
    }
    if j == i {
        return Err((i, "expected a value"));
    }
    Ok(j)
}

/// The end of the value starting at `i` (after whitespace), brackets checked.
fn skip_value(b: &[u8], i: usize) -> Scan<usize> {
    let i = ws(b, i);
    match b.get(i) {
        None => Err((i, "expected a value")),
        Some(b'"') => string_end(b, i),
        Some(b'{' | b'[') => {
            let mut stack: Vec<u8> = Vec::with_capacity(16);
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = string_end(b, j)?;
                        continue;
                    }
                    b'{' => stack.push(b'}'),
                    b'[' => stack.push(b']'),
                    c @ (b'}' | b']') => {
                        if stack.pop() != Some(c) {
                            return Err((j, "mismatched bracket"));
                        }
                        if stack.is_empty() {
                            return Ok(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            Err((i, "unterminated object or array"))
        }
        Some(_) => scalar_end(b, i),
    }
}

/// A member of an object: the key's text (without quotes), where the key starts, where the
/// value starts and ends.
#[derive(Clone, Copy)]
struct Member<'a> {
    key: &'a [u8],
    at: usize,
    value: usize,
    end: usize,
}

/// A member's key and where its value starts (the value not yet read).
#[derive(Clone, Copy)]
struct Head<'a> {
    key: &'a [u8],
    at: usize,
    value: usize,
}

/// The next member of an object after position `i` (just after `{` or after a value), or
/// `Err(pos)` with the position of the closing brace; the value is not read.
fn next_head(b: &[u8], i: usize, first: bool) -> Scan<Result<Head<'_>, usize>> {
    let mut i = ws(b, i);
    if !first {
        match b.get(i) {
            Some(b'}') => return Ok(Err(i)),
            Some(b',') => i = ws(b, i + 1),
            _ => return Err((i, "expected ',' or '}'")),
        }
    } else if b.get(i) == Some(&b'}') {
        return Ok(Err(i));
    }
    if b.get(i) != Some(&b'"') {
        return Err((i, "expected a key"));
    }
    let key_end = string_end(b, i)?;
    let colon = ws(b, key_end);
    if b.get(colon) != Some(&b':') {
        return Err((colon, "expected ':'"));
    }
    Ok(Ok(Head {
        key: &b[i + 1..key_end - 1],
        at: i,
        value: ws(b, colon + 1),
    }))
}

/// [`next_head`] with the value read.
fn next_member(b: &[u8], i: usize, first: bool) -> Scan<Result<Member<'_>, usize>> {
    Ok(match next_head(b, i, first)? {
        Ok(h) => Ok(Member {
            key: h.key,
            at: h.at,
            value: h.value,
            end: skip_value(b, h.value)?,
        }),
        Err(close) => Err(close),
    })
}

/// The members of the object starting at `i`, and where it ends.
fn members(b: &[u8], i: usize) -> Scan<(Vec<Member<'_>>, usize)> {
    let i = ws(b, i);
    if b.get(i) != Some(&b'{') {
        return Err((i, "expected an object"));
    }
    let mut out = Vec::new();
    let mut at = i + 1;
    let mut first = true;
    loop {
        match next_member(b, at, first)? {
            Ok(m) => {
                at = m.end;
                out.push(m);
            }
            Err(close) => return Ok((out, close + 1)),
        }
        first = false;
    }
}

/// The items of a top-level array value: where the array starts and where each item ends (as
/// [`Walk::segment`] delimits them: each item read with [`skip_value`]).
#[derive(Debug, Clone)]
struct ArrayItems {
    start: usize,
    item_ends: Vec<usize>,
}

/// The end of the array whose items start after `from` (just after `[`, or just after an item
/// whose end is already in `item_ends`), read item by item; each item's end is pushed.
fn array_end(b: &[u8], from: usize, item_ends: &mut Vec<usize>) -> Scan<usize> {
    let mut i = ws(b, from);
    if b.get(i) == Some(&b',') {
        i = ws(b, i + 1);
    }
    while i < b.len() && b[i] != b']' {
        let end = skip_value(b, i)?;
        item_ends.push(end);
        i = ws(b, end);
        if b.get(i) == Some(&b',') {
            i = ws(b, i + 1);
        }
    }
    if b.get(i) == Some(&b']') {
        Ok(i + 1)
    } else {
        Err((i, "unterminated object or array"))
    }
}

/// A top-level member by offsets: the key's text, where the key starts, where the value starts
/// and ends.
#[derive(Debug, Clone, Copy)]
struct MemberSpan {
    key: (usize, usize),
    at: usize,
    value: usize,
    end: usize,
}

/// Where a body's top-level members lie and where the items of its array values end: what
/// [`cache_diff_after`] needs of the previous body, so that it is not read again.
#[derive(Debug, Clone, Default)]
pub struct BodyLayout {
    members: Vec<MemberSpan>,
    arrays: Vec<ArrayItems>,
    /// Where the object ends (after its `}`).
    end: usize,
}

impl BodyLayout {
    fn members<'a>(&self, b: &'a [u8]) -> Vec<Member<'a>> {
        self.members
            .iter()
            .map(|m| Member {
                key: &b[m.key.0..m.key.1],
                at: m.at,
                value: m.value,
                end: m.end,
            })
            .collect()
    }
}

/// Where the walk of an array may start: the array at `start` has `items` items that end before
/// the bodies part (the same bytes in both), the last of them at `after`.
#[derive(Clone, Copy)]
struct SharedItems {
    start: usize,
    after: usize,
    items: usize,
}

/// A body's layout, read only where it is not the `known` body's
/// bytes: both are the same up to `common`, so a member (or an array's items) that the known
/// body ends before `common` ends at the same offset here. The byte after an end must be shared
/// too (it decides where a number ends). Also returns, for the array the bodies part in, the
/// items they share.
fn read_layout(
    b: &[u8],
    known: Option<&BodyLayout>,
    common: usize,
) -> Scan<(BodyLayout, Option<SharedItems>)> {
    let i = ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return Err((i, "expected an object"));
    }
    let mut layout = BodyLayout::default();
    let mut shared = None;
    let mut at = i + 1;
    let mut first = true;
    loop {
        let h = match next_head(b, at, first)? {
            Ok(h) => h,
            Err(close) => {
                layout.end = close + 1;
                return Ok((layout, shared));
            }
        };
        first = false;
        let key_start = h.key.as_ptr() as usize - b.as_ptr() as usize;
        let same = known.and_then(|k| {
            k.members
                .iter()
                .find(|m| m.at == h.at && m.value == h.value && h.value < common)
        });
        let known_items = |start: usize| {
            known
                .and_then(|k| k.arrays.iter().find(|a| a.start == start))
                .map(|a| a.item_ends.as_slice())
        };
        let is_array = b.get(h.value) == Some(&b'[');
        let end = match (same, is_array) {
            (Some(m), false) if m.end < common => m.end,
            (Some(m), true) if m.end < common => {
                if let Some(items) = known_items(h.value) {
                    layout.arrays.push(ArrayItems {
                        start: h.value,
                        item_ends: items.to_vec(),
                    });
                    m.end
                } else {
                    let mut item_ends = Vec::new();
                    let end = array_end(b, h.value + 1, &mut item_ends)?;
                    layout.arrays.push(ArrayItems {
                        start: h.value,
                        item_ends,
                    });
                    end
                }
            }
            (_, true) => {
                let shared_items = match (same, known_items(h.value)) {
                    (Some(_), Some(items)) => &items[..items.partition_point(|&e| e < common)],
                    _ => &[][..],
                };
                let after = shared_items.last().copied().unwrap_or(h.value + 1);
                if same.is_some() {
                    shared = Some(SharedItems {
                        start: h.value,
                        after,
                        items: shared_items.len(),
                    });
                }
                let mut item_ends = shared_items.to_vec();
                let end = array_end(b, after, &mut item_ends)?;
                layout.arrays.push(ArrayItems {
                    start: h.value,
                    item_ends,
                });
                end
            }
            (_, false) => skip_value(b, h.value)?,
        };
        layout.members.push(MemberSpan {
            key: (key_start, key_start + h.key.len()),
            at: h.at,
            value: h.value,
            end,
        });
        at = end;
    }
}

/// The value span of `path` (object keys from the top) in a body.
fn lookup(b: &[u8], top: &[Member<'_>], path: &[&[u8]]) -> Scan<Option<(usize, usize)>> {
    let Some((first, rest)) = path.split_first() else {
        return Ok(None);
    };
    let Some(m) = top.iter().rev().find(|m| m.key == *first) else {
        return Ok(None);
    };
    if rest.is_empty() {
        return Ok(Some((m.value, m.end)));
    }
    if b[m.value] != b'{' {
        return Ok(None);
    }
    let (inner, _) = members(b, m.value)?;
    lookup(b, &inner, rest)
}

#[derive(Clone, Copy)]
enum Part<'a> {
    Key(&'a [u8]),
    Index(usize),
}

/// A place where the bodies differ: the path and both offsets.
struct Found {
    path: String,
    prev: usize,
    next: usize,
}

enum Step {
    /// Both values are the same prompt text; they end at these offsets.
    Same(usize, usize),
    /// The previous body stopped (an array or object closed) where the next one goes on.
    PrevEnded(Found),
    /// The values differ.
    Differ(Found),
}

struct Walk<'a> {
    a: &'a [u8],
    b: &'a [u8],
    /// The items both bodies share at the start of the array the previous body's read
    /// stopped in (found while reading its members).
    shared: Option<SharedItems>,
    path: Vec<Part<'a>>,
    /// The first place where only the cache markers differ.
    marker: Option<Found>,
}

/// An error of the walk: which body, where, why.
type WalkError = (bool, usize, &'static str);

fn in_prev(e: (usize, &'static str)) -> WalkError {
    (true, e.0, e.1)
}

fn in_next(e: (usize, &'static str)) -> WalkError {
    (false, e.0, e.1)
}

impl<'a> Walk<'a> {
    fn found(&self, extra: Option<Part<'a>>, prev: usize, next: usize) -> Found {
        let mut path = String::new();
        for part in self.path.iter().copied().chain(extra) {
            match part {
                Part::Key(k) => {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(&String::from_utf8_lossy(k));
                }
                Part::Index(n) => {
                    path.push('[');
                    path.push_str(&n.to_string());
                    path.push(']');
                }
            }
        }
        Found {
            path,
            prev: floor_char(self.a, prev),
            next: floor_char(self.b, next),
        }
    }

    /// A cached part of both bodies (`a[sa..ea]`, `b[sb..eb]`). The bytes they share from the
    /// start are compared at memory speed first: identical parts are the same prompt, and the
    /// items of an array that lie wholly in the shared bytes are skipped, so the structural
    /// walk starts at the item where the bodies part.
    fn segment(&mut self, sa: usize, ea: usize, sb: usize, eb: usize) -> Result<Step, WalkError> {
        let (a, b) = (self.a, self.b);
        let common = common_prefix(&a[sa..ea], &b[sb..eb]);
        if common == ea - sa && common == eb - sb {
            return Ok(Step::Same(ea, eb));
        }
        if a[sa] != b'[' || b[sb] != b'[' {
            return self.value(sa, sb, 0);
        }
        // Items of the previous body's array that end inside the shared bytes (the next body
        // has the same bytes there, so the same items): known from reading the members when
        // the array starts at the same offset in both.
        if let Some(shared) = self.shared.filter(|s| s.start == sa && sa == sb) {
            return self.array_from(shared.after, shared.after, shared.items, 0);
        }
        let mut i = ws(a, sa + 1);
        let mut n = 0usize;
        let mut after = sa + 1;
        while i < ea && a[i] != b']' {
            let end = skip_value(a, i).map_err(in_prev)?;
            if end - sa > common {
                break;
            }
            n += 1;
            after = end;
            i = ws(a, end);
            if a.get(i) == Some(&b',') {
                i = ws(a, i + 1);
            }
        }
        self.array_from(after, sb + (after - sa), n, 0)
    }

    /// [`Walk::value`] of a member or element one level down, with `part` on the path meanwhile.
    fn child(
        &mut self,
        part: Part<'a>,
        ia: usize,
        ib: usize,
        depth: usize,
    ) -> Result<Step, WalkError> {
        self.path.push(part);
        let step = self.value(ia, ib, depth + 1);
        self.path.pop();
        step
    }

    fn value(&mut self, ia: usize, ib: usize, depth: usize) -> Result<Step, WalkError> {
        let (a, b) = (self.a, self.b);
        let ia = ws(a, ia);
        let ib = ws(b, ib);
        let (Some(&ca), Some(&cb)) = (a.get(ia), b.get(ib)) else {
            return Err(if ia >= a.len() {
                (true, ia, "expected a value")
            } else {
                (false, ib, "expected a value")
            });
        };
        // pi-ai writes the last user message's text as one text block carrying the breakpoint
        // and the same message as a string once it is older (pi-mono 0.58.3
        // `packages/ai/src/providers/anthropic.ts`, `convertMessages`): the provider renders
        // both alike, so they are the same prompt.
        if (ca, cb) == (b'"', b'[') || (ca, cb) == (b'[', b'"') {
            let (text_a, end_a) = match ca {
                b'"' => ((ia, skip_value(a, ia).map_err(in_prev)?), None),
                _ => match single_text_block(a, ia) {
                    Some((t, e)) => (t, Some(e)),
                    None => ((0, 0), None),
                },
            };
            let (text_b, end_b) = match cb {
                b'"' => ((ib, skip_value(b, ib).map_err(in_next)?), None),
                _ => match single_text_block(b, ib) {
                    Some((t, e)) => (t, Some(e)),
                    None => ((0, 0), None),
                },
            };
            if text_a.1 > text_a.0
                && text_b.1 > text_b.0
                && a[text_a.0..text_a.1] == b[text_b.0..text_b.1]
            {
                if self.marker.is_none() {
                    let found = self.found(None, ia, ib);
                    self.marker = Some(found);
                }
                return Ok(Step::Same(
                    end_a.unwrap_or(text_a.1),
                    end_b.unwrap_or(text_b.1),
                ));
            }
        }
        if depth >= MAX_DEPTH || ca != cb || !matches!(ca, b'{' | b'[') {
            let ea = skip_value(a, ia).map_err(in_prev)?;
            let eb = skip_value(b, ib).map_err(in_next)?;
            if a[ia..ea] == b[ib..eb] {
                return Ok(Step::Same(ea, eb));
            }
            // Inside a string or number: the first byte that differs.
            let (pa, pb) = if ca == cb && !matches!(ca, b'{' | b'[') {
                let common = common_prefix(&a[ia..ea], &b[ib..eb]);
                (ia + common, ib + common)
            } else {
                (ia, ib)
            };
            return Ok(Step::Differ(self.found(None, pa, pb)));
        }
        if ca == b'{' {
            self.object(ia, ib, depth)
        } else {
            self.array(ia, ib, depth)
        }
    }

    fn array(&mut self, ia: usize, ib: usize, depth: usize) -> Result<Step, WalkError> {
        self.array_from(ia + 1, ib + 1, 0, depth)
    }

    /// The rest of two arrays from item `n` on: `ia`, `ib` are just after `[` (`n` = 0) or
    /// just after item `n - 1`.
    fn array_from(
        &mut self,
        mut ia: usize,
        mut ib: usize,
        mut n: usize,
        depth: usize,
    ) -> Result<Step, WalkError> {
        let (a, b) = (self.a, self.b);
        loop {
            let (pa, pb) = (ws(a, ia), ws(b, ib));
            let (end_a, end_b) = (a.get(pa) == Some(&b']'), b.get(pb) == Some(&b']'));
            if n > 0 {
                if !end_a && a.get(pa) != Some(&b',') {
                    return Err((true, pa, "expected ',' or ']'"));
                }
                if !end_b && b.get(pb) != Some(&b',') {
                    return Err((false, pb, "expected ',' or ']'"));
                }
            }
            match (end_a, end_b) {
                (true, true) => return Ok(Step::Same(pa + 1, pb + 1)),
                (true, false) => {
                    let at = if n > 0 { ws(b, pb + 1) } else { pb };
                    return Ok(Step::PrevEnded(self.found(Some(Part::Index(n)), pa, at)));
                }
                (false, true) => {
                    let at = if n > 0 { ws(a, pa + 1) } else { pa };
                    return Ok(Step::Differ(self.found(Some(Part::Index(n)), at, pb)));
                }
                (false, false) => {}
            }
            let (va, vb) = if n > 0 { (pa + 1, pb + 1) } else { (pa, pb) };
            let step = self.child(Part::Index(n), va, vb, depth)?;
            match step {
                Step::Same(ea, eb) => {
                    ia = ea;
                    ib = eb;
                }
                other => return Ok(other),
            }
            n += 1;
        }
    }

    fn object(&mut self, ia: usize, ib: usize, depth: usize) -> Result<Step, WalkError> {
        let (a, b) = (self.a, self.b);
        let (mut ia, mut ib) = (ia + 1, ib + 1);
        let (mut first_a, mut first_b) = (true, true);
        let (mut marker_a, mut marker_b): (Option<Member<'a>>, Option<Member<'a>>) = (None, None);
        loop {
            let ma =
                next_content_member(a, &mut ia, &mut first_a, &mut marker_a).map_err(in_prev)?;
            let mb =
                next_content_member(b, &mut ib, &mut first_b, &mut marker_b).map_err(in_next)?;
            match (ma, mb) {
                (Err(ca), Err(cb)) => {
                    let va = marker_a.map(|m| &a[m.value..m.end]);
                    let vb = marker_b.map(|m| &b[m.value..m.end]);
                    if va != vb && self.marker.is_none() {
                        let key = marker_b.or(marker_a).map_or(MARKERS[0], |m| m.key);
                        let found = self.found(
                            Some(Part::Key(key)),
                            marker_a.map_or(ca, |m| m.at),
                            marker_b.map_or(cb, |m| m.at),
                        );
                        self.marker = Some(found);
                    }
                    return Ok(Step::Same(ca + 1, cb + 1));
                }
                (Err(ca), Ok(mb)) => {
                    return Ok(Step::PrevEnded(self.found(
                        Some(Part::Key(mb.key)),
                        ca,
                        mb.at,
                    )))
                }
                (Ok(ma), Err(cb)) => {
                    return Ok(Step::Differ(self.found(Some(Part::Key(ma.key)), ma.at, cb)))
                }
                (Ok(ma), Ok(mb)) => {
                    if ma.key != mb.key {
                        return Ok(Step::Differ(self.found(
                            Some(Part::Key(mb.key)),
                            ma.at,
                            mb.at,
                        )));
                    }
                    let step = self.child(Part::Key(mb.key), ma.value, mb.value, depth)?;
                    match step {
                        Step::Same(ea, eb) => {
                            ia = ea;
                            ib = eb;
                        }
                        other => return Ok(other),
                    }
                }
            }
        }
    }
}

/// The next member that is not a cache marker (markers are read and kept in `marker`). `at`
/// moves past the markers; the caller moves it past the member's value once it has read it.
fn next_content_member<'a>(
    b: &'a [u8],
    at: &mut usize,
    first: &mut bool,
    marker: &mut Option<Member<'a>>,
) -> Scan<Result<Head<'a>, usize>> {
    loop {
        let h = match next_head(b, *at, *first)? {
            Ok(h) => h,
            Err(close) => return Ok(Err(close)),
        };
        *first = false;
        if MARKERS.contains(&h.key) {
            let end = skip_value(b, h.value)?;
            *at = end;
            *marker = Some(Member {
                key: h.key,
                at: h.at,
                value: h.value,
                end,
            });
            continue;
        }
        return Ok(Ok(h));
    }
}

/// For an array of one `{"type":"text","text":...}` block (cache markers allowed) at `i`: the
/// span of the text string and the end of the array.
fn single_text_block(b: &[u8], i: usize) -> Option<((usize, usize), usize)> {
    let open = ws(b, i + 1);
    if b.get(open) != Some(&b'{') {
        return None;
    }
    let (fields, end) = members(b, open).ok()?;
    let mut text = None;
    let mut typed = false;
    for m in &fields {
        match m.key {
            b"type" => typed = &b[m.value..m.end] == br#""text""#,
            b"text" if b[m.value] == b'"' => text = Some((m.value, m.end)),
            k if MARKERS.contains(&k) => {}
            _ => return None,
        }
    }
    let close = ws(b, end);
    if !typed || b.get(close) != Some(&b']') {
        return None;
    }
    text.map(|t| (t, close + 1))
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const CHUNK: usize = 32;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + CHUNK <= n && a[i..i + CHUNK] == b[i..i + CHUNK] {
        i += CHUNK;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// `i` moved back to the start of the UTF-8 character it falls in.
fn floor_char(b: &[u8], mut i: usize) -> usize {
    i = i.min(b.len());
    while i > 0 && i < b.len() && (b[i] & 0xC0) == 0x80 {
        i -= 1;
    }
    i
}

/// Where the next body stops extending the previous one, as a prompt cache sees it; `None`
/// when it extends it (or is the same prompt). Both bodies are JSON objects as a provider
/// receives them; `counter` estimates the tokens written to the cache again.
pub fn cache_diff(
    previous: &[u8],
    next: &[u8],
    counter: TokenCounter,
) -> Result<Option<CacheBreak>, CacheDiffError> {
    let prev_err = previous_error;
    if let Err(e) = simdutf8::compat::from_utf8(previous) {
        return Err(prev_err((e.valid_up_to(), "invalid UTF-8")));
    }
    let next_layout = body_layout(next)?;
    // The next body is read whole; the previous one only from where the two part.
    let common = common_prefix(previous, next);
    let (previous_layout, shared) =
        read_layout(previous, Some(&next_layout), common).map_err(prev_err)?;
    if ws(previous, previous_layout.end) != previous.len() {
        return Err(prev_err((previous_layout.end, "trailing characters")));
    }
    diff_laid_out(
        (previous, &previous_layout),
        (next, &next_layout),
        shared,
        counter,
    )
}

/// [`cache_diff`] of `previous`, whose layout is known (from [`body_layout`] or the previous
/// call), and `next`; also returns `next`'s layout for the call after. Only the part of `next`
/// that does not repeat `previous` is read structurally, so comparing each request of a session
/// with the one before costs about the bytes each adds.
pub fn cache_diff_after(
    previous: &[u8],
    previous_layout: &BodyLayout,
    next: &[u8],
    counter: TokenCounter,
) -> Result<(Option<CacheBreak>, BodyLayout), CacheDiffError> {
    if let Err(e) = simdutf8::compat::from_utf8(next) {
        return Err(next_error((e.valid_up_to(), "invalid UTF-8")));
    }
    let common = common_prefix(previous, next);
    let (next_layout, shared) =
        read_layout(next, Some(previous_layout), common).map_err(next_error)?;
    if ws(next, next_layout.end) != next.len() {
        return Err(next_error((next_layout.end, "trailing characters")));
    }
    let found = diff_laid_out(
        (previous, previous_layout),
        (next, &next_layout),
        shared,
        counter,
    )?;
    Ok((found, next_layout))
}

fn previous_error((offset, reason): (usize, &'static str)) -> CacheDiffError {
    CacheDiffError {
        which: "previous",
        offset,
        reason,
    }
}

fn next_error((offset, reason): (usize, &'static str)) -> CacheDiffError {
    CacheDiffError {
        which: "next",
        offset,
        reason,
    }
}

/// The layout of a body read whole (a UTF-8 JSON object), for [`cache_diff_after`]. Errors
/// name the body `"next"`.
pub fn body_layout(body: &[u8]) -> Result<BodyLayout, CacheDiffError> {
    if let Err(e) = simdutf8::compat::from_utf8(body) {
        return Err(next_error((e.valid_up_to(), "invalid UTF-8")));
    }
    let (layout, _) = read_layout(body, None, 0).map_err(next_error)?;
    if ws(body, layout.end) != body.len() {
        return Err(next_error((layout.end, "trailing characters")));
    }
    Ok(layout)
}

/// The walk of [`cache_diff`] over two bodies whose layouts are read.
fn diff_laid_out(
    (previous, previous_layout): (&[u8], &BodyLayout),
    (next, next_layout): (&[u8], &BodyLayout),
    shared: Option<SharedItems>,
    counter: TokenCounter,
) -> Result<Option<CacheBreak>, CacheDiffError> {
    let (prev_err, next_err) = (previous_error, next_error);
    let top_a = previous_layout.members(previous);
    let top_b = next_layout.members(next);
    let (end_a, end_b) = (previous_layout.end, next_layout.end);
    let mut spans_a = Vec::with_capacity(SEGMENTS.len());
    let mut spans_b = Vec::with_capacity(SEGMENTS.len());
    for seg in SEGMENTS {
        spans_a.push(lookup(previous, &top_a, seg).map_err(prev_err)?);
        spans_b.push(lookup(next, &top_b, seg).map_err(next_err)?);
    }
    let rewrite = |from_seg: usize, from: Option<usize>| -> u64 {
        let mut total = 0;
        for (k, span) in spans_b.iter().enumerate().skip(from_seg) {
            let Some((start, end)) = *span else { continue };
            let start = match from {
                Some(at) if k == from_seg => at.clamp(start, end),
                _ => start,
            };
            // Both ends sit on character boundaries (`floor_char`, value edges).
            if let Ok(text) = std::str::from_utf8(&next[start..end]) {
                total += counter.text(text);
            }
        }
        total
    };
    let close_a = end_a - 1;
    let close_b = end_b - 1;

    // A different model reads no cache entry of the previous one.
    if let (Some(ma), Some(mb)) = (model_member(&top_a), model_member(&top_b)) {
        if previous[ma.value..ma.end] != next[mb.value..mb.end] {
            return Ok(Some(CacheBreak {
                path: "model".to_owned(),
                previous_offset: ma.value,
                next_offset: mb.value,
                cause: BreakCause::Model,
                rewrite_tokens: rewrite(0, None),
            }));
        }
    }

    let mut walk = Walk {
        a: previous,
        b: next,
        shared,
        path: Vec::new(),
        marker: None,
    };
    for (k, seg) in SEGMENTS.iter().enumerate() {
        let later_in_prev = spans_a[k + 1..].iter().any(Option::is_some);
        let seg_path = || {
            seg.iter()
                .map(|p| String::from_utf8_lossy(p))
                .collect::<Vec<_>>()
                .join(".")
        };
        let found = match (spans_a[k], spans_b[k]) {
            (None, None) => continue,
            (Some((sa, _)), None) => Found {
                path: seg_path(),
                prev: sa,
                next: close_b,
            },
            (None, Some((sb, _))) => {
                if !later_in_prev {
                    return Ok(None);
                }
                Found {
                    path: seg_path(),
                    prev: close_a,
                    next: sb,
                }
            }
            (Some((sa, ea)), Some((sb, eb))) => {
                walk.path.clear();
                walk.path.extend(seg.iter().map(|p| Part::Key(p)));
                let step = walk
                    .segment(sa, ea, sb, eb)
                    .map_err(|(in_a, offset, reason)| {
                        if in_a {
                            prev_err((offset, reason))
                        } else {
                            next_err((offset, reason))
                        }
                    })?;
                match step {
                    Step::Same(..) => continue,
                    Step::Differ(found) => found,
                    Step::PrevEnded(found) => {
                        // The previous body ends here if only closing brackets follow.
                        let closers_only = previous[found.prev..ea]
                            .iter()
                            .all(|c| matches!(c, b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r'));
                        if closers_only && !later_in_prev {
                            return Ok(None);
                        }
                        found
                    }
                }
            }
        };
        let cause = classify(next, seg, &found, spans_b[k]);
        return Ok(Some(CacheBreak {
            rewrite_tokens: rewrite(k, Some(found.next)),
            path: found.path,
            previous_offset: found.prev,
            next_offset: found.next,
            cause,
        }));
    }
    if let Some(found) = walk.marker {
        let seg = SEGMENTS
            .iter()
            .position(|s| found.path.starts_with(&*String::from_utf8_lossy(s[0])))
            .unwrap_or(0);
        return Ok(Some(CacheBreak {
            rewrite_tokens: rewrite(seg, Some(found.next)),
            path: found.path,
            previous_offset: found.prev,
            next_offset: found.next,
            cause: BreakCause::BreakpointMoved,
        }));
    }
    Ok(None)
}

/// The JSON text of pi's compaction summary opening (pi-mono 0.58.3
/// `packages/coding-agent/src/core/messages.ts`, `COMPACTION_SUMMARY_PREFIX`), as written
/// inside a JSON string.
fn escaped_summary_prefix() -> String {
    crate::transcript::COMPACTION_SUMMARY_PREFIX.replace('\n', "\\n")
}

/// The cause of a break at `found` in segment `seg` of the next body.
fn classify(next: &[u8], seg: &[&[u8]], found: &Found, span: Option<(usize, usize)>) -> BreakCause {
    let last = seg[seg.len() - 1];
    match last {
        b"tools" => return BreakCause::Tools,
        b"system" | b"instructions" | b"systemInstruction" => return BreakCause::SystemPrompt,
        _ => {}
    }
    // A history part (`messages`, `input`, `contents`): look at the next body's item there.
    let Some((start, end)) = span else {
        return BreakCause::HistoryRewritten;
    };
    let index = found
        .path
        .strip_prefix(&*seg_text(seg))
        .and_then(|rest| rest.strip_prefix('['))
        .and_then(|rest| rest.split(']').next())
        .and_then(|n| n.parse::<usize>().ok());
    let items = array_items(next, start, end);
    let item = match index {
        Some(i) => items.get(i).or(items.first()),
        None => items.first(),
    };
    let Some(&(is, ie)) = item else {
        return BreakCause::HistoryRewritten;
    };
    let text = &next[is..ie];
    let prefix = escaped_summary_prefix();
    if memmem::find(text, prefix.as_bytes()).is_some()
        || memmem::find(text, br#""type":"compaction""#).is_some()
        || memmem::find(text, br#""type": "compaction""#).is_some()
    {
        return BreakCause::Compaction;
    }
    if let Ok((fields, _)) = members(next, is) {
        if let Some(role) = fields.iter().find(|m| m.key == b"role") {
            if matches!(
                &next[role.value..role.end],
                br#""system""# | br#""developer""#
            ) {
                return BreakCause::SystemPrompt;
            }
        }
    }
    BreakCause::HistoryRewritten
}

fn model_member<'a>(top: &[Member<'a>]) -> Option<Member<'a>> {
    top.iter().rev().find(|m| m.key == b"model").copied()
}

fn seg_text(seg: &[&[u8]]) -> String {
    seg.iter()
        .map(|p| String::from_utf8_lossy(p))
        .collect::<Vec<_>>()
        .join(".")
}

/// The spans of the items of the array at `start..end` (empty when it is not an array).
fn array_items(b: &[u8], start: usize, end: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    if b.get(start) != Some(&b'[') {
        return out;
    }
    let mut i = ws(b, start + 1);
    while i < end && b[i] != b']' {
        let Ok(e) = skip_value(b, i) else { break };
        out.push((i, e));
        i = ws(b, e);
        if b.get(i) == Some(&b',') {
            i = ws(b, i + 1);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::token_count::{Encoding, Estimator};

    fn counter() -> TokenCounter {
        TokenCounter::new(Encoding::O200kBase, Estimator::Calibrated)
    }

    fn diff(a: &str, b: &str) -> Option<CacheBreak> {
        cache_diff(a.as_bytes(), b.as_bytes(), counter()).unwrap()
    }

    #[test]
    fn string_end_finds_the_closing_quote_past_escapes() {
        let pad = "x".repeat(40);
        for inner in [
            pad.clone(),
            format!("{pad}\\\\"),
            format!("{pad}\\\"{pad}"),
            format!("{pad}\\\\\\\"{pad}\\\\"),
            format!("\\n{pad}\\t\\\"\\\\{pad}"),
            format!("{pad}\\u0022{pad}"),
        ] {
            let text = format!("\"{inner}\" tail");
            let parsed: String = serde_json::from_str(&text[..inner.len() + 2]).unwrap();
            assert!(!parsed.is_empty());
            assert_eq!(
                string_end(text.as_bytes(), 0),
                Ok(inner.len() + 2),
                "{text}"
            );
        }
        let open = format!("\"{pad}\\\"");
        assert!(string_end(open.as_bytes(), 0).is_err());
    }

    const BASE: &str = r#"{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}],"system":[{"type":"text","text":"You are"}],"tools":[{"name":"read","input_schema":{"type":"object"}}]}"#;

    #[test]
    fn extension_and_identity_are_not_breaks() {
        assert_eq!(diff(BASE, BASE), None);
        let next = r#"{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":[{"type":"text","text":"yo"}]},{"role":"user","content":[{"type":"text","text":"more","cache_control":{"type":"ephemeral"}}]}],"system":[{"type":"text","text":"You are"}],"tools":[{"name":"read","input_schema":{"type":"object"}}],"max_tokens":5}"#;
        assert_eq!(diff(BASE, next), None);
    }

    #[test]
    fn system_change_is_named_with_path_and_offsets() {
        let next = BASE.replace("You are", "You were");
        let br = diff(BASE, &next).unwrap();
        assert_eq!(br.path, "system[0].text");
        assert_eq!(br.cause, BreakCause::SystemPrompt);
        // First differing byte: "You w" vs "You a".
        assert_eq!(&BASE[br.previous_offset..br.previous_offset + 3], "are");
        assert_eq!(&next[br.next_offset..br.next_offset + 4], "were");
        assert!(br.rewrite_tokens > 0);
    }

    #[test]
    fn tools_are_compared_first() {
        let next = BASE.replace("You are", "You were").replace(
            r#"{"type":"object"}"#,
            r#"{"type":"object","properties":{}}"#,
        );
        let br = diff(BASE, &next).unwrap();
        assert_eq!(br.path, "tools[0].input_schema.properties");
        assert_eq!(br.cause, BreakCause::Tools);
    }

    #[test]
    fn added_tool_breaks_when_system_follows() {
        let next = BASE.replace(
            r#"{"type":"object"}}]"#,
            r#"{"type":"object"}},{"name":"x","input_schema":{}}]"#,
        );
        let br = diff(BASE, &next).unwrap();
        assert_eq!(br.path, "tools[1]");
        assert_eq!(br.cause, BreakCause::Tools);
        assert_eq!(&next[br.next_offset..br.next_offset + 8], r#"{"name":"#);
        assert_eq!(&BASE[br.previous_offset..br.previous_offset + 1], "]");
    }

    #[test]
    fn only_markers_moved() {
        let next = BASE.replace(r#","cache_control":{"type":"ephemeral"}"#, "");
        let br = diff(BASE, &next).unwrap();
        assert_eq!(br.cause, BreakCause::BreakpointMoved);
        assert_eq!(br.path, "messages[0].content[0].cache_control");
    }

    #[test]
    fn history_rewrite_and_compaction() {
        let two =
            r#"{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}"#;
        let edited = r#"{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"c"},{"role":"user","content":"d"}]}"#;
        let br = diff(two, edited).unwrap();
        assert_eq!(br.path, "messages[1].content");
        assert_eq!(br.cause, BreakCause::HistoryRewritten);
        let summary = format!(
            r#"{{"messages":[{{"role":"user","content":"{}x\n</summary>"}}]}}"#,
            escaped_summary_prefix()
        );
        let br = diff(two, &summary).unwrap();
        assert_eq!(br.cause, BreakCause::Compaction);
        assert_eq!(br.path, "messages[0].content");
        let shorter = r#"{"messages":[{"role":"user","content":"a"}]}"#;
        let br = diff(two, shorter).unwrap();
        assert_eq!(br.path, "messages[1]");
        assert_eq!(br.cause, BreakCause::HistoryRewritten);
    }

    #[test]
    fn a_string_and_one_text_block_are_the_same_prompt() {
        let a = r#"{"messages":[{"role":"user","content":[{"type":"text","text":"q","cache_control":{"type":"ephemeral"}}]}]}"#;
        let b =
            r#"{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}"#;
        assert_eq!(diff(a, b), None);
        let c =
            r#"{"messages":[{"role":"user","content":"r"},{"role":"assistant","content":"a"}]}"#;
        assert_eq!(diff(a, c).unwrap().path, "messages[0].content");
        let same = r#"{"messages":[{"role":"user","content":"q"}]}"#;
        assert_eq!(diff(a, same).unwrap().cause, BreakCause::BreakpointMoved);
    }

    #[test]
    fn leading_system_message_and_model() {
        let a = r#"{"model":"g","messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}]}"#;
        let b = a.replace(r#""s""#, r#""t""#);
        assert_eq!(diff(a, &b).unwrap().cause, BreakCause::SystemPrompt);
        let c = a.replace(r#""g""#, r#""h""#);
        let br = diff(a, &c).unwrap();
        assert_eq!((br.cause, br.path.as_str()), (BreakCause::Model, "model"));
    }

    #[test]
    fn responses_and_gemini_orders() {
        let a = r#"{"model":"m","instructions":"x","input":[{"role":"user","content":"u"}]}"#;
        let b = r#"{"model":"m","instructions":"x","input":[{"role":"user","content":"u"},{"type":"compaction","encrypted_content":"e"}]}"#;
        assert_eq!(diff(a, b), None);
        let g = r#"{"model":"m","contents":[{"role":"user","parts":[{"text":"u"}]}],"config":{"systemInstruction":"s"}}"#;
        let h = g.replace(r#""s""#, r#""z""#);
        let br = diff(g, &h).unwrap();
        assert_eq!(br.path, "config.systemInstruction");
        assert_eq!(br.cause, BreakCause::SystemPrompt);
    }

    #[test]
    fn whitespace_is_not_content() {
        let pretty = "{\n  \"messages\": [ {\"role\": \"user\", \"content\": \"a\"} ]\n}";
        let compact =
            r#"{"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}"#;
        assert_eq!(diff(pretty, compact), None);
    }

    #[test]
    fn bad_bodies_are_errors() {
        for bad in [
            "",
            "[]",
            "{",
            r#"{"a":}"#,
            r#"{"a":[}"#,
            r#"{"a":"x}"#,
            "{} x",
        ] {
            let err = cache_diff(bad.as_bytes(), BASE.as_bytes(), counter()).unwrap_err();
            assert_eq!(err.which, "previous", "{bad}");
            let err = cache_diff(BASE.as_bytes(), bad.as_bytes(), counter()).unwrap_err();
            assert_eq!(err.which, "next", "{bad}");
        }
        assert!(cache_diff(b"{\"a\":\"\xff\"}", b"{}", counter()).is_err());
    }

    #[test]
    fn offsets_stay_on_character_boundaries() {
        let a = r#"{"messages":[{"role":"user","content":"héllo"}]}"#;
        let b = r#"{"messages":[{"role":"user","content":"hèllo"}]}"#;
        let br = diff(a, b).unwrap();
        assert!(a.is_char_boundary(br.previous_offset));
        assert!(b.is_char_boundary(br.next_offset));
        assert_eq!(&b[br.next_offset..], "èllo\"}]}");
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let deep = format!(
            r#"{{"messages":{}1{}}}"#,
            "[".repeat(5000),
            "]".repeat(5000)
        );
        let deeper = format!(
            r#"{{"messages":{}2{}}}"#,
            "[".repeat(5000),
            "]".repeat(5000)
        );
        let br = diff(&deep, &deeper).unwrap();
        assert_eq!(br.cause, BreakCause::HistoryRewritten);
    }

    /// `cache_diff_after` over a sequence names what `cache_diff` names for each pair: bodies
    /// that append, part inside a message, and part right after a leading number.
    #[test]
    fn the_chain_names_what_the_pair_names() {
        let bodies = [
            r#"{"n":1,"messages":[{"role":"user","content":"a"}],"max_tokens":5}"#,
            r#"{"n":11,"messages":[{"role":"user","content":"a"}],"max_tokens":5}"#,
            r#"{"n":11,"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}],"max_tokens":5}"#,
            r#"{"n":11,"messages":[{"role":"user","content":"a"},{"role":"user","content":"bc"}],"max_tokens":5}"#,
            r#"{"n":11,"messages":[{"role":"user","content":"a"},{"role":"user","content":"bc"},2],"max_tokens":5}"#,
            r#"{"n":11,"messages":[{"role":"user","content":"a"},{"role":"user","content":"bc"},23],"max_tokens":5}"#,
            r#"{"n":11,"system":"x","messages":[{"role":"user","content":"a"}]}"#,
        ];
        let mut layout = body_layout(bodies[0].as_bytes()).unwrap();
        for pair in bodies.windows(2) {
            let (previous, next) = (pair[0].as_bytes(), pair[1].as_bytes());
            let (found, next_layout) =
                cache_diff_after(previous, &layout, next, counter()).unwrap();
            assert_eq!(
                found,
                cache_diff(previous, next, counter()).unwrap(),
                "{pair:?}"
            );
            layout = next_layout;
        }
    }
}
