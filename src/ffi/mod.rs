//! The C ABI. Each export converts its arguments, calls the core, and converts
//! the result; no logic lives here. Helpers: [`boundary`] (panics and the last
//! error), [`ptr`] (handle casts), [`cstr`] (strings in and out).

#![allow(non_camel_case_types)]
#![allow(clippy::missing_safety_doc)] // every export's doc says what it needs, in the header's words

pub mod apps;
pub mod boundary;
pub mod call_opts;
pub mod cancel;
pub mod check;
pub mod client;
pub mod client_async;
pub mod content;
pub mod cstr;
pub mod error;
pub mod extensions;
pub mod host;
pub mod host_resources;
pub mod input;
pub mod listing;
pub mod logging;
pub mod oauth;
pub mod op;
pub mod options;
pub mod process;
pub mod proxy;
pub mod ptr;
pub mod request;
pub mod result;
pub mod signer;
pub mod skills;
pub mod tasks;
pub mod transport;
pub mod userdata;
