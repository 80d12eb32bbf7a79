"""Record: every way a run is written and read back.

``jsonl.py`` (the JSON Lines trace), ``parquet.py`` (the Parquet columns) and ``reader.py``
(reading either back, tick by tick), all of ``sim/tick_state.py``'s state.
"""
