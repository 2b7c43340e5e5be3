//! The dashboard's route table: every page's path, written once, who may open it, and what each method does
//! there (an [`http_serve::Route`]). Dispatch (`dispatch.rs`) and the 405's `Allow` are read from it; each
//! [`Op`]'s handler is one arm of dispatch's `match`.

use http::Method;

/// What one method of one page does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Stylesheet,
    Script,
    SignInForm,
    SignIn,
    InvitationForm,
    AcceptInvitation,
    Home,
    Keys,
    CreateKey,
    RevokeKeyForm,
    RevokeKey,
    Credits,
    CreditsCsv,
    Usage,
    TryIt,
    RunTryIt,
    Jobs,
    StartJob,
    JobResultsCsv,
    JobResultsNdjson,
    CancelJob,
    Watches,
    AddWatch,
    RemoveWatch,
    WebhookSecret,
    RotateWebhookSecret,
    History,
    Search,
    SearchCsv,
    Webhooks,
    AddEndpoint,
    EndpointDeliveries,
    PingEndpoint,
    DeleteEndpoint,
    LowBalanceThreshold,
    Admin,
    Grant,
    Invite,
    SetQuotas,
    RemoveUser,
    EndSessions,
    SetPassword,
    WithdrawInvitation,
    SignOut,
}

/// Who may open a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// Anyone (the assets, signing in, accepting an invitation).
    Anyone,
    /// A signed-in visitor; without a session a GET goes to the sign-in page and any other method is refused.
    Session,
}

/// One page of the dashboard: its [`Access`] is the tag.
pub(crate) type PageRoute = http_serve::Route<Op, Access>;

const GET: Method = Method::GET;
const POST: Method = Method::POST;

/// Every page.
pub(crate) const PAGES: &[PageRoute] = &[
    PageRoute {
        path: "/dashboard/assets/app.css",
        tag: Access::Anyone,
        methods: &[(GET, Op::Stylesheet)],
    },
    PageRoute {
        path: "/dashboard/assets/app.js",
        tag: Access::Anyone,
        methods: &[(GET, Op::Script)],
    },
    PageRoute {
        path: "/dashboard/sign-in",
        tag: Access::Anyone,
        methods: &[(GET, Op::SignInForm), (POST, Op::SignIn)],
    },
    PageRoute {
        path: "/dashboard/invitations/{id}",
        tag: Access::Anyone,
        methods: &[(GET, Op::InvitationForm), (POST, Op::AcceptInvitation)],
    },
    PageRoute {
        path: "/dashboard",
        tag: Access::Session,
        methods: &[(GET, Op::Home)],
    },
    PageRoute {
        path: "/dashboard/keys",
        tag: Access::Session,
        methods: &[(GET, Op::Keys), (POST, Op::CreateKey)],
    },
    PageRoute {
        path: "/dashboard/keys/{id}/revoke",
        tag: Access::Session,
        methods: &[(GET, Op::RevokeKeyForm), (POST, Op::RevokeKey)],
    },
    PageRoute {
        path: "/dashboard/credits",
        tag: Access::Session,
        methods: &[(GET, Op::Credits)],
    },
    PageRoute {
        path: "/dashboard/credits.csv",
        tag: Access::Session,
        methods: &[(GET, Op::CreditsCsv)],
    },
    PageRoute {
        path: "/dashboard/usage",
        tag: Access::Session,
        methods: &[(GET, Op::Usage)],
    },
    PageRoute {
        path: "/dashboard/try",
        tag: Access::Session,
        methods: &[(GET, Op::TryIt), (POST, Op::RunTryIt)],
    },
    PageRoute {
        path: "/dashboard/jobs",
        tag: Access::Session,
        methods: &[(GET, Op::Jobs), (POST, Op::StartJob)],
    },
    PageRoute {
        path: "/dashboard/jobs/{id}/results.csv",
        tag: Access::Session,
        methods: &[(GET, Op::JobResultsCsv)],
    },
    PageRoute {
        path: "/dashboard/jobs/{id}/results.ndjson",
        tag: Access::Session,
        methods: &[(GET, Op::JobResultsNdjson)],
    },
    PageRoute {
        path: "/dashboard/jobs/{id}/cancel",
        tag: Access::Session,
        methods: &[(POST, Op::CancelJob)],
    },
    PageRoute {
        path: "/dashboard/watches",
        tag: Access::Session,
        methods: &[(GET, Op::Watches), (POST, Op::AddWatch)],
    },
    PageRoute {
        path: "/dashboard/watches/{id}/remove",
        tag: Access::Session,
        methods: &[(POST, Op::RemoveWatch)],
    },
    PageRoute {
        path: "/dashboard/watches/secret",
        tag: Access::Session,
        methods: &[(POST, Op::WebhookSecret)],
    },
    PageRoute {
        path: "/dashboard/watches/secret/rotate",
        tag: Access::Session,
        methods: &[(POST, Op::RotateWebhookSecret)],
    },
    PageRoute {
        path: "/dashboard/webhooks",
        tag: Access::Session,
        methods: &[(GET, Op::Webhooks), (POST, Op::AddEndpoint)],
    },
    PageRoute {
        path: "/dashboard/webhooks/threshold",
        tag: Access::Session,
        methods: &[(POST, Op::LowBalanceThreshold)],
    },
    PageRoute {
        path: "/dashboard/webhooks/{id}",
        tag: Access::Session,
        methods: &[(GET, Op::EndpointDeliveries)],
    },
    PageRoute {
        path: "/dashboard/webhooks/{id}/ping",
        tag: Access::Session,
        methods: &[(POST, Op::PingEndpoint)],
    },
    PageRoute {
        path: "/dashboard/webhooks/{id}/delete",
        tag: Access::Session,
        methods: &[(POST, Op::DeleteEndpoint)],
    },
    PageRoute {
        path: "/dashboard/search",
        tag: Access::Session,
        methods: &[(GET, Op::Search)],
    },
    PageRoute {
        path: "/dashboard/search.csv",
        tag: Access::Session,
        methods: &[(GET, Op::SearchCsv)],
    },
    PageRoute {
        path: "/dashboard/history",
        tag: Access::Session,
        methods: &[(GET, Op::History)],
    },
    PageRoute {
        path: "/dashboard/admin",
        tag: Access::Session,
        methods: &[(GET, Op::Admin)],
    },
    PageRoute {
        path: "/dashboard/admin/grant",
        tag: Access::Session,
        methods: &[(POST, Op::Grant)],
    },
    PageRoute {
        path: "/dashboard/admin/invite",
        tag: Access::Session,
        methods: &[(POST, Op::Invite)],
    },
    PageRoute {
        path: "/dashboard/admin/quotas",
        tag: Access::Session,
        methods: &[(POST, Op::SetQuotas)],
    },
    PageRoute {
        path: "/dashboard/admin/users/{id}/remove",
        tag: Access::Session,
        methods: &[(POST, Op::RemoveUser)],
    },
    PageRoute {
        path: "/dashboard/admin/users/{id}/sign-out",
        tag: Access::Session,
        methods: &[(POST, Op::EndSessions)],
    },
    PageRoute {
        path: "/dashboard/admin/users/{id}/password",
        tag: Access::Session,
        methods: &[(POST, Op::SetPassword)],
    },
    PageRoute {
        path: "/dashboard/admin/invitations/withdraw",
        tag: Access::Session,
        methods: &[(POST, Op::WithdrawInvitation)],
    },
    PageRoute {
        path: "/dashboard/sign-out",
        tag: Access::Session,
        methods: &[(POST, Op::SignOut)],
    },
];

