"""AttuneBench's tasks for other harnesses: `lm_eval` writes a task folder for
lm-evaluation-harness (`attunebench export lm-eval`). inspect_ai's tasks are in
`attunebench.inspect`."""
