//! A queried domain read as a website's registrable domain, and the page names guessed from it.

use page_url::{NetworkDomain, PageKind};

/// The registrable domain (public suffix plus one label, lower case) of what a caller sent as `domain`:
/// `stripe.com`, `WWW.Stripe.com.`, `https://www.stripe.com/about?x=1` → `stripe.com`.
///
/// # Errors
/// The reason and its fix, for an `invalid_domain` answer: not a host, an IP address, a host with no public
/// suffix and label (`localhost`, `co.uk`), or the network's own domain.
pub fn query_domain(text: &str, network: &NetworkDomain) -> Result<String, String> {
    let text = text.trim();
    let with_scheme = if text.contains("://") {
        text.to_owned()
    } else {
        format!("http://{text}")
    };
    let host = url::Url::parse(&with_scheme)
        .ok()
        .and_then(|url| match url.host() {
            Some(url::Host::Domain(host)) => Some(Ok(host.to_ascii_lowercase())),
            Some(url::Host::Ipv4(_) | url::Host::Ipv6(_)) => Some(Err(())),
            None => None,
        });
    let host = match host {
        None => {
            return Err(format!(
                "`{text}` is not a website domain; send the company's domain, e.g. stripe.com, or its site's URL"
            ));
        }
        Some(Err(())) => {
            return Err(format!(
                "`{text}` is an IP address, not a website domain; send the company's domain, e.g. stripe.com"
            ));
        }
        Some(Ok(host)) => host.trim_end_matches('.').to_owned(),
    };
    let registrable = psl::domain_str(&host).filter(|d| d.contains('.'));
    let Some(registrable) = registrable else {
        return Err(format!(
            "`{host}` has no registrable domain (a name under a public suffix such as .com or .co.uk); send the \
             company's own domain, e.g. stripe.com"
        ));
    };
    if registrable == network.as_str() {
        return Err(format!(
            "`{registrable}` is the network's own domain; send a page URL to POST /v1/network/company-data \
             instead, or the company's website domain here"
        ));
    }
    Ok(registrable.to_owned())
}

/// The pages a company on `domain` most likely has, best first: its label as a page name, then without its
/// hyphens (`acme-corp.co.uk` → `acme-corp`, `acmecorp`); school pages before company pages on academic
/// suffixes (`.edu`, `.ac.uk`, `.edu.au`), company pages only elsewhere.
pub fn domain_slugs(domain: &str) -> Vec<(PageKind, String)> {
    let suffix = psl::suffix_str(domain).unwrap_or_default();
    let label = domain
        .strip_suffix(suffix)
        .map_or(domain, |rest| rest.trim_end_matches('.'));
    if label.is_empty() || label.contains('.') {
        return Vec::new();
    }
    let mut names = vec![label.to_owned()];
    if label.contains('-') {
        names.push(label.replace('-', ""));
    }
    let academic = suffix == "edu" || suffix.starts_with("edu.") || suffix.starts_with("ac.");
    let kinds: &[PageKind] = if academic {
        &[PageKind::School, PageKind::Company]
    } else {
        &[PageKind::Company]
    };
    kinds
        .iter()
        .flat_map(|kind| names.iter().map(move |name| (*kind, name.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_read_as_registrable_domains() {
        let network = NetworkDomain::default();
        for (sent, domain) in [
            ("stripe.com", "stripe.com"),
            ("WWW.Stripe.com.", "stripe.com"),
            ("https://www.stripe.com/about?x=1", "stripe.com"),
            ("shop.acme.co.uk", "acme.co.uk"),
            ("acme.test", "acme.test"),
        ] {
            assert_eq!(
                query_domain(sent, &network).as_deref(),
                Ok(domain),
                "{sent}"
            );
        }
        for sent in [
            "127.0.0.1",
            "http://[::1]/",
            "localhost",
            "co.uk",
            "linkedin.com",
            "a b",
        ] {
            let refused = query_domain(sent, &network).expect_err(sent);
            assert!(refused.contains("send"), "{refused}");
        }
    }

    #[test]
    fn slugs_come_from_the_label() {
        assert_eq!(
            domain_slugs("acme-corp.co.uk"),
            [
                (PageKind::Company, "acme-corp".to_owned()),
                (PageKind::Company, "acmecorp".to_owned())
            ]
        );
        assert_eq!(
            domain_slugs("stanford.edu"),
            [
                (PageKind::School, "stanford".to_owned()),
                (PageKind::Company, "stanford".to_owned())
            ]
        );
    }
}
