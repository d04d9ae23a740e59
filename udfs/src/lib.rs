//! quarry-udfs: pure, deterministic SQL functions for quarry (sentences,
//! tokens, quote matching and location, numbers and verification, DOIs,
//! interval and agreement statistics). Each function lives in a file named
//! after it: a plain Rust kernel, its DataFusion adapter, and its tests.

// Without the `sql` feature the crate is its plain kernels (no DataFusion):
// what the fuzz targets build on. Helpers only the adapters call are then unused.
#![cfg_attr(not(feature = "sql"), allow(dead_code, unused_imports))]

#[cfg(feature = "sql")]
use std::sync::Arc;

#[cfg(feature = "sql")]
use datafusion::common::Result;
#[cfg(feature = "sql")]
use datafusion::execution::FunctionRegistry;
#[cfg(feature = "sql")]
use datafusion::logical_expr::{AggregateUDF, ScalarUDF};

pub mod cohen_kappa;
pub mod difflib;
pub mod fold;
pub mod lang;
pub mod locate_quote;
pub mod normalize_doi;
pub mod numbers_in;
pub mod parse_reply;
pub mod parse_value;
pub mod quote_match;
pub mod same_value;
pub mod sentences;
pub mod token_count;
pub mod util;
pub mod verify_quote;
pub mod wilson;

#[cfg(test)]
mod precision;
#[cfg(test)]
mod proptests;

pub use sentences::sentence_spans;
pub use token_count::Tokenizer;

/// Every scalar function this crate provides.
#[cfg(feature = "sql")]
pub fn scalar_functions() -> Vec<Arc<ScalarUDF>> {
    vec![
        Arc::new(ScalarUDF::from(sentences::Sentences::default())),
        Arc::new(ScalarUDF::from(quote_match::QuoteMatch::default())),
        Arc::new(ScalarUDF::from(locate_quote::LocateQuote::default())),
        Arc::new(ScalarUDF::from(same_value::SameValue::default())),
        Arc::new(ScalarUDF::from(numbers_in::NumbersIn::default())),
        Arc::new(ScalarUDF::from(verify_quote::VerifyQuote::default())),
        Arc::new(ScalarUDF::from(parse_value::ParseValue::default())),
        Arc::new(ScalarUDF::from(parse_reply::ParseReply::default())),
        Arc::new(ScalarUDF::from(parse_reply::JsonField::default())),
        Arc::new(ScalarUDF::from(token_count::TokenCount::default())),
        Arc::new(ScalarUDF::from(normalize_doi::NormalizeDoi::default())),
        Arc::new(ScalarUDF::from(wilson::WilsonBound::lower())),
        Arc::new(ScalarUDF::from(wilson::WilsonBound::upper())),
    ]
}

/// Every aggregate function this crate provides.
#[cfg(feature = "sql")]
pub fn aggregate_functions() -> Vec<Arc<AggregateUDF>> {
    vec![Arc::new(AggregateUDF::from(
        cohen_kappa::CohenKappa::default(),
    ))]
}

/// Registers every function of this crate with a DataFusion registry
/// (a `SessionContext`, or a `SessionState` builder's registry).
#[cfg(feature = "sql")]
pub fn register_all(registry: &mut dyn FunctionRegistry) -> Result<()> {
    for f in scalar_functions() {
        registry.register_udf(f)?;
    }
    for f in aggregate_functions() {
        registry.register_udaf(f)?;
    }
    Ok(())
}
