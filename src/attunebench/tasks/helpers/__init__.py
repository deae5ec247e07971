"""What the tasks share, beside the task modules: metrics and the headlines' cells (`metrics`,
`adjusted`, `grouping`), fitting on gold out of sample (`fitting`), prompts and their shared
wording (`prompting`, `wording`), the history a query shows (`history`), answer parsing
(`parsing`, `numeric`, `calibration`), pairs of replies and their cues (`pairs`, `pair_cues`),
what a judge is asked and answers (`judging`, `verdicts`, `judge_values`, `audit`), the
person-hidden twins (`twins`), real replies as references (`real_reply`) and the gold's counts
(`gold_stats`)."""
