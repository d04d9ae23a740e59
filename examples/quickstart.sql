-- quarry's first job on a folder: what is in it, what was read, and how it cuts.
-- Run it with:  cargo run -- sql -f examples/quickstart.sql

-- 1. Every file, read or not (no model call, no key).
SELECT file_name, extractor, status, blocks, tokens
FROM documents('examples/corpus/')
ORDER BY file_name;

-- 2. How the readable documents cut into chunks of at most 300 tokens.
SELECT method, count(*) AS chunks, sum(tokens) AS tokens, min(tokens) AS min, max(tokens) AS max
FROM chunks('examples/corpus/', 'sentence', 300)
GROUP BY method;
