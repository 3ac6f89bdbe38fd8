//! Server-sent events split as the SDKs' SSE decoders split them (WHATWG rules): lines end at
//! `\n`, `\r\n` or `\r`; `event:` names the frame, `data:` lines join with `\n`, a blank line
//! dispatches, `:` lines are comments; one optional space after the colon is dropped. OpenAI's
//! `data: [DONE]` terminator carries no event. The decoder takes bytes in chunks cut anywhere
//! (inside a line, a `\r\n` pair or a UTF-8 character), as a network read delivers them.

use super::ResponseError;

/// One dispatched frame: its `event:` name, if any, and its joined `data:` text.
#[derive(Debug)]
pub struct Frame {
    pub name: Option<String>,
    pub data: String,
}

/// OpenAI's `data: [DONE]` terminator (a long data text is never it: no trim of every event).
fn is_done(data: &str) -> bool {
    data.len() < 64 && data.trim() == "[DONE]"
}

/// Hands one frame to `sink`, unless it is `[DONE]` or comes after a `[DONE]` that ended the
/// stream (`stop_at_done`: the openai SDK's `Stream` breaks out of its loop there; Anthropic's,
/// Google's and pi-ai's own readers only skip the terminator).
fn hand_over(
    ended: &mut bool,
    stop_at_done: bool,
    name: Option<&str>,
    data: &str,
    sink: &mut FrameSink<'_>,
) -> Result<(), ResponseError> {
    if *ended {
        return Ok(());
    }
    if is_done(data) {
        *ended = stop_at_done;
        return Ok(());
    }
    sink(name, data)
}

/// Where the decoder hands each frame: its name (if any) and its data, borrowed.
pub type FrameSink<'a> = dyn FnMut(Option<&str>, &str) -> Result<(), ResponseError> + 'a;

/// The incremental decoder. Lines that lie whole inside one chunk are read in place; only a
/// line cut by a chunk boundary is copied, and the frame buffers are reused.
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// The bytes of the line not yet ended.
    line: Vec<u8>,
    /// The previous chunk ended in `\r`: a `\n` opening this one belongs to it.
    after_cr: bool,
    name: String,
    has_name: bool,
    data: String,
    has_data: bool,
    /// A `[DONE]` ends the stream: later frames are not handed over.
    stop_at_done: bool,
    /// A `[DONE]` came and `stop_at_done` is set.
    ended: bool,
}

impl SseDecoder {
    /// A decoder that stops at OpenAI's `data: [DONE]` terminator (`stop_at_done`), as the
    /// openai SDK's `Stream` does, or only skips it.
    pub fn new(stop_at_done: bool) -> Self {
        Self {
            stop_at_done,
            ..Self::default()
        }
    }

