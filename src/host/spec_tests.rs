use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::host::vars::ResolveFn;

fn scope() -> Scope {
    let resolver: ResolveFn = Arc::new(|kind, r, _| (kind == "input" && r == "pat").then(|| "hunter2".to_string()));
    Scope {
        resolver: Some(resolver),
        ..Scope::default()
    }
}

fn one(text: &str) -> Result<Vec<ServerSpec>> {
    parse("cfg.json", text, &scope())
}

#[test]
fn mcp_servers_stdio_and_http() {
    let s = one(r#"{"mcpServers": {
            "fs": {"command": "npx", "args": ["-y", "fs"], "env": {"A": "1"}, "cwd": "/tmp",
                   "timeout": 1500, "startup_timeout_sec": 2, "excludeTools": ["rm"], "unknown": 5},
            "web": {"url": "https://h/mcp", "headers": {"X-K": "v"}},
            "old": {"type": "sse", "url": "https://h/sse"},
            "gem": {"httpUrl": "https://h/mcp"}}}"#)
    .unwrap();
    assert_eq!(s.len(), 4);
    let by = |n: &str| s.iter().find(|x| x.name == n).unwrap();
    assert_eq!(
        by("fs").reach,
        Reach::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "fs".into()],
            env: vec![("A".into(), "1".into())],
            cwd: Some("/tmp".into())
        }
    );
    assert_eq!(by("fs").call_timeout, Some(Duration::from_millis(1500)));
    assert_eq!(by("fs").startup_timeout, Some(Duration::from_secs(2)));
    assert_eq!(by("fs").exclude, vec!["rm".to_string()]);
    assert!(matches!(&by("web").reach, Reach::Http { mode: HttpMode::Auto, headers, .. } if headers.len() == 1));
    assert!(matches!(
        &by("old").reach,
        Reach::Http {
            mode: HttpMode::Sse,
            ..
        }
    ));
    assert!(matches!(
        &by("gem").reach,
        Reach::Http {
            mode: HttpMode::Streamable,
            ..
        }
    ));
}

#[test]
fn vscode_jsonc_with_inputs() {
    let s = one(r#"{
        // VS Code writes comments
        "servers": {
            "gh": {"type": "http", "url": "https://h/mcp",
                   "headers": {"Authorization": "Bearer ${input:pat}"},},
        },
        "inputs": [{"type": "promptString", "id": "pat", "description": "PAT", "password": true}],
    }"#)
    .unwrap();
    let Reach::Http { headers, mode, .. } = &s[0].reach else {
        panic!()
    };
    assert_eq!(*mode, HttpMode::Streamable);
    assert_eq!(headers[0].1, "Bearer hunter2");
}

