//! `Config`'s own checks of its values: each setter refuses what the C layer refuses
//! (`MCPC_ERR_INVALID_ARG`, the message never repeating a header's or token's value),
//! and [`Config::check`] refuses a configuration built field by field that no setter
//! would have made, before anything connects.

use std::time::Duration;

use http::header::{HeaderName, HeaderValue};

use super::Config;
use crate::error::{Error, Result, Status};
use crate::transport::http::is_reserved_header;

/// The smallest message size a connection may be limited to.
const MIN_MESSAGE_SIZE: usize = 1024;

fn invalid(message: impl Into<String>) -> Error {
    Error::new(Status::MCPC_ERR_INVALID_ARG, message)
}

fn positive(d: Duration, what: &str) -> Result<Duration> {
    if d.is_zero() {
        return Err(invalid(format!("{what} must be positive")));
    }
    Ok(d)
}

fn env_name(name: &str) -> Result<()> {
    if name.is_empty() || name.contains('=') || name.contains('\0') {
        return Err(invalid(format!("bad environment variable name {name:?}")));
    }
    Ok(())
}

fn header(name: &str, value: &str) -> Result<(HeaderName, HeaderValue)> {
    let n =
        HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid(format!("{name:?} is not a valid header name")))?;
    if is_reserved_header(&n) {
        return Err(invalid(format!("header {name:?} is set by mcpc itself")));
    }
    let mut v =
        HeaderValue::from_str(value).map_err(|_| invalid(format!("the value of header {name:?} is not valid")))?;
    v.set_sensitive(true);
    Ok((n, v))
}

fn bearer(token: &str) -> Result<()> {
    if token.is_empty() || HeaderValue::from_str(&format!("Bearer {token}")).is_err() {
        return Err(invalid("the bearer token is empty or not a valid header value"));
    }
    Ok(())
}

impl Config {
    /// The default timeout of the handshake, each listing and each call.
    pub fn set_timeout(&mut self, timeout: Duration) -> Result<()> {
        self.client.timeout = positive(timeout, "the timeout")?;
        Ok(())
    }

    /// How long the version probe waits on a stream transport.
    pub fn set_probe_window(&mut self, window: Duration) -> Result<()> {
        self.client.probe_window = positive(window, "the probe window")?;
        Ok(())
    }

    /// The most pages one listing follows (at least one).
    pub fn set_max_pages(&mut self, max_pages: usize) -> Result<()> {
        if max_pages == 0 {
            return Err(invalid("max_pages must be at least 1"));
        }
        self.client.max_pages = max_pages;
        Ok(())
    }

    /// The largest message accepted from the server (at least [`MIN_MESSAGE_SIZE`]).
    pub fn set_max_message_size(&mut self, bytes: usize) -> Result<()> {
        if bytes < MIN_MESSAGE_SIZE {
            return Err(invalid(format!(
                "max message size must be at least {MIN_MESSAGE_SIZE} bytes"
            )));
        }
        self.max_message_size = bytes;
        Ok(())
    }

    /// How long a stdio server has after its stdin closes, then after SIGTERM.
    pub fn set_close_grace(&mut self, close: Duration, term: Duration) -> Result<()> {
        self.close_grace = positive(close, "close_grace_ms")?;
        self.term_grace = positive(term, "term_grace_ms")?;
        Ok(())
    }

    /// Sets (or with `None`, removes) a variable of a stdio server's environment.
    pub fn set_env(&mut self, name: &str, value: Option<&str>) -> Result<()> {
        env_name(name)?;
        self.env.push((name.into(), value.map(Into::into)));
        Ok(())
    }

    /// Adds a header to every HTTP request; the transport's own are refused.
    pub fn add_header(&mut self, name: &str, value: &str) -> Result<()> {
        let h = header(name, value)?;
        self.headers.push(h);
        Ok(())
    }

