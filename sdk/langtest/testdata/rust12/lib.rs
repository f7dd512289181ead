//! guest12 in Rust: the same extension as guest12.c (see there), written
//! with pi.rs's helpers only. Built with --cfg g12_plain it declares the
//! tools and 1.0 hooks only.

#[path = "../../../rust/pi.rs"]
mod pi;

use pi::{Block, Command, CommandResult, Extension, Json, KeyResult, Line, SessionBefore, ToolContext, ToolOutput, UserBash};

struct Guest {
    events: u32,
    keys: String,
}

pub fn new_extension() -> Box<dyn Extension> {
    Box::new(Guest { events: 0, keys: String::new() })
}

fn text(v: &Json, key: &str) -> String {
    v.get(key).as_str().unwrap_or("").to_string()
}

fn n(v: &Json, key: &str) -> u64 {
    v.get(key).as_f64().unwrap_or(0.0) as u64
}

fn truthy(v: &Json, key: &str) -> bool {
    v.get(key).as_bool() == Some(true)
}

fn strs(v: &Json) -> Vec<String> {
    v.as_array().map(|a| a.iter().map(|s| s.as_str().unwrap_or("").to_string()).collect()).unwrap_or_default()
}

/// lines turns strings into lines; one starting with "*" becomes two
/// spans, the second styled "accent bold".
fn lines(v: &Json) -> Vec<Line> {
    strs(v)
        .iter()
        .map(|s| match s.strip_prefix('*') {
            Some(rest) => Line::Spans(vec![pi::span("* ", ""), pi::span(rest, "accent bold")]),
            None => Line::Text(s.clone()),
        })
        .collect()
}

