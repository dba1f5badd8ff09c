"""`python -m looprover ...` is the same as the `looprover` command."""
import sys

from looprover.cli import main

sys.exit(main())
