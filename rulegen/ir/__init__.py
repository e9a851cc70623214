"""The intermediate representation: records, validation, JSON, the reference evaluator."""
