//! Generates include/mcpc.h from the exports with cbindgen. Writes the header only
//! when it changed; with MCPC_CHECK_HEADER=1 a stale header fails the build instead.

use std::path::PathBuf;

fn main() {
    let crate_dir =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-env-changed=MCPC_CHECK_HEADER");
    let header = generate(&crate_dir);
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

fn generate(crate_dir: &std::path::Path) -> String {
    let mut config =
        cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("read cbindgen.toml");
    let v = |k: &str| std::env::var(k).expect("cargo sets the version variables");
    config.after_includes = Some(format!(
        "\n#define MCPC_VERSION_MAJOR {}\n#define MCPC_VERSION_MINOR {}\n#define MCPC_VERSION_PATCH {}\n#define MCPC_VERSION \"{}\"\n",
        v("CARGO_PKG_VERSION_MAJOR"),
        v("CARGO_PKG_VERSION_MINOR"),
        v("CARGO_PKG_VERSION_PATCH"),
        v("CARGO_PKG_VERSION"),
    ));
    let mut out = Vec::new();
    cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen failed")
        .write(&mut out);
    String::from_utf8(out).expect("cbindgen writes UTF-8")
}
