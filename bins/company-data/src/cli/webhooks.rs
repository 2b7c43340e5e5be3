//! `company-data webhooks secret`.

use anyhow::Context;
use clap::Subcommand;

use super::DbArg;

#[derive(Subcommand)]
pub(crate) enum WebhooksCommand {
    /// Print the account's webhook secret (made now if it has none); with --rotate, replace it first. Receivers
    /// verify the `Company-Data-Signature` header of events with it. Its test mode has a secret of its own
    /// (--test), so a receiver of test events never holds the live one.
    Secret {
        #[command(flatten)]
        db: DbArg,
        /// The account.
        #[arg(long)]
        account: String,
        /// Make a new secret; events sent from now on are signed with it.
        #[arg(long)]
        rotate: bool,
        /// The secret of the account's test mode, which signs the events of its `cdk_test_…` keys' watches
        /// and endpoints.
        #[arg(long)]
        test: bool,
    },
}

pub(crate) async fn run(command: WebhooksCommand) -> anyhow::Result<()> {
    match command {
        WebhooksCommand::Secret {
            db,
            account,
            rotate,
            test,
        } => {
            let stores = db.open().await?;
            let found = stores
                .accounts
                .ledger()
                .account_by_name(&account)
                .await?
                .with_context(|| {
                    format!(
                        "no account `{account}`; create it with `company-data keys create --account {account}`"
                    )
                })?;
            let tenant = if test {
                credit_ledger::Tenant::test(found.id)
            } else {
                credit_ledger::Tenant::live(found.id)
            };
            let secret =
                account_webhooks::account_secret(stores.watches.as_ref(), tenant, rotate).await?;
            println!("{secret}");
        }
    }
    Ok(())
}
