//! `catalog()`: every table function and store table of a session, with
//! how to call it and what it gives, in a line. The shell's `\d` lists it;
//! `\d NAME` describes one. A test checks that every table function the
//! session registers has its line here.

use std::sync::Arc;

use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::Result;

/// One entry: name, kind, how to call it, what it gives, and a call that
/// plans with no files (for `\d NAME`'s columns), when there is one.
pub struct Entry {
    /// Its name.
    pub name: &'static str,
    /// `table function` or `table`.
    pub kind: &'static str,
    /// How to call it.
    pub call: &'static str,
    /// What it gives.
    pub description: &'static str,
    /// A call `DESCRIBE SELECT * FROM ...` can plan anywhere.
    pub example: Option<&'static str>,
}

const fn f(
    name: &'static str,
    call: &'static str,
    description: &'static str,
    example: Option<&'static str>,
) -> Entry {
    Entry {
        name,
        kind: "table function",
        call,
        description,
        example,
    }
}

const fn t(name: &'static str, description: &'static str) -> Entry {
    Entry {
        name,
        kind: "table",
        call: name,
        description,
        example: None,
    }
}

/// Everything, table functions first.
pub const ENTRIES: &[Entry] = &[
    f("documents", "documents(src [, options])", "one row per file read: id, source, extractor, pages, tokens, status and the text", Some("documents('.')")),
    f("inventory", "inventory(src [, options])", "every file under src, read or not, with a note saying what to do", Some("inventory('.')")),
    f("blocks", "blocks(src [, options])", "the typed blocks of each document (heading, paragraph, list, table with cells, footnote, caption)", Some("blocks('.')")),
    f("chunks", "chunks(src, method, max_tokens [, overlap_tokens [, options]])", "each document cut by one of nine segmenters, with offsets back into the text", Some("chunks('.', 'sentence', 100)")),
    f("segmenters", "segmenters()", "the segmenters: name, boundary hypothesis, cost, whether it needs a client, provenance", Some("segmenters()")),
    f("ask", "ask(src, question [, recipe [, options]])", "one answer per document by a recipe or a reader, with its notes, chunks used and cost", Some("ask('.', 'q')")),
    f("ask_evidence", "ask_evidence(src, question [, recipe [, options]])", "what each answer of ask rests on: chunk, text, page, section, score, kind", Some("ask_evidence('.', 'q')")),
    f("compare", "compare(src, question, 'fast,needle,thorough' [, options])", "one answer per document and recipe, from one ingestion: segmenter, reader, signature, settings", Some("compare('.', 'q', 'fast')")),
    f("readers", "readers()", "the readers: name, traversal signature, cost in requests, method", Some("readers()")),
    f("recipes", "recipes(['FILE.toml'])", "the recipes (built-in, then a file's): segmenter, reader, the settings changed, when to use it", Some("recipes()")),
    f("embedders", "embedders()", "the embedders: name, whether deterministic (a replay reproduces its ranking), what it is", Some("embedders()")),
    f("screen", "screen(src, protocol [, 'records, files=...'])", "a screening decision per document or record, with the reason and its quote", None),
    f("extract", "extract(src, protocol [, 'included' | 'records, files=..., included'])", "the protocol's fields per document, each value with a verified quote", None),
    f("evidence", "evidence(src, protocol [, ...])", "every value extract gave, with its quote, where it sits and whether it verified", None),
    f("extract_sql", "extract_sql(src, protocol [, ...])", "the SQL extract runs, to read or to run by hand", None),
    f("screen_sql", "screen_sql(src, protocol [, ...])", "the SQL screen runs", None),
    f("records", "records(src [, 'files=FOLDER, recursive=false'])", "bibliographic records from RIS, BibTeX, PubMed, CSV exports, deduplicated", None),
    f("flow", "flow(exports [, options])", "the PRISMA flow of a review from its exports, search and protocol", None),
    f("flow_sql", "flow_sql(exports [, options])", "the SQL flow runs", None),
    f("reference_sample", "reference_sample(screening, n, frame [, seed [, out.csv]])", "a blind, seeded sample of a screening for a person to decide", None),
    f("calibrate", "calibrate(screening, sample.csv)", "what a person's decisions on the sample say about the screening (recall, kappa, intervals)", None),
    f("cohort_tables", "cohort_tables(src [, options])", "baseline-table items: arm, characteristic, category, measure, value", Some("cohort_tables('.')")),
    f("study_claims", "study_claims(src, protocol [, options])", "claims across the studies of an extraction, each tied to the rows it rests on", None),
    f("study_claim_support", "study_claim_support(src, protocol [, options])", "which study supports which claim across studies", None),
    f("study_claims_dropped", "study_claims_dropped(src, protocol [, options])", "the claims across studies that were dropped, and why", None),
    f("study_claims_sql", "study_claims_sql(src, protocol [, options])", "the SQL study_claims runs", None),
    f("gaps", "gaps(src, protocol [, options])", "what the studies do not cover: fields, arms and outcomes nobody reported", None),
    f("synthesise", "synthesise(src, protocol [, 'coherence=..., outline=..., bibliography=...'])", "a cited write-up, one row per section, every citation checked", None),
    f("synthesis", "synthesis(src, protocol [, options])", "the write-up as one document with its references", None),
    f("synthesis_coherence", "synthesis_coherence(src, protocol [, options])", "the write-up's coherence passes, kept or refused with the reason", None),
    f("synthesis_citations", "synthesis_citations(src, protocol [, options])", "each citation of the write-up and the study it names", None),
    f("synthesis_outline", "synthesis_outline(src, protocol [, options])", "the write-up's outline: headings, briefs, the claims of each", None),
    f("synthesis_claims", "synthesis_claims(src, protocol [, options])", "the claims the write-up's sections argue: each study for and against, its document, whether it is cited", None),
    f("synthesise_sql", "synthesise_sql(src, protocol [, options])", "the SQL synthesise runs", None),
    f("claims", "claims(src, spec)", "claims with provenance: each a verified quote, its document and place", None),
    f("rejections", "rejections(src, spec)", "the drafted claims that were not kept, and why", None),
    f("claims_sql", "claims_sql(src, spec)", "the SQL claims runs", None),
    f("changes_since", "changes_since(revision [, max_revisions])", "what each revision of the claims table added, changed or removed", None),
    f("cache_stats", "cache_stats()", "the response cache's entries and hits", Some("cache_stats()")),
    f("models", "models()", "the model registry: context window, output cap, prices", Some("models()")),
    f("reply_problems", "reply_problems()", "every problem in a traced structured reply, with its call", Some("reply_problems()")),
    f("catalog", "catalog()", "this list", Some("catalog()")),
    f("generate_series", "generate_series(start, stop [, step])", "DataFusion's: the integers from start to stop inclusive", Some("generate_series(1, 3)")),
    f("range", "range(start, stop [, step])", "DataFusion's: the integers from start up to stop", Some("range(1, 3)")),
    t("calls", "every model call: request, reply, tokens, cost, time, cached"),
    t("extraction", "the latest extraction kept in the store, one row per document"),
    t("evidence", "extraction values kept in the store, with their quotes"),
    t("screening", "screening decisions kept in the store"),
    t("answers", "every ask answer kept in the store, by run_id"),
    t("answer_evidence", "the passages every kept ask answer read, by run_id"),
    t("claims", "the store's claims table (Delta Lake) as it stands"),
    t("rejections", "the store's rejected claims"),
    t("synthesis_sections", "every write-up section made with the store, by synthesis_id"),
    t("synthesis_review", "every write-up made with the store"),
    t("synthesis_citations", "the citations of every write-up in the store"),
    t("synthesis_coherence", "the coherence passes of every write-up in the store"),
    t("synthesis_outline", "the outlines of every write-up in the store"),
    t("synthesis_claims", "the claims every write-up in the store argues, with the studies for and against"),
];

/// The entry for a name: a table function first.
pub fn entry(name: &str) -> Option<&'static Entry> {
    ENTRIES.iter().find(|e| e.name == name)
}

/// `catalog()`.
#[derive(Debug)]
pub struct CatalogFn;

impl TableFunctionImpl for CatalogFn {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let e = ENTRIES;
        super::registry_table(
            &args,
            "catalog",
            vec![
                ("name", super::text_column(e, |e| e.name)),
                ("kind", super::text_column(e, |e| e.kind)),
                ("call", super::text_column(e, |e| e.call)),
                ("description", super::text_column(e, |e| e.description)),
            ],
        )
    }
}
