"""The judges: their agreement with the participants' picks (`audit`), with each other and with
themselves (`panel`), what sways them (`bias`), their win rate at equal length
(`length_control`), and that win rate corrected by the participants' picks (`corrected`,
`audit_fit`), all read from one table of verdicts (`verdict_table`)."""
