//! Gemini replies, read as pi-ai 0.58.3 reads them. Two loops, one per transport:
//!
//! - `google-generative-ai` and `google-vertex`: pi-mono `packages/ai/src/providers/google.ts`
//!   and `google-vertex.ts` (`streamGoogle`, `streamGoogleVertex`: the same loop over
//!   `@google/genai`'s `generateContentStream` chunks, one `GenerateContentResponse` per SSE
//!   `data:` line) with `mapStopReason` from `google-shared.ts`, which throws on a finish
//!   reason outside the SDK's enum.
//! - `google-gemini-cli`: `google-gemini-cli.ts` (`streamResponse`): pi-ai's own line reader
//!   over Cloud Code Assist's envelopes `{"response": GenerateContentResponse, "traceId"}`. A
//!   `data:` line that is not JSON or has no `response` is skipped; `start` is pushed with the
//!   first block; cached tokens are taken out of the input count; `mapStopReasonString` maps an
//!   unknown finish reason to `error`; a reply without any text or call is refetched and, when
//!   it stays empty, fails with "Cloud Code Assist API returned an empty response" (a refetch
//!   replays the same reply, so one pass gives pi-ai's final message).
//!
//! Both take a function call's `args` as they are and name a call without an id (or with an
//! id already used in the reply) `<name>_<Date.now()>_<n>`, n counting calls so named.

use serde_json::{Map, Value};

use super::{count, event_json, reply_accessors, ApiReader, PiEvents, Stop, Usage};
use crate::base::{is_truthy, js_string, to_js_string};

/// The transport a Gemini reply came over.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Transport {
    /// `@google/genai` chunks (Gemini API and Vertex AI).
    Sdk,
    /// Cloud Code Assist envelopes read by pi-ai's own SSE line reader.
    CloudCodeAssist,
}

pub(super) fn new_reader(model: &Value, _options: &Value) -> Box<dyn ApiReader> {
    Box::new(GoogleReader::new(model, Transport::Sdk))
}

pub(super) fn new_cli_reader(model: &Value, _options: &Value) -> Box<dyn ApiReader> {
    Box::new(GoogleReader::new(model, Transport::CloudCodeAssist))
}

/// A non-streaming `GenerateContentResponse` (or, for Cloud Code Assist, its envelope) is the
/// one chunk a stream of it would carry.
pub(super) fn body_events(
    body: &Value,
) -> Result<Vec<(Option<String>, String)>, super::ResponseError> {
    Ok(vec![(None, to_js_string(body))])
}

/// The open text or thinking block (pi-ai's `currentBlock`; a tool call is never left open).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    Text,
    Thinking,
}

struct GoogleReader {
    model: Value,
    transport: Transport,
    blocks: Vec<Map<String, Value>>,
    open: Option<Open>,
    usage: Usage,
    stop_reason: &'static str,
    /// `Date.now()` in the ids pi-ai makes up for calls.
    now_ms: f64,
    /// pi-ai's `toolCallCounter`: calls named so far.
    named_calls: u64,
    /// Chunks read (for Cloud Code Assist: envelopes with a `response`).
    chunks: usize,
    /// A chunk carried a finish reason: the stream ended where Gemini ends it.
    finished: bool,
    /// Cloud Code Assist: `hasContent` (a text part or a call arrived) and `started` (`start`
    /// was pushed).
    has_content: bool,
    started: bool,
    /// Cloud Code Assist: `data:` lines pi-ai skipped because they were not JSON.
    skipped_lines: usize,
}

