# Configuration of the demo run on samples/ (see pipelines/Makefile).
RAW      := samples/corpus
OUT      := demo
