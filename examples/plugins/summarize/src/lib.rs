//! summarize: /summarize asks the model for a summary of the conversation
//! so far, to resume it later, and shows it (a port of the reference's
//! summarize example to ABI 1.2, in Rust: session_branch and llm_complete
//! under grants.llm).

#[path = "../../../../sdk/rust/pi.rs"]
mod pi;

use pi::{Command, CommandResult, Extension, Json};

struct Summarize;

pub fn new_extension() -> Box<dyn Extension> {
    Box::new(Summarize)
}

fn texts(content: &Json) -> Vec<String> {
    match content {
        Json::Str(s) => vec![s.clone()],
        Json::Arr(blocks) => blocks.iter().filter(|b| b.get("type").as_str() == Some("text")).filter_map(|b| b.get("text").as_str().map(String::from)).collect(),
        _ => Vec::new(),
    }
}

/// The branch's user and assistant messages as text, tool calls named.
fn conversation(entries: &[Json]) -> String {
    let mut sections = Vec::new();
    for e in entries.iter().filter(|e| e.get("type").as_str() == Some("message")) {
        let m = e.get("message");
        let role = match m.get("role").as_str() {
            Some("user") => "User",
            Some("assistant") => "Assistant",
            _ => continue,
        };
        let mut lines = Vec::new();
        let text = texts(m.get("content")).join("\n");
        if !text.trim().is_empty() {
            lines.push(format!("{}: {}", role, text.trim()));
        }
        if role == "Assistant" {
            for b in m.get("content").as_array().cloned().unwrap_or_default() {
                if b.get("type").as_str() == Some("toolCall") {
                    lines.push(format!("Tool {} was called with args {}", b.get("name").as_str().unwrap_or(""), b.get("arguments").to_json()));
                }
            }
        }
        if !lines.is_empty() {
            sections.push(lines.join("\n"));
        }
    }
    sections.join("\n\n")
}

impl Extension for Summarize {
    fn declaration(&self) -> &'static str {
        r#"{"name":"summarize","version":"0.1.0","description":"Summarizes the conversation.","tools":[],"wants":{"llm":true}}"#
    }

    fn commands(&self) -> Vec<Command> {
        vec![Command { name: "summarize", description: "Summarize the conversation so far", argument_hint: "" }]
    }

    fn command(&mut self, _name: &str, _args: &str) -> Result<CommandResult, String> {
        let conv = conversation(&pi::session_branch(0)?);
        if conv.is_empty() {
            return Ok(CommandResult { text: "Nothing to summarize yet.".to_string(), prompt: String::new() });
        }
        let prompt = [
            "Summarize this conversation so I can resume it later.",
            "Include goals, key decisions, progress, open questions, and next steps.",
            "Keep it concise and structured with headings.",
            "",
            "<conversation>",
            &conv,
            "</conversation>",
        ]
        .join("\n");
        let r = pi::llm_complete(&pi::LlmRequest { system_prompt: String::new(), messages: vec![("user".to_string(), prompt)], max_tokens: 0 })?;
        Ok(CommandResult { text: r.text(), prompt: String::new() })
    }
}
