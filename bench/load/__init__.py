"""Class mode's load test, its own command: `python -m bench.load.classroom` (its docstring says what it measures:
a teacher's move reaching every following student, the server CPU with and without 30 following students, 30 answers
sent in one second). The load runner it drives, shared with bench/load_test.py and the tests, is harness/load/.
"""
