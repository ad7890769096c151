"""The platform `rlstudio up` runs: a process supervisor, the embedded Postgres and the
other services it starts, port checks, `doctor`, and the test suite's services."""
