//! `company-data accounts create|list`: dashboard sign-ins.

use anyhow::{Context, bail};
use clap::Subcommand;
use credit_ledger::Credits;

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
