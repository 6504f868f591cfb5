#![no_main]
// Each target includes every check but runs one of them.
#![allow(dead_code)]

include!("../checks.rs");

libfuzzer_sys::fuzz_target!(|data: &[u8]| check_gate(data));
