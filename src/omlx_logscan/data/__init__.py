"""Generated data, rebuilt by ``tools/regenerate.py``: the lexicon of oMLX's messages and the
lexicon entries each catalog row covers. Nothing here is written by hand."""
