-- The review example's model step: screen the records of
-- examples/review/exports/ (a record with a matched file on the file, one
-- without on its title and abstract), then the PRISMA flow with that
-- screening. `bash examples/review/record.sh` runs this against a real
-- small model and keeps the trace in examples/review/recording/.
SELECT r.title, s.decision, s.status
FROM screen('examples/review/exports/', 'examples/review/protocol.toml', 'records, files=examples/review/pdfs/') s
JOIN records('examples/review/exports/', 'files=examples/review/pdfs/') r ON r.record_id = s.source
ORDER BY r.title;

SELECT stage, database, n
FROM flow('examples/review/exports/', 'files=examples/review/pdfs/, search=examples/review/search.toml, protocol=examples/review/protocol.toml')
WHERE stage <> 'search';
