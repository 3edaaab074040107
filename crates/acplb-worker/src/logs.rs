//! Per-worker log files, rotated by size (filled in next).
