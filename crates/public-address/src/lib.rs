//! The public-address guard: requests to an address someone else named (a shortened link on a page, a watch's
//! webhook, later a company's own site) must not reach the server's own network — loopback, private ranges, the
//! cloud metadata service at 169.254.169.254 — whatever the name resolves to (SSRF).
//!
//! [`public_only_client`] is a reqwest client whose resolver keeps only public addresses ([`is_public_address`])
//! and that follows no redirect and uses no proxy; [`check_literal_host`] checks a URL whose host is a literal
//! address (not resolved); [`private_address_refused`] tells a refusal of the guard from other failures.
//!
//! Not here: what to request, retries, parsing. The fetcher's link resolver and the watches' webhook deliveries
//! use it.
#![deny(missing_docs)]

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use url::Url;

/// An HTTP client for requests to an address someone else named (a shortened link, a webhook): it follows no
/// redirect, uses no proxy, gives up after `timeout`, and resolves names only to public addresses
/// ([`is_public_address`]) unless `allow_private`. Literal addresses in a URL are not resolved: check them with
/// [`check_literal_host`] before sending.
///
/// # Errors
/// When the client cannot be built (TLS set-up).
pub fn public_only_client(
    allow_private: bool,
    timeout: Duration,
) -> Result<reqwest::Client, reqwest::Error> {
    public_only_client_resolving(allow_private, Vec::new(), timeout)
}

/// [`public_only_client`] that resolves the names of `fixed` to its addresses instead of asking the system (a
/// test's loopback servers under real-looking names); the same guard applies to them.
///
/// # Errors
/// When the client cannot be built (TLS set-up).
pub fn public_only_client_resolving(
    allow_private: bool,
    fixed: Vec<(String, SocketAddr)>,
    timeout: Duration,
) -> Result<reqwest::Client, reqwest::Error> {
    guarded_builder(allow_private, fixed)
        .timeout(timeout)
        .build()
}

/// The builder [`public_only_client_resolving`] starts from (no redirect, no proxy, the guarded resolver), for
/// a caller that sets more (its user agent, its time-outs). A proxy added to it resolves the names it is asked
/// for itself, so the guard then applies to the proxy's own host only: add one only where the proxy is the
/// operator's egress policy (the resolver's `--site-proxy`), and check literal addresses with
/// [`check_literal_host`] either way.
pub fn guarded_builder(
    allow_private: bool,
    fixed: Vec<(String, SocketAddr)>,
) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .dns_resolver(Arc::new(PublicOnly {
            allow_private,
            fixed,
        }))
}

/// `Err` with the address when `url`'s host is a literal IP address that is not public and `allow_private` is
/// false (a name is checked when [`public_only_client`] resolves it).
pub fn check_literal_host(url: &Url, allow_private: bool) -> Result<(), String> {
    match url.host() {
        Some(url::Host::Ipv4(ip)) if !allow_private && !is_public_address(IpAddr::V4(ip)) => {
            Err(ip.to_string())
        }
        Some(url::Host::Ipv6(ip)) if !allow_private && !is_public_address(IpAddr::V6(ip)) => {
            Err(ip.to_string())
        }
        _ => Ok(()),
    }
}

/// The host whose addresses [`public_only_client`] refused, when that is why `error` happened.
pub fn private_address_refused(error: &reqwest::Error) -> Option<String> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = source {
        if let Some(refused) = current.downcast_ref::<PrivateAddressError>() {
            return Some(refused.0.clone());
        }
        source = current.source();
    }
    None
}

/// The DNS guard's refusal.
#[derive(Debug, thiserror::Error)]
#[error("{0} resolves only to addresses that are not public")]
struct PrivateAddressError(String);

/// Resolves names through the system (or the fixed table), keeping only public addresses unless allowed.
#[derive(Debug)]
struct PublicOnly {
    allow_private: bool,
    fixed: Vec<(String, SocketAddr)>,
}

