//! Measures of extracted tables against the truth, for tests and benches:
//! cell adjacency (ICDAR 2013) and TEDS (PubTabNet).

pub mod adjacency;
pub mod teds;
