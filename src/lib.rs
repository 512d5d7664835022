//! mcpc: a Model Context Protocol client with a C ABI.
//!
//! The safe core (`client`, `transport`, `protocol`) runs on one internal tokio
//! runtime, and a caller blocked in a call drives its own I/O (`drive`); [`ffi`] is
//! the thin `extern "C"` layer over it. ARCHITECTURE.md draws the layers.
//!
//! The Rust surface is the C ABI itself ([`ffi`]: the exports and their types, which
//! a Rust program calls as a C one does) and [`error`]'s status and error types; the
//! core is the crate's own, so that it can change without notice and rustc reports
//! what nothing uses (docs/decisions/0022-rust-surface.md). The fuzzing entry points
//! are built only with the `fuzzing` feature.

#![deny(unsafe_code)]

pub(crate) mod auth;
pub(crate) mod client;
pub(crate) mod config;
mod deadlines;
pub(crate) mod drive;
pub mod error;
pub(crate) mod framing;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub(crate) mod headers;
pub(crate) mod host;
mod inject;
pub(crate) mod jsonrpc;
pub(crate) mod protocol;
pub(crate) mod result;
mod scan;
pub(crate) mod sse;
pub(crate) mod supervise;
mod sync;
mod sys;
#[cfg(test)]
mod testing;
mod text;
pub(crate) mod transport;
mod unescape;
pub(crate) mod url_policy;

#[allow(unsafe_code)]
pub mod ffi;

pub use error::{Error, Status};
