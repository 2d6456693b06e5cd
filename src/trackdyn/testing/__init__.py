"""Reference problems, validation cases and benchmarks (importable by users and tests)."""
