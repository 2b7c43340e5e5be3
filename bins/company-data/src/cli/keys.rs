//! `company-data keys create|list|revoke`.

use accounts::KeyMode;
use anyhow::bail;
use clap::Subcommand;
use credit_ledger::Credits;

use super::DbArg;

#[derive(Subcommand)]
pub(crate) enum KeysCommand {
    /// Create a key; prints the full key as the last line (it is shown only this once).
    Create {
        #[command(flatten)]
        db: DbArg,
        /// The account the key spends from (created if missing).
        #[arg(long, default_value = "default")]
        account: String,
        /// Credits to grant the account now (e.g. 100 or 0.5).
        #[arg(long)]
        credits: Option<Credits>,
        /// A label for the key.
        #[arg(long)]
        name: Option<String>,
        /// A test-mode key (`cdk_test_…`): answered from the sample pages the service ships, never from the
        /// network, and never charged; its jobs, watches and webhook endpoints are apart from the live ones.
        #[arg(long)]
        test: bool,
    },
    /// List keys (never the secrets).
    List {
        #[command(flatten)]
        db: DbArg,
    },
    /// Revoke a key by id or by its prefix (e.g. `cdk_AbCd1234`); running servers stop accepting it within
    /// seconds.
    Revoke {
        #[command(flatten)]
        db: DbArg,
        /// Key id (from `keys list`) or prefix.
        key: String,
    },
}

pub(crate) async fn run(command: KeysCommand) -> anyhow::Result<()> {
    match command {
        KeysCommand::Create {
            db,
            account,
            credits,
            name,
            test,
        } => {
            let accounts = db.open().await?.accounts;
            let mode = if test { KeyMode::Test } else { KeyMode::Live };
            let made = accounts
                .create_key(&account, credits, name.as_deref(), mode)
                .await?;
            println!(
                "Created {} key {} ({}) for account `{}` (balance {} credits).",
                mode.label(),
                made.record.id,
                made.record.masked(),
                made.account.name,
                made.account.balance
            );
            if test {
                println!(
                    "It never reaches the network and spends nothing: it is answered from the sample pages {}.",
                    sandbox_pages::paths().join(", ")
                );
            }
            println!("The full key is shown only now:");
            println!("{}", made.key.expose());
        }
        KeysCommand::List { db } => {
            let accounts = db.open().await?.accounts;
            let names = accounts.ledger().accounts().await?;
            println!(
                "{:<4} {:<27} {:<5} {:<16} {:<12} {:<25} {:<25} status",
                "id", "key", "mode", "account", "name", "created", "last used"
            );
            for key in accounts.keys().list().await? {
                let account = names
                    .iter()
                    .find(|a| a.id == key.account)
                    .map_or("?", |a| a.name.as_str());
                let status = key
                    .revoked_at
                    .map_or("active".to_owned(), |at| format!("revoked {at}"));
                let last_used = key
                    .last_used_at
                    .map_or("never".to_owned(), |at| at.to_string());
                println!(
                    "{:<4} {:<27} {:<5} {:<16} {:<12} {:<25} {:<25} {status}",
                    key.id.0,
                    key.masked(),
                    key.mode().label(),
                    account,
                    key.name.as_deref().unwrap_or("-"),
                    key.created_at.to_string(),
                    last_used
                );
            }
        }
        KeysCommand::Revoke { db, key } => {
            let accounts = db.open().await?.accounts;
            let found = accounts
                .keys()
                .find(&key)
                .await
                .map_err(|error| anyhow::anyhow!("{error} (see `company-data keys list`)"))?;
            if accounts.keys().revoke(found.id).await? {
                println!(
                    "Revoked key {}. Running servers stop accepting it within seconds.",
                    found.id
                );
            } else {
                bail!(
                    "key {} is already revoked; see `company-data keys list`",
                    found.id
                );
            }
        }
    }
    Ok(())
}
