//! `company-data serve`: the server until SIGINT or SIGTERM.

use anyhow::Context;
use company_data::config::{LogFormat, ServeArgs};
use server_assembly::Server;
use tracing_subscriber::EnvFilter;

pub(crate) async fn run(args: ServeArgs) -> anyhow::Result<()> {
    let filter = EnvFilter::try_new(&args.log).context("--log is not a valid filter")?;
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match args.log_format {
        LogFormat::Text => logs
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init(),
        // One object per line: the event's fields at the top level, the request span's fields (request_id,
        // account, key prefix, records, credits) under `span`.
        LogFormat::Json => logs
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .init(),
    }
    let settings = args.settings()?;
    // Installed before anything records, so that the first requests count.
    let metrics = match args.metrics_listen {
        Some(address) => Some((server_assembly::metrics::recorder()?, address)),
        None => None,
    };
    let server = Server::start(&settings).await?;
    if let Some(first) = server.first_key() {
        println!(
            "First start: created account `{}` with {} credits and this API key (shown once, keep it):",
            first.account.name, first.account.balance
        );
        println!("{}", first.key.expose());
    }
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| {
            format!(
                "cannot listen on {}; choose another address with --listen",
                args.listen
            )
        })?;
    if let Some((handle, address)) = metrics {
        let metrics_listener = tokio::net::TcpListener::bind(address)
            .await
            .with_context(|| {
                format!("cannot listen on {address} for metrics; choose another --metrics-listen")
            })?;
        let bound = metrics_listener.local_addr()?;
        eprintln!("company-data metrics on http://{bound}/metrics");
        // Ends with the process.
        tokio::spawn(server_assembly::metrics::serve(
            metrics_listener,
            handle,
            std::future::pending(),
        ));
    }
    let address = listener.local_addr()?;
    tracing::info!(%address, db = %settings.db, origin = ?settings.fetcher.origin, "listening");
    eprintln!("company-data listening on http://{address}");
    server.serve(listener, shutdown_signal()).await?;
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}
