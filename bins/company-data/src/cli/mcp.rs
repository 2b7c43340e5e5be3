//! `company-data mcp`: the API's tools for an agent host, over MCP on standard input and output — embedded on
//! the database (`--db`, the tools billing the account of `--key`), or relaying to a server (`--server URL
//! --key KEY`, through the Rust client). Standard output carries the protocol alone; logs go to standard error.

use anyhow::Context;
use clap::Args;
use company_data::config::ServeArgs;
use company_data_client::{Client, ClientError};
use mcp_server::{ApiAnswer, ApiCall, Backend, BackendError, CompanyDataTools};
use rmcp::ServiceExt;
use server_assembly::Server;
use server_assembly::mcp::Embedded;
use tracing_subscriber::EnvFilter;

/// The flags of `company-data mcp`.
#[derive(Args, Debug)]
pub(crate) struct McpArgs {
    /// The API key the tools use: its account pays for them, its rate limit and idempotency apply.
    #[arg(long, env = "COMPANY_DATA_KEY")]
    key: String,
    /// Relay to the company-data server at this address (`http://HOST:PORT`) instead of opening the database
    /// here.
    #[arg(long, env = "COMPANY_DATA_SERVER")]
    server: Option<String>,
    /// Everything `serve` takes, for the embedded mode (`--db`, `--origin`, ...); `--listen` is not used.
    #[command(flatten)]
    serve: ServeArgs,
}

pub(crate) async fn run(args: McpArgs) -> anyhow::Result<()> {
    let filter = EnvFilter::try_new(&args.serve.log).context("--log is not a valid filter")?;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    if let Some(base) = &args.server {
        return serve(Relay(Client::new(base, &args.key)?)).await;
    }
    let settings = args.serve.settings()?;
    let server = Server::start(&settings).await?;
    if server.first_key().is_some() {
        anyhow::bail!(
            "the database {} held no account: create a key with `company-data keys create --db {} --account \
             NAME --credits N` and pass it with --key",
            settings.db,
            settings.db
        );
    }
    let result = serve(Embedded::new(server.app().api().clone(), args.key.clone())).await;
    server.stop().await;
    result
}

/// Serves the tools on standard input and output until the host closes them.
async fn serve(backend: impl Backend) -> anyhow::Result<()> {
    let tools = CompanyDataTools::new(backend);
    tools.check_key().await?;
    let running = tools
        .serve(rmcp::transport::stdio())
        .await
        .context("the MCP session could not start")?;
    running.waiting().await.context("the MCP session failed")?;
    Ok(())
}

/// Tool calls relayed to a server through the Rust client (which retries what a retry can mend).
struct Relay(Client);

impl Backend for Relay {
    async fn send(&self, call: ApiCall) -> Result<ApiAnswer, BackendError> {
        match self
            .0
            .call(
                call.method,
                &call.path_and_query,
                call.body.as_ref(),
                call.idempotency_key.as_deref(),
            )
            .await
        {
            Ok(answer) => Ok(ApiAnswer {
                status: answer.status,
                headers: answer.headers,
                body: answer.body,
            }),
            // A refusal is an answer: the tool reports its error body.
            Err(ClientError::Api { status, body }) => Ok(ApiAnswer {
                status: http::StatusCode::from_u16(status)
                    .unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR),
                headers: http::HeaderMap::new(),
                body: serde_json::to_vec(&body)
                    .map_err(|error| BackendError::Body(error.to_string()))?,
            }),
            Err(error) => Err(BackendError::Unreachable(error.to_string())),
        }
    }
}
