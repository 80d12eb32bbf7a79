"""What both engines and every leaf share: status codes, the flat tree, leaf ops, the
blackboard, the clock (the per-tick leaf statuses are the engines': ``engines/facts.py``)."""
