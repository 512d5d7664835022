//! mcpc: a Model Context Protocol client with a C ABI.
//!
//! The safe core ([`client`], [`transport`], [`protocol`]) runs on one internal
//! tokio runtime, and a caller blocked in a call drives its own I/O ([`drive`]);
//! [`ffi`] is the thin `extern "C"` layer over it. ARCHITECTURE.md draws the layers.

#![deny(unsafe_code)]

pub mod auth;
pub mod client;
pub mod config;
mod deadlines;
pub mod drive;
pub mod error;
pub mod framing;
#[doc(hidden)]
pub mod fuzzing;
pub mod headers;
mod inject;
pub mod jsonrpc;
pub mod protocol;
pub mod result;
mod scan;
pub mod sse;
pub mod supervise;
mod sync;
mod sys;
#[cfg(test)]
mod testing;
mod text;
pub mod transport;
mod unescape;
pub mod url_policy;

#[allow(unsafe_code)]
pub mod ffi;

pub use client::{Client, Control, Options};
pub use error::{Error, Status};
