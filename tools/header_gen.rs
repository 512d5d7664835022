//! Generates include/mcpc.h; shared by build.rs (which writes it) and the header
//! test (which checks that the committed copy is current).

use std::path::Path;

/// The header for the crate at `crate_dir`, with version macros for `version`
/// ("MAJOR.MINOR.PATCH").
pub fn generate(crate_dir: &Path, version: &str) -> String {
    let mut config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("read cbindgen.toml");
    let mut parts = version.split(['.', '-', '+']);
    let mut next = || parts.next().unwrap_or("0").to_string();
    let (major, minor, patch) = (next(), next(), next());
    config.after_includes = Some(format!(
        "\n#define MCPC_VERSION_MAJOR {major}\n#define MCPC_VERSION_MINOR {minor}\n#define MCPC_VERSION_PATCH {patch}\n#define MCPC_VERSION \"{version}\"\n"
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
