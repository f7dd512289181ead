//! dynamic-tools: tools registered after start-up (a port of the
//! reference's dynamic-tools example to ABI 1.2, in Rust). echo_session
//! is registered when the session starts; /add-echo-tool NAME registers
//! another echo tool. Each echoes its message with its name as a prefix.

#[path = "../../../../sdk/rust/pi.rs"]
mod pi;

use pi::{Command, CommandResult, Extension, Json, ToolContext, ToolOutput};

struct Dynamic {
    registered: Vec<String>,
}

pub fn new_extension() -> Box<dyn Extension> {
    Box::new(Dynamic { registered: Vec::new() })
}

fn spec(name: &str) -> Json {
    let prefix = format!("[{}] ", name);
    let text = |s: &str| Json::Str(s.to_string());
    Json::Obj(vec![
        ("name".to_string(), text(name)),
        ("description".to_string(), text(&format!("Echo a message with prefix: {}", prefix))),
        ("promptSnippet".to_string(), text(&format!("Echo back user-provided text with {} prefix", prefix.trim()))),
        ("promptGuidelines".to_string(), Json::Arr(vec![text("Use this tool when the user asks for exact echo output.")])),
        (
            "parameters".to_string(),
            Json::parse(br#"{"type":"object","properties":{"message":{"type":"string","description":"Message to echo"}},"required":["message"]}"#).unwrap_or(Json::Null),
        ),
    ])
}

/// A tool name of lowercase letters, digits and underscores.
fn valid(name: &str) -> bool {
    !name.is_empty() && name.len() <= 64 && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

impl Dynamic {
    fn register(&mut self, name: &str) -> Result<bool, String> {
        if self.registered.iter().any(|n| n == name) {
            return Ok(false);
        }
        pi::tools_register(&[spec(name)])?;
        self.registered.push(name.to_string());
        Ok(true)
    }
}

impl Extension for Dynamic {
    fn declaration(&self) -> &'static str {
        r#"{"name":"dynamic-tools","version":"0.1.0","description":"Echo tools registered at run time.","tools":[],
            "hooks":["event"],"events":["session_start"]}"#
    }

    fn execute(&mut self, ctx: &mut ToolContext, input: &Json) -> ToolOutput {
        let prefix = format!("[{}] ", ctx.tool_name);
        let msg = input.get("message").as_str().unwrap_or("");
        ToolOutput::text(&format!("{}{}", prefix, msg))
            .with_details(Json::Obj(vec![("tool".to_string(), Json::Str(ctx.tool_name.clone())), ("prefix".to_string(), Json::Str(prefix))]))
    }

    fn event(&mut self, _event_type: &str, _event: &Json) -> bool {
        match self.register("echo_session") {
            Ok(_) => {
                let _ = pi::notify("Registered dynamic tool: echo_session", pi::NOTIFY_INFO);
            }
            Err(e) => pi::log(pi::WARN, &e),
        }
        true
    }

    fn commands(&self) -> Vec<Command> {
        vec![Command { name: "add-echo-tool", description: "Register a new echo tool dynamically: /add-echo-tool <tool_name>", argument_hint: "<tool_name>" }]
    }

    fn command(&mut self, _name: &str, args: &str) -> Result<CommandResult, String> {
        let name = args.trim().to_lowercase();
        let text = if !valid(&name) {
            "Usage: /add-echo-tool <tool_name> (lowercase, numbers, underscores)".to_string()
        } else if self.register(&name)? {
            format!("Registered dynamic tool: {}", name)
        } else {
            format!("Tool already registered: {}", name)
        };
        Ok(CommandResult { text, prompt: String::new() })
    }
}
