//! guest11 in Rust: the Rust test guest of ABI 1.1 (sdk/langtest), the
//! same extension as guest11.c, using pi.rs's helpers only. The tool
//! "probe" takes {"op", ...} and makes one host call with the typed helper
//! of op; its text is the result as JSON, or the helper's error (isError).
//! A string argument X may come as XB64 (base64) instead; bytes that are
//! not UTF-8 become U+FFFD as Go would make them (a &str cannot hold
//! them). The tool "request" answers the request a helper would send.

#[path = "../../../rust/pi.rs"]
mod pi;

use pi::{AgentStartChange, Command, CommandResult, Decision, Extension, HttpRequest, InputAction, Json};

struct Guest {
    stops: u32,
}

pub fn new_extension() -> Box<dyn Extension> {
    Box::new(Guest { stops: 0 })
}

fn arg(input: &Json, key: &str) -> String {
    if let Some(b) = input.get(&format!("{}B64", key)).as_str() {
        return pi::from_utf8_go(&pi::unbase64(b).unwrap_or_default());
    }
    input.get(key).as_str().unwrap_or("").to_string()
}

fn bytes_arg(input: &Json, key: &str) -> Option<Vec<u8>> {
    if let Some(b) = input.get(&format!("{}B64", key)).as_str() {
        return pi::unbase64(b);
    }
    input.get(key).as_str().map(|s| s.as_bytes().to_vec())
}

/// in[key] as a JSON value, or in[keyB64] decoded and parsed.
fn json_arg(input: &Json, key: &str) -> Result<Json, String> {
    match input.get(&format!("{}B64", key)).as_str() {
        Some(b) => Json::parse(&pi::unbase64(b).unwrap_or_default()).map_err(|e| format!("host call: the value is not one JSON value: {}", e)),
        None => Ok(input.get(key).clone()),
    }
}

fn num(input: &Json, key: &str) -> u64 {
    input.get(key).as_f64().unwrap_or(0.0) as u64
}

fn headers(input: &Json) -> Vec<(String, String)> {
    match input.get("headers") {
        Json::Obj(m) => m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string())).collect(),
        _ => Vec::new(),
    }
}

