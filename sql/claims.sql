-- claims(src, spec) and rejections(src, spec), step by step.
--
-- quarry renders this file with a claims spec's parameters (every {{name}})
-- and runs it in stages, as it runs extract.sql: each `-- @stage NAME`
-- query is run once and kept as table NAME for the stages after it, and
-- the `-- @output` query gives one row per draft the model wrote, claim or
-- rejection (`code` is NULL for a claim). `claims_sql('SRC', 'spec.toml')`
-- prints the rendered text. With a store, each document's rows replace its
-- earlier ones in the store's claims table in one commit, under a new
-- revision; `claims` and `rejections` read that table.

-- @stage asked
-- One request per chunk: the spec's instructions, then the chunk.
SELECT c.document_id, c.chunk_id, c.text, c.char_start, c.page_start, c.section,
       llm_json_detail({{prompt}} || c.text || '
"""', '{{schema}}',
                'stage=claims, resume=true, document=' || c.document_id
                || ', label=chunk ' || CAST(c.chunk_id AS VARCHAR) || '{{llm_options}}') AS r
FROM {{chunk_source}} c;

-- @stage drafts
-- Each reply read with parse_reply (nothing repaired), each draft in it
-- checked against the spec, its quote located in the chunk it was sent
-- with (exactly after folding, else difflib at 0.9, snapped to sentences)
-- and its id computed: one row per draft; a failed request or a reply
-- that cannot be read is one row (code 'failed' or 'unreadable').
SELECT document_id, chunk_id, page_start, section,
       unnest(claim_drafts(r['text'], r['ok'], r['error'], text, char_start, document_id, '{{rules}}')) AS d
FROM asked;

-- @output
WITH
-- The path each read document came from (a copy under another path is
-- the same document, read once).
docs AS (
  SELECT document_id AS doc_id, source FROM documents('{{src}}', '{{ingest}}') WHERE status = 'ok'
),
-- The page and section of the block a claim's sentences start in.
spans AS (
  SELECT document_id AS span_document, page AS span_page, section AS span_section,
         char_start AS span_start, char_end AS span_end
  FROM {{block_source}}
)
SELECT d['claim_id'] AS claim_id, x.document_id, docs.source, '{{spec_name}}' AS spec, x.chunk_id, d['ordinal'] AS ordinal,
       d['code'] AS code, d['kind'] AS kind, d['subject'] AS subject,
       d['predicate'] AS predicate, d['object'] AS object, d['polarity'] AS polarity,
       d['quantity'] AS quantity, d['statistics'] AS statistics, d['context'] AS context,
       named_struct('document_id', x.document_id, 'char_start', d['char_start'],
                    'char_end', d['char_end'], 'quote', d['quote'], 'match', d['match']) AS span,
       coalesce(span_page, x.page_start) AS page, coalesce(span_section, x.section) AS section,
       named_struct('model', '{{model}}', 'prompt_hash', '{{prompt_hash}}',
                    'schema_hash', '{{schema_hash}}', 'spec_hash', '{{spec_hash}}',
                    'release', '{{release}}') AS stamp,
       d['draft'] AS draft, d['problems'] AS problems,
       CAST(NULL AS BIGINT) AS revision
FROM drafts x
JOIN docs ON docs.doc_id = x.document_id
LEFT JOIN spans ON x.document_id = span_document
     AND d['char_start'] >= span_start AND d['char_start'] < span_end
ORDER BY docs.source, x.chunk_id, d['ordinal']