/// `mapStopReason` (`google-shared.ts`): the SDK's `FinishReason` values; `Err` is what its
/// exhaustiveness check throws for any other.
fn map_stop_reason(reason: &Value) -> Result<&'static str, String> {
    Ok(match reason.as_str().unwrap_or("") {
        "STOP" => "stop",
        "MAX_TOKENS" => "length",
        "BLOCKLIST"
        | "PROHIBITED_CONTENT"
        | "SPII"
        | "SAFETY"
        | "IMAGE_SAFETY"
        | "IMAGE_PROHIBITED_CONTENT"
        | "IMAGE_RECITATION"
        | "IMAGE_OTHER"
        | "RECITATION"
        | "FINISH_REASON_UNSPECIFIED"
        | "OTHER"
        | "LANGUAGE"
        | "MALFORMED_FUNCTION_CALL"
        | "UNEXPECTED_TOOL_CALL"
        | "NO_IMAGE" => "error",
        _ => return Err(format!("Unhandled stop reason: {}", js_string(reason))),
    })
}

/// `mapStopReasonString` (`google-shared.ts`), for Cloud Code Assist's raw strings.
fn map_stop_reason_string(reason: &Value) -> &'static str {
    match reason.as_str() {
        Some("STOP") => "stop",
        Some("MAX_TOKENS") => "length",
        _ => "error",
    }
}

/// `retainThoughtSignature` (`google-shared.ts`): a non-empty incoming signature replaces the
/// block's, anything else keeps it.
fn retain_signature(block: &mut Map<String, Value>, key: &str, incoming: Option<&Value>) {
    if let Some(Value::String(s)) = incoming {
        if !s.is_empty() {
            block.insert(key.to_owned(), Value::String(s.clone()));
        }
    }
}

impl GoogleReader {
    fn new(model: &Value, transport: Transport) -> Self {
        Self {
            model: model.clone(),
            transport,
            blocks: Vec::new(),
            open: None,
            usage: Usage::zero(),
            stop_reason: "stop",
            now_ms: 0.0,
            named_calls: 0,
            chunks: 0,
            finished: false,
            has_content: false,
            started: false,
            skipped_lines: 0,
        }
    }

    fn index(&self) -> usize {
        self.blocks.len().saturating_sub(1)
    }

    /// Cloud Code Assist's `ensureStarted`: `start` goes out with the first block.
    fn ensure_started(&mut self, out: &mut PiEvents) {
        if self.transport == Transport::CloudCodeAssist && !self.started {
            out.push("start", None);
            self.started = true;
        }
    }

    /// Ends the open text or thinking block.
    fn close_open(&mut self, out: &mut PiEvents) {
        let at = self.index();
        match self.open.take() {
            Some(Open::Text) => out.push("text_end", Some(at)),
            Some(Open::Thinking) => out.push("thinking_end", Some(at)),
            None => {}
        }
    }

    /// One `GenerateContentResponse`: the body of pi-ai's `for await (const chunk ...)`.
    fn chunk(&mut self, chunk: &Value, out: &mut PiEvents) -> Result<(), String> {
        self.chunks += 1;
        let candidate = chunk
            .get("candidates")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
            .filter(|c| !c.is_null());
        if let Some(parts) = candidate
            .and_then(|c| c.get("content"))
            .and_then(|c| c.get("parts"))
            .filter(|p| is_truthy(p))
        {
            let Value::Array(parts) = parts else {
                return Err("candidate.content.parts is not iterable".to_owned());
            };
            for part in parts {
                self.part(part, out)?;
            }
        }
        if let Some(reason) = candidate
            .and_then(|c| c.get("finishReason"))
            .filter(|r| is_truthy(r))
        {
            self.stop_reason = match self.transport {
                Transport::Sdk => map_stop_reason(reason)?,
                Transport::CloudCodeAssist => map_stop_reason_string(reason),
            };
            if self.has_tool_call() {
                self.stop_reason = "toolUse";
            }
            self.finished = true;
        }
        if let Some(meta) = chunk.get("usageMetadata").filter(|m| is_truthy(m)) {
            let prompt = count(meta.get("promptTokenCount"));
            let cached = count(meta.get("cachedContentTokenCount"));
            let mut usage = Usage::zero();
            // Cloud Code Assist: "promptTokenCount includes cachedContentTokenCount, so
            // subtract to get fresh input"; the SDK loops count the prompt whole.
            usage.input = match self.transport {
                Transport::Sdk => prompt,
                Transport::CloudCodeAssist => prompt - cached,
            };
            usage.output =
                count(meta.get("candidatesTokenCount")) + count(meta.get("thoughtsTokenCount"));
            usage.cache_read = cached;
            usage.total = count(meta.get("totalTokenCount"));
            usage.calculate_cost(&self.model);
            self.usage = usage;
        }
        Ok(())
    }

