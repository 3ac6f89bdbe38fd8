//! Where a stored message's fields are: the byte ranges of its top-level keys and values and,
//! when `content` is an array, of each element and of each element's fields. Readers that
//! copy stored bytes (the request payloads) look fields up here instead of scanning the text
//! again on every request; a message's layout is computed once and cached with it.
//!
//! The stored texts are valid JSON (every transcript message is validated when stored), so
//! values are delimited by counting brackets outside strings; out-of-range reads answer
//! `None`, never a panic.

/// A byte range of a message's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    start: u32,
    end: u32,
}

impl Span {
    fn new(start: usize, end: usize) -> Option<Span> {
        Some(Span {
            start: u32::try_from(start).ok()?,
            end: u32::try_from(end).ok()?,
        })
    }

    /// The range's text, `None` for the empty range (an absent field: a value is never empty).
    #[inline]
    fn get<'a>(&self, text: &'a str) -> Option<&'a str> {
        (self.end > self.start).then(|| self.of(text))
    }

    /// The range's text (`""` when it does not fall on `text`'s character boundaries, which a
    /// layout scanned from `text` never does).
    #[inline]
    pub fn of<'a>(&self, text: &'a str) -> &'a str {
        text.get(self.start as usize..self.end as usize)
            .unwrap_or("")
    }
}

/// The message keys a layout records, in the order of [`MessageLayout::message_fields`].
pub const MESSAGE_KEYS: [&str; 10] = [
    "role",
    "content",
    "provider",
    "api",
    "model",
    "stopReason",
    "toolCallId",
    "toolName",
    "isError",
    "errorMessage",
];

/// The content-block keys a layout records, in the order of [`ContentItem::fields`].
pub const BLOCK_KEYS: [&str; 12] = [
    "type",
    "text",
    "thinking",
    "thinkingSignature",
    "redacted",
    "id",
    "name",
    "arguments",
    "mimeType",
    "data",
    "textSignature",
    "thoughtSignature",
];

fn key_slot(keys: &[&str], key: &[u8]) -> Option<usize> {
    keys.iter().position(|k| k.as_bytes() == key)
}

/// One element of the `content` array: its text, and the values of [`BLOCK_KEYS`] when it is
/// an object whose keys hold no escape.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ItemSpan {
    value: Span,
    fields: Option<[Span; BLOCK_KEYS.len()]>,
}

/// Where a stored message's fields are (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageLayout {
    /// The values of [`MESSAGE_KEYS`] (the last of duplicates, as `JSON.parse` keeps); `None`
    /// when the message is not an object, a key holds an escape (compared as written it
    /// could differ from the key it stands for) or `content` appears twice.
    fields: Option<[Span; MESSAGE_KEYS.len()]>,
    /// The elements of `content` when it is an array.
    items: Option<Vec<ItemSpan>>,
}

impl MessageLayout {
    /// Scans `text` once.
    pub fn scan(text: &str) -> MessageLayout {
        let mut layout = MessageLayout::default();
        let b = text.as_bytes();
        if u32::try_from(b.len()).is_err() {
            return layout;
        }
        let mut items = None;
        let mut seen_content = false;
        let mut fields = [Span::default(); MESSAGE_KEYS.len()];
        let read = object_fields(b, skip_ws(b, 0), |key, start| {
            let slot = key_slot(&MESSAGE_KEYS, key);
            let end = if slot == Some(1) {
                // A second `content` is left to slower readers.
                if std::mem::replace(&mut seen_content, true) {
                    return None;
                }
                if b.get(start) == Some(&b'[') {
                    let (found, end) = content_items(b, start)?;
                    items = Some(found);
                    end
                } else {
                    value_end(b, start)?
                }
            } else {
                value_end(b, start)?
            };
            if let Some(slot) = slot {
                fields[slot] = Span::new(start, end)?;
            }
            Some(end)
        });
        if read.is_some() {
            layout.fields = Some(fields);
            layout.items = items;
        }
        layout
    }

