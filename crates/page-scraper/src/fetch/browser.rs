//! What a route's requests look like: one browser, opening a page it found on a search engine. Every header a
//! browser sends with a navigation is sent, and they agree with the route's `User-Agent`: a Chromium browser
//! sends its client hints (`Sec-CH-UA`, `-Mobile`, `-Platform`) naming the same version and platform as its
//! user agent, Firefox and Safari send none (they have none). A client whose hints disagree with its user agent
//! is walled more often.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// How a route arrives at a page ([`crate::FetcherSettings::arrival`]): from where, and in which languages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// The page the browser comes from (`Referer`, with `Sec-Fetch-Site: cross-site`); `None` for a typed
    /// address or a bookmark (no `Referer`, `Sec-Fetch-Site: none`). Default `https://www.google.com/`: a
    /// search result, the arrival the network walls least.
    pub referer: Option<String>,
    /// `Accept-Language`. Default `en-US,en;q=0.9`.
    pub accept_language: String,
}

impl Default for Arrival {
    fn default() -> Self {
        Self {
            referer: Some("https://www.google.com/".to_owned()),
            accept_language: "en-US,en;q=0.9".to_owned(),
        }
    }
}

/// The headers of one route's page requests: `user_agent` arriving as `arrival` says, in the order a browser
/// sends them. A header whose value is not valid (a user agent with a control character) is left out.
pub(crate) fn navigation_headers(user_agent: &str, arrival: &Arrival) -> HeaderMap {
    let mut headers = HeaderMap::new();
    let mut put = |name: &'static str, value: &str| {
        if let Ok(value) = HeaderValue::from_str(value) {
            headers.insert(HeaderName::from_static(name), value);
        }
    };
    if let Some(hints) = ClientHints::of(user_agent) {
        put("sec-ch-ua", &hints.brands());
        put("sec-ch-ua-mobile", if hints.mobile { "?1" } else { "?0" });
        put("sec-ch-ua-platform", &format!("\"{}\"", hints.platform));
    }
    put("upgrade-insecure-requests", "1");
    put("user-agent", user_agent);
    put(
        "accept",
        "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8",
    );
    match &arrival.referer {
        Some(referer) => {
            put("sec-fetch-site", "cross-site");
            put("referer", referer);
        }
        None => put("sec-fetch-site", "none"),
    }
    put("sec-fetch-mode", "navigate");
    put("sec-fetch-user", "?1");
    put("sec-fetch-dest", "document");
    put("accept-language", &arrival.accept_language);
    headers
}

/// The client hints a Chromium browser sends, read from its user agent.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ClientHints {
    /// The browser's brand as `Sec-CH-UA` names it: `Google Chrome` or `Microsoft Edge`.
    brand: &'static str,
    /// Its major version, the same for the brand and for Chromium.
    major: String,
    /// `Windows`, `macOS`, `Linux`, `Android` or `Chrome OS`.
    platform: &'static str,
    mobile: bool,
}

impl ClientHints {
    /// The hints of a Chromium-based `user_agent` (`Chrome/130.0.0.0`, `Edg/130…`); `None` for Firefox, Safari
    /// and anything else, which send no client hints.
    fn of(user_agent: &str) -> Option<Self> {
        let major = |token: &str| {
            let start = user_agent.find(token)? + token.len();
            let digits: String = user_agent[start..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            (!digits.is_empty()).then_some(digits)
        };
        let chrome = major("Chrome/")?;
        let (brand, major) = match major("Edg/") {
            Some(edge) => ("Microsoft Edge", edge),
            None => ("Google Chrome", chrome),
        };
        let platform = if user_agent.contains("Android") {
            "Android"
        } else if user_agent.contains("Windows") {
            "Windows"
        } else if user_agent.contains("Macintosh") || user_agent.contains("Mac OS X") {
            "macOS"
        } else if user_agent.contains("CrOS") {
            "Chrome OS"
        } else {
            "Linux"
        };
        Some(Self {
            brand,
            major,
            platform,
            mobile: user_agent.contains("Mobile"),
        })
    }

    /// `Sec-CH-UA`: the brand, Chromium and a GREASE brand, each with the major version.
    fn brands(&self) -> String {
        format!(
            "\"Chromium\";v=\"{major}\", \"{brand}\";v=\"{major}\", \"Not?A_Brand\";v=\"99\"",
            major = self.major,
            brand = self.brand
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHROME_WINDOWS: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36";
    const FIREFOX_LINUX: &str =
        "Mozilla/5.0 (X11; Linux x86_64; rv:131.0) Gecko/20100101 Firefox/131.0";
    const EDGE_MAC: &str = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.86";
    const CHROME_ANDROID: &str = "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Mobile Safari/537.36";

    fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
        headers.get(name).and_then(|v| v.to_str().ok())
    }

    #[test]
    fn chromium_hints_agree_with_the_user_agent() {
        let headers = navigation_headers(CHROME_WINDOWS, &Arrival::default());
        assert_eq!(
            header(&headers, "sec-ch-ua"),
            Some(r#""Chromium";v="130", "Google Chrome";v="130", "Not?A_Brand";v="99""#)
        );
        assert_eq!(header(&headers, "sec-ch-ua-platform"), Some(r#""Windows""#));
        assert_eq!(header(&headers, "sec-ch-ua-mobile"), Some("?0"));
        let edge = navigation_headers(EDGE_MAC, &Arrival::default());
        assert!(
            header(&edge, "sec-ch-ua").is_some_and(|v| v.contains(r#""Microsoft Edge";v="131""#))
        );
        assert_eq!(header(&edge, "sec-ch-ua-platform"), Some(r#""macOS""#));
        let android = navigation_headers(CHROME_ANDROID, &Arrival::default());
        assert_eq!(
            (
                header(&android, "sec-ch-ua-platform"),
                header(&android, "sec-ch-ua-mobile")
            ),
            (Some(r#""Android""#), Some("?1"))
        );
    }

    #[test]
    fn browsers_without_client_hints_send_none() {
        let headers = navigation_headers(FIREFOX_LINUX, &Arrival::default());
        assert!(
            headers
                .keys()
                .all(|name| !name.as_str().starts_with("sec-ch-"))
        );
        assert_eq!(header(&headers, "user-agent"), Some(FIREFOX_LINUX));
        assert_eq!(header(&headers, "sec-fetch-mode"), Some("navigate"));
    }

    #[test]
    fn the_arrival_sets_the_referer_and_the_fetch_site() {
        let from_search = navigation_headers(CHROME_WINDOWS, &Arrival::default());
        assert_eq!(
            (
                header(&from_search, "referer"),
                header(&from_search, "sec-fetch-site")
            ),
            (Some("https://www.google.com/"), Some("cross-site"))
        );
        let typed = navigation_headers(
            CHROME_WINDOWS,
            &Arrival {
                referer: None,
                accept_language: "de-DE,de;q=0.9".to_owned(),
            },
        );
        assert_eq!(header(&typed, "referer"), None);
        assert_eq!(header(&typed, "sec-fetch-site"), Some("none"));
        assert_eq!(header(&typed, "accept-language"), Some("de-DE,de;q=0.9"));
    }
}
