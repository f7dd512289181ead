//! provider-payload: writes the JSON body of every request pi sends to
//! the model to .pi/provider-payload.log (a port of the reference's
//! provider-payload example to ABI 1.2, in Rust: the
//! before_provider_request hook; the file is written through the
//! extension's rw grant on .pi).

#[path = "../../../../sdk/rust/pi.rs"]
mod pi;

use pi::{Extension, Json};
use std::io::Write;

struct Payload;

pub fn new_extension() -> Box<dyn Extension> {
    Box::new(Payload)
}

impl Extension for Payload {
    fn declaration(&self) -> &'static str {
        r#"{"name":"provider-payload","version":"0.1.0","description":"Logs what pi sends the model.","tools":[],
            "hooks":["before_provider_request"],"wants":{"fs":["rw:.pi"]}}"#
    }

    fn before_provider_request(&mut self, payload: &Json) -> Option<Json> {
        let path = format!("{}/.pi/provider-payload.log", pi::project_root());
        let res = std::fs::OpenOptions::new().create(true).append(true).open(&path).and_then(|mut f| writeln!(f, "{}\n", payload.to_json()));
        if let Err(e) = res {
            pi::log(pi::WARN, &format!("write {}: {}", path, e));
        }
        None // the payload goes out unchanged
    }
}
