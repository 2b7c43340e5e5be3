//! `company-data credits grant|show`.

use anyhow::Context;
use clap::Subcommand;
use credit_ledger::{Credits, Ledger, Tenant};

use super::DbArg;

#[derive(Subcommand)]
pub(crate) enum CreditsCommand {
    /// Add credits to an account.
    Grant {
        #[command(flatten)]
        db: DbArg,
        /// The account.
        #[arg(long)]
        account: String,
        /// Credits to add (e.g. 100 or 0.5).
        amount: Credits,
    },
    /// Show balances (of one account, or all) and the newest ledger rows.
    Show {
        #[command(flatten)]
        db: DbArg,
        /// Only this account.
        #[arg(long)]
        account: Option<String>,
    },
}

/// The account called `name`, or an error that says how to make it.
pub(crate) async fn named(
    ledger: &dyn Ledger,
    name: &str,
) -> anyhow::Result<credit_ledger::Account> {
    ledger.account_by_name(name).await?.with_context(|| {
        format!("no account `{name}`; create it with `company-data keys create --account {name}`")
    })
}

pub(crate) async fn run(command: CreditsCommand) -> anyhow::Result<()> {
    match command {
        CreditsCommand::Grant {
            db,
            account,
            amount,
        } => {
            let accounts = db.open().await?.accounts;
            let found = named(accounts.ledger().as_ref(), &account).await?;
            let balance = accounts
                .grant(found.id, amount, "granted from the command line")
                .await?;
            println!("Granted {amount} credits to `{account}`; balance {balance}.");
        }
        CreditsCommand::Show { db, account } => {
            let accounts = db.open().await?.accounts;
            let ledger = accounts.ledger().as_ref();
            let shown = match account {
                Some(name) => vec![named(ledger, &name).await?],
                None => ledger.accounts().await?,
            };
            for account in shown {
                println!("{}: {} credits", account.name, account.balance);
                for entry in ledger.entries(Tenant::live(account.id), None, 10).await? {
                    let what = match (&entry.charge, &entry.note) {
                        (Some(charge), _) => format!(
                            "{} request, {} URLs, {} returned",
                            if charge.live { "live" } else { "stored" },
                            charge.urls_requested,
                            charge.urls_returned
                        ),
                        (None, note) => format!("grant: {}", note.as_deref().unwrap_or("")),
                    };
                    println!(
                        "  {}  {:>8}  balance {:>8}  {what}",
                        entry.at,
                        entry.delta.to_string(),
                        entry.balance_after.to_string()
                    );
                }
            }
        }
    }
    Ok(())
}
