-- flow(exports [, options]): the PRISMA 2020 flow of a review's records as
-- rows (stage, database, n, detail), counted from the records table
-- (`records(exports, options)`) and, with `protocol=FILE`, the screening of
-- those records (`screen(exports, protocol, 'records, ...')`), so every
-- number agrees with the rows it counts. A record is identified once per
-- export it came from; a duplicate is removed before screening; every
-- other record is screened (on its file when one matched it, else on its
-- title and abstract). A record excluded on title and abstract is excluded
-- at screening; the rest are reports sought; one with no file is not
-- retrieved, one with a file is assessed, and the screening of its file
-- excludes it (by criterion), includes it, or leaves it awaiting a person
-- (unclear, or a failed request). The search description (TOML: databases
-- with queries, dates, limits, registration) comes first, as `search`
-- rows. `flow_sql(exports [, options])` prints this file rendered.
-- @stage recs
SELECT record_id, database, status, duplicate_of, matched_source, note, line, export
FROM {{records}};

-- @stage screened
{{screening}};

-- @output
WITH r AS (
  SELECT recs.*, s.decision, s.criterion, s.screen_status,
         recs.status = 'ok' AND recs.matched_source IS NULL AND s.decision = 'exclude' AS excluded_on_abstract
  FROM recs LEFT JOIN screened s ON s.record_id = recs.record_id
)
SELECT stage, database, n, detail FROM (
  {{search_rows}}
  SELECT 10 AS step, 'identified' AS stage, database, count(*) AS n,
         'records identified from ' || database AS detail
  FROM r WHERE status <> 'failed' GROUP BY database
  UNION ALL
  SELECT 11, 'identified', NULL, count(*), 'records identified, all databases'
  FROM r WHERE status <> 'failed'
  UNION ALL
  SELECT 12, 'unreadable', NULL, count(*),
         'parts of exports that could not be read (status failed in records): ' ||
         coalesce(string_agg(export || ' line ' || coalesce(CAST(line AS VARCHAR), '?'), '; '), 'none')
  FROM r WHERE status = 'failed'
  UNION ALL
  SELECT 20, 'duplicates_removed', NULL, count(*), 'duplicate records removed before screening'
  FROM r WHERE status = 'duplicate'
  UNION ALL
  SELECT 30, 'screened', NULL, count(*), 'records screened'
  FROM r WHERE status = 'ok'
  UNION ALL
  SELECT 31, 'excluded', criterion, count(*), 'records excluded on title and abstract, by criterion'
  FROM r WHERE excluded_on_abstract GROUP BY criterion HAVING {{has_screening}}
  UNION ALL
  SELECT 32, 'excluded', NULL, count(*), 'records excluded on title and abstract'
  FROM r WHERE excluded_on_abstract HAVING {{has_screening}}
  UNION ALL
  SELECT 40, 'sought', NULL, count(*), 'reports sought for retrieval'
  FROM r WHERE status = 'ok' AND NOT coalesce(excluded_on_abstract, false)
  UNION ALL
  SELECT 50, 'not_retrieved', NULL, count(*),
         'reports not retrieved (no file matched): part of the review, reported, not dropped'
  FROM r WHERE status = 'ok' AND matched_source IS NULL AND NOT coalesce(excluded_on_abstract, false)
  UNION ALL
  SELECT 55, 'retrieved', NULL, count(*), 'reports retrieved (a file matched the record)'
  FROM r WHERE status = 'ok' AND matched_source IS NOT NULL AND NOT coalesce(excluded_on_abstract, false)
  UNION ALL
  SELECT 60, 'assessed', NULL, count(*), 'reports retrieved and assessed for eligibility'
  FROM r WHERE status = 'ok' AND matched_source IS NOT NULL
  UNION ALL
  SELECT 61, 'reports_excluded', criterion, count(*), 'reports excluded, by criterion'
  FROM r WHERE status = 'ok' AND matched_source IS NOT NULL AND decision = 'exclude' GROUP BY criterion HAVING {{has_screening}}
  UNION ALL
  SELECT 62, 'reports_excluded', NULL, count(*), 'reports excluded'
  FROM r WHERE status = 'ok' AND matched_source IS NOT NULL AND decision = 'exclude' HAVING {{has_screening}}
  UNION ALL
  SELECT 70, 'awaiting', NULL, count(*),
         'reports awaiting a person: the screener was unclear, or its request failed (screening status failed)'
  FROM r WHERE status = 'ok' AND matched_source IS NOT NULL AND coalesce(decision, 'unclear') = 'unclear' HAVING {{has_screening}}
  UNION ALL
  SELECT 80, 'included', NULL, count(*), 'studies included in the review'
  FROM r WHERE status = 'ok' AND matched_source IS NOT NULL AND decision = 'include' HAVING {{has_screening}}
) ORDER BY step, database
