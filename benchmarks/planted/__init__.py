"""Studies with a planted truth: synthetic runs whose answer is known, for the tests and for
`benchmarks/validity.py`. Not part of the package: nothing a user runs imports them, and no
figure of theirs is a benchmark result."""
