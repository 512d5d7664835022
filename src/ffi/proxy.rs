//! The proxy settings of `mcpc_options_t`.

use std::ffi::c_char;

use super::cstr::opt_str_in;
use super::options::{mcpc_options_t, with_options};
use crate::error::mcpc_status_t;
use crate::error::{Error, Status};
use crate::transport::proxy::parse_proxy;

/// Chooses the HTTP proxy, overriding the environment: a URL (`http://HOST:PORT`,
/// `https://HOST:PORT`, or `HOST:PORT` meaning `http://`; the port defaults to 1080
/// for `http://` and 443 for `https://`; credentials in the URL are sent with Basic
/// authentication) that every HTTP endpoint outside mcpc_options_set_no_proxy's list
/// is reached through, loopback ones too; "none" or "" for no proxy at all; NULL
/// (the default) to follow the environment like curl: `https_proxy` for `https://`
/// endpoints, `http_proxy` for `http://` ones, then `all_proxy`, each also upper
/// case, with `no_proxy`; a loopback endpoint never goes through a proxy from the
/// environment. An `https://` endpoint goes through a `CONNECT` tunnel with TLS end
/// to end to it; an `http://` one is asked in absolute form. The proxy's
/// credentials never go to the endpoint. Authorization servers are reached the same
/// way. The URL is checked here; the environment's when connecting.
/// Errors: MCPC_ERR_INVALID_ARG (NULL options, not a proxy URL),
/// MCPC_ERR_NOT_SUPPORTED (a scheme other than http and https, such as socks5),
/// MCPC_ERR_INVALID_UTF8.
/// Threads: the thread that owns `opts`.
///
/// # Safety
/// `opts` is NULL or a live options object; `proxy` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_proxy(opts: *mut mcpc_options_t, proxy: *const c_char) -> mcpc_status_t {
    with_options("mcpc_options_set_proxy", opts, |o| {
        // SAFETY: per the contract.
        let proxy = unsafe { opt_str_in(proxy, "proxy") }?;
        o.proxy.explicit = match proxy.map(str::trim) {
            None => None,
            Some("") | Some("none") => Some(None),
            Some(url) => {
                parse_proxy(url, None, "the proxy option")?;
                Some(Some(url.to_string()))
            }
        };
        Ok(())
    })
}

/// The hosts that are reached directly, not through the proxy: a list in curl's
/// `NO_PROXY` syntax (host names, which match their subdomains too, with or without
/// a leading dot; IP addresses; CIDR ranges such as 10.0.0.0/8; `*` for every host),
/// separated by commas or spaces. It replaces the environment's `no_proxy`. NULL
/// goes back to the environment's.
/// Errors: MCPC_ERR_INVALID_ARG (NULL options), MCPC_ERR_INVALID_UTF8.
/// Threads: the thread that owns `opts`.
///
/// # Safety
/// `opts` is NULL or a live options object; `list` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_no_proxy(opts: *mut mcpc_options_t, list: *const c_char) -> mcpc_status_t {
    with_options("mcpc_options_set_no_proxy", opts, |o| {
        // SAFETY: per the contract.
        o.proxy.no_proxy = unsafe { opt_str_in(list, "list") }?.map(str::to_string);
        Ok(())
    })
}

/// The user name and password for the proxy (Basic authentication), overriding
/// any in the proxy's URL, whichever proxy is chosen. NULL `user` clears them.
/// They are sent only to the proxy, never to the endpoint, and never appear in
/// messages.
/// Errors: MCPC_ERR_INVALID_ARG (NULL options, a user name holding ':', control
/// characters), MCPC_ERR_INVALID_UTF8.
/// Threads: the thread that owns `opts`.
///
/// # Safety
/// `opts` is NULL or a live options object; `user` and `password` are NULL or
/// NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_proxy_credentials(
    opts: *mut mcpc_options_t,
    user: *const c_char,
    password: *const c_char,
) -> mcpc_status_t {
    with_options("mcpc_options_set_proxy_credentials", opts, |o| {
        // SAFETY: per the contract.
        let (user, password) = unsafe { (opt_str_in(user, "user")?, opt_str_in(password, "password")?) };
        let Some(user) = user else {
            o.proxy.credentials = None;
            return Ok(());
        };
        let password = password.unwrap_or_default();
        if user.contains(':') || user.chars().chain(password.chars()).any(char::is_control) {
            return Err(Error::new(
                Status::MCPC_ERR_INVALID_ARG,
                "proxy credentials: the user holds ':' or either holds a control character",
            ));
        }
        o.proxy.credentials = Some(format!("{user}:{password}"));
        Ok(())
    })
}
