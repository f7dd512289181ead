//! widget-placement: one widget above the editor and one below it, set
//! when a session starts or changes (a port of the reference's
//! widget-placement example to ABI 1.2, in Rust).

#[path = "../../../../sdk/rust/pi.rs"]
mod pi;

use pi::{Extension, Json, Line};

struct Widgets;

pub fn new_extension() -> Box<dyn Extension> {
    Box::new(Widgets)
}

fn apply() -> Result<(), String> {
    pi::set_widget("widget-above", Some(&[Line::from("Above editor widget")]), "")?;
    pi::set_widget("widget-below", Some(&[Line::Spans(vec![pi::span("Below", "accent"), pi::span(" editor widget", "")])]), pi::BELOW_EDITOR)
}

impl Extension for Widgets {
    fn declaration(&self) -> &'static str {
        r#"{"name":"widget-placement","version":"0.1.0","description":"Widgets above and below the editor.","tools":[],
            "hooks":["event"],"events":["session_start","session_switch"]}"#
    }

    fn event(&mut self, _event_type: &str, _event: &Json) -> bool {
        if pi::has_ui() {
            if let Err(e) = apply() {
                pi::log(pi::WARN, &e);
            }
        }
        true
    }
}
