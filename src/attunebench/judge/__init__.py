"""What a judge answers, declared once (`judge.forms`). Below `tasks/`, which imports it: the
judge's prompts, queries, verdict reading and audit statistics are the tasks' own
(`tasks.helpers.judging`, `audit`).
"""
