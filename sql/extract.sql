-- extract(src, protocol) and evidence(src, protocol), step by step.
--
-- quarry renders this file with a protocol's parameters (every {{name}})
-- and runs it in stages: each `-- @stage NAME` query is run once and kept
-- as table NAME for the stages after it (so no model request, and no
-- document, is read twice), and the `-- @output` query gives the table.
-- `extract_sql('SRC', 'protocol.toml')` prints the rendered text: run a
-- stage on its own, change one. Requests are cached in the store, so
-- running the steps again costs nothing.

{{screened_stage}}-- @stage asked
-- One request per chunk (every chunk is read; no retrieval step can skip
-- the sentence that holds a value). A stage of its own, so each chunk is
-- asked once and a window's chunks are asked together (DataFusion would
-- evaluate the call once for every field read from its result).
SELECT c.document_id, c.chunk_id, c.text, c.char_start, c.page_start, c.section,
       llm_json_detail({{prompt}} || c.text || '
"""', '{{schema}}',
                'stage=extract, resume=true, document=' || c.document_id
                || ', label=chunk ' || CAST(c.chunk_id AS VARCHAR) || '{{llm_options}}') AS r
FROM {{chunk_source}} c;

-- @stage replies
-- Each reply read against the schema, with nothing repaired.
SELECT document_id, chunk_id, text, char_start, page_start, section,
       r['ok'] AS ok, r['error'] AS call_error, r['text'] AS reply,
       parse_reply(r['text'], '{{schema}}') AS p
FROM asked;

{{repair_stage}}-- @stage cells
-- One row per chunk and field: the value given, the quote given for it,
-- whether the value reads as the field's type (reason is NULL when it does)
-- and the quote checked against the chunk's own text.
WITH
{{repaired}}fieldinfo AS (
  SELECT * FROM (VALUES {{fields}}) AS f(field, ord, description)
),
given AS (
  SELECT p.document_id, p.chunk_id, p.text AS chunk_text, p.char_start AS chunk_start,
         p.page_start AS page, p.section, p.ok, p.call_error, f.field, f.description,
         CASE WHEN p.ok THEN json_field(p.p['value'], f.field) END AS raw,
         CASE WHEN p.ok THEN json_field(p.p['value'], f.field || '__quote') END AS quote
  FROM {{replies}} p CROSS JOIN fieldinfo f
)
SELECT document_id, chunk_id, chunk_start, page, section, ok, call_error, field, description, raw, quote,
       CASE field
{{reason_cases}}
       END AS reason,
       CASE field
{{verify_cases}}
       END AS v
FROM given;

-- @stage verdicts
-- resolve = model only: one extra request per field whose chunks gave
-- different values (not just two spellings of one), listing each value
-- with the quote given for it; the reply names the value the document
-- supports, or null.
WITH
valued AS (
  SELECT c.*, row_number() OVER (PARTITION BY document_id, field ORDER BY chunk_id) AS k
  FROM cells c
  WHERE raw IS NOT NULL AND (reason IS NULL OR (reason LIKE '%is no value%' AND v['verified']))
),
disputed AS (
  SELECT v.document_id, v.field, max(v.description) AS description,
         string_agg('- ' || v.raw || ' (quote: "' || coalesce(v.quote, '') || '")', '
' ORDER BY v.chunk_id) AS listing
  FROM valued v
  WHERE EXISTS (SELECT 1 FROM valued a JOIN valued b
                ON a.document_id = b.document_id AND a.field = b.field AND a.k = 1 AND b.k > 1
                WHERE a.document_id = v.document_id AND a.field = v.field AND NOT same_value(a.raw, b.raw))
  GROUP BY v.document_id, v.field
),
adjudicated AS (
  SELECT document_id, field,
         llm_json_detail({{resolve_prompt}} || field || ' (' || description || ').
Values given, each with the sentence given for it:
' || listing, '{{resolve_schema}}',
                         'stage=resolve, resume=true, document=' || document_id || ', label=' || field || '{{llm_options}}') AS r
  FROM disputed
)
SELECT document_id, field, r['ok'] AS ok, r['error'] AS err,
       json_field(parse_reply(r['text'], '{{resolve_schema}}')['value'], 'value') AS chosen
FROM adjudicated;

{{check_stage}}-- @output
WITH
docs AS (
  SELECT document_id, source, status AS doc_status, duplicate_of, error AS doc_error
  FROM documents('{{src}}', '{{ingest}}')
  {{only_included}}
),
-- What counts as a value: readable as its type; "None"/"N/A" only when its
-- quote verifies and says so itself.
valued AS (
  SELECT c.*, row_number() OVER (PARTITION BY document_id, field ORDER BY chunk_id) AS k
  FROM cells c
  WHERE raw IS NOT NULL AND (reason IS NULL OR (reason LIKE '%is no value%' AND v['verified']))
),
-- The value that stands per document and field: the first chunk's
-- (resolve = first), or the one the verdict chose (resolve = model; if it
-- chose none the first stands unverified; if it failed the first stands and
-- a warning names the field).
{{firsts}}
warned AS (
  SELECT document_id, string_agg(warning, '; ') AS warnings
  FROM firsts WHERE warning IS NOT NULL GROUP BY document_id
),
-- A different value elsewhere in the document (not just another spelling)
-- is a conflict.
conflicted AS (
  SELECT v.document_id, count(DISTINCT v.field) AS n
  FROM valued v JOIN firsts f ON v.document_id = f.document_id AND v.field = f.field
  WHERE NOT same_value(v.raw, f.raw)
  GROUP BY v.document_id
),
-- The best quote any chunk gave for the value that stands, with the page
-- and section of the block its located span starts in (a chunk that spans
-- pages, or a segmenter that keeps no pages, still gives the quote's page).
spans AS (
  SELECT document_id AS span_document, page AS span_page, section AS span_section,
         char_start AS span_start, char_end AS span_end
  FROM {{block_source}}
),
evidence AS (
  SELECT document_id, field, value, chunk_id, coalesce(span_page, page) AS page,
         coalesce(span_section, section) AS section, quote,
         char_start, char_end, verified, "match", '{{protocol_hash}}' AS protocol_hash
  FROM (
    SELECT v.document_id, v.field, v.raw AS value, v.chunk_id, v.page, v.section, v.quote,
           v.chunk_start + v.v['char_start'] AS char_start, v.chunk_start + v.v['char_end'] AS char_end,
           coalesce(v.v['verified'], false) AND NOT f.none_chosen AS verified, v.v['match'] AS "match",
           row_number() OVER (PARTITION BY v.document_id, v.field
                              ORDER BY coalesce(v.v['verified'], false) DESC, v.v['match'] DESC NULLS LAST, v.chunk_id) AS best
    FROM valued v JOIN firsts f ON v.document_id = f.document_id AND v.field = f.field
    WHERE same_value(v.raw, f.raw)
  ) s
  LEFT JOIN spans ON s.document_id = span_document AND s.char_start >= span_start AND s.char_start < span_end
  WHERE best = 1
),
-- Fields left empty because the value given could not be read as the
-- field's type: the document may report them, so they count as unverified.
unreadable AS (
  SELECT c.document_id, count(DISTINCT c.field) AS n
  FROM cells c LEFT JOIN firsts f ON c.document_id = f.document_id AND c.field = f.field
  WHERE c.raw IS NOT NULL AND c.reason IS NOT NULL AND c.reason NOT LIKE '%is no value%' AND f.field IS NULL
  GROUP BY c.document_id
),
-- How the requests went, per document.
requests AS (
  SELECT document_id, count(DISTINCT chunk_id) AS n,
         count(DISTINCT CASE WHEN NOT ok THEN chunk_id END) AS failed,
         count(DISTINCT CASE WHEN call_error LIKE '%cap_reached%' THEN chunk_id END) AS refused,
         min(call_error) AS first_error
  FROM cells GROUP BY document_id
),
kept AS (
  SELECT * FROM evidence WHERE verified OR NOT {{require_quote}}
),
-- One row per document, one typed column per field.
extraction AS (
  SELECT d.document_id, d.source,
{{columns}},
         count(k.field) AS n_filled,
         CAST(sum(CASE WHEN k.field IS NOT NULL AND NOT k.verified THEN 1 ELSE 0 END)
              + coalesce(max(u.n), 0) AS BIGINT) AS n_unverified,
         coalesce(max(c.n), 0) AS conflicts,
         CASE WHEN max(d.doc_status) = 'duplicate' THEN 'duplicate'
              WHEN max(d.doc_status) <> 'ok' THEN 'failed'
              WHEN max(q.refused) > 0 THEN 'skipped'
              WHEN max(q.failed) = max(q.n) AND max(q.n) > 0 THEN 'failed'
              WHEN max(q.failed) > 0 THEN 'incomplete'
              ELSE 'ok' END AS status,
         max(d.duplicate_of) AS duplicate_of,
         CASE WHEN max(d.doc_status) NOT IN ('ok', 'duplicate') THEN max(d.doc_error)
              WHEN max(q.failed) > 0 THEN CAST(max(q.failed) AS VARCHAR) || ' of ' || CAST(max(q.n) AS VARCHAR)
                   || ' requests failed; first: ' || max(q.first_error)
              END AS error,
         max(w.warnings) AS warnings,
         '{{protocol_hash}}' AS protocol_hash
  FROM docs d
  LEFT JOIN kept k ON k.document_id = d.document_id
  LEFT JOIN conflicted c ON c.document_id = d.document_id
  LEFT JOIN unreadable u ON u.document_id = d.document_id
  LEFT JOIN requests q ON q.document_id = d.document_id
  LEFT JOIN warned w ON w.document_id = d.document_id
  GROUP BY d.document_id, d.source
)
SELECT * FROM {{output}} ORDER BY {{order}}