#[test]
fn zed_both_forms_and_root_map() {
    let s = one(r#"{"context_servers": {"a": {"command": {"path": "srv", "args": ["x"], "env": {"K": "v"}}}, "b": {"command": "srv2"}}}"#).unwrap();
    assert!(
        matches!(&s[0].reach, Reach::Stdio { command, args, env, .. } if command == "srv" && args.len() == 1 && env.len() == 1)
    );
    assert!(matches!(&s[1].reach, Reach::Stdio { command, .. } if command == "srv2"));
    let s = one(r#"{"github": {"type": "streamable-http", "url": "https://h/mcp"}, "local": {"type": "stdio", "command": "s"}}"#).unwrap();
    assert_eq!(s.len(), 2);
}

#[test]
fn disabled_needs_no_variables() {
    let s = one(r#"{"mcpServers": {"off": {"command": "${MCPC_SPEC_UNSET}", "disabled": true}}}"#).unwrap();
    assert!(!s[0].enabled);
    let s = one(r#"{"mcpServers": {"off": {"command": "x", "enabled": false}}}"#).unwrap();
    assert!(!s[0].enabled);
}

#[test]
fn malformed_names_file_server_and_field() {
    for (text, want) in [
        (
            r#"{"mcpServers": {"a": {"command": "x", "args": "y"}}}"#,
            r#"cfg.json: server "a": field "args" must be an array of strings"#,
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x", "env": {"K": 1}}}}"#,
            r#"field "env.K" must be a string"#,
        ),
        (
            r#"{"mcpServers": {"a": {"type": "ws", "url": "x"}}}"#,
            r#"field "type" "ws" is not"#,
        ),
        (
            r#"{"mcpServers": {"a": {"type": "http"}}}"#,
            r#"field "url" is missing"#,
        ),
        (r#"{"mcpServers": {"a": {"args": []}}}"#, "neither command nor url"),
        (
            r#"{"mcpServers": {"a": {"command": "x", "timeout": -1}}}"#,
            "must be a positive number",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x", "enabled": "yes"}}}"#,
            "must be true or false",
        ),
        (r#"{"mcpServers": []}"#, r#"field "mcpServers" must be an object"#),
        (r#"{"other": 1}"#, "has no mcpServers"),
        (r#"[1]"#, "is not a JSON object"),
        (
            r#"{"mcpServers": {"a": {"command": "x", "args": ["${MCPC_SPEC_UNSET}"]}}}"#,
            "${MCPC_SPEC_UNSET} is not set",
        ),
    ] {
        let e = one(text).unwrap_err();
        assert_eq!(e.status, Status::MCPC_ERR_CONFIG, "{text}");
        assert!(e.to_string().contains(want), "{text}: {e}");
    }
}

#[test]
fn a_secret_from_the_resolver_is_in_no_message() {
    // The header is fine, another field is not: the message names the field only.
    let e = one(r#"{"servers": {"a": {"url": "https://h", "headers": {"A": "${input:pat}"}, "timeout": "x"}}}"#)
        .unwrap_err();
    assert!(!e.to_string().contains("hunter2"), "{e}");
    // A field whose value is refused is quoted as written, not as expanded.
    let e = one(r#"{"servers": {"a": {"url": "https://h", "type": "${input:pat}"}}}"#).unwrap_err();
    assert!(
        !e.to_string().contains("hunter2") && e.to_string().contains("${input:pat}"),
        "{e}"
    );
}

#[test]
fn oauth_settings_of_a_server() {
    let s = one(r#"{"mcpServers": {
            "gem": {"httpUrl": "https://h/mcp", "oauth": {"enabled": true, "clientId": "cid",
                    "clientSecret": "${input:pat}", "scopes": ["a", "b"], "redirectUri": "http://127.0.0.1:7/cb",
                    "tokenUrl": "https://ignored"}},
            "cc": {"url": "https://h/mcp", "oauth": {"clientId": "c2", "callbackPort": 8080, "scope": "x"}},
            "off": {"url": "https://h/mcp", "oauth": false},
            "off2": {"url": "https://h/mcp", "oauth": {"enabled": false, "clientId": "unused"}},
            "none": {"url": "https://h/mcp"}}}"#)
    .unwrap();
    let by = |n: &str| s.iter().find(|x| x.name == n).unwrap().oauth.clone();
    let gem = by("gem").unwrap();
    assert_eq!(gem.client_id.as_deref(), Some("cid"));
    assert_eq!(gem.client_secret.as_deref(), Some("hunter2"));
    assert_eq!(gem.scope.as_deref(), Some("a b"));
    assert_eq!(gem.redirect_uri.as_deref(), Some("http://127.0.0.1:7/cb"));
    assert!(!format!("{gem:?}").contains("hunter2"), "the secret is never printed");
    let cc = by("cc").unwrap();
    assert_eq!(cc.redirect_uri.as_deref(), Some("http://127.0.0.1:8080/callback"));
    assert_eq!(cc.scope.as_deref(), Some("x"));
    assert!(!by("off").unwrap().enabled && !by("off2").unwrap().enabled);
    assert!(by("none").is_none());
    for (bad, field) in [
        (r#"{"oauth": 3}"#, "\"oauth\""),
        (r#"{"oauth": {"callbackPort": 70000}}"#, "\"oauth.callbackPort\""),
        (r#"{"oauth": {"redirectUri": "not a url"}}"#, "\"oauth.redirectUri\""),
        (r#"{"oauth": {"clientId": 5}}"#, "\"oauth.clientId\""),
    ] {
        let text = format!(
            r#"{{"mcpServers": {{"s": {{"url": "https://h/mcp", {}}}}}}}"#,
            &bad[1..bad.len() - 1]
        );
        let e = one(&text).unwrap_err();
        assert_eq!(e.status, Status::MCPC_ERR_CONFIG);
        assert!(e.message.contains(field), "{}: {}", field, e.message);
    }
}