    /// The raw values of [`MESSAGE_KEYS`] (`None` for an absent key); `None` when the
    /// message is not an object, a key holds an escape or `content` appears twice.
    #[inline]
    pub fn message_fields<'a>(
        &self,
        text: &'a str,
    ) -> Option<[Option<&'a str>; MESSAGE_KEYS.len()]> {
        let fields = self.fields.as_ref()?;
        let mut out = [None; MESSAGE_KEYS.len()];
        for (slot, span) in out.iter_mut().zip(fields) {
            *slot = span.get(text);
        }
        Some(out)
    }

    /// The raw `role` (see [`MessageLayout::message_fields`]).
    #[inline]
    pub fn role<'a>(&self, text: &'a str) -> Option<Option<&'a str>> {
        Some(self.fields.as_ref()?[0].get(text))
    }

    /// The elements of `content` when it is an array.
    pub fn content_items<'a>(
        &'a self,
        text: &'a str,
    ) -> Option<impl ExactSizeIterator<Item = ContentItem<'a>> + 'a> {
        let items = self.items.as_ref()?;
        Some(items.iter().map(move |item| ContentItem {
            text: item.value.of(text),
            fields: item.fields.as_ref(),
            source: text,
        }))
    }

    /// Bytes held besides the message text.
    pub fn heap_bytes(&self) -> usize {
        self.items
            .as_ref()
            .map_or(0, |i| i.capacity() * std::mem::size_of::<ItemSpan>())
    }
}

/// One element of a message's `content` array (see [`MessageLayout::content_items`]).
#[derive(Clone, Copy)]
pub struct ContentItem<'a> {
    /// The element's raw JSON text.
    pub text: &'a str,
    fields: Option<&'a [Span; BLOCK_KEYS.len()]>,
    source: &'a str,
}

impl<'a> ContentItem<'a> {
    /// The raw values of [`BLOCK_KEYS`] (`None` for an absent key); `None` when the element
    /// is not an object or a key holds an escape.
    #[inline]
    pub fn fields(&self) -> Option<[Option<&'a str>; BLOCK_KEYS.len()]> {
        let source = self.source;
        let mut out = [None; BLOCK_KEYS.len()];
        for (slot, span) in out.iter_mut().zip(self.fields?) {
            *slot = span.get(source);
        }
        Some(out)
    }
}

/// Reads the `content` array starting at `b[start]`: its elements and where it ends (`None`
/// when an element is not a value).
fn content_items(b: &[u8], start: usize) -> Option<(Vec<ItemSpan>, usize)> {
    let mut items = Vec::new();
    let mut i = skip_ws(b, start + 1);
    if b.get(i) == Some(&b']') {
        return Some((items, i + 1));
    }
    loop {
        let mut end = None;
        let mut item_fields = None;
        if b.get(i) == Some(&b'{') {
            let mut fields = [Span::default(); BLOCK_KEYS.len()];
            // `None` for an escaped key: the element is then kept as text only.
            end = object_fields(b, i, |key, at| {
                let end = value_end(b, at)?;
                if let Some(slot) = key_slot(&BLOCK_KEYS, key) {
                    fields[slot] = Span::new(at, end)?;
                }
                Some(end)
            });
            item_fields = end.map(|_| fields);
        }
        let end = match end {
            Some(end) => end,
            None => value_end(b, i)?,
        };
        items.push(ItemSpan {
            value: Span::new(i, end)?,
            fields: item_fields,
        });
        i = skip_ws(b, end);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b']') => return Some((items, i + 1)),
            _ => return None,
        }
    }
}

/// Reads the object starting at `b[start]`; `value(key, at)` reads the value starting at
/// `at` and gives where it ends. Gives where the object ends, or `None` when it is not an
/// object or a key holds an escape.
fn object_fields(
    b: &[u8],
    start: usize,
    mut value: impl FnMut(&[u8], usize) -> Option<usize>,
) -> Option<usize> {
    if b.get(start) != Some(&b'{') {
        return None;
    }
    let mut i = skip_ws(b, start + 1);
    if b.get(i) == Some(&b'}') {
        return Some(i + 1);
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(b, i)?;
        let key = b.get(i + 1..key_end - 1)?;
        if memchr::memchr(b'\\', key).is_some() {
            return None;
        }
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        let end = value(key, i)?;
        i = skip_ws(b, end);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => return Some(i + 1),
            _ => return None,
        }
    }
}

