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

/// cbindgen's output for this crate with `extra` declared among the functions.
fn arranged_with(extra: &str) -> std::thread::Result<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let raw = header_gen::cbindgen_output(dir);
    let close = "#ifdef __cplusplus\n}  // extern \"C\"";
    assert!(raw.contains(close));
    let raw = raw.replacen(close, &format!("{extra}\n\n{close}"), 1);
    std::panic::catch_unwind(|| header_gen::arrange(&raw, env!("CARGO_PKG_VERSION")))
}

fn panic_message(e: Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<String>().cloned().unwrap_or_default()
}

#[test]
fn an_unprefixed_constant_is_left_out() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let want = header_gen::generate(dir, env!("CARGO_PKG_VERSION"));
    let have = arranged_with("/**\n * A limit of the core.\n */\n#define SOME_LIMIT 3").unwrap();
    assert_eq!(have, want);
}

#[test]
fn an_unprefixed_function_fails_generation() {
    let e = arranged_with("void helper(void);").unwrap_err();
    assert!(panic_message(e).contains("helper lacks the mcpc_ prefix"));
}

#[test]
fn an_unprefixed_enum_value_fails_generation() {
    let e = arranged_with("typedef enum {\n  MCPC_A = 0,\n  B = 1,\n} mcpc_letter_t;").unwrap_err();
    assert!(panic_message(e).contains("enum value B in mcpc_letter_t"));
}

#[test]
fn a_name_without_a_group_fails_generation() {
    let e = arranged_with("/**\n * New.\n */\nvoid mcpc_widget_new(void);").unwrap_err();
    assert!(panic_message(e).contains("no group for [\"mcpc_widget_new\"]"));
}
