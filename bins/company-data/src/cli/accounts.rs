//! `company-data accounts create|list`: dashboard sign-ins; `accounts quotas`: what one account may hold.

use anyhow::{Context, bail};
use clap::Subcommand;
use credit_ledger::{Credits, QuotaOverrides, Quotas};

use super::DbArg;

#[derive(Subcommand)]
pub(crate) enum AccountsCommand {
    /// Create a dashboard sign-in. The password is read from standard input (typed twice without echo on a
    /// terminal, or the first line of a pipe), never from the command line, where other users could see it.
    Create {
        #[command(flatten)]
        db: DbArg,
        /// The email to sign in with.
        #[arg(long)]
        email: String,
        /// The billing account it manages (created if missing); defaults to one named by the email.
        #[arg(long)]
        account: Option<String>,
        /// Make it an admin: sees every account, grants credits, invites people.
        #[arg(long)]
        admin: bool,
        /// Credits to grant the account now (e.g. 100).
        #[arg(long)]
        credits: Option<Credits>,
    },
    /// List dashboard sign-ins.
    List {
        #[command(flatten)]
        db: DbArg,
    },
    /// Show or set an account's own quotas (what it may hold at once). Each one given replaces the account's;
    /// one not given stays as it was; `--clear` drops them all first, so the deployment's (`serve --quota-*`)
    /// apply again. Test-mode keys' jobs, watches and endpoints count apart, under the same quotas.
    Quotas {
        #[command(flatten)]
        db: DbArg,
        /// The account.
        #[arg(long)]
        account: String,
        /// Bulk jobs not yet ended (queued, running, paused) at once.
        #[arg(long)]
        open_jobs: Option<u32>,
        /// URLs of its open jobs not yet answered, all together.
        #[arg(long)]
        queued_urls: Option<u64>,
        /// Watches.
        #[arg(long)]
        watches: Option<u32>,
        /// Webhook endpoints.
        #[arg(long)]
        endpoints: Option<u32>,
        /// API keys not revoked (live and test together).
        #[arg(long)]
        keys: Option<u32>,
        /// Megabytes of answers kept for `Idempotency-Key` retries (each kept 24 hours).
        #[arg(long)]
        idempotency_mb: Option<u32>,
        /// Drop the account's own quotas before setting any given here.
        #[arg(long)]
        clear: bool,
    },
}

/// The new password: typed twice without echo on a terminal, else the first line of standard input.
fn read_new_password() -> anyhow::Result<String> {
    use std::io::{BufRead, IsTerminal};
    if std::io::stdin().is_terminal() {
        let first = rpassword::prompt_password("Password: ")?;
        let second = rpassword::prompt_password("The same password again: ")?;
        if first != second {
            bail!("the two passwords differ; run the command again");
        }
        return Ok(first);
    }
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .context("reading the password from standard input")?;
    let password = line.strip_suffix('\n').unwrap_or(&line);
    Ok(password.strip_suffix('\r').unwrap_or(password).to_owned())
}

pub(crate) async fn run(command: AccountsCommand) -> anyhow::Result<()> {
    match command {
        AccountsCommand::Create {
            db,
            email,
            account,
            admin,
            credits,
        } => {
            // The email is checked before the password is asked for.
            let email = dashboard_auth::normalize_email(&email)?;
            let password = read_new_password()?;
            let accounts = db.open().await?.accounts;
            let (user, account) = accounts
                .create_sign_in(&email, &password, account.as_deref(), admin, credits)
                .await?;
            println!(
                "Created {}{} for account `{}`. Sign in at http://<server>/dashboard.",
                if user.admin { "admin " } else { "" },
                user.email,
                account.name
            );
        }
        AccountsCommand::Quotas {
            db,
            account,
            open_jobs,
            queued_urls,
            watches,
            endpoints,
            keys,
            idempotency_mb,
            clear,
        } => {
            let accounts = db.open().await?.accounts;
            let found = super::credits::named(accounts.ledger().as_ref(), &account).await?;
            let changes = QuotaOverrides {
                open_jobs,
                queued_urls,
                watches,
                endpoints,
                keys,
                idempotency_mb,
            };
            if clear || changes != QuotaOverrides::default() {
                accounts.set_quotas(found.id, changes, clear).await?;
            }
            let own = accounts
                .ledger()
                .account(found.id)
                .await?
                .map(|a| a.quotas)
                .unwrap_or_default();
            let deployment = Quotas::default();
            let shown = own.over(&deployment);
            let whose = |set: bool| {
                if set {
                    "the account's own"
                } else {
                    "the default"
                }
            };
            println!("Quotas of `{account}`:");
            for (name, value, set) in [
                (
                    "open jobs",
                    u64::from(shown.open_jobs),
                    own.open_jobs.is_some(),
                ),
                ("queued URLs", shown.queued_urls, own.queued_urls.is_some()),
                ("watches", u64::from(shown.watches), own.watches.is_some()),
                (
                    "webhook endpoints",
                    u64::from(shown.endpoints),
                    own.endpoints.is_some(),
                ),
                ("keys", u64::from(shown.keys), own.keys.is_some()),
                (
                    "idempotency MB",
                    u64::from(shown.idempotency_mb),
                    own.idempotency_mb.is_some(),
                ),
            ] {
                println!("  {name:<18} {value:>9}  ({})", whose(set));
            }
            println!(
                "A server started with `serve --quota-*` applies its own in place of the defaults shown here."
            );
        }
        AccountsCommand::List { db } => {
            let accounts = db.open().await?.accounts;
            let names = accounts.ledger().accounts().await?;
            println!("{:<32} {:<24} {:<6} created", "email", "account", "admin");
            for user in accounts.users().list().await? {
                let account = names
                    .iter()
                    .find(|a| a.id == user.account)
                    .map_or("?", |a| a.name.as_str());
                println!(
                    "{:<32} {:<24} {:<6} {}",
                    user.email,
                    account,
                    if user.admin { "yes" } else { "no" },
                    user.created_at
                );
            }
        }
    }
    Ok(())
}
