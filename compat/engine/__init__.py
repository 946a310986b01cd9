"""The engine: resolve a stack against the database and turn every violated
constraint into a finding. No I/O, no formatting."""