fn obj(m: Vec<(&str, Json)>) -> Json {
    Json::Obj(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

fn js(s: &str) -> Json {
    Json::Str(s.to_string())
}

fn opt_str(s: Option<String>) -> Json {
    s.map(Json::Str).unwrap_or(Json::Null)
}

fn dialog(d: pi::Dialog) -> Json {
    obj(vec![("value", opt_str(d.value)), ("reason", js(&d.reason))])
}

fn record(what: &str, id: &str, more: Option<Json>) {
    let mut m = vec![("what", js(what)), ("id", js(id))];
    if let Some(x) = more {
        m.push(("more", x));
    }
    if let Err(e) = pi::session_append("guest12", &obj(m)) {
        pi::log(pi::WARN, &format!("record {}: {}", what, e));
    }
}

/// call12 makes the host call op with its typed helper and answers its
/// result as JSON.
fn call12(op: &str, v: &Json) -> Result<Json, String> {
    let a = text(v, "a");
    let b = text(v, "b");
    let num = n(v, "n");
    let empty = || obj(vec![]);
    Ok(match op {
        "ui.select" => {
            let options = strs(v.get("options"));
            let refs: Vec<&str> = options.iter().map(|s| s.as_str()).collect();
            dialog(pi::select(&a, &refs, num)?)
        }
        "ui.input" => dialog(pi::input(&a, &b, num)?),
        "ui.editor" => dialog(pi::editor(&a, &b, num)?),
        "ui.setStatus" => {
            let line = if v.get("spans").is_null() {
                if v.get("b").is_null() {
                    None
                } else {
                    Some(Line::Text(b.clone()))
                }
            } else {
                lines(v.get("spans")).into_iter().next()
            };
            pi::set_status(&a, line.as_ref())?;
            empty()
        }
        "ui.setWidget" => {
            let l = lines(v.get("lines"));
            pi::set_widget(&a, if v.get("lines").is_null() { None } else { Some(&l) }, &b)?;
            empty()
        }
        "ui.setTitle" => pi::set_title(&a).map(|_| empty())?,
        "ui.setWorkingMessage" => pi::set_working_message(v.get("a").as_str()).map(|_| empty())?,
        "ui.setEditorText" => pi::set_editor_text(&a).map(|_| empty())?,
        "ui.getEditorText" => js(&pi::get_editor_text()?),
        "ui.component" => {
            let o = pi::ComponentOptions { slot: text(v, "slot"), key: text(v, "key"), placement: text(v, "placement"), max_height: num as u32 };
            obj(vec![("id", js(&pi::component(&o)?.unwrap_or_default()))])
        }
        "ui.rerender" => pi::rerender(&a).map(|_| empty())?,
        "ui.close" => pi::close(&a).map(|_| empty())?,
        "session.info" => {
            let s = pi::session_info()?;
            obj(vec![("sessionId", js(&s.session_id)), ("sessionFile", js(&s.session_file.unwrap_or_default())), ("name", js(&s.name.unwrap_or_default())), ("leafId", js(&s.leaf_id))])
        }
        "session.branch" => Json::Arr(pi::session_branch(num as u32)?),
        "session.tree" => Json::Arr(pi::session_tree()?),
        "session.setName" => pi::session_set_name(&a).map(|_| empty())?,
        "session.setLabel" => pi::session_set_label(&a, v.get("b").as_str()).map(|_| empty())?,
        "session.contextUsage" => {
            let u = pi::context_usage()?;
            obj(vec![("tokens", Json::Num(u.tokens.unwrap_or(-1) as f64)), ("contextWindow", Json::Num(u.context_window as f64)), ("percent", Json::Num(u.percent.unwrap_or(-1.0)))])
        }
        "session.compact" => pi::session_compact(&a).map(|_| empty())?,
        "session.new" | "session.switch" | "session.fork" | "session.navigate" => {
            let c = match op {
                "session.new" => pi::session_new()?,
                "session.switch" => pi::session_switch(&a)?,
                "session.fork" => pi::session_fork(&a)?,
                _ => pi::session_navigate(&a, num != 0)?,
            };
            obj(vec![("cancelled", Json::Bool(c))])
        }
        "agent.sendUserMessage" => pi::send_user_message(&a, &b).map(|_| empty())?,
        "agent.sendMessage" => {
            let m = pi::Message {
                custom_type: text(v, "customType"),
                text: a.clone(),
                display: truthy(v, "display"),
                details: v.get("details").clone(),
                trigger_turn: truthy(v, "triggerTurn"),
                deliver_as: text(v, "deliverAs"),
                ..Default::default()
            };
            pi::send_message(&m).map(|_| empty())?
        }
        "agent.abort" => pi::abort().map(|_| empty())?,
        "agent.state" => {
            let s = pi::agent_state()?;
            obj(vec![("idle", Json::Bool(s.idle)), ("pendingMessages", Json::Num(s.pending_messages as f64)), ("systemPrompt", js(&s.system_prompt))])
        }
        "tools.list" => Json::Arr(
            pi::tools_list()?
                .iter()
                .map(|t| obj(vec![("name", js(&t.name)), ("description", js(&t.description)), ("source", js(&t.source)), ("active", Json::Bool(t.active))]))
                .collect(),
        ),
        "tools.setActive" | "tools.unregister" => {
            let names = strs(v.get("names"));
            let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
            if op == "tools.setActive" {
                pi::tools_set_active(&refs)?
            } else {
                pi::tools_unregister(&refs)?
            }
            empty()
        }
        "tools.register" => pi::tools_register(v.get("json").as_array().map(|a| a.as_slice()).unwrap_or(&[])).map(|_| empty())?,
        "model.get" => {
            let m = pi::model_get()?;
            obj(vec![("provider", js(&m.provider)), ("id", js(&m.id)), ("contextWindow", Json::Num(m.context_window as f64)), ("thinkingLevel", js(&m.thinking_level))])
        }
        "model.list" => Json::Arr(pi::model_list()?.iter().map(|(p, i)| obj(vec![("provider", js(p)), ("id", js(i))])).collect()),
        "model.set" => pi::model_set(&a, &b).map(|_| empty())?,
        "model.setThinkingLevel" => js(&pi::set_thinking_level(&a)?),
        "llm.complete" => {
            let mut messages = Vec::new();
            if let Some(list) = v.get("json").as_array() {
                for m in list {
                    messages.push((text(m, "role"), text(m, "content")));
                }
            } else {
                messages.push(("user".to_string(), b.clone()));
            }
            let r = pi::llm_complete(&pi::LlmRequest { system_prompt: a.clone(), messages, max_tokens: num as u32 })?;
            obj(vec![("text", js(&r.text())), ("stopReason", js(&r.stop_reason)), ("input", Json::Num(r.input_tokens as f64)), ("output", Json::Num(r.output_tokens as f64))])
        }
        "flags.get" => pi::flags_get()?,
        "timer.set" => js(&pi::timer_set(num, truthy(v, "repeat"))?),
        "timer.clear" => pi::timer_clear(&a).map(|_| empty())?,
        "watch.add" => js(&pi::watch_add(&a, num != 0)?),
        "watch.remove" => pi::watch_remove(&a).map(|_| empty())?,
        "bus.emit" => pi::bus_emit(&a, v.get("json")).map(|_| empty())?,
        "pi.shutdown" => pi::shutdown().map(|_| empty())?,
        "pi.reload" => pi::reload().map(|_| empty())?,
        _ => return Err(format!("unknown op {}", op)),
    })
}

#[cfg(g12_plain)]
const DECLARATION: &str = r#"{"name":"guest12","version":"0.1.0","description":"ABI 1.2 test guest",
  "tools":[
    {"name":"whole","description":"A whole result.","parameters":{"type":"object"}},
    {"name":"call12","description":"One 1.2 host call.","parameters":{"type":"object"}},
    {"name":"events","description":"Events seen.","parameters":{"type":"object"}}],
  "hooks":["tool_result","bash_spawn","event"]}"#;

#[cfg(not(g12_plain))]
const DECLARATION: &str = r#"{"name":"guest12","version":"0.1.0","description":"ABI 1.2 test guest",
  "tools":[
    {"name":"whole","description":"A whole result.","parameters":{"type":"object"},"render":true},
    {"name":"call12","description":"One 1.2 host call.","parameters":{"type":"object"}},
    {"name":"events","description":"Events seen.","parameters":{"type":"object"}}],
  "hooks":["tool_result","bash_spawn","event","context","user_bash","session_before_compact","session_before_fork"],
  "flags":[{"name":"g12-mode","description":"A string flag.","type":"string","default":"calm"},
           {"name":"g12-loud","description":"A boolean flag.","type":"boolean"}],
  "shortcuts":[{"key":"ctrl+g","description":"Notify."}],
  "messageRenderers":["guest12"],
  "channels":["guest12:news"],
  "wants":{"llm":true,"model":true}}"#;

