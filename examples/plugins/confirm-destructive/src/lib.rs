//! confirm-destructive: asks before a new session clears the
//! conversation, before switching away from a session with messages, and
//! before a fork (a port of the reference's confirm-destructive example
//! to ABI 1.2, in Rust: the cancellable session_before_* hooks and
//! dialogs).

#[path = "../../../../sdk/rust/pi.rs"]
mod pi;

use pi::{Extension, Json, SessionBefore};

struct Guard;

pub fn new_extension() -> Box<dyn Extension> {
    Box::new(Guard)
}

fn cancel(what: &str) -> SessionBefore {
    let _ = pi::notify(&format!("{} cancelled", what), pi::NOTIFY_INFO);
    SessionBefore::Cancel(format!("{} cancelled by the person", what))
}

fn ask(which: &str, params: &Json) -> Result<SessionBefore, String> {
    match which {
        "switch" if params.get("reason").as_str() == Some("new") => {
            let c = pi::confirm("Clear session?", "This will delete all messages in the current session.", 0)?;
            Ok(if c.confirmed { SessionBefore::Pass } else { cancel("Clear") })
        }
        "switch" => {
            let has_work = pi::session_branch(0)?.iter().any(|e| e.get("type").as_str() == Some("message") && e.get("message").get("role").as_str() == Some("user"));
            if !has_work {
                return Ok(SessionBefore::Pass);
            }
            let c = pi::confirm("Switch session?", "You have messages in the current session. Switch anyway?", 0)?;
            Ok(if c.confirmed { SessionBefore::Pass } else { cancel("Switch") })
        }
        "fork" => {
            let id: String = params.get("entryId").as_str().unwrap_or("").chars().take(8).collect();
            let d = pi::select(&format!("Fork from entry {}?", id), &["Yes, create fork", "No, stay in current session"], 0)?;
            Ok(if d.value.as_deref() == Some("Yes, create fork") { SessionBefore::Pass } else { cancel("Fork") })
        }
        _ => Ok(SessionBefore::Pass),
    }
}

impl Extension for Guard {
    fn declaration(&self) -> &'static str {
        r#"{"name":"confirm-destructive","version":"0.1.0","description":"Asks before clearing, switching or forking a session.",
            "tools":[],"hooks":["session_before_switch","session_before_fork"]}"#
    }

    fn session_before(&mut self, which: &str, params: &Json) -> SessionBefore {
        if !pi::has_ui() {
            return SessionBefore::Pass;
        }
        ask(which, params).unwrap_or_else(|e| {
            pi::log(pi::WARN, &e);
            SessionBefore::Pass
        })
    }
}
