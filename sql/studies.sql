-- The studies of an extraction, as study_claims, gaps and synthesise see
-- them (the stage each of those files starts with).
-- @stage studies
-- The extraction's studies, numbered in order of source: documents read
-- (whole or in part), never a duplicate. `extract` restores its rows from
-- the store when the run is stored, with no request. Its third argument
-- is the one given (an extraction of reference records: 'records,
-- files=DIR, included').
SELECT CAST(row_number() OVER (ORDER BY source) AS BIGINT) AS study,
       '[study ' || CAST(row_number() OVER (ORDER BY source) AS VARCHAR) || '] ' || {{study_line}} AS line,
       e.*
FROM extract('{{src}}', '{{protocol}}'{{extract_arg}}) e
WHERE status IN ('ok', 'incomplete') AND duplicate_of IS NULL;
