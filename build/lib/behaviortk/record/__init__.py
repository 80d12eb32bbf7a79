"""Record: every way a run is written and read back.

``tick_state.py`` (one tick's drawable, recordable state, live or recorded), ``jsonl.py``
(the JSON Lines trace), ``parquet.py`` (the Parquet columns) and ``reader.py`` (reading either
back, tick by tick).
"""
