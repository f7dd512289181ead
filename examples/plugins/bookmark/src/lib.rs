//! bookmark: /bookmark [label] labels the last assistant message of the
//! branch (for /tree), /unbookmark removes the last label (a port of the
//! reference's bookmark example to ABI 1.2, in Rust).

#[path = "../../../../sdk/rust/pi.rs"]
mod pi;

use pi::{Command, CommandResult, Extension, Json};

struct Bookmark;

pub fn new_extension() -> Box<dyn Extension> {
    Box::new(Bookmark)
}

/// The labels on the branch: entry id -> label, the last word wins.
fn labels(entries: &[Json]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for e in entries.iter().filter(|e| e.get("type").as_str() == Some("label")) {
        let target = e.get("targetId").as_str().unwrap_or("").to_string();
        out.retain(|(id, _)| *id != target);
        if let Some(l) = e.get("label").as_str() {
            out.push((target, l.to_string()));
        }
    }
    out
}

impl Extension for Bookmark {
    fn declaration(&self) -> &'static str {
        r#"{"name":"bookmark","version":"0.1.0","description":"Bookmarks messages for /tree.","tools":[]}"#
    }

    fn commands(&self) -> Vec<Command> {
        vec![
            Command { name: "bookmark", description: "Bookmark last message (usage: /bookmark [label])", argument_hint: "[label]" },
            Command { name: "unbookmark", description: "Remove bookmark from last labeled entry", argument_hint: "" },
        ]
    }

    fn command(&mut self, name: &str, args: &str) -> Result<CommandResult, String> {
        let text = |t: String| Ok(CommandResult { text: t, prompt: String::new() });
        if name == "bookmark" {
            let entries = pi::session_branch(0)?;
            let last = entries.iter().rev().find(|e| e.get("type").as_str() == Some("message") && e.get("message").get("role").as_str() == Some("assistant"));
            let id = match last.and_then(|e| e.get("id").as_str()) {
                Some(id) => id.to_string(),
                None => return text("No assistant message to bookmark".to_string()),
            };
            let label = if args.is_empty() { format!("bookmark-{}", id) } else { args.to_string() };
            pi::session_set_label(&id, Some(&label))?;
            return text(format!("Bookmarked as: {}", label));
        }
        let tree = pi::session_tree()?;
        match labels(&tree).pop() {
            Some((id, label)) => {
                pi::session_set_label(&id, None)?;
                text(format!("Removed bookmark: {}", label))
            }
            None => text("No bookmarked entry found".to_string()),
        }
    }
}
