//! GOAL text format: parser and writer (in progress).