fn obj(m: Vec<(&str, Json)>) -> Json {
    Json::Obj(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

fn probe(input: &Json) -> Result<String, String> {
    let key = arg(input, "key");
    let scope = arg(input, "scope");
    Ok(match arg(input, "op").as_str() {
        "kv.get" => match pi::kv_get(&key, &scope)? {
            Some(v) => v.to_json(),
            None => "(not set)".to_string(),
        },
        "kv.set" => {
            pi::kv_set(&key, &json_arg(input, "value")?, &scope)?;
            "set".to_string()
        }
        "kv.delete" => {
            pi::kv_delete(&key, &scope)?;
            "deleted".to_string()
        }
        "kv.list" => Json::Arr(pi::kv_list(&arg(input, "prefix"), &scope)?.into_iter().map(Json::Str).collect()).to_json(),
        "http" => {
            let req = HttpRequest {
                method: arg(input, "method"),
                url: arg(input, "url"),
                headers: headers(input),
                body: bytes_arg(input, "body"),
                timeout_ms: num(input, "timeoutMs"),
            };
            let r = pi::http(&req)?;
            obj(vec![
                ("status", Json::Num(r.status as f64)),
                ("multi", Json::Str(r.header("X-Multi").unwrap_or("").to_string())),
                ("bodyB64", Json::Str(pi::base64(&r.body))),
            ])
            .to_json()
        }
        "tool.call" => {
            let r = pi::call_tool(&arg(input, "name"), &json_arg(input, "input")?)?;
            let mut result = vec![("content", Json::Arr(r.content.clone()))];
            if !r.details.is_null() {
                result.push(("details", r.details.clone()));
            }
            result.push(("isError", Json::Bool(r.is_error)));
            obj(vec![("isError", Json::Bool(r.is_error)), ("text", Json::Str(r.text())), ("result", obj(result))]).to_json()
        }
        "ui.notify" => {
            pi::notify(&arg(input, "message"), &arg(input, "level"))?;
            "notified".to_string()
        }
        "ui.confirm" => {
            let c = pi::confirm(&arg(input, "title"), &arg(input, "message"), num(input, "timeoutMs"))?;
            obj(vec![("confirmed", Json::Bool(c.confirmed)), ("reason", Json::Str(c.reason))]).to_json()
        }
        "session.append" => pi::session_append(&arg(input, "customType"), &json_arg(input, "data")?)?,
        "session.entries" => {
            let list = pi::session_entries(&arg(input, "customType"))?;
            Json::Arr(list.into_iter().map(|e| obj(vec![("id", Json::Str(e.id)), ("customType", Json::Str(e.custom_type)), ("data", e.data)])).collect()).to_json()
        }
        "exec" => {
            let argv: Vec<String> = input.get("argv").as_array().map(|a| a.iter().map(|x| x.as_str().unwrap_or("").to_string()).collect()).unwrap_or_default();
            let argv: Vec<&str> = argv.iter().map(|s| s.as_str()).collect();
            let r = pi::exec(&argv, &arg(input, "cwd"), num(input, "timeoutMs"), &arg(input, "stdin"))?;
            obj(vec![("exitCode", Json::Num(r.exit_code as f64)), ("stdout", Json::Str(r.stdout))]).to_json()
        }
        "raw" => pi::host_call(&arg(input, "method"), &json_arg(input, "params")?)?.to_json(),
        "facts" => obj(vec![
            ("abiMinor", Json::Num(pi::abi_minor() as f64)),
            ("trusted", Json::Bool(pi::trusted())),
            ("hasUI", Json::Bool(pi::has_ui())),
            ("mode", Json::Str(pi::mode().to_string())),
            ("projectRoot", Json::Str(pi::project_root().to_string())),
        ])
        .to_json(),
        op => return Err(format!("unknown op {}", op)),
    })
}

/// The request text a helper builds for input.
fn request(input: &Json) -> Result<String, String> {
    let (a, c) = (arg(input, "a"), arg(input, "c"));
    let j = json_arg(input, "json")?;
    let t = num(input, "timeoutMs");
    let op = arg(input, "op");
    let params = match op.as_str() {
        "kv.get" | "kv.delete" => pi::kv_get_params(&a, &c),
        "kv.set" => pi::kv_set_params(&a, &j, &c),
        "kv.list" => pi::kv_list_params(&a, &c),
        "http.request" => pi::http_params(&HttpRequest { method: c, url: a, headers: headers(input), body: bytes_arg(input, "b"), timeout_ms: t }),
        "tool.call" => pi::tool_call_params(&a, &j),
        "ui.notify" => pi::notify_params(&a, &c),
        "ui.confirm" => pi::confirm_params(&a, &arg(input, "b"), t),
        "session.append" => pi::session_append_params(&a, &j),
        "session.entries" => pi::session_entries_params(&a),
        "exec" => pi::exec_params(&[&a, &arg(input, "b")], &c, t, ""),
        _ => return Err("unknown op".to_string()),
    };
    Ok(pi::host_request(&op, &params))
}

impl Extension for Guest {
    fn declaration(&self) -> &'static str {
        r#"{"name":"guest11","version":"0.1.0","description":"ABI 1.1 test guest",
            "tools":[
              {"name":"probe","description":"One host call.","parameters":{"type":"object"}},
              {"name":"request","description":"A host call's request.","parameters":{"type":"object"}},
              {"name":"requests","description":"Requests of a batch.","parameters":{"type":"object"}}],
            "hooks":["tool_call","input","before_agent_start","stop"],
            "configSchema":{"type":"object","properties":{"greeting":{"type":"string"}},"additionalProperties":false},
            "wants":{"http":["http://127.0.0.1/*"],"tools":["read"]}}"#
    }

    /// Leaves checking the config to the configSchema it declares.
    fn init(&mut self, _config: &Json) -> Result<(), String> {
        self.stops = 0;
        Ok(())
    }

    fn tool(&mut self, name: &str, input: &Json) -> Result<String, String> {
        match name {
            "probe" => probe(input),
            "request" => request(input),
            "requests" => {
                let batch = input.get("batch").as_array().cloned().unwrap_or_default();
                let out = batch.iter().map(|one| match request(one) {
                    Ok(text) => Json::Str(text),
                    Err(e) => obj(vec![("error", Json::Str(e))]),
                });
                Ok(Json::Arr(out.collect()).to_json())
            }
            _ => Err(format!("unknown tool {}", name)),
        }
    }

    fn tool_call_decision(&mut self, tool: &str, _input: &Json) -> Decision {
        match tool {
            "write" => Decision::Block("guest11 blocks write".to_string()),
            "find" => Decision::Ask("may find run? <\"quoted\">".to_string()),
            _ => Decision::Allow,
        }
    }

    fn commands(&self) -> Vec<Command> {
        vec![
            Command { name: "echo", description: "Echo the arguments", argument_hint: "[text]" },
            Command { name: "kv", description: "Show a kv value", argument_hint: "KEY" },
        ]
    }

    fn command(&mut self, name: &str, args: &str) -> Result<CommandResult, String> {
        match name {
            "echo" if args == "fail" => Err("echo failed: \"as asked\"".to_string()),
            "echo" => Ok(CommandResult { text: format!("echo: {}", args), prompt: args.strip_prefix("ask ").unwrap_or("").to_string() }),
            _ => {
                let v = pi::kv_get(args, "")?;
                Ok(CommandResult { text: format!("kv {} = {}", args, v.map(|v| v.to_json()).unwrap_or_else(|| "(not set)".to_string())), prompt: String::new() })
            }
        }
    }

    fn input(&mut self, text: &str, _images: &Json, mode: &str) -> InputAction {
        if text.contains("sk-") {
            InputAction::Handled(format!("refused in {} mode: the prompt holds a secret", mode))
        } else if let Some(rest) = text.strip_prefix("rewrite:") {
            InputAction::Replace(rest.to_string())
        } else {
            InputAction::Pass
        }
    }

    fn before_agent_start(&mut self, prompt: &str, _system_prompt: &str) -> AgentStartChange {
        AgentStartChange {
            append_system_prompt: format!("GUEST11 APPEND <&> for: {}", prompt),
            context: vec!["GUEST11 CONTEXT \"\u{2028}\"".to_string()],
            ..Default::default()
        }
    }

    fn stop(&mut self, last_text: &str, turns: u32) -> Option<String> {
        self.stops += 1;
        if self.stops == 1 && last_text == "first" {
            Some(format!("GUEST11 CONTINUE after {} turn(s)", turns))
        } else {
            None
        }
    }
}
