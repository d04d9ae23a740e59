-- flow(exports [, options]): the PRISMA 2020 flow of a review's records as
-- rows (stage, database, n, detail), counted from the records table itself
-- (`records(exports, options)`), so every number agrees with the rows it
-- counts: a record is identified once per export it came from, a duplicate
-- is removed before screening, every other record is screened, and a
-- screened record is a report sought; one with no matched file is not
-- retrieved, one with a file is assessed. The search description (TOML:
-- databases with queries, dates, limits, registration) comes first, as
-- `search` rows. `flow_sql(exports [, options])` prints this file rendered.
-- @stage recs
SELECT record_id, database, status, duplicate_of, matched_source, note, line, export
FROM {{records}};

-- @output
SELECT stage, database, n, detail FROM (
  {{search_rows}}
  SELECT 10 AS step, 'identified' AS stage, database, count(*) AS n,
         'records identified from ' || database AS detail
  FROM recs WHERE status <> 'failed' GROUP BY database
  UNION ALL
  SELECT 11, 'identified', NULL, count(*), 'records identified, all databases'
  FROM recs WHERE status <> 'failed'
  UNION ALL
  SELECT 12, 'unreadable', NULL, count(*),
         'parts of exports that could not be read (status failed in records): ' ||
         coalesce(string_agg(export || ' line ' || coalesce(CAST(line AS VARCHAR), '?'), '; '), 'none')
  FROM recs WHERE status = 'failed'
  UNION ALL
  SELECT 20, 'duplicates_removed', NULL, count(*), 'duplicate records removed before screening'
  FROM recs WHERE status = 'duplicate'
  UNION ALL
  SELECT 30, 'screened', NULL, count(*), 'records screened'
  FROM recs WHERE status = 'ok'
  UNION ALL
  SELECT 40, 'sought', NULL, count(*), 'reports sought for retrieval'
  FROM recs WHERE status = 'ok'
  UNION ALL
  SELECT 50, 'not_retrieved', NULL, count(*),
         'reports not retrieved (no file matched): part of the review, reported, not dropped'
  FROM recs WHERE status = 'ok' AND matched_source IS NULL
  UNION ALL
  SELECT 60, 'assessed', NULL, count(*), 'reports retrieved and assessed for eligibility'
  FROM recs WHERE status = 'ok' AND matched_source IS NOT NULL
) ORDER BY step, database
