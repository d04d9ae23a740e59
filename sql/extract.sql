-- extract(src, protocol) and evidence(src, protocol), step by step.
--
-- quarry renders this file with a protocol's parameters (every {{name}}
-- below) and runs it; the last line picks the table. To run the steps by
-- hand, replace the placeholders (`quarry sql -c "SELECT * FROM
-- extract_sql('SRC', 'protocol.toml')"` prints the rendered text), run a
-- step on its own, change one. Every request is cached in the store, so
-- running the steps again costs nothing.
WITH
-- The corpus as read: one row per source, with its status.
docs AS (
  SELECT document_id, source, status AS doc_status, duplicate_of, error AS doc_error
  FROM documents('{{src}}', '{{ingest}}')
),
-- 1. One request per chunk: every chunk is read, none is skipped by a
--    retrieval step. The prompt carries the protocol (and its hash).
asked AS (
  SELECT c.document_id, c.chunk_id, c.text, c.char_start, c.page_start, c.section,
         llm_json_detail({{prompt}} || c.text || '
"""', '{{schema}}',
                  'stage=extract, document=' || c.document_id
                  || ', label=chunk ' || CAST(c.chunk_id AS VARCHAR) || '{{llm_options}}') AS r
  FROM chunks('{{src}}', '{{method}}', {{max_tokens}}, {{overlap_tokens}}, '{{ingest}}') c
),
-- 2. Each reply read against the schema: nothing repaired.
parsed AS (
  SELECT document_id, chunk_id, text, char_start, page_start, section,
         r['ok'] AS ok, r['error'] AS call_error,
         parse_reply(r['text'], '{{schema}}') AS p
  FROM asked
),
-- 3. One row per chunk and field: the value and the quote given for it.
cells AS (
  SELECT p.document_id, p.chunk_id, p.text AS chunk_text, p.char_start AS chunk_start,
         p.page_start AS page, p.section, f.field,
         json_field(p.p['value'], f.field) AS raw,
         json_field(p.p['value'], f.field || '__quote') AS quote
  FROM parsed p CROSS JOIN (VALUES {{fields}}) AS f(field, ord)
  WHERE p.ok
),
-- 4. Each value read as its field's type, and its quote verified against
--    the chunk's own text (one branch per field: the type is a constant).
typed AS (
{{typed}}
),
-- 5. What counts as a value: readable as its type; "None"/"N/A" only when
--    its quote verifies and says so itself.
valued AS (
  SELECT t.*, row_number() OVER (PARTITION BY document_id, field ORDER BY chunk_id) AS k
  FROM typed t
  WHERE reason IS NULL OR (reason LIKE '%is no value%' AND v['verified'])
),
-- 6. Reconcile across chunks: the first chunk's value stands; a different
--    value elsewhere (not just another spelling) is a conflict.
firsts AS (SELECT * FROM valued WHERE k = 1),
conflicted AS (
  SELECT v.document_id, count(DISTINCT v.field) AS n
  FROM valued v JOIN firsts f ON v.document_id = f.document_id AND v.field = f.field
  WHERE v.k > 1 AND NOT same_value(v.raw, f.raw)
  GROUP BY v.document_id
),
-- 7. The best quote any chunk gave for the value that stands.
evidence AS (
  SELECT document_id, field, value, chunk_id, page, section, quote,
         char_start, char_end, verified, "match", '{{protocol_hash}}' AS protocol_hash
  FROM (
    SELECT v.document_id, v.field, v.raw AS value, v.chunk_id, v.page, v.section, v.quote,
           v.chunk_start + v.v['char_start'] AS char_start, v.chunk_start + v.v['char_end'] AS char_end,
           coalesce(v.v['verified'], false) AS verified, v.v['match'] AS "match",
           row_number() OVER (PARTITION BY v.document_id, v.field
                              ORDER BY coalesce(v.v['verified'], false) DESC, v.v['match'] DESC NULLS LAST, v.chunk_id) AS best
    FROM valued v JOIN firsts f ON v.document_id = f.document_id AND v.field = f.field
    WHERE same_value(v.raw, f.raw)
  ) s
  WHERE best = 1
),
-- 8. Fields left empty because the value given could not be read as the
--    field's type: the document may report them, so they count as unverified.
unreadable AS (
  SELECT t.document_id, count(DISTINCT t.field) AS n
  FROM typed t LEFT JOIN firsts f ON t.document_id = f.document_id AND t.field = f.field
  WHERE t.reason IS NOT NULL AND t.reason NOT LIKE '%is no value%' AND f.field IS NULL
  GROUP BY t.document_id
),
-- 9. How the requests went, per document.
requests AS (
  SELECT document_id, count(*) AS n,
         sum(CASE WHEN ok THEN 0 ELSE 1 END) AS failed,
         sum(CASE WHEN call_error LIKE '%cap_reached%' THEN 1 ELSE 0 END) AS refused,
         min(call_error) AS first_error
  FROM parsed GROUP BY document_id
),
-- 10. One row per document, one typed column per field.
kept AS (
  SELECT * FROM evidence WHERE verified OR NOT {{require_quote}}
),
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
         '{{protocol_hash}}' AS protocol_hash
  FROM docs d
  LEFT JOIN kept k ON k.document_id = d.document_id
  LEFT JOIN conflicted c ON c.document_id = d.document_id
  LEFT JOIN unreadable u ON u.document_id = d.document_id
  LEFT JOIN requests q ON q.document_id = d.document_id
  GROUP BY d.document_id, d.source
)
SELECT * FROM {{output}} ORDER BY {{order}}
