//! The MCP tools through a client nobody here wrote: the official MCP Python SDK (`tests/mcp/session.py`, in a
//! venv `tests/ci` makes, named by `$MCP_PYTHON`) runs an agent's session against `company-data mcp`, and the
//! database says what it was charged.

use std::process::Command;

use e2e_harness::{binary, cli, cli_fails, fixtures, tool, workspace};

/// `session.py` with its arguments: what the session saw, as JSON; panics with the script's output on failure.
fn session(python: &std::path::Path, args: &[&str]) -> serde_json::Value {
    let output = Command::new(python)
        .arg(workspace().join("tests/mcp/session.py"))
        .args(args)
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the MCP session failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// A new SQLite database in a folder of its own, with an account `agent` holding `credits` and its key.
fn database_with_key(credits: &str) -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("mcp.db").display().to_string();
    let created = cli(&[
        "keys",
        "create",
        "--db",
        &db,
        "--account",
        "agent",
        "--credits",
        credits,
    ]);
    let key = created.lines().last().expect("the key").trim().to_owned();
    (dir, db, key)
}

#[test]
fn an_agent_over_stdio_lists_calls_and_pays_as_over_http() {
    let Some(python) = tool("MCP_PYTHON", "the MCP Python SDK") else {
        return;
    };
    let (_dir, db, key) = database_with_key("10");
    let origin = fixtures().join("origin").display().to_string();
    let company_data = binary().display().to_string();
    let seen = session(
        &python,
        &[
            "stdio",
            &company_data,
            "mcp",
            "--key",
            &key,
            "--db",
            &db,
            "--origin",
            &origin,
        ],
    );
    assert_eq!(
        seen["tools"],
        serde_json::json!([
            "get_companies",
            "resolve_companies",
            "search_companies",
            "get_account",
            "get_company_history",
            "create_watch",
            "list_watches",
            "delete_watch"
        ])
    );
    // Two live records at 1, the same two stored at 0.5, one name resolved from a stored page at 0.5, one stored
    // record asked twice under one idempotency key at 0.5 once, one page's history at 0.5; the watch created
    // and deleted, and the call with a bad argument, charged nothing.
    assert_eq!(
        seen["live_text"],
        "2 records, 0 unresolved; 2 credits charged, 8 left."
    );
    assert_eq!(
        seen["stored_text"],
        "2 records, 0 unresolved; 1 credits charged, 7 left."
    );
    assert_eq!(seen["balance"], 5.5);
    assert_eq!(
        seen["retry_texts"],
        serde_json::json!([
            "1 records, 0 unresolved; 0.5 credits charged, 6 left.",
            "1 records, 0 unresolved; 0.5 credits charged, 6 left."
        ])
    );
    // Searching what the agent looked up is free.
    assert_eq!(
        seen["search_text"],
        format!(
            "1 companies.\n- Google ({})",
            "https://www.linkedin.com/company/google"
        )
    );
    assert_eq!(
        seen["watch_texts"],
        serde_json::json!(["1 watches created.", "1 watches.", "Deleted."])
    );
    let bad = seen["bad_text"].as_str().unwrap_or_default();
    assert!(
        bad.starts_with("invalid_request: ") && bad.contains("/liUrls") && bad.contains("Fix: "),
        "{bad}"
    );
    let shown = cli(&["credits", "show", "--db", &db, "--account", "agent"]);
    assert!(shown.starts_with("agent: 5.5 credits"), "{shown}");
}

#[test]
fn a_refused_key_stops_the_session_before_any_tool_runs() {
    let (_dir, db, _key) = database_with_key("1");
    let error = cli_fails(&["mcp", "--key", "cdk_live_not_a_key", "--db", &db]);
    assert!(
        error.contains("the API key was not accepted") && error.contains("invalid_api_key"),
        "{error}"
    );
    let shown = cli(&["credits", "show", "--db", &db, "--account", "agent"]);
    assert!(shown.starts_with("agent: 1 credits"), "{shown}");
}