    fn has_tool_call(&self) -> bool {
        self.blocks
            .iter()
            .any(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"))
    }

    /// One part of the first candidate: text (thinking when `thought === true`) and/or a call.
    fn part(&mut self, part: &Value, out: &mut PiEvents) -> Result<(), String> {
        let Value::Object(fields) = part else {
            if part.is_null() {
                return Err("Cannot read properties of null (reading 'text')".to_owned());
            }
            return Ok(()); // a string or number part has no text or functionCall
        };
        if let Some(text) = fields.get("text") {
            self.has_content = true;
            let thinking = fields.get("thought") == Some(&Value::Bool(true));
            let want = if thinking { Open::Thinking } else { Open::Text };
            if self.open != Some(want) {
                self.close_open(out);
                let block = if thinking {
                    crate::base::object([
                        ("type", Some(Value::from("thinking"))),
                        ("thinking", Some(Value::from(""))),
                    ])
                } else {
                    crate::base::object([
                        ("type", Some(Value::from("text"))),
                        ("text", Some(Value::from(""))),
                    ])
                };
                let Value::Object(block) = block else {
                    unreachable!("object() builds an object")
                };
                self.blocks.push(block);
                self.open = Some(want);
                self.ensure_started(out);
                let at = self.index();
                out.push(
                    if thinking {
                        "thinking_start"
                    } else {
                        "text_start"
                    },
                    Some(at),
                );
            }
            let delta = js_string(text);
            let at = self.index();
            let block = &mut self.blocks[at];
            let (key, signature_key, kind) = if thinking {
                ("thinking", "thinkingSignature", "thinking_delta")
            } else {
                ("text", "textSignature", "text_delta")
            };
            if let Some(Value::String(s)) = block.get_mut(key) {
                s.push_str(&delta);
            }
            retain_signature(block, signature_key, fields.get("thoughtSignature"));
            out.delta(kind, at, &delta);
        }
        if let Some(call) = fields.get("functionCall").filter(|c| is_truthy(c)) {
            self.has_content = true;
            self.close_open(out);
            let name = call.get("name");
            let provided = call.get("id").filter(|id| is_truthy(id));
            let taken = provided.is_some_and(|id| {
                self.blocks.iter().any(|b| {
                    b.get("type").and_then(Value::as_str) == Some("toolCall")
                        && b.get("id") == Some(id)
                })
            });
            let id = match provided {
                Some(id) if !taken => id.clone(),
                _ => {
                    self.named_calls += 1;
                    let name = name.map_or_else(|| "undefined".to_owned(), js_string);
                    let now = to_js_string(&super::number(self.now_ms));
                    Value::String(format!("{name}_{now}_{}", self.named_calls))
                }
            };
            let arguments = match call.get("args") {
                None | Some(Value::Null) => Value::Object(Map::new()),
                Some(args) => args.clone(),
            };
            let delta = to_js_string(&arguments);
            let signature = fields
                .get("thoughtSignature")
                .filter(|s| is_truthy(s))
                .cloned();
            let name = name.filter(|n| is_truthy(n)).cloned();
            let Value::Object(block) = crate::base::object([
                ("type", Some(Value::from("toolCall"))),
                ("id", Some(id)),
                ("name", Some(name.unwrap_or_else(|| Value::from("")))),
                ("arguments", Some(arguments)),
                ("thoughtSignature", signature),
            ]) else {
                unreachable!("object() builds an object")
            };
            self.blocks.push(block);
            self.ensure_started(out);
            let at = self.index();
            out.push("toolcall_start", Some(at));
            out.delta("toolcall_delta", at, &delta);
            out.push("toolcall_end", Some(at));
        }
        Ok(())
    }
}

impl ApiReader for GoogleReader {
    fn begin(&mut self, out: &mut PiEvents) {
        // The SDK loops push `start` once the stream opened; Cloud Code Assist with the first
        // block (`ensureStarted`).
        if self.transport == Transport::Sdk {
            out.push("start", None);
        }
    }

