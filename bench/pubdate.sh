#!/bin/sh
# Publication dates: llm-clean's "published" beside htmldate (pip install htmldate), found and
# correct on htmldate's own evaluation pages with known dates (bench/pubdate_eval.py; point
# HTMLDATE_TESTS at the tests/ folder of a checkout of github.com/adbar/htmldate; skipped without).
. "$(dirname "$0")/lib.sh"

python3 "$TOP/bench/pubdate_eval.py" || exit 1