    /// The fixed bearer token (`None` clears it).
    pub fn set_bearer(&mut self, token: Option<&str>) -> Result<()> {
        if let Some(t) = token {
            bearer(t)?;
        }
        self.bearer = token.map(str::to_string);
        Ok(())
    }

    /// Declares the extension `id` with its settings (a JSON object; none: `{}`); a
    /// second declaration of an id replaces the first.
    pub fn add_extension(&mut self, id: &str, settings_json: Option<&str>) -> Result<()> {
        crate::client::extensions::check_id(id)?;
        let settings = crate::client::extensions::check_settings(id, settings_json)?;
        let list = &mut self.client.extensions;
        match list.iter_mut().find(|(known, _)| known == id) {
            Some(entry) => entry.1 = settings,
            None => list.push((id.to_string(), settings)),
        }
        Ok(())
    }

    /// Refuses a value no setter would have accepted (fields set directly).
    pub fn check(&self) -> Result<()> {
        positive(self.client.timeout, "the timeout")?;
        positive(self.client.probe_window, "the probe window")?;
        positive(self.close_grace, "close_grace_ms")?;
        positive(self.term_grace, "term_grace_ms")?;
        if self.client.max_pages == 0 {
            return Err(invalid("max_pages must be at least 1"));
        }
        if self.max_message_size < MIN_MESSAGE_SIZE {
            return Err(invalid(format!(
                "max message size must be at least {MIN_MESSAGE_SIZE} bytes"
            )));
        }
        for (name, _) in &self.env {
            env_name(&name.to_string_lossy())?;
        }
        for (name, _) in &self.headers {
            if is_reserved_header(name) {
                return Err(invalid(format!("header {:?} is set by mcpc itself", name.as_str())));
            }
        }
        if let Some(t) = &self.bearer {
            bearer(t)?;
        }
        for (id, settings) in &self.client.extensions {
            crate::client::extensions::check_id(id)?;
            crate::client::extensions::check_settings(id, Some(settings.get()))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(r: Result<()>) -> String {
        let e = r.unwrap_err();
        assert_eq!(e.status, Status::MCPC_ERR_INVALID_ARG);
        e.message
    }

    /// The core refuses what the C layer refuses, through its setters and, for a
    /// configuration built field by field, before connecting.
    #[test]
    fn the_core_refuses_what_the_c_layer_refuses() {
        let mut c = Config::default();
        refused(c.set_timeout(Duration::ZERO));
        refused(c.set_max_pages(0));
        refused(c.set_max_message_size(10));
        refused(c.set_env("A=B", Some("x")));
        refused(c.set_env("", None));
        refused(c.add_header("Content-Type", "x"));
        refused(c.add_header("bad name", "x"));
        let m = refused(c.add_header("X-Key", "se\ncret"));
        assert!(!m.contains("se\ncret"), "{m}");
        let m = refused(c.set_bearer(Some("to\nken")));
        assert!(!m.contains("to\nken"), "{m}");
        refused(c.set_close_grace(Duration::ZERO, Duration::from_secs(1)));
        assert!(c.check().is_ok(), "refused values leave nothing behind");

        c.add_header("X-Key", "v").unwrap();
        c.set_bearer(Some("t")).unwrap();
        c.set_env("NAME", Some("v")).unwrap();
        assert!(c.check().is_ok());

        for broken in [
            |c: &mut Config| c.client.timeout = Duration::ZERO,
            |c: &mut Config| c.client.max_pages = 0,
            |c: &mut Config| c.max_message_size = 1,
            |c: &mut Config| c.term_grace = Duration::ZERO,
            |c: &mut Config| c.env.push(("X=Y".into(), None)),
            |c: &mut Config| c.bearer = Some(String::new()),
        ] {
            let mut c = Config::default();
            broken(&mut c);
            refused(c.check());
            refused(c.stdio(&["server".to_string()]).map(drop));
            refused(c.http("http://127.0.0.1:1/mcp").map(drop));
        }
    }
}
