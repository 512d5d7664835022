//! A stdio server's life through the C ABI: how long it has to exit when the
//! client closes, and whether it is started again when it dies.

use super::options::{mcpc_options_t, positive_ms, with_options};
use crate::error::mcpc_status_t;

/// Sets how long a stdio server has to exit after its stdin is closed
/// (`close_grace_ms`) and then after SIGTERM (`term_grace_ms`) before SIGKILL.
/// Errors: MCPC_ERR_INVALID_ARG (NULL, or a value not positive).
///
/// # Safety
/// `opts` is NULL or a live options object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_close_grace_ms(
    opts: *mut mcpc_options_t,
    close_grace_ms: i64,
    term_grace_ms: i64,
) -> mcpc_status_t {
    with_options("mcpc_options_set_close_grace_ms", opts, |o| {
        o.set_close_grace(
            positive_ms(close_grace_ms, "close_grace_ms")?,
            positive_ms(term_grace_ms, "term_grace_ms")?,
        )?;
        Ok(())
    })
}

/// Starts a stdio server again when it exits or its connection fails (off by
/// default; stdio only): at most `max_restarts` times in the client's life, the
/// first after `backoff_ms`, each next one after twice the wait before it (at most
/// 30 s). Requests in flight when the server died fail with MCPC_ERR_SERVER_EXITED
/// (they may be sent again); the new process negotiates the protocol again;
/// blocking calls made meanwhile wait for it within their timeout, and asynchronous
/// ones fail with MCPC_ERR_SERVER_EXITED. The options' log level is asked for again;
/// a level set later (mcpc_client_set_log_level), resource subscriptions, kept lists
/// and the output schemas of the last listing are not carried over. Once the
/// restarts run out a failed connection stays failed (MCPC_ERR_TRANSPORT, with the
/// cause); once the client is closed, calls fail with MCPC_ERR_CLOSED.
/// `max_restarts` 0 turns it off.
/// Errors: MCPC_ERR_INVALID_ARG (NULL, or `backoff_ms` not positive).
///
/// # Safety
/// `opts` is NULL or a live options object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_restart(
    opts: *mut mcpc_options_t,
    max_restarts: u32,
    backoff_ms: i64,
) -> mcpc_status_t {
    with_options("mcpc_options_set_restart", opts, |o| {
        let backoff = positive_ms(backoff_ms, "backoff_ms")?;
        o.restart = (max_restarts > 0).then_some(crate::config::Restart {
            max: max_restarts,
            backoff,
        });
        Ok(())
    })
}
