//! Replays the kept cargo-fuzz corpora (`fuzz/corpus/<target>/`) through the same property
//! checks as the fuzz targets, on stable, so CI keeps checking every input the fuzzer found
//! interesting without nightly or libFuzzer. The checks live in `fuzz/checks.rs`, shared with
//! the targets; see `fuzz/README.md` for running the fuzzer itself.

#[allow(dead_code)]
mod checks {
    include!("../../fuzz/checks.rs");
}

use std::path::PathBuf;

/// Runs `check` on every file of `fuzz/corpus/<target>`, naming the file that fails. Fails if
/// the corpus is missing or empty, so the test cannot pass vacuously.
fn replay(target: &str, check: fn(&[u8])) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read corpus {}: {e}", dir.display()))
        .map(|entry| entry.map(|entry| entry.path()).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display())))
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "corpus {} is empty", dir.display());
    let mut failures = Vec::new();
    for path in &files {
        let data = std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        if let Err(panic) = std::panic::catch_unwind(|| check(&data)) {
            let why = panic.downcast_ref::<String>().map(String::as_str).or_else(|| panic.downcast_ref::<&str>().copied()).unwrap_or("?");
            failures.push(format!("{}: {why}", path.display()));
        }
    }
    assert!(failures.is_empty(), "{target}: {} of {} corpus files fail:\n{}", failures.len(), files.len(), failures.join("\n"));
}

#[test]
fn duration_corpus() {
    replay("duration", checks::check_duration);
}

#[test]
fn ids_corpus() {
    replay("ids", checks::check_ids);
}

#[test]
fn trace_csv_corpus() {
    replay("trace_csv", checks::check_trace_csv);
}

#[test]
fn variables_corpus() {
    replay("variables", checks::check_variables);
}

#[test]
fn gate_corpus() {
    replay("gate", checks::check_gate);
}
