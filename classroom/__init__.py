"""Class mode: rooms, the teacher's lead, questions and answers, and the store that keeps them.

No Streamlit here: `classroom.store` is the database (SQLAlchemy 2: an SQLite file by default, PostgreSQL
when a URL is configured) and the rules every teacher and student action is checked against.
"""
