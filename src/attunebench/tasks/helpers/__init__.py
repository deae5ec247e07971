"""What the tasks share: metrics, prompts, parsing, pairs, judging, fitting and twins."""