impl reqwest::dns::Resolve for PublicOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_ascii_lowercase();
        let fixed: Vec<SocketAddr> = self
            .fixed
            .iter()
            .filter(|(h, _)| h.eq_ignore_ascii_case(&host))
            .map(|(_, address)| *address)
            .collect();
        let allow_private = self.allow_private;
        Box::pin(async move {
            let found: Vec<SocketAddr> = if fixed.is_empty() {
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect()
            } else {
                fixed
            };
            let allowed: Vec<SocketAddr> = found
                .into_iter()
                .filter(|address| allow_private || is_public_address(address.ip()))
                .collect();
            if allowed.is_empty() {
                return Err(
                    Box::new(PrivateAddressError(host)) as Box<dyn std::error::Error + Send + Sync>
                );
            }
            Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// Whether an address is on the public internet: not loopback, private (RFC 1918, unique-local), link-local
/// (which holds the cloud metadata service, 169.254.169.254), shared (100.64/10), unspecified, multicast,
/// broadcast, reserved for documentation or benchmarking (198.18/15), IETF protocol assignments (192.0.0/24),
/// the 6to4 relay (192.88.99/24) or reserved (240/4).
///
/// An IPv6 address that carries an IPv4 address is judged by that IPv4 address, since a translator or a
/// relay on the way may deliver it there: IPv4-mapped (`::ffff:0:0/96`), NAT64 (`64:ff9b::/96`, RFC 6052) and
/// 6to4 (`2002::/16`, RFC 3056). Prefixes that cannot be judged that way are not public: IPv4-compatible
/// (`::/96`, deprecated by RFC 4291), local-use NAT64 (`64:ff9b:1::/48`, RFC 8215), Teredo (`2001::/32`, whose
/// IPv4 server is obfuscated) and discard-only (`100::/64`).
pub fn is_public_address(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_multicast()
                || v4.is_broadcast()
                || v4.is_documentation()
                || (a == 100 && (64..128).contains(&b))
                || (a == 192 && b == 0 && c == 0)
                || (a == 192 && b == 88 && c == 99)
                || (a == 198 && (b == 18 || b == 19))
                || a == 0
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = embedded_ipv4(v6) {
                return is_public_address(IpAddr::V4(v4));
            }
            let [first, second, ..] = v6.segments();
            let bits = u128::from(v6);
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || bits >> 32 == 0 // IPv4-compatible ::/96
                || (first == 0x0064 && second == 0xff9b) // NAT64, local use (64:ff9b:1::/48)
                || (first == 0x2001 && second == 0x0000) // Teredo
                || bits >> 64 == 0x0100_u128 << 48 // discard-only 100::/64
                || (first & 0xfe00) == 0xfc00 // unique local
                || (first & 0xffc0) == 0xfe80 // link-local
                || first == 0x2001 && second == 0x0db8) // documentation
        }
    }
}

/// The IPv4 address an IPv6 address delivers to: IPv4-mapped, NAT64's well-known prefix `64:ff9b::/96`, or
/// 6to4's `2002:AABB:CCDD::/48`.
fn embedded_ipv4(v6: std::net::Ipv6Addr) -> Option<std::net::Ipv4Addr> {
    if let Some(v4) = v6.to_ipv4_mapped() {
        return Some(v4);
    }
    let bits = u128::from(v6);
    let low32 = (bits & u128::from(u32::MAX)) as u32;
    match v6.segments() {
        [0x0064, 0xff9b, 0, 0, 0, 0, _, _] => Some(low32.into()),
        [0x2002, high, low, ..] => Some(((u32::from(high) << 16) | u32::from(low)).into()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_addresses_are_public() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            // Ranges the guard missed before (issue 40): each reaches a private or reserved IPv4 address, or
            // cannot be judged.
            "64:ff9b::7f00:1",     // NAT64 of 127.0.0.1
            "64:ff9b::a9fe:a9fe",  // NAT64 of 169.254.169.254
            "64:ff9b:1::a00:1",    // local-use NAT64
            "2002:a00:1::1",       // 6to4 of 10.0.0.1
            "2002:7f00:1::",       // 6to4 of 127.0.0.1
            "::7f00:1",            // IPv4-compatible 127.0.0.1
            "::808:808",           // IPv4-compatible, deprecated whatever it holds
            "2001:0:4136:e378::1", // Teredo
            "100::1",              // discard-only
            "192.0.0.8",
            "192.88.99.1",
            "198.18.0.1",
            "198.19.255.254",
        ] {
            assert!(
                !is_public_address(private.parse().expect("an address")),
                "{private}"
            );
        }
        for public in [
            "8.8.8.8",
            "142.250.74.46",
            "2001:4860:4860::8888",
            "64:ff9b::808:808", // NAT64 of 8.8.8.8
            "2002:808:808::1",  // 6to4 of 8.8.8.8
            "198.20.0.1",
            "192.0.1.1",
        ] {
            assert!(
                is_public_address(public.parse().expect("an address")),
                "{public}"
            );
        }
    }
}
