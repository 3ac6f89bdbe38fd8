//! Server-sent events split as the SDKs' SSE decoders split them (WHATWG rules): lines end at
//! `\n`, `\r\n` or `\r`; `event:` names the frame, `data:` lines join with `\n`, a blank line
//! dispatches, `:` lines are comments; one optional space after the colon is dropped. OpenAI's
//! `data: [DONE]` terminator carries no event.

use serde_json::Value;

use super::{ResponseError, WireEvent};

pub(crate) fn split(text: &str) -> Result<Vec<WireEvent>, ResponseError> {
    let mut out = Vec::new();
    let mut name: Option<String> = None;
    let mut data: Option<String> = None;
    let mut frames = 0usize;
    let mut dispatch = |name: &mut Option<String>,
                        data: &mut Option<String>,
                        out: &mut Vec<WireEvent>|
     -> Result<(), ResponseError> {
        let event_name = name.take();
        let Some(text) = data.take() else {
            return Ok(());
        };
        frames += 1;
        if text.trim() == "[DONE]" {
            return Ok(());
        }
        let value: Value = crate::base::parse_value(&text).map_err(|e| ResponseError::Json {
            index: frames - 1,
            reason: format!("{e} in data line {:?}", clip(&text)),
        })?;
        out.push(WireEvent {
            name: event_name,
            data: value,
        });
        Ok(())
    };
    for raw in text.split('\n') {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        // A lone `\r` also ends a line.
        for line in line.split('\r') {
            if line.is_empty() {
                dispatch(&mut name, &mut data, &mut out)?;
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (line, ""),
            };
            match field {
                "event" => name = Some(value.to_owned()),
                "data" => match &mut data {
                    Some(d) => {
                        d.push('\n');
                        d.push_str(value);
                    }
                    None => data = Some(value.to_owned()),
                },
                // `id`, `retry` and unknown fields carry nothing pi-ai reads.
                _ => {}
            }
        }
    }
    // A last frame without its blank line: the SDKs' decoders never dispatch it, so a stream
    // cut inside its final event reads as if that event never came. A complete JSON frame is
    // still taken, so SSE text with its final blank line trimmed reads the same.
    if data
        .as_deref()
        .is_some_and(|d| crate::base::parse_value(d).is_err())
    {
        return Ok(out);
    }
    dispatch(&mut name, &mut data, &mut out)?;
    Ok(out)
}

fn clip(text: &str) -> String {
    text.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn frames_names_and_done() {
        let events = split("event: a\ndata: {\"x\":1}\n\n: ping\r\ndata: [DONE]\n\n").unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].name.as_deref(), Some("a"));
        assert_eq!(events[0].data["x"], 1);
        assert!(split("data: not json\n\n").is_err());
        // Cut inside the last frame: dropped, as the SDK decoders drop it.
        let cut = split("data: {\"a\":1}\n\ndata: {\"b\":").unwrap();
        assert_eq!(cut.len(), 1);
    }
}
