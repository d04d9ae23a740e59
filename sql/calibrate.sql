-- calibrate(screening, sample.csv): what a hand-screened reference sample
-- says about a screening, and what it cannot say. `sample` is the filled
-- sample joined to the screener's decisions: source, frame (the rows the
-- sample was drawn from: excluded, included, unclear or all), frame_size,
-- decision (the screener's), human (include or exclude). Rates are Wilson
-- score intervals; a rate the frame cannot support is a row with no value
-- and the reason. Accuracy is never reported: at a realistic inclusion
-- rate, excluding everything is 95% accurate. `unclear` is a deferral (a
-- person reads it), so sensitivity is given as deployed (unclear counts
-- as kept) and strict (unclear counts as missed). A stratified sample (the
-- excluded and the included, and the unclear when there are any, each
-- sampled as its own frame) also gives those rates for the whole screening,
-- each stratum weighted by its size: a point estimate, with no Wilson
-- interval (it is not a binomial proportion).
-- @stage f
SELECT frame, max(frame_size) AS frame_size, max(screened) AS screened, count(*) AS n,
       count(*) FILTER (WHERE human = 'include') AS eligible,
       count(*) FILTER (WHERE human = 'include' AND decision <> 'exclude') AS eligible_kept,
       count(*) FILTER (WHERE human = 'include' AND decision = 'include') AS eligible_included,
       count(*) FILTER (WHERE human = 'exclude') AS ineligible,
       count(*) FILTER (WHERE human = 'exclude' AND decision = 'exclude') AS ineligible_excluded,
       count(*) FILTER (WHERE decision = 'exclude') AS excluded,
       count(*) FILTER (WHERE decision = 'exclude' AND human = 'include') AS excluded_eligible,
       count(*) FILTER (WHERE decision <> 'exclude') AS kept,
       count(*) FILTER (WHERE decision <> 'exclude' AND human = 'include') AS kept_eligible,
       cohen_kappa(CASE WHEN decision = 'exclude' THEN 'exclude' ELSE 'include' END, human) AS kappa
FROM sample GROUP BY frame;

-- @output
WITH rates AS (
  -- Eligible among the excluded: where a permanent loss hides.
  SELECT 1 AS step, frame, 'eligible_among_excluded' AS measure, excluded_eligible AS x, excluded AS n,
         '' AS refused FROM f WHERE frame IN ('excluded', 'all')
  UNION ALL
  SELECT 2, frame, 'correctly_excluded', excluded - excluded_eligible, excluded, '' FROM f WHERE frame IN ('excluded', 'all')
  UNION ALL
  SELECT 4, frame, 'precision', kept_eligible, kept, '' FROM f WHERE frame IN ('included', 'all')
  UNION ALL
  SELECT 5, frame, 'eligible_among_unclear', eligible, n, '' FROM f WHERE frame = 'unclear'
  UNION ALL
  SELECT 6, frame, 'sensitivity_deployed', eligible_kept, eligible,
         CASE WHEN frame <> 'all' THEN 'refused' ELSE '' END FROM f
  UNION ALL
  SELECT 7, frame, 'sensitivity_strict', eligible_included, eligible,
         CASE WHEN frame <> 'all' THEN 'refused' ELSE '' END FROM f
  UNION ALL
  SELECT 8, frame, 'specificity', ineligible_excluded, ineligible,
         CASE WHEN frame <> 'all' THEN 'refused' ELSE '' END FROM f
),
strata AS (
  SELECT e.frame_size AS n_exc, i.frame_size AS n_inc, coalesce(u.frame_size, 0) AS n_unc,
         e.screened - e.frame_size - i.frame_size AS unclear_records, u.frame IS NOT NULL AS unclear_sampled,
         e.frame_size * CAST(e.eligible AS DOUBLE) / e.n AS e_exc,
         i.frame_size * CAST(i.eligible AS DOUBLE) / i.n AS e_inc,
         coalesce(u.frame_size * CAST(u.eligible AS DOUBLE) / u.n, 0.0) AS e_unc
  FROM f e JOIN f i ON e.frame = 'excluded' AND i.frame = 'included'
  LEFT JOIN f u ON u.frame = 'unclear'
),
pooled AS (
  SELECT 6 AS step, 'sensitivity_deployed' AS measure, (e_inc + e_unc) / nullif(e_inc + e_unc + e_exc, 0) AS value, s.* FROM strata s
  UNION ALL
  SELECT 7, 'sensitivity_strict', e_inc / nullif(e_inc + e_unc + e_exc, 0), s.* FROM strata s
  UNION ALL
  SELECT 8, 'specificity', (n_exc - e_exc) / nullif((n_exc - e_exc) + (n_inc - e_inc) + (n_unc - e_unc), 0), s.* FROM strata s
),
out AS (
  SELECT step, measure, r.frame,
         CASE WHEN refused = '' AND r.n > 0 THEN CAST(x AS DOUBLE) / r.n END AS value,
         CASE WHEN refused = '' AND r.n > 0 THEN wilson_lower(x, r.n) END AS low,
         CASE WHEN refused = '' AND r.n > 0 THEN wilson_upper(x, r.n) END AS high,
         CAST(r.n AS BIGINT) AS n,
         CASE
           WHEN refused <> '' AND r.frame = 'excluded' THEN 'refused: sampled from exclusions only: this frame estimates what was lost, not sensitivity or specificity; it contains no kept records to compute them from'
           WHEN refused <> '' AND r.frame = 'included' THEN 'refused: sampled from inclusions only: this frame estimates precision, not sensitivity or specificity; it contains no excluded records to compute them from'
           WHEN refused <> '' THEN 'refused: sampled from unclear decisions only: this frame says how many deferred records are eligible, not how the screener decides'
           WHEN r.n = 0 THEN 'no sampled record to compute it from'
           ELSE CAST(x AS VARCHAR) || ' of ' || CAST(r.n AS VARCHAR)
         END AS detail
  FROM rates r
  UNION ALL
  -- The rate scaled to every record of the frame: the studies lost.
  SELECT 3, 'lost', frame, frame_size * CAST(excluded_eligible AS DOUBLE) / excluded,
         frame_size * wilson_lower(excluded_eligible, excluded),
         frame_size * wilson_upper(excluded_eligible, excluded), CAST(frame_size AS BIGINT),
         'across all ' || CAST(frame_size AS VARCHAR) || ' excluded record(s) that rate implies about ' ||
         CAST(round(frame_size * CAST(excluded_eligible AS DOUBLE) / excluded) AS BIGINT) || ' eligible studies lost (' ||
         CAST(round(frame_size * wilson_lower(excluded_eligible, excluded)) AS BIGINT) || ' to ' ||
         CAST(round(frame_size * wilson_upper(excluded_eligible, excluded)) AS BIGINT) || ' on the interval)'
  FROM f WHERE frame = 'excluded' AND excluded > 0
  UNION ALL
  SELECT 9, 'kappa', frame, CASE WHEN frame = 'all' THEN kappa END, NULL, NULL, CAST(n AS BIGINT),
         CASE WHEN frame = 'all' THEN 'Cohen''s kappa, the screener as deployed (unclear kept) against the person'
              ELSE 'refused: every sampled record has one screener decision in this frame, so agreement beyond chance cannot be measured' END
  FROM f
  UNION ALL
  SELECT 10, 'adequate', frame, CASE WHEN eligible >= 10 THEN 1.0 ELSE 0.0 END, NULL, NULL, CAST(eligible AS BIGINT),
         CASE WHEN eligible >= 10 THEN CAST(eligible AS VARCHAR) || ' eligible studies in the sample'
              ELSE 'only ' || CAST(eligible AS VARCHAR) || ' eligible studies in the sample: every rate above rests on those ' ||
                   CAST(eligible AS VARCHAR) || ' observations, which is why the intervals are as wide as they are; hand-screen more before quoting a figure' END
  FROM f
  UNION ALL
  SELECT step, measure, 'stratified',
         CASE WHEN unclear_records = 0 OR unclear_sampled THEN value END, NULL, NULL,
         CAST(n_exc + n_inc + n_unc AS BIGINT),
         CASE WHEN unclear_records > 0 AND NOT unclear_sampled
              THEN 'refused: ' || CAST(unclear_records AS VARCHAR) || ' unclear records were not sampled, so the strata do not cover the screening; sample the unclear too (frame stratified)'
              ELSE 'the strata weighted by their sizes (excluded ' || CAST(n_exc AS VARCHAR) || ', included ' || CAST(n_inc AS VARCHAR) ||
                   ', unclear ' || CAST(n_unc AS VARCHAR) || '): a point estimate, with no Wilson interval (a weighted rate is not a binomial proportion)' END
  FROM pooled
  UNION ALL
  -- The studies the screener excluded and the person did not.
  SELECT 11, 'missed', frame, NULL, NULL, NULL, NULL, source
  FROM sample WHERE decision = 'exclude' AND human = 'include'
)
SELECT measure, frame, value, low, high, n, detail FROM out ORDER BY frame, step, detail
