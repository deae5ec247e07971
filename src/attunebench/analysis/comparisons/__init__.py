"""Paired comparisons on the same items: two models (`differences`, `leads`, and the
conversations a difference needs, `power`), a model with and without the person's words
(`person_gap`), and with and without earlier self-reports (`contexts`); a simulator run once
per seed, its rollouts read together as one model beside the crowd and the people's ceiling
(`rollouts`)."""
