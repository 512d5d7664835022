//! The committed header must be exactly what the code generates.

#[path = "../tools/header_gen.rs"]
mod header_gen;

#[test]
fn committed_header_is_current() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let want = header_gen::generate(dir, env!("CARGO_PKG_VERSION"));
    let have = std::fs::read_to_string(dir.join("include/mcpc.h")).expect("include/mcpc.h exists");
    assert!(
        have == want,
        "include/mcpc.h differs from the generated header: rebuild and commit it"
    );
}

#[test]
fn header_version_matches_the_library() {
    let have = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/include/mcpc.h")).unwrap();
    assert!(have.contains(&format!("#define MCPC_VERSION \"{}\"", env!("CARGO_PKG_VERSION"))));
    let v = unsafe { std::ffi::CStr::from_ptr(mcpc::ffi::error::mcpc_version()) };
    assert_eq!(v.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
}
