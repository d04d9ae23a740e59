-- quarry's first job on a folder: what is in it, which documents a protocol
-- includes, and what it extracts from them, with the evidence.
-- Run it with:  cargo run -- sql --replay examples/recording -f examples/quickstart.sql
-- (--replay answers every model call from a recorded real run: no key, no network;
--  without it, point OPENAI_BASE_URL at a model; see the README.)

-- 1. Every file, read or not (no model call).
SELECT file_name, extractor, status, blocks, tokens
FROM documents('examples/corpus/')
ORDER BY file_name;

-- 2. Screening: one decision per document, with the sentence it turned on.
SELECT regexp_replace(source, '^.*/', '') AS file, decision, criterion, verified, status
FROM screen('examples/corpus/', 'examples/protocol.toml')
ORDER BY file;

-- 3. Extraction: one row per document, one typed column per field; a value
--    whose quote is not verbatim in the document is counted in n_unverified.
SELECT regexp_replace(source, '^.*/', '') AS file, design, n_randomised, condition,
       n_filled, n_unverified, conflicts, status
FROM extract('examples/corpus/', 'examples/protocol.toml')
ORDER BY file;

-- 4. Where the values came from.
SELECT field, count(*) AS values, sum(CASE WHEN verified THEN 1 ELSE 0 END) AS verified
FROM evidence('examples/corpus/', 'examples/protocol.toml')
GROUP BY field ORDER BY field;