/// The page a path names and its `{id}`, from a router built from [`PAGES`] on first use; a trailing `/` is
/// forgiven (`/dashboard/` is the home page).
pub(crate) fn page(path: &str) -> Option<(&'static PageRoute, Option<String>)> {
    let found = TABLE.find(path)?;
    Some((found.route, found.param("id").map(str::to_owned)))
}

/// The router of [`PAGES`], built on the first lookup.
static TABLE: http_serve::RouteTable<Op, Access> = http_serve::RouteTable::new(PAGES);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_secret_path_prefix_is_a_public_page_whose_id_is_the_secret() {
        for prefix in crate::SECRET_PATH_PREFIXES {
            let page = PAGES
                .iter()
                .find(|page| page.path.strip_prefix(prefix) == Some("{id}"))
                .unwrap_or_else(|| panic!("no page {prefix}{{id}}"));
            assert_eq!(page.tag, Access::Anyone, "{prefix}");
        }
    }

    #[test]
    fn every_page_matches_itself_and_static_segments_win_over_ids() {
        TABLE.check().expect("matchit takes every path");
        for route in PAGES {
            let path = route.path.replace("{id}", "12");
            let (found, id) = page(&path).expect(route.path);
            assert_eq!(found.path, route.path);
            assert_eq!(id.is_some(), route.path.contains("{id}"));
        }
        assert_eq!(page("/dashboard/").map(|(p, _)| p.path), Some("/dashboard"));
        assert_eq!(
            page("/dashboard/watches/secret").map(|(p, _)| p.operation(&Method::POST)),
            Some(Some(Op::WebhookSecret))
        );
        for unknown in [
            "/dashboard/nope",
            "/dashboard/jobs/1/other",
            "/dashboardx",
            "/",
        ] {
            assert!(page(unknown).is_none(), "{unknown}");
        }
        let (keys, _) = page("/dashboard/keys").expect("keys");
        assert_eq!(keys.allow(), "GET, HEAD, POST");
        assert_eq!(keys.operation(&Method::HEAD), Some(Op::Keys));
    }
}
