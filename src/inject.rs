//! Panics put on purpose at named points, in debug builds only, so that tests can
//! prove that a panic neither hangs a host waiting for a completion nor unwinds into
//! C. `MCPC_INJECT_PANIC` lists the points, comma-separated, each `kind:name` (an
//! export `export:mcpc_version`, a spawned or direct operation `spawned:NAME` or
//! `direct:NAME`, a completion's reading of its result `deliver:NAME`). It is read
//! once, at the first point reached. A release build has no points.

#[cfg(debug_assertions)]
pub(crate) fn point(kind: &str, name: &str) {
    use std::sync::OnceLock;
    static POINTS: OnceLock<Vec<String>> = OnceLock::new();
    let points = POINTS.get_or_init(|| {
        std::env::var("MCPC_INJECT_PANIC")
            .map(|v| v.split(',').map(str::to_string).collect())
            .unwrap_or_default()
    });
    if points.iter().any(|p| p.split_once(':') == Some((kind, name))) {
        panic!("injected panic at {kind}:{name}");
    }
}

#[cfg(not(debug_assertions))]
#[inline(always)]
pub(crate) fn point(_kind: &str, _name: &str) {}