impl Extension for Guest {
    fn declaration(&self) -> &'static str {
        DECLARATION
    }

    fn execute(&mut self, ctx: &mut ToolContext, input: &Json) -> ToolOutput {
        match ctx.tool_name.as_str() {
            "whole" => {
                let steps = n(input, "progress");
                for i in 1..=steps {
                    let p = ToolOutput::text(&format!("step {} of {}", i, steps)).with_details(obj(vec![("step", Json::Num(i as f64))]));
                    if ctx.emit(&p) {
                        break;
                    }
                }
                let mut out = ToolOutput::text(&text(input, "text"));
                if let Some(img) = input.get("image").as_str() {
                    let mime = input.get("mime").as_str().unwrap_or("image/png");
                    out = out.with_block(Block::image(img.as_bytes(), mime));
                }
                out = out.with_block(Block::text(&format!("call {} in {}", ctx.tool_call_id, ctx.cwd)));
                out.details = input.get("details").clone();
                out.terminate = truthy(input, "terminate");
                out.is_error = truthy(input, "error");
                out
            }
            "call12" => match call12(&text(input, "op"), input) {
                Ok(v) => ToolOutput::text(&v.to_json()),
                Err(e) => ToolOutput::error(&e),
            },
            "events" => ToolOutput::text(&self.events.to_string()),
            other => ToolOutput::error(&format!("unknown tool {}", other)),
        }
    }

    fn tool_result(&mut self, params: &Json) -> Option<pi::ResultPatch> {
        if params.get("toolName").as_str() != Some("read") {
            return Some(pi::ResultPatch::default());
        }
        let mut content: Vec<Block> = params.get("content").as_array().map(|c| c.iter().filter_map(Block::from_json).collect()).unwrap_or_default();
        content.push(Block::text("[guest12 saw read]"));
        Some(pi::ResultPatch { content: Some(content), details: Some(obj(vec![("guest12", Json::Bool(true))])), is_error: Some(false) })
    }

    fn bash_spawn(&mut self, command: &str, _cwd: &str, _env: &Json) -> Option<pi::BashSpawnChange> {
        Some(pi::BashSpawnChange { command: format!("GUEST12=1 {}", command), cwd: String::new(), env: Some(vec![("GUEST12_ENV".to_string(), "yes".to_string())]) })
    }

    fn event(&mut self, _event_type: &str, _event: &Json) -> bool {
        self.events += 1;
        true
    }

    fn commands(&self) -> Vec<Command> {
        vec![Command { name: "c12", description: "Run one ABI 1.2 host call", argument_hint: "OP JSON" }]
    }

    fn command(&mut self, _name: &str, args: &str) -> Result<CommandResult, String> {
        let (op, rest) = match args.find(' ') {
            Some(i) => (&args[..i], &args[i + 1..]),
            None => (args, "{}"),
        };
        let v = Json::parse(rest.as_bytes())?;
        call12(op, &v).map(|r| CommandResult { text: r.to_json(), prompt: String::new() })
    }

    fn component_render(&mut self, id: &str, width: usize, editor: Option<(&str, usize)>) -> Vec<Line> {
        let mut out = vec![Line::Text(format!("component {} width {}", id, width)), Line::Spans(vec![pi::span("keys: ", "muted"), pi::span(&self.keys, "accent")])];
        if let Some((t, c)) = editor {
            out.push(Line::Text(format!("editor {} cursor {}", t, c)));
        }
        out
    }

    fn component_input(&mut self, _id: &str, key: &str, text: &str) -> KeyResult {
        match key {
            "q" => KeyResult { consumed: true, close: true, rerender: false },
            "enter" => KeyResult::default(),
            _ => {
                self.keys.push_str(key);
                self.keys.push_str(text);
                KeyResult { consumed: true, close: false, rerender: true }
            }
        }
    }

    fn component_dispose(&mut self, id: &str, reason: &str) {
        record("dispose", id, Some(js(reason)));
    }

    fn tool_render(&mut self, params: &Json) -> Option<Vec<Line>> {
        let partial = if truthy(params, "isPartial") { "yes" } else { "no" };
        Some(vec![Line::Text(format!("guest12 draws {} partial={}", text(params, "toolName"), partial))])
    }

    fn message_render(&mut self, params: &Json) -> Option<Vec<Line>> {
        Some(vec![Line::Spans(vec![pi::span("guest12 message ", "bold"), pi::span(&text(params, "customType"), "success")])])
    }

    fn shortcut(&mut self, key: &str) -> Result<(), String> {
        pi::notify(key, "")
    }

    fn timer(&mut self, id: &str) {
        record("timer", id, None);
    }

    fn watch(&mut self, id: &str, paths: &[String]) {
        record("watch", id, Some(Json::Arr(paths.iter().map(|p| js(p)).collect())));
    }

    fn bus_message(&mut self, channel: &str, data: &Json, from: &str) {
        record("bus", channel, Some(obj(vec![("data", data.clone()), ("from", js(from))])));
    }

    fn context(&mut self, messages: &Json) -> Option<Json> {
        let mut m = messages.as_array().cloned().unwrap_or_default();
        m.push(obj(vec![("role", js("user")), ("content", Json::Arr(vec![Block::text("GUEST12 CONTEXT").to_json()]))]));
        Some(Json::Arr(m))
    }

    fn user_bash(&mut self, command: &str, _cwd: &str) -> UserBash {
        if command.starts_with("blocked") {
            UserBash::Block("guest12 blocks this".to_string())
        } else if command.starts_with("fake") {
            UserBash::Result { output: "fake output\n".to_string(), exit_code: 3 }
        } else if let Some(rest) = command.strip_prefix("swap ") {
            UserBash::Replace(rest.to_string())
        } else {
            UserBash::Pass
        }
    }

    fn session_before(&mut self, which: &str, _params: &Json) -> SessionBefore {
        match which {
            "compact" => SessionBefore::Summary { summary: "GUEST12 SUMMARY".to_string(), details: obj(vec![("by", js("guest12"))]) },
            "fork" => SessionBefore::Cancel("guest12 keeps this session".to_string()),
            _ => SessionBefore::Pass,
        }
    }
}
