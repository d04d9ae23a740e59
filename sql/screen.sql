-- screen(src, protocol), step by step: one request per document; every
-- document gets include, exclude or unclear (a deferral, not a forced
-- guess) with its reason, the criterion it turned on and a quote checked
-- against the document; a document that could not be read is failed, with
-- no decision, never an exclusion. Screening records (`screen(exports,
-- protocol, 'records, files=...')`), a record with a matched file is screened
-- on the file, one without on its title and abstract, and one with neither
-- is unclear with that reason, never asked and never excluded. `screen_sql('SRC', 'protocol.toml')`
-- prints this file rendered with a protocol's parameters.
-- @stage screen_asked
-- 1. One request per readable document: the start of its text, up to the
--    protocol's screening budget. A stage of its own, so each document is
--    asked once and a window's documents are asked together.
SELECT d.document_id, d.text AS doc_text,
       llm_json_detail({{prompt}} || substr(d.text, 1, {{max_chars}}) || '
"""', '{{schema}}', 'stage=screen, resume=true, document=' || d.document_id || '{{llm_options}}') AS r
FROM documents('{{src}}', '{{ingest}}') d
WHERE d.status = 'ok';

-- @output
WITH
docs AS (
  SELECT document_id, source, status AS doc_status, duplicate_of, error AS doc_error,
         extractor = 'record' AND status = 'no_text' AS nothing_to_read
  FROM documents('{{src}}', '{{ingest}}')
),
-- 2. The reply read against the schema; nothing repaired.
replies AS (
  SELECT document_id, doc_text, r['ok'] AS ok, r['error'] AS call_error,
         parse_reply(r['text'], '{{schema}}') AS p
  FROM screen_asked
),
-- 3. The decision, and its quote checked against the document.
decided AS (
  SELECT document_id, ok, call_error,
         json_field(p['value'], 'decision') AS decision,
         json_field(p['value'], 'reason') AS reason,
         json_field(p['value'], 'criterion') AS criterion,
         json_field(p['value'], 'quote') AS quote,
         quote_match(json_field(p['value'], 'quote'), doc_text) AS "match"
  FROM replies
),
screening AS (
  SELECT d.document_id, d.source,
         CASE WHEN d.nothing_to_read THEN 'unclear'
              WHEN d.doc_status IN ('ok', 'duplicate') AND s.ok
                   AND s.decision IN ('include', 'exclude', 'unclear') THEN s.decision END AS decision,
         CASE WHEN d.nothing_to_read THEN d.doc_error ELSE s.reason END AS reason,
         s.criterion, s.quote,
         coalesce(s."match" >= 1.0, false) AS verified, s."match",
         CASE WHEN d.nothing_to_read THEN 'ok'
              WHEN d.doc_status = 'duplicate' THEN 'duplicate'
              WHEN d.doc_status <> 'ok' THEN 'failed'
              WHEN NOT s.ok THEN 'failed'
              WHEN s.decision IS NULL OR s.decision NOT IN ('include', 'exclude', 'unclear') THEN 'failed'
              ELSE 'ok' END AS status,
         CASE WHEN d.nothing_to_read THEN NULL
              WHEN d.doc_status NOT IN ('ok', 'duplicate') THEN d.doc_error
              WHEN NOT s.ok THEN s.call_error
              WHEN s.decision IS NULL OR s.decision NOT IN ('include', 'exclude', 'unclear')
                THEN 'the reply gave no decision of include, exclude or unclear: ' || coalesce(s.decision, 'none')
              END AS error,
         d.duplicate_of,
         '{{protocol_hash}}' AS protocol_hash
  FROM docs d LEFT JOIN decided s ON s.document_id = d.document_id
)
SELECT * FROM screening ORDER BY source
