#!/usr/bin/env bash
# Creates .venv (Python >= 3.11) and installs looprover into it, editable, with the pinned dependencies of
# pyproject.toml, the test extras and the bench extras (plots, Dask, BenchExec: the tests cover them). Safe to
# run again: it reinstalls only when pyproject.toml changed.
set -euo pipefail
cd "$(dirname "$0")"

py="${PYTHON:-}"
if [ -z "$py" ]; then
  for cand in python3.11 python3.12 python3.13 python3; do
    if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      py="$cand"
      break
    fi
  done
fi
if [ -z "$py" ]; then
  echo "setup.sh: Python >= 3.11 is required (set PYTHON=/path/to/python3.11)" >&2
  exit 1
fi

if [ ! -x .venv/bin/python ]; then
  "$py" -m venv .venv
fi
stamp=".venv/.looprover-installed-$(cksum pyproject.toml | cut -d' ' -f1)"
if [ ! -e "$stamp" ] || ! .venv/bin/python -c 'import looprover' 2>/dev/null; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test,bench]'
  rm -f .venv/.looprover-installed-*
  touch "$stamp"
fi
# byte-compile the sources once: an editable install leaves that to the first import, and where
# PYTHONDONTWRITEBYTECODE is set (CI images, this project's machines) every run would compile them again
# (about 0.1 s of each `verify` and of each engine process it starts)
.venv/bin/python -m compileall -q src >/dev/null
