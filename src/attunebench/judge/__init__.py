"""What a judge answers, declared once: the pairwise verdict and the rubric score
(`judge.forms`, answer forms as every task declares its own).

Below `tasks/`, which imports it, and importing nothing of it: the judge's prompts and the
queries it is asked are made by the tasks that ask them (`tasks.helpers.judging`,
`tasks/helpers/judging.toml`), its verdicts are read in `tasks.helpers.verdicts`, and the audit's
statistics are `tasks.helpers.audit`. Prompt templates are `attunebench.prompts`. The offline
`proxy/minilm` judge is a provider, registered with the others in `attunebench.models`.
"""
