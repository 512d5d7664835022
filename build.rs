//! Generates include/mcpc.h from the exports with cbindgen. Writes the header only
//! when it changed; with MCPC_CHECK_HEADER=1 a stale header fails the build instead.

use std::path::PathBuf;

#[path = "tools/header_gen.rs"]
mod header_gen;

fn main() {
    let crate_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=tools/header_gen.rs");
    println!("cargo:rerun-if-env-changed=MCPC_CHECK_HEADER");
    // The shared library's soname: libmcpc.so.MAJOR, or libmcpc.so.0.MINOR while MAJOR is 0
    // (mk/install.mk installs it under the same name).
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        let major = std::env::var("CARGO_PKG_VERSION_MAJOR").expect("cargo sets CARGO_PKG_VERSION_MAJOR");
        let minor = std::env::var("CARGO_PKG_VERSION_MINOR").expect("cargo sets CARGO_PKG_VERSION_MINOR");
        let soversion = if major == "0" { format!("0.{minor}") } else { major };
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libmcpc.so.{soversion}");
    }
    let version = std::env::var("CARGO_PKG_VERSION").expect("cargo sets CARGO_PKG_VERSION");
    let header = header_gen::generate(&crate_dir, &version);
    let path = crate_dir.join("include").join("mcpc.h");
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if current == header {
        return;
    }
    if std::env::var("MCPC_CHECK_HEADER").as_deref() == Ok("1") {
        panic!("include/mcpc.h is stale: build without MCPC_CHECK_HEADER=1 to regenerate it, and commit it");
    }
    std::fs::create_dir_all(crate_dir.join("include")).expect("create include/");
    std::fs::write(&path, header).expect("write include/mcpc.h");
}
