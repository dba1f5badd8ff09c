"""`python -m looprover ...` is the same as the `looprover` command."""
from looprover.cli import entry

entry()