    fn set_clock(&mut self, now_ms: f64) {
        self.now_ms = now_ms;
    }

    fn event(&mut self, _name: Option<&str>, data: &str, out: &mut PiEvents) -> Result<(), Stop> {
        match self.transport {
            Transport::Sdk => {
                let chunk = event_json(data)?;
                self.chunk(&chunk, out).map_err(Stop::Thrown)
            }
            Transport::CloudCodeAssist => {
                // `try { chunk = JSON.parse(jsonStr) } catch { continue }`, then
                // `if (!responseData) continue`.
                let trimmed = crate::base::js_trim(data);
                if trimmed.is_empty() {
                    return Ok(());
                }
                let Ok(envelope) = crate::base::parse_value(trimmed) else {
                    self.skipped_lines += 1;
                    return Ok(());
                };
                match envelope.get("response").filter(|r| is_truthy(r)) {
                    Some(response) => self.chunk(response, out).map_err(Stop::Thrown),
                    None => Ok(()),
                }
            }
        }
    }

    fn end(&mut self, out: &mut PiEvents) -> Result<(), Stop> {
        self.close_open(out);
        if self.transport == Transport::CloudCodeAssist && !self.has_content {
            return Err(Stop::Thrown(
                "Cloud Code Assist API returned an empty response".to_owned(),
            ));
        }
        Ok(())
    }

    reply_accessors!();