/// Where the JSON value starting at `b[i]` ends.
pub(crate) fn value_end(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => string_end(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = string_end(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            None
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
}

/// Where the string starting at `b[i]` (a quote) ends, past its closing quote. Short strings
/// (keys, ids, types) are scanned byte by byte: a vector search costs more to start than
/// they take to read.
#[inline]
pub(crate) fn string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    let short = (j + 24).min(b.len());
    while j < short {
        match b[j] {
            b'"' => return Some(j + 1),
            b'\\' => j += 2,
            _ => j += 1,
        }
    }
    // Then quote to quote: message text is full of escapes (`\n`, `\"`), and stopping at each
    // backslash cost a vector search per escape. A quote closes the string when the run of
    // backslashes in front of it (inside the string) is even.
    loop {
        let quote = j + memchr::memchr(b'"', b.get(j..)?)?;
        let mut run = 0;
        while quote - run > i + 1 && b[quote - run - 1] == b'\\' {
            run += 1;
        }
        if run % 2 == 0 {
            return Some(quote + 1);
        }
        j = quote + 1;
    }
}

pub(crate) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(layout: &MessageLayout, text: &str, key: &str) -> Option<String> {
        let slot = key_slot(&MESSAGE_KEYS, key.as_bytes()).unwrap();
        layout.message_fields(text)?[slot].map(str::to_owned)
    }

    fn block_field(item: &ContentItem<'_>, key: &str) -> Option<String> {
        let slot = key_slot(&BLOCK_KEYS, key.as_bytes()).unwrap();
        item.fields()?[slot].map(str::to_owned)
    }

    #[test]
    fn fields_and_content_items_are_found_in_one_scan() {
        let text = r#" { "role" : "assistant", "content" : [ {"type":"text","text":"a\"]}"} , "x", {"type":"toolCall","arguments":{"a":[1,{"b":"}"}]},"extra":1} ], "api":"y", "api":"z" } "#;
        let layout = MessageLayout::scan(text);
        assert_eq!(
            field(&layout, text, "role").as_deref(),
            Some(r#""assistant""#)
        );
        let content = &text[text.find('[').unwrap()..text.rfind(']').unwrap() + 1];
        assert_eq!(field(&layout, text, "content").as_deref(), Some(content));
        // The last of duplicates, as JSON.parse keeps.
        assert_eq!(field(&layout, text, "api").as_deref(), Some(r#""z""#));
        assert_eq!(field(&layout, text, "model"), None);
        let items: Vec<_> = layout.content_items(text).unwrap().collect();
        assert_eq!(items.len(), 3);
        assert_eq!(items[0].text, r#"{"type":"text","text":"a\"]}"}"#);
        assert_eq!(
            block_field(&items[0], "text").as_deref(),
            Some(r#""a\"]}""#)
        );
        assert_eq!(block_field(&items[0], "id"), None);
        assert_eq!(items[1].text, r#""x""#);
        assert!(items[1].fields().is_none());
        assert_eq!(
            block_field(&items[2], "arguments").as_deref(),
            Some(r#"{"a":[1,{"b":"}"}]}"#)
        );
    }

    #[test]
    fn unreadable_shapes_say_so() {
        // An escaped key, a non-object, a second content.
        let text = r#"{"r\u006fle":"user"}"#;
        assert!(MessageLayout::scan(text).message_fields(text).is_none());
        assert!(MessageLayout::scan("[1]").message_fields("[1]").is_none());
        let text = r#"{"content":[],"content":"x"}"#;
        assert!(MessageLayout::scan(text).message_fields(text).is_none());
        // A string content has no items; an escaped key inside a block makes it text only.
        let text = r#"{"role":"user","content":"hi"}"#;
        let layout = MessageLayout::scan(text);
        assert!(layout.content_items(text).is_none());
        assert_eq!(field(&layout, text, "content").as_deref(), Some(r#""hi""#));
        let text = r#"{"content":[{"t\u0079pe":"text"},{"type":"image"}],"role":"user"}"#;
        let layout = MessageLayout::scan(text);
        let items: Vec<_> = layout.content_items(text).unwrap().collect();
        assert!(items[0].fields().is_none());
        assert_eq!(items[0].text, r#"{"t\u0079pe":"text"}"#);
        assert_eq!(
            block_field(&items[1], "type").as_deref(),
            Some(r#""image""#)
        );
        assert_eq!(field(&layout, text, "role").as_deref(), Some(r#""user""#));
        let text = r#"{"content":[],"x":{}}"#;
        assert_eq!(
            MessageLayout::scan(text)
                .content_items(text)
                .unwrap()
                .count(),
            0
        );
    }

    #[test]
    fn truncated_texts_never_panic() {
        let text = r#"{"role":"assistant","content":[{"type":"text","text":"a\\b"},{"type":"toolCall","arguments":{"a":[1]}}],"api":"x"}"#;
        for end in 0..text.len() {
            if let Some(prefix) = text.get(..end) {
                let layout = MessageLayout::scan(prefix);
                let _ = layout.message_fields(prefix);
                for item in layout.content_items(prefix).into_iter().flatten() {
                    let _ = item.fields();
                }
            }
        }
    }
}
