"""Paired comparisons on the same items: two models (`differences`, `leads`, `power`), a model
with and without the person's words (`person_gap`) or earlier self-reports (`contexts`), and a
simulator's rollouts read together as one model (`rollouts`)."""
