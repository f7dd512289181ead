//! plan-mode: a read-only mode for exploring and planning (a port of the
//! reference's plan-mode example to ABI 1.2, in Rust).
//!
//! `--plan-mode` starts pi in plan mode (pi has a --plan of its own), `/plan` and Ctrl+Alt+P toggle it. In
//! plan mode only read, bash, grep, find and ls are active, bash runs only
//! read-only commands, and the model is asked for a numbered plan under a
//! "Plan:" header; the plan's steps become a todo list (a widget, /todos,
//! kept in the session). Leaving plan mode with a plan asks the model to
//! carry it out.

#[path = "../../../../sdk/rust/pi.rs"]
mod pi;

use pi::{Command, CommandResult, Decision, Extension, Json, Line};

const PLAN_TOOLS: &[&str] = &["read", "bash", "grep", "find", "ls"];
const INSTRUCTIONS: &str = "[PLAN MODE ACTIVE]\nYou are in plan mode: a read-only mode for exploring the code and planning. \
You may only read, search and run read-only bash commands; do not change anything. \
Finish with a numbered list of steps under a line \"Plan:\".";

struct Plan {
    on: bool,
    /// The tools active before plan mode (to restore).
    saved: Vec<String>,
    todos: Vec<String>,
}

pub fn new_extension() -> Box<dyn Extension> {
    Box::new(Plan { on: false, saved: Vec::new(), todos: Vec::new() })
}

const DESTRUCTIVE: &[&str] = &[
    "rm", "rmdir", "mv", "cp", "mkdir", "touch", "chmod", "chown", "chgrp", "ln", "tee", "truncate", "dd", "shred", "sudo", "su", "kill", "pkill",
    "killall", "reboot", "shutdown", "vi", "vim", "nano", "emacs", "code", "subl",
];
const SAFE: &[&str] = &[
    "cat", "head", "tail", "less", "more", "grep", "rg", "find", "ls", "pwd", "echo", "printf", "wc", "sort", "uniq", "diff", "file", "stat", "du",
    "df", "tree", "which", "whereis", "type", "env", "printenv", "uname", "whoami", "id", "date", "cal", "uptime", "ps", "free",
];
const GIT_READ: &[&str] = &["status", "log", "diff", "show", "branch", "remote"];

/// Whether a bash command only reads: no redirection into a file, no
/// destructive command anywhere, and each command of a pipeline or list
/// one of the safe ones (git only with a reading subcommand).
fn read_only(command: &str) -> bool {
    if command.replace(">&", "").contains('>') || command.contains('`') || command.contains("$(") {
        return false;
    }
    let words = |s: &str| s.split_whitespace().map(|w| w.trim_matches(|c| c == '(' || c == ')').to_lowercase()).collect::<Vec<_>>();
    if words(command).iter().any(|w| DESTRUCTIVE.contains(&w.as_str())) {
        return false;
    }
    command.split(|c| c == '|' || c == ';' || c == '&').map(str::trim).filter(|s| !s.is_empty()).all(|part| {
        let w = words(part);
        match w.first().map(|s| s.as_str()) {
            Some("git") => w.get(1).map(|sub| GIT_READ.contains(&sub.as_str())).unwrap_or(false),
            Some(first) => SAFE.contains(&first),
            None => true,
        }
    })
}

/// The numbered steps under the last "Plan:" line of text.
fn steps(text: &str) -> Vec<String> {
    let after = match text.rfind("Plan:") {
        Some(i) => &text[i + 5..],
        None => return Vec::new(),
    };
    after
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let digits = l.chars().take_while(|c| c.is_ascii_digit()).count();
            let rest = &l[digits..];
            if digits > 0 && (rest.starts_with('.') || rest.starts_with(')')) {
                Some(rest[1..].trim().trim_matches('*').trim().to_string())
            } else {
                None
            }
        })
        .filter(|s| !s.is_empty())
        .collect()
}

impl Plan {
    fn show(&self) {
        let status = if self.on { Some(Line::Spans(vec![pi::span("⏸ plan", "warning")])) } else { None };
        let _ = pi::set_status("mode", status.as_ref());
        let lines: Vec<Line> = self.todos.iter().enumerate().map(|(i, t)| Line::Spans(vec![pi::span(&format!("{}. ", i + 1), "muted"), pi::span(t, "")])).collect();
        let _ = pi::set_widget("todos", if self.todos.is_empty() { None } else { Some(&lines) }, "");
    }

    fn enter(&mut self) -> Result<(), String> {
        self.saved = pi::tools_list()?.into_iter().filter(|t| t.active).map(|t| t.name).collect();
        // Only tools active at start may be activated: keep those of PLAN_TOOLS.
        let keep: Vec<&str> = PLAN_TOOLS.iter().copied().filter(|t| self.saved.iter().any(|s| s == t)).collect();
        pi::tools_set_active(&keep)?;
        self.on = true;
        pi::session_append("plan-mode", &Json::Obj(vec![("on".to_string(), Json::Bool(true))]))?;
        self.show();
        Ok(())
    }

