#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcpc::fuzzing::www_authenticate(data));
