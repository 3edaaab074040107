//! Credentials inside an MCP server's URL. Codex takes the URL only from its configuration, so
//! the URL goes on its command line, where every local user can read it: whatever secret it
//! carries must come out first.
//!
//! - `https://user:password@host/…`: the user and password become an `Authorization: Basic`
//!   header (which travels through Codex's environment like any header) and leave the URL.
//! - `?token=…` and other secret-looking query parameters cannot travel any other way, so such a
//!   URL is refused with a message saying to send the secret as a header.

use base64::Engine as _;

/// Query parameter names (lowercase) that carry secrets, or parts of them.
const SECRET_PARAMS: [&str; 9] = [
    "token",
    "secret",
    "password",
    "passwd",
    "pwd",
    "key",
    "auth",
    "signature",
    "credential",
];

/// The URL without its userinfo, and the `Authorization` value the userinfo stood for.
pub(crate) fn split(url: &str) -> Result<(String, Option<String>), String> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Ok((url.to_owned(), None));
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    if let Some(name) = secret_param(tail) {
        return Err(format!(
            "its URL carries a credential in the query parameter `{name}`, which acplb would have \
             to put on Codex's command line, where any local user can read it; send it as a \
             header instead (for example `Authorization: Bearer …`)"
        ));
    }
    let Some((userinfo, host)) = authority.rsplit_once('@') else {
        return Ok((url.to_owned(), None));
    };
    let credentials = percent_decode(userinfo);
    let basic = base64::engine::general_purpose::STANDARD.encode(credentials);
    Ok((format!("{scheme}://{host}{tail}"), Some(format!("Basic {basic}"))))
}

/// The first query parameter whose name looks like it holds a secret.
fn secret_param(tail: &str) -> Option<String> {
    let query = tail.split_once('?')?.1;
    let query = query.split_once('#').map_or(query, |(q, _)| q);
    query
        .split('&')
        .map(|pair| pair.split_once('=').map_or(pair, |(k, _)| k))
        .find(|name| {
            let lower = name.to_ascii_lowercase();
            SECRET_PARAMS.iter().any(|s| lower.contains(s))
        })
        .map(str::to_owned)
}

/// `%XX` escapes in userinfo, decoded; anything malformed is kept as it is.
fn percent_decode(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_becomes_a_basic_header_and_leaves_the_url() {
        let (url, auth) = split("https://alice:s%40cret@mcp.example.com:8443/v1?x=1").unwrap();
        assert_eq!(url, "https://mcp.example.com:8443/v1?x=1");
        // base64("alice:s@cret")
        assert_eq!(auth.as_deref(), Some("Basic YWxpY2U6c0BjcmV0"));
    }

    #[test]
    fn plain_urls_pass_unchanged() {
        for url in [
            "https://mcp.example.com/v1",
            "http://127.0.0.1:9000/mcp?session=abc&mode=fast",
            "https://example.com/path@with-at",
        ] {
            assert_eq!(split(url).unwrap(), (url.to_owned(), None), "{url}");
        }
    }

    #[test]
    fn secret_query_parameters_are_refused_with_advice() {
        for url in [
            "https://mcp.example.com/v1?token=abc",
            "https://mcp.example.com/v1?x=1&api_key=abc#frag",
            "https://mcp.example.com/?Access_Token=abc",
        ] {
            let e = split(url).unwrap_err();
            assert!(e.contains("send it as a header instead"), "{e}");
            assert!(!e.contains("abc"), "the secret is not repeated: {e}");
        }
    }
}
