-- The write-up example: extraction, claims across studies, gaps and the
-- cited write-up over examples/synthesis/corpus/ (three invented abstracts
-- in the shape of seed 001's spacing studies).
SELECT regexp_replace(source, '^.*/', '') AS paper, year, design, n, n_filled, status, substr(error, 1, 60) AS error
FROM extract('examples/synthesis/corpus/', 'examples/synthesis/protocol.toml') ORDER BY paper;
SELECT what, count(*) AS n FROM study_claims_dropped('examples/synthesis/corpus/', 'examples/synthesis/protocol.toml') GROUP BY what ORDER BY what;
SELECT count(*) AS claims_kept FROM study_claims('examples/synthesis/corpus/', 'examples/synthesis/protocol.toml');
SELECT gap, field, value, n, n_studies FROM gaps('examples/synthesis/corpus/', 'examples/synthesis/protocol.toml') WHERE claim_id IS NULL;
SELECT section, heading, claim_ids, note FROM synthesis_outline('examples/synthesis/corpus/', 'examples/synthesis/protocol.toml', 'outline=claims');
SELECT section, heading, partial, notes FROM synthesise('examples/synthesis/corpus/', 'examples/synthesis/protocol.toml', 'coherence=all');
SELECT pass, kept, reason FROM synthesis_coherence('examples/synthesis/corpus/', 'examples/synthesis/protocol.toml', 'coherence=all');
SELECT author_year, partial FROM synthesis('examples/synthesis/corpus/', 'examples/synthesis/protocol.toml', 'coherence=all');