    fn cut_short(&self) -> Option<String> {
        if self.skipped_lines > 0 {
            return Some(format!(
                "The reply had {} data line(s) that are not JSON: pi-ai skips them, so part \
                 of the reply may be missing",
                self.skipped_lines
            ));
        }
        (self.chunks > 0 && !self.finished).then(|| {
            "The reply ended before a chunk with a finishReason: the stream was cut".to_owned()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn model(api: &str) -> Value {
        json!({"api": api, "provider": "google", "id": "gemini-2.5-pro",
               "cost": {"input": 1.25, "output": 10.0, "cacheRead": 0.31, "cacheWrite": 0.0}})
    }

    fn read(api: &str, events: &[Value]) -> super::super::ParsedResponse {
        let text = Value::Array(events.to_vec()).to_string();
        super::super::parse_response(&model(api), &text, 5.0).expect("reads")
    }

    #[test]
    fn calls_without_ids_or_with_a_used_id_are_named_from_the_clock_and_a_counter() {
        let chunk = json!({"candidates": [{"content": {"parts": [
            {"functionCall": {"name": "read", "args": {"p": 1}}},
            {"functionCall": {"id": "a", "name": "read"}},
            {"functionCall": {"id": "a", "name": "edit", "args": null}},
        ]}, "finishReason": "STOP"}]});
        let parsed = read("google-generative-ai", &[chunk]);
        let ids: Vec<_> = parsed.message["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["id"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(ids, ["read_5_1", "a", "edit_5_2"]);
        assert_eq!(parsed.message["content"][2]["arguments"], json!({}));
        assert_eq!(parsed.message["stopReason"], "toolUse");
    }

    #[test]
    fn signatures_are_kept_through_parts_that_omit_them() {
        let chunks = [
            json!({"candidates": [{"content": {"parts": [
                {"text": "a", "thought": true, "thoughtSignature": "c2ln"}]}}]}),
            json!({"candidates": [{"content": {"parts": [
                {"text": "b", "thought": true, "thoughtSignature": ""},
                {"text": "x"}]}, "finishReason": "STOP"}]}),
        ];
        let parsed = read("google-vertex", &chunks);
        assert_eq!(
            parsed.message["content"],
            json!([{"type": "thinking", "thinking": "ab", "thinkingSignature": "c2ln"},
                   {"type": "text", "text": "x"}])
        );
    }

    #[test]
    fn cloud_code_assist_takes_cached_tokens_out_of_the_input_and_starts_late() {
        let chunks = [
            json!({"traceId": "t"}),
            json!({"response": {"candidates": [{"content": {"parts": [{"text": "hi"}]},
                   "finishReason": "STOP"}],
                   "usageMetadata": {"promptTokenCount": 100, "cachedContentTokenCount": 40,
                                     "candidatesTokenCount": 5, "totalTokenCount": 105}}}),
        ];
        let parsed = read("google-gemini-cli", &chunks);
        assert_eq!(parsed.message["usage"]["input"], 60);
        assert_eq!(parsed.message["usage"]["cacheRead"], 40);
        assert_eq!(
            parsed.events,
            ["start", "text_start", "text_delta", "text_end", "done"]
        );
        let sdk = read("google-generative-ai", &[chunks[1]["response"].clone()]);
        assert_eq!(sdk.message["usage"]["input"], 100);
    }

    #[test]
    fn an_empty_cloud_code_assist_reply_fails_without_a_start() {
        let parsed = read(
            "google-gemini-cli",
            &[json!({"response": {"usageMetadata": {}}})],
        );
        assert_eq!(
            parsed.message["errorMessage"],
            "Cloud Code Assist API returned an empty response"
        );
        assert_eq!(parsed.events, ["error"]);
    }

    #[test]
    fn an_unknown_finish_reason_throws_on_the_sdk_loop_and_is_an_error_on_cloud_code_assist() {
        let chunk = json!({"candidates": [{"content": {"parts": [{"text": "x"}]},
                           "finishReason": "NEW_REASON"}]});
        let sdk = read("google-generative-ai", std::slice::from_ref(&chunk));
        assert_eq!(
            sdk.message["errorMessage"],
            "Unhandled stop reason: NEW_REASON"
        );
        let cli = read("google-gemini-cli", &[json!({ "response": chunk })]);
        assert_eq!(cli.message["errorMessage"], "An unknown error occurred");
    }

    #[test]
    fn a_stream_without_a_finish_reason_is_cut_unless_exact() {
        let chunk = json!({"candidates": [{"content": {"parts": [{"text": "x"}]}}]});
        let text = Value::Array(vec![chunk]).to_string();
        let m = model("google-generative-ai");
        let safe = super::super::parse_response_with(&m, &Value::Null, &text, 0.0, false).unwrap();
        assert_eq!(safe.message["stopReason"], "error");
        let exact = super::super::parse_response_with(&m, &Value::Null, &text, 0.0, true).unwrap();
        assert_eq!(exact.message["stopReason"], "stop");
    }

    #[test]
    fn cloud_code_assist_skips_lines_that_are_not_json_and_the_safe_default_says_so() {
        let sse = "data: {oops\n\ndata: {\"response\": {\"candidates\": [{\"content\": \
                   {\"parts\": [{\"text\": \"x\"}]}, \"finishReason\": \"STOP\"}]}}\n\n";
        let m = model("google-gemini-cli");
        let exact = super::super::parse_response_with(&m, &Value::Null, sse, 0.0, true).unwrap();
        assert_eq!(exact.message["stopReason"], "stop");
        let safe = super::super::parse_response_with(&m, &Value::Null, sse, 0.0, false).unwrap();
        assert_eq!(safe.message["stopReason"], "error");
    }

    #[test]
    fn text_that_is_not_a_string_is_appended_as_javascript_does() {
        assert_eq!(js_string(&json!(null)), "null");
        assert_eq!(js_string(&json!([1, null, "a"])), "1,,a");
        assert_eq!(js_string(&json!(1.5)), "1.5");
        assert_eq!(js_string(&json!({"a": 1})), "[object Object]");
    }
}
