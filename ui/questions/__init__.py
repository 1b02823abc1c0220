"""The questions each lesson page can ask the class, one module per page (declared by the page beside its state:
ui/page_questions.py says how). Each module's `questions(...)` returns the page's Question declarations; their
`build` functions are pure: the page's declared values and the teacher's picks in, the question and its true
value (computed by the project's core) out.
"""