    fn leave(&mut self) -> Result<(), String> {
        let saved: Vec<&str> = self.saved.iter().map(|s| s.as_str()).collect();
        if !saved.is_empty() {
            pi::tools_set_active(&saved)?;
        }
        self.on = false;
        pi::session_append("plan-mode", &Json::Obj(vec![("on".to_string(), Json::Bool(false))]))?;
        self.show();
        Ok(())
    }

    fn toggle(&mut self) -> Result<String, String> {
        if !self.on {
            self.enter()?;
            return Ok("Plan mode on: read-only tools; ask for a plan.".to_string());
        }
        self.leave()?;
        if self.todos.is_empty() {
            return Ok("Plan mode off.".to_string());
        }
        let list: Vec<String> = self.todos.iter().enumerate().map(|(i, t)| format!("{}. {}", i + 1, t)).collect();
        pi::send_user_message(&format!("Execute the plan:\n{}", list.join("\n")), "")?;
        Ok("Plan mode off: executing the plan.".to_string())
    }
}

impl Extension for Plan {
    fn declaration(&self) -> &'static str {
        r#"{"name":"plan-mode","version":"0.1.0","description":"A read-only mode for planning.","tools":[],
            "hooks":["tool_call","before_agent_start","event"],"events":["session_start","agent_end"],
            "flags":[{"name":"plan-mode","description":"Start in plan mode (read-only exploration)","type":"boolean","default":false}],
            "shortcuts":[{"key":"ctrl+alt+p","description":"Toggle plan mode"}]}"#
    }

    fn commands(&self) -> Vec<Command> {
        vec![
            Command { name: "plan", description: "Toggle plan mode (read-only exploration)", argument_hint: "" },
            Command { name: "todos", description: "Show the plan's steps", argument_hint: "" },
        ]
    }

    fn command(&mut self, name: &str, _args: &str) -> Result<CommandResult, String> {
        let text = if name == "plan" {
            self.toggle()?
        } else if self.todos.is_empty() {
            "No plan yet: /plan, then ask for one.".to_string()
        } else {
            self.todos.iter().enumerate().map(|(i, t)| format!("{}. {}", i + 1, t)).collect::<Vec<_>>().join("\n")
        };
        Ok(CommandResult { text, prompt: String::new() })
    }

    fn shortcut(&mut self, _key: &str) -> Result<(), String> {
        let msg = self.toggle()?;
        pi::notify(&msg, "")
    }

    fn tool_call_decision(&mut self, tool: &str, input: &Json) -> Decision {
        if !self.on {
            return Decision::Allow;
        }
        if !PLAN_TOOLS.contains(&tool) {
            return Decision::Block(format!("Plan mode: {} is not allowed while planning (/plan to leave plan mode)", tool));
        }
        match input.get("command").as_str() {
            Some(c) if tool == "bash" && !read_only(c) => Decision::Block(format!("Plan mode: command blocked (not read-only): {}", c)),
            _ => Decision::Allow,
        }
    }

    fn before_agent_start(&mut self, _prompt: &str, _system_prompt: &str) -> pi::AgentStartChange {
        if !self.on {
            return pi::AgentStartChange::default();
        }
        pi::AgentStartChange { append_system_prompt: INSTRUCTIONS.to_string(), ..Default::default() }
    }

    fn event(&mut self, event_type: &str, event: &Json) -> bool {
        let res = match event_type {
            "session_start" => {
                // The mode and plan the session holds, else the flag.
                let mut on = pi::flags_get().map(|f| f.get("plan-mode").as_bool() == Some(true)).unwrap_or(false);
                for e in pi::session_entries("plan-mode").unwrap_or_default() {
                    if let Some(b) = e.data.get("on").as_bool() {
                        on = b;
                    }
                    if let Some(t) = e.data.get("todos").as_array() {
                        self.todos = t.iter().filter_map(|x| x.as_str().map(String::from)).collect();
                    }
                }
                if on && !self.on {
                    self.enter()
                } else {
                    self.show();
                    Ok(())
                }
            }
            _ if self.on => {
                // agent_end: the plan in the assistant's last message.
                let last = event.get("messages").as_array().and_then(|m| m.iter().rev().find(|m| m.get("role").as_str() == Some("assistant")).cloned()).unwrap_or(Json::Null);
                let text: Vec<String> = last.get("content").as_array().map(|c| c.iter().filter_map(|b| b.get("text").as_str().map(String::from)).collect()).unwrap_or_default();
                let found = steps(&text.join("\n"));
                if found.is_empty() {
                    Ok(())
                } else {
                    self.todos = found;
                    self.show();
                    let list = Json::Arr(self.todos.iter().map(|t| Json::Str(t.clone())).collect());
                    pi::session_append("plan-mode", &Json::Obj(vec![("todos".to_string(), list)])).map(|_| ())
                }
            }
            _ => Ok(()),
        };
        if let Err(e) = res {
            pi::log(pi::WARN, &e);
        }
        true
    }
}
