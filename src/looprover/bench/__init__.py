"""Benchmarking: `tasks` reads task definitions (SV-COMP .yml, CHC expected.csv) into runs, `runner` executes
them in parallel under wall-clock and memory limits and scores them the SV-COMP way. `looprover bench` is the
command-line front of both."""
