//! Webhook URLs: the rule every URL the service POSTs events to follows (a watch's `webhookUrl`, an endpoint's
//! `url`), as the OpenAPI document's pattern and as the check a body's marked string goes through.

/// The longest webhook URL, in bytes.
pub const MAX_WEBHOOK_URL_LEN: usize = 2048;

/// Whether a webhook may be sent over `scheme`: `https`, or `http` too where `allow_http` (local receivers).
/// Checked when a watch is made and again at each delivery (the server's setting may have changed since).
pub fn webhook_scheme_allowed(scheme: &str, allow_http: bool) -> bool {
    scheme == "https" || (allow_http && scheme == "http")
}

/// The rule a watch's `webhookUrl` follows, one regular expression: the OpenAPI document's `pattern` and what
/// [`WatchRequest::from_json`](crate::WatchRequest::from_json) accepts (with the length bound, [`MAX_WEBHOOK_URL_LEN`] characters). `https`
/// (and `http` when `allow_http`), a host name of letters, digits and single hyphens whose last label starts
/// with a letter, or a dotted IPv4 address; an optional port up to 65535; then a path of RFC 3986 path
/// characters, a query and a fragment without spaces or control characters. No user name or password.
pub fn webhook_url_pattern(allow_http: bool) -> String {
    let scheme = if allow_http { "https?" } else { "https" };
    let label = "[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*";
    let last = "[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*";
    let octet = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";
    let port =
        "(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4}))?";
    format!(
        "^{scheme}://(?:(?:{label}\\.)*{last}|{octet}(?:\\.{octet}){{3}}){port}\
         (?:/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*)?(?:\\?[^#\\x00-\\x20\\x7F]*)?(?:#[^\\x00-\\x20\\x7F]*)?$"
    )
}

/// Whether `text` follows [`webhook_url_pattern`]; the compiled patterns are kept.
fn webhook_url_admitted(text: &str, allow_http: bool) -> bool {
    static PATTERNS: std::sync::LazyLock<[Option<regex::Regex>; 2]> =
        std::sync::LazyLock::new(|| {
            [false, true].map(|allow_http| regex::Regex::new(&webhook_url_pattern(allow_http)).ok())
        });
    PATTERNS[usize::from(allow_http)]
        .as_ref()
        .is_some_and(|pattern| pattern.is_match(text.strip_suffix('\n').unwrap_or(text)))
}

/// Why `text`, sent as the webhook URL `member` (`webhookUrl` of a watch, `url` of an endpoint), is refused
/// under [`webhook_url_pattern`]'s rule, if it is: the problem's reason and fix.
pub(crate) fn webhook_refusal(
    member: &str,
    text: &str,
    allow_http: bool,
) -> Option<(String, String)> {
    let reason = match url::Url::parse(text) {
        Err(error) => format!("`{member}` is not an absolute URL ({error})"),
        Ok(url) if !webhook_scheme_allowed(url.scheme(), allow_http) => {
            format!(
                "`{member}` uses `{}`; webhooks are sent over https only",
                url.scheme()
            )
        }
        Ok(url) if url.host_str().is_none_or(str::is_empty) => format!("`{member}` has no host"),
        Ok(url) if !url.username().is_empty() || url.password().is_some() => format!(
            "`{member}` carries a user name or password; put credentials in the path or verify the \
             signature instead"
        ),
        Ok(_) if !webhook_url_admitted(text, allow_http) => format!(
            "`{member}` has characters a webhook URL may not (spaces or control characters, a host that is \
             not a name or an IPv4 address, a port above 65535)"
        ),
        Ok(_) => return None,
    };
    Some((
        reason,
        format!("send `{member}`: an https URL, e.g. \"https://example.com/hooks/company\""),
    ))
}
