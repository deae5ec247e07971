"""What a model's headline is read against: predictors that read only the gold (`predictors`)
and the people's own consistency (`ceiling`)."""