    /// The frames completed by `chunk`.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<Frame>, ResponseError> {
        let mut out = Vec::new();
        self.feed_with(chunk, &mut |name, data| {
            out.push(Frame {
                name: name.map(str::to_owned),
                data: data.to_owned(),
            });
            Ok(())
        })?;
        Ok(out)
    }

    /// Hands each frame completed by `chunk` to `sink` (its name and data, borrowed).
    pub fn feed_with(
        &mut self,
        chunk: &[u8],
        sink: &mut FrameSink<'_>,
    ) -> Result<(), ResponseError> {
        let mut rest = chunk;
        if self.after_cr {
            self.after_cr = false;
            if let Some(stripped) = rest.strip_prefix(b"\n") {
                rest = stripped;
            }
        }
        while let Some(at) = memchr::memchr2(b'\n', b'\r', rest) {
            let end = rest[at];
            let whole = &rest[..at];
            rest = &rest[at + 1..];
            if end == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
            if self.line.is_empty() {
                self.line_done(whole, sink)?;
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(whole);
                let result = self.line_done(&line, sink);
                line.clear();
                self.line = line;
                result?;
            }
        }
        self.line.extend_from_slice(rest);
        Ok(())
    }

    /// Hands each frame of `text` (already UTF-8: no line is checked again) to `sink`. A frame
    /// with one `data:` line (nearly all of them) is handed over in place, without a copy.
    pub fn feed_text_with(
        &mut self,
        text: &str,
        sink: &mut FrameSink<'_>,
    ) -> Result<(), ResponseError> {
        if !self.line.is_empty() || self.after_cr {
            return self.feed_with(text.as_bytes(), sink);
        }
        let bytes = text.as_bytes();
        let mut start = 0;
        // The data of the frame being read while it is one line of `text`, not yet copied.
        let mut in_place: Option<&str> = None;
        loop {
            // A blank line (every frame ends in one) needs no search.
            let at = match bytes.get(start) {
                Some(b'\n' | b'\r') => start,
                _ => match memchr::memchr2(b'\n', b'\r', &bytes[start..]) {
                    Some(offset) => start + offset,
                    None => break,
                },
            };
            // `\n` and `\r` are ASCII: both ends are character boundaries.
            let line = text.get(start..at).unwrap_or_default();
            start = at + 1;
            if bytes[at] == b'\r' {
                match bytes.get(start) {
                    Some(b'\n') => start += 1,
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
            if line.is_empty() {
                if let Some(data) = in_place.take() {
                    self.has_data = false;
                    let has_name = std::mem::replace(&mut self.has_name, false);
                    let name = has_name.then_some(self.name.as_str());
                    let result = hand_over(&mut self.ended, self.stop_at_done, name, data, sink);
                    self.name.clear();
                    result?;
                    continue;
                }
            } else if let Some(value) = line.strip_prefix("data:") {
                if !self.has_data {
                    in_place = Some(value.strip_prefix(' ').unwrap_or(value));
                    self.has_data = true;
                    continue;
                }
            } else if let Some(value) = line.strip_prefix("event:") {
                // The name does not touch the data: the frame's data stays in place.
                self.name.clear();
                self.name.push_str(value.strip_prefix(' ').unwrap_or(value));
                self.has_name = true;
                continue;
            }
            if let Some(data) = in_place.take() {
                self.data.push_str(data); // a second data line: join them in the buffer
            }
            self.text_line_done(line, sink)?;
        }
        if let Some(data) = in_place {
            self.data.push_str(data);
        }
        self.line.extend_from_slice(&bytes[start..]);
        Ok(())
    }

    /// The stream ended. A last frame without its blank line: the SDKs' decoders never
    /// dispatch it, so a stream cut inside its final event reads as if that event never came.
    /// A complete JSON frame is still taken, so SSE text with its final blank line trimmed
    /// reads the same.
    pub fn finish(&mut self) -> Result<Vec<Frame>, ResponseError> {
        let mut out = Vec::new();
        let mut sink = |name: Option<&str>, data: &str| {
            out.push(Frame {
                name: name.map(str::to_owned),
                data: data.to_owned(),
            });
            Ok(())
        };
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.line_done(&line, &mut sink)?;
        }
        if self.has_data && crate::base::parse_value(&self.data).is_err() {
            self.has_data = false;
            self.data.clear();
            return Ok(out);
        }
        self.dispatch(&mut sink)?;
        Ok(out)
    }

    fn line_done(&mut self, line: &[u8], sink: &mut FrameSink<'_>) -> Result<(), ResponseError> {
        let line = std::str::from_utf8(line)
            .map_err(|e| ResponseError::Shape(format!("an SSE line is not UTF-8: {e}")))?;
        self.text_line_done(line, sink)
    }

    fn text_line_done(
        &mut self,
        line: &str,
        sink: &mut FrameSink<'_>,
    ) -> Result<(), ResponseError> {
        if line.is_empty() {
            return self.dispatch(sink);
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => {
                self.name.clear();
                self.name.push_str(value);
                self.has_name = true;
            }
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            // `id`, `retry` and unknown fields carry nothing pi-ai reads.
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, sink: &mut FrameSink<'_>) -> Result<(), ResponseError> {
        let has_name = std::mem::replace(&mut self.has_name, false);
        if !std::mem::replace(&mut self.has_data, false) {
            self.name.clear();
            return Ok(());
        }
        let name = has_name.then_some(self.name.as_str());
        let result = hand_over(&mut self.ended, self.stop_at_done, name, &self.data, sink);
        self.name.clear();
        self.data.clear();
        result
    }
}

#[cfg(test)]
mod tests {
    use super::{Frame, SseDecoder};

    fn split(text: &str) -> Vec<Frame> {
        let mut d = SseDecoder::default();
        let mut frames = d.feed(text.as_bytes()).unwrap();
        frames.extend(d.finish().unwrap());
        frames
    }

    #[test]
    fn the_openai_decoder_stops_at_done_and_the_others_skip_it() {
        let text = "data: {\"a\":1}\n\ndata: [DONE]\n\ndata: {\"b\":2}\n\n";
        for (stop, want) in [(true, 1), (false, 2)] {
            let mut d = SseDecoder::new(stop);
            let mut frames = d.feed(text.as_bytes()).unwrap();
            frames.extend(d.finish().unwrap());
            assert_eq!(frames.len(), want);
            let mut d = SseDecoder::new(stop);
            let mut count = 0;
            d.feed_text_with(text, &mut |_, _| {
                count += 1;
                Ok(())
            })
            .unwrap();
            assert_eq!(count, want);
        }
    }

    #[test]
    fn frames_names_and_done() {
        let events = split("event: a\ndata: {\"x\":1}\n\n: ping\r\ndata: [DONE]\n\n");
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].name.as_deref(), Some("a"));
        assert_eq!(events[0].data, "{\"x\":1}");
        // Cut inside the last frame: dropped, as the SDK decoders drop it.
        let cut = split("data: {\"a\":1}\n\ndata: {\"b\":");
        assert_eq!(cut.len(), 1);
        // A complete last frame without its blank line is taken.
        assert_eq!(split("data: {\"a\":1}\n\ndata: {\"b\":2}").len(), 2);
    }

    #[test]
    fn any_chunking_gives_the_same_frames() {
        let text = "event: x\r\ndata: {\"t\":\"é✓\"}\r\n\r\ndata: {\"a\":\r\ndata: 1}\r\r: c\n\ndata: [DONE]\n\n";
        let whole: Vec<(Option<String>, String)> =
            split(text).into_iter().map(|f| (f.name, f.data)).collect();
        assert_eq!(whole.len(), 2);
        assert_eq!(whole[1].1, "{\"a\":\n1}");
        let bytes = text.as_bytes();
        for size in 1..8 {
            let mut d = SseDecoder::default();
            let mut got = Vec::new();
            for chunk in bytes.chunks(size) {
                got.extend(d.feed(chunk).unwrap());
            }
            got.extend(d.finish().unwrap());
            let got: Vec<_> = got.into_iter().map(|f| (f.name, f.data)).collect();
            assert_eq!(got, whole, "chunks of {size}");
        }
        // Text already known to be UTF-8 reads the same, whole or after a byte chunk.
        for split in [0, 3, 17] {
            let mut d = SseDecoder::default();
            let mut got = d.feed(&bytes[..split]).unwrap();
            let mut sink = |name: Option<&str>, data: &str| {
                got.push(Frame {
                    name: name.map(str::to_owned),
                    data: data.to_owned(),
                });
                Ok(())
            };
            d.feed_text_with(&text[split..], &mut sink).unwrap();
            got.extend(d.finish().unwrap());
            let got: Vec<_> = got.into_iter().map(|f| (f.name, f.data)).collect();
            assert_eq!(got, whole, "text after {split} bytes");
        }
    }

    #[test]
    fn a_line_that_is_not_utf8_is_refused() {
        let mut d = SseDecoder::default();
        assert!(d.feed(b"data: \xff\n\n").is_err());
    }
}