#[tokio::test]
async fn an_agent_relayed_to_a_server_pays_there() {
    let Some(python) = tool("MCP_PYTHON", "the MCP Python SDK") else {
        return;
    };
    let service = e2e_harness::Service::start(e2e_harness::ServiceOptions::default());
    let key = service.key("agent", "10");
    let args = vec![
        "stdio".to_owned(),
        binary().display().to_string(),
        "mcp".to_owned(),
        "--server".to_owned(),
        service.base.clone(),
        "--key".to_owned(),
        key,
    ];
    let seen = session_beside(python, args).await;
    // The server's own ledger agrees.
    let shown = service.cli(&["credits", "show", "--account", "agent"]);
    assert!(shown.starts_with("agent: 5.5 credits"), "{shown}");
    assert_eq!(seen["balance"], 5.5);
    assert_eq!(
        seen["resolve_text"],
        "1 resolved, 0 unresolved; 0.5 credits charged, 6.5 left."
    );
}

/// `session.py` run off the async workers (it blocks until the Python session ends).
async fn session_beside(python: std::path::PathBuf, args: Vec<String>) -> serde_json::Value {
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        session(&python, &args)
    })
    .await
    .expect("the session ran")
}

#[tokio::test]
async fn an_agent_over_streamable_http_uses_the_server_s_keys_credits_and_limits() {
    let Some(python) = tool("MCP_PYTHON", "the MCP Python SDK") else {
        return;
    };
    let service = e2e_harness::Service::start(e2e_harness::ServiceOptions::default());
    let url = format!("{}/mcp", service.base);
    let key = service.key("agent", "10");
    let seen = session_beside(python.clone(), vec!["http".into(), url.clone(), key]).await;
    assert_eq!(seen["balance"], 5.5);
    assert_eq!(
        seen["live_text"],
        "2 records, 0 unresolved; 2 credits charged, 8 left."
    );
    let shown = service.cli(&["credits", "show", "--account", "agent"]);
    assert!(shown.starts_with("agent: 5.5 credits"), "{shown}");

    // No key, a made-up key and a revoked one: refused before any tool runs, nothing charged.
    let revoked = service.key("revoked", "5");
    let prefix = revoked.get(..12).expect("a key's prefix").to_owned();
    service.cli(&["keys", "revoke", &prefix]);
    for key in ["", "cdk_live_not_a_key", revoked.as_str()] {
        let seen = session_beside(
            python.clone(),
            vec!["refused".into(), url.clone(), key.into()],
        )
        .await;
        assert_eq!(seen["refused"], true, "{key}: {seen}");
    }
    let shown = service.cli(&["credits", "show", "--account", "revoked"]);
    assert!(shown.starts_with("revoked: 5 credits"), "{shown}");

    // 20 tool calls at once on an account that can pay for 10: exactly 10 answered and charged.
    let ten = service.key("ten", "10");
    let seen = session_beside(
        python,
        vec![
            "concurrent".into(),
            url,
            ten,
            "20".into(),
            "https://www.linkedin.com/company/google".into(),
        ],
    )
    .await;
    assert_eq!(seen["succeeded"], 10, "{seen}");
    assert_eq!(
        seen["errors"],
        serde_json::json!(vec!["insufficient_credits"; 10]),
        "{seen}"
    );
    let shown = service.cli(&["credits", "show", "--account", "ten"]);
    assert!(shown.starts_with("ten: 0 credits"), "{shown}");
}

#[tokio::test]
async fn llms_txt_lists_every_operation_and_tool_without_a_key() {
    let service = e2e_harness::Service::start(e2e_harness::ServiceOptions::default());
    let response = e2e_harness::client()
        .get(format!("{}/llms.txt", service.base))
        .send()
        .await
        .expect("request sent");
    let (reply, text) = e2e_harness::Reply::with_text(response).await;
    assert_eq!(reply.status, 200, "{text}");
    assert_eq!(
        reply.headers.get("content-type").map(String::as_str),
        Some("text/markdown; charset=utf-8")
    );
    assert!(text.starts_with("# company-data\n\n> "), "{text}");
    let document = service.get("/openapi.json").await.json;
    for (path, item) in document["paths"].as_object().expect("paths") {
        for method in item.as_object().expect("an item").keys() {
            if method == "parameters" {
                continue;
            }
            let line = format!("- [{} {path}](/openapi.json): ", method.to_uppercase());
            assert!(text.contains(&line), "{line} missing from:\n{text}");
        }
    }
    for tool in ["get_companies", "resolve_companies", "get_account"] {
        assert!(text.contains(&format!("- `{tool}`: ")), "{tool}");
    }
    assert!(text.contains("1 credit per record fetched live"), "{text}");
}
