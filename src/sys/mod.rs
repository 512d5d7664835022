//! The operating-system calls the core needs, behind one interface: one module per
//! platform, chosen here. Everything above this module is portable; a second
//! platform adds its own module with the same names (ARCHITECTURE.md lists them).

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;
