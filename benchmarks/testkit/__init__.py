"""What the tests and benchmarks need and a user does not: a token-authenticated Ray cluster on
127.0.0.1 and its drills, two runs' records compared (`records`), model outputs built to break
parsers (`hostile`), a web page server, sample conversations carrying every task's gold, and
the one rule for a missing prerequisite (exit 77 with its reason). `servers` holds the local
servers that play the outside world: the vendors' APIs, a faulty API, a corpora mirror.
`demo_llm` is the script of `make demo-llm`, whose slices and settings the Qwen benchmark
shares; `local_entry` makes a local model's models-file entry for it, the ladder and the
end-to-end tests."""
