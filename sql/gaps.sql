-- @output gaps
-- gaps(src, protocol): what the corpus does not contain, counted from the
-- tables with no model call of its own (the claims across studies are
-- study_claims' rows, answered from the cache once asked). One row per
-- gap, with the counts that show it:
--   unstudied_category        a value an enum field declares that no study has
--   no_variation              a field every study with a value has the same value of
--   single_study              a claim one study alone supports
--   unexplained_disagreement  a claim studies contradict and no moderator explains
-- Studies are study_claims' (documents read, no duplicates); n_studies is
-- how many studies the count is over, n the count that shows the gap.
WITH gap_rows AS (
{{field_gaps}}
  SELECT 'single_study' AS gap, CAST(NULL AS VARCHAR) AS field, CAST(NULL AS VARCHAR) AS value,
         c['claim_id'] AS claim_id, CAST(cardinality(c['support']) AS BIGINT) AS n,
         (SELECT count(*) FROM studies) AS n_studies,
         'one study supports: ' || c['claim'] AS detail
  FROM verified
  WHERE c['row_kind'] = 'claim' AND cardinality(c['support']) = 1
  UNION ALL
  SELECT 'unexplained_disagreement' AS gap, CAST(NULL AS VARCHAR) AS field, CAST(NULL AS VARCHAR) AS value,
         c['claim_id'] AS claim_id, CAST(cardinality(c['contradict']) AS BIGINT) AS n,
         (SELECT count(*) FROM studies) AS n_studies,
         CAST(cardinality(c['support']) AS VARCHAR) || ' studies support and '
           || CAST(cardinality(c['contradict']) AS VARCHAR) || ' contradict, and no moderator explains it: ' || c['claim'] AS detail
  FROM verified
  WHERE c['row_kind'] = 'claim' AND cardinality(c['contradict']) > 0 AND c['moderator'] IS NULL
)
SELECT gap, field, value, claim_id, n, n_studies, detail FROM gap_rows
ORDER BY gap, field, value, claim_id
