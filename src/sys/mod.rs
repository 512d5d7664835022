//! The operating-system calls the core needs, behind one interface: one module per
//! platform, chosen here, with the same names where they make sense. Everything
//! above this module is portable; ARCHITECTURE.md lists what is platform-specific.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;
