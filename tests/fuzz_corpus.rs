//! Replays every fuzz target's corpus (fuzz/corpus/<target>/*) through the same entry
//! points the fuzzers use, so an input that once crashed stays fixed. Built with the
//! `fuzzing` feature (`make test-rust` runs it so); without it there is nothing here.

#![cfg(feature = "fuzzing")]

#[test]
fn fuzz_corpora_replay_clean() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    let mut replayed = 0;
    for (name, target) in mcpc::fuzzing::TARGETS {
        let dir = root.join(name);
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("corpus {dir:?}: {e}"));
        for entry in entries {
            let path = entry.unwrap().path();
            let data = std::fs::read(&path).unwrap();
            let outcome = std::panic::catch_unwind(|| target(&data));
            assert!(outcome.is_ok(), "fuzz target {name} fails on {path:?}");
            replayed += 1;
        }
    }
    assert!(replayed >= mcpc::fuzzing::TARGETS.len(), "the corpora are empty");
}
