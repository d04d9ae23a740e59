-- study_claims(src, protocol), study_claim_support(src, protocol),
-- study_claims_dropped(src, protocol) and gaps(src, protocol), step by
-- step.
--
-- quarry renders this file with a protocol's parameters (every {{name}})
-- and runs it in stages: each `-- @stage NAME` query is run once and kept
-- as table NAME for the stages after it; each function gives one of the
-- `-- @output NAME` queries (`gaps` the one in sql/gaps.sql).
-- `study_claims_sql('SRC', 'protocol.toml')` prints the rendered text
-- (with the claims output).

{{studies_stage}}

-- @stage asked
-- One request: the instructions, then the studies, a line each, as many
-- as fit the model's context window ({{line_budget}} characters of lines);
-- those past it are left out of the request and counted (left_out), and
-- a claim may name only the studies shown.
SELECT llm_json_detail({{prompt}} || lines, '{{schema}}',
                       'stage=study_claims, label=' || CAST(n AS VARCHAR) || ' studies{{llm_options}}') AS r,
       shown, left_out
FROM (SELECT string_agg(line, chr(10) ORDER BY study) FILTER (WHERE fits) AS lines,
             count(*) FILTER (WHERE fits) AS n, array_agg(study ORDER BY study) FILTER (WHERE fits) AS shown,
             count(*) FILTER (WHERE NOT fits) AS left_out
      FROM (SELECT line, study, sum(length(line) + 1) OVER (ORDER BY study ROWS UNBOUNDED PRECEDING) <= {{line_budget}} AS fits
            FROM studies))
WHERE n > 0;

-- @stage verified
-- The reply read (nothing repaired) and every study number and moderator
-- checked against the studies the request showed: one row per claim kept
-- or thing dropped.
SELECT unnest(study_claims_read(r['text'], r['ok'], r['error'], shown, '{{columns}}')) AS c
FROM asked;

-- @output claims
-- One row per claim: the studies for and against it, and the field that
-- tells them apart (NULL when none was named, or the one named is not a
-- column of the table).
SELECT c['claim_id'] AS claim_id, c['claim'] AS claim, c['moderator'] AS moderator,
       c['support'] AS support, c['contradict'] AS contradict,
       CAST(cardinality(c['support']) AS BIGINT) AS n_support,
       CAST(cardinality(c['contradict']) AS BIGINT) AS n_contradict
FROM verified
WHERE c['row_kind'] = 'claim'
ORDER BY CAST(substr(c['claim_id'], 2) AS BIGINT);

-- @output support
-- Long: one row per claim and study, its role, and the study's document.
WITH roles AS (
  SELECT c['claim_id'] AS claim_id, unnest(c['support']) AS study, 'support' AS role
  FROM verified WHERE c['row_kind'] = 'claim'
  UNION ALL
  SELECT c['claim_id'] AS claim_id, unnest(c['contradict']) AS study, 'contradict' AS role
  FROM verified WHERE c['row_kind'] = 'claim'
)
SELECT r.claim_id, r.study, r.role, s.source, s.document_id
FROM roles r JOIN studies s ON s.study = r.study
ORDER BY CAST(substr(r.claim_id, 2) AS BIGINT), r.role DESC, r.study;

-- @output dropped
-- What the checks removed, and why: `unknown_study` (a number that is not
-- a study shown), `both_roles`, `no_support` (the claim is dropped),
-- `unknown_moderator` (cleared), `invalid`, `unreadable` (the reply),
-- `failed` (the request), and `not_shown` (studies that did not fit the
-- request: no claim can rest on them).
SELECT c['claim_id'] AS claim_id, c['what'] AS what, c['detail'] AS detail
FROM verified
WHERE c['row_kind'] = 'dropped'
UNION ALL
SELECT CAST(NULL AS VARCHAR) AS claim_id, 'not_shown' AS what,
       CAST(left_out AS VARCHAR) || ' studies (the last by number) did not fit the request: the model''s context window holds {{line_budget}} characters of study lines; no claim rests on them' AS detail
FROM asked
WHERE left_out > 0;
