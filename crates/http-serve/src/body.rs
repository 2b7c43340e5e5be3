use std::time::Duration;

use bytes::Bytes;
use http::header;
use http_body_util::BodyExt;

/// How much of an oversized body is read and discarded before refusing it.
const DRAIN_BYTES: usize = 1024 * 1024;

/// Why a request body was not read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BodyError {
    /// The body is larger than the limit (HTTP 413).
    #[error("the request body is larger than {limit} bytes")]
    TooLarge {
        /// The limit that was passed, in bytes.
        limit: usize,
    },
    /// The body did not arrive whole within the time-out (HTTP 408).
    #[error("the request body did not arrive within the time-out")]
    TimedOut,
    /// The connection broke off while the body was arriving (HTTP 400).
    #[error("the request body could not be read")]
    Unreadable,
}

/// Reads a request's body: at most `limit` bytes, whole within `timeout`.
///
/// A body over the limit is refused as it arrives, never buffered past the limit. It is read on and discarded
/// for up to 1 MiB more before the refusal (a lingering close): closing a socket with unread data makes the
/// kernel send a reset, which can destroy the refusal before the client reads it. A `Content-Length` beyond
/// that is refused at once. (This is why the loop is written here rather than with `http_body_util::Limited`,
/// which stops reading at the limit.)
///
/// # Errors
/// [`BodyError::TooLarge`], [`BodyError::TimedOut`], [`BodyError::Unreadable`].
pub async fn read_body<B>(
    request: http::Request<B>,
    limit: usize,
    timeout: Duration,
) -> Result<Bytes, BodyError>
where
    B: hyper::body::Body + Unpin,
{
    let (head, body) = request.into_parts();
    read_body_of(&head.headers, body, limit, timeout).await
}

/// [`read_body`] for a request already taken apart: its `headers` (for `Content-Length`) and its `body`, so a
/// caller that keeps the request's head needs no copy of it.
///
/// # Errors
/// As [`read_body`].
pub async fn read_body_of<B>(
    headers: &http::HeaderMap,
    mut body: B,
    limit: usize,
    timeout: Duration,
) -> Result<Bytes, BodyError>
where
    B: hyper::body::Body + Unpin,
{
    let too_large = BodyError::TooLarge { limit };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|length| length > (limit + DRAIN_BYTES) as u64) {
        return Err(too_large);
    }
    let read = async {
        let mut collected = Vec::new();
        let mut seen = 0usize;
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|_| BodyError::Unreadable)?;
            let Ok(mut data) = frame.into_data() else {
                continue;
            };
            let length = bytes::Buf::remaining(&data);
            let chunk = bytes::Buf::copy_to_bytes(&mut data, length);
            seen += chunk.len();
            if seen > limit + DRAIN_BYTES {
                break;
            }
            if seen <= limit {
                collected.extend_from_slice(&chunk);
            }
        }
        if seen > limit {
            Err(too_large)
        } else {
            Ok(Bytes::from(collected))
        }
    };
    tokio::time::timeout(timeout, read)
        .await
        .unwrap_or(Err(BodyError::TimedOut))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::{Full, StreamBody};

    fn request(body: &'static [u8]) -> http::Request<Full<Bytes>> {
        http::Request::new(Full::new(Bytes::from_static(body)))
    }

    #[tokio::test]
    async fn bodies_up_to_the_limit_are_read_whole() {
        let read = read_body(request(b"0123456789"), 10, Duration::from_secs(1)).await;
        assert_eq!(read, Ok(Bytes::from_static(b"0123456789")));
        let read = read_body(request(b"0123456789!"), 10, Duration::from_secs(1)).await;
        assert_eq!(read, Err(BodyError::TooLarge { limit: 10 }));
    }

    #[tokio::test]
    async fn a_declared_length_far_past_the_limit_is_refused_unread() {
        let mut too_long = request(b"");
        too_long
            .headers_mut()
            .insert(header::CONTENT_LENGTH, (10 + DRAIN_BYTES + 1).into());
        let read = read_body(too_long, 10, Duration::from_secs(1)).await;
        assert_eq!(read, Err(BodyError::TooLarge { limit: 10 }));
    }

    #[tokio::test]
    async fn a_body_that_stalls_times_out() {
        use futures::StreamExt;
        let first: Result<_, std::convert::Infallible> =
            Ok(hyper::body::Frame::data(Bytes::from_static(b"x")));
        let stalled = futures::stream::iter([first]).chain(futures::stream::pending());
        let request = http::Request::new(StreamBody::new(stalled));
        let read = read_body(request, 10, Duration::from_millis(50)).await;
        assert_eq!(read, Err(BodyError::TimedOut));
    }
}
